//! Workspace layout. The workspace holds, in order: the virtual tensors that must be
//! materialised (read outside the chain that writes them), as dense `f32`, tensors
//! whose lifetimes (from the stage storing them to the last stage reading them) do not
//! overlap sharing bytes, and a stage's output taking the bytes of a residual it is
//! the last to read where the stage allows it ([`Lifetime::reuse`]); then one scratch
//! region that every stage reuses in turn, holding the stage's small `f32` arrays
//! (scale/shift per channel, statistics) followed by its kernel's workspace (packed
//! operands); then the scale and shift arrays of every stage's batch-norm folds,
//! all computed at the start of an execution.

/// Alignment of every region, in bytes (a cache line, and enough for AVX loads).
pub(super) const ALIGN: usize = 64;

/// `bytes` rounded up to [`ALIGN`].
pub(super) fn align(bytes: usize) -> usize {
    bytes.div_ceil(ALIGN) * ALIGN
}

/// Where a tensor lives during execution.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Placement {
    /// A buffer the host passes (looked up by uid).
    Host,
    /// Dense `f32` in the workspace at this byte offset.
    Workspace(usize),
    /// A pass-by-value scalar.
    Constant(f32),
    /// A virtual tensor that a fused stage never stores.
    Virtual,
}

/// Dense `f32` arrays laid out one after another, each at an aligned byte offset: a
/// stage's arrays in the scratch region, or the materialised tensors.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct F32Arrays {
    bytes: usize,
}

impl F32Arrays {
    /// Reserves an array of `elems` floats; its byte offset.
    pub fn reserve(&mut self, elems: usize) -> usize {
        let at = self.bytes;
        self.bytes = align(self.bytes + elems * 4);
        at
    }

    /// Bytes reserved (aligned).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// When a materialised tensor is in use: from stage `birth` (which stores it) to stage
/// `death` (the last to read it), both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lifetime {
    pub birth: usize,
    pub death: usize,
    pub bytes: usize,
    /// The earlier tensor (its index among the lifetimes) whose bytes this one takes:
    /// one that dies at this one's birth, at least as large, read by the storing stage
    /// only element by element just before it stores the same element of this one
    /// (the residual of a convolution's or matmul's epilogue, see
    /// `stages::in_place_residual`).
    pub reuse: Option<usize>,
}

/// Byte offsets (aligned) for tensors given in order of birth, such that tensors whose
/// lifetimes overlap never overlap in memory (a stage never writes over what it
/// reads), except where a tensor takes the bytes of the one it [`Lifetime::reuse`]s,
/// and the bytes they take in all. First fit: each tensor goes into the lowest gap
/// between the tensors still alive when it is born, which also hands it the memory
/// most recently written (likely still cached).
///
/// # Panics
/// When a reused tensor is not alive at the reusing one's birth or is smaller.
pub(super) fn assign_offsets(lives: &[Lifetime]) -> (Vec<usize>, usize) {
    // Live tensors as (offset, end, death, index), sorted by offset.
    let mut live: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut total = 0;
    let mut offsets = Vec::with_capacity(lives.len());
    for (index, l) in lives.iter().enumerate() {
        debug_assert!(l.death >= l.birth);
        live.retain(|&(_, _, death, _)| death >= l.birth);
        let size = align(l.bytes);
        if let Some(r) = l.reuse {
            let e = live
                .iter_mut()
                .find(|e| e.3 == r)
                .expect("a reused tensor is alive when the reusing one is born");
            assert!(
                lives[r].death == l.birth && e.1 - e.0 >= size,
                "tensor {index} cannot take the bytes of tensor {r}"
            );
            (e.2, e.3) = (l.death, index);
            offsets.push(e.0);
            continue;
        }
        let mut at = 0;
        let mut slot = live.len();
        for (i, &(start, end, _, _)) in live.iter().enumerate() {
            if start >= at + size {
                slot = i;
                break;
            }
            at = at.max(end);
        }
        live.insert(slot, (at, at + size, l.death, index));
        total = total.max(at + size);
        offsets.push(at);
    }
    (offsets, total)
}

/// The workspace being laid out.
#[derive(Debug, Default)]
pub(super) struct WorkspaceLayout {
    /// Bytes of the materialised tensors (the scratch region starts after them).
    materialised: usize,
    /// Largest scratch any stage needs, in bytes.
    scratch: usize,
    /// Bytes of the fold region after it (see [`Self::fold_region`]).
    folds: usize,
}

impl WorkspaceLayout {
    /// Sets the bytes the materialised tensors take ([`assign_offsets`]).
    pub fn materialised_bytes(&mut self, bytes: usize) {
        self.materialised = align(bytes);
    }

    /// Where the scratch region starts.
    pub fn scratch_at(&self) -> usize {
        self.materialised
    }

    /// Makes room for a stage's scratch: its arrays, then `kernel_elems` floats.
    pub fn stage_scratch(&mut self, arrays: usize, kernel_elems: usize) {
        self.scratch = self.scratch.max(arrays + kernel_elems * 4);
    }

    /// Makes room for `bytes` of batch-norm folds that every stage's scratch leaves
    /// alone (placed once all stages are known); their offset in the scratch region.
    pub fn fold_region(&mut self, bytes: usize) -> usize {
        self.folds = align(bytes);
        align(self.scratch)
    }

    /// Bytes the host must provide: the layout plus slack to align an unaligned
    /// workspace pointer (none when nothing is needed).
    pub fn size(&self) -> usize {
        let total = self.materialised + align(self.scratch) + self.folds;
        if total > 0 { total + ALIGN } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(birth: usize, death: usize, bytes: usize) -> Lifetime {
        Lifetime {
            birth,
            death,
            bytes,
            reuse: None,
        }
    }

    /// Whether two placed tensors share a byte while both are alive.
    fn clash(a: (&Lifetime, usize), b: (&Lifetime, usize)) -> bool {
        let live = a.0.birth <= b.0.death && b.0.birth <= a.0.death;
        let mem = a.1 < b.1 + align(b.0.bytes) && b.1 < a.1 + align(a.0.bytes);
        live && mem
    }

    #[test]
    fn a_chain_of_stages_reuses_two_buffers() {
        // x0 -> x1 -> x2 -> x3: each read only by the next stage.
        let lives: Vec<_> = (0..4).map(|s| life(s, s + 1, 1000)).collect();
        let (offsets, total) = assign_offsets(&lives);
        assert_eq!(offsets, [0, 1024, 0, 1024]);
        assert_eq!(total, 2048);
    }

    #[test]
    fn a_tensor_read_later_keeps_its_bytes() {
        // A residual: x0 is read by stage 3, so x1 and x2 must go around it.
        let lives = [
            life(0, 3, 4096),
            life(1, 2, 64),
            life(2, 3, 64),
            life(3, 4, 4096),
        ];
        let (offsets, total) = assign_offsets(&lives);
        for i in 0..lives.len() {
            for j in 0..i {
                assert!(
                    !clash((&lives[i], offsets[i]), (&lives[j], offsets[j])),
                    "{i} and {j} overlap: {offsets:?}"
                );
            }
        }
        assert_eq!(offsets[1], 4096);
        assert!(total <= 2 * 4096 + 128, "{total}");
    }

    #[test]
    fn an_output_takes_the_bytes_of_the_residual_it_reads_last() {
        // The block above, x3 adding x0 in place: the residual's bytes are reused and
        // the block needs one large buffer instead of two.
        let mut lives = [
            life(0, 3, 4096),
            life(1, 2, 64),
            life(2, 3, 64),
            life(3, 4, 4096),
        ];
        lives[3].reuse = Some(0);
        let (offsets, total) = assign_offsets(&lives);
        assert_eq!(offsets, [0, 4096, 4160, 0]);
        assert_eq!(total, 4224);
        // What is born after x3 goes around it as around any live tensor.
        let later = [lives[0], lives[1], lives[2], lives[3], life(4, 5, 4096)];
        let (offsets, _) = assign_offsets(&later);
        assert_eq!(offsets[4], 4096);
    }

    #[test]
    #[should_panic(expected = "cannot take the bytes")]
    fn a_residual_read_after_the_output_is_born_is_not_reused() {
        let mut lives = [life(0, 2, 4096), life(1, 2, 4096)];
        lives[1].reuse = Some(0);
        assign_offsets(&lives);
    }

    #[test]
    fn no_two_live_tensors_overlap_in_random_lifetimes() {
        let mut rng = crate::XorShift(0x2545_f491_4f6c_dd1d);
        let mut next = |n: usize| rng.below(n);
        let mut reuses = 0;
        for _ in 0..200 {
            let mut lives: Vec<Lifetime> = (0..30)
                .map(|_| {
                    let birth = next(40);
                    life(birth, birth + next(6), 1 + next(5000))
                })
                .collect();
            lives.sort_by_key(|l| l.birth);
            // Some tensors take the bytes of one dying at their birth (at most one
            // each, as the stage builder hands out).
            let mut taken = vec![false; lives.len()];
            for i in 0..lives.len() {
                let fits = |r: usize| {
                    !taken[r]
                        && lives[r].birth < lives[i].birth
                        && lives[r].death == lives[i].birth
                        && align(lives[r].bytes) >= align(lives[i].bytes)
                };
                if let Some(r) = (0..i).find(|&r| fits(r))
                    && next(2) == 0
                {
                    taken[r] = true;
                    lives[i].reuse = Some(r);
                    reuses += 1;
                }
            }
            // Whether `j` is `i`'s residual, or its residual's, and so on.
            let reused = |i: usize, j: usize| {
                let mut at = lives[i].reuse;
                while let Some(r) = at {
                    if r == j {
                        return true;
                    }
                    at = lives[r].reuse;
                }
                false
            };
            let (offsets, total) = assign_offsets(&lives);
            for i in 0..lives.len() {
                assert!(offsets[i] + lives[i].bytes <= total);
                assert_eq!(offsets[i] % ALIGN, 0);
                if let Some(r) = lives[i].reuse {
                    assert_eq!(offsets[i], offsets[r]);
                }
                for j in 0..i {
                    let (a, b) = ((&lives[i], offsets[i]), (&lives[j], offsets[j]));
                    assert!(reused(i, j) || !clash(a, b), "{i} and {j} overlap");
                }
            }
        }
        assert!(reuses > 100, "{reuses}");
    }
}
