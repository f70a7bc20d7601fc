//! The `NodeAttributes` union: owned and borrowed forms, generated from one list.

use super::attributes::*;
use super::json::{JsonUnion, unknown_member};
use crate::error::Error;
use crate::wire;
use flatbuffers::{Allocator, FlatBufferBuilder, Table, UnionWIPOffset, WIPOffset};

macro_rules! node_attributes {
    ($($variant:ident),* $(,)?) => {
        /// The operation a node performs: one member of the `NodeAttributes` union.
        ///
        /// Variants are named after the schema tables. In JSON the node carries the name
        /// in `attributes_type` and the table in `attributes`, as flatc writes unions.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant, reason = "mirrors the schema; nodes are few")]
        pub enum NodeAttributes {
            $(
                #[allow(missing_docs, reason = "named after the schema table")]
                $variant($variant),
            )*
        }

        impl NodeAttributes {
            /// The union type tag written on the wire.
            pub fn tag(&self) -> wire::NodeAttributes {
                match self { $( Self::$variant(_) => wire::NodeAttributes::$variant, )* }
            }

            /// The schema name of the attribute table, e.g. `"ConvolutionFwdAttributes"`.
            pub fn type_name(&self) -> &'static str {
                match self { $( Self::$variant(_) => stringify!($variant), )* }
            }

            /// Appends the uids the node reads to `ins` and those it writes to `outs`.
            pub fn tensor_uids(&self, ins: &mut Vec<i64>, outs: &mut Vec<i64>) {
                match self { $( Self::$variant(a) => a.tensor_uids(ins, outs), )* }
            }

            /// One sample of every member, in union order.
            #[cfg(test)]
            pub(crate) fn all_samples(present: bool) -> Vec<Self> {
                vec![ $( Self::$variant($variant::sample(present)), )* ]
            }

            pub(crate) fn pack<'b, A: Allocator + 'b>(
                &self,
                fbb: &mut FlatBufferBuilder<'b, A>,
            ) -> (wire::NodeAttributes, WIPOffset<UnionWIPOffset>) {
                match self {
                    $( Self::$variant(a) => (wire::NodeAttributes::$variant, a.pack(fbb).as_union_value()), )*
                }
            }
        }

        impl JsonUnion for NodeAttributes {
            const UNION: &'static str = "NodeAttributes";
            fn member_name(&self) -> &'static str {
                self.type_name()
            }
            fn to_json(&self) -> serde_json::Value {
                match self {
                    $( Self::$variant(a) => serde_json::to_value(a).expect("attribute tables serialize"), )*
                }
            }
            fn from_json(name: &str, value: serde_json::Value) -> Result<Self, String> {
                match name {
                    $(
                        stringify!($variant) => serde_json::from_value(value)
                            .map(Self::$variant)
                            .map_err(|e| format!("{name}: {e}")),
                    )*
                    _ => Err(unknown_member::<Self>(name)),
                }
            }
        }

        $(
            impl From<$variant> for NodeAttributes {
                fn from(a: $variant) -> Self {
                    Self::$variant(a)
                }
            }
        )*

        /// A node's attribute table, borrowed from a verified buffer.
        ///
        /// Obtained from [`NodeView::attributes`](crate::NodeView::attributes); the
        /// variants hold the generated zero-copy table types.
        #[derive(Debug, Clone, Copy)]
        pub enum NodeAttributesRef<'a> {
            $(
                #[allow(missing_docs, reason = "named after the schema table")]
                $variant(wire::$variant<'a>),
            )*
        }

        impl<'a> NodeAttributesRef<'a> {
            /// Interprets `table` as the union member named by `tag`; `None` for tags
            /// this schema version does not know (and for `NONE`).
            ///
            /// # Safety
            /// `table` must come from a verified buffer, as the value of a union whose
            /// type field is `tag` (the verifier checked the table against that tag).
            pub(crate) unsafe fn new(tag: wire::NodeAttributes, table: Table<'a>) -> Option<Self> {
                match tag {
                    $(
                        // SAFETY: per this function's contract the table was verified as
                        // a `$variant`.
                        wire::NodeAttributes::$variant => Some(Self::$variant(unsafe {
                            wire::$variant::init_from_table(table)
                        })),
                    )*
                    _ => None,
                }
            }

            /// The schema name of the attribute table.
            pub fn type_name(&self) -> &'static str {
                match self { $( Self::$variant(_) => stringify!($variant), )* }
            }

            /// Appends the uids the node reads to `ins` and those it writes to `outs`.
            pub fn tensor_uids(&self, ins: &mut Vec<i64>, outs: &mut Vec<i64>) {
                match self { $( Self::$variant(a) => $variant::view_tensor_uids(a, ins, outs), )* }
            }

            /// Copies the table into its owned form.
            ///
            /// # Errors
            /// A data type unknown to this schema version.
            pub fn to_owned(&self) -> Result<NodeAttributes, Error> {
                Ok(match self { $( Self::$variant(a) => NodeAttributes::$variant($variant::from_view(a)?), )* })
            }
        }
    };
}

node_attributes! {
    BatchnormInferenceAttributes,
    PointwiseAttributes,
    BatchnormBackwardAttributes,
    BatchnormAttributes,
    ConvolutionFwdAttributes,
    ConvolutionBwdAttributes,
    ConvolutionWrwAttributes,
    BatchnormInferenceAttributesVarianceExt,
    MatmulAttributes,
    RMSNormAttributes,
    LayernormAttributes,
    SdpaAttributes,
    BlockScaleDequantizeAttributes,
    BlockScaleQuantizeAttributes,
    SdpaBackwardAttributes,
    CustomOpAttributes,
    RMSNormBackwardAttributes,
    ReductionAttributes,
    ResampleFwdAttributes,
    LayernormBackwardAttributes,
    ResampleBwdAttributes,
    MoeGroupedMatmulAttributes,
    MoeGroupedMatmulBwdAttributes,
}
