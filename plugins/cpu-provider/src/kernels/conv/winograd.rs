//! Winograd F(2×2, 3×3) and F(4×4, 3×3) for channels-last 3×3 stride-1 convolutions,
//! and F(2×2, 3×3) for stride-2 ones.
//!
//! Each `m × m` block of output pixels (a *tile*, `m` = 2 or 4) comes from an
//! `(m + 2)²` patch of the input: `Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A` per channel pair,
//! summed over input channels. With the `(m + 2)²` transformed positions `ξ` that sum
//! is as many independent products `M_ξ[tiles × K] = V_ξ[tiles × C] · U_ξ[C × K]`:
//! per output pixel and channel pair 4 multiply-adds (F(2×2)) or 2.25 (F(4×4))
//! instead of the direct form's 9. [`variant`] picks F(4×4) where its larger
//! transformed filters still pay (enough tiles, and filters small enough to stream per
//! chunk of tiles or large enough to go in phases).
//!
//! At stride 2 ([`Variant::S2`]) a 2×2 tile comes from a 5×5 patch: per dimension
//! the filter's even taps meet only the patch's even inputs (a stride-1 2-tap
//! correlation, F(2, 2): 3 products for 2 outputs) and its middle tap only the odd
//! ones (2 products), so the tile takes 5 × 5 = 25 products against 36, with
//! transforms of additions only. Everything else (chunks, phases, the products on the
//! pair kernels, the epilogue) is shared; only the patch's stride and size differ.
//!
//! * The filters are transformed once per execution straight into the packed panel
//!   layout of the GEMM engine's B (`U_ξ`, zero-padded to whole panels).
//! * The threads take contiguous ranges of tiles and work through them in chunks that
//!   keep a chunk's `V` and `M` (`(m + 2)² × chunk × (C + K)` floats) in L2: the input
//!   transform writes `V_ξ` (rows of `C` floats), the products run on the GEMM's pair
//!   kernels with `V_ξ`'s rows read in place ([`gemm::rows_times_panels`]), and the
//!   output transform turns each tile's `M` rows into its `m²` output pixels and runs
//!   the epilogue on them: in the in-register form's steps ([`Prepared::fused_rows`])
//!   where it has one, else through the general epilogue. No synchronisation between
//!   the phases: a chunk is one thread's.
//! * Small images on many threads, and filters too large to stream once per chunk
//!   (over 256 × 256 channels), go in phases instead ([`phased`]): all threads
//!   transform a round of tiles, then split the products by position and pairs of
//!   output-channel panels (each transformed filter panel read by one thread, once per
//!   round), then transform the outputs. On two threads of an AMD CPU, with enough
//!   tiles each, small enough for one chunk, each thread keeps its own tiles instead
//!   ([`own_tiles`]): nothing goes from core to core, which matters where the two cores
//!   do not share a last-level cache.
//! * Constant filters from 256 × 256 channels on small images ([`streamed`]) are kept
//!   as their taps instead, and transformed block by block as one thread per pair of
//!   output-channel panels streams them through the products: each tap is read once
//!   per run, and the transformed values never go through memory.
//!
//! Planned where the CPU has the pair kernels (AVX-512, or AVX2 + FMA: the transforms
//! come in both, sixteen or eight channels per vector, the same sums in the same order,
//! so the same results). The transforms round in
//! `f32`: results differ from the direct sum in the last bits, F(4×4) by more (its
//! points 0, 1, −1, ½, −2 keep that to about 3.5× F(2×2)'s error, a third of what the
//! usual ±2 give: ResNet-50's block at batch 1 checks at 6.1e-6 against 1.6e-6, within
//! the 1.8e-5 tolerance), and are the same from run to run and for every thread count
//! (each tile's arithmetic is fixed).

use std::sync::Arc;

use super::*;
use crate::kernels::exec::{Slots, piece};
use crate::kernels::gemm::{FusedStep, PIECES_FROM, PairIsa, TILE, panel_stride};

/// Transformed positions per tile, at most (F(4×4, 3×3): 6×6).
const XI_MAX: usize = 36;

/// The largest output tile edge (F(4×4)).
const MAX_TILE_EDGE: usize = 4;

/// A Winograd variant F(m×m, 3×3): `m × m` output tiles from `(m + 2) × (m + 2)`
/// input patches, `(m + 2)²` transformed positions; with stride 2, `2 × 2` output
/// tiles from `5 × 5` patches, 25 positions ([`Variant::S2`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Variant {
    m: usize,
    stride: usize,
}

impl Variant {
    /// F(2×2, 3×3).
    const F2: Self = Self { m: 2, stride: 1 };
    /// F(4×4, 3×3).
    const F4: Self = Self { m: 4, stride: 1 };
    /// F(2×2, 3×3) at stride 2: per dimension the filter's even taps (0 and 2) run over
    /// the patch's even inputs as F(2, 2) (3 products for 2 outputs) and its middle tap
    /// over the odd ones (2 products), 5 × 5 = 25 products per 2 × 2 outputs against
    /// the direct form's 36. Every coefficient is 0 or ±1 ([`input_tile_s2`]).
    const S2: Self = Self { m: 2, stride: 2 };

    /// Output tile edge.
    pub(super) fn m(self) -> usize {
        self.m
    }

    /// Input patch edge.
    fn p(self) -> usize {
        self.stride * (self.m - 1) + 3
    }

    /// Stride between the patches of neighbouring tiles (input pixels).
    fn step(self) -> usize {
        self.stride * self.m
    }

    /// Transformed positions per tile.
    fn xi(self) -> usize {
        self.p() * self.p()
    }
}

/// The variant for `geo`: F(4×4, 3×3) where it needs at most three quarters of F(2×2,
/// 3×3)'s multiply-adds (36 positions per 4×4 tile against 16 per 2×2: 1.78× fewer on
/// whole tiles, fewer where partial tiles waste more), and its transformed filters (36 ·
/// C · K floats, 2.25× F(2×2)'s) are read cheaply enough:
/// * at most 2.25 MiB (C · K ≤ 16384) with at least 32 tiles: each chunk of tiles
///   streams all of them (ResNet-50's 56² and 28² layers);
/// * or over [`PHASED_FILTERS`], so that the threads go in phases and read each filter
///   panel once per round, with at least 16 tiles, and 2 per thread, to use each read,
///   and `kept` (the transformed filters are kept between runs: transforming F(4×4)'s
///   on every run writes 2.25× F(2×2)'s, e.g. 9.4 against 4.2 MiB for 256 × 256
///   channels, which costs more than a 14² layer at batch 1 saves)
///   (ResNet-50's 14² layers, 256 channels, batch 1 and 8, and its 7² layers, 512
///   channels, from batch 8: 11–18% and 35% faster than F(2×2) on 2 threads of a Zen
///   3; the 7² layers at batch 1, 4 tiles, 1.6× slower; the 14² ones at batch 1 on 16
///   threads of a Xeon, 1 tile per thread, 20% slower).
///
/// Between the two (16384 < C · K, filters under 4 MiB) F(4×4) would stream its filters
/// per chunk: ResNet-50's 14² layers ran 1.4–1.8× slower that way at batch 8.
///
/// * or streamed ([`streamed`]): the filters are transformed as they are read, so
///   F(4×4)'s larger transformed filters cost no memory traffic (ResNet-50's 7² layers
///   at batch 1).
///
/// In phases each transformed filter value is read once per round, from memory in a
/// whole network (ResNet-50's filters, over 100 MB, stay in no cache), and used once
/// per tile: a variant costs about `(m + 2)² · (tiles + S)` where `S` is the
/// multiply-adds (in tiles) one value's read costs, [`FILTER_READ_TILES`]. With AVX-512
/// that makes ResNet-50's 14² layers at batch 1 F(2×2) (36 · (16 + 20) = 1296 against
/// 16 · (49 + 20) = 1104; in the whole network on 2 threads of a Xeon, 400 µs against
/// 560 per layer), and keeps F(4×4) from batch 8 and for its 7² layers at batch 8.
pub(super) fn variant(geo: &ConvGeometry, threads: usize, kept: bool) -> Variant {
    if geo.stride[1] == 2 {
        return Variant::S2;
    }
    let tiles = |v: Variant| total_tiles(geo, v);
    let (f2, f4) = (tiles(Variant::F2), tiles(Variant::F4));
    let fewer_macs = 4 * Variant::F4.xi() * f4 <= 3 * Variant::F2.xi() * f2;
    let chunked = geo.c * geo.k <= 1 << 14 && f4 >= 32;
    let read = FILTER_READ_TILES[usize::from(gemm::pair_isa() == Some(PairIsa::Avx512))];
    let in_phases = kept
        && packed_len(geo, Variant::F4) > PHASED_FILTERS
        && f4 >= 16.max(2 * threads.max(1))
        && Variant::F4.xi() * (f4 + read) <= Variant::F2.xi() * (f2 + read);
    let streams = kept && streamable(geo, threads);
    if fewer_macs && (chunked || in_phases || streams) {
        Variant::F4
    } else {
        Variant::F2
    }
}

/// Whether Winograd (either variant) can run `geo` with an `f32` input (read in place
/// when channels-last, else copied channels-last first: `FpropPlan::copies_input`):
/// one group, 2-D, a 3×3 undilated cross-correlation with stride 1 or 2 and padding
/// of at most 2, 16 to 512 input channels, at least 16 output channels, and the pair kernels
/// on this CPU.
pub(super) fn applies(geo: &ConvGeometry, x_f32: bool) -> bool {
    x_f32
        && geo.g == 1
        && !geo.flip
        && geo.inp[0] == 1
        && geo.filt == [1, 3, 3]
        && (geo.stride[1..] == [1, 1] || geo.stride[1..] == [2, 2])
        && geo.dil[1..] == [1, 1]
        && geo.pad[0] == 0
        && geo.pad[1] <= 2
        && geo.pad[2] <= 2
        && (16..=MAX_CHANNELS).contains(&geo.c)
        && geo.k >= 16
        && gemm::pair_isa().is_some()
}

/// Whether the variant for `geo` saves enough multiply-adds to be planned by default:
/// always at stride 1; at stride 2 where its products are at most three quarters of
/// the direct form's (25 per tile against 9 per output pixel: 0.69 on whole tiles, more
/// where partial tiles waste some). ResNet-50's stride-2 layers at 28² and 14² qualify
/// (0.69), its 7² one does not (16 tiles for 49 pixels: 0.91).
pub(super) fn pays(geo: &ConvGeometry) -> bool {
    geo.stride[1] == 1 || 4 * Variant::S2.xi() * total_tiles(geo, Variant::S2) <= 3 * 9 * geo.npix()
}

/// Tiles along (H, W).
fn tiles(geo: &ConvGeometry, v: Variant) -> (usize, usize) {
    (geo.out[1].div_ceil(v.m), geo.out[2].div_ceil(v.m))
}

/// Tiles per chunk: `V` and `M` of a chunk in about 768 KiB, a whole number of row
/// tiles of the micro-kernel.
fn chunk(geo: &ConvGeometry, v: Variant) -> usize {
    ((768 << 10) / tile_bytes(geo, v) / MR * MR).max(MR)
}

/// Bytes of one tile's `V` and `M` rows (all positions, `C + K` floats each).
fn tile_bytes(geo: &ConvGeometry, v: Variant) -> usize {
    v.xi() * (geo.c + geo.k) * 4
}

/// Floats of the packed transformed filters.
fn packed_len(geo: &ConvGeometry, v: Variant) -> usize {
    v.xi() * geo.k.div_ceil(NR) * panel_stride(geo.c)
}

/// Tiles per chunk on `threads` threads: all of a thread's tiles where it keeps them
/// ([`own_tiles`]), else [`chunk`].
fn chunk_on(geo: &ConvGeometry, v: Variant, threads: usize) -> usize {
    if own_tiles(geo, v, threads) {
        total_tiles(geo, v).div_ceil(threads)
    } else {
        chunk(geo, v)
    }
}

/// Floats each thread's chunk buffers take (`V`, `M`, and a cache line of slack).
fn per_thread_len(geo: &ConvGeometry, v: Variant, threads: usize) -> usize {
    v.xi() * chunk_on(geo, v, threads) * (geo.c + geo.k) + 16
}

/// Tiles a thread must have for [`own_tiles`]: four row tiles, so that each transformed
/// filter value it reads serves at least [`FILTER_READ_TILES`]' worth of tiles.
const OWN_MIN_TILES: usize = 4 * MR;

/// Bytes of `V` and `M` a thread's tiles may take for [`own_tiles`].
const OWN_MAX_BYTES: usize = 3 << 19;

/// Threads [`own_tiles`] takes at most: each thread reads all the transformed filters
/// once, so every added thread adds a read of them all.
const OWN_MAX_THREADS: usize = 2;

/// Whether each thread transforms, multiplies and transforms back its own tiles in one
/// chunk, rather than the threads working in phases: where the shapes allow it
/// ([`fits_own_tiles`]) on a CPU where it pays ([`own_tiles_pay`]).
fn own_tiles(geo: &ConvGeometry, v: Variant, threads: usize) -> bool {
    fits_own_tiles(geo, v, threads) && own_tiles_pay()
}

/// Whether [`own_tiles`]' shapes hold: stride 1, two threads, each with at least
/// [`OWN_MIN_TILES`] tiles whose `V` and `M` fit in 1.5 MiB (ResNet-50's 28² and 14²
/// layers at batch 1). Each thread then reads all the transformed filters, but
/// neither reads what the other wrote; in phases half of `V` and half of `M` (0.8–0.9
/// MB per layer there) go from core to core, and each transformed filter value is read
/// once, for all the tiles. At stride 2 ([`Variant::S2`], 25 positions) own tiles
/// gained nothing on the Zen 4 VM's two L3s and lost 33 µs a layer on one.
fn fits_own_tiles(geo: &ConvGeometry, v: Variant, threads: usize) -> bool {
    let mine = total_tiles(geo, v).div_ceil(threads.max(1));
    (2..=OWN_MAX_THREADS).contains(&threads)
        && v != Variant::S2
        && mine >= OWN_MIN_TILES
        && mine * tile_bytes(geo, v) <= OWN_MAX_BYTES
}

/// Whether each of two threads keeps its own Winograd tiles where they fit (`own_tiles`):
/// on AMD's CPUs, whose two threads may sit on two core complexes with an L3 each,
/// unless `HIPDNN_CPU_WINOGRAD_OWN` says `1` (on any CPU) or `0` (on none), read once
/// per process. On the Zen 4 VM, whose host puts its two vCPUs on one L3 or on two,
/// ResNet-50's 28² and 14² layers at batch 1 took 75–140 µs less each on two L3s (28²:
/// 590–713 against 465–575; 14²: 776–886 against 686–766) and up to 26 µs more on one
/// (28²: 346–369 against 370–395 µs; 14² within 15): ResNet-50 −2.8% and +0.3%. On two
/// cores of a Xeon VM (one L3 on a mesh, 100–150 ns between the cores) phases won: the
/// three 28² layers 890 against 1048 µs, the five 14² ones 2207 against 2604 (sums of
/// stage minimums, 16 alternating rounds of 40 executions), ResNet-50 at batch 1 1–2%
/// faster; on the 16-core Xeon pinned to two cores, the 14² layers 1.20–1.31× as fast.
pub fn own_tiles_pay() -> bool {
    static PAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAYS.get_or_init(|| vendor_default("HIPDNN_CPU_WINOGRAD_OWN"))
}

/// `1` or `0` from the environment variable `var`, else whether the CPU is AMD's (with
/// a warning for any other value).
fn vendor_default(var: &str) -> bool {
    crate::kernels::env_switch(var, cpu_is_amd)
}

/// Tiles of the whole convolution.
fn total_tiles(geo: &ConvGeometry, v: Variant) -> usize {
    let (th, tw) = tiles(geo, v);
    geo.n * th * tw
}

/// What reading one transformed filter value from memory costs, in multiply-adds per
/// value (tiles), with the AVX2 and the AVX-512 kernels: a core reads about 14 GB/s
/// from memory while it multiply-adds 37 (AVX2) or 75 (AVX-512) G per second, so 4
/// bytes cost about 10 or 20.
const FILTER_READ_TILES: [usize; 2] = [10, 20];

/// Input channels Winograd takes at most.
const MAX_CHANNELS: usize = 512;

/// Transformed filters (floats) above which the threads always work in phases: more
/// than 256 × 256 channels' F(2×2) filters (4 MiB).
const PHASED_FILTERS: usize = 1 << 20;

/// Whether the threads work in phases over shared `V` and `M` (input transform, the
/// products split by position and output-channel panels, output transform) rather than
/// each through its own tiles: unless [`own_tiles`], when a thread would have under
/// two chunks of tiles, so that each would stream all the transformed filters for a few
/// rows (small images on many threads), or when the transformed filters are larger than
/// [`PHASED_FILTERS`] (512 channels: 16 MiB), so that streaming them once per chunk
/// would cost more than their multiply-adds save (ResNet-50's 7² layers, 512 channels,
/// batch 8, 2 threads on a Zen 3: 9.6–11.3 ms per chunk against 6.7–7.0 ms in phases;
/// the direct form 10.4 ms).
fn phased(geo: &ConvGeometry, v: Variant, threads: usize) -> bool {
    !own_tiles(geo, v, threads)
        && (packed_len(geo, v) > PHASED_FILTERS
            || (threads > 1 && total_tiles(geo, v) < 2 * chunk(geo, v) * threads))
}

/// Tiles per phase round: `V` and `M` in about 16 MiB.
fn phase_tiles(geo: &ConvGeometry, v: Variant) -> usize {
    ((16 << 20) / tile_bytes(geo, v))
        .max(MR)
        .min(total_tiles(geo, v))
}

/// Whether constant (`kept`) filters are kept as their taps and transformed while they
/// stream through the products ([`run_streamed`]) rather than kept transformed: at
/// stride 1, filters that no cache holds (from 256 × 256 channels: F(2×2)'s
/// transformed ones over 4 MiB) over at most [`STREAM_TILES`] F(2×2) tiles, with a
/// pair of output-channel panels for every thread. Each transformed value is then used
/// by so few tiles that reading it from memory costs more than making it: F(2×2)'s 16
/// transformed taps are 1.8× the bytes of the 9 taps, F(4×4)'s 36 are 4×. ResNet-50's
/// 7² layers at batch 1 (512 channels, 9.4 MB of taps) on 2 threads of a Zen 4, in
/// the whole network: 0.72–0.83 ms as F(4×4) streamed, 0.88–0.92 as F(2×2) streamed,
/// against 1.06–1.14 kept transformed as F(2×2) (16.8 MB) and 1.12–1.16 on the direct
/// GEMM.
pub(super) fn streamed(geo: &ConvGeometry, v: Variant, threads: usize, kept: bool) -> bool {
    kept && v != Variant::S2 && streamable(geo, threads)
}

/// Whether [`streamed`] holds for `geo`'s constant filters at stride 1 on `threads`
/// threads.
fn streamable(geo: &ConvGeometry, threads: usize) -> bool {
    streaming_pays()
        && geo.stride[1] == 1
        && geo.c * geo.k >= 1 << 16
        && total_tiles(geo, Variant::F2) <= STREAM_TILES
        && geo.k.div_ceil(STREAM_COLS) >= threads
}

/// Whether this CPU streams constant filters (`streamed`) at all: on AMD's with the
/// AVX-512 kernels, where it was measured to pay (a Zen 4, above), unless
/// `HIPDNN_CPU_WINOGRAD_STREAM` says `1` (stream on any CPU) or `0` (never), read once
/// per process. With the AVX2 kernels the filters' transform on every run costs twice
/// the instructions for the same bytes saved: on 2 threads of a Zen 3 (AVX2, 32 MiB
/// L3) ResNet-50's two 7² 3×3 layers at batch 1 ran 1.16–1.30× as fast kept
/// transformed as F(2×2) as streamed as F(4×4) (stage minimums over 6 and 10
/// alternating rounds of `bench/stage_ab.sh`; 1405–1568 against 1641–1899 µs). On a
/// 16-core Xeon (AVX-512, two FMA units) ResNet-50's streamed layers at batch 1 ran slower
/// streamed than kept transformed as F(2×2) at 2, 8, 12 and 16 threads (1283 against
/// 983 µs at 2 threads, 336 against 238 at 16; about even at 4), and at 2 and 4
/// threads the direct GEMM beats both (`FpropPlan::for_constant_weights`). That Xeon
/// has a 300 MiB L3, which holds all of ResNet-50's kept filters, transformed or not,
/// from one execution to the next: streaming then saves no memory traffic and only
/// adds the transform. The Zen 4 VM's 32 MiB L3 holds a fraction of them. So the
/// vendor stands in for what decides it, the last-level cache against the filters a
/// network keeps, and the kernels' vector width for what the transform costs.
pub fn streaming_pays() -> bool {
    static PAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAYS.get_or_init(|| {
        crate::kernels::env_switch("HIPDNN_CPU_WINOGRAD_STREAM", || {
            cpu_is_amd() && gemm::pair_isa() == Some(PairIsa::Avx512)
        })
    })
}

/// Whether CPUID names the vendor `AuthenticAMD`.
fn cpu_is_amd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU.
        let id = unsafe { std::arch::x86_64::__cpuid(0) };
        let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        vendor == b"AuthenticAMD"
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether constant filters (`kept`) of `geo` stream on `threads` threads.
pub(super) fn streams(geo: &ConvGeometry, threads: usize) -> bool {
    streamed(geo, variant(geo, threads, true), threads, true)
}

/// Tiles [`streamed`] takes at most: their `V` (16 · 32 · 512 floats, 1 MiB) read
/// from L2 by every pair of output-channel panels. With 64, ResNet-50's 14² layers at
/// batch 1 (256 channels, 49 tiles) streamed as F(4×4) ran 2–4% faster than kept
/// transformed as F(2×2) on 2 threads of a Zen 4, with F(4×4)'s larger rounding
/// errors over five more layers (the logits' largest relative error 8.1e-4 against
/// 5.2e-4): not worth it.
const STREAM_TILES: usize = 32;

/// Output channels per item of [`run_streamed`]: a pair of panels, as the pair
/// kernels take them.
const STREAM_COLS: usize = 2 * NR;

/// Input channels per block of [`run_streamed`]: a block's transformed filters (16 or
/// 36 positions × 64 channels × 32 output channels, 128 or 288 KiB) stay in L2 while
/// the tiles' products run over them. With F(4×4) on ResNet-50's 7² layers, blocks of
/// 32 channels took 4–8% longer, 96 the same.
const STREAM_BLOCK: usize = 64;

/// Floats per position of a block's `U` in [`run_streamed`]: two panels of
/// [`STREAM_BLOCK`] rows, and a cache line that keeps the positions off a whole number
/// of pages apart (else the sixteen rows the transform writes per channel share one L1
/// set).
const U_POSITION: usize = STREAM_COLS * STREAM_BLOCK + 16;

/// Floats of the taps [`run_streamed`] keeps ([`tap_pairs`]).
fn taps_len(geo: &ConvGeometry) -> usize {
    geo.k.div_ceil(STREAM_COLS) * geo.c * 9 * STREAM_COLS
}

/// Floats of one thread's scratch in [`run_streamed`]: a block's transformed filters
/// (`U`, two panels per position), the pair's tiles of `M` (two per row tile and
/// position), one tile's output pixels, and a cache line of slack.
fn stream_scratch_len(geo: &ConvGeometry, v: Variant) -> usize {
    let rows = total_tiles(geo, v).div_ceil(MR);
    v.xi() * (U_POSITION + 2 * rows * TILE) + v.m * v.m * NR + 16
}

/// Workspace in `f32` elements for `threads` threads (`kept`: as [`variant`]; the
/// transformed filters then live with the plan's weight cache, not in the workspace:
/// ResNet-50's 7² layers at batch 8 keep 37.7 MB of them).
pub(super) fn workspace_len(geo: &ConvGeometry, threads: usize, kept: bool) -> usize {
    let v = variant(geo, threads, kept);
    let work = if streamed(geo, v, threads, kept) {
        v.xi() * total_tiles(geo, v) * geo.c + 16 + threads * stream_scratch_len(geo, v)
    } else if phased(geo, v, threads) {
        v.xi() * phase_tiles(geo, v) * (geo.c + geo.k) + 16
    } else {
        threads * per_thread_len(geo, v, threads)
    };
    filters_in_workspace(geo, v, kept) + geo.c + work
}

/// Floats of the transformed filters the workspace holds: none when they are `kept`
/// (they live with the plan's weight cache).
fn filters_in_workspace(geo: &ConvGeometry, v: Variant, kept: bool) -> usize {
    if kept { 0 } else { packed_len(geo, v) }
}

/// Runs the convolution into `ep` (`kept`: as [`variant`], the same as for the
/// workspace).
///
/// # Panics
/// When `ws` is shorter than [`workspace_len`] or the tensors do not match `geo`.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    geo: &ConvGeometry,
    x: &RawIn,
    w: &RawIn,
    ep: &Prepared<'_>,
    exec: &Exec,
    ws: &mut [f32],
    cache: Option<&WeightCache>,
    kept: bool,
) {
    let threads = exec.threads();
    assert!(
        ws.len() >= workspace_len(geo, threads, kept),
        "winograd workspace"
    );
    assert!(x.dtype() == DType::F32 && geo.strides5(x.shape())[1] == 1);
    let v = variant(geo, threads, kept);
    let isa = gemm::pair_isa().expect("Winograd is only planned with vector pair kernels");
    let (in_ws, rest) = ws.split_at_mut(filters_in_workspace(geo, v, kept));
    let (zeros, rest) = rest.split_at_mut(geo.c);
    zeros.fill(0.0);
    // The transformed filters: kept from an earlier run with these (constant)
    // filters, made now and kept, made in the workspace, or (a kept plan run without
    // a cache) made in memory of their own.
    let addr = w.ptr_as::<f32>() as usize;
    let stream = streamed(geo, v, threads, kept);
    let transform = || {
        if stream {
            return Arc::new(tap_pairs(geo, w, exec));
        }
        let mut u = KeptBuf::zeroed(packed_len(geo, v));
        transform_filters(geo, v, w, &mut u, exec);
        Arc::new(u)
    };
    let own: Option<Arc<KeptBuf>> = match cache {
        Some(c) => Some(c.transformed(addr).unwrap_or_else(|| {
            let u = transform();
            c.put_transformed(addr, Arc::clone(&u));
            u
        })),
        None if kept => Some(transform()),
        None => None,
    };
    let packed: &[f32] = match &own {
        Some(u) => u,
        None => {
            transform_filters(geo, v, w, in_ws, exec);
            in_ws
        }
    };
    let (th, tw) = tiles(geo, v);
    let total = total_tiles(geo, v);
    let hw = geo.out[1] * geo.out[2];
    let fused = ep.fused_rows(hw, geo.npix(), 0, geo.k);
    let ctx = Ctx {
        geo,
        v,
        x: SendPtr(x.ptr_as::<f32>()),
        x_span: x.shape().span(),
        xs: geo.strides5(x.shape()),
        zeros: SendPtr(zeros.as_ptr()),
        packed,
        ep,
        fused: fused.as_ref(),
        isa,
        tw,
        th,
        even_rows: own_tiles(geo, v, threads),
        channel_rows: fused.is_none() && ep.channel_rows(),
    };
    if stream {
        run_streamed(&ctx, total, exec, rest);
        return;
    }
    if phased(geo, v, threads) {
        run_phased(&ctx, total, exec, rest);
        return;
    }
    let slots = Slots::new(
        rest.chunks_mut(per_thread_len(geo, v, threads))
            .take(threads),
    );
    // Each thread's tiles in chunks of equal size (no short last one that would stream
    // all of the filters for a few rows); from `PIECES_FROM` threads each chunk is a
    // part of its own, which a thread done early may take over (`gemm::pieces`).
    let chunks = |t: usize| {
        split(total, threads, t)
            .len()
            .div_ceil(chunk_on(geo, v, threads))
    };
    let per = if threads >= PIECES_FROM {
        chunks(0).max(1)
    } else {
        1
    };
    exec.for_each(threads * per, |part| {
        let at = piece(part, threads, per);
        let (t, s) = (at / per, at % per);
        let range = split(total, threads, t);
        let n = chunks(t);
        let mine = if per == 1 { 0..n } else { s..(s + 1).min(n) };
        if mine.is_empty() {
            return;
        }
        let mut guard = slots.take(t);
        let buf: &mut [f32] = &mut guard;
        for i in mine {
            let r = chunk_range(range.len(), n, i);
            ctx.chunk(range.start + r.start, r.len(), buf);
        }
    });
}

/// The `i`-th of `n` chunks of a thread's `len` tiles: all but the last of the same
/// size, a multiple of [`MR`] (at most [`chunk`]'s when `n` is enough chunks of that
/// size), so that only the last ends in a short row tile; `split`'s near-equal
/// chunks (33, 33 and 32 tiles at 56² and batch 1) each ended in one.
fn chunk_range(len: usize, n: usize, i: usize) -> std::ops::Range<usize> {
    let size = len.div_ceil(n.max(1)).next_multiple_of(MR);
    (i * size).min(len)..((i + 1) * size).min(len)
}

/// Parts per thread of each phase's sections in [`run_phased`] from [`PIECES_FROM`]
/// threads (see `gemm::pieces`).
const PHASE_PIECES: usize = 4;

/// [`run`] in phases over `V` and `M` in `buf`, [`phase_tiles`] tiles at a time.
fn run_phased(ctx: &Ctx<'_>, total: usize, exec: &Exec, buf: &mut [f32]) {
    let g = ctx.geo;
    let (c, k, xis) = (g.c, g.k, ctx.v.xi());
    let threads = exec.threads();
    let cap = phase_tiles(g, ctx.v);
    let off = buf.as_ptr().align_offset(64).min(16);
    let (v, m) = buf[off..].split_at_mut(xis * cap * c);
    assert!(m.len() >= xis * cap * k, "winograd phase buffers");
    let (v, m) = (
        SendPtr(v.as_mut_ptr().cast_const()),
        SendPtr(m.as_mut_ptr().cast_const()),
    );
    let pairs = k.div_ceil(2 * NR);
    let pstride = panel_stride(c);
    let ps = k.div_ceil(NR) * pstride;
    // Part `p` of each section takes piece `piece(p, ..)` of its work: thread `t`'s
    // pieces are one contiguous run, as without pieces.
    let per = if threads >= PIECES_FROM {
        PHASE_PIECES
    } else {
        1
    };
    let parts = threads * per;
    let share = |len: usize, p: usize| split(len, parts, piece(p, threads, per));
    for t0 in (0..total).step_by(cap) {
        let n = cap.min(total - t0);
        exec.for_each(parts, |p| {
            for i in share(n, p) {
                // SAFETY: tile `i`'s rows of `V` (one per position, `c` floats, `n · c`
                // apart) lie inside `v` (`xis · cap · c` floats) and are this part's
                // alone.
                unsafe { ctx.input_tile(t0 + i, v.get().cast_mut().add(i * c), n * c) };
            }
        });
        // The products, split by position and pairs of output-channel panels, so
        // that each transformed filter panel is read by one part only.
        exec.for_each(parts, |p| {
            let items = share(xis * pairs, p);
            let b_at = |item: usize| (item / pairs) * ps + 2 * (item % pairs) * pstride;
            for item in items.clone() {
                let (xi, pair) = (item / pairs, item % pairs);
                let j0 = pair * 2 * NR;
                let b = &ctx.packed[b_at(item)..(xi + 1) * ps];
                // The next item's panels (this thread's items are consecutive).
                let ahead = if item + 1 < items.end {
                    let at = b_at(item + 1);
                    &ctx.packed[at..(at + 2 * pstride).min(ctx.packed.len())]
                } else {
                    &[]
                };
                let vx = v.get().wrapping_add(xi * n * c);
                // SAFETY: rows `i < n` of `V_ξ` hold `c` floats (written in the phase
                // before); `M_ξ`'s rows `i < n`, columns `j0..j0 + cols` are inside `m`
                // and this item's alone; the pair kernels exist (`applies`).
                unsafe {
                    gemm::rows_times_panels(
                        (n, (k - j0).min(2 * NR), c),
                        |i| vx.wrapping_add(i * c),
                        b,
                        m.get().cast_mut().add(xi * n * k + j0),
                        k,
                        ahead,
                        false,
                    );
                }
            }
        });
        exec.for_each(parts, |p| {
            // SAFETY: `M` (the first `xis · n · k` floats of `m`) is only read now.
            let ms = unsafe { std::slice::from_raw_parts(m.get(), xis * n * k) };
            let mut out = vec![0f32; ctx.v.m * ctx.v.m * k];
            for i in share(n, p) {
                ctx.output_tile(t0 + i, &ms[i * k..], n * k, 0, k, &mut out);
            }
        });
    }
}

/// [`run`] with the filters streamed ([`streamed`]): all threads transform the tiles'
/// inputs into `V` (in `buf`); then each takes pairs of output-channel panels. Per
/// pair, [`STREAM_BLOCK`] input channels at a time, a thread transforms the block's
/// filters from their taps into `U` and runs every position's products over the block
/// into the pair's tiles of `M` (partial sums over the blocks, in the kernels'
/// layout); after the last block it transforms those into the pair's output channels
/// of every tile. Each tap is read once per run, by one thread, while the `V` that
/// every pair reads stays in cache.
fn run_streamed(ctx: &Ctx<'_>, total: usize, exec: &Exec, buf: &mut [f32]) {
    let g = ctx.geo;
    let (c, xis) = (g.c, ctx.v.xi());
    let threads = exec.threads();
    let off = buf.as_ptr().align_offset(64).min(16);
    let (v, rest) = buf[off..].split_at_mut(xis * total * c);
    let per = if threads >= PIECES_FROM {
        PHASE_PIECES
    } else {
        1
    };
    let parts = threads * per;
    let vp = SendPtr(v.as_mut_ptr().cast_const());
    exec.for_each(parts, |p| {
        for i in split(total, parts, piece(p, threads, per)) {
            // SAFETY: tile `i`'s rows of `V` (one per position, `c` floats, `total · c`
            // apart) lie inside `v` and are this part's alone.
            unsafe { ctx.input_tile(i, vp.get().cast_mut().add(i * c), total * c) };
        }
    });
    let v: &[f32] = v;
    let pairs = g.k.div_ceil(STREAM_COLS);
    let pair_taps = c * 9 * STREAM_COLS;
    assert!(ctx.packed.len() >= pairs * pair_taps, "winograd taps");
    let slots = Slots::new(rest.chunks_mut(stream_scratch_len(g, ctx.v)).take(threads));
    // From `PIECES_FROM` threads each pair is a part of its own, which a thread done
    // early may take over.
    let per = if threads >= PIECES_FROM {
        pairs.div_ceil(threads)
    } else {
        1
    };
    exec.for_each(threads * per, |part| {
        let at = piece(part, threads, per);
        let mine = split(pairs, threads * per, at);
        if mine.is_empty() {
            return;
        }
        let mut guard = slots.take(at / per);
        for pair in mine.clone() {
            // The first block of the next pair this part takes.
            let ahead = if pair + 1 < mine.end {
                let start = (pair + 1) * pair_taps;
                &ctx.packed[start..start + STREAM_BLOCK.min(c) * 9 * STREAM_COLS]
            } else {
                &[]
            };
            ctx.stream_pair(pair, v, total, &mut guard, ahead);
        }
    });
}

/// What every chunk reads.
struct Ctx<'a> {
    geo: &'a ConvGeometry,
    v: Variant,
    x: SendPtr<f32>,
    x_span: usize,
    xs: [usize; 5],
    zeros: SendPtr<f32>,
    /// The transformed filters in their packed panels; when [`streamed`], the taps
    /// ([`tap_pairs`]).
    packed: &'a [f32],
    ep: &'a Prepared<'a>,
    fused: Option<&'a gemm::FusedOut>,
    isa: PairIsa,
    th: usize,
    tw: usize,
    /// Each thread keeps its own tiles ([`own_tiles`]): their products' rows go in tiles
    /// of near-equal height (`gemm::rows_times_panels`).
    even_rows: bool,
    /// The output is channels-first and not stored in registers: tiles go through the
    /// epilogue in blocks of channel rows ([`Ctx::channel_rows`]).
    channel_rows: bool,
}

impl Ctx<'_> {
    /// Tile `t`'s image, tile row and tile column.
    fn tile_at(&self, t: usize) -> (usize, usize, usize) {
        (
            t / (self.th * self.tw),
            (t / self.tw) % self.th,
            t % self.tw,
        )
    }

    /// Tiles `t0..t0 + n` (flat `(image, tile row, tile column)` order), with `buf`
    /// for their `V` and `M`.
    fn chunk(&self, t0: usize, n: usize, buf: &mut [f32]) {
        let g = self.geo;
        let (c, k, xis) = (g.c, g.k, self.v.xi());
        let off = buf.as_ptr().align_offset(64).min(16);
        let (v, m) = buf[off..].split_at_mut(xis * n * c);
        let m = &mut m[..xis * n * k];
        for i in 0..n {
            // SAFETY: tile `i`'s rows (`c` floats, `n · c` apart) are inside `v`.
            unsafe { self.input_tile(t0 + i, v[i * c..].as_mut_ptr(), n * c) };
        }
        let ps = self.geo.k.div_ceil(NR) * panel_stride(c);
        for xi in 0..xis {
            let vx = &v[xi * n * c..(xi + 1) * n * c];
            let b = &self.packed[xi * ps..(xi + 1) * ps];
            let ahead = self.packed.get((xi + 1) * ps..(xi + 2) * ps).unwrap_or(&[]);
            let mx = &mut m[xi * n * k..(xi + 1) * n * k];
            // SAFETY: row `i < n` of `vx` holds `c` floats; `mx` holds `n` rows of
            // `k` floats, this thread's; the pair kernels exist (`applies`).
            unsafe {
                gemm::rows_times_panels(
                    (n, k, c),
                    |i| vx.as_ptr().wrapping_add(i * c),
                    b,
                    mx.as_mut_ptr(),
                    k,
                    ahead,
                    self.even_rows,
                );
            }
        }
        let mut out = vec![0f32; self.v.m * self.v.m * k];
        for i in 0..n {
            self.output_tile(t0 + i, &m[i * k..], n * k, 0, k, &mut out);
        }
    }

    /// One pair of output-channel panels of [`run_streamed`]: its products over every
    /// block of input channels into its tiles of `M`, then its output channels of
    /// every tile. `v` is `V` of all `total` tiles (position `ξ`'s row for tile `i` at
    /// `(ξ · total + i) · C`), `buf` this thread's scratch ([`stream_scratch_len`]),
    /// `ahead` the taps the thread reads after this pair's.
    fn stream_pair(&self, pair: usize, v: &[f32], total: usize, buf: &mut [f32], ahead: &[f32]) {
        let g = self.geo;
        let (c, xis) = (g.c, self.v.xi());
        let rows = total.div_ceil(MR);
        let off = buf.as_ptr().align_offset(64).min(16);
        let (u, rest) = buf[off..].split_at_mut(xis * U_POSITION);
        let (mt, out) = rest.split_at_mut(xis * 2 * rows * TILE);
        let (mt, _) = mt.as_chunks_mut::<TILE>();
        let block_taps = |c0: usize, c1: usize| c0 * 9 * STREAM_COLS..c1 * 9 * STREAM_COLS;
        let taps = &self.packed[block_taps(pair * c, (pair + 1) * c)];
        assert!(v.len() >= xis * total * c, "winograd V");
        for c0 in (0..c).step_by(STREAM_BLOCK) {
            let c1 = (c0 + STREAM_BLOCK).min(c);
            let cb = c1 - c0;
            let next = if c1 < c {
                &taps[block_taps(c1, (c1 + STREAM_BLOCK).min(c))]
            } else {
                ahead
            };
            // As [`U_POSITION`], for this block's `cb` channels.
            let (us, hs) = (STREAM_COLS * cb + 16, NR * cb);
            // SAFETY: the block's taps are `cb · 9 · 32` floats of `taps`; `u` holds
            // `xis` positions of `us` floats, two panels of `hs` each; the CPU has
            // `self.isa`.
            unsafe {
                let t = taps[block_taps(c0, c1)].as_ptr();
                filter_taps(self.isa, self.v, t, cb, u.as_mut_ptr(), (us, hs));
            }
            // The next block's taps are fetched while the products run.
            let share = next.len().div_ceil(xis);
            for xi in 0..xis {
                let b = u[xi * us..xi * us + 2 * hs].split_at(hs);
                let vx = v[(xi * total) * c + c0..].as_ptr();
                let fetch = &next[(xi * share).min(next.len())..((xi + 1) * share).min(next.len())];
                // SAFETY: row `i < total` of `V_ξ` holds `c` floats from `vx + i · c -
                // c0`, of which this block reads `cb` (inside `v`, checked above).
                unsafe {
                    gemm::rows_times_pair(
                        (total, cb),
                        |i| vx.wrapping_add(i * c),
                        b,
                        &mut mt[xi * 2 * rows..(xi + 1) * 2 * rows],
                        c0 > 0,
                        fetch,
                    );
                }
            }
        }
        let flat = mt.as_flattened();
        for i in 0..total {
            for h in 0..2 {
                let j0 = pair * STREAM_COLS + h * NR;
                if j0 >= g.k {
                    break;
                }
                let at = ((i / MR) * 2 + h) * TILE + (i % MR) * NR;
                self.output_tile(i, &flat[at..], 2 * rows * TILE, j0, NR.min(g.k - j0), out);
            }
        }
    }

    /// The input transform of tile `t`: `V_ξ`'s row at `v + ξ · vs` (`C` floats each).
    ///
    /// # Safety
    /// The rows (one per position) are writable and nobody else accesses them
    /// meanwhile.
    unsafe fn input_tile(&self, t: usize, v: *mut f32, vs: usize) {
        let g = self.geo;
        let (img, ty, tx) = self.tile_at(t);
        let xs = &self.xs;
        let c = g.c;
        let p = self.v.p();
        let step = self.v.step();
        let y0 = (step * ty) as isize - g.pad[1] as isize;
        let x0 = (step * tx) as isize - g.pad[2] as isize;
        let d: [*const f32; XI_MAX] = std::array::from_fn(|i| {
            let (iy, ix) = (y0 + (i / p) as isize, x0 + (i % p) as isize);
            if i >= p * p {
                return self.zeros.0;
            }
            if iy < 0 || ix < 0 || iy >= g.inp[1] as isize || ix >= g.inp[2] as isize {
                self.zeros.0
            } else {
                let at = img * xs[0] + iy as usize * xs[3] + ix as usize * xs[4];
                assert!(at + c <= self.x_span, "winograd input out of bounds");
                self.x.0.wrapping_add(at)
            }
        });
        // SAFETY: every `d[i]` addresses `c` floats (the input, checked above, or the
        // zero row); the rows at `v` are ours (contract); the CPU has `self.isa`.
        unsafe {
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                PairIsa::Avx512 => avx512::input_tile(self.v, &d, c, v, vs),
                #[cfg(target_arch = "x86_64")]
                PairIsa::Avx2 => avx2::input_tile(self.v, &d, c, v, vs),
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!("Winograd is only planned with vector pair kernels"),
            }
        }
    }

    /// The output transform of tile `t` for output channels `j0..j0 + k` (`M_ξ`'s row
    /// at `m[ξ · ms..]`, `k` floats each) and the epilogue of its in-image pixels;
    /// `out` holds `m² · k` floats.
    fn output_tile(&self, t: usize, m: &[f32], ms: usize, j0: usize, k: usize, out: &mut [f32]) {
        let g = self.geo;
        let e = self.v.m;
        assert!(m.len() >= (self.v.xi() - 1) * ms + k && out.len() >= e * e * k);
        assert!(j0 + k <= g.k, "winograd output channels");
        // SAFETY: a row of `k` floats per position in `m`, one per output pixel in
        // `out` (checked above); the CPU has `self.isa`.
        unsafe {
            let (m, out) = (m.as_ptr(), out.as_mut_ptr());
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                PairIsa::Avx512 => avx512::output_tile(self.v, m, ms, k, out),
                #[cfg(target_arch = "x86_64")]
                PairIsa::Avx2 => avx2::output_tile(self.v, m, ms, k, out),
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!("Winograd is only planned with vector pair kernels"),
            }
        }
        let (img, ty, tx) = self.tile_at(t);
        if self.channel_rows {
            self.channel_rows(img, (e * ty, e * tx), j0, k, &out[..e * e * k]);
            return;
        }
        for (q, vals) in out[..e * e * k].chunks_exact_mut(k).enumerate() {
            let (oy, ox) = (e * ty + q / e, e * tx + q % e);
            if oy >= g.out[1] || ox >= g.out[2] {
                continue;
            }
            let p = (img * g.out[1] + oy) * g.out[2] + ox;
            match self.fused {
                // SAFETY: pixel `p < npix` and channels `j0..j0 + k <= K` lie inside
                // every tensor of the chain (`fused_rows` checked the whole index
                // space); this thread owns these channels of the tile's pixels; the
                // CPU has `self.isa`.
                Some(f) => unsafe {
                    match self.isa {
                        #[cfg(target_arch = "x86_64")]
                        PairIsa::Avx512 => avx512::fused_pixel(f, p, j0, vals),
                        #[cfg(target_arch = "x86_64")]
                        PairIsa::Avx2 => avx2::fused_pixel(f, p, j0, vals),
                        #[cfg(not(target_arch = "x86_64"))]
                        _ => fused_pixel(f, p, j0, vals),
                    }
                },
                None => {
                    let hw = g.out[1] * g.out[2];
                    self.general_pixel(img, [0, oy, ox], p % hw, j0, vals);
                }
            }
        }
    }

    /// The epilogue of a tile whose output is channels-first
    /// ([`Prepared::channel_rows`]): per row of the tile's in-image pixels and
    /// [`NR`] output channels, a block of channel rows over those pixels. `vals` holds
    /// the tile's `m²` pixels (row-major from `(oy, ox)`), `k` channels from `j0` each.
    fn channel_rows(
        &self,
        img: usize,
        (oy, ox): (usize, usize),
        j0: usize,
        k: usize,
        vals: &[f32],
    ) {
        let g = self.geo;
        let e = self.v.m;
        let (h, w) = (g.out[1], g.out[2]);
        let cols = e.min(w - ox);
        let mut block = [0f32; NR * MAX_TILE_EDGE];
        for r in 0..e.min(h - oy) {
            let p = (oy + r) * w + ox;
            for c0 in (0..k).step_by(NR) {
                let rows = NR.min(k - c0);
                for (q, px) in vals[r * e * k..].chunks(k).take(cols).enumerate() {
                    for (i, &v) in px[c0..c0 + rows].iter().enumerate() {
                        block[i * e + q] = v;
                    }
                }
                let ch = j0 + c0;
                self.ep.apply_block(&mut block, e, rows, cols, |l| BlockAt {
                    base: img * l.ns + ch * l.cs + p * l.ps,
                    rs: l.cs,
                    cs: l.ps,
                });
            }
        }
    }

    /// The general epilogue for one pixel's values of output channels `j0..` (`j0` a
    /// multiple of [`NR`]).
    fn general_pixel(&self, img: usize, o: [usize; 3], p: usize, j0: usize, vals: &mut [f32]) {
        let mut idx = [0usize; 5];
        for (b, v) in vals.chunks_mut(NR).enumerate() {
            let ch0 = j0 + b * NR;
            if self.ep.blockwise() {
                self.ep.apply_block(v, NR, 1, v.len(), |l| BlockAt {
                    base: img * l.ns + p * l.ps + ch0 * l.cs,
                    rs: l.ps,
                    cs: l.cs,
                });
            } else {
                let rank = self.geo.out_index(img, ch0, o, &mut idx);
                self.ep.apply_along(&idx[..rank], 1, v);
            }
        }
    }
}

/// `V = Bᵀ d B` of F(2×2, 3×3) over `$c` channels, `$w` at a time: `$d[4r + s]` is
/// input position `(r, s)`, the result for position `ξ` goes to `$v + ξ · $vs`.
/// Written over a vector type through its operations (`$ld(n, p)` / `$st(n, p, x)`
/// load and store the first `n` lanes), so that every instruction set runs the same
/// sums in the same order. Expands inside an `unsafe` block of a function with the
/// vector type's target features.
macro_rules! input_tile_f2 {
    ($d:expr, $c:expr, $v:expr, $vs:expr, $w:expr, $ld:ident, $st:ident, $add:ident, $sub:ident) => {{
        let mut ch = 0;
        while ch < $c {
            let n = ($c - ch).min($w);
            let x: [_; 16] = std::array::from_fn(|i| $ld(n, $d[i].add(ch)));
            let mut t = x;
            for s in 0..4 {
                t[s] = $sub(x[s], x[8 + s]);
                t[4 + s] = $add(x[4 + s], x[8 + s]);
                t[8 + s] = $sub(x[8 + s], x[4 + s]);
                t[12 + s] = $sub(x[4 + s], x[12 + s]);
            }
            for r in 0..4 {
                let (a, b, cc, dd) = (t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3]);
                let o = [$sub(a, cc), $add(b, cc), $sub(cc, b), $sub(b, dd)];
                for (s, val) in o.into_iter().enumerate() {
                    $st(n, $v.add((4 * r + s) * $vs + ch), val);
                }
            }
            ch += $w;
        }
    }};
}

/// `Y = Aᵀ M A` of F(2×2, 3×3) over `$k` channels (as [`input_tile_f2`]): `M_ξ` at
/// `$m + ξ · $ms`, output pixel `q` (row-major in the 2×2 tile) to `$out + q · $k`.
macro_rules! output_tile_f2 {
    ($m:expr, $ms:expr, $k:expr, $out:expr, $w:expr, $ld:ident, $st:ident, $add:ident, $sub:ident) => {{
        let mut j = 0;
        while j < $k {
            let n = ($k - j).min($w);
            let x: [_; 16] = std::array::from_fn(|i| $ld(n, $m.add(i * $ms + j)));
            let mut t: [_; 8] = std::array::from_fn(|i| x[i]);
            for s in 0..4 {
                t[s] = $add($add(x[s], x[4 + s]), x[8 + s]);
                t[4 + s] = $sub($sub(x[4 + s], x[8 + s]), x[12 + s]);
            }
            for r in 0..2 {
                let (a, b, c, d) = (t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3]);
                $st(n, $out.add(2 * r * $k + j), $add($add(a, b), c));
                $st(n, $out.add((2 * r + 1) * $k + j), $sub($sub(b, c), d));
            }
            j += $w;
        }
    }};
}

/// `Bᵀ x` of [`Variant::S2`] for one patch column or row `x` (5 inputs): the even
/// inputs through F(2, 2)'s `Bᵀ` (`x0 − x2`, `x2`, `x4 − x2`), then the odd ones as
/// they are.
macro_rules! bs2 {
    ($x:expr, $sub:ident) => {{
        let x = $x;
        [$sub(x[0], x[2]), x[2], $sub(x[4], x[2]), x[1], x[3]]
    }};
}

/// `Aᵀ m` of [`Variant::S2`] for one column or row of products `m` (5 values): output
/// 0 is `m0 + m1 + m3`, output 1 `m1 + m2 + m4`.
macro_rules! as2 {
    ($x:expr, $add:ident) => {{
        let x = $x;
        [$add($add(x[0], x[1]), x[3]), $add($add(x[1], x[2]), x[4])]
    }};
}

/// [`input_tile_f2`] for [`Variant::S2`]: `V = Bᵀ d B` of a 5×5 patch (`$d[5r + s]`),
/// position `ξ = 5r + s` to `$v + ξ · $vs`; columns first, then rows.
macro_rules! input_tile_s2 {
    ($d:expr, $c:expr, $v:expr, $vs:expr, $w:expr, $ld:ident, $st:ident, $sub:ident) => {{
        let mut ch = 0;
        while ch < $c {
            let n = ($c - ch).min($w);
            let first = $ld(n, $d[0].add(ch));
            let mut t = [first; 25];
            for s in 0..5 {
                let col = bs2!(
                    std::array::from_fn::<_, 5, _>(|r| $ld(n, $d[5 * r + s].add(ch))),
                    $sub
                );
                for (r, val) in col.into_iter().enumerate() {
                    t[5 * r + s] = val;
                }
            }
            for r in 0..5 {
                let row = bs2!(std::array::from_fn::<_, 5, _>(|s| t[5 * r + s]), $sub);
                for (s, val) in row.into_iter().enumerate() {
                    $st(n, $v.add((5 * r + s) * $vs + ch), val);
                }
            }
            ch += $w;
        }
    }};
}

/// [`output_tile_f2`] for [`Variant::S2`]: `Y = Aᵀ M A` from the 25 rows of `M`
/// (position `5r + s` at `$m + (5r + s) · $ms`), output pixel `q` (row-major in the
/// 2×2 tile) to `$out + q · $k`.
macro_rules! output_tile_s2 {
    ($m:expr, $ms:expr, $k:expr, $out:expr, $w:expr, $ld:ident, $st:ident, $add:ident) => {{
        let mut j = 0;
        while j < $k {
            let n = ($k - j).min($w);
            let first = $ld(n, $m.add(j));
            let mut t = [first; 10];
            for s in 0..5 {
                let col = as2!(
                    std::array::from_fn::<_, 5, _>(|r| $ld(n, $m.add((5 * r + s) * $ms + j))),
                    $add
                );
                for (r, val) in col.into_iter().enumerate() {
                    t[5 * r + s] = val;
                }
            }
            for r in 0..2 {
                let row = as2!(std::array::from_fn::<_, 5, _>(|s| t[5 * r + s]), $add);
                for (s, val) in row.into_iter().enumerate() {
                    $st(n, $out.add((2 * r + s) * $k + j), val);
                }
            }
            j += $w;
        }
    }};
}

/// F(4×4, 3×3)'s `Bᵀ`, over the interpolation points 0, 1, −1, ½, −2 and infinity:
/// in `f32` they give about a third of the largest error of the usual 0, ±1, ±2 (the
/// filter transform's thirds and fifteenths are rounded once, when it is made; the
/// input and output transforms' coefficients are exact). The kernels compute it
/// grouped ([`bt4`]); the tests check both against each other.
#[cfg_attr(not(test), allow(dead_code))]
const BT4: [[f32; 6]; 6] = [
    [1.0, -1.5, -2.0, 1.5, 1.0, 0.0],
    [0.0, -1.0, 0.5, 2.5, 1.0, 0.0],
    [0.0, 1.0, -2.5, 0.5, 1.0, 0.0],
    [0.0, -2.0, -1.0, 2.0, 1.0, 0.0],
    [0.0, 0.5, -1.0, -0.5, 1.0, 0.0],
    [0.0, 1.0, -1.5, -2.0, 1.5, 1.0],
];

/// F(4×4, 3×3)'s `G` (the points of [`BT4`]; the transform: [`g6`]).
#[cfg_attr(not(test), allow(dead_code))]
const G4: [[f32; 3]; 6] = [
    [1.0, 0.0, 0.0],
    [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    [-1.0 / 3.0, 1.0 / 3.0, -1.0 / 3.0],
    [-16.0 / 15.0, -8.0 / 15.0, -4.0 / 15.0],
    [1.0 / 15.0, -2.0 / 15.0, 4.0 / 15.0],
    [0.0, 0.0, 1.0],
];

/// F(4×4, 3×3)'s `Aᵀ` (the points of [`BT4`]; the kernels: [`at4`]).
#[cfg_attr(not(test), allow(dead_code))]
const AT4: [[f32; 6]; 4] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, 0.5, -2.0, 0.0],
    [0.0, 1.0, 1.0, 0.25, 4.0, 0.0],
    [0.0, 1.0, -1.0, 0.125, -8.0, 1.0],
];

/// [`BT4`] times six values (vectors: one lane per channel), the same sums grouped;
/// `$fma(a, b, c) = a · b + c` rounded once, `$c(x)` the constant `x`.
macro_rules! bt4 {
    ($x:expr, $add:ident, $sub:ident, $fma:ident, $c:ident) => {{
        let x = $x;
        [
            $fma(
                $c(1.5),
                $sub(x[3], x[1]),
                $fma($c(-2.0), x[2], $add(x[0], x[4])),
            ),
            $fma($c(2.5), x[3], $fma($c(0.5), x[2], $sub(x[4], x[1]))),
            $fma($c(-2.5), x[2], $fma($c(0.5), x[3], $add(x[4], x[1]))),
            $fma($c(2.0), $sub(x[3], x[1]), $sub(x[4], x[2])),
            $fma($c(0.5), $sub(x[1], x[3]), $sub(x[4], x[2])),
            $fma(
                $c(1.5),
                $sub(x[4], x[2]),
                $fma($c(-2.0), x[3], $add(x[1], x[5])),
            ),
        ]
    }};
}

/// [`AT4`] times six values, as [`bt4`].
macro_rules! at4 {
    ($x:expr, $add:ident, $sub:ident, $fma:ident, $c:ident) => {{
        let x = $x;
        let (s12, d12) = ($add(x[1], x[2]), $sub(x[1], x[2]));
        [
            $add($add(x[0], s12), $add(x[3], x[4])),
            $fma($c(0.5), x[3], $fma($c(-2.0), x[4], d12)),
            $fma($c(0.25), x[3], $fma($c(4.0), x[4], s12)),
            $fma($c(0.125), x[3], $fma($c(-8.0), x[4], $add(d12, x[5]))),
        ]
    }};
}

/// [`input_tile_f2`] for F(4×4, 3×3): `V = Bᵀ d B` of a 6×6 patch (`$d[6r + s]`),
/// position `ξ = 6r + s` to `$v + ξ · $vs`; columns first (`Bᵀ d`), then rows.
macro_rules! input_tile_f4 {
    ($d:expr, $c:expr, $v:expr, $vs:expr, $w:expr, $ld:ident, $st:ident, $add:ident, $sub:ident, $fma:ident, $k:ident) => {{
        let mut ch = 0;
        while ch < $c {
            let n = ($c - ch).min($w);
            let first = $ld(n, $d[0].add(ch));
            let mut t = [first; 36];
            for s in 0..6 {
                let col = bt4!(
                    std::array::from_fn::<_, 6, _>(|r| $ld(n, $d[6 * r + s].add(ch))),
                    $add,
                    $sub,
                    $fma,
                    $k
                );
                for (r, val) in col.into_iter().enumerate() {
                    t[6 * r + s] = val;
                }
            }
            for r in 0..6 {
                let row = bt4!(
                    std::array::from_fn::<_, 6, _>(|s| t[6 * r + s]),
                    $add,
                    $sub,
                    $fma,
                    $k
                );
                for (s, val) in row.into_iter().enumerate() {
                    $st(n, $v.add((6 * r + s) * $vs + ch), val);
                }
            }
            ch += $w;
        }
    }};
}

/// [`output_tile_f2`] for F(4×4, 3×3): `Y = Aᵀ M A` from the 36 rows of `M`
/// (position `6r + s` at `$m + (6r + s) · $ms`), output pixel `q` (row-major in the
/// 4×4 tile) to `$out + q · $k`.
macro_rules! output_tile_f4 {
    ($m:expr, $ms:expr, $k:expr, $out:expr, $w:expr, $ld:ident, $st:ident, $add:ident, $sub:ident, $fma:ident, $c:ident) => {{
        let mut j = 0;
        while j < $k {
            let n = ($k - j).min($w);
            let first = $ld(n, $m.add(j));
            let mut t = [first; 24];
            for s in 0..6 {
                let col = at4!(
                    std::array::from_fn::<_, 6, _>(|r| $ld(n, $m.add((6 * r + s) * $ms + j))),
                    $add,
                    $sub,
                    $fma,
                    $c
                );
                for (r, val) in col.into_iter().enumerate() {
                    t[6 * r + s] = val;
                }
            }
            for r in 0..4 {
                let row = at4!(
                    std::array::from_fn::<_, 6, _>(|s| t[6 * r + s]),
                    $add,
                    $sub,
                    $fma,
                    $c
                );
                for (s, val) in row.into_iter().enumerate() {
                    $st(n, $out.add((4 * r + s) * $k + j), val);
                }
            }
            j += $w;
        }
    }};
}

/// `G x` of F(2×2, 3×3) for one filter column or row `x`, `G = [1 0 0; ½ ½ ½;
/// ½ −½ ½; 0 0 1]`, written over a number type (`f32` for the reference, vectors of
/// sixteen for the kernels) so that both round alike.
macro_rules! g4 {
    ($x:expr, $add:ident, $sub:ident, $mul:ident, $c:ident) => {{
        let (g0, g1, g2) = $x;
        let half = $c(0.5);
        [
            g0,
            $mul(half, $add($add(g0, g1), g2)),
            $mul(half, $add($sub(g0, g1), g2)),
            g2,
        ]
    }};
}

/// `G x` of F(4×4, 3×3) for one filter column or row `x` ([`G4`], grouped), over a
/// number type as [`g4`] (`$fma(a, b, c) = a · b + c`, rounded once).
macro_rules! g6 {
    ($x:expr, $add:ident, $sub:ident, $mul:ident, $fma:ident, $c:ident) => {{
        let (g0, g1, g2) = $x;
        [
            g0,
            $mul($c(1.0 / 3.0), $add($add(g0, g1), g2)),
            $mul($c(-1.0 / 3.0), $add($sub(g0, g1), g2)),
            $fma(
                $c(-16.0 / 15.0),
                g0,
                $fma($c(-8.0 / 15.0), g1, $mul($c(-4.0 / 15.0), g2)),
            ),
            $fma(
                $c(1.0 / 15.0),
                g0,
                $fma($c(-2.0 / 15.0), g1, $mul($c(4.0 / 15.0), g2)),
            ),
            g2,
        ]
    }};
}

/// `G x` of [`Variant::S2`] for one filter column or row `x`: the even taps through
/// F(2, 2)'s `G` (`g0`, `g0 + g2`, `g2`), then the middle tap once per odd input.
macro_rules! gs2 {
    ($x:expr, $add:ident) => {{
        let (g0, g1, g2) = $x;
        [g0, $add(g0, g2), g2, g1, g1]
    }};
}

/// `G g Gᵀ` of the variant on one 3×3 filter `g` (`g[3r + s]`, any number type),
/// position `ξ = p · r + s` at `[ξ]` (columns first, then rows).
macro_rules! filter_tile {
    ($v:expr, $g:expr, $zero:expr, $add:ident, $sub:ident, $mul:ident, $fma:ident, $c:ident) => {{
        let g = $g;
        let mut u = [$zero; XI_MAX];
        if $v == Variant::F4 {
            let mut t = [$zero; 18];
            for s in 0..3 {
                let col = g6!((g[s], g[3 + s], g[6 + s]), $add, $sub, $mul, $fma, $c);
                for (r, x) in col.into_iter().enumerate() {
                    t[3 * r + s] = x;
                }
            }
            for r in 0..6 {
                let row = g6!(
                    (t[3 * r], t[3 * r + 1], t[3 * r + 2]),
                    $add,
                    $sub,
                    $mul,
                    $fma,
                    $c
                );
                u[6 * r..6 * r + 6].copy_from_slice(&row);
            }
        } else if $v == Variant::S2 {
            let mut t = [$zero; 15];
            for s in 0..3 {
                let col = gs2!((g[s], g[3 + s], g[6 + s]), $add);
                for (r, x) in col.into_iter().enumerate() {
                    t[3 * r + s] = x;
                }
            }
            for r in 0..5 {
                let row = gs2!((t[3 * r], t[3 * r + 1], t[3 * r + 2]), $add);
                u[5 * r..5 * r + 5].copy_from_slice(&row);
            }
        } else {
            let mut t = [$zero; 12];
            for s in 0..3 {
                let col = g4!((g[s], g[3 + s], g[6 + s]), $add, $sub, $mul, $c);
                for (r, x) in col.into_iter().enumerate() {
                    t[3 * r + s] = x;
                }
            }
            for r in 0..4 {
                let row = g4!((t[3 * r], t[3 * r + 1], t[3 * r + 2]), $add, $sub, $mul, $c);
                u[4 * r..4 * r + 4].copy_from_slice(&row);
            }
        }
        u
    }};
}

/// The loop of `filter_taps` (in [`transforms`]) for a variant of `$e` positions per
/// edge whose filter transform of one column or row is `$g` (a closure over a tuple
/// of three vectors, giving `$e`).
macro_rules! filter_taps_loop {
    (
        $taps:expr,
        $cb:expr,
        $u:expr,
        $us:expr,
        $hs:expr,
        $w:expr,
        $vt:ty,
        $ld:ident,
        $st:ident,
        $e:literal,
        $g:expr
    ) => {{
        let g1 = $g;
        for ch in 0..$cb {
            let mut j = 0;
            while j < 32 {
                let g: [$vt; 9] =
                    std::array::from_fn(|t| $ld($w, $taps.add((9 * ch + t) * 32 + j)));
                let cols: [[$vt; $e]; 3] = std::array::from_fn(|s| g1((g[s], g[3 + s], g[6 + s])));
                let at = $u.add((j / 16) * $hs + ch * 16 + j % 16);
                for r in 0..$e {
                    let row = g1((cols[0][r], cols[1][r], cols[2][r]));
                    for (s, val) in row.into_iter().enumerate() {
                        $st($w, at.add(($e * r + s) * $us), val);
                    }
                }
                j += $w;
            }
        }
    }};
}

/// The transforms, the per-pixel epilogue and (for the tests) `Bᵀ` / `Aᵀ` compiled for
/// one instruction set (`$feat`), `$w` channels per vector of type `$vt` through the
/// module's `ld` / `st` and the set's add, subtract, fused multiply-add and
/// broadcast: the same sums in the same order whatever the width, so the same results.
///
/// # Safety (every function it makes)
/// The CPU has `$feat`; each pointer in `d` addresses `c` readable floats, each output
/// row `c` (input transform) or the outputs `k` (output transform) writable ones,
/// disjoint from what is read; for `fused_pixel`, pixel `p` and channels
/// `< vals.len()` lie inside every tensor of `f` and nobody else touches that output
/// pixel.
#[cfg(target_arch = "x86_64")]
macro_rules! transforms {
    (
        $feat:literal,
        $w:expr,
        $vt:ty,
        $add:ident,
        $sub:ident,
        $mul:ident,
        $fma:ident,
        $set1:ident
    ) => {
        /// `U = G g Gᵀ` of `v` (F(2×2, 3×3) or F(4×4, 3×3)) for `cb` input channels
        /// of a pair of output-channel panels, from their taps
        /// ([`tap_pairs`](super::tap_pairs)' layout: input channel `c`'s tap `t` for
        /// the pair's 32 output channels at `taps + (9c + t) · 32`): position `ξ`'s
        /// row of sixteen for channel `c` of panel `h` to `u + ξ · us + h · hs + c ·
        /// 16`. The operations of [`filter_tile`](super::filter_tile) in the same
        /// order, so the same values, each stored as soon as it is made.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn filter_taps(
            v: Variant,
            taps: *const f32,
            cb: usize,
            u: *mut f32,
            us: usize,
            hs: usize,
        ) {
            let (add, sub, mul, fma, c) = ($add, $sub, $mul, $fma, $set1);
            // SAFETY: (whole body) the taps and rows are inside the buffers per the
            // contract.
            unsafe {
                if v == Variant::F4 {
                    filter_taps_loop!(taps, cb, u, us, hs, $w, $vt, ld, st, 6, |x| g6!(
                        x, add, sub, mul, fma, c
                    ));
                } else {
                    assert!(v == Variant::F2, "streamed filters are F(2×2) or F(4×4)");
                    filter_taps_loop!(taps, cb, u, us, hs, $w, $vt, ld, st, 4, |x| g4!(
                        x, add, sub, mul, c
                    ));
                }
            }
        }

        /// The input transform of `v`: `d` holds the patch's pointers (row-major), `c`
        /// channels each; position `ξ`'s row of `V` to `out + ξ · vs`.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn input_tile(
            v: Variant,
            d: &[*const f32; XI_MAX],
            c: usize,
            out: *mut f32,
            vs: usize,
        ) {
            let (add, sub, fma, k) = ($add, $sub, $fma, $set1);
            // SAFETY: (whole body) masked lanes are neither read nor written; the
            // others are inside the rows per the contract.
            unsafe {
                match v {
                    Variant::F4 => input_tile_f4!(d, c, out, vs, $w, ld, st, add, sub, fma, k),
                    Variant::S2 => input_tile_s2!(d, c, out, vs, $w, ld, st, sub),
                    _ => input_tile_f2!(d, c, out, vs, $w, ld, st, add, sub),
                }
            }
        }

        /// The output transform of `v`: `M_ξ` at `m + ξ · ms`, output pixel `q` to
        /// `out + q · k`.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn output_tile(
            v: Variant,
            m: *const f32,
            ms: usize,
            k: usize,
            out: *mut f32,
        ) {
            let (add, sub, fma, c) = ($add, $sub, $fma, $set1);
            // SAFETY: (whole body) as in `input_tile`.
            unsafe {
                match v {
                    Variant::F4 => output_tile_f4!(m, ms, k, out, $w, ld, st, add, sub, fma, c),
                    Variant::S2 => output_tile_s2!(m, ms, k, out, $w, ld, st, add),
                    _ => output_tile_f2!(m, ms, k, out, $w, ld, st, add, sub),
                }
            }
        }

        /// [`super::fused_pixel`] compiled for this instruction set.
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn fused_pixel(
            f: &gemm::FusedOut,
            p: usize,
            j0: usize,
            vals: &mut [f32],
        ) {
            // SAFETY: per the contract.
            unsafe { super::fused_pixel(f, p, j0, vals) }
        }

        /// [`BT4`](super::BT4) and [`AT4`](super::AT4) of six vectors (for the tests).
        #[cfg(test)]
        #[target_feature(enable = $feat)]
        pub(super) fn bt4_at4(x: [$vt; 6]) -> ([$vt; 6], [$vt; 4]) {
            let (add, sub, fma, c) = ($add, $sub, $fma, $set1);
            (bt4!(x, add, sub, fma, c), at4!(x, add, sub, fma, c))
        }
    };
}

/// [`transforms`] on AVX-512F, sixteen channels per vector.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Variant, XI_MAX, gemm};

    /// The first `n` of 16 lanes from `p` (the others zero).
    ///
    /// # Safety
    /// AVX-512F is available; `p` addresses `min(n, 16)` readable floats.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn ld(n: usize, p: *const f32) -> __m512 {
        // SAFETY: masked lanes are not read; the others are readable (contract).
        unsafe { _mm512_maskz_loadu_ps(gemm::lane_mask(n), p) }
    }

    /// The first `n` of `x`'s 16 lanes to `p`.
    ///
    /// # Safety
    /// AVX-512F is available; `p` addresses `min(n, 16)` writable floats.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn st(n: usize, p: *mut f32, x: __m512) {
        // SAFETY: masked lanes are not written; the others are writable (contract).
        unsafe { _mm512_mask_storeu_ps(p, gemm::lane_mask(n), x) }
    }

    transforms!(
        "avx512f",
        16,
        __m512,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        _mm512_fmadd_ps,
        _mm512_set1_ps
    );
}

/// [`transforms`] on AVX2 + FMA, eight channels per vector.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Variant, XI_MAX, gemm};

    /// The `vmaskmov` mask of the first `n` of 8 lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mask8(n: usize) -> __m256i {
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(n as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        )
    }

    /// The first `n` of 8 lanes from `p` (the others zero).
    ///
    /// # Safety
    /// AVX2 is available; `p` addresses `min(n, 8)` readable floats.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn ld(n: usize, p: *const f32) -> __m256 {
        // SAFETY: masked lanes are not read; the others are readable (contract).
        unsafe {
            if n >= 8 {
                _mm256_loadu_ps(p)
            } else {
                _mm256_maskload_ps(p, mask8(n))
            }
        }
    }

    /// The first `n` of `x`'s 8 lanes to `p`.
    ///
    /// # Safety
    /// AVX2 is available; `p` addresses `min(n, 8)` writable floats.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn st(n: usize, p: *mut f32, x: __m256) {
        // SAFETY: masked lanes are not written; the others are writable (contract).
        unsafe {
            if n >= 8 {
                _mm256_storeu_ps(p, x)
            } else {
                _mm256_maskstore_ps(p, mask8(n), x)
            }
        }
    }

    transforms!(
        "avx2,fma",
        8,
        __m256,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_fmadd_ps,
        _mm256_set1_ps
    );
}

/// The chain's steps on pixel `p`'s values (channel `j0 + j` at `vals[j]`), then the
/// store; inlined into each instruction set's `fused_pixel`, which vectorises it.
///
/// # Safety
/// Pixel `p` and channels `j0..j0 + vals.len()` lie inside every tensor of `f` (per
/// its construction) and nobody else touches those channels of that output pixel.
#[inline(always)]
unsafe fn fused_pixel(f: &gemm::FusedOut, p: usize, j0: usize, vals: &mut [f32]) {
    let n = vals.len();
    // SAFETY: (whole body) in bounds per the function's contract.
    unsafe {
        let at = |t: *const f32, rs: usize| std::slice::from_raw_parts(t.add(p * rs + j0), n);
        for st in f.steps() {
            match *st {
                FusedStep::ScaleShift(a, b) => {
                    let (a, b) = (at(a, 0), at(b, 0));
                    for j in 0..n {
                        vals[j] = vals[j] * a[j] + b[j];
                    }
                }
                FusedStep::AddCols(t) => vals.iter_mut().zip(at(t, 0)).for_each(|(v, t)| *v += t),
                FusedStep::MulCols(t) => vals.iter_mut().zip(at(t, 0)).for_each(|(v, t)| *v *= t),
                FusedStep::AddRows(t, rs) => {
                    vals.iter_mut().zip(at(t, rs)).for_each(|(v, t)| *v += t);
                }
                FusedStep::MulRows(t, rs) => {
                    vals.iter_mut().zip(at(t, rs)).for_each(|(v, t)| *v *= t);
                }
                FusedStep::AddScalar(s) => vals.iter_mut().for_each(|v| *v += s),
                FusedStep::MulScalar(s) => vals.iter_mut().for_each(|v| *v *= s),
                FusedStep::Relu => vals.iter_mut().for_each(|v| *v = v.max(0.0)),
            }
        }
        let (y, ys) = f.target();
        std::ptr::copy_nonoverlapping(vals.as_ptr(), y.add(p * ys + j0), n);
    }
}

/// `U = G g Gᵀ` for every (output, input) channel pair, into the packed panels of the
/// products: `U_ξ`'s element `(c, k)` at
/// `packed[ξ · ps + (k / NR) · panel_stride(C) + c · NR + k % NR]`, columns past `K`
/// zero. The threads take panels.
fn transform_filters(g: &ConvGeometry, v: Variant, w: &RawIn, packed: &mut [f32], exec: &Exec) {
    let ws = geo_ws(g, w);
    let (c, k) = (g.c, g.k);
    let panels = k.div_ceil(NR);
    let pstride = panel_stride(c);
    let ps = panels * pstride;
    assert!(packed.len() >= v.xi() * ps);
    let dst = SendPtr(packed.as_mut_ptr().cast_const());
    assert!(w.dtype() == DType::F32 && ws[0] * NR < i32::MAX as usize);
    // The last filter element the panels read, for the bounds check.
    let last = (k - 1) * ws[0] + (c - 1) * ws[1] + 2 * ws[3] + 2 * ws[4];
    assert!(last < w.shape().span(), "winograd filters out of bounds");
    let src = SendPtr(w.ptr_as::<f32>());
    let isa = gemm::pair_isa().expect("Winograd is only planned with vector pair kernels");
    let parts = exec.threads().min(panels);
    exec.for_each(parts, |part| {
        for p in split(panels, parts, part) {
            for ci in 0..c {
                let base = src.get().wrapping_add(p * NR * ws[0] + ci * ws[1]);
                let at = p * pstride + ci * NR;
                // SAFETY: the panel's output channels `< k` of input channel `ci` are
                // inside w (checked above); rows `ξ · ps + at` of `packed` hold NR
                // floats (its length, checked above) and are this part's alone;
                // the CPU has `isa` (`applies`).
                unsafe {
                    filter_panel(
                        isa,
                        v,
                        base,
                        ws,
                        NR.min(k - p * NR),
                        dst.get().cast_mut().add(at),
                        ps,
                    );
                }
            }
        }
    });
}

/// The filters' taps for [`run_streamed`], by pairs of output-channel panels: input
/// channel `c`'s tap `t` (row-major in the 3×3 filter) for output channel `k` at
/// `((k / 32 · C + c) · 9 + t) · 32 + k % 32`; channels past `K` zero. A pair's taps
/// of a block of input channels are one contiguous run. The threads of `exec` take
/// pairs: a plan's first run makes them, and most of their time is the first touch
/// of the new memory's pages (9.4 MB for 512 × 512 channels: 9.3 ms on one thread
/// of a Zen 4 VM, 4.9 on two).
fn tap_pairs(g: &ConvGeometry, w: &RawIn, exec: &Exec) -> KeptBuf {
    let ws = geo_ws(g, w);
    let (c, k) = (g.c, g.k);
    let last = (k - 1) * ws[0] + (c - 1) * ws[1] + 2 * ws[3] + 2 * ws[4];
    assert!(last < w.shape().span(), "winograd filters out of bounds");
    let mut taps = KeptBuf::zeroed(taps_len(g));
    // Each pair's run of taps, one part's alone.
    let pairs: Vec<std::sync::Mutex<&mut [f32]>> = taps
        .chunks_mut(c * 9 * STREAM_COLS)
        .map(std::sync::Mutex::new)
        .collect();
    exec.for_each(pairs.len(), |pair| {
        let mut guard = pairs[pair].lock().unwrap_or_else(|e| e.into_inner());
        let dst: &mut [f32] = &mut guard;
        for kk in pair * STREAM_COLS..k.min((pair + 1) * STREAM_COLS) {
            for ci in 0..c {
                for t in 0..9 {
                    let at = kk * ws[0] + ci * ws[1] + (t / 3) * ws[3] + (t % 3) * ws[4];
                    // SAFETY: `at <= last`, inside the filters (checked above).
                    dst[(ci * 9 + t) * STREAM_COLS + kk % STREAM_COLS] = unsafe { w.load(at) };
                }
            }
        }
    });
    taps
}

/// [`filter_tile`] for one input channel and the (up to) sixteen output channels of
/// a panel at once: output channel `j`'s filter at `w + j · ws[0]` (taps at
/// `fy · ws[3] + fx · ws[4]`), position `ξ`'s row of sixteen to `dst + ξ · ps`
/// (channels past `n` zero, of either sign).
///
/// # Safety
/// AVX-512F is available; the filters of channels `j < n` are readable; the rows of
/// `NR` floats (one per position of `v`) writable.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn filter_panel_avx512(
    v: Variant,
    w: *const f32,
    ws: [usize; 5],
    n: usize,
    dst: *mut f32,
    ps: usize,
) {
    use std::arch::x86_64::*;
    let mask = gemm::lane_mask(n);
    let idx: [i32; 16] = std::array::from_fn(|j| (j * ws[0]) as i32);
    // SAFETY: (whole body) per the function's contract; masked lanes are not read.
    unsafe {
        let idx = _mm512_loadu_si512(idx.as_ptr().cast());
        let g: [__m512; 9] = std::array::from_fn(|i| {
            let p = w.add((i / 3) * ws[3] + (i % 3) * ws[4]);
            _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, idx, p.cast())
        });
        let (add, sub, mul, fma, c) = (
            _mm512_add_ps,
            _mm512_sub_ps,
            _mm512_mul_ps,
            _mm512_fmadd_ps,
            _mm512_set1_ps,
        );
        let u = filter_tile!(v, g, _mm512_setzero_ps(), add, sub, mul, fma, c);
        for (xi, x) in u.into_iter().take(v.xi()).enumerate() {
            _mm512_storeu_ps(dst.add(xi * ps), x);
        }
    }
}

/// [`filter_panel_avx512`] on AVX2 + FMA: the panel's sixteen output channels as two
/// gathers of eight, each through the same transform (so the same values).
///
/// # Safety
/// As [`filter_panel_avx512`], with AVX2 and FMA instead of AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn filter_panel_avx2(
    v: Variant,
    w: *const f32,
    ws: [usize; 5],
    n: usize,
    dst: *mut f32,
    ps: usize,
) {
    use std::arch::x86_64::*;
    let (add, sub, mul, fma, c) = (
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_fmadd_ps,
        _mm256_set1_ps,
    );
    for h in 0..2 {
        let lanes = n.saturating_sub(8 * h).min(8) as i32;
        let idx: [i32; 8] = std::array::from_fn(|j| ((8 * h + j) * ws[0]) as i32);
        // SAFETY: (whole body) per the function's contract; masked lanes are not read.
        unsafe {
            let idx = _mm256_loadu_si256(idx.as_ptr().cast());
            let mask = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
                _mm256_set1_epi32(lanes),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            ));
            let g: [__m256; 9] = std::array::from_fn(|i| {
                let p = w.add((i / 3) * ws[3] + (i % 3) * ws[4]);
                _mm256_mask_i32gather_ps::<4>(_mm256_setzero_ps(), p, idx, mask)
            });
            let u = filter_tile!(v, g, _mm256_setzero_ps(), add, sub, mul, fma, c);
            for (xi, x) in u.into_iter().take(v.xi()).enumerate() {
                _mm256_storeu_ps(dst.add(xi * ps + 8 * h), x);
            }
        }
    }
}

/// One input channel's filter panel ([`filter_panel_avx512`]) on `isa`.
///
/// # Safety
/// As [`filter_panel_avx512`], on a CPU with `isa`.
unsafe fn filter_panel(
    isa: PairIsa,
    v: Variant,
    w: *const f32,
    ws: [usize; 5],
    n: usize,
    dst: *mut f32,
    ps: usize,
) {
    // SAFETY: per the function's contract.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            PairIsa::Avx512 => filter_panel_avx512(v, w, ws, n, dst, ps),
            #[cfg(target_arch = "x86_64")]
            PairIsa::Avx2 => filter_panel_avx2(v, w, ws, n, dst, ps),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("Winograd is only planned with vector pair kernels"),
        }
    }
}

/// The transform of a block of taps (`filter_taps` of [`transforms`]) on `isa`:
/// position `ξ`'s row of channel `c` of panel `h` to `u + ξ · us + h · hs + c · 16`.
///
/// # Safety
/// The CPU has `isa`; `taps` holds `cb · 9 · 32` floats; the rows are writable.
unsafe fn filter_taps(
    isa: PairIsa,
    v: Variant,
    taps: *const f32,
    cb: usize,
    u: *mut f32,
    (us, hs): (usize, usize),
) {
    // SAFETY: per the function's contract.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            PairIsa::Avx512 => avx512::filter_taps(v, taps, cb, u, us, hs),
            #[cfg(target_arch = "x86_64")]
            PairIsa::Avx2 => avx2::filter_taps(v, taps, cb, u, us, hs),
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!("Winograd is only planned with vector pair kernels"),
        }
    }
}

/// `G g Gᵀ` of one 3×3 filter (`g[3r + s]`): the reference for
/// [`filter_panel_avx512`], with the same operations in the same order.
#[cfg(test)]
fn filter_tile(v: Variant, g: [f32; 9]) -> [f32; XI_MAX] {
    let add = |a: f32, b: f32| a + b;
    let sub = |a: f32, b: f32| a - b;
    let mul = |a: f32, b: f32| a * b;
    let fma = |a: f32, b: f32, c: f32| a.mul_add(b, c);
    let c = |x: f32| x;
    filter_tile!(v, g, 0f32, add, sub, mul, fma, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's tiles in chunks that cover them once, in order: all but the last of
    /// one size, a whole number of row tiles no larger than the buffers hold, and no
    /// empty chunk.
    #[test]
    fn chunks_are_whole_row_tiles_but_the_last() {
        assert_eq!(chunk_range(98, 3, 0), 0..36);
        assert_eq!(chunk_range(98, 3, 2), 72..98);
        for cap in [6, 12, 42, 120] {
            for len in 1usize..400 {
                let n = len.div_ceil(cap);
                let mut next = 0;
                for i in 0..n {
                    let r = chunk_range(len, n, i);
                    assert_eq!(r.start, next, "{len} tiles in {n}");
                    assert!(!r.is_empty() && r.len() <= cap, "{len} tiles in {n}: {r:?}");
                    if i + 1 < n {
                        assert_eq!(r.len() % MR, 0, "{len} tiles in {n}: {r:?}");
                        assert_eq!(r.len(), chunk_range(len, n, 0).len());
                    }
                    next = r.end;
                }
                assert_eq!(next, len);
            }
        }
    }

    /// The vector filter transform gives the scalar one's values bit for bit, for a
    /// full and a partial panel of output channels, in both variants.
    #[test]
    fn filter_panel_matches_the_scalar_transform() {
        let Some(isa) = gemm::pair_isa() else {
            return; // no vector pair kernels here: Winograd is never planned
        };
        let (c, k) = (3usize, 16usize);
        // Filters [K][3][3][C] (channels-last): strides k 9C, c 1, fy 3C, fx C.
        let ws = [9 * c, 1, 0, 3 * c, c];
        let w: Vec<f32> = (0..k * 9 * c)
            .map(|i| ((i * 37) % 101) as f32 / 7.0 - 6.0)
            .collect();
        for v in [Variant::F2, Variant::F4, Variant::S2] {
            for n in [16, 5] {
                let ps = 48;
                let mut dst = vec![f32::NAN; v.xi() * ps];
                for ci in 0..c {
                    // SAFETY: the CPU has `isa`; the filters of `n <= k` channels are
                    // inside `w`; the rows `ξ · ps + ci * NR` hold NR floats inside
                    // `dst`.
                    unsafe {
                        filter_panel(
                            isa,
                            v,
                            w.as_ptr().add(ci),
                            ws,
                            n,
                            dst.as_mut_ptr().add(ci * NR),
                            ps,
                        );
                    }
                    for j in 0..NR {
                        let want = if j < n {
                            filter_tile(
                                v,
                                std::array::from_fn(|i| {
                                    w[j * ws[0] + ci + (i / 3) * ws[3] + (i % 3) * ws[4]]
                                }),
                            )
                        } else {
                            // A zero filter's transform (−0 where a negative
                            // coefficient multiplies it).
                            filter_tile(v, [0.0; 9])
                        };
                        for xi in 0..v.xi() {
                            let got = dst[xi * ps + ci * NR + j];
                            assert_eq!(
                                got.to_bits(),
                                want[xi].to_bits(),
                                "{v:?} n {n} ci {ci} j {j} xi {xi}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The streamed filters: [`tap_pairs`] lays out every tap of every pair of panels
    /// (zero past `K`), and the transform of a block of them gives the scalar
    /// transform's values bit for bit, in both streamed variants: 40 output channels
    /// (a pair, then one partial panel), 5 input channels.
    #[test]
    fn filter_taps_match_the_scalar_transform() {
        let Some(isa) = gemm::pair_isa() else {
            return;
        };
        let (c, k) = (5usize, 40usize);
        let geo = ConvGeometry::new(
            &[1, c, 4, 4],
            &[k, c, 3, 3],
            &[1, k, 4, 4],
            &ConvParams::simple(2, 1, 1),
        )
        .unwrap();
        let shape = Shape::channels_last(&[k, c, 3, 3]);
        let ws = geo.strides5(&shape);
        let w: Vec<f32> = (0..k * 9 * c)
            .map(|i| ((i * 37) % 101) as f32 / 7.0 - 6.0)
            .collect();
        // SAFETY: `w` holds the shape's span of floats and outlives the view.
        let raw = unsafe { RawIn::from_parts(w.as_ptr().cast(), DType::F32, shape) };
        let taps = tap_pairs(&geo, &raw, &Exec::new(3));
        assert_eq!(taps.len(), taps_len(&geo));
        let tap = |kk: usize, ci: usize, t: usize| {
            w[kk * ws[0] + ci * ws[1] + (t / 3) * ws[3] + (t % 3) * ws[4]]
        };
        for v in [Variant::F2, Variant::F4] {
            for pair in 0..k.div_ceil(STREAM_COLS) {
                let (hs, us) = (NR * c, 2 * NR * c + 16);
                let mut u = vec![f32::NAN; v.xi() * us];
                let block = &taps[pair * c * 9 * STREAM_COLS..(pair + 1) * c * 9 * STREAM_COLS];
                // SAFETY: the CPU has `isa`; the block holds `c · 9 · 32` taps; `u`
                // holds `xis` positions of two panels of `c` rows.
                unsafe { filter_taps(isa, v, block.as_ptr(), c, u.as_mut_ptr(), (us, hs)) };
                for j in 0..STREAM_COLS {
                    let kk = pair * STREAM_COLS + j;
                    for ci in 0..c {
                        let g = std::array::from_fn(|t| if kk < k { tap(kk, ci, t) } else { 0.0 });
                        let want = filter_tile(v, g);
                        for xi in 0..v.xi() {
                            let got = u[xi * us + (j / NR) * hs + ci * NR + j % NR];
                            assert_eq!(
                                got.to_bits(),
                                want[xi].to_bits(),
                                "{v:?} channel {kk} of {k}, input {ci}, position {xi}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The stride-2 transforms: `Aᵀ [(G g) ⊙ (Bᵀ d)]` over five inputs is the
    /// correlation of `g` with `d` at stride 2 (outputs `g · d[0..3]` and `g ·
    /// d[2..5]`), exactly on small integers (every coefficient is 0 or ±1); in 2-D,
    /// through the tile macros' column-then-row order, the 2×2 outputs of a 5×5 patch.
    #[test]
    fn the_stride_2_transforms_correlate_at_stride_2() {
        let (add, sub) = (|a: f64, b: f64| a + b, |a: f64, b: f64| a - b);
        let (mul, fma) = (
            |a: f64, b: f64| a * b,
            |a: f64, b: f64, c: f64| a.mul_add(b, c),
        );
        let c = |x: f64| x;
        for seed in 0..20u64 {
            let val = |i: u64| (((seed * 31 + i) * 2654435761) % 17) as f64 - 8.0;
            let g: [f64; 9] = std::array::from_fn(|i| val(i as u64));
            let d: [f64; 25] = std::array::from_fn(|i| val(10 + i as u64));
            let u1 = gs2!((g[0], g[1], g[2]), add);
            let v1 = bs2!([d[0], d[1], d[2], d[3], d[4]], sub);
            let y1 = as2!(std::array::from_fn::<f64, 5, _>(|x| u1[x] * v1[x]), add);
            for (i, y) in y1.into_iter().enumerate() {
                let want: f64 = (0..3).map(|k| g[k] * d[2 * i + k]).sum();
                assert_eq!(y, want, "seed {seed} 1-D output {i}");
            }
            let u = filter_tile!(Variant::S2, g, 0.0, add, sub, mul, fma, c);
            let mut t = [[0f64; 5]; 5];
            for s in 0..5 {
                let col = bs2!(std::array::from_fn::<f64, 5, _>(|r| d[5 * r + s]), sub);
                for r in 0..5 {
                    t[r][s] = col[r];
                }
            }
            let m: [f64; 25] = std::array::from_fn(|x| {
                let row = bs2!(t[x / 5], sub);
                u[x] * row[x % 5]
            });
            let mut a = [[0f64; 5]; 2];
            for s in 0..5 {
                let col = as2!(std::array::from_fn::<f64, 5, _>(|r| m[5 * r + s]), add);
                a[0][s] = col[0];
                a[1][s] = col[1];
            }
            for (oy, row) in a.iter().enumerate() {
                let out = as2!(*row, add);
                for (ox, y) in out.into_iter().enumerate() {
                    let want: f64 = (0..9)
                        .map(|i| g[i] * d[5 * (2 * oy + i / 3) + 2 * ox + i % 3])
                        .sum();
                    assert_eq!(y, want, "seed {seed} output ({oy}, {ox})");
                }
            }
        }
    }

    /// `Aᵀ [(G g) ⊙ (Bᵀ d)]` of F(4×4, 3×3)'s matrices is the correlation of `g` with
    /// `d` (up to the rounding of `G`'s thirds and fifteenths), and [`g6`] computes `G`.
    #[test]
    fn the_f4_matrices_correlate() {
        for seed in 0..20u64 {
            let val = |i: u64| (((seed * 31 + i) * 2654435761) % 1000) as f64 / 250.0 - 2.0;
            let g: [f64; 3] = std::array::from_fn(|i| val(i as u64));
            let d: [f64; 6] = std::array::from_fn(|i| val(10 + i as u64));
            let u: [f64; 6] = std::array::from_fn(|x| (0..3).map(|k| G4[x][k] as f64 * g[k]).sum());
            // The grouped filter transform the kernels use is the same `G`.
            let (add, sub) = (|a: f64, b: f64| a + b, |a: f64, b: f64| a - b);
            let (mul, fma) = (
                |a: f64, b: f64| a * b,
                |a: f64, b: f64, c: f64| a.mul_add(b, c),
            );
            let c = |x: f64| x;
            let grouped: [f64; 6] = g6!((g[0], g[1], g[2]), add, sub, mul, fma, c);
            for x in 0..6 {
                assert!((grouped[x] - u[x]).abs() < 1e-6, "seed {seed} G row {x}");
            }
            let v: [f64; 6] =
                std::array::from_fn(|x| (0..6).map(|l| BT4[x][l] as f64 * d[l]).sum());
            for i in 0..4 {
                let y: f64 = (0..6).map(|x| AT4[i][x] as f64 * u[x] * v[x]).sum();
                let want: f64 = (0..3).map(|k| g[k] * d[i + k]).sum();
                assert!((y - want).abs() < 1e-5, "seed {seed} i {i}: {y} vs {want}");
            }
        }
    }

    /// The grouped vector transforms compute `Bᵀ x` and `Aᵀ x` of the matrices, on
    /// every instruction set of this CPU that Winograd runs on.
    #[test]
    fn the_f4_vector_transforms_match_the_matrices() {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // Lane `j` of input `l`.
            let x = |l: usize, j: usize| ((l * 16 + j) * 37 % 23) as f32 / 4.0 - 2.5;
            let mut lanes = [[0f32; 16]; 6];
            for (l, row) in lanes.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    *e = x(l, j);
                }
            }
            let check = |b: Vec<[f32; 16]>, a: Vec<[f32; 16]>, width: usize| {
                for j in 0..width {
                    for (r, v) in b.iter().enumerate() {
                        let want: f32 = (0..6).map(|l| BT4[r][l] * x(l, j)).sum();
                        assert!((v[j] - want).abs() < 1e-5, "Bᵀ row {r} lane {j}");
                    }
                    for (r, v) in a.iter().enumerate() {
                        let want: f32 = (0..6).map(|l| AT4[r][l] * x(l, j)).sum();
                        assert!((v[j] - want).abs() < 1e-5, "Aᵀ row {r} lane {j}");
                    }
                }
            };
            let mut ran = 0;
            if std::arch::is_x86_feature_detected!("avx512f") {
                let out = |v: __m512| {
                    let mut o = [0f32; 16];
                    // SAFETY: AVX-512F is present; `o` holds 16 floats.
                    unsafe { _mm512_storeu_ps(o.as_mut_ptr(), v) };
                    o
                };
                // SAFETY: AVX-512F is present (checked above); each row holds 16 floats.
                let (b, a) = unsafe {
                    avx512::bt4_at4(std::array::from_fn(|l| _mm512_loadu_ps(lanes[l].as_ptr())))
                };
                check(b.map(out).to_vec(), a.map(out).to_vec(), 16);
                ran += 1;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                let out = |v: __m256| {
                    let mut o = [0f32; 16];
                    // SAFETY: AVX is present; `o` holds 16 floats.
                    unsafe { _mm256_storeu_ps(o.as_mut_ptr(), v) };
                    o
                };
                // SAFETY: AVX2 and FMA are present (checked above); each row holds 16
                // floats, of which the first 8 are read.
                let (b, a) = unsafe {
                    avx2::bt4_at4(std::array::from_fn(|l| _mm256_loadu_ps(lanes[l].as_ptr())))
                };
                check(b.map(out).to_vec(), a.map(out).to_vec(), 8);
                ran += 1;
            }
            assert!(
                ran > 0 || gemm::pair_isa().is_none(),
                "a pair ISA without its test"
            );
        }
    }

    /// The regimes `kernels::pieces_taken_by_any_thread_give_the_same_bits` runs
    /// (16 channels, 128 × 128, F(4×4)): chunks on two and three threads, several per
    /// thread (each its own part on three), and phases on five.
    #[test]
    fn the_pieces_test_covers_chunks_and_phases() {
        let p = ConvParams::simple(2, 1, 1);
        let geo =
            ConvGeometry::new(&[1, 16, 128, 128], &[16, 16, 3, 3], &[1, 16, 128, 128], &p).unwrap();
        for threads in [2, 3, 5] {
            assert_eq!(variant(&geo, threads, false), Variant::F4);
        }
        assert!(!phased(&geo, Variant::F4, 2) && !phased(&geo, Variant::F4, 3));
        assert!(phased(&geo, Variant::F4, 5));
        let chunks = |t: usize| split(total_tiles(&geo, Variant::F4), 3, t).len();
        assert!((0..3).all(|t| chunks(t).div_ceil(chunk(&geo, Variant::F4)) >= 2));
        const { assert!(3 >= PIECES_FROM) };
    }

    /// The variant follows the tiles and the filters: F(4×4) for ResNet-50's 56² and
    /// 28² layers (streamed per chunk), its 14² ones (256 channels, in phases; at batch
    /// 1 with AVX2 only) and its 7² ones (512 channels: from batch 8 in phases, at
    /// batch 1 with their taps streamed); F(2×2) for the 7² ones at batch 1 when the
    /// filters are transformed on every run, filters between the two regimes, and small
    /// images.
    #[test]
    fn the_variant_follows_the_tiles() {
        let geo = |n: usize, hw: usize, c: usize| {
            let p = ConvParams {
                pre_padding: vec![1, 1],
                post_padding: vec![1, 1],
                stride: vec![1, 1],
                dilation: vec![1, 1],
                mode: ConvMode::CrossCorrelation,
            };
            ConvGeometry::new(&[n, c, hw, hw], &[c, c, 3, 3], &[n, c, hw, hw], &p).unwrap()
        };
        assert_eq!(variant(&geo(1, 56, 64), 2, true), Variant::F4);
        assert_eq!(variant(&geo(1, 28, 128), 2, true), Variant::F4);
        assert_eq!(variant(&geo(8, 28, 128), 2, true), Variant::F4);
        assert_eq!(variant(&geo(8, 14, 256), 2, true), Variant::F4);
        // At batch 1 the 14² layers' filters cost more to read than F(4×4) saves
        // with AVX-512; with AVX2 (half the multiply-adds per read) it still pays.
        let f4_at_14 = if gemm::pair_isa() == Some(PairIsa::Avx512) {
            Variant::F2
        } else {
            Variant::F4
        };
        assert_eq!(variant(&geo(1, 14, 256), 2, true), f4_at_14);
        assert_eq!(variant(&geo(8, 7, 512), 2, true), Variant::F4);
        // Streamed (where this CPU streams), the 7² layers at batch 1 are F(4×4);
        // kept transformed, F(2×2) (4 F(4×4) tiles are too few to read its filters).
        let pays = streaming_pays();
        let at_7 = if pays { Variant::F4 } else { Variant::F2 };
        for threads in [1, 2, 16] {
            assert_eq!(variant(&geo(1, 7, 512), threads, true), at_7);
            assert_eq!(streamed(&geo(1, 7, 512), Variant::F4, 2, true), pays);
        }
        assert_eq!(variant(&geo(1, 7, 512), 2, false), Variant::F2);
        assert!(!streamed(&geo(1, 7, 512), Variant::F2, 2, false));
        assert!(!streamed(&geo(8, 7, 512), Variant::F4, 2, true));
        // From 256 × 256 channels (F(2×2)'s transformed filters over 4 MiB, panels
        // padded) on at most 32 F(2×2) tiles.
        assert_eq!(streamed(&geo(1, 7, 256), Variant::F4, 2, true), pays);
        assert!(!streamed(&geo(1, 7, 192), Variant::F2, 2, true));
        assert!(!streamed(&geo(1, 14, 512), Variant::F2, 2, true));
        // More threads than pairs of output-channel panels (16 at 512 channels): not
        // streamed, so F(2×2) in phases.
        assert!(!streamed(&geo(1, 7, 512), Variant::F4, 17, true));
        assert_eq!(variant(&geo(1, 7, 512), 17, true), Variant::F2);
        assert_eq!(variant(&geo(8, 14, 160), 2, true), Variant::F2);
        assert_eq!(variant(&geo(1, 14, 64), 2, true), Variant::F2);
        assert_eq!(variant(&geo(4, 6, 16), 2, true), Variant::F2);
        // On 16 threads the 14² layers at batch 1 have 1 tile per thread: F(2×2).
        assert_eq!(variant(&geo(1, 14, 256), 16, true), Variant::F2);
        assert_eq!(variant(&geo(8, 14, 256), 16, true), Variant::F4);
        assert_eq!(variant(&geo(8, 7, 512), 16, true), Variant::F4);
        // Transformed on every run (filters not kept), large filters stay F(2×2).
        assert_eq!(variant(&geo(8, 14, 256), 2, false), Variant::F2);
        assert_eq!(variant(&geo(8, 7, 512), 2, false), Variant::F2);
        assert_eq!(variant(&geo(1, 56, 64), 2, false), Variant::F4);
    }

    /// Each of two threads can keep its own tiles where it has at least four row tiles of
    /// them within 1.5 MiB of `V` and `M`: ResNet-50's 28² and 14² layers at batch 1,
    /// and `tests/all/kernels.rs`'s case for it; not at stride 2, not on one or three
    /// threads, not where the tiles are too many (56² at batch 1, batch 8) or too few.
    /// It does where the CPU takes own tiles ([`own_tiles_pay`]); else those layers go
    /// in phases.
    #[test]
    fn two_threads_keep_their_own_tiles_where_they_fit() {
        let geo = |n: usize, hw: usize, c: usize, k: usize, stride: usize| {
            let p = ConvParams {
                pre_padding: vec![1, 1],
                post_padding: vec![1, 1],
                stride: vec![stride, stride],
                dilation: vec![1, 1],
                mode: ConvMode::CrossCorrelation,
            };
            let o = (hw - 1) / stride + 1;
            ConvGeometry::new(&[n, c, hw, hw], &[k, c, 3, 3], &[n, k, o, o], &p).unwrap()
        };
        let pays = own_tiles_pay();
        for (g, v) in [
            (geo(1, 28, 128, 128, 1), Variant::F4),
            (geo(1, 14, 256, 256, 1), Variant::F2),
            (geo(1, 14, 24, 40, 1), Variant::F2),
        ] {
            assert!(fits_own_tiles(&g, v, 2), "{g:?}");
            assert_eq!(own_tiles(&g, v, 2), pays, "{g:?}");
            assert_eq!(phased(&g, v, 2), !pays, "{g:?}");
            if pays {
                assert_eq!(chunk_on(&g, v, 2), total_tiles(&g, v).div_ceil(2));
            }
            assert!(
                !fits_own_tiles(&g, v, 1) && !fits_own_tiles(&g, v, 3),
                "{g:?}"
            );
            assert!(phased(&g, v, 3), "{g:?}");
        }
        // The F(2×2) case of tests/all/kernels.rs: 49 tiles, 25 and 24 per thread.
        let small = geo(1, 14, 24, 40, 1);
        assert_eq!(variant(&small, 2, false), Variant::F2);
        assert_eq!(total_tiles(&small, Variant::F2), 49);
        // Too many tiles' `V` and `M` for one chunk, too few tiles, stride 2.
        assert!(!fits_own_tiles(&geo(1, 56, 64, 64, 1), Variant::F4, 2));
        assert!(!fits_own_tiles(&geo(8, 14, 256, 256, 1), Variant::F2, 2));
        assert!(!fits_own_tiles(&geo(1, 14, 256, 256, 1), Variant::F4, 2));
        assert!(!fits_own_tiles(&geo(1, 28, 256, 256, 2), Variant::S2, 2));
    }

    /// The vendor read from CPUID is the one Linux reports (where it reports one).
    #[test]
    fn the_vendor_check_agrees_with_the_kernel() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let Some(vendor) = info.lines().find_map(|l| {
            l.strip_prefix("vendor_id")
                .map(|v| v.trim_start_matches([' ', '\t', ':']))
        }) else {
            return;
        };
        assert_eq!(
            cpu_is_amd(),
            vendor.trim() == "AuthenticAMD",
            "vendor_id {vendor:?}"
        );
    }
}
