//! Convolution and matmul kernels against naive loops: every implementation, NCHW,
//! NHWC and odd (padded) strides, groups, dilation, both modes, fp16 storage.

use half::f16;
use hipdnn_cpu_provider::kernels::conv::winograd_streaming_pays;
use hipdnn_cpu_provider::kernels::{
    ConvAlgo, ConvGeometry, ConvMode, ConvParams, Epilogue, Exec, FpropImpl, FpropPlan,
};
use hipdnn_cpu_provider::tensor::{DType, Shape, TensorMut, TensorRef};

use crate::support::*;

struct Case {
    x: [i64; 4],
    w: [i64; 4],
    pad: i64,
    stride: i64,
    dil: i64,
    flip: bool,
}

fn cases() -> Vec<Case> {
    vec![
        // Pointwise over 2 images whose pixel counts are not multiples of 16 (B panels
        // straddle images).
        Case {
            x: [2, 40, 5, 7],
            w: [20, 40, 1, 1],
            pad: 0,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // More channels than a K block (taps split into parts), several K blocks, a
        // partial last panel of output channels.
        Case {
            x: [1, 260, 4, 5],
            w: [37, 260, 2, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: true,
        },
        Case {
            x: [1, 16, 7, 9],
            w: [20, 16, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        Case {
            x: [2, 8, 10, 10],
            w: [16, 8, 1, 1],
            pad: 0,
            stride: 2,
            dil: 1,
            flip: false,
        },
        Case {
            x: [2, 12, 9, 8],
            w: [7, 12, 3, 2],
            pad: 2,
            stride: 2,
            dil: 2,
            flip: true,
        },
        Case {
            x: [1, 16, 6, 6],
            w: [8, 4, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        }, // 4 groups
        Case {
            x: [1, 3, 15, 15],
            w: [9, 3, 5, 5],
            pad: 2,
            stride: 3,
            dil: 1,
            flip: false,
        },
        // Winograd where channels-last: two images with odd extents (partial tiles),
        // channel counts off the vector width, padding 2; and no padding.
        Case {
            x: [2, 19, 6, 5],
            w: [33, 19, 3, 3],
            pad: 2,
            stride: 1,
            dil: 1,
            flip: false,
        },
        Case {
            x: [1, 32, 8, 8],
            w: [16, 32, 3, 3],
            pad: 0,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // 49 F(2×2) tiles: on two threads each keeps its own 25 or 24 where the CPU
        // takes own tiles (one chunk, no phases; `winograd_own_tiles_pay`), else phases.
        Case {
            x: [1, 24, 14, 14],
            w: [40, 24, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // Winograd at stride 2: odd extents (partial tiles and a patch past the last
        // input row), channel counts off the vector width, padding 1, 0 and 2; over
        // 256 input channels.
        Case {
            x: [2, 19, 13, 11],
            w: [33, 19, 3, 3],
            pad: 1,
            stride: 2,
            dil: 1,
            flip: false,
        },
        Case {
            x: [1, 24, 12, 10],
            w: [20, 24, 3, 3],
            pad: 0,
            stride: 2,
            dil: 1,
            flip: false,
        },
        Case {
            x: [1, 16, 9, 9],
            w: [16, 16, 3, 3],
            pad: 2,
            stride: 2,
            dil: 1,
            flip: false,
        },
        Case {
            x: [1, 272, 7, 8],
            w: [24, 272, 3, 3],
            pad: 1,
            stride: 2,
            dil: 1,
            flip: false,
        },
        // Large enough for F(4×4, 3×3): partial tiles in both directions, padding 1
        // and 2.
        Case {
            x: [2, 19, 19, 17],
            w: [33, 19, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        Case {
            x: [1, 16, 22, 21],
            w: [24, 16, 3, 3],
            pad: 2,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // More than 256 channels (F(2×2): per chunk on one thread, in phases on two), the
        // products over more K steps than one panel pair keeps in L1.
        Case {
            x: [1, 300, 5, 6],
            w: [20, 300, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // Filters over 4 MiB as F(4×4) (in phases): 176 × 176 channels, 18 tiles.
        Case {
            x: [2, 176, 12, 12],
            w: [176, 176, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // Constant filters of over 256 × 256 channels on a small image stream from their
        // taps: F(4×4) (4 tiles), and F(2×2) where F(4×4) would not save (5 × 2 pixels);
        // a partial block of input channels (300 = 4 · 64 + 44) and a last pair of
        // output-channel panels with one partial panel (250 = 7 · 32 + 26).
        Case {
            x: [1, 300, 5, 7],
            w: [250, 300, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        Case {
            x: [2, 300, 5, 2],
            w: [250, 300, 3, 3],
            pad: 1,
            stride: 1,
            dil: 1,
            flip: false,
        },
        // A network's first layer: 3 channels, 7×7, stride 2, two images (run over
        // filter rows of a zero-padded channels-last copy in every layout).
        Case {
            x: [2, 3, 17, 16],
            w: [20, 3, 7, 7],
            pad: 3,
            stride: 2,
            dil: 1,
            flip: false,
        },
    ]
}

/// `plan` over fp32 `x` and `w` into a fresh `y` of shape `ys` (NaN where nothing is
/// stored).
fn run_f32(
    plan: &FpropPlan,
    (x, xs): (&[f32], &Shape),
    (w, ws): (&[f32], &Shape),
    ys: &Shape,
    exec: &Exec,
) -> Vec<f32> {
    let mut y = vec![f32::NAN; ys.span()];
    let mut scratch = vec![0f32; plan.workspace_len()];
    let xr = TensorRef::new(x, xs).unwrap();
    let wr = TensorRef::new(w, ws).unwrap();
    let yr = TensorMut::new(&mut y[..], ys).unwrap();
    plan.run(
        xr.raw(),
        wr.raw(),
        &Epilogue::store(yr.raw().clone()),
        exec,
        &mut scratch,
    );
    drop(yr);
    y
}

/// Strides for layout 0 = NCHW, 1 = NHWC, 2 = NCHW with padded rows (odd strides).
fn layout(dims: &[i64], l: usize) -> Vec<i64> {
    match l {
        0 => strides_in(dims, &[0, 1, 2, 3]),
        1 => strides_in(dims, &[0, 2, 3, 1]),
        _ => {
            let w = dims[3] + 3;
            vec![dims[1] * dims[2] * w + 5, dims[2] * w, w, 1]
        }
    }
}

#[test]
fn conv_fprop_every_impl_and_layout_matches_naive() {
    // The Winograd variants the cases ran (output tile edges).
    let mut wino_tiles = std::collections::BTreeSet::new();
    // Whether Winograd ran over more than 256 input channels.
    let mut wino_wide = false;
    // Whether F(4×4) ran in phases (filters over 4 MiB).
    let mut f4_phased = false;
    // Whether the stride-2 variant ran.
    let mut wino_strided = false;
    // The layouts Winograd ran in.
    let mut wino_layouts = std::collections::BTreeSet::new();
    // Whether the indirect GEMM ran over a channels-last copy.
    let mut indirect_copied = false;
    // The variants that ran with their filters streamed.
    let mut wino_streamed = std::collections::BTreeSet::new();
    for c in cases() {
        let o = |i: usize| (c.x[i] + 2 * c.pad - c.dil * (c.w[i] - 1) - 1) / c.stride + 1;
        let yd = [c.x[0], c.w[0], o(2), o(3)];
        let params = ConvParams {
            pre_padding: vec![c.pad as usize; 2],
            post_padding: vec![c.pad as usize; 2],
            stride: vec![c.stride as usize; 2],
            dilation: vec![c.dil as usize; 2],
            mode: if c.flip {
                ConvMode::Convolution
            } else {
                ConvMode::CrossCorrelation
            },
        };
        for l in 0..3 {
            let (xs, ws, ys) = (layout(&c.x, l), layout(&c.w, l), layout(&yd, l));
            let x = values(span(&c.x, &xs), 1);
            let w = values(span(&c.w, &ws), 2);
            let want = naive_conv2d(
                &x, &c.x, &xs, &w, &c.w, &ws, &yd, c.pad, c.stride, c.dil, c.flip,
            );
            let u = |v: &[i64]| v.iter().map(|&d| d as usize).collect::<Vec<_>>();
            let (xsh, wsh, ysh) = (
                Shape::new(&u(&c.x), &u(&xs)),
                Shape::new(&u(&c.w), &u(&ws)),
                Shape::new(&u(&yd), &u(&ys)),
            );
            let geo = ConvGeometry::new(&u(&c.x), &u(&c.w), &u(&yd), &params).unwrap();
            // Winograd on one thread (each through its own tiles, or in phases where the
            // filters are large) and two (in phases), with the filters transformed on
            // every run and declared constant (F(4×4) for large filters).
            for (imp, threads, constant) in [
                (FpropImpl::ImplicitGemm, 2, false),
                (FpropImpl::Indirect, 2, false),
                (FpropImpl::Direct, 2, false),
                (FpropImpl::Winograd, 2, false),
                (FpropImpl::Winograd, 1, false),
                (FpropImpl::Winograd, 2, true),
                (FpropImpl::Winograd, 1, true),
            ] {
                let exec = Exec::new(threads);
                let strided_ok = geo.taps() == 1 && geo.reads_no_padding();
                // Few channels run over filter rows of a channels-last copy, whatever
                // the input's and the filters' layouts.
                let filter_rows = c.x[1] < 8 && !c.flip && c.dil == 1;
                // Strided channels of one group under several taps run over a
                // channels-last copy.
                let copied = c.x[1] == c.w[1] && geo.taps() > 1;
                if imp == FpropImpl::Indirect
                    && xs[1] != 1
                    && !strided_ok
                    && !filter_rows
                    && !copied
                {
                    continue; // needs unit channel stride, a copy, or 1×1 without padding
                }
                let plan = |algo| {
                    FpropPlan::new(
                        geo.clone(),
                        (&xsh, DType::F32),
                        (&wsh, DType::F32),
                        algo,
                        threads,
                    )
                };
                let plan = if imp == FpropImpl::Winograd {
                    // Only where it applies (and the CPU has the pair kernels); in any
                    // layout, over a channels-last copy where the input's channels are
                    // strided.
                    let p = plan(ConvAlgo::Winograd);
                    let p = if constant {
                        p.for_constant_weights()
                    } else {
                        p
                    };
                    let shape_fits = c.w[2] == 3 && c.w[3] == 3 && c.stride <= 2;
                    let shape_fits = shape_fits && c.dil == 1 && !c.flip && c.x[1] >= 16;
                    let shape_fits = shape_fits && c.w[0] >= 16 && c.w[1] == c.x[1];
                    assert!(p.imp != imp || shape_fits, "{:?} layout {l}: {p:?}", c.x);
                    if p.imp != imp {
                        continue;
                    }
                    assert_eq!(p.copies_input(), l != 1, "{:?} layout {l}", c.x);
                    wino_layouts.insert(l);
                    wino_tiles.extend(p.winograd_tile());
                    wino_wide |= c.x[1] > 256;
                    wino_strided |= c.stride == 2;
                    f4_phased |= p.winograd_tile() == Some(4) && c.x[1] * c.w[0] > 1 << 14;
                    if p.winograd_streamed() {
                        wino_streamed.extend(p.winograd_tile());
                    }
                    p
                } else {
                    plan(ConvAlgo::Auto).with_impl(imp)
                };
                if imp == FpropImpl::Indirect && filter_rows {
                    assert!(format!("{plan:?}").contains("rows: true"), "{plan:?}");
                }
                if imp == FpropImpl::Indirect {
                    let want = xs[1] != 1 && !filter_rows && copied;
                    assert_eq!(plan.copies_input(), want, "{:?} layout {l}", c.x);
                    indirect_copied |= want;
                }
                let y = run_f32(&plan, (&x, &xsh), (&w, &wsh), &ysh, &exec);
                // Long accumulations (the naive reference sums in another order).
                // Winograd's transforms add a few roundings, at the magnitude of whole
                // partial sums, so its error grows with the depth (F(4×4), 176 × 9:
                // 1.6e-4 at an output of 0.25 whose terms sum to some 400 in magnitude).
                let depth = c.w[1] * c.w[2] * c.w[3];
                let tol = if imp == FpropImpl::Winograd {
                    1e-4 * (depth as f32 / 1000.0).max(1.0)
                } else if depth > 500 {
                    1e-4
                } else {
                    1e-5
                };
                assert_close(
                    &dense(&y, &yd, &ys),
                    &want,
                    tol,
                    &format!(
                        "{:?} layout {l} {imp:?} {threads} threads, constant {constant}",
                        c.x
                    ),
                );
            }
        }
    }
    assert!(
        indirect_copied,
        "the indirect GEMM over a channels-last copy runs"
    );
    // Where the vector pair kernels run (AVX-512, or AVX2 + FMA), the cases cover
    // both variants.
    if winograd_runs_here() {
        assert_eq!(wino_tiles, [2, 4].into(), "Winograd variants run");
        assert_eq!(
            wino_layouts,
            [0, 1, 2].into(),
            "Winograd runs in every layout"
        );
        assert!(wino_wide, "Winograd over more than 256 channels runs");
        assert!(f4_phased, "F(4×4) over large filters runs");
        assert!(wino_strided, "Winograd at stride 2 runs");
        // Streamed only on CPUs where that pays (`HIPDNN_CPU_WINOGRAD_STREAM=1` runs
        // it anywhere).
        let streamed_want = if winograd_streaming_pays() {
            [2, 4].into()
        } else {
            std::collections::BTreeSet::new()
        };
        assert_eq!(
            wino_streamed, streamed_want,
            "Winograd variants run streamed"
        );
    }
}

/// Runs the channels-last 3 × 3 convolution (stride 1, padding 1) of `xd` with `wd`
/// (values from `seeds`) on each of `threads` threads through the plan `plan` makes for
/// them (and checks), and asserts that every output has the bits of the first.
fn same_bits_on_threads(
    (xd, wd): ([usize; 4], [usize; 4]),
    seeds: (u64, u64),
    threads: &[usize],
    plan: impl Fn(ConvGeometry, &Shape, &Shape, usize) -> FpropPlan,
    label: &str,
) {
    let yd = [xd[0], wd[0], xd[2], xd[3]];
    let x = values(xd.iter().product(), seeds.0);
    let w = values(wd.iter().product(), seeds.1);
    let geo = ConvGeometry::new(&xd, &wd, &yd, &ConvParams::simple(2, 1, 1)).unwrap();
    let (xs, ws, ys) = (nhwc(xd), nhwc(wd), nhwc(yd));
    let mut outs = Vec::new();
    for &t in threads {
        let p = plan(geo.clone(), &xs, &ws, t);
        let y = run_f32(&p, (&x, &xs), (&w, &ws), &ys, &Exec::new(t));
        assert!(y.iter().all(|v| v.is_finite()), "{label}, {t} threads");
        outs.push(y);
    }
    for (y, t) in outs[1..].iter().zip(&threads[1..]) {
        assert!(
            y.iter()
                .zip(&outs[0])
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{label}: {t} threads differ from {}",
            threads[0]
        );
    }
}

/// Winograd through its own tiles per thread (two threads, where the CPU takes own
/// tiles: `winograd_own_tiles_pay`; else in phases), in phases (three and four) and in
/// chunks (one) does the same arithmetic: each tile's transforms and each output's
/// multiply-add chain are the same whichever thread runs them and however the rows are
/// cut into row tiles (with own tiles a thread's 25 tiles as five of 5 rows, elsewhere
/// tiles of 6 and a shorter last one).
#[test]
fn winograd_gives_the_same_bits_per_thread_in_phases_and_in_chunks() {
    if !winograd_runs_here() {
        return;
    }
    for constant in [false, true] {
        let plan = |geo: ConvGeometry, xs: &Shape, ws: &Shape, threads: usize| {
            let p = FpropPlan::new(
                geo,
                (xs, DType::F32),
                (ws, DType::F32),
                ConvAlgo::Winograd,
                threads,
            );
            let p = if constant {
                p.for_constant_weights()
            } else {
                p
            };
            assert_eq!(p.imp, FpropImpl::Winograd, "{threads} threads");
            assert_eq!(p.winograd_tile(), Some(2), "{threads} threads");
            p
        };
        let label = format!("constant {constant}");
        same_bits_on_threads(
            ([1, 24, 14, 14], [40, 24, 3, 3]),
            (11, 12),
            &[1, 2, 3, 4],
            plan,
            &label,
        );
    }
}

/// Winograd with streamed filters does the same arithmetic whatever the thread count:
/// each pair of output-channel panels is one thread's, its blocks of input channels in
/// a fixed order. F(4×4) and F(2×2) (see `cases`) on 1, 2, 3 and 5 threads (on three
/// and more each pair is a part that any thread may take) give the same bits.
#[test]
fn streamed_winograd_gives_the_same_bits_on_any_thread_count() {
    // Only where Winograd runs and this CPU streams filters (AMD's with AVX-512, or
    // any with `HIPDNN_CPU_WINOGRAD_STREAM=1`).
    if !winograd_runs_here() || !winograd_streaming_pays() {
        return;
    }
    for (xd, m) in [([1usize, 300, 5, 7], 4), ([2, 300, 5, 2], 2)] {
        let plan = |geo: ConvGeometry, xs: &Shape, ws: &Shape, threads: usize| {
            let p = FpropPlan::new(
                geo,
                (xs, DType::F32),
                (ws, DType::F32),
                ConvAlgo::Auto,
                threads,
            )
            .for_constant_weights();
            assert!(p.winograd_streamed(), "{xd:?}, {threads} threads: {p:?}");
            assert_eq!(p.winograd_tile(), Some(m), "{xd:?}, {threads} threads");
            p
        };
        same_bits_on_threads(
            (xd, [250, 300, 3, 3]),
            (7, 8),
            &[1, 2, 3, 5],
            plan,
            &format!("{xd:?}"),
        );
    }
}

#[test]
fn conv_fprop_reads_and_writes_fp16() {
    let exec = Exec::new(2);
    let (xd, wd, yd) = ([1usize, 8, 6, 6], [4usize, 8, 3, 3], [1usize, 4, 6, 6]);
    let x32 = values(xd.iter().product(), 3);
    let w32 = values(wd.iter().product(), 4);
    let x: Vec<f16> = x32.iter().map(|&v| f16::from_f32(v)).collect();
    let w: Vec<f16> = w32.iter().map(|&v| f16::from_f32(v)).collect();
    let xr32: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
    let wr32: Vec<f32> = w.iter().map(|v| v.to_f32()).collect();
    let i = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<_>>();
    let want = naive_conv2d(
        &xr32,
        &i(&xd),
        &strides_in(&i(&xd), &[0, 1, 2, 3]),
        &wr32,
        &i(&wd),
        &strides_in(&i(&wd), &[0, 1, 2, 3]),
        &i(&yd),
        1,
        1,
        1,
        false,
    );
    let geo = ConvGeometry::new(&xd, &wd, &yd, &ConvParams::simple(2, 1, 1)).unwrap();
    let (xs, ws, ys) = (Shape::packed(&xd), Shape::packed(&wd), Shape::packed(&yd));
    for imp in [FpropImpl::ImplicitGemm, FpropImpl::Direct] {
        let plan = FpropPlan::new(
            geo.clone(),
            (&xs, DType::F16),
            (&ws, DType::F16),
            ConvAlgo::Auto,
            2,
        )
        .with_impl(imp);
        let mut y = vec![f16::ZERO; yd.iter().product()];
        let mut scratch = vec![0f32; plan.workspace_len()];
        {
            let xr = TensorRef::new(&x[..], &xs).unwrap();
            let wr = TensorRef::new(&w[..], &ws).unwrap();
            let yr = TensorMut::new(&mut y[..], &ys).unwrap();
            plan.run(
                xr.raw(),
                wr.raw(),
                &Epilogue::store(yr.raw().clone()),
                &exec,
                &mut scratch,
            );
        }
        let got: Vec<f32> = y.iter().map(|v| v.to_f32()).collect();
        assert_close(&got, &want, 2e-3, &format!("fp16 {imp:?}"));
    }
}

#[test]
fn auto_picks_indirect_for_channels_last_and_direct_for_depthwise() {
    let geo = ConvGeometry::new(
        &[1, 32, 8, 8],
        &[32, 32, 3, 3],
        &[1, 32, 8, 8],
        &ConvParams::simple(2, 1, 1),
    )
    .unwrap();
    let nhwc = Shape::channels_last(&[1, 32, 8, 8]);
    let w = Shape::packed(&[32, 32, 3, 3]);
    assert_eq!(
        FpropPlan::new(
            geo.clone(),
            (&nhwc, DType::F32),
            (&w, DType::F32),
            ConvAlgo::Auto,
            2
        )
        .imp,
        FpropImpl::Indirect
    );
    // Channels-first: the indirect GEMM over a channels-last copy for a 3×3, the
    // implicit GEMM (reading the input's rows in place) for a 1×1.
    let nchw = Shape::packed(&[1, 32, 8, 8]);
    let plan = FpropPlan::new(
        geo.clone(),
        (&nchw, DType::F32),
        (&w, DType::F32),
        ConvAlgo::Auto,
        2,
    );
    assert_eq!(plan.imp, FpropImpl::Indirect);
    assert!(plan.copies_input());
    let pointwise = ConvGeometry::new(
        &[1, 32, 8, 8],
        &[32, 32, 1, 1],
        &[1, 32, 8, 8],
        &ConvParams::simple(2, 0, 1),
    )
    .unwrap();
    let w1 = Shape::packed(&[32, 32, 1, 1]);
    let plan = FpropPlan::new(
        pointwise,
        (&nchw, DType::F32),
        (&w1, DType::F32),
        ConvAlgo::Auto,
        2,
    );
    assert_eq!(plan.imp, FpropImpl::ImplicitGemm);
    assert!(!plan.copies_input());
    assert_eq!(
        FpropPlan::new(
            geo,
            (&nchw, DType::F32),
            (&w, DType::F32),
            ConvAlgo::Direct,
            2
        )
        .imp,
        FpropImpl::Direct
    );
    let dw = ConvGeometry::new(
        &[1, 32, 8, 8],
        &[32, 1, 3, 3],
        &[1, 32, 8, 8],
        &ConvParams::simple(2, 1, 1),
    )
    .unwrap();
    let w1 = Shape::packed(&[32, 1, 3, 3]);
    assert_eq!(
        FpropPlan::new(
            dw,
            (&nchw, DType::F32),
            (&w1, DType::F32),
            ConvAlgo::Auto,
            2
        )
        .imp,
        FpropImpl::Direct
    );
}

#[test]
fn geometry_errors_name_the_problem() {
    let e = ConvGeometry::new(
        &[1, 3, 8, 8],
        &[4, 3, 3, 3],
        &[1, 4, 7, 7],
        &ConvParams::simple(2, 1, 1),
    )
    .unwrap_err();
    assert!(e.contains("output extent 7"), "{e}");
    let e = ConvGeometry::new(
        &[1, 6, 8, 8],
        &[4, 4, 3, 3],
        &[1, 4, 8, 8],
        &ConvParams::simple(2, 1, 1),
    )
    .unwrap_err();
    assert!(e.contains("multiple"), "{e}");
}

/// From three threads the GEMM's and Winograd's sections come in pieces that whichever
/// thread is free takes: the results are those of two threads (one part each), bit for
/// bit. 128 × 128 pixels of 16 channels, channels-last: the 1×1 convolution's GEMM
/// cuts each thread's row tiles into pieces; Winograd F(4×4) (1024 tiles) runs three
/// chunks per thread on three threads, each a part, and in phases on five, each
/// phase's sections in pieces (`winograd::tests` checks those regimes).
#[test]
fn pieces_taken_by_any_thread_give_the_same_bits() {
    let xd = [1usize, 16, 128, 128];
    let x = values(xd.iter().product(), 5);
    for (f, pad, algo, imp) in [
        (1, 0, ConvAlgo::Auto, FpropImpl::Indirect),
        (3, 1, ConvAlgo::Winograd, FpropImpl::Winograd),
    ] {
        if imp == FpropImpl::Winograd && !winograd_runs_here() {
            continue;
        }
        let wd = [16usize, 16, f, f];
        let yd = [1usize, 16, 128, 128];
        let w = values(wd.iter().product(), 6);
        let geo = ConvGeometry::new(&xd, &wd, &yd, &ConvParams::simple(2, pad, 1)).unwrap();
        let (xs, ws, ys) = (nhwc(xd), nhwc(wd), nhwc(yd));
        let mut outs = Vec::new();
        for threads in [2, 3, 5] {
            let plan = FpropPlan::new(
                geo.clone(),
                (&xs, DType::F32),
                (&ws, DType::F32),
                algo,
                threads,
            );
            assert_eq!(plan.imp, imp, "{threads} threads");
            let y = run_f32(&plan, (&x, &xs), (&w, &ws), &ys, &Exec::new(threads));
            assert!(y.iter().all(|v| v.is_finite()), "{imp:?} {threads} threads");
            outs.push(y);
        }
        for (y, threads) in outs[1..].iter().zip([3, 5]) {
            assert!(
                y.iter()
                    .zip(&outs[0])
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{imp:?}: {threads} threads differ from 2"
            );
        }
    }
}

/// A dense channels-last shape of NCHW extents `d`.
fn nhwc(d: [usize; 4]) -> Shape {
    let i: Vec<i64> = d.iter().map(|&v| v as i64).collect();
    let s = strides_in(&i, &[0, 2, 3, 1]);
    Shape::new(&d, &s.iter().map(|&v| v as usize).collect::<Vec<_>>())
}
