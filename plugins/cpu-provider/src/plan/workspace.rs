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

/// The workspace being laid out.
#[derive(Debug, Default)]
pub(super) struct WorkspaceLayout {
    /// The materialised tensors (the scratch region starts after them).
    pub materialised: F32Arrays,
    /// Largest scratch any stage needs, in bytes.
    scratch: usize,
}

impl WorkspaceLayout {
    /// Makes room for a stage's scratch: its arrays, then `kernel_elems` floats.
    pub fn stage_scratch(&mut self, arrays: usize, kernel_elems: usize) {
        self.scratch = self.scratch.max(arrays + kernel_elems * 4);
    }

    /// Bytes the host must provide: the layout plus slack to align an unaligned
    /// workspace pointer (none when nothing is needed).
    pub fn size(&self) -> usize {
        let total = self.materialised.bytes() + align(self.scratch);
        if total > 0 { total + ALIGN } else { 0 }
    }
}
