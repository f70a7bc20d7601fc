//! `.npy` files holding logical tensors.
//!
//! An array holds a tensor's *logical* values: shape = the tensor's dims, elements in
//! dims order (C-contiguous). The tensor's strides only matter for the buffer the engine
//! sees, so the same file serves NCHW and NHWC graphs. Element types: `FLOAT` ↔
//! float32 (`<f4`), `HALF` ↔ float16 (`<f2`), `BFLOAT16` as float32 (rounded to bf16
//! when read). Reading goes through npyz's header parser (any byte order, C or Fortran
//! order); writing produces version 1.0 files, little-endian, C order.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use hipdnn_data_sdk::DataType;
use hipdnn_data_sdk::half::f16;
use hipdnn_reference::tensor::for_each_index;
use npyz::{DType, Endianness, NpyFile, TypeChar};

/// The element type of the arrays for one tensor data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyType {
    /// `<f4`.
    F32,
    /// `<f2`.
    F16,
}

impl NpyType {
    /// The array type used for tensors of `dtype`, if they can be read and written.
    pub fn for_dtype(dtype: DataType) -> Option<Self> {
        match dtype {
            DataType::Float | DataType::Bfloat16 => Some(Self::F32),
            DataType::Half => Some(Self::F16),
            _ => None,
        }
    }

    fn size(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 => 2,
        }
    }

    /// numpy's name and `descr`, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::F32 => "float32 ('<f4')",
            Self::F16 => "float16 ('<f2')",
        }
    }

    fn descr(self) -> &'static str {
        match self {
            Self::F32 => "<f4",
            Self::F16 => "<f2",
        }
    }
}

/// The message for a tensor type that has no array form.
pub fn unsupported_dtype(dtype: DataType) -> String {
    format!(
        "data type {} has no .npy form here (supported: FLOAT as float32, HALF as float16, BFLOAT16 as float32)",
        dtype.name()
    )
}

/// Reads the logical values (row-major order) of a tensor of extents `dims` from the
/// array at `path`, which must have shape `dims` and element type `ty`.
///
/// # Errors
/// A message naming the file: unreadable, not an `.npy`, another shape or type, or
/// truncated data.
pub fn read(path: &Path, dims: &[usize], ty: NpyType) -> Result<Vec<f32>, String> {
    let at = path.display();
    let (mut file, file_len) = crate::files::open_regular(path)?;
    let data_offset = data_offset(&mut file, file_len)
        .map_err(|e| format!("{at}: not a valid .npy file: {e}"))?;
    file.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot read {at}: {e}"))?;
    let npy = NpyFile::new(BufReader::new(file))
        .map_err(|e| format!("{at}: not a valid .npy file: {e}"))?;
    let header = npy.header().clone();
    let descr = header.dtype().descr();
    let (size, big_endian) = match header.dtype() {
        DType::Plain(ts) if ts.type_char() == TypeChar::Float => (
            ts.num_bytes().unwrap_or(0),
            ts.endianness() == Endianness::Big,
        ),
        _ => (0, false),
    };
    if size != ty.size() {
        return Err(format!(
            "{at}: holds elements of type {descr}, but the tensor needs {}",
            ty.describe()
        ));
    }
    let shape: Vec<usize> = header.shape().iter().map(|&d| d as usize).collect();
    if shape != dims {
        return Err(format!(
            "{at}: has shape {}, but the tensor has dims {}",
            shape_text(&shape),
            shape_text(dims)
        ));
    }
    // The data must be there before anything is allocated for it.
    let count: usize = dims.iter().product();
    let available = file_len - data_offset;
    if available < (count as u64).saturating_mul(size as u64) {
        return Err(format!(
            "{at}: truncated data ({count} elements expected, {available} bytes of data)"
        ));
    }
    let mut bytes = vec![0u8; count * size];
    npy.into_inner()
        .read_exact(&mut bytes)
        .map_err(|e| format!("{at}: truncated data ({count} elements expected): {e}"))?;
    let stored: Vec<f32> = bytes
        .chunks_exact(size)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..size].copy_from_slice(c);
            if big_endian {
                b[..size].reverse();
            }
            match ty {
                NpyType::F32 => f32::from_le_bytes(b),
                NpyType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f32(),
            }
        })
        .collect();
    // The header's strides say where each logical element is stored (C or Fortran
    // order); gather them into row-major order.
    let strides: Vec<usize> = header.strides().iter().map(|&s| s as usize).collect();
    let mut values = Vec::with_capacity(count);
    for_each_index(dims, |idx| {
        let offset: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        values.push(stored[offset]);
    });
    Ok(values)
}

/// Writes `values` (row-major logical order) as an array of shape `dims` and type `ty`.
///
/// # Errors
/// The file cannot be written.
pub fn write(path: &Path, dims: &[usize], ty: NpyType, values: &[f32]) -> std::io::Result<()> {
    let mut out = BufWriter::new(crate::files::create_regular(path)?);
    out.write_all(&header(dims, ty))?;
    for &v in values {
        match ty {
            NpyType::F32 => out.write_all(&v.to_le_bytes())?,
            NpyType::F16 => out.write_all(&f16::from_f32(v).to_le_bytes())?,
        }
    }
    out.flush()
}

/// Longest header accepted, in bytes: numpy's own format writes headers of a few hundred
/// bytes, and version 1 cannot exceed 65535; a longer one is refused before it is read
/// (the parser would allocate whatever the length field says, up to 4 GiB).
const MAX_HEADER_LEN: u64 = 65536;

/// Checks the magic string, version and header length of the `.npy` file `file` of
/// `file_len` bytes (read from its start) and returns the offset of its data.
fn data_offset(file: &mut File, file_len: u64) -> Result<u64, String> {
    let mut pre = [0u8; 12];
    let got = file.take(12).read(&mut pre).map_err(|e| e.to_string())?;
    let pre = &pre[..got];
    if pre.len() < 10 || &pre[..6] != b"\x93NUMPY" {
        return Err("no .npy magic string".to_owned());
    }
    let (prefix, header_len) = match pre[6] {
        1 => (10, u64::from(u16::from_le_bytes([pre[8], pre[9]]))),
        2 | 3 if pre.len() == 12 => (
            12,
            u64::from(u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]])),
        ),
        major => return Err(format!("unsupported format version {major}")),
    };
    if header_len > MAX_HEADER_LEN {
        return Err(format!(
            "a header of {header_len} bytes, longer than the {MAX_HEADER_LEN} accepted"
        ));
    }
    let offset = prefix + header_len;
    if offset > file_len {
        return Err(format!(
            "a header of {header_len} bytes in a file of {file_len} bytes"
        ));
    }
    Ok(offset)
}

/// `(2, 3)`, `(5,)`, `()`: numpy's tuple syntax.
fn shape_text(dims: &[usize]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The magic, version and header dictionary, padded with spaces to a multiple of 64
/// bytes and ended by a newline (format version 1.0, or 2.0 for a huge header).
fn header(dims: &[usize], ty: NpyType) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        ty.descr(),
        shape_text(dims)
    );
    let mut out = b"\x93NUMPY".to_vec();
    let fits_v1 = dict.len() + 1 + 10 < usize::from(u16::MAX);
    let prefix = if fits_v1 { 10 } else { 12 };
    let unpadded = prefix + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let header_len = total - prefix;
    if fits_v1 {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("hipdnn_cli_npy_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn round_trips_through_npyz() {
        let path = temp("a.npy");
        let values: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
        write(&path, &[2, 3, 4], NpyType::F32, &values).unwrap();
        let npy = NpyFile::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(npy.shape(), &[2, 3, 4]);
        assert_eq!(npy.into_vec::<f32>().unwrap(), values);
        assert_eq!(read(&path, &[2, 3, 4], NpyType::F32).unwrap(), values);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 128 + 24 * 4);
    }

    #[test]
    fn half_values_round_trip_exactly() {
        let path = temp("h.npy");
        let values = [1.0f32, -0.5, 65504.0, 0.000_061_035_156];
        write(&path, &[4], NpyType::F16, &values).unwrap();
        assert_eq!(read(&path, &[4], NpyType::F16).unwrap(), values);
    }

    #[test]
    fn shape_and_type_mismatches_name_the_file() {
        let path = temp("m.npy");
        write(&path, &[2, 2], NpyType::F32, &[0.0; 4]).unwrap();
        let e = read(&path, &[4], NpyType::F32).unwrap_err();
        assert!(
            e.contains("m.npy") && e.contains("(2, 2)") && e.contains("(4,)"),
            "{e}"
        );
        let e = read(&path, &[2, 2], NpyType::F16).unwrap_err();
        assert!(e.contains("'<f4'") && e.contains("float16"), "{e}");
        std::fs::write(&path, b"not numpy").unwrap();
        assert!(
            read(&path, &[2, 2], NpyType::F32)
                .unwrap_err()
                .contains("not a valid .npy")
        );
    }

    /// A header length field of 4 GiB, or longer than the file, is refused before the
    /// parser allocates for it; data shorter than the tensor is refused before the data
    /// buffer is allocated.
    #[test]
    fn hostile_headers_and_short_data_are_refused_before_allocating() {
        let path = temp("hostile.npy");
        let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
        v2.extend_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &v2).unwrap();
        let e = read(&path, &[2], NpyType::F32).unwrap_err();
        assert!(e.contains("4294967295 bytes, longer than"), "{e}");
        let mut v1 = b"\x93NUMPY\x01\x00".to_vec();
        v1.extend_from_slice(&1000u16.to_le_bytes());
        std::fs::write(&path, &v1).unwrap();
        let e = read(&path, &[2], NpyType::F32).unwrap_err();
        assert!(
            e.contains("a header of 1000 bytes in a file of 10 bytes"),
            "{e}"
        );
        std::fs::write(&path, b"\x93NUMPY\x09\x00\x00\x00").unwrap();
        let e = read(&path, &[2], NpyType::F32).unwrap_err();
        assert!(e.contains("unsupported format version 9"), "{e}");
        // A valid header for 2^30 floats followed by 4 bytes.
        write(&path, &[1], NpyType::F32, &[1.0]).unwrap();
        let e = read(&path, &[1], NpyType::F32).map(|v| v.len());
        assert_eq!(e, Ok(1));
        let mut big = header(&[1 << 30], NpyType::F32);
        big.extend_from_slice(&[0; 4]);
        std::fs::write(&path, &big).unwrap();
        let e = read(&path, &[1 << 30], NpyType::F32).unwrap_err();
        assert!(
            e.contains("truncated data (1073741824 elements expected, 4 bytes"),
            "{e}"
        );
    }

    #[test]
    fn fortran_order_is_gathered_into_dims_order() {
        let path = temp("f.npy");
        // [[1, 2, 3], [4, 5, 6]] stored column by column.
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
        let len = 128 - 10;
        bytes.extend_from_slice(&(len as u16).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        bytes.resize(127, b' ');
        bytes.push(b'\n');
        for v in [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(
            read(&path, &[2, 3], NpyType::F32).unwrap(),
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
        );
    }
}
