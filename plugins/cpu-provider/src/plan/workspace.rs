//! Workspace layout. The workspace holds, in order: the virtual tensors that must be
//! materialised (read outside the chain that writes them), as dense `f32`, tensors
//! whose lifetimes (from the stage storing them to the last stage reading them) do not
//! overlap sharing bytes; then one scratch region that every stage reuses in turn,
//! holding the stage's small `f32` arrays (scale/shift per channel, statistics)
//! followed by its kernel's workspace (packed operands).

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
}

/// Byte offsets (aligned) for tensors given in order of birth, such that tensors whose
/// lifetimes overlap never overlap in memory (a stage never writes over what it
/// reads), and the bytes they take in all. First fit: each tensor goes into the
/// lowest gap between the tensors still alive when it is born, which also hands it
/// the memory most recently written (likely still cached).
pub(super) fn assign_offsets(lives: &[Lifetime]) -> (Vec<usize>, usize) {
    // Live tensors as (offset, end, death), sorted by offset.
    let mut live: Vec<(usize, usize, usize)> = Vec::new();
    let mut total = 0;
    let mut offsets = Vec::with_capacity(lives.len());
    for l in lives {
        debug_assert!(l.death >= l.birth);
        live.retain(|&(_, _, death)| death >= l.birth);
        let size = align(l.bytes);
        let mut at = 0;
        let mut slot = live.len();
        for (i, &(start, end, _)) in live.iter().enumerate() {
            if start >= at + size {
                slot = i;
                break;
            }
            at = at.max(end);
        }
        live.insert(slot, (at, at + size, l.death));
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

    /// Bytes the host must provide: the layout plus slack to align an unaligned
    /// workspace pointer (none when nothing is needed).
    pub fn size(&self) -> usize {
        let total = self.materialised + align(self.scratch);
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
    fn no_two_live_tensors_overlap_in_random_lifetimes() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..200 {
            let mut lives: Vec<Lifetime> = (0..30)
                .map(|_| {
                    let birth = next(40);
                    life(birth, birth + next(6), 1 + next(5000))
                })
                .collect();
            lives.sort_by_key(|l| l.birth);
            let (offsets, total) = assign_offsets(&lives);
            for i in 0..lives.len() {
                assert!(offsets[i] + lives[i].bytes <= total);
                assert_eq!(offsets[i] % ALIGN, 0);
                for j in 0..i {
                    assert!(!clash((&lives[i], offsets[i]), (&lives[j], offsets[j])));
                }
            }
        }
    }
}
