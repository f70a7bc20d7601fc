//! Batched matrix multiplication with broadcast batch dimensions.

use super::{Result, check_broadcast, round_f32, shape_err};
use crate::tensor::{HostTensor, for_each_index};

/// Batched matrix multiplication `c[..., m, n] = Σ_k a[..., m, k] · b[..., k, n]`, with
/// numpy broadcasting of the batch dimensions of `a` and `b` to those of `c`.
///
/// # Errors
/// Rank below 2, mismatched `K`, `M` or `N`, or batch dims that do not broadcast to
/// `c`'s.
pub fn matmul(a: &HostTensor, b: &HostTensor, c: &mut HostTensor) -> Result<()> {
    const OP: &str = "matmul";
    let (ra, rb, rc) = (a.rank(), b.rank(), c.rank());
    if ra < 2 || rb < 2 || rc < 2 {
        return Err(shape_err(OP, "a, b and c need rank ≥ 2"));
    }
    let (m, k) = (a.dims[ra - 2], a.dims[ra - 1]);
    let (k2, n) = (b.dims[rb - 2], b.dims[rb - 1]);
    if k != k2 || c.dims[rc - 2] != m || c.dims[rc - 1] != n {
        return Err(shape_err(
            OP,
            format!(
                "a {:?} · b {:?} does not give c {:?}",
                a.dims, b.dims, c.dims
            ),
        ));
    }
    let batch = c.dims[..rc - 2].to_vec();
    check_broadcast(OP, "a batch", &a.dims[..ra - 2], &batch)?;
    check_broadcast(OP, "b batch", &b.dims[..rb - 2], &batch)?;
    let mut ai = vec![0; ra];
    let mut bi = vec![0; rb];
    let mut ci = vec![0; rc];
    for_each_index(&batch, |bidx| {
        broadcast_into(&a.dims[..ra - 2], bidx, &mut ai);
        broadcast_into(&b.dims[..rb - 2], bidx, &mut bi);
        ci[..rc - 2].copy_from_slice(bidx);
        for mi in 0..m {
            for ni in 0..n {
                let mut acc = 0f64;
                for ki in 0..k {
                    ai[ra - 2] = mi;
                    ai[ra - 1] = ki;
                    bi[rb - 2] = ki;
                    bi[rb - 1] = ni;
                    acc += f64::from(a.at(&ai)) * f64::from(b.at(&bi));
                }
                ci[rc - 2] = mi;
                ci[rc - 1] = ni;
                c.set(&ci, round_f32(acc));
            }
        }
    });
    Ok(())
}

/// Writes into the leading `src_dims.len()` entries of `dst` the index of a tensor with
/// extents `src_dims` that broadcasts to the (right-aligned) output index `out`.
fn broadcast_into(src_dims: &[usize], out: &[usize], dst: &mut [usize]) {
    let lead = out.len() - src_dims.len();
    for (i, &d) in src_dims.iter().enumerate() {
        dst[i] = if d == 1 { 0 } else { out[lead + i] };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_broadcasts_batch_dims() {
        let a = HostTensor::from_vec([2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0]);
        let b = HostTensor::from_vec([1, 2, 1], &[1.0, 10.0]);
        let mut c = HostTensor::packed([2, 2, 1]);
        matmul(&a, &b, &mut c).unwrap();
        assert_eq!(c.logical(), [21.0, 43.0, 10.0, 1.0]);
        // Rank-2 b against rank-4 c: [2, 1, 2, 2] × [2, 1] → [2, 3, 2, 1] needs a to
        // repeat over dim 1.
        let a4 = HostTensor::from_vec([2, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0]);
        let b2 = HostTensor::from_vec([2, 1], &[1.0, 10.0]);
        let mut c4 = HostTensor::packed([2, 3, 2, 1]);
        matmul(&a4, &b2, &mut c4).unwrap();
        assert_eq!(
            c4.logical(),
            [
                21.0, 43.0, 21.0, 43.0, 21.0, 43.0, 10.0, 1.0, 10.0, 1.0, 10.0, 1.0
            ]
        );
        // Transposed storage of b (column-major) gives the same product.
        let bt = HostTensor::from_logical([2, 2], [1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let a2 = HostTensor::from_vec([1, 2], &[1.0, 1.0]);
        let mut c2 = HostTensor::packed([1, 2]);
        matmul(&a2, &bt, &mut c2).unwrap();
        assert_eq!(c2.logical(), [4.0, 6.0]);
        let mut bad = HostTensor::packed([3, 2, 1]);
        assert!(matmul(&a, &b, &mut bad).is_err());
    }
}
