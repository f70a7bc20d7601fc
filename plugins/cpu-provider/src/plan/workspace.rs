//! Workspace layout. The workspace holds, in order: the virtual tensors that must be
//! materialised (read outside the chain that writes them), as dense `f32`, each at its
//! own offset; then one scratch region that every stage reuses in turn, holding the
//! stage's small `f32` arrays (scale/shift per channel, statistics) followed by its
//! kernel's workspace (packed operands).

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

/// The `f32` arrays of one stage, laid out from the start of the scratch region.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StageArrays {
    bytes: usize,
}

impl StageArrays {
    /// Reserves an array of `elems` floats; its byte offset in the scratch region.
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

/// The workspace being laid out.
#[derive(Debug, Default)]
pub(super) struct WorkspaceLayout {
    /// Bytes taken by materialised tensors (the scratch region starts here).
    materialised: usize,
    /// Largest scratch any stage needs, in bytes.
    scratch: usize,
}

impl WorkspaceLayout {
    /// Places a materialised tensor of `elems` floats; its byte offset.
    pub fn materialise(&mut self, elems: usize) -> usize {
        let at = self.materialised;
        self.materialised = align(self.materialised + elems * 4);
        at
    }

    /// Makes room for a stage's scratch: its arrays, then `kernel_elems` floats.
    pub fn stage_scratch(&mut self, arrays: usize, kernel_elems: usize) {
        self.scratch = self.scratch.max(arrays + kernel_elems * 4);
    }

    /// Where the scratch region starts, in bytes.
    pub fn scratch_at(&self) -> usize {
        self.materialised
    }

    /// Bytes the host must provide: the layout plus slack to align an unaligned
    /// workspace pointer (none when nothing is needed).
    pub fn size(&self) -> usize {
        let total = self.materialised + align(self.scratch);
        if total > 0 { total + ALIGN } else { 0 }
    }
}
