//! [`DataType`], the element-type tag of the FlatBuffers schema, and the
//! [`Element`] trait that ties Rust types to it.

use std::fmt;
use std::str::FromStr;

use crate::error::DataSdkError;
use crate::fp8::{F8E4M3, F8E4M3Fnuz, F8E5M2, F8E5M2Fnuz, F8E8M0};

/// Element type of a tensor, numbered as on the wire.
///
/// The discriminants are the values of `enum DataType : byte` in the hipDNN
/// FlatBuffers schema, so `data_type as i8` (or [`DataType::to_wire`]) can be
/// written straight into a buffer. hipDNN's C++ frontend has its own enum with a
/// different numbering past `FP4_E2M1`; its values must never reach the wire and
/// have no representation here.
///
/// Text forms ([`DataType::name`], [`Display`](fmt::Display), [`FromStr`],
/// serde) use the schema spelling, e.g. `"FLOAT"` or `"FP8_E4M3_FNUZ"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(i8)]
pub enum DataType {
    /// No type yet (`UNSET`), e.g. a virtual tensor before type inference.
    #[default]
    Unset = 0,
    /// IEEE binary32 (`FLOAT`).
    Float = 1,
    /// IEEE binary16 (`HALF`).
    Half = 2,
    /// bfloat16: binary32 with 16 mantissa bits dropped (`BFLOAT16`).
    Bfloat16 = 3,
    /// IEEE binary64 (`DOUBLE`).
    Double = 4,
    /// Unsigned 8-bit integer (`UINT8`).
    Uint8 = 5,
    /// Signed 32-bit integer (`INT32`).
    Int32 = 6,
    /// Signed 8-bit integer (`INT8`).
    Int8 = 7,
    /// OCP FP8 E4M3, no infinities (`FP8_E4M3`), see [`F8E4M3`].
    Fp8E4m3 = 8,
    /// OCP FP8 E5M2, IEEE-like (`FP8_E5M2`), see [`F8E5M2`].
    Fp8E5m2 = 9,
    /// OCP MX scale: an unsigned power of two (`FP8_E8M0`), see [`F8E8M0`].
    Fp8E8m0 = 10,
    /// OCP MX FP4 E2M1 (`FP4_E2M1`), two per byte.
    Fp4E2m1 = 11,
    /// OCP MX FP6 E2M3 (`FP6_E2M3`).
    Fp6E2m3 = 12,
    /// OCP MX FP6 E3M2 (`FP6_E3M2`).
    Fp6E3m2 = 13,
    /// Signed 4-bit integer (`INT4`), two per byte.
    Int4 = 14,
    /// Signed 64-bit integer (`INT64`).
    Int64 = 15,
    /// FP8 E4M3 with bias 8, no negative zero, NaN = 0x80 (`FP8_E4M3_FNUZ`),
    /// see [`F8E4M3Fnuz`].
    Fp8E4m3Fnuz = 16,
    /// FP8 E5M2 with bias 16, no negative zero, NaN = 0x80 (`FP8_E5M2_FNUZ`),
    /// see [`F8E5M2Fnuz`].
    Fp8E5m2Fnuz = 17,
}

impl DataType {
    /// Every variant, in wire order (`ALL[i].to_wire() == i`).
    pub const ALL: [DataType; 18] = [
        DataType::Unset,
        DataType::Float,
        DataType::Half,
        DataType::Bfloat16,
        DataType::Double,
        DataType::Uint8,
        DataType::Int32,
        DataType::Int8,
        DataType::Fp8E4m3,
        DataType::Fp8E5m2,
        DataType::Fp8E8m0,
        DataType::Fp4E2m1,
        DataType::Fp6E2m3,
        DataType::Fp6E3m2,
        DataType::Int4,
        DataType::Int64,
        DataType::Fp8E4m3Fnuz,
        DataType::Fp8E5m2Fnuz,
    ];

    /// Schema names, indexed by wire value; kept beside `ALL` so the two are
    /// checked against each other in one test.
    const NAMES: [&'static str; 18] = [
        "UNSET",
        "FLOAT",
        "HALF",
        "BFLOAT16",
        "DOUBLE",
        "UINT8",
        "INT32",
        "INT8",
        "FP8_E4M3",
        "FP8_E5M2",
        "FP8_E8M0",
        "FP4_E2M1",
        "FP6_E2M3",
        "FP6_E3M2",
        "INT4",
        "INT64",
        "FP8_E4M3_FNUZ",
        "FP8_E5M2_FNUZ",
    ];

    /// The FlatBuffers wire value.
    #[inline]
    pub const fn to_wire(self) -> i8 {
        self as i8
    }

    /// The variant with this wire value, or `None` for values this crate does
    /// not know (a newer schema, or a corrupt buffer).
    #[inline]
    pub const fn from_wire(value: i8) -> Option<Self> {
        if value >= 0 && (value as usize) < Self::ALL.len() {
            Some(Self::ALL[value as usize])
        } else {
            None
        }
    }

    /// The schema name, e.g. `"BFLOAT16"` or `"FP8_E4M3_FNUZ"`.
    #[inline]
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Width of one element in bits; `None` for [`DataType::Unset`].
    pub const fn size_bits(self) -> Option<u32> {
        use DataType::*;
        Some(match self {
            Unset => return None,
            Fp4E2m1 | Int4 => 4,
            Fp6E2m3 | Fp6E3m2 => 6,
            Uint8 | Int8 | Fp8E4m3 | Fp8E5m2 | Fp8E8m0 | Fp8E4m3Fnuz | Fp8E5m2Fnuz => 8,
            Half | Bfloat16 => 16,
            Float | Int32 => 32,
            Double | Int64 => 64,
        })
    }

    /// Width of one element in whole bytes; `None` for [`DataType::Unset`] and
    /// for the sub-byte types (`FP4_E2M1`, `FP6_*`, `INT4`), whose elements do
    /// not start on byte boundaries.
    pub const fn size_bytes(self) -> Option<usize> {
        match self.size_bits() {
            Some(bits) if bits % 8 == 0 => Some((bits / 8) as usize),
            _ => None,
        }
    }

    /// True for every floating-point format, FP8/FP6/FP4 and the E8M0 scale
    /// included.
    pub const fn is_floating_point(self) -> bool {
        use DataType::*;
        matches!(
            self,
            Float
                | Half
                | Bfloat16
                | Double
                | Fp8E4m3
                | Fp8E5m2
                | Fp8E8m0
                | Fp4E2m1
                | Fp6E2m3
                | Fp6E3m2
                | Fp8E4m3Fnuz
                | Fp8E5m2Fnuz
        )
    }

    /// True for the integer types (`UINT8`, `INT4`, `INT8`, `INT32`, `INT64`).
    pub const fn is_integer(self) -> bool {
        use DataType::*;
        matches!(self, Uint8 | Int4 | Int8 | Int32 | Int64)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for DataType {
    type Err = DataSdkError;

    /// Parses a schema name, ignoring ASCII case (`"float"`, `"Fp8_E4M3"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|dt| dt.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| DataSdkError::UnknownDataTypeName(s.to_owned()))
    }
}

impl From<DataType> for i8 {
    #[inline]
    fn from(dt: DataType) -> i8 {
        dt.to_wire()
    }
}

impl TryFrom<i8> for DataType {
    type Error = DataSdkError;

    fn try_from(value: i8) -> Result<Self, Self::Error> {
        Self::from_wire(value).ok_or(DataSdkError::UnknownDataTypeWire(value))
    }
}

impl serde::Serialize for DataType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for DataType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;

        impl serde::de::Visitor<'_> for NameVisitor {
            type Value = DataType;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a hipDNN data type name such as \"FLOAT\"")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DataType, E> {
                v.parse()
                    .map_err(|_| E::unknown_variant(v, &DataType::NAMES))
            }
        }

        deserializer.deserialize_str(NameVisitor)
    }
}

/// A Rust type whose values are stored exactly as one [`DataType`] lays out its
/// elements, so a `&[T]` can be handed to a kernel expecting that type.
///
/// Implemented for the primitive types with a wire counterpart, [`half::f16`],
/// [`half::bf16`] and the FP8 storage types of [`crate::fp8`]. There is none for
/// the sub-byte types: they cannot be addressed one element at a time.
pub trait Element: Copy + Send + Sync + 'static {
    /// The tag written into a tensor descriptor for buffers of `Self`.
    const DATA_TYPE: DataType;
}

macro_rules! impl_element {
    ($($ty:ty => $dt:ident),+ $(,)?) => {
        $(
            impl Element for $ty {
                const DATA_TYPE: DataType = DataType::$dt;
            }
        )+
    };
}

impl_element! {
    f32 => Float,
    f64 => Double,
    half::f16 => Half,
    half::bf16 => Bfloat16,
    u8 => Uint8,
    i8 => Int8,
    i32 => Int32,
    i64 => Int64,
    F8E4M3 => Fp8E4m3,
    F8E5M2 => Fp8E5m2,
    F8E8M0 => Fp8E8m0,
    F8E4M3Fnuz => Fp8E4m3Fnuz,
    F8E5M2Fnuz => Fp8E5m2Fnuz,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_match_schema() {
        let expected: [(DataType, i8, &str); 18] = [
            (DataType::Unset, 0, "UNSET"),
            (DataType::Float, 1, "FLOAT"),
            (DataType::Half, 2, "HALF"),
            (DataType::Bfloat16, 3, "BFLOAT16"),
            (DataType::Double, 4, "DOUBLE"),
            (DataType::Uint8, 5, "UINT8"),
            (DataType::Int32, 6, "INT32"),
            (DataType::Int8, 7, "INT8"),
            (DataType::Fp8E4m3, 8, "FP8_E4M3"),
            (DataType::Fp8E5m2, 9, "FP8_E5M2"),
            (DataType::Fp8E8m0, 10, "FP8_E8M0"),
            (DataType::Fp4E2m1, 11, "FP4_E2M1"),
            (DataType::Fp6E2m3, 12, "FP6_E2M3"),
            (DataType::Fp6E3m2, 13, "FP6_E3M2"),
            (DataType::Int4, 14, "INT4"),
            (DataType::Int64, 15, "INT64"),
            (DataType::Fp8E4m3Fnuz, 16, "FP8_E4M3_FNUZ"),
            (DataType::Fp8E5m2Fnuz, 17, "FP8_E5M2_FNUZ"),
        ];
        for (i, (dt, wire, name)) in expected.into_iter().enumerate() {
            assert_eq!(DataType::ALL[i], dt);
            assert_eq!(dt.to_wire(), wire);
            assert_eq!(i8::from(dt), wire);
            assert_eq!(DataType::from_wire(wire), Some(dt));
            assert_eq!(dt.name(), name);
            assert_eq!(dt.to_string(), name);
        }
    }

    #[test]
    fn unknown_wire_values_are_rejected() {
        for v in [-128i8, -1, 18, 19, 127] {
            assert_eq!(DataType::from_wire(v), None);
            assert_eq!(
                DataType::try_from(v),
                Err(DataSdkError::UnknownDataTypeWire(v))
            );
        }
    }

    #[test]
    fn parse_is_case_insensitive() {
        for dt in DataType::ALL {
            assert_eq!(dt.name().parse::<DataType>(), Ok(dt));
            assert_eq!(dt.name().to_ascii_lowercase().parse::<DataType>(), Ok(dt));
        }
        assert_eq!("Fp8_e4m3_Fnuz".parse(), Ok(DataType::Fp8E4m3Fnuz));
        let err = "FLOAT32".parse::<DataType>().unwrap_err();
        assert_eq!(err.to_string(), "unknown data type name \"FLOAT32\"");
    }

    #[test]
    fn sizes() {
        assert_eq!(DataType::Unset.size_bits(), None);
        assert_eq!(DataType::Unset.size_bytes(), None);
        assert_eq!(DataType::Float.size_bytes(), Some(4));
        assert_eq!(DataType::Double.size_bytes(), Some(8));
        assert_eq!(DataType::Half.size_bytes(), Some(2));
        assert_eq!(DataType::Bfloat16.size_bytes(), Some(2));
        assert_eq!(DataType::Int64.size_bytes(), Some(8));
        assert_eq!(DataType::Fp8E8m0.size_bytes(), Some(1));
        for dt in [DataType::Fp4E2m1, DataType::Int4] {
            assert_eq!(dt.size_bits(), Some(4));
            assert_eq!(dt.size_bytes(), None);
        }
        for dt in [DataType::Fp6E2m3, DataType::Fp6E3m2] {
            assert_eq!(dt.size_bits(), Some(6));
            assert_eq!(dt.size_bytes(), None);
        }
    }

    #[test]
    fn every_set_type_is_either_float_or_integer() {
        assert!(!DataType::Unset.is_floating_point());
        assert!(!DataType::Unset.is_integer());
        for dt in &DataType::ALL[1..] {
            assert!(
                dt.is_floating_point() ^ dt.is_integer(),
                "{dt} must be exactly one of float/integer"
            );
        }
        assert!(DataType::Fp8E8m0.is_floating_point());
        assert!(DataType::Uint8.is_integer());
    }

    #[test]
    fn default_is_unset() {
        assert_eq!(DataType::default(), DataType::Unset);
    }

    #[test]
    fn serde_uses_schema_names() {
        assert_eq!(
            serde_json::to_string(&DataType::Bfloat16).unwrap(),
            "\"BFLOAT16\""
        );
        let dt: DataType = serde_json::from_str("\"fp8_e5m2_fnuz\"").unwrap();
        assert_eq!(dt, DataType::Fp8E5m2Fnuz);
        for dt in DataType::ALL {
            let s = serde_json::to_string(&dt).unwrap();
            assert_eq!(serde_json::from_str::<DataType>(&s).unwrap(), dt);
        }
        assert!(serde_json::from_str::<DataType>("\"NOPE\"").is_err());
        assert!(serde_json::from_str::<DataType>("1").is_err());
    }

    #[test]
    fn element_types_match_their_size() {
        fn check<T: Element>() {
            assert_eq!(T::DATA_TYPE.size_bytes(), Some(std::mem::size_of::<T>()));
        }
        check::<f32>();
        check::<f64>();
        check::<half::f16>();
        check::<half::bf16>();
        check::<u8>();
        check::<i8>();
        check::<i32>();
        check::<i64>();
        check::<F8E4M3>();
        check::<F8E5M2>();
        check::<F8E8M0>();
        check::<F8E4M3Fnuz>();
        check::<F8E5M2Fnuz>();
        assert_eq!(<half::bf16 as Element>::DATA_TYPE, DataType::Bfloat16);
        assert_eq!(<F8E4M3Fnuz as Element>::DATA_TYPE, DataType::Fp8E4m3Fnuz);
    }
}
