//! Throwaway probe: times conv kernels directly.
use hipdnn_cpu_provider::kernels::*;
use hipdnn_cpu_provider::tensor::*;
use std::time::Instant;

fn main() {
    for k in [64, 128, 256, 512] {
        println!(
            "kernel k={k}: {:.1} GFLOP/s",
            hipdnn_cpu_provider::kernels::gemm::probe_kernel(k, 200000)
        );
    }
    let threads = 2;
    let exec = Exec::new(threads);
    let args: Vec<String> = std::env::args().collect();
    let nhwc = args.iter().any(|a| a == "nhwc");
    let shapes: &[(usize, usize, usize, usize, usize, usize, usize)] = &[
        // n, c, h, k, f, stride, pad
        (1, 64, 56, 64, 3, 1, 1),
        (8, 64, 56, 64, 3, 1, 1),
        (1, 256, 56, 64, 1, 1, 0),
        (1, 512, 7, 512, 3, 1, 1),
        (8, 512, 7, 512, 3, 1, 1),
        (1, 1024, 14, 256, 1, 1, 0),
        (1, 3, 224, 64, 7, 2, 3),
    ];
    for &(n, c, h, k, f, s, p) in shapes {
        let oh = (h + 2 * p - f) / s + 1;
        let xd = [n, c, h, h];
        let wd = [k, c, f, f];
        let yd = [n, k, oh, oh];
        let (xs, ws, ys) = if nhwc {
            (
                Shape::channels_last(&xd),
                Shape::channels_last(&wd),
                Shape::channels_last(&yd),
            )
        } else {
            (Shape::packed(&xd), Shape::packed(&wd), Shape::packed(&yd))
        };
        let x: Vec<f32> = (0..xs.span()).map(|i| (i % 7) as f32 * 0.1).collect();
        let w: Vec<f32> = (0..ws.span()).map(|i| (i % 5) as f32 * 0.1).collect();
        let mut y = vec![0f32; ys.span()];
        let geo = ConvGeometry::new(&xd, &wd, &yd, &ConvParams::simple(2, p, s)).unwrap();
        let flops = geo.flops();
        let plan = FpropPlan::new(
            geo,
            (&xs, DType::F32),
            (&ws, DType::F32),
            ConvAlgo::Auto,
            threads,
        );
        let mut wsb = vec![0f32; plan.workspace_len()];
        let xr = TensorRef::new(&x[..], &xs).unwrap();
        let wr = TensorRef::new(&w[..], &ws).unwrap();
        let yr = TensorMut::new(&mut y[..], &ys).unwrap();
        let ep = Epilogue::store(yr.raw().clone());
        let mut times = vec![];
        for _ in 0..15 {
            let t = Instant::now();
            plan.run(xr.raw(), wr.raw(), &ep, &exec, &mut wsb);
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = times[times.len() / 2];
        println!(
            "{:?} n{n} c{c} h{h} k{k} f{f} s{s}: {:.3} ms {:.1} GFLOP/s",
            plan.imp,
            med * 1e3,
            flops / med / 1e9
        );
    }
}
