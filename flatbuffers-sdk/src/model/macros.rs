//! The one declaration of every owned table.
//!
//! `owned_table!` turns a field list into: the owned struct (serde-enabled, its JSON
//! field names are the schema's), `pack` into the generated builder, `from_view` out of a
//! verified table, and, for node attribute tables, the lists of tensor uids the node
//! reads (`=> input`) and writes (`=> output`). Graph validation uses those lists, so a
//! uid field's role is stated in exactly one place.

/// Appends the uids held by one field.
pub trait UidField {
    /// Pushes every uid in `self` onto `out`.
    fn push_uids(&self, out: &mut Vec<i64>);
}

impl UidField for i64 {
    #[inline]
    fn push_uids(&self, out: &mut Vec<i64>) {
        out.push(*self);
    }
}

impl UidField for Option<i64> {
    #[inline]
    fn push_uids(&self, out: &mut Vec<i64>) {
        out.extend(*self);
    }
}

impl UidField for Vec<i64> {
    #[inline]
    fn push_uids(&self, out: &mut Vec<i64>) {
        out.extend_from_slice(self);
    }
}

impl UidField for Option<flatbuffers::Vector<'_, i64>> {
    #[inline]
    fn push_uids(&self, out: &mut Vec<i64>) {
        if let Some(v) = self {
            out.extend(v.iter());
        }
    }
}

macro_rules! push_role {
    (input, $value:expr, $ins:ident, $outs:ident) => {
        $crate::model::macros::UidField::push_uids(&$value, $ins)
    };
    (output, $value:expr, $ins:ident, $outs:ident) => {
        $crate::model::macros::UidField::push_uids(&$value, $outs)
    };
    (, $value:expr, $ins:ident, $outs:ident) => {};
}
pub(crate) use push_role;

macro_rules! owned_table {
    (
        $(#[$meta:meta])*
        $name:ident / $args:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty $(= $default:expr)? $(=> $role:ident)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $(
                #[doc = concat!("Schema field `", stringify!($field), "`", $(" (", stringify!($role), " tensor uid)",)? ".")]
                #[doc = ""]
                $(#[$fmeta])*
                #[serde(skip_serializing_if = "crate::model::WireField::is_absent")]
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self {
                    $( $field: owned_table!(@default $ty $(, $default)?), )*
                }
            }
        }

        impl $name {
            /// Writes this table into `fbb` and returns its offset.
            pub fn pack<'b, A: flatbuffers::Allocator + 'b>(
                &self,
                fbb: &mut flatbuffers::FlatBufferBuilder<'b, A>,
            ) -> flatbuffers::WIPOffset<$crate::wire::$name<'b>> {
                let args = $crate::wire::$args {
                    $( $field: $crate::model::WireField::pack(&self.$field, fbb), )*
                };
                $crate::wire::$name::create(fbb, &args)
            }

            /// Copies a verified table into an owned value.
            ///
            /// # Errors
            /// A data type the schema does not know.
            pub fn from_view(view: &$crate::wire::$name<'_>) -> Result<Self, $crate::Error> {
                Ok(Self {
                    $(
                        $field: $crate::model::WireField::unpack(view.$field(), stringify!($field))
                            .map_err(|e| e.within(stringify!($name)))?,
                    )*
                })
            }

            #[cfg(test)]
            #[allow(dead_code, reason = "not every table is sampled")]
            pub(crate) fn sample(present: bool) -> Self {
                let mut seed = 0u32;
                Self {
                    $( $field: { seed += 1; $crate::model::macros::Sample::sample(seed, present) }, )*
                }
            }

            /// Appends the uids this node reads to `ins` and those it writes to `outs`.
            #[allow(unused_variables, clippy::ptr_arg, reason = "tables without tensor uids")]
            #[allow(dead_code, reason = "only node attribute tables are asked")]
            pub(crate) fn tensor_uids(&self, ins: &mut Vec<i64>, outs: &mut Vec<i64>) {
                $( $crate::model::macros::push_role!($($role)?, self.$field, ins, outs); )*
            }

            #[allow(unused_variables, clippy::ptr_arg, reason = "tables without tensor uids")]
            #[allow(dead_code, reason = "only node attribute tables are asked")]
            pub(crate) fn view_tensor_uids(
                view: &$crate::wire::$name<'_>,
                ins: &mut Vec<i64>,
                outs: &mut Vec<i64>,
            ) {
                $( $crate::model::macros::push_role!($($role)?, view.$field(), ins, outs); )*
            }
        }
    };
    (@default $ty:ty) => { <$ty as Default>::default() };
    (@default $ty:ty, $default:expr) => { $default };
}
pub(crate) use owned_table;

/// Distinct, non-default field values for round-trip tests.
#[cfg(test)]
pub(crate) trait Sample {
    /// A value derived from `seed`; `present == false` leaves optional fields absent.
    fn sample(seed: u32, present: bool) -> Self;
}

#[cfg(test)]
mod sample_impls {
    use super::Sample;

    macro_rules! numeric {
        ($($t:ty),*) => {$(
            impl Sample for $t {
                #[allow(clippy::cast_lossless, clippy::cast_possible_truncation, reason = "small seeds")]
                fn sample(seed: u32, _: bool) -> Self {
                    (seed * 3 + 1) as $t
                }
            }
        )*};
    }
    numeric!(i64, i32, u64, u32, u8);

    impl Sample for f32 {
        fn sample(seed: u32, _: bool) -> Self {
            seed as f32 + 0.5
        }
    }
    impl Sample for f64 {
        fn sample(seed: u32, _: bool) -> Self {
            f64::from(seed) + 0.25
        }
    }
    impl Sample for bool {
        fn sample(_: u32, _: bool) -> Self {
            true
        }
    }
    impl Sample for String {
        fn sample(seed: u32, _: bool) -> Self {
            format!("s{seed}")
        }
    }
    impl<T: Sample> Sample for Option<T> {
        fn sample(seed: u32, present: bool) -> Self {
            present.then(|| T::sample(seed, present))
        }
    }
    impl<T: Sample> Sample for Vec<T> {
        fn sample(seed: u32, present: bool) -> Self {
            (0..3).map(|i| T::sample(seed * 10 + i, present)).collect()
        }
    }
    impl Sample for hipdnn_data_sdk::DataType {
        fn sample(seed: u32, _: bool) -> Self {
            let all = hipdnn_data_sdk::DataType::ALL;
            all[1 + seed as usize % (all.len() - 1)]
        }
    }
}
