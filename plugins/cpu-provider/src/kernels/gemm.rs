//! The blocked GEMM engine behind convolutions and matmuls.
//!
//! `C[M×N] = A[M×K] · B[K×N]` with a 6×16 register-tile micro-kernel (AVX2 + FMA,
//! with a portable fallback). What makes it a convolution engine rather than a plain
//! GEMM is that both operands and the output are supplied by a [`GemmProblem`]:
//!
//! * **A is packed by the engine** per row tile and K block into `[kc][6]` strips,
//!   from one pointer per row and *segment* supplied by the problem: a row of weights
//!   (one segment covering the K block), or, for channels-last convolutions, the input
//!   pixels under each filter tap (one segment per tap: an indirection buffer, so there
//!   is no im2col matrix). Where the problem allows it ([`GemmProblem::a_in_place`])
//!   and the rows have unit stride, the pair kernels read them through the pointers
//!   instead, and A is not packed at all.
//! * **B is packed** per K block into 16-wide panels by the problem: im2col of a few
//!   output pixels (implicit GEMM; never the whole im2col matrix), or the weights; or
//!   all of it once for many runs ([`PackedB`], constant filters).
//! * **C is written through the problem** one finished 6×16 tile at a time, so bias,
//!   activations and type conversion are fused into the tile store (the epilogue).
//!   Where the epilogue is a short fp32 chain over rows with contiguous columns
//!   ([`FusedOut`]: scale-and-shift or bias, residual add, ReLU, one store) and the
//!   CPU has the pair kernels, they apply it to their accumulators and store the
//!   output themselves: no tile goes through memory on the way.
//!
//! Loops (per thread): column chunks of `nc`, K blocks of about `kc` (so a B panel stays
//! in L1 while the packed row tiles of a group stream through it from L2), groups of
//! row tiles, panels of 16, row tiles of 6. Work is split statically into a grid of
//! contiguous row and column parts, one per thread, chosen by a cost model (two
//! threads: the two halves of the larger of M and N; many threads: e.g. 4 × 4 parts,
//! so that no thread reads all of B for a few rows). An operand several threads need
//! is packed once, shared, by all threads in parallel before the main pass: all of A
//! when threads split the columns into several chunks each, all of B when they split
//! the rows. The micro-kernel has 6×16, `m`×16, `m`×8 and 6×1 variants, so short
//! row tiles and narrow last panels do not pay for a full tile. Panels go in pairs
//! through the *pair kernels*, which also read A in place and store fused epilogues:
//! with AVX-512F one 6×32 tile (12 zmm accumulators: enough independent FMAs to keep
//! two 512-bit FMA units busy), with AVX2 + FMA the two 6×16 tiles in turn (12 ymm
//! accumulators each; 6×32 would need 24 of the 16 registers). In the last K block of
//! a fused chain over A in place, one call per row tile sweeps all of a chunk's
//! panels, with AVX-512F four at a time (a 6×64 tile, 24 zmm accumulators: each
//! broadcast of A feeds four FMAs, and A is read once per 64 columns; where such a
//! sweep runs, A is read in place rather than prepacked). `HIPDNN_CPU_ISA=avx2`
//! caps them at AVX2, `portable` turns them off (packing keeps AVX2), read once per
//! process.
//!
//! Every split and every K-block order depends only on the problem's shape and the
//! thread count: results are bitwise reproducible (`global.deterministic` holds).

use std::sync::OnceLock;

use super::exec::{Exec, Slots, piece, split};
use super::kept::KeptBuf;

/// Rows of the register tile.
pub const MR: usize = 6;
/// Columns of the register tile.
pub const NR: usize = 16;
/// Elements of one register tile.
pub const TILE: usize = MR * NR;
/// Row tiles per L2 block of A.
const MC_TILES: usize = 16;

/// Where a row tile's A elements are, for one K block: `nseg` segments of `seg_len`
/// steps; row `i` of segment `s` reads `ptrs[s * MR + i].add(k * ks)`.
#[derive(Debug)]
pub struct ARows<'a> {
    /// `nseg * MR` pointers (rows past the tile's height are not read).
    pub ptrs: &'a [*const f32],
    /// Number of segments.
    pub nseg: usize,
    /// K steps per segment.
    pub seg_len: usize,
    /// Element stride between K steps.
    pub ks: usize,
}

/// One step of a [`FusedOut`] chain over the finished values `x` of row `i`, column
/// `j` (GEMM coordinates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FusedStep {
    /// `x · a[j] + b[j]` (a multiply, then an add).
    ScaleShift(*const f32, *const f32),
    /// `x + t[j]`.
    AddCols(*const f32),
    /// `x · t[j]`.
    MulCols(*const f32),
    /// `x + t[i · rs + j]`.
    AddRows(*const f32, usize),
    /// `x · t[i · rs + j]`.
    MulRows(*const f32, usize),
    /// `x + s`.
    AddScalar(f32),
    /// `x · s`.
    MulScalar(f32),
    /// `max(x, 0)`.
    Relu,
}

/// An epilogue the pair kernels apply to their accumulators and store
/// themselves, instead of handing each finished tile to
/// [`GemmProblem::write_tile`]: the steps in order, then `C[i, j]` to
/// `y[i · ys + j]`. Built once per GEMM by the problem
/// ([`GemmProblem::fused_out`]); the bias, batch-norm scale-and-shift, residual add and
/// ReLU that end most convolutions then cost no pass over a stored tile.
#[derive(Debug, Clone)]
pub struct FusedOut {
    steps: Vec<FusedStep>,
    y: *mut f32,
    ys: usize,
}

// SAFETY: the pointers address tensors that outlive the GEMM (`FusedOut::new`'s
// contract); threads only read the operands and write disjoint tiles of `y`.
unsafe impl Send for FusedOut {}
// SAFETY: as above.
unsafe impl Sync for FusedOut {}

impl FusedOut {
    /// A chain over an `m × n` GEMM's output.
    ///
    /// # Safety
    /// For every `i < m`, `j < n`: `y[i · ys + j]` is writable and no two `(i, j)`
    /// share an element; every step's operand is readable at the offsets its
    /// [`FusedStep`] names; all of them stay valid, and `y` is not otherwise
    /// accessed, while every GEMM run with this chain lasts. An operand may overlap
    /// `y` only as a residual added in place (`AddRows` over the same elements as
    /// `y`): the kernels read each element's operands before they store it.
    pub unsafe fn new(steps: Vec<FusedStep>, y: *mut f32, ys: usize) -> Self {
        Self { steps, y, ys }
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[FusedStep] {
        &self.steps
    }

    /// Where row 0, column 0 is stored, and the stride between rows.
    pub fn target(&self) -> (*mut f32, usize) {
        (self.y, self.ys)
    }
}

/// Where a pair kernel stores a fused tile: rows `i0..i0 + M`, columns `j0..` (the
/// first panel's `cols.0`, the second's `cols.1`, 0 when there is none).
#[derive(Debug, Clone, Copy)]
struct FuseAt<'a> {
    out: &'a FusedOut,
    i0: usize,
    j0: usize,
    cols: (usize, usize),
}

/// Cache lines a pair kernel fetches into L2 while it runs, [`FAR_PER_STEP`] per four
/// K steps: `lines` lines from `p` on (the B panels the kernels read later, see
/// [`Ahead`]).
#[derive(Debug, Clone, Copy)]
struct Far {
    p: *const f32,
    lines: usize,
}

/// Lines a kernel fetches for its [`Far`] per four K steps, at most. With one, the
/// [`Ahead`] cursor's rate (twice the average, capped at one line per four steps)
/// stayed within an eighth of the kernels' over ResNet-50's 7² 1×1 layers at batch 1
/// (a 2 × 256-step K block of 8 panels per chunk), so it never got ahead of a chunk's
/// first row tile; with two, their 512 → 2048 layers took 508–514 against 531–539 µs
/// in the whole network on 2 threads of a Zen 4 (minimums over 8 rounds; with four,
/// no faster).
const FAR_PER_STEP: usize = 2;

impl Far {
    const NONE: Self = Self {
        p: std::ptr::null(),
        lines: 0,
    };
}

/// A GEMM whose operands and output are supplied piecewise.
///
/// Implementations must be safe to call from several threads at once for disjoint
/// tiles: `write_tile` is called exactly once per tile.
pub trait GemmProblem: Sync {
    /// `(M, N, K)`.
    fn dims(&self) -> (usize, usize, usize);

    /// K split into blocks `(start, len)` of about `kc` (override when A's segments
    /// must not be cut).
    fn k_blocks(&self, kc: usize) -> Vec<(usize, usize)> {
        even_k_blocks(self.dims().2, kc)
    }

    /// Fills `ptrs` (cleared by the caller) for rows `i0..i0 + mr` over the K block
    /// `k0..k0 + kc` and returns `(nseg, seg_len, ks)` with `nseg * seg_len == kc`.
    ///
    /// Every pointer must address `seg_len` readable `f32`s at stride `ks`.
    fn a_rows(
        &self,
        i0: usize,
        mr: usize,
        k0: usize,
        kc: usize,
        ptrs: &mut Vec<*const f32>,
    ) -> (usize, usize, usize);

    /// Packs `B[k0..k0 + kc, j0..j0 + nc]` into `nc.div_ceil(NR)` panels: element
    /// `(k, j)` of panel `p` goes to `dst[p * panel_stride(kc) + k * NR + j % NR]`; columns
    /// past `nc` in the last panel must be zero.
    fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]);

    /// Whether A's rows may be read in place by the micro-kernel (without packing)
    /// when [`GemmProblem::a_rows`] gives them unit stride: they must stay valid
    /// while the GEMM runs, not only while they are packed.
    fn a_in_place(&self) -> bool {
        false
    }

    /// All of B already packed (by [`PackedB::new`] for this problem), if it is: then
    /// [`run`] calls no [`GemmProblem::pack_b`].
    fn packed_b(&self) -> Option<&PackedB> {
        None
    }

    /// The epilogue as a [`FusedOut`], if it has that form: then, where the CPU has
    /// the pair kernels, [`run`] stores the output itself and calls no
    /// [`GemmProblem::write_tile`]. Asked once per [`run`].
    fn fused_out(&self) -> Option<&FusedOut> {
        None
    }

    /// Takes the finished tile `tile[i * NR + j]` for `C[i0 + i, j0 + j]`, `i < mr`,
    /// `j < nr`.
    fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]);
}

/// `k` split into `k.div_ceil(kc)` blocks `(start, len)` of nearly equal length (one
/// block when `k` is 0): [`GemmProblem::k_blocks`] unless a problem overrides it.
pub fn even_k_blocks(k: usize, kc: usize) -> Vec<(usize, usize)> {
    let n = k.div_ceil(kc.max(1)).max(1);
    (0..n)
        .map(|b| {
            let r = split(k, n, b);
            (r.start, r.len())
        })
        .collect()
}

/// K steps up to which a GEMM's last K block goes four panels at a time down a group of
/// row tiles (`run`), where it has more than four: four 64-step panels (16 KiB) stay in
/// L1 while 16 row tiles pass. ResNet-50's 56² 64 → 256 layers on two threads of a Xeon
/// (AVX-512, 48 KiB L1d), stage minimums over 8–14 alternating rounds (five runs, a
/// control arm within 1–4%): 1–7% faster at batch 8, 0–4% at batch 1; with 128 steps
/// (32 KiB of B) the 28² 128 → 512 layers gained nothing.
const QUAD_IN_L1: usize = 64;

/// Floats between the starts of consecutive packed B panels: `kc × NR` plus one cache
/// line, so that the panels' rows do not all map to the same L1 set (a `kc × NR`
/// panel is a multiple of 4 KiB when `kc` is a multiple of 64).
pub fn panel_stride(kc: usize) -> usize {
    kc * NR + 16
}

/// Stores `src` to `dst[q * stride]`, `q < src.len()`: a copy for unit strides.
///
/// # Safety
/// `dst` is valid for writes at `q * stride`, `q < src.len()`, that no other thread
/// touches meanwhile.
#[inline(always)]
pub(crate) unsafe fn store_strided(dst: *mut f32, stride: usize, src: &[f32]) {
    // SAFETY: per the function's contract.
    unsafe {
        if stride == 1 {
            copy_short(std::slice::from_raw_parts_mut(dst, src.len()), src);
        } else {
            for (q, &v) in src.iter().enumerate() {
                *dst.add(q * stride) = v;
            }
        }
    }
}

/// Copies `src` to `dst` (equal lengths) without a library call for short runs.
#[inline(always)]
pub fn copy_short(dst: &mut [f32], src: &[f32]) {
    if dst.len() == NR {
        let d: &mut [f32; NR] = dst.try_into().expect("NR long");
        let s: &[f32; NR] = src.try_into().expect("NR long");
        *d = *s;
        return;
    }
    let mut dc = dst.chunks_exact_mut(4);
    let mut sc = src.chunks_exact(4);
    for (d, s) in (&mut dc).zip(&mut sc) {
        let d: &mut [f32; 4] = d.try_into().expect("4 long");
        *d = s.try_into().expect("4 long");
    }
    for (d, s) in dc.into_remainder().iter_mut().zip(sc.remainder()) {
        *d = *s;
    }
}

/// Hints that `len` floats from `p` will be read soon (no effect on other targets).
#[inline(always)]
pub fn prefetch_run(p: *const f32, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut q = 0;
        while q < len {
            // SAFETY: prefetching is a hint; it never faults, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(q).cast(),
                );
            }
            q += 16;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// `out[q] = src[2 * q]` (the im2col row of a stride-2 convolution).
///
/// # Panics
/// When `src` is shorter than `2 * out.len() - 1`.
pub fn gather_stride2(out: &mut [f32], src: &[f32]) {
    if out.is_empty() {
        return;
    }
    assert!(src.len() > 2 * (out.len() - 1));
    let mut q = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 present; reads below `2 * q + 16 <= src.len()` and writes below
        // `out.len()` (the function's loop bounds).
        q = unsafe { avx2::gather_stride2(out, src) };
    }
    while q < out.len() {
        out[q] = src[2 * q];
        q += 1;
    }
}

/// Eight rows of `n` floats (row `k` at `src + k · rs`) written as `n` columns of eight
/// (column `j` at `dst + j · ds`): eight channels of `n` pixels of a channels-first
/// image to their places in a channels-last one.
///
/// # Safety
/// `src` is readable at `k · rs + j` and `dst` writable at `j · ds + k` (and touched by
/// no other thread meanwhile) for every `k < 8`, `j < n`.
pub(crate) unsafe fn transpose_8_rows(
    src: *const f32,
    rs: usize,
    n: usize,
    dst: *mut f32,
    ds: usize,
) {
    let mut j = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 present; the same elements, per the function's contract.
        j = unsafe { avx2::transpose_8_rows(src, rs, n, dst, ds) };
    }
    for j in j..n {
        for k in 0..8 {
            // SAFETY: per the function's contract.
            unsafe { *dst.add(j * ds + k) = *src.add(k * rs + j) };
        }
    }
}

/// Cache blocking of the engine, and what the GEMM's rows are (for the thread split).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocking {
    /// Target K block.
    pub kc: usize,
    /// Columns per chunk (a multiple of [`NR`]).
    pub nc: usize,
    /// Whether the rows are output pixels of a network's activations: then two
    /// threads may halve the rows where halving the columns looked cheaper, so that
    /// each thread keeps its pixels from stage to stage (see [`run`]).
    pub pixel_rows: bool,
}

impl Default for Blocking {
    /// `kc = 256` (a `kc × 16` B panel is 16 KiB, half of L1d), `nc = 384` (a
    /// `kc × nc` packed B block is 384 KiB and a packed `96 × kc` A block 96 KiB: both
    /// stay in a 1 MiB L2 per core).
    fn default() -> Self {
        Self {
            kc: 256,
            nc: 384,
            pixel_rows: false,
        }
    }
}

/// How the engine splits `(M, N)` over the threads: a grid of `rows × cols` parts,
/// thread `t` taking row part `t / cols` (contiguous row tiles) and column part
/// `t % cols` (contiguous panels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Split {
    rows: usize,
    cols: usize,
}

impl Split {
    /// Thread `t`'s row tiles and panels (empty past the grid).
    fn ranges(
        self,
        tiles: usize,
        panels: usize,
        t: usize,
    ) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        if t >= self.rows * self.cols {
            return (0..0, 0..0);
        }
        (
            split(tiles, self.rows, t / self.cols),
            split(panels, self.cols, t % self.cols),
        )
    }
}

/// What one float of an operand a thread reads from outside its core costs, in
/// multiply-adds, in [`choose_split`]'s model.
const FLOAT_COST: usize = 16;

/// The grid (`rows · cols = threads`) that minimises the busiest thread's cost: its
/// multiply-adds per K step (`MR · NR` per tile and panel) plus [`FLOAT_COST`] per
/// float of its operand rows and columns (`MR` per tile, `NR` per panel), read from
/// memory or another core's cache. With two threads this is the half of the larger
/// of M and N; with many it is a grid, so that no thread reads all of an operand
/// for a sliver of the output (196 × 256 over 16 threads: 4 × 4 parts of 9 tiles and
/// 4 panels, not 16 parts of 3 tiles that each read all of B). Ties go to fewer row
/// parts.
///
/// Where the rows are a network's output pixels (`pixel_rows`), two threads take
/// halves of the rows where those cost at most [`ROWS_SLACK`] more than the model's
/// choice: then each thread computes the same pixels stage after stage, so the
/// activations it reads, the residual it adds and the lines it overwrites were last
/// written by its own core, which the model does not count. On a 2-core Xeon VM
/// this took each of ResNet-50's 14² convolutions at batch 1 (196 rows, where
/// halving the 256 or 1024 columns was 4–9% cheaper in the model) 20–56 µs faster
/// (sum of stage medians −1.1%), and its 7² ones at batch 8 (392 rows) 62–130 µs;
/// the 7² ones at batch 1 (49 rows: 30% more in the model) stay split by columns. A
/// lone 1024³ matmul was 2% slower split by rows (0.6% more in the model), hence
/// only for pixels. Unmeasured beyond two threads.
fn choose_split(m: usize, n: usize, threads: usize, pixel_rows: bool) -> Split {
    let panels = n.div_ceil(NR);
    let tiles = m.div_ceil(MR);
    let threads = threads.max(1);
    let cost = |rows: usize| {
        let cols = threads / rows;
        let (tr, tp) = (tiles.div_ceil(rows), panels.div_ceil(cols));
        tr * tp * TILE + FLOAT_COST * (tr * MR + tp * NR)
    };
    let mut best = (usize::MAX, Split { rows: 1, cols: 1 });
    for rows in (1..=threads).filter(|r| threads.is_multiple_of(*r)) {
        let c = cost(rows);
        if c < best.0 {
            best = (
                c,
                Split {
                    rows,
                    cols: threads / rows,
                },
            );
        }
    }
    if pixel_rows && threads == 2 && cost(threads) * ROWS_SLACK.1 <= best.0 * ROWS_SLACK.0 {
        return Split {
            rows: threads,
            cols: 1,
        };
    }
    best.1
}

/// How much more (numerator, denominator) than the cheapest grid the split of pixel
/// rows may cost in [`choose_split`]'s model and still be taken.
const ROWS_SLACK: (usize, usize) = (23, 20);

/// Row tiles a piece of a thread's share in [`run`] has at least.
const PIECE_TILES: usize = 2;
/// Panels a piece has at least, where a share has too few row tiles to cut.
const PIECE_PANELS: usize = 2;
/// Pieces per thread at most.
const PIECES: usize = 8;
/// Threads from which the parallel sections of [`run`] (and Winograd's) come in
/// pieces along row tiles or panels, as the shares allow; with two threads, [`run`]'s
/// come in pieces of [`PIECE_TILES_TWO`] row tiles only.
pub(crate) const PIECES_FROM: usize = 3;
/// Row tiles a piece of a thread's share in [`run`] has at least with two threads.
const PIECE_TILES_TWO: usize = 16;

/// How [`run`] cuts each thread's share of the grid: `(pieces, along row tiles)`.
/// Each piece is one part of the parallel section, and a thread done with its own
/// pieces takes the unstarted ones of a slower thread (one the system runs less, on a
/// busy machine, or with more work), so that the threads finish together. Pieces of at
/// least [`PIECE_TILES`] row tiles (else [`PIECE_PANELS`] panels, else none) keep the
/// reuse of each panel over row tiles and of each A row tile over panels.
///
/// From [`PIECES_FROM`] threads: on a shared 16-core Xeon, pieces took ResNet-50's
/// GEMM stages at batch 8 from 1.5–3.0 to 1.2–2.7 ms (medians), and the whole graph
/// from 54–63 to 43–55 ms; pieces of 8 rather than 16 row tiles (up to 8 rather than
/// 4) gave batch 1 8.5–9.2 against 8.6–10.1 ms. Pieces of 2 rather than 8 row tiles
/// or panels cut the shares of batch 1's layers too (a 14² layer over 16 threads
/// has 9 row tiles a share): the thread time its GEMM sections spent idle went from
/// 15–34% to 10–25% (`HIPDNN_CPU_PROFILE=1`), and the whole graph, in rounds
/// alternating with the pieces of 8, ran 1.13× as fast at batch 1 and 1.09× at
/// batch 8 (paired medians, 16 threads of the Xeon).
///
/// Two threads cut their shares along row tiles only, into pieces of at least
/// [`PIECE_TILES_TWO`], and only where all of B is packed before the pass
/// (`b_packed`: kept constant filters, or shared by a row split); else every piece
/// would pack its B panels again. On a shared 2-core Xeon VM the caller waited
/// 4–8 ms of each ResNet-50 batch-8 execution (2–5%) for the other thread to finish
/// its half of a section; these pieces took the sums of stage minimums from 176.5 to
/// 172.9 ms (batch 1 unchanged). Pieces of 8 tiles, or along panels, cost more than
/// they balance there (7² layers with 4–9 MB of B 3–8% slower, batch 1 about 4%), and
/// a 1024³ matmul (columns split, B packed per thread) ran 9% slower in pieces.
fn pieces(
    grid: Split,
    tiles: usize,
    panels: usize,
    threads: usize,
    b_packed: bool,
) -> (usize, bool) {
    if threads < 2 {
        return (1, true);
    }
    if threads < PIECES_FROM {
        let by_tiles = if b_packed {
            tiles.div_ceil(grid.rows) / PIECE_TILES_TWO
        } else {
            0
        };
        return (by_tiles.clamp(1, PIECES), true);
    }
    let by_tiles = (tiles.div_ceil(grid.rows) / PIECE_TILES).min(PIECES);
    let by_panels = (panels.div_ceil(grid.cols) / PIECE_PANELS).min(PIECES);
    if by_tiles >= by_panels {
        (by_tiles.max(1), true)
    } else {
        (by_panels, false)
    }
}

/// Piece `s` of a thread's share cut into `per` pieces ([`pieces`]): a run of its row
/// tiles, or of its panels in whole pairs.
fn pieced(
    tiles: std::ops::Range<usize>,
    panels: std::ops::Range<usize>,
    per: usize,
    s: usize,
    along_tiles: bool,
) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    if along_tiles {
        let r = split(tiles.len(), per, s);
        (tiles.start + r.start..tiles.start + r.end, panels)
    } else {
        let r = split(panels.len().div_ceil(2), per, s);
        let start = panels.start + 2 * r.start;
        (tiles, start..(start + 2 * r.len()).min(panels.end))
    }
}

/// Where two threads halve an odd number of row tiles that [`pieces`] leaves whole
/// (`per == 1`), all of B packed before the pass (`b_packed`; else each half of the
/// middle tile would pack its panels again for one row tile): the middle tile, and
/// the panel (a pair boundary) at which its columns are cut, so that each thread
/// computes half of it instead of one thread all of it. ResNet-50's 14² layers at
/// batch 1 have 33 row tiles: split 17 / 16, the thread with 16 waited one tile's time
/// (about 3% of the section).
fn middle_tile(
    grid: Split,
    tiles: usize,
    panels: usize,
    per: usize,
    b_packed: bool,
) -> Option<(usize, usize)> {
    (b_packed && grid.rows == 2 && grid.cols == 1 && per == 1 && tiles % 2 == 1 && panels >= 4)
        .then(|| (tiles / 2, (panels / 2).next_multiple_of(2)))
}

/// Floats of slack per buffer: alignment to 64 bytes plus the overlapping stores of
/// the A packer.
const SLACK: usize = 32;

/// Scratch `f32`s [`run`] needs for a problem of this size whose
/// [`GemmProblem::k_blocks`] are `kblocks`; `b_packed`: the problem gives all of B
/// packed ([`GemmProblem::packed_b`]), so that no room is needed to pack it.
pub fn scratch_len(
    m: usize,
    n: usize,
    kblocks: &[(usize, usize)],
    b: Blocking,
    threads: usize,
    b_packed: bool,
) -> usize {
    let nc = b.nc.min(n.div_ceil(NR) * NR);
    let k: usize = kblocks.iter().map(|b| b.1).sum();
    let kc_max = kblocks.iter().map(|b| b.1).max().unwrap_or(0);
    let kblocks = kblocks.len();
    let bpack = panel_stride(kc_max) * nc.div_ceil(NR);
    let apack = kc_max * MR * MC_TILES;
    let acc = if kblocks > 1 {
        m.div_ceil(MR) * nc.div_ceil(NR) * TILE
    } else {
        0
    };
    let shared = if prepack_a(m, n, threads, b) {
        m.div_ceil(MR) * kblocks.max(1) * a_stride(kc_max) + SLACK
    } else {
        0
    };
    let shared_b = if !b_packed && prepack_b(m, n, k, threads, b) {
        n.div_ceil(NR) * kblocks.max(1) * panel_stride(kc_max) + SLACK
    } else {
        0
    };
    shared + shared_b + threads * (bpack + apack + acc + 3 * SLACK)
}

/// Whether all of B is packed once up front (shared by the threads, each packing a
/// share of the panels) rather than by every thread: when threads split the rows
/// (the threads of a row part all need the same panels of B) and B is at most
/// 8 Mi floats.
fn prepack_b(m: usize, n: usize, k: usize, threads: usize, b: Blocking) -> bool {
    threads > 1 && choose_split(m, n, threads, b.pixel_rows).rows > 1 && k * n <= 8 << 20
}

/// Whether all of A is packed once up front (shared by the threads) rather than per
/// column chunk: when threads split the columns and each has several chunks, which
/// would each pack all of A again.
fn prepack_a(m: usize, n: usize, threads: usize, b: Blocking) -> bool {
    let s = choose_split(m, n, threads, b.pixel_rows);
    s.cols > 1 && n.div_ceil(NR).div_ceil(s.cols) > b.nc / NR
}

/// Floats per packed (row tile, K block) of the shared A: `kc × MR`, the packer's
/// slack, rounded to a cache line.
fn a_stride(kc: usize) -> usize {
    (kc * MR + 8).next_multiple_of(16)
}

/// Splits `s` at `len` floats past its first 64-byte-aligned element.
fn take_aligned(s: &mut [f32], len: usize) -> (&mut [f32], &mut [f32]) {
    let off = s.as_ptr().align_offset(64).min(16);
    let (_, s) = s.split_at_mut(off);
    s.split_at_mut(len)
}

/// Where each K block of a shared packed B starts, and the floats it takes in all.
fn b_offsets(kblocks: &[(usize, usize)], panels: usize) -> (Vec<usize>, usize) {
    let mut total = 0;
    let off = kblocks
        .iter()
        .map(|&(_, kc)| {
            let at = total;
            total += panels * panel_stride(kc);
            at
        })
        .collect();
    (off, total)
}

/// Packs all of `p`'s B into `dst` (laid out per [`b_offsets`]), the threads of `exec`
/// each taking a contiguous range of panels of every K block.
fn pack_shared_b<P: GemmProblem>(p: &P, kblocks: &[(usize, usize)], exec: &Exec, dst: &mut [f32]) {
    let n = p.dims().1;
    let panels = n.div_ceil(NR);
    let threads = exec.threads().min(panels).max(1);
    let mut parts = Vec::with_capacity(kblocks.len() * threads);
    let mut rest = dst;
    for &(_, kc) in kblocks {
        for t in 0..threads {
            let len = split(panels, threads, t).len() * panel_stride(kc);
            let (mine, r) = rest.split_at_mut(len);
            parts.push(std::sync::Mutex::new(mine));
            rest = r;
        }
    }
    exec.for_each(threads, |t| {
        let range = split(panels, threads, t);
        if range.is_empty() {
            return;
        }
        for (bi, &(k0, kc)) in kblocks.iter().enumerate() {
            if kc == 0 {
                continue;
            }
            let mut guard = parts[bi * threads + t]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let j0 = range.start * NR;
            let ncols = (range.end * NR).min(n) - j0;
            p.pack_b(k0, kc, j0, ncols, &mut guard[..]);
        }
    });
}

/// All of a problem's B packed once, in the layout [`run`] shares between its threads,
/// for problems whose B does not change between runs (a convolution's constant
/// filters): [`GemmProblem::packed_b`] hands it back and [`run`] packs no B.
#[derive(Debug)]
pub struct PackedB {
    data: KeptBuf,
    dims: (usize, usize, usize),
    kblocks: Vec<(usize, usize)>,
}

impl PackedB {
    /// Packs all of `p`'s B (the threads of `exec` in parallel) with the K blocks
    /// [`run`] uses under `blocking`.
    pub fn new<P: GemmProblem>(p: &P, exec: &Exec, blocking: Blocking) -> Self {
        let dims = p.dims();
        let kblocks = if dims.2 == 0 {
            vec![(0, 0)]
        } else {
            p.k_blocks(blocking.kc)
        };
        let (_, len) = b_offsets(&kblocks, dims.1.div_ceil(NR));
        let mut data = KeptBuf::zeroed(len);
        pack_shared_b(p, &kblocks, exec, &mut data);
        Self {
            data,
            dims,
            kblocks,
        }
    }

    /// The packed panels (64-byte aligned).
    fn as_slice(&self) -> &[f32] {
        &self.data
    }
}

/// Fetches a thread's share of a shared packed B into L2 ahead of the kernels.
///
/// A thread first reads its panels of each K block as one contiguous run (a region),
/// chunk by chunk. In the middle K blocks a panel pair meets every row tile before the
/// next pair is read, so without help the pair's first tile takes it from memory at
/// the kernel's rate, which memory does not sustain when the panels are cold (constant
/// weights, read once per execution, come from DRAM); in the last K block the first
/// row tile reads all the chunk's panels. The cursor walks the regions in that order
/// and hands each kernel call the next lines to prefetch while it computes ([`Far`]),
/// staying up to [`Ahead::LEAD`] floats past the furthest panel read so far.
struct Ahead {
    /// `(start, floats)` of each region, in reading order.
    regions: Vec<(*const f32, usize)>,
    /// Position in the sequence where each region begins.
    begins: Vec<usize>,
    /// The furthest position read.
    frontier: usize,
    /// Region and offset of the cursor.
    ri: usize,
    off: usize,
    /// Cache lines at most per call.
    per_call: usize,
}

impl Ahead {
    /// How far the cursor may run past the furthest panel read (floats: 128 KiB).
    const LEAD: usize = 32 << 10;

    /// The cursor over `regions`, for `calls` kernel calls of `kc` K steps.
    fn new(regions: Vec<(*const f32, usize)>, calls: usize, kc: usize) -> Self {
        let mut begins = Vec::with_capacity(regions.len());
        let mut total = 0;
        for &(_, len) in &regions {
            begins.push(total);
            total += len;
        }
        // Twice the average rate, so that the cursor gains on the kernels; a kernel
        // issues up to [`FAR_PER_STEP`] lines per four K steps.
        let per_call = (2 * total / 16)
            .div_ceil(calls.max(1))
            .min(kc * FAR_PER_STEP / 4);
        Self {
            regions,
            begins,
            frontier: 0,
            ri: 0,
            off: 0,
            per_call,
        }
    }

    /// For a kernel about to read `floats` of region `region` from `offset` on: notes
    /// how far the reads have got, and hands out the next lines.
    #[inline]
    fn take(&mut self, region: usize, offset: usize, floats: usize) -> Far {
        self.frontier = self.frontier.max(self.begins[region] + offset + floats);
        let Some(&(p, len)) = self.regions.get(self.ri) else {
            return Far::NONE;
        };
        let at = self.begins[self.ri] + self.off;
        let target = self.frontier + Self::LEAD;
        if at >= target {
            return Far::NONE;
        }
        let lines = self
            .per_call
            .min((len - self.off).div_ceil(16))
            .min((target - at).div_ceil(16));
        let far = Far {
            p: p.wrapping_add(self.off),
            lines,
        };
        self.off += lines * 16;
        if self.off >= len {
            self.ri += 1;
            self.off = 0;
        }
        far
    }
}

/// Runs the GEMM with `scratch` of at least [`scratch_len`] elements.
///
/// The output is split as a grid over the threads (`choose_split`: with two, a
/// convolution's pixel rows where [`Blocking::pixel_rows`] says so), each share cut
/// into pieces (`pieces`: from 3 threads, and with 2 where all of B is packed before
/// the pass; two threads that halve an odd number of row tiles left whole share the
/// middle tile by columns, `middle_tile`). Per piece: column chunks of `nc`; per
/// chunk, K blocks; per K block, B packed once (`kc × nc`, L2), then row groups of
/// `MC_TILES` tiles packed (`96 × kc`, L2), each `kc × 16` B panel (L1) meeting every
/// row tile of the group. Partial sums over K blocks go to per-tile accumulators in
/// fixed block order, so results do not depend on which thread runs a piece, nor when.
///
/// # Panics
/// When `scratch` is too short.
pub fn run<P: GemmProblem>(p: &P, exec: &Exec, blocking: Blocking, scratch: &mut [f32]) {
    let (m, n, k) = p.dims();
    if m == 0 || n == 0 {
        return;
    }
    let threads = exec.threads();
    let kblocks = if k == 0 {
        vec![(0, 0)]
    } else {
        p.k_blocks(blocking.kc)
    };
    let given = p.packed_b();
    let need = scratch_len(m, n, &kblocks, blocking, threads, given.is_some());
    assert!(
        scratch.len() >= need,
        "gemm scratch {} < {need}",
        scratch.len()
    );
    let nc = blocking.nc.min(n.div_ceil(NR) * NR);
    let grid = choose_split(m, n, threads, blocking.pixel_rows);
    let kernel = select_kernel();
    let pair = select_pair_kernel();
    let pair_rows = select_pair_rows_kernel().filter(|_| p.a_in_place());
    let sweep_rows = select_sweep_rows_kernel().filter(|_| pair_rows.is_some());
    // The chain the pair kernels apply and store themselves, where they run.
    let fused = p.fused_out().filter(|_| pair.is_some());
    let packer = select_packer();
    let tiles = m.div_ceil(MR);
    let panels = n.div_ceil(NR);
    let kc_max = kblocks.iter().map(|b| b.1).max().unwrap_or(0);
    let nkb = kblocks.len();
    // Where the last K block sweeps row tiles over A in place with the AVX-512 quad
    // kernel, A is read in place even when the threads split the columns into several
    // chunks each: reading each row tile once per 64 columns beats packing all of A
    // up front (ResNet-50's expanding 1×1 convolutions at batch 1, two threads of a
    // Xeon: 2–4% faster; with AVX2's pair kernels, prepacking was faster).
    let sweeps_in_place = fused.is_some()
        && sweep_rows.is_some()
        && pair_isa() == Some(PairIsa::Avx512)
        && kc_max > 0
        && {
            let mut probe = Vec::with_capacity(MR * 64);
            let (k0, kc) = kblocks[0];
            p.a_rows(0, MR.min(m), k0, kc, &mut probe).2 == 1
        };
    let prepack_shared = prepack_a(m, n, threads, blocking) && !sweeps_in_place;
    let prepack = prepack_shared && kc_max > 0;
    let scratch = &mut scratch[..need];
    let shared_len = if prepack_shared {
        tiles * nkb * a_stride(kc_max) + SLACK
    } else {
        0
    };
    let (shared, scratch) = scratch.split_at_mut(shared_len);
    let shared_b_len = if given.is_none() && prepack_b(m, n, k, threads, blocking) {
        panels * nkb * panel_stride(kc_max) + SLACK
    } else {
        0
    };
    let (shared_b, scratch) = scratch.split_at_mut(shared_b_len);
    let per_thread = scratch.len() / threads;
    // Shared B: K block `bi` at `b_off[bi]`, its panels `panel_stride(kc)` apart: given
    // by the problem (packed once for many runs), or packed here by the threads in
    // parallel (each a contiguous range of panels of every block), then only read.
    if let Some(b) = given {
        assert!(
            b.dims == (m, n, k) && b.kblocks == kblocks,
            "packed B of another problem"
        );
    }
    let prepack_b = given.is_some() || (prepack_b(m, n, k, threads, blocking) && kc_max > 0);
    let (b_off, total_b) = b_offsets(&kblocks, panels);
    let b_all: &[f32] = match given {
        Some(b) => b.as_slice(),
        None if prepack_b => {
            let (b_all, _) = take_aligned(shared_b, total_b);
            pack_shared_b(p, &kblocks, exec, b_all);
            b_all
        }
        None => &[],
    };
    // Shared A: tile `it`, K block `bi` at `(it * nkb + bi) * a_stride(kc_max)`, packed
    // by the threads in parallel (contiguous tile ranges), then only read.
    let a_all: &[f32] = if prepack {
        let (a_all, _) = take_aligned(shared, tiles * nkb * a_stride(kc_max));
        let mut parts = Vec::with_capacity(threads);
        let mut rest = &mut a_all[..];
        for t in 0..threads {
            let (mine, r) =
                rest.split_at_mut(split(tiles, threads, t).len() * nkb * a_stride(kc_max));
            parts.push(std::sync::Mutex::new(mine));
            rest = r;
        }
        exec.for_each(threads, |t| {
            let mut guard = parts[t].lock().unwrap_or_else(|e| e.into_inner());
            let mine: &mut [f32] = &mut guard;
            let range = split(tiles, threads, t);
            let mut ptrs: Vec<*const f32> = Vec::with_capacity(MR * 64);
            for it in range.clone() {
                let i0 = it * MR;
                let mr = MR.min(m - i0);
                for (bi, &(k0, kc)) in kblocks.iter().enumerate() {
                    ptrs.clear();
                    let (nseg, seg_len, ks) = p.a_rows(i0, mr, k0, kc, &mut ptrs);
                    debug_assert_eq!(nseg * seg_len, kc);
                    let a = ARows {
                        ptrs: &ptrs,
                        nseg,
                        seg_len,
                        ks,
                    };
                    let at = ((it - range.start) * nkb + bi) * a_stride(kc_max);
                    packer(mr, &a, &mut mine[at..at + kc * MR + 8]);
                }
            }
        });
        a_all
    } else {
        &[]
    };
    let slots = Slots::new(scratch.chunks_mut(per_thread.max(1)).take(threads));
    let (per, along_tiles) = pieces(grid, tiles, panels, threads, prepack_b);
    let middle = middle_tile(grid, tiles, panels, per, prepack_b);
    let parts = if middle.is_some() { 4 } else { threads * per };
    exec.for_each(parts, |part| {
        let (t, tile_range, panel_range) = if let Some((h, cut)) = middle {
            // Thread 0: its tiles below the middle one, then the middle one's left
            // columns; thread 1: its tiles above it, then its right columns.
            match piece(part, 2, 2) {
                0 => (0, 0..h, 0..panels),
                1 => (0, h..h + 1, 0..cut),
                2 => (1, h + 1..tiles, 0..panels),
                _ => (1, h..h + 1, cut..panels),
            }
        } else {
            let at = piece(part, threads, per);
            let (t, s) = (at / per, at % per);
            let (tile_range, panel_range) = grid.ranges(tiles, panels, t);
            let (tile_range, panel_range) = pieced(tile_range, panel_range, per, s, along_tiles);
            (t, tile_range, panel_range)
        };
        if tile_range.is_empty() || panel_range.is_empty() {
            return;
        }
        let mut guard = slots.take(t);
        let scratch: &mut [f32] = &mut guard;
        let (bpack, rest) = take_aligned(scratch, panel_stride(kc_max) * nc.div_ceil(NR));
        let (apack, rest) = take_aligned(rest, kc_max * MR * MC_TILES + 8);
        let acc_len = if kblocks.len() > 1 {
            tile_range.len() * nc.div_ceil(NR) * TILE
        } else {
            0
        };
        let (acc_all, _) = take_aligned(rest, acc_len);
        let mut ptrs: Vec<*const f32> = Vec::with_capacity(MR * 64);
        // The tile when there is one K block (the kernel overwrites it).
        let mut local = [0f32; TILE];
        let mut local2 = [0f32; TILE];
        // Where a pair kernel run on a single panel puts the half that is dropped.
        let mut spare = [0f32; TILE];
        // A sweep's tiles when there is one K block (the kernel only stores the chain's
        // results, so they are scratch).
        let mut pair_scratch = [0f32; 2 * TILE];
        let tiles_v: Vec<usize> = tile_range.clone().collect();
        // The kernels fetch [`FAR_PER_STEP`] lines per four K steps, which keeps ahead of
        // their reads only where each panel pair meets enough row tiles (a
        // matrix-vector product streams B once: the hardware's prefetch does better).
        let prefetching = prepack_b && pair.is_some() && tiles_v.len() >= 8;
        // With one or two K blocks, chunks of at most [`Ahead::LEAD`] floats per K
        // block: the first row tile of a chunk reads all of it, so a chunk the cursor
        // has not fetched while the one before computed stalls on memory (constant
        // filters come from DRAM at batch 1). 128 columns at `kc = 256`: ResNet-50's
        // expanding 1×1 convolutions 2–5% faster on two threads of a Xeon; with more K
        // blocks each chunk reads all of A again, which costs more than it saves.
        let nc = if prefetching && kblocks.len() <= 2 {
            nc.min((Ahead::LEAD / kc_max.max(1)).max(2 * NR) / NR * NR)
        } else {
            nc
        };
        let mut ahead = prefetching.then(|| {
            let mut regions = Vec::new();
            let mut calls = 0;
            let mut jp = panel_range.start;
            while jp < panel_range.end {
                let np = (nc / NR).min(panel_range.end - jp);
                for (bi, &(_, kc)) in kblocks.iter().enumerate() {
                    let at = b_off[bi] + jp * panel_stride(kc);
                    let len = (np * panel_stride(kc)).min(b_all.len().saturating_sub(at));
                    regions.push((b_all[at..].as_ptr(), len));
                    calls += np.div_ceil(2) * tiles_v.len();
                }
                jp += np;
            }
            Ahead::new(regions, calls, kc_max)
        });
        let mut region = 0;
        let mut jp = panel_range.start;
        while jp < panel_range.end {
            let np = (nc / NR).min(panel_range.end - jp);
            let j0 = jp * NR;
            let ncols = (np * NR).min(n - j0);
            for (bi, &(k0, kc)) in kblocks.iter().enumerate() {
                let last = bi + 1 == kblocks.len();
                if kc > 0 && !prepack_b {
                    p.pack_b(k0, kc, j0, ncols, &mut bpack[..np * panel_stride(kc)]);
                }
                let bsrc: &[f32] = if prepack_b {
                    &b_all[b_off[bi] + jp * panel_stride(kc)..]
                } else {
                    bpack
                };
                for group in tiles_v.chunks(MC_TILES) {
                    // The group's A rows, then (unless the kernel reads them in
                    // place) packed: tile g at `apack[g * kc * MR..]`, while fetching
                    // the next tile's rows.
                    let mut segs = [(0usize, 0usize, 0usize, 1usize); MC_TILES];
                    let mut in_place = false;
                    if kc > 0 && !prepack {
                        ptrs.clear();
                        for (g, &it) in group.iter().enumerate() {
                            let i0 = it * MR;
                            let before = ptrs.len();
                            let (nseg, seg_len, ks) =
                                p.a_rows(i0, MR.min(m - i0), k0, kc, &mut ptrs);
                            debug_assert_eq!(nseg * seg_len, kc);
                            segs[g] = (before, nseg, seg_len, ks);
                        }
                        in_place =
                            pair_rows.is_some() && segs[..group.len()].iter().all(|s| s.3 == 1);
                    }
                    if kc > 0 && !prepack && !in_place {
                        for (g, &it) in group.iter().enumerate() {
                            if let Some(&(at, nseg, seg_len, 1)) = segs[..group.len()].get(g + 1) {
                                for &r in &ptrs[at..at + nseg * MR] {
                                    prefetch_run(r, seg_len);
                                }
                            }
                            let (at, nseg, seg_len, ks) = segs[g];
                            let a = ARows {
                                ptrs: &ptrs[at..],
                                nseg,
                                seg_len,
                                ks,
                            };
                            let mr = MR.min(m - it * MR);
                            packer(mr, &a, &mut apack[g * kc * MR..(g + 1) * kc * MR + 8]);
                        }
                    }
                    // Tile `g`'s rows read in place (where `in_place`).
                    let tile_rows = |g: usize| {
                        let (at, nseg, seg_len, _) = segs[g];
                        ARows {
                            ptrs: &ptrs[at..at + nseg * MR],
                            nseg,
                            seg_len,
                            ks: 1,
                        }
                    };
                    // The last K block of a chain over A in place: each row tile's
                    // panels in one call.
                    if let (true, true, Some(sweep), Some(out)) =
                        (last && kc > 0, in_place, sweep_rows, fused)
                    {
                        // A short K (one block of at most [`QUAD_IN_L1`] steps) and more
                        // than four panels: four panels at a time down the group's row
                        // tiles, so that their B stays in L1 (the sweep of every panel
                        // per row tile streams all of B through L1 once per tile).
                        let run = if kblocks.len() == 1 && kc <= QUAD_IN_L1 && np > 4 {
                            4
                        } else {
                            np
                        };
                        for qs in (0..np).step_by(run) {
                            for (g, &it) in group.iter().enumerate() {
                                let a = tile_rows(g);
                                let tiles: &mut [f32] = if kblocks.len() > 1 {
                                    let at = (it - tile_range.start) * np * TILE;
                                    &mut acc_all[at..at + np * TILE]
                                } else {
                                    &mut pair_scratch
                                };
                                // The cursor follows whole sweeps only (B that fits L1
                                // needs none).
                                let ahead = match ahead.as_mut() {
                                    Some(a) if run == np => Some((a, region)),
                                    _ => None,
                                };
                                sweep(
                                    &a,
                                    Sweep {
                                        b: &bsrc[qs * panel_stride(kc)..],
                                        ps: panel_stride(kc),
                                        np: run.min(np - qs),
                                        tiles,
                                        acc: bi > 0,
                                        mr: MR.min(m - it * MR),
                                        out,
                                        i0: it * MR,
                                        j0: j0 + qs * NR,
                                        n,
                                        ahead,
                                        b_in_l1: run < np,
                                    },
                                );
                            }
                        }
                        continue;
                    }
                    // Tiles down each panel (the panel stays in L1, the group's A
                    // tiles come from L2), except in the last K block, where the tiles
                    // are written: there a row tile's panels go one after another, so
                    // that the output rows (and what an epilogue reads) are visited
                    // in memory order. With the pair kernel, panels go two at a time.
                    let qstep = if pair.is_some() { 2 } else { 1 };
                    let nq = np.div_ceil(qstep);
                    let (mut g_next, mut qi_next) = (0, 0);
                    for _ in 0..nq * group.len() {
                        let (g, qi) = (g_next, qi_next);
                        if last {
                            qi_next += 1;
                            if qi_next == nq {
                                (qi_next, g_next) = (0, g_next + 1);
                            }
                        } else {
                            g_next += 1;
                            if g_next == group.len() {
                                (g_next, qi_next) = (0, qi_next + 1);
                            }
                        }
                        let (it, q) = (group[g], qi * qstep);
                        let i0 = it * MR;
                        let mr = MR.min(m - i0);
                        let a = if prepack {
                            let at = (it * nkb + bi) * a_stride(kc_max);
                            &a_all[at..at + kc * MR]
                        } else {
                            &apack[g * kc * MR..(g + 1) * kc * MR]
                        };
                        let panel =
                            |q: usize| &bsrc[q * panel_stride(kc)..q * panel_stride(kc) + kc * NR];
                        let cols = |q: usize| NR.min(n - (j0 + q * NR));
                        let two = pair.is_some() && q + 1 < np;
                        let (tile, next): (&mut [f32; TILE], &mut [f32; TILE]) =
                            if kblocks.len() > 1 {
                                let at = ((it - tile_range.start) * np + q) * TILE;
                                let len = if two { 2 * TILE } else { TILE };
                                let (x, y) = acc_all[at..at + len].split_at_mut(TILE);
                                let y = if two { y } else { &mut local2[..] };
                                (
                                    x.try_into().expect("tile-sized"),
                                    y.try_into().expect("tile-sized"),
                                )
                            } else {
                                (&mut local, &mut local2)
                            };
                        let far = match ahead.as_mut() {
                            Some(ahead) => {
                                let read = if two { 2 } else { 1 } * panel_stride(kc);
                                ahead.take(region, q * panel_stride(kc), read)
                            }
                            None => Far::NONE,
                        };
                        let fuse = fused.filter(|_| last && kc > 0).map(|out| FuseAt {
                            out,
                            i0,
                            j0: j0 + q * NR,
                            cols: (cols(q), if two { cols(q + 1) } else { 0 }),
                        });
                        if kc > 0 && in_place {
                            let a = tile_rows(g);
                            // An odd last panel goes through the pair kernel with
                            // itself as the second panel (that result is dropped).
                            let pr = pair_rows.expect("in place only with the kernel");
                            let (second, out) = if two {
                                (panel(q + 1), &mut *next)
                            } else {
                                (panel(q), &mut spare)
                            };
                            pr(
                                &a,
                                panel(q),
                                second,
                                tile,
                                out,
                                (bi > 0, mr, far),
                                fuse.as_ref(),
                            );
                        } else if kc > 0 {
                            let flags = (bi > 0, mr, far);
                            match pair {
                                Some(pair) if two => {
                                    let (b0, b1) = (panel(q), panel(q + 1));
                                    pair(kc, a, b0, b1, tile, next, flags, fuse.as_ref());
                                }
                                // A fused odd last panel: the pair kernel with the panel
                                // as its own second (that half is not stored).
                                Some(pair) if fuse.is_some() => {
                                    let b = panel(q);
                                    pair(kc, a, b, b, tile, &mut spare, flags, fuse.as_ref());
                                }
                                _ => kernel(kc, a, panel(q), tile, (bi > 0, mr, cols(q))),
                            }
                        } else if bi == 0 {
                            tile.fill(0.0);
                            next.fill(0.0);
                        }
                        if last && fuse.is_none() {
                            p.write_tile(i0, mr, j0 + q * NR, cols(q), tile);
                            if two {
                                p.write_tile(i0, mr, j0 + (q + 1) * NR, cols(q + 1), next);
                            }
                        }
                    }
                }
                region += 1;
            }
            jp += np;
        }
    });
}

/// The AVX-512 lane mask of the first `n` of 16 lanes (all of them from 16 on).
#[inline(always)]
pub(crate) fn lane_mask(n: usize) -> u16 {
    if n >= 16 { !0 } else { (1u16 << n) - 1 }
}

/// Whether this CPU (under `HIPDNN_CPU_ISA`) has the pair kernels that
/// [`rows_times_panels`] needs.
pub fn pair_rows_available() -> bool {
    select_pair_rows_kernel().is_some()
}

/// `C[m×n] = A[m×kc] · B[kc×n]` on the calling thread, for products small enough for
/// one K block: row `i` of A read in place at `a(i)` (`kc` consecutive floats), B
/// packed as `n.div_ceil(NR)` panels `panel_stride(kc)` apart (element `(k, j)` of
/// panel `p` at `b[p * panel_stride(kc) + k * NR + j % NR]`), `C[i, j]` stored to
/// `c[i * ldc + j]`. The building block of batched products whose parts each fit in
/// cache (Winograd's sixteen per tile chunk). While it runs, the kernels fetch
/// `ahead` (what the caller reads next, such as the next product's B) into L2. Rows go
/// in tiles of [`MR`] and a last shorter one, or with `even` in tiles of near-equal
/// height (25 rows: five of 5 rather than four of 6 and one of 1, which streams all of
/// B through the kernels for one row). Each element is one multiply-add chain over K in
/// order, whatever the row tile's height; with AVX-512 four panels go through the 6×64
/// kernel at a time, the rest in pairs.
///
/// # Panics
/// Without the pair kernels ([`pair_rows_available`]), or when `b` is shorter
/// than its panels.
///
/// # Safety
/// Every `a(i)`, `i < m`, addresses `kc` readable floats; `c[i * ldc + j]` is writable
/// for `i < m`, `j < n`, with `ldc >= n`, and no one else accesses those elements
/// during the call.
pub unsafe fn rows_times_panels(
    (m, n, kc): (usize, usize, usize),
    a: impl Fn(usize) -> *const f32,
    b: &[f32],
    c: *mut f32,
    ldc: usize,
    ahead: &[f32],
    even: bool,
) {
    // The kernel that sums each row's K steps in order whatever the tile's height:
    // the caller's tiles (Winograd's chunks) depend on the thread count, and its
    // results must not.
    let pr = match pair_isa() {
        #[cfg(target_arch = "x86_64")]
        Some(PairIsa::Avx512) => avx512::kernel_pair_rows::<false> as PairRowsFn,
        _ => select_pair_rows_kernel().expect("the pair kernels"),
    };
    let panels = n.div_ceil(NR);
    let ps = panel_stride(kc);
    assert!(
        panels == 0 || b.len() >= (panels - 1) * ps + kc * NR,
        "B panels"
    );
    assert!(m <= 1 || ldc >= n, "rows of C overlap");
    // SAFETY: `c`'s rows and columns are writable and ours (this function's contract).
    let out = unsafe { FusedOut::new(Vec::new(), c, ldc) };
    let (mut tile, mut next) = ([0f32; TILE], [0f32; TILE]);
    let mut ptrs = [std::ptr::null::<f32>(); MR];
    // `ahead`'s lines spread over the kernel calls (at most a line per four K steps).
    let calls = m.div_ceil(MR) * panels.div_ceil(2);
    let per_call = ahead.len().div_ceil(16).div_ceil(calls.max(1)).min(kc / 4);
    let mut far_at = ahead.as_ptr();
    let mut far_left = ahead.len().div_ceil(16);
    let row_tiles = m.div_ceil(MR);
    for t in 0..row_tiles {
        let (i0, mr) = if even {
            let r = split(m, row_tiles, t);
            (r.start, r.len())
        } else {
            (t * MR, MR.min(m - t * MR))
        };
        let rows = rows_in_place(&a, i0, mr, kc, &mut ptrs);
        let cols = |q: usize| NR.min(n - q * NR);
        let mut q = 0;
        // With the AVX-512 kernels, four panels at a time (each broadcast of A feeds
        // four FMAs); the same sums in the same order as in pairs.
        #[cfg(target_arch = "x86_64")]
        if pair_isa() == Some(PairIsa::Avx512) {
            while q + 4 <= panels {
                let mut far = [Far::NONE; 2];
                for f in &mut far {
                    f.p = far_at;
                    f.lines = per_call.min(far_left);
                    far_left -= f.lines;
                    far_at = far_at.wrapping_add(16 * f.lines);
                }
                let fuse = [0, 2].map(|h| FuseAt {
                    out: &out,
                    i0,
                    j0: (q + h) * NR,
                    cols: (cols(q + h), cols(q + h + 1)),
                });
                avx512::kernel_quad_rows(&rows, &b[q * ps..], ps, mr, far, &fuse);
                q += 4;
            }
        }
        for q in (q..panels).step_by(2) {
            let two = q + 1 < panels;
            let b0 = &b[q * ps..q * ps + kc * NR];
            let b1 = if two {
                &b[(q + 1) * ps..(q + 1) * ps + kc * NR]
            } else {
                b0
            };
            let fuse = FuseAt {
                out: &out,
                i0,
                j0: q * NR,
                cols: (cols(q), if two { cols(q + 1) } else { 0 }),
            };
            let far = Far {
                p: far_at,
                lines: per_call.min(far_left),
            };
            far_left -= far.lines;
            far_at = far_at.wrapping_add(16 * far.lines);
            pr(
                &rows,
                b0,
                b1,
                &mut tile,
                &mut next,
                (false, mr, far),
                Some(&fuse),
            );
        }
    }
}

/// The row tile of `mr` rows from row `i0` of an A read in place (`a(i)`: row `i`'s
/// `kc` consecutive floats), one segment; the pointers past `mr` repeat the last row.
fn rows_in_place<'p>(
    a: &impl Fn(usize) -> *const f32,
    i0: usize,
    mr: usize,
    kc: usize,
    ptrs: &'p mut [*const f32; MR],
) -> ARows<'p> {
    for (i, p) in ptrs.iter_mut().enumerate() {
        *p = a(i0 + i.min(mr - 1));
    }
    ARows {
        ptrs,
        nseg: 1,
        seg_len: kc,
        ks: 1,
    }
}

/// `tiles[2r + h] = A_r · B_h` (`+=` with `acc`) on the calling thread, for the row
/// tiles `A_r` (rows `MR · r ..`) of `A[m×kc]` against two B panels: row `i` of A
/// read in place at `a(i)` (`kc` consecutive floats), panel `h` packed as `kc` rows of
/// [`NR`] at `b.h`, each result a register tile (row `i % MR` at `i % MR · NR`).
/// Products whose K runs in blocks keep their partial sums this way, in the kernels'
/// own layout, with no pass through an output matrix: Winograd's streamed filters
/// (one block of input channels at a time). With `acc` each element is its partial
/// sum plus this block's chain over K in order, whatever the row tile's height. While
/// it runs, `ahead` is fetched into L2: by the kernels, up to `kc / 4` lines a call,
/// and what they cannot take between the kernel calls.
///
/// # Panics
/// Without the pair kernels ([`pair_rows_available`]), when a panel is shorter than
/// `kc · NR`, or with fewer than two tiles per row tile.
///
/// # Safety
/// Every `a(i)`, `i < m`, addresses `kc` readable floats.
pub unsafe fn rows_times_pair(
    (m, kc): (usize, usize),
    a: impl Fn(usize) -> *const f32,
    b: (&[f32], &[f32]),
    tiles: &mut [[f32; TILE]],
    acc: bool,
    ahead: &[f32],
) {
    let pr = match pair_isa() {
        #[cfg(target_arch = "x86_64")]
        Some(PairIsa::Avx512) => avx512::kernel_pair_rows::<false> as PairRowsFn,
        _ => select_pair_rows_kernel().expect("the pair kernels"),
    };
    assert!(b.0.len() >= kc * NR && b.1.len() >= kc * NR, "B panels");
    assert!(tiles.len() >= 2 * m.div_ceil(MR), "result tiles");
    let mut ptrs = [std::ptr::null::<f32>(); MR];
    let calls = m.div_ceil(MR);
    let per_call = ahead.len().div_ceil(16).div_ceil(calls.max(1));
    let mut far = Far {
        p: ahead.as_ptr(),
        lines: 0,
    };
    let mut far_left = ahead.len().div_ceil(16);
    for (r, pair) in tiles.chunks_exact_mut(2).take(calls).enumerate() {
        let i0 = r * MR;
        let mr = MR.min(m - i0);
        let rows = rows_in_place(&a, i0, mr, kc, &mut ptrs);
        let lines = per_call.min(far_left);
        far_left -= lines;
        far.lines = lines.min(kc / 4);
        let [t0, t1] = pair else {
            unreachable!("chunks of two")
        };
        pr(&rows, b.0, b.1, t0, t1, (acc, mr, far), None);
        far.p = far.p.wrapping_add(16 * far.lines);
        for _ in far.lines..lines {
            prefetch_l2(far.p);
            far.p = far.p.wrapping_add(16);
        }
    }
}

/// Fetches the cache line at `p` into L2 (nothing where the CPU has no such hint).
#[inline(always)]
fn prefetch_l2(p: *const f32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Packs one B panel from up to [`NR`] rows that are contiguous along K: element `k`
/// of `rows[j]` goes to `dst[k * NR + j]`; columns past `rows.len()` are zero.
///
/// # Safety
/// Each pointer in `rows` addresses `kc` readable `f32`s; `dst` holds `kc * NR`.
pub unsafe fn pack_b_rows(rows: &[*const f32], kc: usize, dst: &mut [f32]) {
    assert!(rows.len() <= NR && dst.len() >= kc * NR);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && rows.len() == NR {
        // SAFETY: AVX2 present; pointers per this function's contract.
        unsafe { avx2::pack_b_rows16(rows, kc, dst.as_mut_ptr()) };
        return;
    }
    for k in 0..kc {
        let out = &mut dst[k * NR..(k + 1) * NR];
        for (j, o) in out.iter_mut().enumerate() {
            // SAFETY: `k < kc` elements of a valid row (contract).
            *o = rows.get(j).map_or(0.0, |r| unsafe { *r.add(k) });
        }
    }
}

/// `tile = A·B` (`tile += A·B` when the flag is set) over `kc` steps: A packed
/// `[kc][MR]`, B packed `[kc][NR]`. Only rows `< mr` and columns `< nr` of the tile
/// need to come out right (the kernel may skip the others).
type KernelFn = fn(usize, &[f32], &[f32], &mut [f32; TILE], (bool, usize, usize));

/// Packs one row tile's A (per [`ARows`]) as `[kc][MR]` into `dst`, which has 8
/// floats of slack past `kc * MR` (the packer may write garbage there).
type PackFn = fn(usize, &ARows<'_>, &mut [f32]);

/// Two adjacent panels at once: `tile = A·B0`, `next = A·B1` (`+=` when the flag is
/// set), for rows `< mr`. When `B1` is `B0` itself (the same slice: an odd last
/// panel), `next` is not wanted and the kernel may leave it as it is.
/// With a [`FuseAt`], the pair runs its chain and stores to the output instead of the
/// tiles.
type PairFn = fn(
    usize,
    &[f32],
    &[f32],
    &[f32],
    &mut [f32; TILE],
    &mut [f32; TILE],
    (bool, usize, Far),
    Option<&FuseAt<'_>>,
);

/// [`PairFn`] reading A in place: rows through the pointers of an [`ARows`] with unit
/// stride, instead of a packed `[kc][MR]` strip.
type PairRowsFn = fn(
    &ARows<'_>,
    &[f32],
    &[f32],
    &mut [f32; TILE],
    &mut [f32; TILE],
    (bool, usize, Far),
    Option<&FuseAt<'_>>,
);

/// One row tile, A read in place, against a run of panels, two at a time, each pair's
/// result run through a fused chain and stored: what [`PairRowsFn`] does for one pair,
/// for a whole run in one call (the last K block of a chained GEMM, where a row tile's
/// panels go one after another anyway).
struct Sweep<'a> {
    /// Panel `q < np` at `b[q * ps..]`.
    b: &'a [f32],
    ps: usize,
    np: usize,
    /// With `acc`, the tile's partial sums of the earlier K blocks, panel `q`'s at
    /// `q * TILE`; without, two tiles of scratch.
    tiles: &'a mut [f32],
    acc: bool,
    /// Rows of the tile.
    mr: usize,
    /// The chain, the tile's first row and the run's first column; `n`: the GEMM's
    /// columns.
    out: &'a FusedOut,
    i0: usize,
    j0: usize,
    n: usize,
    /// The B prefetch cursor and the region the panels lie in, at offset `q * ps`.
    ahead: Option<(&'a mut Ahead, usize)>,
    /// The panels stay in L1 from one row tile to the next (a short K's run of four
    /// panels down a group, [`QUAD_IN_L1`]): the kernels fetch none of their lines.
    b_in_l1: bool,
}

impl Sweep<'_> {
    /// Pair `q`'s lines to prefetch, where its chain applies, and its two tiles (the
    /// second `spare` for an odd last panel).
    #[inline(always)]
    fn pair<'s>(
        &'s mut self,
        q: usize,
        spare: &'s mut [f32; TILE],
    ) -> (Far, FuseAt<'s>, &'s mut [f32; TILE], &'s mut [f32; TILE]) {
        let two = q + 1 < self.np;
        let cols = |q: usize| NR.min(self.n - (self.j0 + q * NR));
        let fuse = FuseAt {
            out: self.out,
            i0: self.i0,
            j0: self.j0 + q * NR,
            cols: (cols(q), if two { cols(q + 1) } else { 0 }),
        };
        let far = match self.ahead.as_mut() {
            Some((ahead, region)) => ahead.take(*region, q * self.ps, (1 + two as usize) * self.ps),
            None => Far::NONE,
        };
        let at = if self.acc { q * TILE } else { 0 };
        let (t0, rest) = self.tiles[at..].split_at_mut(TILE);
        let t1: &mut [f32; TILE] = if two {
            (&mut rest[..TILE]).try_into().expect("tile-sized")
        } else {
            spare
        };
        (far, fuse, t0.try_into().expect("tile-sized"), t1)
    }

    /// Quad `q` (panels `q..q + 4`, all `< np`): the lines to prefetch for each of
    /// its two pairs, where its two pairs' chains apply, and its first tile's partial
    /// sums (the four tiles lie side by side; only read with `acc`).
    #[inline(always)]
    fn quad(&mut self, q: usize) -> ([Far; 2], [FuseAt<'_>; 2], *const f32) {
        debug_assert!(q + 4 <= self.np);
        let cols = |q: usize| NR.min(self.n - (self.j0 + q * NR));
        let fuse = |q: usize| FuseAt {
            out: self.out,
            i0: self.i0,
            j0: self.j0 + q * NR,
            cols: (cols(q), cols(q + 1)),
        };
        let fuse = [fuse(q), fuse(q + 2)];
        let far = match self.ahead.as_mut() {
            Some((ahead, region)) => [
                ahead.take(*region, q * self.ps, 2 * self.ps),
                ahead.take(*region, (q + 2) * self.ps, 2 * self.ps),
            ],
            None => [Far::NONE; 2],
        };
        let tiles = if self.acc {
            self.tiles[q * TILE..(q + 4) * TILE].as_ptr()
        } else {
            std::ptr::null()
        };
        (far, fuse, tiles)
    }

    /// Checks `a`, the panels and the tiles against each other.
    fn check(&self, a: &ARows<'_>) {
        let kc = a.nseg * a.seg_len;
        assert!(a.ks == 1 && a.ptrs.len() >= a.nseg * MR);
        assert!(self.np > 0 && self.b.len() >= (self.np - 1) * self.ps + kc * NR);
        assert!(self.ps >= kc * NR);
        let tiles = if self.acc { self.np } else { 2 };
        assert!(self.tiles.len() >= tiles * TILE);
        assert!(self.j0 + (self.np - 1) * NR < self.n);
    }
}

/// [`Sweep`]'s kernel.
type SweepRowsFn = fn(&ARows<'_>, Sweep<'_>);

/// The widest instruction set the micro-kernels may use: AVX-512 unless `HIPDNN_CPU_ISA`
/// says `avx2` (or `portable`), read once per process. Any other value (but `avx512`) is
/// ignored with a warning naming the accepted ones.
pub(crate) fn isa_cap() -> &'static str {
    static CAP: OnceLock<&'static str> = OnceLock::new();
    CAP.get_or_init(|| {
        let value = std::env::var("HIPDNN_CPU_ISA").unwrap_or_default();
        match value.trim().to_ascii_lowercase().as_str() {
            "avx2" => "avx2",
            "portable" => "portable",
            "" | "avx512" => "avx512",
            _ => {
                tracing::warn!(
                    "HIPDNN_CPU_ISA={value:?} is not one of avx512, avx2, portable: ignored"
                );
                "avx512"
            }
        }
    })
}

/// Which pair kernels this CPU runs: AVX-512 where it has AVX-512F and
/// `HIPDNN_CPU_ISA` allows it, else AVX2 + FMA unless capped to `portable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PairIsa {
    Avx512,
    Avx2,
}

pub(crate) fn pair_isa() -> Option<PairIsa> {
    static ISA: OnceLock<Option<PairIsa>> = OnceLock::new();
    *ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let cap = isa_cap();
            if std::arch::is_x86_feature_detected!("avx512f") && cap == "avx512" {
                return Some(PairIsa::Avx512);
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && cap != "portable"
            {
                return Some(PairIsa::Avx2);
            }
        }
        None
    })
}

/// The kernel for panel pairs (AVX-512: one 6×32 tile; AVX2: two 6×16 tiles), where
/// the CPU has one (see [`pair_isa`]).
fn select_pair_kernel() -> Option<PairFn> {
    match pair_isa()? {
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx512 => Some(avx512::kernel_pair as PairFn),
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx2 => Some(avx2::kernel_pair as PairFn),
        #[cfg(not(target_arch = "x86_64"))]
        _ => None,
    }
}

/// [`select_pair_kernel`] reading A in place.
fn select_pair_rows_kernel() -> Option<PairRowsFn> {
    match pair_isa()? {
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx512 => Some(avx512::kernel_pair_rows::<true> as PairRowsFn),
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx2 => Some(avx2::kernel_pair_rows as PairRowsFn),
        #[cfg(not(target_arch = "x86_64"))]
        _ => None,
    }
}

fn select_sweep_rows_kernel() -> Option<SweepRowsFn> {
    match pair_isa()? {
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx512 => Some(avx512::kernel_sweep_rows as SweepRowsFn),
        #[cfg(target_arch = "x86_64")]
        PairIsa::Avx2 => Some(avx2::kernel_sweep_rows as SweepRowsFn),
        #[cfg(not(target_arch = "x86_64"))]
        _ => None,
    }
}

fn select_kernel() -> KernelFn {
    static KERNEL: OnceLock<KernelFn> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && isa_cap() != "portable"
        {
            return avx2::kernel;
        }
        portable_kernel
    })
}

fn select_packer() -> PackFn {
    static PACKER: OnceLock<PackFn> = OnceLock::new();
    *PACKER.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return avx2::pack_a;
        }
        portable_pack_a
    })
}

/// Checks the contract of [`ARows`] as far as it can be checked cheaply.
#[inline]
fn check_rows(mr: usize, a: &ARows<'_>, dst: &[f32]) {
    assert!((1..=MR).contains(&mr));
    assert!(a.nseg == 0 || a.ptrs.len() >= (a.nseg - 1) * MR + mr);
    assert!(dst.len() >= a.nseg * a.seg_len * MR + 8);
}

/// The A packer in plain Rust: rows past `mr` repeat row `mr - 1`.
fn portable_pack_a(mr: usize, a: &ARows<'_>, dst: &mut [f32]) {
    check_rows(mr, a, dst);
    let mut kk = 0;
    for s in 0..a.nseg {
        for k in 0..a.seg_len {
            for i in 0..MR {
                // SAFETY: `a_rows` guarantees each pointer addresses `seg_len` elements at
                // stride `ks` (GemmProblem contract).
                dst[(kk + k) * MR + i] = unsafe { *a.ptrs[s * MR + i.min(mr - 1)].add(k * a.ks) };
            }
        }
        kk += a.seg_len;
    }
}

/// The micro-kernel in plain Rust (vectorized by the compiler as far as it goes).
fn portable_kernel(
    kc: usize,
    a: &[f32],
    b: &[f32],
    tile: &mut [f32; TILE],
    (acc, _, _): (bool, usize, usize),
) {
    if !acc {
        tile.fill(0.0);
    }
    for k in 0..kc {
        let brow = &b[k * NR..(k + 1) * NR];
        for i in 0..MR {
            let av = a[k * MR + i];
            let row = &mut tile[i * NR..(i + 1) * NR];
            for j in 0..NR {
                row[j] += av * brow[j];
            }
        }
    }
}

/// A [`FusedOut`] chain's steps on a pair kernel's accumulators, rows `i < $m` of two
/// vectors each (`$x0`, `$x1`: the halves the kernel stores side by side), columns from
/// `$j0`: `$cols2(p, off)` loads an operand's two halves at `p + off`, the rest are the
/// instruction set's add, multiply, maximum, zero and broadcast. A macro, so the
/// intrinsics stay inside the calling kernel's target features; both kernels' chains
/// run the same operations in the same order.
#[cfg(target_arch = "x86_64")]
macro_rules! fused_steps {
    ($m:expr, $x0:ident, $x1:ident, $f:ident, $j0:expr, $cols2:ident, $add:ident, $mul:ident, $max:ident, $zero:expr, $set1:ident) => {
        for st in $f.out.steps() {
            match *st {
                FusedStep::ScaleShift(a, b) => {
                    let (a0, a1) = $cols2(a, $j0);
                    let (b0, b1) = $cols2(b, $j0);
                    for i in 0..$m {
                        $x0[i] = $add($mul($x0[i], a0), b0);
                        $x1[i] = $add($mul($x1[i], a1), b1);
                    }
                }
                FusedStep::AddCols(t) => {
                    let (t0, t1) = $cols2(t, $j0);
                    for i in 0..$m {
                        $x0[i] = $add($x0[i], t0);
                        $x1[i] = $add($x1[i], t1);
                    }
                }
                FusedStep::MulCols(t) => {
                    let (t0, t1) = $cols2(t, $j0);
                    for i in 0..$m {
                        $x0[i] = $mul($x0[i], t0);
                        $x1[i] = $mul($x1[i], t1);
                    }
                }
                FusedStep::AddRows(t, rs) => {
                    for i in 0..$m {
                        let (t0, t1) = $cols2(t, ($f.i0 + i) * rs + $j0);
                        $x0[i] = $add($x0[i], t0);
                        $x1[i] = $add($x1[i], t1);
                    }
                }
                FusedStep::MulRows(t, rs) => {
                    for i in 0..$m {
                        let (t0, t1) = $cols2(t, ($f.i0 + i) * rs + $j0);
                        $x0[i] = $mul($x0[i], t0);
                        $x1[i] = $mul($x1[i], t1);
                    }
                }
                FusedStep::AddScalar(v) => {
                    let v = $set1(v);
                    for i in 0..$m {
                        $x0[i] = $add($x0[i], v);
                        $x1[i] = $add($x1[i], v);
                    }
                }
                FusedStep::MulScalar(v) => {
                    let v = $set1(v);
                    for i in 0..$m {
                        $x0[i] = $mul($x0[i], v);
                        $x1[i] = $mul($x1[i], v);
                    }
                }
                FusedStep::Relu => {
                    let z = $zero;
                    for i in 0..$m {
                        $x0[i] = $max($x0[i], z);
                        $x1[i] = $max($x1[i], z);
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{ARows, FAR_PER_STEP, Far, FuseAt, FusedStep, MR, NR, Sweep, TILE};

    /// Row tiles of at most this many rows (a GEMM's last, e.g. the 49th pixel of a
    /// 7² image) sum every other K step into a second set of accumulators in the
    /// kernels that read A in place, added at the end: with one or two rows a pair has
    /// only two or four chains of dependent multiply-adds, too few to cover their
    /// latency, and a one-row tile took as long as two thirds of a full one.
    const SHORT_ROWS: usize = 2;

    /// K steps ahead at which the kernels fetch the B panels of short row tiles
    /// ([`SHORT_ROWS`]) into L2, all four lines of the next four steps: such a tile
    /// reads a B line per one or two multiply-adds, so a GEMM of them (a
    /// matrix-vector product: ResNet-50's final 2048 × 1000 layer at batch 1) streams
    /// B from memory at the kernels' rate, which the hardware's prefetch alone does not
    /// sustain. At 128 steps (8 KiB a panel) that layer took 248 against 292 µs in
    /// the whole network on two threads of a Zen 4 (64 steps: 246, 256: 266).
    const STREAM_AHEAD: usize = 128;

    /// [`STREAM_AHEAD`]'s fetch for the panel read from `p`, in row tiles of at most
    /// [`SHORT_ROWS`] rows (`M`).
    #[inline(always)]
    fn stream_ahead<const M: usize>(p: *const f32) {
        if M <= SHORT_ROWS {
            for d in 0..4 {
                // SAFETY: a prefetch reads nothing and cannot fault.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add((STREAM_AHEAD + d) * NR).cast());
                }
            }
        }
    }

    /// The pair kernels' end: rows `i < M` of both accumulators (plus what the tiles
    /// hold, when accumulating) stored to the tiles or, with a [`FuseAt`], run through
    /// its chain and stored to the output (masked to each panel's columns). A macro,
    /// so the intrinsics stay inside the calling kernel's target features.
    macro_rules! finish_pair {
        ($m:expr, $c0:ident, $c1:ident, $t0:ident, $t1:ident, $acc:ident, $fuse:ident) => {
            if $acc {
                for i in 0..$m {
                    $c0[i] = _mm512_add_ps($c0[i], _mm512_loadu_ps($t0.add(i * NR)));
                    $c1[i] = _mm512_add_ps($c1[i], _mm512_loadu_ps($t1.add(i * NR)));
                }
            }
            match $fuse {
                None => {
                    for i in 0..$m {
                        _mm512_storeu_ps($t0.add(i * NR), $c0[i]);
                        _mm512_storeu_ps($t1.add(i * NR), $c1[i]);
                    }
                }
                Some(f) => store_fused!($m, $c0, $c1, f),
            }
        };
    }

    /// Rows `i < M` of two accumulator halves run through a [`FuseAt`]'s chain and
    /// stored to its output, masked to each panel's columns.
    macro_rules! store_fused {
        ($m:expr, $c0:ident, $c1:ident, $f:expr) => {{
            let f: &FuseAt<'_> = $f;
            let (m0, m1) = (super::lane_mask(f.cols.0), super::lane_mask(f.cols.1));
            // Masked lanes are not read, so a missing second panel's pointers (past
            // the operand) are never dereferenced.
            let cols2 = |p: *const f32, off: usize| {
                let p = p.wrapping_add(off);
                (
                    _mm512_maskz_loadu_ps(m0, p),
                    _mm512_maskz_loadu_ps(m1, p.wrapping_add(NR)),
                )
            };
            fused_steps!(
                $m,
                $c0,
                $c1,
                f,
                f.j0,
                cols2,
                _mm512_add_ps,
                _mm512_mul_ps,
                _mm512_max_ps,
                _mm512_setzero_ps(),
                _mm512_set1_ps
            );
            for i in 0..$m {
                let y = f.out.y.add((f.i0 + i) * f.out.ys + f.j0);
                _mm512_mask_storeu_ps(y, m0, $c0[i]);
                _mm512_mask_storeu_ps(y.wrapping_add(NR), m1, $c1[i]);
            }
        }};
    }

    /// K iterations (of four steps) before the end of a sweep's 6×64 call in which it
    /// begins fetching its epilogue's lines, one output row per iteration. Fetched
    /// all at once as the call starts ([`prefetch_fused`]), a row tile's 24 output
    /// lines (and 24 residual ones) take every line fill buffer at once and stall
    /// the B panels' loads behind them; one row per iteration leaves room for both.
    /// Two threads of a Xeon (AVX-512, 48 KiB L1d), ResNet-50: the 56² 64 → 256 layers
    /// 5–9% faster, the 28² 128 → 512 ones 2–5% (stage minimums over 10–12
    /// alternating rounds at batch 1 and 8, a control arm within 1%); 64 iterations
    /// ahead did no better.
    const EPILOGUE_LEAD: usize = 16;

    /// What a sweep's epilogue reads and writes, row by row: each row's output line
    /// (and its residual's, when the chain adds or multiplies rows of another
    /// tensor: the first such step's; a second is left to the hardware) at column 0,
    /// for [`EpilogueLines::fetch`] to fetch a 6×64 call's four lines per row as its K
    /// loop nears its end.
    pub(super) struct EpilogueLines {
        y: [*const f32; MR],
        r: Option<[*const f32; MR]>,
        /// The K iteration in which row 0's lines are fetched.
        start: usize,
    }

    impl EpilogueLines {
        /// The lines of rows `i0..i0 + mr` of `out`, for calls of `iters` K
        /// iterations (rows past `mr` repeat the last).
        #[inline(always)]
        pub(super) fn new(out: &super::FusedOut, i0: usize, mr: usize, iters: usize) -> Self {
            let (y0, ys) = out.target();
            let row = |i: usize| i0 + i.min(mr.max(1) - 1);
            let r = out.steps().iter().find_map(|st| match *st {
                FusedStep::AddRows(t, rs) | FusedStep::MulRows(t, rs)
                    if !(std::ptr::eq(t, y0) && rs == ys) =>
                {
                    Some(std::array::from_fn(|i| t.wrapping_add(row(i) * rs)))
                }
                _ => None,
            });
            Self {
                y: std::array::from_fn(|i| y0.wrapping_add(row(i) * ys).cast_const()),
                r,
                start: iters.saturating_sub(EPILOGUE_LEAD),
            }
        }

        /// In K iteration `it` of a call over columns `j0..j0 + 64` of `m` rows: the
        /// next row's lines, or (outside the rows' iterations) four fetches of `idle`,
        /// a line the call reads anyway, so that the loop takes no branch.
        #[inline(always)]
        fn fetch(&self, it: usize, m: usize, j0: usize, idle: *const f32) {
            let d = it.wrapping_sub(self.start);
            let on = d < m;
            let i = std::hint::select_unpredictable(on, d, 0);
            let y = std::hint::select_unpredictable(on, self.y[i].wrapping_add(j0), idle);
            // SAFETY: a prefetch reads nothing and cannot fault.
            unsafe {
                for l in 0..4 {
                    _mm_prefetch::<_MM_HINT_ET0>(y.wrapping_add(l * NR).cast());
                }
            }
            if let Some(r) = &self.r {
                let r = std::hint::select_unpredictable(on, r[i].wrapping_add(j0), idle);
                // SAFETY: as above.
                unsafe {
                    for l in 0..4 {
                        _mm_prefetch::<_MM_HINT_T0>(r.wrapping_add(l * NR).cast());
                    }
                }
            }
        }
    }

    /// Fetches what this kernel call's fused tile reads and writes in its epilogue:
    /// its residual rows (unless they are the output's own lines, added in place) and
    /// its output lines (for writing), issued as the call starts so that they arrive
    /// while its K loop runs (a sweep's 6×64 calls fetch them a row per K iteration:
    /// [`EpilogueLines`]). Fetching them one row tile ahead instead left them to be
    /// evicted by the B panels that stream through L1 before the epilogue came (a
    /// 64 → 256 sweep reads 64 KiB of panels per row tile); on two cores of a Xeon
    /// (AVX-512, 48 KiB L1d), the bottleneck block's last layer, whose residual is
    /// another buffer, took 429–437 against 447–454 µs (minimum to median, 12
    /// alternating rounds); ResNet-50, whose residual layers add in place, stayed within
    /// its noise at batch 1 and 8. With no fetch at all batch 1 was as fast but batch
    /// 8's stem and 56² expanding layers 8–9% slower (their outputs come from memory).
    /// Prefetches never fault, so rows past the output are harmless. The output lines'
    /// `_MM_HINT_ET0` compiles to `prefetcht0` (a read fetch): `prefetchw` needs the
    /// `prfchw` target feature, unstable in Rust 1.95. An inline-assembly `prefetchw` in
    /// its place timed the same for a 64 → 256 layer alone on one thread (28² at batch
    /// 1, 56² at batch 8; minimums of 3 alternating runs); in ResNet-50 on two threads
    /// every stage, Winograd's too, moved with it alike (host noise), so it stays a read
    /// fetch.
    #[inline(always)]
    pub(super) fn prefetch_fused(f: Option<&FuseAt<'_>>) {
        let Some(f) = f else { return };
        let (y0, ys) = f.out.target();
        for i in f.i0..f.i0 + MR {
            for st in f.out.steps() {
                if let FusedStep::AddRows(t, rs) | FusedStep::MulRows(t, rs) = *st {
                    if std::ptr::eq(t, y0) && rs == ys {
                        continue;
                    }
                    let p = t.wrapping_add(i * rs + f.j0);
                    // SAFETY: a prefetch reads nothing and cannot fault.
                    unsafe {
                        _mm_prefetch::<_MM_HINT_T0>(p.cast());
                        _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(NR).cast());
                    }
                }
            }
            let y = y0.wrapping_add(i * ys + f.j0).cast_const();
            // SAFETY: as above.
            unsafe {
                _mm_prefetch::<_MM_HINT_ET0>(y.cast());
                _mm_prefetch::<_MM_HINT_ET0>(y.wrapping_add(NR).cast());
            }
        }
    }

    /// Fetches the next [`FAR_PER_STEP`] of `far`'s lines into L2, as many as are left.
    #[inline(always)]
    pub(super) fn far_step(far: &mut Far) {
        let n = far.lines.min(FAR_PER_STEP);
        for l in 0..n {
            // SAFETY: a prefetch reads nothing and cannot fault.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(far.p.wrapping_add(16 * l).cast()) };
        }
        far.p = far.p.wrapping_add(16 * n);
        far.lines -= n;
    }

    /// The 6×32 micro-kernel: one row tile against two adjacent B panels, 12 zmm
    /// accumulators (one 16-float panel row is one zmm register).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn kernel_pair(
        kc: usize,
        a: &[f32],
        b0: &[f32],
        b1: &[f32],
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        (acc, mr, far): (bool, usize, Far),
        fuse: Option<&FuseAt<'_>>,
    ) {
        assert!(a.len() >= kc * MR && b0.len() >= kc * NR && b1.len() >= kc * NR);
        let (a, b0, b1) = (a.as_ptr(), b0.as_ptr(), b1.as_ptr());
        prefetch_fused(fuse);
        // SAFETY: the CPU supports AVX-512F (checked before this function is
        // selected); the operands hold `kc` packed steps (checked above).
        unsafe {
            match mr {
                6.. => pair::<6>(kc, a, b0, b1, tile, next, acc, far, fuse),
                5 => pair::<5>(kc, a, b0, b1, tile, next, acc, far, fuse),
                4 => pair::<4>(kc, a, b0, b1, tile, next, acc, far, fuse),
                3 => pair::<3>(kc, a, b0, b1, tile, next, acc, far, fuse),
                2 => pair::<2>(kc, a, b0, b1, tile, next, acc, far, fuse),
                _ => pair::<1>(kc, a, b0, b1, tile, next, acc, far, fuse),
            }
        }
    }

    /// [`kernel_pair`] reading A in place: row `i` of segment `s` at
    /// `a.ptrs[s * MR + i]`, `a.seg_len` consecutive floats. `SPLIT`: tiles of up to
    /// [`SHORT_ROWS`] rows sum every other K step apart (a tile's rows then get sums in
    /// another order than in a full tile: only for callers whose tiles do not depend
    /// on the thread count).
    pub(super) fn kernel_pair_rows<const SPLIT: bool>(
        a: &ARows<'_>,
        b0: &[f32],
        b1: &[f32],
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        (acc, mr, far): (bool, usize, Far),
        fuse: Option<&FuseAt<'_>>,
    ) {
        let kc = a.nseg * a.seg_len;
        prefetch_fused(fuse);
        assert!(a.ks == 1 && a.ptrs.len() >= a.nseg * MR);
        assert!(b0.len() >= kc * NR && b1.len() >= kc * NR);
        let (nseg, len, rows) = (a.nseg, a.seg_len, a.ptrs.as_ptr());
        let (b0, b1) = (b0.as_ptr(), b1.as_ptr());
        // SAFETY: the CPU supports AVX-512F (checked before this function is
        // selected); each row pointer addresses `seg_len` floats (the `ARows`
        // contract) and the panels hold `kc` packed steps (checked above).
        unsafe {
            match mr {
                6.. => pair_rows::<6, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
                5 => pair_rows::<5, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
                4 => pair_rows::<4, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
                3 => pair_rows::<3, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
                2 => pair_rows::<2, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
                _ => pair_rows::<1, SPLIT>(nseg, len, rows, b0, b1, tile, next, acc, far, fuse),
            }
        }
    }

    /// [`quad_rows`] without `SPLIT` and without partial sums, for
    /// [`super::rows_times_panels`]: `a`'s rows (one tile of `mr`) against the four
    /// panels `ps` floats apart at `b`, the two pairs' far lines and stores as
    /// [`kernel_pair_rows`] takes them.
    pub(super) fn kernel_quad_rows(
        a: &ARows<'_>,
        b: &[f32],
        ps: usize,
        mr: usize,
        far: [Far; 2],
        fuse: &[FuseAt<'_>; 2],
    ) {
        let kc = a.nseg * a.seg_len;
        prefetch_fused(Some(&fuse[0]));
        prefetch_fused(Some(&fuse[1]));
        assert!(a.ks == 1 && a.ptrs.len() >= a.nseg * MR);
        assert!(b.len() >= 3 * ps + kc * NR, "four B panels");
        let (nseg, len, rows, b) = (a.nseg, a.seg_len, a.ptrs.as_ptr(), b.as_ptr());
        let none = std::ptr::null();
        // SAFETY: the CPU supports AVX-512F (checked before this function is
        // selected); each row pointer addresses `seg_len` floats (the `ARows`
        // contract), the four panels hold `kc` packed steps (checked above); without
        // partial sums the tiles are not read.
        unsafe {
            match mr {
                6.. => quad_rows::<6, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
                5 => quad_rows::<5, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
                4 => quad_rows::<4, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
                3 => quad_rows::<3, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
                2 => quad_rows::<2, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
                _ => quad_rows::<1, false>(nseg, len, rows, b, ps, none, false, far, fuse, None),
            }
        }
    }

    /// [`super::Sweep`]: [`kernel_pair_rows`] over a run of panels in one call.
    pub(super) fn kernel_sweep_rows(a: &ARows<'_>, s: Sweep<'_>) {
        s.check(a);
        // SAFETY: the CPU supports AVX-512F (checked before this function is
        // selected); the row pointers, panels and tiles are as `Sweep::check` checked.
        unsafe {
            match s.mr {
                6.. => sweep_rows::<6>(a, s),
                5 => sweep_rows::<5>(a, s),
                4 => sweep_rows::<4>(a, s),
                3 => sweep_rows::<3>(a, s),
                2 => sweep_rows::<2>(a, s),
                _ => sweep_rows::<1>(a, s),
            }
        }
    }

    /// `M` rows of [`kernel_sweep_rows`]: panels four at a time through the 6×64
    /// kernel, then what is left in a pair (an odd last panel as its own second).
    ///
    /// # Safety
    /// AVX-512F available; `a` and `s` as `Sweep::check` checks them.
    #[target_feature(enable = "avx512f")]
    unsafe fn sweep_rows<const M: usize>(a: &ARows<'_>, mut s: Sweep<'_>) {
        let (nseg, len, rows) = (a.nseg, a.seg_len, a.ptrs.as_ptr());
        let (b, ps, np) = (s.b.as_ptr(), s.ps, s.np);
        let acc = s.acc;
        // K loops too short to fetch a row per iteration fetch all lines as they start.
        let iters = nseg * (len / 4);
        let lines = (iters >= MR).then(|| EpilogueLines::new(s.out, s.i0, s.mr, iters));
        let mut q = 0;
        while q + 4 <= np {
            let (far, fuse, tiles) = s.quad(q);
            if lines.is_none() {
                prefetch_fused(Some(&fuse[0]));
                prefetch_fused(Some(&fuse[1]));
            }
            // SAFETY: per the contract (panels `q..q + 4 <= np` hold `kc` steps; with
            // `acc` their four tiles lie at `tiles`).
            unsafe {
                quad_rows::<M, true>(
                    nseg,
                    len,
                    rows,
                    b.wrapping_add(q * ps),
                    ps,
                    tiles,
                    acc,
                    far,
                    &fuse,
                    lines.as_ref(),
                )
            };
            q += 4;
        }
        let mut spare = [0f32; TILE];
        while q < np {
            let b0 = b.wrapping_add(q * ps);
            // An odd last panel is its own second (that result is not stored).
            let b1 = if q + 1 < np { b0.wrapping_add(ps) } else { b0 };
            let (far, fuse, t0, t1) = s.pair(q, &mut spare);
            prefetch_fused(Some(&fuse));
            // SAFETY: per the contract (panels `q`, `q + 1 < np` hold `kc` steps).
            unsafe { pair_rows::<M, true>(nseg, len, rows, b0, b1, t0, t1, acc, far, Some(&fuse)) };
            q += 2;
        }
    }

    /// The 6×64 micro-kernel of a sweep: one row tile (A in place, `M` rows) against
    /// four adjacent panels `ps` floats apart from `b`, 24 zmm accumulators: each
    /// broadcast of A feeds four FMAs instead of two, and A is read once for 64
    /// columns. With `acc`, the four tiles at `tiles` (side by side) hold partial sums
    /// to add; the result goes through the two pairs' chains (`fuse`) to the output.
    /// With `lines`, the K loop fetches the epilogue's lines as it nears its end
    /// ([`EpilogueLines`]); without, the caller has fetched them. `SPLIT` as in
    /// [`kernel_pair_rows`].
    ///
    /// # Safety
    /// AVX-512F available; `rows` holds `nseg * MR` pointers, each to `len` readable
    /// floats; the four panels hold `nseg * len * NR` floats each; with `acc`, `tiles`
    /// addresses `4 * TILE` floats.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn quad_rows<const M: usize, const SPLIT: bool>(
        nseg: usize,
        len: usize,
        rows: *const *const f32,
        b: *const f32,
        ps: usize,
        tiles: *const f32,
        acc: bool,
        [mut far0, mut far1]: [Far; 2],
        fuse: &[FuseAt<'_>; 2],
        lines: Option<&EpilogueLines>,
    ) {
        // SAFETY: (whole body) per the function's contract; a fused tile's rows and
        // columns lie inside its chain's tensors (`FusedOut::new`'s contract).
        unsafe {
            // K iterations so far (for `lines`).
            let mut it = 0;
            let mut c0 = [_mm512_setzero_ps(); M];
            let mut c1 = [_mm512_setzero_ps(); M];
            let mut c2 = [_mm512_setzero_ps(); M];
            let mut c3 = [_mm512_setzero_ps(); M];
            // Tiles of one or two rows: every other K step sums into a second set
            // ([`SHORT_ROWS`]).
            let mut d0 = [_mm512_setzero_ps(); M];
            let mut d1 = [_mm512_setzero_ps(); M];
            let mut d2 = [_mm512_setzero_ps(); M];
            let mut d3 = [_mm512_setzero_ps(); M];
            let (mut p0, mut p1, mut p2, mut p3) = (b, b.add(ps), b.add(2 * ps), b.add(3 * ps));
            for s in 0..nseg {
                let r: [*const f32; M] = std::array::from_fn(|i| *rows.add(s * MR + i));
                macro_rules! step {
                    ($k:expr, $u:expr, [$e0:ident, $e1:ident, $e2:ident, $e3:ident]) => {{
                        let v0 = _mm512_loadu_ps(p0.add($u * NR));
                        let v1 = _mm512_loadu_ps(p1.add($u * NR));
                        let v2 = _mm512_loadu_ps(p2.add($u * NR));
                        let v3 = _mm512_loadu_ps(p3.add($u * NR));
                        for i in 0..M {
                            let av = _mm512_set1_ps(*r[i].add($k + $u));
                            $e0[i] = _mm512_fmadd_ps(av, v0, $e0[i]);
                            $e1[i] = _mm512_fmadd_ps(av, v1, $e1[i]);
                            $e2[i] = _mm512_fmadd_ps(av, v2, $e2[i]);
                            $e3[i] = _mm512_fmadd_ps(av, v3, $e3[i]);
                        }
                    }};
                }
                macro_rules! steps {
                    ($odd:tt) => {{
                        let mut k = 0;
                        while k + 4 <= len {
                            far_step(&mut far0);
                            far_step(&mut far1);
                            if let Some(l) = lines {
                                l.fetch(it, M, fuse[0].j0, b);
                            }
                            it += 1;
                            for p in [p0, p1, p2, p3] {
                                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(8 * NR).cast());
                                stream_ahead::<M>(p);
                            }
                            step!(k, 0, [c0, c1, c2, c3]);
                            step!(k, 1, $odd);
                            for p in [p0, p1, p2, p3] {
                                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(10 * NR).cast());
                            }
                            step!(k, 2, [c0, c1, c2, c3]);
                            step!(k, 3, $odd);
                            p0 = p0.add(4 * NR);
                            p1 = p1.add(4 * NR);
                            p2 = p2.add(4 * NR);
                            p3 = p3.add(4 * NR);
                            k += 4;
                        }
                        while k < len {
                            step!(k, 0, [c0, c1, c2, c3]);
                            p0 = p0.add(NR);
                            p1 = p1.add(NR);
                            p2 = p2.add(NR);
                            p3 = p3.add(NR);
                            k += 1;
                        }
                    }};
                }
                if SPLIT && M <= SHORT_ROWS {
                    steps!([d0, d1, d2, d3]);
                } else {
                    steps!([c0, c1, c2, c3]);
                }
            }
            if SPLIT && M <= SHORT_ROWS {
                for i in 0..M {
                    c0[i] = _mm512_add_ps(c0[i], d0[i]);
                    c1[i] = _mm512_add_ps(c1[i], d1[i]);
                    c2[i] = _mm512_add_ps(c2[i], d2[i]);
                    c3[i] = _mm512_add_ps(c3[i], d3[i]);
                }
            }
            if acc {
                for i in 0..M {
                    c0[i] = _mm512_add_ps(c0[i], _mm512_loadu_ps(tiles.add(i * NR)));
                    c1[i] = _mm512_add_ps(c1[i], _mm512_loadu_ps(tiles.add(TILE + i * NR)));
                    c2[i] = _mm512_add_ps(c2[i], _mm512_loadu_ps(tiles.add(2 * TILE + i * NR)));
                    c3[i] = _mm512_add_ps(c3[i], _mm512_loadu_ps(tiles.add(3 * TILE + i * NR)));
                }
            }
            store_fused!(M, c0, c1, &fuse[0]);
            store_fused!(M, c2, c3, &fuse[1]);
        }
    }

    /// `M` rows of [`kernel_pair_rows`].
    ///
    /// # Safety
    /// AVX-512F available; `rows` holds `nseg * MR` pointers, each to `len` readable
    /// floats; `b0` and `b1` hold `nseg * len * NR` floats.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn pair_rows<const M: usize, const SPLIT: bool>(
        nseg: usize,
        len: usize,
        rows: *const *const f32,
        b0: *const f32,
        b1: *const f32,
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        acc: bool,
        mut far: Far,
        fuse: Option<&FuseAt<'_>>,
    ) {
        let (t0, t1) = (tile.as_mut_ptr(), next.as_mut_ptr());
        // SAFETY: (whole body) per the function's contract; `t0`, `t1` address TILE
        // floats and rows `i < M <= MR` are written; a fused tile's rows and columns
        // lie inside its chain's tensors (`FusedOut::new`'s contract).
        unsafe {
            let mut c0 = [_mm512_setzero_ps(); M];
            let mut c1 = [_mm512_setzero_ps(); M];
            // Tiles of one or two rows: every other K step sums into a second set
            // ([`SHORT_ROWS`]).
            let mut d0 = [_mm512_setzero_ps(); M];
            let mut d1 = [_mm512_setzero_ps(); M];
            let (mut p0, mut p1) = (b0, b1);
            for s in 0..nseg {
                let r: [*const f32; M] = std::array::from_fn(|i| *rows.add(s * MR + i));
                macro_rules! step {
                    ($k:expr, $u:expr, $e0:ident, $e1:ident) => {{
                        let v0 = _mm512_loadu_ps(p0.add($u * NR));
                        let v1 = _mm512_loadu_ps(p1.add($u * NR));
                        for i in 0..M {
                            let av = _mm512_set1_ps(*r[i].add($k + $u));
                            $e0[i] = _mm512_fmadd_ps(av, v0, $e0[i]);
                            $e1[i] = _mm512_fmadd_ps(av, v1, $e1[i]);
                        }
                    }};
                }
                macro_rules! steps {
                    ($o0:ident, $o1:ident) => {{
                        let mut k = 0;
                        while k + 4 <= len {
                            far_step(&mut far);
                            _mm_prefetch::<_MM_HINT_T0>(p0.add(8 * NR).cast());
                            _mm_prefetch::<_MM_HINT_T0>(p1.add(8 * NR).cast());
                            stream_ahead::<M>(p0);
                            stream_ahead::<M>(p1);
                            step!(k, 0, c0, c1);
                            step!(k, 1, $o0, $o1);
                            _mm_prefetch::<_MM_HINT_T0>(p0.add(10 * NR).cast());
                            _mm_prefetch::<_MM_HINT_T0>(p1.add(10 * NR).cast());
                            step!(k, 2, c0, c1);
                            step!(k, 3, $o0, $o1);
                            p0 = p0.add(4 * NR);
                            p1 = p1.add(4 * NR);
                            k += 4;
                        }
                        while k < len {
                            step!(k, 0, c0, c1);
                            p0 = p0.add(NR);
                            p1 = p1.add(NR);
                            k += 1;
                        }
                    }};
                }
                if SPLIT && M <= SHORT_ROWS {
                    steps!(d0, d1);
                } else {
                    steps!(c0, c1);
                }
            }
            if SPLIT && M <= SHORT_ROWS {
                for i in 0..M {
                    c0[i] = _mm512_add_ps(c0[i], d0[i]);
                    c1[i] = _mm512_add_ps(c1[i], d1[i]);
                }
            }
            finish_pair!(M, c0, c1, t0, t1, acc, fuse);
        }
    }

    /// `M` rows of [`kernel_pair`].
    ///
    /// # Safety
    /// AVX-512F available; `a` holds `kc * MR`, `b0` and `b1` `kc * NR` floats.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn pair<const M: usize>(
        kc: usize,
        a: *const f32,
        b0: *const f32,
        b1: *const f32,
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        acc: bool,
        mut far: Far,
        fuse: Option<&FuseAt<'_>>,
    ) {
        let (t0, t1) = (tile.as_mut_ptr(), next.as_mut_ptr());
        // SAFETY: (whole body) `t0`, `t1` address TILE floats and rows `i < M <= MR`
        // are written; `a`, `b0`, `b1` are read within `kc` packed steps; a fused
        // tile's rows and columns lie inside its chain's tensors (`FusedOut::new`).
        unsafe {
            let mut c0 = [_mm512_setzero_ps(); M];
            let mut c1 = [_mm512_setzero_ps(); M];
            let (mut ap, mut p0, mut p1) = (a, b0, b1);
            macro_rules! step {
                ($u:expr) => {{
                    let v0 = _mm512_loadu_ps(p0.add($u * NR));
                    let v1 = _mm512_loadu_ps(p1.add($u * NR));
                    for i in 0..M {
                        let av = _mm512_set1_ps(*ap.add($u * MR + i));
                        c0[i] = _mm512_fmadd_ps(av, v0, c0[i]);
                        c1[i] = _mm512_fmadd_ps(av, v1, c1[i]);
                    }
                }};
            }
            let mut k = 0;
            while k + 4 <= kc {
                far_step(&mut far);
                _mm_prefetch::<_MM_HINT_T0>(p0.add(8 * NR).cast());
                _mm_prefetch::<_MM_HINT_T0>(p1.add(8 * NR).cast());
                step!(0);
                step!(1);
                _mm_prefetch::<_MM_HINT_T0>(p0.add(10 * NR).cast());
                _mm_prefetch::<_MM_HINT_T0>(p1.add(10 * NR).cast());
                step!(2);
                step!(3);
                ap = ap.add(4 * MR);
                p0 = p0.add(4 * NR);
                p1 = p1.add(4 * NR);
                k += 4;
            }
            while k < kc {
                step!(0);
                ap = ap.add(MR);
                p0 = p0.add(NR);
                p1 = p1.add(NR);
                k += 1;
            }
            finish_pair!(M, c0, c1, t0, t1, acc, fuse);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::avx512::{far_step, prefetch_fused};
    use super::{ARows, Far, FuseAt, FusedStep, MR, NR, Sweep, TILE, check_rows};

    /// Lane masks of the first `n` of a panel's 16 columns, as the two halves'
    /// `vmaskmov` masks (all of the first half from 8 on).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn half_masks(n: usize) -> (__m256i, __m256i) {
        const LANES: [i32; 24] = [
            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        // `LANES[16 - k..]` starts with `k` set lanes, `k <= 16`.
        let at = |k: usize| LANES[16 - k.min(16)..].as_ptr().cast::<__m256i>();
        // SAFETY: each read is 8 lanes inside `LANES` (`16 - k + 8 <= 24`).
        unsafe {
            (
                _mm256_loadu_si256(at(n.min(8))),
                _mm256_loadu_si256(at(n.saturating_sub(8))),
            )
        }
    }

    /// One panel's end in a pair kernel: rows `i < M` of the two half-panel
    /// accumulators (plus what the tile holds, when accumulating) stored to the tile
    /// or, with a [`FuseAt`], run through its chain and stored to the output, panel
    /// `$h` (0 or 1) of the fused pair, masked to its columns. A macro, so the
    /// intrinsics stay inside the calling kernel's target features.
    macro_rules! finish_panel {
        ($m:expr, $lo:ident, $hi:ident, $t:ident, $acc:ident, $fuse:ident, $h:expr) => {
            if $acc {
                for i in 0..$m {
                    $lo[i] = _mm256_add_ps($lo[i], _mm256_loadu_ps($t.add(i * NR)));
                    $hi[i] = _mm256_add_ps($hi[i], _mm256_loadu_ps($t.add(i * NR + 8)));
                }
            }
            match $fuse {
                None => {
                    for i in 0..$m {
                        _mm256_storeu_ps($t.add(i * NR), $lo[i]);
                        _mm256_storeu_ps($t.add(i * NR + 8), $hi[i]);
                    }
                }
                Some(f) => {
                    let f: &FuseAt<'_> = f;
                    let (j0, cols) = if $h == 0 {
                        (f.j0, f.cols.0)
                    } else {
                        (f.j0 + NR, f.cols.1)
                    };
                    let full = cols >= NR;
                    let (k0, k1) = half_masks(cols);
                    // Masked lanes are not read, so columns past the operands are
                    // never dereferenced.
                    let cols2 = |p: *const f32, off: usize| {
                        let p = p.wrapping_add(off);
                        if full {
                            (_mm256_loadu_ps(p), _mm256_loadu_ps(p.wrapping_add(8)))
                        } else {
                            (
                                _mm256_maskload_ps(p, k0),
                                _mm256_maskload_ps(p.wrapping_add(8), k1),
                            )
                        }
                    };
                    fused_steps!(
                        $m,
                        $lo,
                        $hi,
                        f,
                        j0,
                        cols2,
                        _mm256_add_ps,
                        _mm256_mul_ps,
                        _mm256_max_ps,
                        _mm256_setzero_ps(),
                        _mm256_set1_ps
                    );
                    for i in 0..$m {
                        let y = f.out.y.add((f.i0 + i) * f.out.ys + j0);
                        if full {
                            _mm256_storeu_ps(y, $lo[i]);
                            _mm256_storeu_ps(y.add(8), $hi[i]);
                        } else {
                            _mm256_maskstore_ps(y, k0, $lo[i]);
                            _mm256_maskstore_ps(y.wrapping_add(8), k1, $hi[i]);
                        }
                    }
                }
            }
        };
    }

    /// Fetches the partial sums a tile holds (rows `i < M`), which the kernel adds at
    /// its end: with many row tiles per thread they were stored a K block ago and
    /// are no longer near the core.
    #[inline(always)]
    fn prefetch_partial<const M: usize>(t: *const f32) {
        for i in 0..M {
            // SAFETY: a prefetch reads nothing and cannot fault.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(t.wrapping_add(i * NR).cast());
                _mm_prefetch::<_MM_HINT_T0>(t.wrapping_add(i * NR + 15).cast());
            }
        }
    }

    /// Two adjacent panels on AVX2 (the pair kernels' contract, [`super::PairFn`]):
    /// each panel through the 6×16 tile in turn (12 ymm accumulators; a 6×32 tile
    /// would need 24 of the 16 registers). When `b1` is `b0` itself the second result
    /// is not wanted (an odd last panel) and is not computed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn kernel_pair(
        kc: usize,
        a: &[f32],
        b0: &[f32],
        b1: &[f32],
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        (acc, mr, mut far): (bool, usize, Far),
        fuse: Option<&FuseAt<'_>>,
    ) {
        assert!(a.len() >= kc * MR && b0.len() >= kc * NR && b1.len() >= kc * NR);
        let second = !std::ptr::eq(b0.as_ptr(), b1.as_ptr());
        prefetch_fused(fuse);
        let a = a.as_ptr();
        for (h, b, t) in [(0, b0, tile), (1, b1, next)] {
            if h == 1 && !second {
                break;
            }
            let b = b.as_ptr();
            // SAFETY: the CPU supports AVX2 and FMA (checked before this function is
            // selected); the operands hold `kc` packed steps (checked above).
            unsafe {
                match mr {
                    6.. => panel::<6>(kc, a, b, t, acc, &mut far, fuse, h),
                    5 => panel::<5>(kc, a, b, t, acc, &mut far, fuse, h),
                    4 => panel::<4>(kc, a, b, t, acc, &mut far, fuse, h),
                    3 => panel::<3>(kc, a, b, t, acc, &mut far, fuse, h),
                    2 => panel::<2>(kc, a, b, t, acc, &mut far, fuse, h),
                    _ => panel::<1>(kc, a, b, t, acc, &mut far, fuse, h),
                }
            }
        }
    }

    /// [`kernel_pair`] reading A in place: row `i` of segment `s` at
    /// `a.ptrs[s * MR + i]`, `a.seg_len` consecutive floats.
    pub(super) fn kernel_pair_rows(
        a: &ARows<'_>,
        b0: &[f32],
        b1: &[f32],
        tile: &mut [f32; TILE],
        next: &mut [f32; TILE],
        (acc, mr, mut far): (bool, usize, Far),
        fuse: Option<&FuseAt<'_>>,
    ) {
        let kc = a.nseg * a.seg_len;
        assert!(a.ks == 1 && a.ptrs.len() >= a.nseg * MR);
        assert!(b0.len() >= kc * NR && b1.len() >= kc * NR);
        let second = !std::ptr::eq(b0.as_ptr(), b1.as_ptr());
        prefetch_fused(fuse);
        let (nseg, len, rows) = (a.nseg, a.seg_len, a.ptrs.as_ptr());
        for (h, b, t) in [(0, b0, tile), (1, b1, next)] {
            if h == 1 && !second {
                break;
            }
            let b = b.as_ptr();
            let f = &mut far;
            // SAFETY: the CPU supports AVX2 and FMA (checked before this function is
            // selected); each row pointer addresses `seg_len` floats (the `ARows`
            // contract) and the panels hold `kc` packed steps (checked above).
            unsafe {
                match mr {
                    6.. => panel_rows::<6, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                    5 => panel_rows::<5, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                    4 => panel_rows::<4, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                    3 => panel_rows::<3, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                    2 => panel_rows::<2, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                    _ => panel_rows::<1, true>(nseg, len, rows, b, t, acc, f, fuse, h),
                }
            }
        }
    }

    /// [`super::Sweep`]: [`kernel_pair_rows`] over a run of panels in one call.
    pub(super) fn kernel_sweep_rows(a: &ARows<'_>, s: Sweep<'_>) {
        s.check(a);
        // SAFETY: the CPU supports AVX2 and FMA (checked before this function is
        // selected); the row pointers, panels and tiles are as `Sweep::check` checked.
        unsafe {
            if s.b_in_l1 {
                sweep_rows_mr::<false>(a, s);
            } else {
                sweep_rows_mr::<true>(a, s);
            }
        }
    }

    /// [`sweep_rows`] for the tile's rows.
    ///
    /// # Safety
    /// As [`sweep_rows`].
    #[inline(always)]
    unsafe fn sweep_rows_mr<const FETCH: bool>(a: &ARows<'_>, s: Sweep<'_>) {
        // SAFETY: per the function's contract.
        unsafe {
            match s.mr {
                6.. => sweep_rows::<6, FETCH>(a, s),
                5 => sweep_rows::<5, FETCH>(a, s),
                4 => sweep_rows::<4, FETCH>(a, s),
                3 => sweep_rows::<3, FETCH>(a, s),
                2 => sweep_rows::<2, FETCH>(a, s),
                _ => sweep_rows::<1, FETCH>(a, s),
            }
        }
    }

    /// `M` rows of [`kernel_sweep_rows`]; `FETCH`: the kernels fetch B's lines (not
    /// where the panels stay in L1, `Sweep::b_in_l1`).
    ///
    /// # Safety
    /// AVX2 and FMA available; `a` and `s` as `Sweep::check` checks them.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn sweep_rows<const M: usize, const FETCH: bool>(a: &ARows<'_>, mut s: Sweep<'_>) {
        let (nseg, len, rows) = (a.nseg, a.seg_len, a.ptrs.as_ptr());
        let (b, ps, np) = (s.b.as_ptr(), s.ps, s.np);
        let acc = s.acc;
        let mut spare = [0f32; TILE];
        for q in (0..np).step_by(2) {
            let two = q + 1 < np;
            let (mut far, fuse, t0, t1) = s.pair(q, &mut spare);
            let f = Some(&fuse);
            prefetch_fused(f);
            // SAFETY: per the contract (panels `q`, `q + 1 < np` hold `kc` steps).
            unsafe {
                panel_rows::<M, FETCH>(nseg, len, rows, b.add(q * ps), t0, acc, &mut far, f, 0);
                if two {
                    panel_rows::<M, FETCH>(
                        nseg,
                        len,
                        rows,
                        b.add((q + 1) * ps),
                        t1,
                        acc,
                        &mut far,
                        f,
                        1,
                    );
                }
            }
        }
    }

    /// `M` rows of one panel of [`kernel_pair`] (panel `h` of a fused pair).
    ///
    /// # Safety
    /// AVX2 and FMA available; `a` holds `kc * MR`, `b` `kc * NR` floats.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn panel<const M: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        tile: &mut [f32; TILE],
        acc: bool,
        far: &mut Far,
        fuse: Option<&FuseAt<'_>>,
        h: usize,
    ) {
        let t = tile.as_mut_ptr();
        // SAFETY: (whole body) `t` addresses TILE floats and rows `i < M <= MR` are
        // written; `a`, `b` are read within `kc` packed steps; a fused tile's rows and
        // columns lie inside its chain's tensors (`FusedOut::new`).
        unsafe {
            if acc {
                prefetch_partial::<M>(t);
            }
            let mut lo = [_mm256_setzero_ps(); M];
            let mut hi = [_mm256_setzero_ps(); M];
            let (mut ap, mut bp) = (a, b);
            // A copy in registers: through the reference, the cursor was stored back
            // on every step.
            let mut fr = *far;
            macro_rules! step {
                ($u:expr) => {{
                    let v0 = _mm256_loadu_ps(bp.add($u * NR));
                    let v1 = _mm256_loadu_ps(bp.add($u * NR + 8));
                    for i in 0..M {
                        let av = _mm256_broadcast_ss(&*ap.add($u * MR + i));
                        lo[i] = _mm256_fmadd_ps(av, v0, lo[i]);
                        hi[i] = _mm256_fmadd_ps(av, v1, hi[i]);
                    }
                }};
            }
            let mut k = 0;
            while k + 4 <= kc {
                far_step(&mut fr);
                _mm_prefetch::<_MM_HINT_T0>(bp.add(8 * NR).cast());
                step!(0);
                step!(1);
                _mm_prefetch::<_MM_HINT_T0>(bp.add(10 * NR).cast());
                step!(2);
                step!(3);
                ap = ap.add(4 * MR);
                bp = bp.add(4 * NR);
                k += 4;
            }
            while k < kc {
                step!(0);
                ap = ap.add(MR);
                bp = bp.add(NR);
                k += 1;
            }
            *far = fr;
            finish_panel!(M, lo, hi, t, acc, fuse, h);
        }
    }

    /// `M` rows of one panel of [`kernel_pair_rows`] (panel `h` of a fused pair).
    /// `FETCH`: every four K steps, fetch `far`'s next lines into L2 and B's lines
    /// eight and ten steps ahead into L1; without, B is in L1 already and `far` is not
    /// advanced. With a 64-step K (16 iterations) they were a tenth of the call's
    /// instructions (callgrind: 1672 against 1501 per call).
    ///
    /// # Safety
    /// AVX2 and FMA available; `rows` holds `nseg * MR` pointers, each to `len`
    /// readable floats; `b` holds `nseg * len * NR` floats.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn panel_rows<const M: usize, const FETCH: bool>(
        nseg: usize,
        len: usize,
        rows: *const *const f32,
        b: *const f32,
        tile: &mut [f32; TILE],
        acc: bool,
        far: &mut Far,
        fuse: Option<&FuseAt<'_>>,
        h: usize,
    ) {
        let t = tile.as_mut_ptr();
        // SAFETY: (whole body) per the function's contract; `t` addresses TILE floats
        // and rows `i < M <= MR` are written; a fused tile's rows and columns lie
        // inside its chain's tensors (`FusedOut::new`'s contract).
        unsafe {
            if acc {
                prefetch_partial::<M>(t);
            }
            let mut lo = [_mm256_setzero_ps(); M];
            let mut hi = [_mm256_setzero_ps(); M];
            let mut bp = b;
            // A copy in registers, as in `panel`.
            let mut fr = *far;
            for s in 0..nseg {
                let r: [*const f32; M] = std::array::from_fn(|i| *rows.add(s * MR + i));
                macro_rules! step {
                    ($k:expr, $u:expr) => {{
                        let v0 = _mm256_loadu_ps(bp.add($u * NR));
                        let v1 = _mm256_loadu_ps(bp.add($u * NR + 8));
                        for i in 0..M {
                            let av = _mm256_broadcast_ss(&*r[i].add($k + $u));
                            lo[i] = _mm256_fmadd_ps(av, v0, lo[i]);
                            hi[i] = _mm256_fmadd_ps(av, v1, hi[i]);
                        }
                    }};
                }
                let mut k = 0;
                while k + 4 <= len {
                    if FETCH {
                        far_step(&mut fr);
                        _mm_prefetch::<_MM_HINT_T0>(bp.add(8 * NR).cast());
                    }
                    step!(k, 0);
                    step!(k, 1);
                    if FETCH {
                        _mm_prefetch::<_MM_HINT_T0>(bp.add(10 * NR).cast());
                    }
                    step!(k, 2);
                    step!(k, 3);
                    bp = bp.add(4 * NR);
                    k += 4;
                }
                while k < len {
                    step!(k, 0);
                    bp = bp.add(NR);
                    k += 1;
                }
            }
            *far = fr;
            finish_panel!(M, lo, hi, t, acc, fuse, h);
        }
    }

    /// The 6×16 micro-kernel on packed operands.
    pub(super) fn kernel(
        kc: usize,
        a: &[f32],
        b: &[f32],
        tile: &mut [f32; TILE],
        (acc, mr, nr): (bool, usize, usize),
    ) {
        assert!(a.len() >= kc * MR && b.len() >= kc * NR);
        let (a, b) = (a.as_ptr(), b.as_ptr());
        // SAFETY: the CPU supports AVX2 and FMA (checked before this function is
        // selected); `a` and `b` hold `kc` packed steps (checked above).
        unsafe {
            if nr == 1 {
                return kernel_mx1(kc, a, b, tile, acc);
            }
            match (mr, nr > 8) {
                (6.., true) => kernel_mx16::<6, true>(kc, a, b, tile, acc),
                (5, true) => kernel_mx16::<5, true>(kc, a, b, tile, acc),
                (4, true) => kernel_mx16::<4, true>(kc, a, b, tile, acc),
                (3, true) => kernel_mx16::<3, true>(kc, a, b, tile, acc),
                (2, true) => kernel_mx16::<2, true>(kc, a, b, tile, acc),
                (_, true) => kernel_mx16::<1, true>(kc, a, b, tile, acc),
                (6.., false) => kernel_mx16::<6, false>(kc, a, b, tile, acc),
                (5, false) => kernel_mx16::<5, false>(kc, a, b, tile, acc),
                (4, false) => kernel_mx16::<4, false>(kc, a, b, tile, acc),
                (3, false) => kernel_mx16::<3, false>(kc, a, b, tile, acc),
                (2, false) => kernel_mx16::<2, false>(kc, a, b, tile, acc),
                (_, false) => kernel_mx16::<1, false>(kc, a, b, tile, acc),
            }
        }
    }

    /// One output column (a panel holding a single column: a dot product per row,
    /// the 6 rows in one vector).
    ///
    /// # Safety
    /// AVX2 and FMA available; `a` holds `kc * MR` and `b` `kc * NR` floats.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel_mx1(
        kc: usize,
        a: *const f32,
        b: *const f32,
        tile: &mut [f32; TILE],
        acc: bool,
    ) {
        // SAFETY: (whole body) masked loads read only the 6 floats of each packed
        // step; `b` reads one float per step; `tile` writes stay inside TILE.
        unsafe {
            let m6 = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
            let mut s = [_mm256_setzero_ps(); 4];
            let mut k = 0;
            while k + 4 <= kc {
                for (u, su) in s.iter_mut().enumerate() {
                    let av = _mm256_maskload_ps(a.add((k + u) * MR), m6);
                    let bv = _mm256_broadcast_ss(&*b.add((k + u) * NR));
                    *su = _mm256_fmadd_ps(av, bv, *su);
                }
                k += 4;
            }
            while k < kc {
                let av = _mm256_maskload_ps(a.add(k * MR), m6);
                let bv = _mm256_broadcast_ss(&*b.add(k * NR));
                s[0] = _mm256_fmadd_ps(av, bv, s[0]);
                k += 1;
            }
            let v = _mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3]));
            let mut out = [0f32; 8];
            _mm256_storeu_ps(out.as_mut_ptr(), v);
            for (i, o) in out.iter().take(MR).enumerate() {
                tile[i * NR] = if acc { tile[i * NR] + o } else { *o };
            }
        }
    }

    /// The `M × 16` micro-kernel (`M × 8` when `!WIDE`: narrow last panels).
    ///
    /// # Safety
    /// AVX2 and FMA available; `a` holds `kc * MR` and `b` `kc * NR` floats.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn kernel_mx16<const M: usize, const WIDE: bool>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        tile: &mut [f32; TILE],
        acc: bool,
    ) {
        let t = tile.as_mut_ptr();
        // SAFETY: (whole body) `t` addresses TILE floats; `a`, `b` per the contract.
        unsafe {
            if acc {
                // The old partial sums are added at the end: fetch them meanwhile.
                for i in 0..M {
                    _mm_prefetch::<_MM_HINT_T0>(t.add(i * NR).cast());
                    _mm_prefetch::<_MM_HINT_T0>(t.add(i * NR + 15).cast());
                }
            }
            let mut c0 = [_mm256_setzero_ps(); M];
            let mut c1 = [_mm256_setzero_ps(); M];
            let mut ap = a;
            let mut bp = b;
            macro_rules! step {
                ($u:expr) => {{
                    let b0 = _mm256_loadu_ps(bp.add($u * NR));
                    let b1 = if WIDE {
                        _mm256_loadu_ps(bp.add($u * NR + 8))
                    } else {
                        b0
                    };
                    for i in 0..M {
                        let av = _mm256_broadcast_ss(&*ap.add($u * MR + i));
                        c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
                        if WIDE {
                            c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
                        }
                    }
                }};
            }
            let mut k = 0;
            while k + 4 <= kc {
                _mm_prefetch::<_MM_HINT_T0>(bp.add(8 * NR).cast());
                step!(0);
                step!(1);
                _mm_prefetch::<_MM_HINT_T0>(bp.add(10 * NR).cast());
                step!(2);
                step!(3);
                ap = ap.add(4 * MR);
                bp = bp.add(4 * NR);
                k += 4;
            }
            while k < kc {
                step!(0);
                ap = ap.add(MR);
                bp = bp.add(NR);
                k += 1;
            }
            if acc {
                for i in 0..M {
                    c0[i] = _mm256_add_ps(c0[i], _mm256_loadu_ps(t.add(i * NR)));
                    if WIDE {
                        c1[i] = _mm256_add_ps(c1[i], _mm256_loadu_ps(t.add(i * NR + 8)));
                    }
                }
            }
            for i in 0..M {
                _mm256_storeu_ps(t.add(i * NR), c0[i]);
                if WIDE {
                    _mm256_storeu_ps(t.add(i * NR + 8), c1[i]);
                }
            }
        }
    }

    /// Packs A with 8×8 transposes (unit K stride) or a scalar gather.
    pub(super) fn pack_a(mr: usize, a: &ARows<'_>, dst: &mut [f32]) {
        check_rows(mr, a, dst);
        // SAFETY: AVX2 is available (checked before this function is selected); the
        // pointers follow the `ARows` contract and `dst` is long enough (checked above).
        unsafe { pack_a_avx2(mr, a, dst.as_mut_ptr()) }
    }

    /// # Safety
    /// AVX2 available; `a` per [`ARows`]; `dst` holds `nseg * seg_len * MR + 8` floats.
    #[target_feature(enable = "avx2")]
    unsafe fn pack_a_avx2(mr: usize, a: &ARows<'_>, dst: *mut f32) {
        // SAFETY: (whole body) reads stay within each row's `seg_len` elements at
        // stride `ks`; writes stay below `nseg * seg_len * MR + 8`.
        unsafe {
            let mut d = dst;
            for s in 0..a.nseg {
                let rows: [*const f32; MR] =
                    std::array::from_fn(|i| a.ptrs[s * MR + i.min(mr - 1)]);
                let mut k = 0;
                if a.ks == 1 {
                    while k + 8 <= a.seg_len {
                        let r: [__m256; 8] =
                            std::array::from_fn(|i| _mm256_loadu_ps(rows[i.min(MR - 1)].add(k)));
                        let c = transpose8(r);
                        // Each store writes 8 floats, the last 2 of which the next
                        // store (or the slack) overwrites.
                        for (j, cj) in c.iter().enumerate() {
                            _mm256_storeu_ps(d.add(j * MR), *cj);
                        }
                        d = d.add(8 * MR);
                        k += 8;
                    }
                }
                while k < a.seg_len {
                    for (i, r) in rows.iter().enumerate() {
                        *d.add(i) = *r.add(k * a.ks);
                    }
                    d = d.add(MR);
                    k += 1;
                }
            }
        }
    }

    /// # Safety
    /// AVX2 available; 16 rows of `kc` floats; `dst` holds `kc * NR` floats.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn pack_b_rows16(rows: &[*const f32], kc: usize, dst: *mut f32) {
        // SAFETY: (whole body) reads stay below `kc` per row, writes below `kc * NR`.
        unsafe {
            for h in 0..2 {
                let r = &rows[8 * h..8 * h + 8];
                let mut k = 0;
                while k + 8 <= kc {
                    let v: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(r[i].add(k)));
                    let c = transpose8(v);
                    for (j, cj) in c.iter().enumerate() {
                        _mm256_storeu_ps(dst.add((k + j) * NR + 8 * h), *cj);
                    }
                    k += 8;
                }
                while k < kc {
                    for (i, ri) in r.iter().enumerate() {
                        *dst.add(k * NR + 8 * h + i) = *ri.add(k);
                    }
                    k += 1;
                }
            }
        }
    }

    /// Fills `out[..q]` with `src[2 * i]` 8 at a time while `2 * q + 16 <= src.len()`;
    /// returns `q`.
    ///
    /// # Safety
    /// AVX2 available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn gather_stride2(out: &mut [f32], src: &[f32]) -> usize {
        let mut q = 0;
        // SAFETY: (whole body) the loop condition keeps reads inside `src` and writes
        // inside `out`.
        unsafe {
            while q + 8 <= out.len() && 2 * q + 16 <= src.len() {
                let a = _mm256_loadu_ps(src.as_ptr().add(2 * q));
                let b = _mm256_loadu_ps(src.as_ptr().add(2 * q + 8));
                // a0 a2 b0 b2 | a4 a6 b4 b6 -> a0 a2 a4 a6 b0 b2 b4 b6
                let e = _mm256_shuffle_ps::<0x88>(a, b);
                let e = _mm256_castpd_ps(_mm256_permute4x64_pd::<0xD8>(_mm256_castps_pd(e)));
                _mm256_storeu_ps(out.as_mut_ptr().add(q), e);
                q += 8;
            }
        }
        q
    }

    /// [`super::transpose_8_rows`] eight columns at a time while they last; returns the
    /// columns done.
    ///
    /// # Safety
    /// AVX2 available; the pointers as `super::transpose_8_rows` takes them.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn transpose_8_rows(
        src: *const f32,
        rs: usize,
        n: usize,
        dst: *mut f32,
        ds: usize,
    ) -> usize {
        let mut j = 0;
        // SAFETY: (whole body) rows `k < 8`, columns `j + 8 <= n`: inside both
        // operands per the contract.
        unsafe {
            while j + 8 <= n {
                let r: [__m256; 8] = std::array::from_fn(|k| _mm256_loadu_ps(src.add(k * rs + j)));
                for (c, v) in transpose8(r).into_iter().enumerate() {
                    _mm256_storeu_ps(dst.add((j + c) * ds), v);
                }
                j += 8;
            }
        }
        j
    }

    /// Transposes 8 rows of 8 floats into 8 columns.
    #[inline(always)]
    pub(super) unsafe fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
        // SAFETY: register-only AVX operations; callers enable AVX2.
        unsafe {
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            let s0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let s1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let s2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let s3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let s4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let s5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let s6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let s7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            [
                _mm256_permute2f128_ps::<0x20>(s0, s4),
                _mm256_permute2f128_ps::<0x20>(s1, s5),
                _mm256_permute2f128_ps::<0x20>(s2, s6),
                _mm256_permute2f128_ps::<0x20>(s3, s7),
                _mm256_permute2f128_ps::<0x31>(s0, s4),
                _mm256_permute2f128_ps::<0x31>(s1, s5),
                _mm256_permute2f128_ps::<0x31>(s2, s6),
                _mm256_permute2f128_ps::<0x31>(s3, s7),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain dense row-major GEMM through the engine.
    struct Dense<'a> {
        m: usize,
        n: usize,
        k: usize,
        a: &'a [f32],
        b: &'a [f32],
        c: std::sync::Mutex<&'a mut [f32]>,
        in_place: bool,
        packed: Option<&'a PackedB>,
        fused: Option<FusedOut>,
        /// K blocks other than the even ones.
        blocks: Option<Vec<(usize, usize)>>,
    }

    impl<'a> Dense<'a> {
        /// `c = a · b` (row-major, `m × k` times `k × n`), A packed or read in place;
        /// nothing packed beforehand, no fused chain, even K blocks.
        fn new(
            (m, n, k): (usize, usize, usize),
            a: &'a [f32],
            b: &'a [f32],
            c: &'a mut [f32],
            in_place: bool,
        ) -> Self {
            Self {
                m,
                n,
                k,
                a,
                b,
                c: std::sync::Mutex::new(c),
                in_place,
                packed: None,
                fused: None,
                blocks: None,
            }
        }
    }

    impl GemmProblem for Dense<'_> {
        fn k_blocks(&self, kc: usize) -> Vec<(usize, usize)> {
            self.blocks
                .clone()
                .unwrap_or_else(|| even_k_blocks(self.k, kc))
        }
        fn fused_out(&self) -> Option<&FusedOut> {
            self.fused.as_ref()
        }
        fn dims(&self) -> (usize, usize, usize) {
            (self.m, self.n, self.k)
        }
        fn a_in_place(&self) -> bool {
            self.in_place
        }
        fn packed_b(&self) -> Option<&PackedB> {
            self.packed
        }
        fn a_rows(
            &self,
            i0: usize,
            mr: usize,
            k0: usize,
            _kc: usize,
            ptrs: &mut Vec<*const f32>,
        ) -> (usize, usize, usize) {
            for i in 0..MR {
                let row = (i0 + i.min(mr - 1)) * self.k + k0;
                ptrs.push(self.a[row..].as_ptr());
            }
            (1, _kc, 1)
        }
        fn pack_b(&self, k0: usize, kc: usize, j0: usize, nc: usize, dst: &mut [f32]) {
            for p in 0..nc.div_ceil(NR) {
                for k in 0..kc {
                    for j in 0..NR {
                        let col = j0 + p * NR + j;
                        dst[p * panel_stride(kc) + k * NR + j] = if col < j0 + nc {
                            self.b[(k0 + k) * self.n + col]
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
        fn write_tile(&self, i0: usize, mr: usize, j0: usize, nr: usize, tile: &[f32; TILE]) {
            let mut c = self.c.lock().unwrap();
            for i in 0..mr {
                for j in 0..nr {
                    c[(i0 + i) * self.n + j0 + j] = tile[i * NR + j];
                }
            }
        }
    }

    /// `rows_times_panels` sums each row's K steps in order, one rounding per
    /// multiply-add, whatever the row tile's height (Winograd's tiles depend on the
    /// thread count; its results must not): bit for bit a sequential `mul_add` chain.
    /// 13 rows (tiles of 6, 6 and 1, or even ones of 5, 4 and 4), 104 columns in 7
    /// panels: with AVX-512 a run of four, then a pair, then a last panel of 8 columns
    /// on its own.
    #[test]
    fn rows_times_panels_sums_each_row_in_order() {
        if pair_isa().is_none() {
            return;
        }
        let (m, n, kc) = (13usize, 104usize, 37usize);
        let val = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 37.0;
        let a: Vec<f32> = (0..m * kc).map(val).collect();
        let bd: Vec<f32> = (0..kc * n).map(|i| val(i + 31)).collect();
        let ps = panel_stride(kc);
        let mut b = vec![0f32; n.div_ceil(NR) * ps];
        for k in 0..kc {
            for j in 0..n {
                b[(j / NR) * ps + k * NR + j % NR] = bd[k * n + j];
            }
        }
        let ldc = n + 3;
        for even in [false, true] {
            let mut c = vec![f32::NAN; m * ldc];
            // SAFETY: row `i` of A holds `kc` floats; C holds `m` rows of `ldc >= n`.
            unsafe {
                rows_times_panels(
                    (m, n, kc),
                    |i| a[i * kc..].as_ptr(),
                    &b,
                    c.as_mut_ptr(),
                    ldc,
                    &[],
                    even,
                );
            }
            for i in 0..m {
                for j in 0..n {
                    let want = (0..kc).fold(0f32, |s, k| a[i * kc + k].mul_add(bd[k * n + j], s));
                    assert_eq!(
                        c[i * ldc + j].to_bits(),
                        want.to_bits(),
                        "even {even}, row {i}, column {j}: {} against {want}",
                        c[i * ldc + j]
                    );
                }
            }
        }
    }

    /// `rows_times_pair` leaves each row tile's products with two panels in its two
    /// register tiles: one multiply-add chain over K in order per element, added to
    /// the tile's partial sum with `acc`; partial row tiles (13 rows) and a `kc` off
    /// the unrolling (37) included.
    #[test]
    fn rows_times_pair_keeps_partial_sums_in_tiles() {
        if pair_isa().is_none() {
            return;
        }
        let (m, kc) = (13usize, 37usize);
        let val = |i: usize| ((i * 7919 % 1000) as f32 - 500.0) / 37.0;
        let a: Vec<f32> = (0..m * kc).map(val).collect();
        let b: Vec<f32> = (0..2 * kc * NR).map(|i| val(i + 31)).collect();
        let (b0, b1) = b.split_at(kc * NR);
        let rows = m.div_ceil(MR);
        let start = |t: usize, e: usize| val(t * TILE + e + 7);
        for acc in [false, true] {
            let mut tiles: Vec<[f32; TILE]> = (0..2 * rows)
                .map(|t| std::array::from_fn(|e| start(t, e)))
                .collect();
            // SAFETY: row `i` of A holds `kc` floats.
            unsafe {
                rows_times_pair(
                    (m, kc),
                    |i| a[i * kc..].as_ptr(),
                    (b0, b1),
                    &mut tiles,
                    acc,
                    &b,
                );
            }
            for i in 0..m {
                for (h, bh) in [b0, b1].into_iter().enumerate() {
                    let t = 2 * (i / MR) + h;
                    for j in 0..NR {
                        let e = (i % MR) * NR + j;
                        let chain =
                            (0..kc).fold(0f32, |s, k| a[i * kc + k].mul_add(bh[k * NR + j], s));
                        let want = if acc { start(t, e) + chain } else { chain };
                        assert_eq!(
                            tiles[t][e].to_bits(),
                            want.to_bits(),
                            "acc {acc}, row {i}, panel {h}, column {j}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn engine_matches_naive_gemm() {
        for &(m, n, k, threads) in &[
            (1usize, 1usize, 1usize, 1usize),
            (7, 33, 5, 2),
            (13, 17, 600, 2),
            (64, 5, 300, 2),
            (3, 100, 0, 1),
            (20, 200, 300, 2), // columns split, several chunks each: shared packed A
            (23, 90, 130, 1),
            (200, 700, 300, 16), // a 2 × 8 grid: shared packed A and B
            (50, 50, 70, 8),     // a 2 × 4 grid of one panel each
            (600, 40, 70, 3),    // row tiles in pieces (four per thread)
            (400, 70, 130, 2),   // two threads: pieces of 16 row tiles (two each)
            (20, 2100, 40, 4),   // panels in pieces (four per thread)
            (196, 256, 70, 2),   // as pixel rows: halves of the rows, not the columns
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
            let exec = Exec::new(threads);
            let blocking = Blocking {
                kc: 128,
                nc: 32,
                pixel_rows: (m, n) == (196, 256),
            };
            // Packed A, A read in place (where the CPU has the kernel), and all of B
            // packed beforehand: the same exact results.
            for (in_place, prepacked) in [(false, false), (true, false), (false, true)] {
                let mut c = vec![f32::NAN; m * n];
                let kb = even_k_blocks(k, blocking.kc);
                let mut scratch = vec![0f32; scratch_len(m, n, &kb, blocking, threads, prepacked)];
                let mut p = Dense::new((m, n, k), &a, &b, &mut c, in_place);
                let packed = prepacked.then(|| PackedB::new(&p, &exec, blocking));
                p.packed = packed.as_ref();
                run(&p, &exec, blocking, &mut scratch);
                for i in 0..m {
                    for j in 0..n {
                        let e: f32 = (0..k).map(|q| a[i * k + q] * b[q * n + j]).sum();
                        assert_eq!(
                            c[i * n + j],
                            e,
                            "({m},{n},{k}) in place {in_place} prepacked {prepacked} at ({i},{j})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn split_grids_cover_the_output_once_and_share_out_operands() {
        // (M, N, threads, pixel rows) → (row parts, column parts).
        for (m, n, t, pixel_rows, rows, cols) in [
            // Two threads halve the larger dimension, as before grids existed.
            (3136, 256, 2, false, 2, 1),
            (196, 1024, 2, false, 1, 2),
            (1024, 1024, 2, false, 1, 2),
            // Many threads on a mid-sized output: a grid, not slivers that each read
            // all of the other operand.
            (196, 256, 16, false, 4, 4),
            (12544, 64, 16, false, 16, 1),
            (49, 2048, 16, false, 1, 16),
            (5, 5, 1, false, 1, 1),
            // Pixel rows: two threads halve them where that costs at most 15% more in
            // the model (ResNet-50's 14² layers at batch 1), not where it costs 30%
            // more (7²); more threads keep the model's grid.
            (196, 1024, 2, true, 2, 1),
            (196, 256, 2, true, 2, 1),
            (49, 2048, 2, true, 1, 2),
            (49, 512, 2, true, 1, 2),
            (196, 256, 16, true, 4, 4),
        ] {
            assert_eq!(
                choose_split(m, n, t, pixel_rows),
                Split { rows, cols },
                "{m}×{n} over {t}, pixel rows {pixel_rows}"
            );
        }
        let choose_split = |m, n, t| choose_split(m, n, t, false);
        // From three threads, pieces along row tiles where a share has enough of
        // them, else along panels (the two cases `engine_matches_naive_gemm` runs).
        let cut_b = |m: usize, n: usize, t: usize, b_packed: bool| {
            pieces(
                choose_split(m, n, t),
                m.div_ceil(MR),
                n.div_ceil(NR),
                t,
                b_packed,
            )
        };
        let cut = |m: usize, n: usize, t: usize| cut_b(m, n, t, true);
        assert_eq!(cut(600, 40, 3), (8, true));
        assert_eq!(cut(20, 2100, 4), (8, false));
        // Two threads: pieces of at least 16 row tiles, never along panels.
        assert_eq!(cut(3136, 256, 2), (8, true));
        assert_eq!(cut(784, 512, 2), (4, true));
        assert_eq!(cut(196, 1024, 2), (2, true));
        assert_eq!(cut(20, 2100, 2), (1, true));
        assert_eq!(cut(3136, 256, 1), (1, true));
        // ... where B is packed before the pass (from three threads, in any case).
        assert_eq!(cut_b(3136, 256, 2, false), (1, true));
        assert_eq!(cut_b(600, 40, 3, false), (8, true));
        assert_eq!(cut(3136, 256, 16), (8, true));
        // A 14² layer at batch 1: 9 row tiles a share, in 4 pieces.
        assert_eq!(cut(196, 256, 16), (4, true));
        assert_eq!(cut(12, 256, 16), (1, true));
        for (m, n) in [
            (1, 1),
            (7, 33),
            (196, 256),
            (1568, 1024),
            (49, 2048),
            (40, 3),
        ] {
            for (threads, pixel_rows) in [1, 2, 3, 6, 8, 16]
                .into_iter()
                .flat_map(|t| [(t, false), (t, true)])
            {
                let s = super::choose_split(m, n, threads, pixel_rows);
                assert_eq!(s.rows * s.cols, threads, "{m}×{n} over {threads}");
                let (tiles, panels) = (m.div_ceil(MR), n.div_ceil(NR));
                let mut seen = vec![0u8; tiles * panels];
                for t in 0..threads + 2 {
                    let (tr, pr) = s.ranges(tiles, panels, t);
                    for it in tr {
                        for q in pr.clone() {
                            seen[it * panels + q] += 1;
                        }
                    }
                }
                assert!(
                    seen.iter().all(|&c| c == 1),
                    "{m}×{n} over {threads}: {s:?}"
                );
            }
        }
    }

    /// Two threads halving an odd number of row tiles (ResNet-50's 14² layers at batch
    /// 1: 33) cut the middle tile's columns between them; every element is still the
    /// multiply-add chain one thread computes, bit for bit, with one K block or
    /// several, A packed or read in place, an even or odd number of panels each side.
    #[test]
    fn a_middle_tile_cut_by_columns_gives_one_threads_bits() {
        let halves = Split { rows: 2, cols: 1 };
        assert_eq!(middle_tile(halves, 33, 16, 1, true), Some((16, 8)));
        assert_eq!(middle_tile(halves, 33, 7, 1, true), Some((16, 4)));
        assert_eq!(middle_tile(halves, 34, 16, 1, true), None);
        assert_eq!(middle_tile(halves, 33, 16, 2, true), None);
        assert_eq!(middle_tile(halves, 33, 3, 1, true), None);
        assert_eq!(middle_tile(halves, 33, 16, 1, false), None);
        assert_eq!(
            middle_tile(Split { rows: 1, cols: 2 }, 33, 16, 1, true),
            None
        );
        let m = 196usize;
        for (n, k) in [(256usize, 70usize), (100, 300), (72, 600)] {
            let blocking = Blocking {
                kc: 128,
                nc: 384,
                pixel_rows: true,
            };
            let (tiles, panels) = (m.div_ceil(MR), n.div_ceil(NR));
            let grid = choose_split(m, n, 2, true);
            let (per, _) = pieces(grid, tiles, panels, 2, true);
            assert!(
                middle_tile(grid, tiles, panels, per, prepack_b(m, n, k, 2, blocking)).is_some(),
                "{m}×{n}"
            );
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 37) % 101) as f32 * 0.013 - 0.6)
                .collect();
            let b: Vec<f32> = (0..k * n)
                .map(|i| ((i * 53) % 97) as f32 * 0.021 - 1.1)
                .collect();
            for in_place in [false, true] {
                let outs: Vec<Vec<f32>> = [1, 2]
                    .into_iter()
                    .map(|threads| {
                        let exec = Exec::new(threads);
                        let mut c = vec![f32::NAN; m * n];
                        let kb = even_k_blocks(k, blocking.kc);
                        let mut scratch =
                            vec![0f32; scratch_len(m, n, &kb, blocking, threads, false)];
                        let p = Dense::new((m, n, k), &a, &b, &mut c, in_place);
                        run(&p, &exec, blocking, &mut scratch);
                        c
                    })
                    .collect();
                let differ = outs[0]
                    .iter()
                    .zip(&outs[1])
                    .position(|(x, y)| x.to_bits() != y.to_bits() || x.is_nan());
                assert_eq!(differ, None, "{m}×{n}×{k}, A in place {in_place}");
            }
        }
    }

    /// K blocks of very different lengths (a problem's own split, such as a
    /// convolution's filter taps) fit the scratch [`scratch_len`] asks for and give
    /// the plain product, on one and two threads, A packed or read in place.
    #[test]
    fn uneven_k_blocks_fit_the_scratch() {
        let (m, n, k) = (40usize, 70usize, 300usize);
        let blocks = vec![(0, 20), (20, 250), (270, 30)];
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
        let blocking = Blocking {
            kc: 100,
            ..Blocking::default()
        };
        for threads in [1, 2] {
            for in_place in [false, true] {
                let mut c = vec![f32::NAN; m * n];
                let mut scratch = vec![0f32; scratch_len(m, n, &blocks, blocking, threads, false)];
                let p = Dense {
                    blocks: Some(blocks.clone()),
                    ..Dense::new((m, n, k), &a, &b, &mut c, in_place)
                };
                run(&p, &Exec::new(threads), blocking, &mut scratch);
                for i in 0..m {
                    for j in 0..n {
                        let e: f32 = (0..k).map(|q| a[i * k + q] * b[q * n + j]).sum();
                        assert_eq!(c[i * n + j], e, "threads {threads} at ({i},{j})");
                    }
                }
            }
        }
    }

    /// A fused chain (scale-and-shift, residual rows, ReLU; per-column add, scalar
    /// multiply) stored by the pair kernels gives the plain GEMM's values with the
    /// steps applied in order, for odd panel counts, partial row tiles, several K
    /// blocks or one short one, A packed or read in place, one or two threads (exact:
    /// small integers).
    #[test]
    fn fused_chain_matches_the_steps_applied_after_the_gemm() {
        // Chunks of two panels, then of ten (two quads of the AVX-512 sweep, a pair
        // and a panel of 5 columns); then one K block of 64 or 20 steps, whose sweep
        // goes four panels at a time down the row tiles (runs of 4, 4 and 2 panels),
        // its epilogue lines fetched a row per K iteration (64) or all at once (20).
        for (n, nc, k) in [
            (37, 32, 300),
            (149, 384, 300),
            (149, 384, 64),
            (149, 384, 20),
        ] {
            fused_chain_case(
                (n, k),
                Blocking {
                    kc: 128,
                    nc,
                    ..Blocking::default()
                },
            );
        }
    }

    fn fused_chain_case((n, k): (usize, usize), blocking: Blocking) {
        let m = 13usize;
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 13) as f32 - 6.0).collect();
        let scale: Vec<f32> = (0..n).map(|j| (j % 3) as f32 - 1.0).collect();
        let shift: Vec<f32> = (0..n).map(|j| (j % 5) as f32).collect();
        let bias: Vec<f32> = (0..n).map(|j| (j % 4) as f32 - 2.0).collect();
        let ys = n + 3;
        let res: Vec<f32> = (0..m * ys).map(|i| ((i * 5) % 7) as f32 - 3.0).collect();
        for (threads, in_place) in [(1, false), (2, false), (1, true), (2, true)] {
            for chain in 0..2 {
                let mut y = vec![f32::NAN; m * ys];
                let steps = if chain == 0 {
                    vec![
                        FusedStep::ScaleShift(scale.as_ptr(), shift.as_ptr()),
                        FusedStep::AddRows(res.as_ptr(), ys),
                        FusedStep::Relu,
                    ]
                } else {
                    vec![
                        FusedStep::AddCols(bias.as_ptr()),
                        FusedStep::MulScalar(-2.0),
                    ]
                };
                // SAFETY: `y` and `res` hold `m` rows of `ys >= n` floats, the
                // per-column arrays `n`; all outlive the GEMM below.
                let fused = unsafe { FusedOut::new(steps, y.as_mut_ptr(), ys) };
                let mut c = vec![f32::NAN; m * n];
                let p = Dense {
                    fused: Some(fused),
                    ..Dense::new((m, n, k), &a, &b, &mut c, in_place)
                };
                let exec = Exec::new(threads);
                let kb = even_k_blocks(k, blocking.kc);
                let mut scratch = vec![0f32; scratch_len(m, n, &kb, blocking, threads, false)];
                run(&p, &exec, blocking, &mut scratch);
                let pair = select_pair_kernel().is_some();
                for i in 0..m {
                    for j in 0..n {
                        let x: f32 = (0..k).map(|q| a[i * k + q] * b[q * n + j]).sum();
                        let want = if chain == 0 {
                            (x * scale[j] + shift[j] + res[i * ys + j]).max(0.0)
                        } else {
                            (x + bias[j]) * -2.0
                        };
                        // Without the pair kernels the tiles go to `write_tile`.
                        let (got, want) = if pair {
                            (y[i * ys + j], want)
                        } else {
                            (c[i * n + j], x)
                        };
                        assert_eq!(got, want, "chain {chain} threads {threads} at ({i},{j})");
                    }
                    if pair {
                        // Columns past `n` in a row are not written.
                        assert!(y[i * ys + n..(i + 1) * ys].iter().all(|v| v.is_nan()));
                    }
                }
            }
        }
    }

    /// The prefetch cursor hands out every line of its regions once, in reading order,
    /// never further than its lead past the furthest read.
    #[test]
    fn ahead_walks_each_region_once_in_order_and_stays_within_its_lead() {
        let a = vec![0f32; 40_000];
        let b = vec![0f32; 90_000];
        let regions = vec![(a.as_ptr(), a.len()), (b.as_ptr(), b.len())];
        // 64 K steps: at most 16 lines per call per line a kernel fetches every four
        // steps.
        let mut ahead = Ahead::new(regions, 20, 64);
        assert_eq!(ahead.per_call, 16 * FAR_PER_STEP);
        let mut seen: Vec<*const f32> = Vec::new();
        // The kernels read region 0 in 4000-float steps, then region 1.
        let reads = (0..10)
            .map(|i| (0, i * 4000))
            .chain((0..23).map(|i| (1, i * 4000)));
        for (region, offset) in reads {
            for _ in 0..40 {
                let far = ahead.take(region, offset, 4000);
                let at = seen.len() * 16;
                assert!(at <= ahead.frontier + Ahead::LEAD, "lead exceeded at {at}");
                seen.extend((0..far.lines).map(|l| far.p.wrapping_add(16 * l)));
            }
        }
        let want: Vec<*const f32> = (0..a.len().div_ceil(16))
            .map(|l| a.as_ptr().wrapping_add(16 * l))
            .chain((0..b.len().div_ceil(16)).map(|l| b.as_ptr().wrapping_add(16 * l)))
            .collect();
        assert_eq!(seen, want, "every line of both regions, in order, once");
        assert_eq!(ahead.take(1, 0, 16).lines, 0, "nothing left");
    }

    /// The pair kernel (AVX-512 or AVX2) against the portable kernel on each panel, every row
    /// count, with and without accumulation (exact: small integers).
    #[test]
    fn pair_kernel_matches_the_portable_kernel() {
        let Some(pair) = select_pair_kernel() else {
            // Only where the CPU lacks AVX2 + FMA (or HIPDNN_CPU_ISA says portable).
            #[cfg(target_arch = "x86_64")]
            assert!(
                !(std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma"))
                    || isa_cap() == "portable"
            );
            return;
        };
        let kc = 37;
        let a: Vec<f32> = (0..kc * MR).map(|i| ((i * 5) % 9) as f32 - 4.0).collect();
        let b0: Vec<f32> = (0..kc * NR).map(|i| ((i * 3) % 7) as f32 - 3.0).collect();
        let b1: Vec<f32> = (0..kc * NR).map(|i| ((i * 11) % 13) as f32 - 6.0).collect();
        for mr in 1..=MR {
            for acc in [false, true] {
                let start: [f32; TILE] = std::array::from_fn(|i| (i % 5) as f32);
                let (mut t0, mut t1) = (start, start);
                pair(
                    kc,
                    &a,
                    &b0,
                    &b1,
                    &mut t0,
                    &mut t1,
                    (acc, mr, Far::NONE),
                    None,
                );
                for (b, got) in [(&b0, &t0), (&b1, &t1)] {
                    let mut want = start;
                    portable_kernel(kc, &a, b, &mut want, (acc, mr, NR));
                    assert_eq!(got[..mr * NR], want[..mr * NR], "mr {mr} acc {acc}");
                }
            }
        }
    }
}
