//! Seeded values and conversion between `f32` values and tensor bytes.
//!
//! # Seeds
//!
//! Every random value comes from a [`DataGen`], a ChaCha8 generator seeded with a `u64`
//! ([`parse_seed`] reads one as decimal or `0x` hexadecimal). A named stream derives its
//! own generator from the seed and the name ([`DataGen::for_case`]), so it draws the same
//! data whichever other streams run. (The test harness, `hipdnn-test-sdk`, takes the
//! seed of a test run from the environment.)
//!
//! # Rounding to the tensor's type
//!
//! [`DataGen::fill_as`] rounds each value to the tensor's [`DataType`] before storing
//! it as `f32`, so a reference computes on exactly the numbers the kernel reads from
//! its fp16 or bf16 buffer.
//!
//! # Bytes
//!
//! [`encode`] and [`decode`] move a [`HostTensor`]'s storage to and from the bytes of
//! a device buffer: element `i` of the storage is bytes `i·size .. (i+1)·size`
//! (little-endian), so the bytes are laid out by the tensor's strides exactly as the
//! storage is. Supported types: `FLOAT`, `DOUBLE`, `HALF`, `BFLOAT16`, the five FP8
//! formats, `INT8`, `UINT8`, `INT32`, `INT64`.

use hipdnn_data_sdk::{DataType, F8E4M3, F8E4M3Fnuz, F8E5M2, F8E5M2Fnuz, F8E8M0};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::tensor::HostTensor;

/// Parses a seed: decimal, or hexadecimal with a `0x` prefix.
pub fn parse_seed(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// 64-bit FNV-1a, to fold names into seeds.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A deterministic generator of test values (ChaCha8).
#[derive(Debug, Clone)]
pub struct DataGen {
    rng: ChaCha8Rng,
}

impl DataGen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The generator of the named case under `seed`: independent of which other cases
    /// run, and different for every name.
    pub fn for_case(seed: u64, name: &str) -> Self {
        Self::new(seed ^ fnv1a(name.as_bytes()))
    }

    /// One value uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        if lo >= hi {
            return lo;
        }
        self.rng.random_range(lo..hi)
    }

    /// One value uniform in `[lo, hi)`, rounded to `dtype` (see [`round_to`]).
    pub fn uniform_as(&mut self, lo: f32, hi: f32, dtype: DataType) -> f32 {
        round_to(dtype, self.uniform(lo, hi))
    }

    /// `n` values uniform in `[lo, hi)`, rounded to `dtype`.
    pub fn values(&mut self, n: usize, lo: f32, hi: f32, dtype: DataType) -> Vec<f32> {
        (0..n).map(|_| self.uniform_as(lo, hi, dtype)).collect()
    }

    /// Fills every logical element of `t` with a value uniform in `[lo, hi)`, in
    /// row-major logical order (so the values do not depend on the strides).
    pub fn fill(&mut self, t: &mut HostTensor, lo: f32, hi: f32) {
        self.fill_as(t, lo, hi, DataType::Float);
    }

    /// As [`fill`](Self::fill), rounding each value to `dtype`.
    pub fn fill_as(&mut self, t: &mut HostTensor, lo: f32, hi: f32, dtype: DataType) {
        t.map_inplace(|_| self.uniform_as(lo, hi, dtype));
    }
}

/// `v` rounded to the nearest value of `dtype` (round to nearest even for the float
/// types; round half away from zero, then saturate, for the integer types), as `f32`.
/// `FLOAT`, `DOUBLE` and types without an element conversion here return `v`.
pub fn round_to(dtype: DataType, v: f32) -> f32 {
    match dtype {
        DataType::Half => half::f16::from_f32(v).to_f32(),
        DataType::Bfloat16 => half::bf16::from_f32(v).to_f32(),
        DataType::Fp8E4m3 => F8E4M3::from_f32(v).to_f32(),
        DataType::Fp8E5m2 => F8E5M2::from_f32(v).to_f32(),
        DataType::Fp8E4m3Fnuz => F8E4M3Fnuz::from_f32(v).to_f32(),
        DataType::Fp8E5m2Fnuz => F8E5M2Fnuz::from_f32(v).to_f32(),
        DataType::Fp8E8m0 => F8E8M0::from_f32(v).to_f32(),
        DataType::Int8 => v.round().clamp(-128.0, 127.0),
        DataType::Uint8 => v.round().clamp(0.0, 255.0),
        DataType::Int32 => v.round() as i32 as f32,
        DataType::Int64 => v.round() as i64 as f32,
        _ => v,
    }
}

/// Distance from `v` to the next representable value of `dtype` away from zero (one
/// unit in the last place at `v`'s magnitude); 0 for integer and unknown types.
pub fn ulp(dtype: DataType, v: f32) -> f64 {
    let mantissa_bits: i32 = match dtype {
        DataType::Float => 23,
        DataType::Double => 52,
        DataType::Half => 10,
        DataType::Bfloat16 => 7,
        DataType::Fp8E4m3 | DataType::Fp8E4m3Fnuz => 3,
        DataType::Fp8E5m2 | DataType::Fp8E5m2Fnuz => 2,
        _ => return 0.0,
    };
    let min_exp: i32 = match dtype {
        DataType::Float => -126,
        DataType::Double => -1022,
        DataType::Half => -14,
        DataType::Bfloat16 => -126,
        DataType::Fp8E4m3 => -6,
        DataType::Fp8E4m3Fnuz => -7,
        DataType::Fp8E5m2 => -14,
        DataType::Fp8E5m2Fnuz => -15,
        _ => 0,
    };
    let a = f64::from(v).abs();
    let exp = if a > 0.0 && a.is_finite() {
        (a.log2().floor() as i32).max(min_exp)
    } else {
        min_exp
    };
    2f64.powi(exp - mantissa_bits)
}

/// Why bytes cannot be made or read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The data type has no per-element byte conversion here (sub-byte and unset types).
    #[error("data type {0} has no byte conversion in the test SDK")]
    UnsupportedType(DataType),
    /// A buffer whose length does not match the tensor.
    #[error("buffer of {got} bytes for a tensor needing {expected} bytes")]
    Length {
        /// Bytes provided.
        got: usize,
        /// Bytes needed.
        expected: usize,
    },
    /// The host could not allocate the `f32` copy of a tensor.
    #[error("cannot allocate {elements} f32 values for a tensor")]
    Allocation {
        /// Elements asked for.
        elements: usize,
    },
}

/// Bytes per element of `dtype`, if [`encode`]/[`decode`] support it.
pub fn element_size(dtype: DataType) -> Option<usize> {
    match dtype {
        DataType::Float | DataType::Int32 => Some(4),
        DataType::Double | DataType::Int64 => Some(8),
        DataType::Half | DataType::Bfloat16 => Some(2),
        DataType::Fp8E4m3
        | DataType::Fp8E5m2
        | DataType::Fp8E4m3Fnuz
        | DataType::Fp8E5m2Fnuz
        | DataType::Fp8E8m0
        | DataType::Int8
        | DataType::Uint8 => Some(1),
        _ => None,
    }
}

/// Bytes of a buffer for `dims`/`strides` in `dtype` (the addressed span times the
/// element size).
///
/// # Errors
/// [`DataError::UnsupportedType`].
pub fn byte_len(dtype: DataType, dims: &[usize], strides: &[usize]) -> Result<usize, DataError> {
    let size = element_size(dtype).ok_or(DataError::UnsupportedType(dtype))?;
    Ok(crate::tensor::span(dims, strides) * size)
}

/// Encodes one value (rounding as [`round_to`] does) into `out`.
fn encode_one(dtype: DataType, v: f32, out: &mut Vec<u8>) {
    match dtype {
        DataType::Float => out.extend_from_slice(&v.to_le_bytes()),
        DataType::Double => out.extend_from_slice(&f64::from(v).to_le_bytes()),
        DataType::Half => out.extend_from_slice(&half::f16::from_f32(v).to_le_bytes()),
        DataType::Bfloat16 => out.extend_from_slice(&half::bf16::from_f32(v).to_le_bytes()),
        DataType::Fp8E4m3 => out.push(F8E4M3::from_f32(v).to_bits()),
        DataType::Fp8E5m2 => out.push(F8E5M2::from_f32(v).to_bits()),
        DataType::Fp8E4m3Fnuz => out.push(F8E4M3Fnuz::from_f32(v).to_bits()),
        DataType::Fp8E5m2Fnuz => out.push(F8E5M2Fnuz::from_f32(v).to_bits()),
        DataType::Fp8E8m0 => out.push(F8E8M0::from_f32(v).to_bits()),
        DataType::Int8 => out.push((round_to(dtype, v) as i8).to_le_bytes()[0]),
        DataType::Uint8 => out.push(round_to(dtype, v) as u8),
        DataType::Int32 => out.extend_from_slice(&(v.round() as i32).to_le_bytes()),
        DataType::Int64 => out.extend_from_slice(&(v.round() as i64).to_le_bytes()),
        _ => unreachable!("checked by the caller"),
    }
}

fn decode_one(dtype: DataType, b: &[u8]) -> f32 {
    let arr = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        a
    };
    match dtype {
        DataType::Float => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        DataType::Double => f64::from_le_bytes(arr(8)) as f32,
        DataType::Half => half::f16::from_le_bytes([b[0], b[1]]).to_f32(),
        DataType::Bfloat16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f32(),
        DataType::Fp8E4m3 => F8E4M3::from_bits(b[0]).to_f32(),
        DataType::Fp8E5m2 => F8E5M2::from_bits(b[0]).to_f32(),
        DataType::Fp8E4m3Fnuz => F8E4M3Fnuz::from_bits(b[0]).to_f32(),
        DataType::Fp8E5m2Fnuz => F8E5M2Fnuz::from_bits(b[0]).to_f32(),
        DataType::Fp8E8m0 => F8E8M0::from_bits(b[0]).to_f32(),
        DataType::Int8 => f32::from(i8::from_le_bytes([b[0]])),
        DataType::Uint8 => f32::from(b[0]),
        DataType::Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
        DataType::Int64 => i64::from_le_bytes(arr(8)) as f32,
        _ => unreachable!("checked by the caller"),
    }
}

/// The bytes of `t`'s storage in `dtype`: storage element `i` at bytes
/// `i·size .. (i+1)·size`, little-endian, so the buffer is laid out by `t.strides`.
/// Values are rounded to `dtype` (see [`round_to`]).
///
/// # Errors
/// [`DataError::UnsupportedType`].
pub fn encode(dtype: DataType, t: &HostTensor) -> Result<Vec<u8>, DataError> {
    let size = element_size(dtype).ok_or(DataError::UnsupportedType(dtype))?;
    let mut out = Vec::with_capacity(t.data.len() * size);
    for &v in &t.data {
        encode_one(dtype, v, &mut out);
    }
    Ok(out)
}

/// Reads a buffer of `dtype` elements laid out by `strides` into a [`HostTensor`].
///
/// # Errors
/// [`DataError::UnsupportedType`], or [`DataError::Length`] when `bytes` is not
/// exactly [`byte_len`] long.
pub fn decode(
    dtype: DataType,
    bytes: &[u8],
    dims: &[usize],
    strides: &[usize],
) -> Result<HostTensor, DataError> {
    let size = element_size(dtype).ok_or(DataError::UnsupportedType(dtype))?;
    let expected = byte_len(dtype, dims, strides)?;
    if bytes.len() != expected {
        return Err(DataError::Length {
            got: bytes.len(),
            expected,
        });
    }
    let mut t = HostTensor::try_zeros(dims, strides).map_err(|_| DataError::Allocation {
        elements: expected / size,
    })?;
    for (v, chunk) in t.data.iter_mut().zip(bytes.chunks_exact(size)) {
        *v = decode_one(dtype, chunk);
    }
    Ok(t)
}

/// Writes `values` (the logical elements of a `dims` tensor, row-major) into `bytes`, a
/// buffer of `dtype` elements laid out by `strides`, at each element's offset only:
/// bytes no element addresses are left as they are, so a sparse layout touches only the
/// pages its elements are on. Values are rounded to `dtype`.
///
/// # Errors
/// [`DataError::UnsupportedType`], or [`DataError::Length`] when `bytes` is not exactly
/// [`byte_len`] long or `values` not one per element.
pub fn encode_into(
    dtype: DataType,
    values: &[f32],
    dims: &[usize],
    strides: &[usize],
    bytes: &mut [u8],
) -> Result<(), DataError> {
    let size = element_size(dtype).ok_or(DataError::UnsupportedType(dtype))?;
    let expected = byte_len(dtype, dims, strides)?;
    let elements: usize = dims.iter().product();
    if bytes.len() != expected || values.len() != elements {
        return Err(DataError::Length {
            got: bytes.len(),
            expected,
        });
    }
    let mut one = Vec::with_capacity(8);
    let mut next = values.iter();
    crate::tensor::for_each_index(dims, |idx| {
        let off = idx.iter().zip(strides).map(|(&i, &s)| i * s).sum::<usize>() * size;
        one.clear();
        encode_one(dtype, *next.next().expect("counted"), &mut one);
        bytes[off..off + size].copy_from_slice(&one);
    });
    Ok(())
}

/// The logical elements (row-major) of a buffer of `dtype` elements laid out by
/// `strides`, read at each element's offset only (see [`encode_into`]).
///
/// # Errors
/// [`DataError::UnsupportedType`], or [`DataError::Length`] when `bytes` is not exactly
/// [`byte_len`] long.
pub fn decode_logical(
    dtype: DataType,
    bytes: &[u8],
    dims: &[usize],
    strides: &[usize],
) -> Result<Vec<f32>, DataError> {
    let size = element_size(dtype).ok_or(DataError::UnsupportedType(dtype))?;
    let expected = byte_len(dtype, dims, strides)?;
    if bytes.len() != expected {
        return Err(DataError::Length {
            got: bytes.len(),
            expected,
        });
    }
    let elements: usize = dims.iter().product();
    let mut out = Vec::new();
    out.try_reserve_exact(elements)
        .map_err(|_| DataError::Allocation { elements })?;
    crate::tensor::for_each_index(dims, |idx| {
        let off = idx.iter().zip(strides).map(|(&i, &s)| i * s).sum::<usize>() * size;
        out.push(decode_one(dtype, &bytes[off..off + size]));
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::layout_strides;
    use hipdnn_data_sdk::TensorLayout;

    #[test]
    fn strided_encode_and_decode_touch_only_the_elements() {
        // Two rows of three, rows 8 apart and columns 2 apart: 13 elements of storage.
        let (dims, strides) = ([2, 3], [8, 2]);
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        for dtype in [DataType::Float, DataType::Half, DataType::Bfloat16] {
            let size = element_size(dtype).unwrap();
            let mut bytes = vec![0xAA; 13 * size];
            encode_into(dtype, &values, &dims, &strides, &mut bytes).unwrap();
            assert_eq!(
                decode_logical(dtype, &bytes, &dims, &strides).unwrap(),
                values
            );
            // The gaps keep their bytes.
            for e in [1, 3, 5, 6, 7, 9, 11] {
                assert!(
                    bytes[e * size..(e + 1) * size].iter().all(|&b| b == 0xAA),
                    "{e}"
                );
            }
            // As the whole-buffer forms read and write it.
            let t = decode(dtype, &bytes, &dims, &strides).unwrap();
            assert_eq!(t.logical(), values);
        }
        let mut short = vec![0; 12 * 4];
        assert!(encode_into(DataType::Float, &values, &dims, &strides, &mut short).is_err());
        assert!(decode_logical(DataType::Float, &short, &dims, &strides).is_err());
        assert!(encode_into(DataType::Float, &values[..5], &dims, &strides, &mut [0; 52]).is_err());
    }

    #[test]
    fn same_seed_same_values_different_seed_different_values() {
        let a = DataGen::new(42).values(64, -1.0, 1.0, DataType::Float);
        let b = DataGen::new(42).values(64, -1.0, 1.0, DataType::Float);
        let c = DataGen::new(43).values(64, -1.0, 1.0, DataType::Float);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        let x = DataGen::for_case(1, "conv/a").values(8, 0.0, 1.0, DataType::Float);
        let y = DataGen::for_case(1, "conv/b").values(8, 0.0, 1.0, DataType::Float);
        assert_ne!(x, y);
        assert_eq!(
            x,
            DataGen::for_case(1, "conv/a").values(8, 0.0, 1.0, DataType::Float)
        );
    }

    #[test]
    fn fill_is_independent_of_layout() {
        let dims = [2, 3, 4, 5];
        let mut a = HostTensor::with_layout(dims, TensorLayout::Nchw);
        let mut b = HostTensor::with_layout(dims, TensorLayout::Nhwc);
        DataGen::new(9).fill(&mut a, -1.0, 1.0);
        DataGen::new(9).fill(&mut b, -1.0, 1.0);
        assert_eq!(a.logical(), b.logical());
        assert_ne!(a.data, b.data);
    }

    #[test]
    fn values_are_rounded_to_the_target_type() {
        let mut g = DataGen::new(5);
        for dt in [DataType::Half, DataType::Bfloat16] {
            let v = g.values(256, -3.0, 3.0, dt);
            assert!(v.iter().all(|&x| round_to(dt, x) == x));
            // Rounding actually happened (uniform f32 values are almost never exact).
            let raw = DataGen::new(5).values(256, -3.0, 3.0, DataType::Float);
            assert!(raw.iter().any(|&x| round_to(dt, x) != x));
        }
        assert_eq!(round_to(DataType::Half, 1.0 + 1.0 / 4096.0), 1.0);
        assert_eq!(round_to(DataType::Bfloat16, 1.0 + 1.0 / 256.0), 1.0);
        assert_eq!(round_to(DataType::Int8, 300.0), 127.0);
        assert_eq!(round_to(DataType::Int8, -2.5), -3.0);
    }

    #[test]
    fn seed_parsing() {
        assert_eq!(parse_seed("17"), Some(17));
        assert_eq!(parse_seed(" 0x1F "), Some(31));
        assert_eq!(parse_seed("RANDOM"), None);
        assert_eq!(parse_seed("-1"), None);
    }

    #[test]
    fn ulp_of_common_types() {
        assert_eq!(ulp(DataType::Half, 1.0), 2f64.powi(-10));
        assert_eq!(ulp(DataType::Half, 3.0), 2f64.powi(-9));
        assert_eq!(ulp(DataType::Bfloat16, 1.5), 2f64.powi(-7));
        assert_eq!(ulp(DataType::Float, 1.0), 2f64.powi(-23));
        assert_eq!(ulp(DataType::Half, 0.0), 2f64.powi(-24));
        assert_eq!(ulp(DataType::Int32, 5.0), 0.0);
    }

    #[test]
    fn encode_decode_round_trips_by_strides() {
        let dims = [1, 2, 2, 3];
        let strides = layout_strides(&dims, TensorLayout::Nhwc);
        let values: Vec<f32> = (0..12).map(|v| v as f32 * 0.5 - 2.0).collect();
        let t = HostTensor::from_logical(dims, strides.clone(), &values);
        for dt in [
            DataType::Float,
            DataType::Double,
            DataType::Half,
            DataType::Bfloat16,
            DataType::Fp8E4m3,
            DataType::Fp8E5m2,
            DataType::Int8,
            DataType::Int32,
            DataType::Int64,
        ] {
            let bytes = encode(dt, &t).unwrap();
            assert_eq!(bytes.len(), byte_len(dt, &dims, &strides).unwrap());
            let back = decode(dt, &bytes, &dims, &strides).unwrap();
            let want: Vec<f32> = values.iter().map(|&v| round_to(dt, v)).collect();
            assert_eq!(back.logical(), want, "{dt}");
        }
        // Storage order: NHWC puts channel innermost, so the second f32 in the buffer
        // is channel 1 at (0, 0).
        let bytes = encode(DataType::Float, &t).unwrap();
        let second = f32::from_le_bytes(bytes[4..8].try_into().unwrap());
        assert_eq!(second, t.at(&[0, 1, 0, 0]));
        assert_eq!(
            encode(DataType::Half, &t).unwrap()[..2],
            half::f16::from_f32(-2.0).to_le_bytes()
        );
        assert!(matches!(
            decode(DataType::Float, &bytes[1..], &dims, &strides),
            Err(DataError::Length { .. })
        ));
        assert!(matches!(
            encode(DataType::Int4, &t),
            Err(DataError::UnsupportedType(_))
        ));
    }
}
