//! How one owned field maps onto the generated FlatBuffers code.
//!
//! Every owned table is declared once (see `owned_table!` in `tables.rs`); the macro
//! turns each field into an argument of the generated `*Args` struct and back through
//! this trait, so absent-versus-present rules live here and nowhere else:
//! optional scalars (`= null` in the schema) are `Option`s and are written only when
//! `Some`; empty strings and vectors are not written at all.

use flatbuffers::{Allocator, FlatBufferBuilder, ForwardsUOffset, Vector, WIPOffset};
use hipdnn_data_sdk::DataType;

use crate::error::Error;
use crate::wire;

/// One field of an owned table.
pub trait WireField: Sized {
    /// The type of the field in the generated `*Args` struct.
    type Arg<'b>;
    /// The type returned by the generated accessor.
    type View<'a>;
    /// Writes the field's out-of-line data (if any) and returns the `*Args` value.
    fn pack<'b, A: Allocator + 'b>(&self, fbb: &mut FlatBufferBuilder<'b, A>) -> Self::Arg<'b>;
    /// Reads the field back from a verified table.
    fn unpack(view: Self::View<'_>, field: &'static str) -> Result<Self, Error>;
    /// True when the field would not be written (used to keep the JSON form short).
    fn is_absent(&self) -> bool {
        false
    }
}

macro_rules! scalar_fields {
    ($($t:ty),*) => {$(
        impl WireField for $t {
            type Arg<'b> = $t;
            type View<'a> = $t;
            #[inline]
            fn pack<'b, A: Allocator + 'b>(&self, _: &mut FlatBufferBuilder<'b, A>) -> $t {
                *self
            }
            #[inline]
            fn unpack(view: $t, _: &'static str) -> Result<Self, Error> {
                Ok(view)
            }
        }
        impl WireField for Option<$t> {
            type Arg<'b> = Option<$t>;
            type View<'a> = Option<$t>;
            #[inline]
            fn pack<'b, A: Allocator + 'b>(&self, _: &mut FlatBufferBuilder<'b, A>) -> Option<$t> {
                *self
            }
            #[inline]
            fn unpack(view: Option<$t>, _: &'static str) -> Result<Self, Error> {
                Ok(view)
            }
            fn is_absent(&self) -> bool {
                self.is_none()
            }
        }
    )*};
}
scalar_fields!(i64, i32, u64, u32, u8, bool, f32, f64);

macro_rules! scalar_vector_fields {
    ($($t:ty),*) => {$(
        impl WireField for Vec<$t> {
            type Arg<'b> = Option<WIPOffset<Vector<'b, $t>>>;
            type View<'a> = Option<Vector<'a, $t>>;
            #[inline]
            fn pack<'b, A: Allocator + 'b>(
                &self,
                fbb: &mut FlatBufferBuilder<'b, A>,
            ) -> Self::Arg<'b> {
                (!self.is_empty()).then(|| fbb.create_vector(self))
            }
            #[inline]
            fn unpack(view: Self::View<'_>, _: &'static str) -> Result<Self, Error> {
                Ok(view.map(|v| v.iter().collect()).unwrap_or_default())
            }
            fn is_absent(&self) -> bool {
                self.is_empty()
            }
        }
    )*};
}
scalar_vector_fields!(i64, i32, u8, f64);

impl WireField for String {
    type Arg<'b> = Option<WIPOffset<&'b str>>;
    type View<'a> = Option<&'a str>;
    #[inline]
    fn pack<'b, A: Allocator + 'b>(&self, fbb: &mut FlatBufferBuilder<'b, A>) -> Self::Arg<'b> {
        (!self.is_empty()).then(|| fbb.create_string(self))
    }
    #[inline]
    fn unpack(view: Option<&str>, _: &'static str) -> Result<Self, Error> {
        Ok(view.unwrap_or_default().to_owned())
    }
    fn is_absent(&self) -> bool {
        self.is_empty()
    }
}

impl WireField for Vec<String> {
    type Arg<'b> = Option<WIPOffset<Vector<'b, ForwardsUOffset<&'b str>>>>;
    type View<'a> = Option<Vector<'a, ForwardsUOffset<&'a str>>>;
    fn pack<'b, A: Allocator + 'b>(&self, fbb: &mut FlatBufferBuilder<'b, A>) -> Self::Arg<'b> {
        if self.is_empty() {
            return None;
        }
        let strings: Vec<_> = self.iter().map(|s| fbb.create_string(s)).collect();
        Some(fbb.create_vector(&strings))
    }
    fn unpack(view: Self::View<'_>, _: &'static str) -> Result<Self, Error> {
        Ok(view
            .map(|v| v.iter().map(str::to_owned).collect())
            .unwrap_or_default())
    }
    fn is_absent(&self) -> bool {
        self.is_empty()
    }
}

impl WireField for DataType {
    type Arg<'b> = wire::DataType;
    type View<'a> = wire::DataType;
    #[inline]
    fn pack<'b, A: Allocator + 'b>(&self, _: &mut FlatBufferBuilder<'b, A>) -> wire::DataType {
        wire::DataType(self.to_wire())
    }
    #[inline]
    fn unpack(view: wire::DataType, field: &'static str) -> Result<Self, Error> {
        data_type_from_wire(view, field)
    }
}

/// Converts a wire data type, naming `field` when the value is unknown.
pub(crate) fn data_type_from_wire(value: wire::DataType, field: &str) -> Result<DataType, Error> {
    DataType::from_wire(value.0).ok_or_else(|| Error::UnknownEnumValue {
        location: format!("field `{field}`"),
        enum_name: "DataType",
        value: i64::from(value.0),
    })
}

/// Generated enums travel unchanged; values unknown to this schema version are kept
/// (validation decides whether they are acceptable), and serde writes them by name.
macro_rules! enum_fields {
    ($($t:ident),* $(,)?) => {$(
        impl WireField for wire::$t {
            type Arg<'b> = wire::$t;
            type View<'a> = wire::$t;
            #[inline]
            fn pack<'b, A: Allocator + 'b>(&self, _: &mut FlatBufferBuilder<'b, A>) -> wire::$t {
                *self
            }
            #[inline]
            fn unpack(view: wire::$t, _: &'static str) -> Result<Self, Error> {
                Ok(view)
            }
        }

        #[cfg(test)]
        impl crate::model::macros::Sample for wire::$t {
            fn sample(seed: u32, _: bool) -> Self {
                let values = wire::$t::ENUM_VALUES;
                values[1 + seed as usize % (values.len() - 1)]
            }
        }

        impl serde::Serialize for wire::$t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.variant_name() {
                    Some(name) => s.serialize_str(name),
                    None => s.serialize_i64(i64::from(self.0)),
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for wire::$t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = crate::model::enum_name::RawEnum::deserialize(d)?;
                raw.resolve(
                    stringify!($t),
                    wire::$t::ENUM_VALUES.iter().map(|v| (v.variant_name().unwrap_or(""), i64::from(v.0))),
                )
                .and_then(|value| {
                    value.try_into().map(wire::$t).map_err(|_| {
                        serde::de::Error::custom(format!(
                            "{} value {value} out of range", stringify!($t)
                        ))
                    })
                })
            }
        }
    )*};
}

enum_fields!(
    ConvMode,
    PointwiseMode,
    NormFwdPhase,
    ReductionMode,
    ResampleMode,
    PaddingMode,
    DiagonalAlignment,
    AttentionImplementation,
    MoeGroupedMatmulMode,
    PredictionKind,
    PredictionStatus,
);
