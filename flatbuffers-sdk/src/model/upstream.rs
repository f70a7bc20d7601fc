//! Upstream hipDNN's JSON dialect of a graph, beside our flatc-style form.
//!
//! Upstream hipDNN (`hipdnn_flatbuffers_sdk/utilities/json/*.hpp`) writes a graph with
//! nlohmann::json, and its graph logger dumps finalized graphs that way. The dialect
//! differs from ours in shape, not in content:
//!
//! * a node is its attribute table's JSON plus `name`, `type` (the `NodeAttributes`
//!   member name) and `compute_data_type`; most tables group their tensor uids under
//!   `inputs` and `outputs`, and some their other fields under `parameters` (convolutions,
//!   attention backward) or `attributes` (attention forward); the rest are top-level keys;
//! * data types and most enums are lowercase strings (`"float"`, `"relu_fwd"`), a few
//!   keep upper case (`"CROSS_CORRELATION"`, `"TOP_LEFT"`), reduction modes spell
//!   `MIN_OP`/`MAX_OP` as `"min"`/`"max"`, and some are numbers (resample and padding
//!   modes, layer norm's `forward_phase`);
//! * an absent optional value is `null` in some tables and a missing key in others;
//! * a tensor's pass-by-value scalar is a plain number under `value` beside
//!   `value_type`, and the graph id is a canonical UUID string.
//!
//! Every table is described once, in [`layout`]: which group each field goes in, how
//! an absent value is written, and how its value is spelled. The writer and the reader
//! both follow that table, so they cannot disagree. `docs/graph-json.md` lists the
//! dialect for people.
//!
//! Fields upstream's dialect does not carry (the JsonLogic `umd_flops`/`umd_bytes` of
//! convolutions, matmul and attention, a custom op's `test_generation_marker`, a
//! tensor's `ragged_offset_multiplier`) are written as extra top-level keys under their
//! schema names, and only when they differ from the default: a graph without them is
//! written exactly as upstream writes it, and one with them still round-trips
//! (upstream's reader ignores keys it does not know).
//!
//! The reader follows upstream's, with two differences: a key upstream always writes
//! but whose value has a default (a name, a flag, a nullable uid) may be left out, and
//! an unknown key is an error, as in our own form, so that a misspelt key is reported
//! rather than silently dropped.

use hipdnn_data_sdk::DataType;
use serde_json::{Map, Value};

use super::graph::{EngineApiVersion, Graph, Node, TensorAttributes, Uuid};
use super::json::JsonUnion;
use super::node::NodeAttributes;
use crate::error::Error;
use crate::tensor_value::TensorValue;
use crate::wire;

/// Where a field of an attribute table goes in a node's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// A key of the node object itself.
    Top,
    /// Under `inputs`.
    Inputs,
    /// Under `outputs`.
    Outputs,
    /// Under `parameters` (convolutions, attention backward).
    Parameters,
    /// Under `attributes` (attention forward).
    Attributes,
}

impl Group {
    const NESTED: [Group; 4] = [
        Group::Inputs,
        Group::Outputs,
        Group::Parameters,
        Group::Attributes,
    ];

    fn key(self) -> &'static str {
        match self {
            Group::Top => "",
            Group::Inputs => "inputs",
            Group::Outputs => "outputs",
            Group::Parameters => "parameters",
            Group::Attributes => "attributes",
        }
    }

    /// `inputs.x_tensor_uid`, for messages.
    fn path(self, name: &str) -> String {
        match self {
            Group::Top => name.to_owned(),
            _ => format!("{}.{name}", self.key()),
        }
    }
}

/// How a field is written, and whether the reader needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// Always written; the reader requires it (as upstream's does).
    Required,
    /// Always written; a missing key takes the schema default.
    Always,
    /// An optional value written as `null` when absent; `null` or a missing key is
    /// absent.
    Null,
    /// An optional value written only when present.
    IfSome,
    /// Written only when it differs from the schema default (`0`, `false`, empty,
    /// `NOT_SET`).
    IfSet,
}

/// How a field's value is spelled in upstream's dialect, given its spelling in ours.
#[derive(Debug, Clone, Copy)]
enum Spell {
    /// The same: numbers, booleans, and enums upstream names as the schema does.
    Same,
    /// A list (`[]` when empty, which our form leaves out).
    List,
    /// A string (`""` when empty, which our form leaves out).
    Text,
    /// An enum named in lower case (`"RELU_FWD"` is `"relu_fwd"`).
    Lower,
    /// `ReductionMode`: lower case, with `MIN_OP`/`MAX_OP` as `"min"`/`"max"`.
    Reduction,
    /// An enum written as its wire number; the function maps a schema name to it.
    Number(fn(&str) -> Option<i64>),
}

impl Spell {
    /// Our spelling to upstream's.
    fn write(self, value: Value) -> Value {
        match (self, value) {
            (Spell::Lower, Value::String(s)) => Value::String(s.to_ascii_lowercase()),
            (Spell::Reduction, Value::String(s)) => Value::String(match s.as_str() {
                "MIN_OP" => "min".to_owned(),
                "MAX_OP" => "max".to_owned(),
                _ => s.to_ascii_lowercase(),
            }),
            (Spell::Number(number), Value::String(s)) => match number(&s) {
                Some(n) => Value::from(n),
                None => Value::String(s),
            },
            (_, value) => value,
        }
    }

    /// Upstream's spelling to ours. Names of number-spelled enums are accepted too,
    /// in either case (an older upstream wrote resample modes as `"maxpool"`).
    fn read(self, value: Value) -> Value {
        match (self, value) {
            (Spell::Lower | Spell::Number(_), Value::String(s)) => {
                Value::String(s.to_ascii_uppercase())
            }
            (Spell::Reduction, Value::String(s)) => Value::String(match s.as_str() {
                "min" => "MIN_OP".to_owned(),
                "max" => "MAX_OP".to_owned(),
                _ => s.to_ascii_uppercase(),
            }),
            (_, value) => value,
        }
    }

    /// The value of a field our form leaves out because it is empty.
    fn empty(self) -> Option<Value> {
        match self {
            Spell::List => Some(Value::Array(Vec::new())),
            Spell::Text => Some(Value::String(String::new())),
            _ => None,
        }
    }
}

/// One field of an attribute table in upstream's dialect (the key is the schema's
/// field name in every table).
#[derive(Debug, Clone, Copy)]
struct Field {
    group: Group,
    name: &'static str,
    presence: Presence,
    spell: Spell,
}

const fn field(group: Group, name: &'static str, presence: Presence, spell: Spell) -> Field {
    Field {
        group,
        name,
        presence,
        spell,
    }
}

/// A required tensor uid under `inputs`.
const fn input(name: &'static str) -> Field {
    field(Group::Inputs, name, Presence::Required, Spell::Same)
}

/// An optional tensor uid under `inputs`, `null` when absent.
const fn input_or_null(name: &'static str) -> Field {
    field(Group::Inputs, name, Presence::Null, Spell::Same)
}

/// An optional tensor uid under `inputs`, left out when absent.
const fn input_if_some(name: &'static str) -> Field {
    field(Group::Inputs, name, Presence::IfSome, Spell::Same)
}

/// A required tensor uid under `outputs`.
const fn output(name: &'static str) -> Field {
    field(Group::Outputs, name, Presence::Required, Spell::Same)
}

/// An optional tensor uid under `outputs`, `null` when absent.
const fn output_or_null(name: &'static str) -> Field {
    field(Group::Outputs, name, Presence::Null, Spell::Same)
}

/// An optional tensor uid under `outputs`, left out when absent.
const fn output_if_some(name: &'static str) -> Field {
    field(Group::Outputs, name, Presence::IfSome, Spell::Same)
}

/// A required top-level key.
const fn top(name: &'static str, spell: Spell) -> Field {
    field(Group::Top, name, Presence::Required, spell)
}

/// The extra top-level keys for fields upstream's dialect does not carry.
const fn extra(name: &'static str, spell: Spell) -> Field {
    field(Group::Top, name, Presence::IfSet, spell)
}

const UMD_FLOPS: Field = extra("umd_flops", Spell::Text);
const UMD_BYTES: Field = extra("umd_bytes", Spell::Text);

/// The geometry of the three convolutions, under `parameters`.
const fn conv_parameter(name: &'static str, spell: Spell) -> Field {
    field(Group::Parameters, name, Presence::Required, spell)
}

macro_rules! wire_number {
    ($($fn_name:ident: $enum:ident),* $(,)?) => {$(
        /// The wire number of a schema name of this enum.
        fn $fn_name(name: &str) -> Option<i64> {
            wire::$enum::ENUM_VALUES
                .iter()
                .find(|v| v.variant_name() == Some(name))
                .map(|v| i64::from(v.0))
        }
    )*};
}

wire_number!(
    resample_mode_number: ResampleMode,
    padding_mode_number: PaddingMode,
    norm_fwd_phase_number: NormFwdPhase,
);

const CONV_GEOMETRY: [Field; 5] = [
    conv_parameter("pre_padding", Spell::List),
    conv_parameter("post_padding", Spell::List),
    conv_parameter("stride", Spell::List),
    conv_parameter("dilation", Spell::List),
    conv_parameter("conv_mode", Spell::Same),
];

const RESAMPLE_GEOMETRY: [Field; 6] = [
    top("pre_padding", Spell::List),
    top("post_padding", Spell::List),
    top("stride", Spell::List),
    top("window", Spell::List),
    top("resample_mode", Spell::Number(resample_mode_number)),
    top("padding_mode", Spell::Number(padding_mode_number)),
];

/// Concatenates field arrays into one `&'static [Field]`.
macro_rules! fields {
    ($($part:expr),* $(,)?) => {{
        const PARTS: &[&[Field]] = &[$(&$part),*];
        const LEN: usize = {
            let mut n = 0;
            let mut i = 0;
            while i < PARTS.len() {
                n += PARTS[i].len();
                i += 1;
            }
            n
        };
        const ALL: [Field; LEN] = {
            let mut out = [PARTS[0][0]; LEN];
            let mut n = 0;
            let mut i = 0;
            while i < PARTS.len() {
                let mut j = 0;
                while j < PARTS[i].len() {
                    out[n] = PARTS[i][j];
                    n += 1;
                    j += 1;
                }
                i += 1;
            }
            out
        };
        &ALL
    }};
}

/// The layout of every attribute table in upstream's dialect, by `NodeAttributes`
/// member name; `None` for a name upstream's dialect does not have.
///
/// Taken field by field from upstream's `utilities/json/<Table>.hpp` (which key, which
/// group, `null` or left out when absent, how enums are spelled).
fn layout(type_name: &str) -> Option<&'static [Field]> {
    use Presence::{Always, IfSet, IfSome, Null};
    Some(match type_name {
        "BatchnormInferenceAttributes" => fields!([
            input("x_tensor_uid"),
            input("mean_tensor_uid"),
            input("scale_tensor_uid"),
            input("inv_variance_tensor_uid"),
            input("bias_tensor_uid"),
            output("y_tensor_uid"),
        ]),
        "BatchnormInferenceAttributesVarianceExt" => fields!([
            input("x_tensor_uid"),
            input("mean_tensor_uid"),
            input("scale_tensor_uid"),
            input("variance_tensor_uid"),
            input("bias_tensor_uid"),
            input("epsilon_tensor_uid"),
            output("y_tensor_uid"),
        ]),
        "BatchnormAttributes" => fields!([
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            input("bias_tensor_uid"),
            input("epsilon_tensor_uid"),
            field(
                Group::Inputs,
                "peer_stats_tensor_uid",
                Presence::Required,
                Spell::List
            ),
            input_or_null("prev_running_mean_tensor_uid"),
            input_or_null("prev_running_variance_tensor_uid"),
            input_or_null("momentum_tensor_uid"),
            output("y_tensor_uid"),
            output_or_null("mean_tensor_uid"),
            output_or_null("inv_variance_tensor_uid"),
            output_or_null("next_running_mean_tensor_uid"),
            output_or_null("next_running_variance_tensor_uid"),
        ]),
        "BatchnormBackwardAttributes" => fields!([
            input("dy_tensor_uid"),
            input("x_tensor_uid"),
            input_or_null("mean_tensor_uid"),
            input_or_null("inv_variance_tensor_uid"),
            input("scale_tensor_uid"),
            field(
                Group::Inputs,
                "peer_stats_tensor_uid",
                Presence::Required,
                Spell::List
            ),
            output("dbias_tensor_uid"),
            output("dscale_tensor_uid"),
            output("dx_tensor_uid"),
        ]),
        "PointwiseAttributes" => fields!([
            field(Group::Inputs, "operation", Presence::Required, Spell::Lower),
            input_or_null("relu_lower_clip"),
            input_or_null("relu_upper_clip"),
            input_or_null("relu_lower_clip_slope"),
            input_or_null("axis_tensor_uid"),
            input("in_0_tensor_uid"),
            input_or_null("in_1_tensor_uid"),
            input_or_null("in_2_tensor_uid"),
            output("out_0_tensor_uid"),
            input_or_null("swish_beta"),
            input_or_null("elu_alpha"),
            input_or_null("softplus_beta"),
        ]),
        "ConvolutionFwdAttributes" => fields!(
            [
                input("x_tensor_uid"),
                input("w_tensor_uid"),
                output("y_tensor_uid")
            ],
            CONV_GEOMETRY,
            [UMD_FLOPS, UMD_BYTES],
        ),
        "ConvolutionBwdAttributes" => fields!(
            [
                input("dy_tensor_uid"),
                input("w_tensor_uid"),
                output("dx_tensor_uid")
            ],
            CONV_GEOMETRY,
            [UMD_FLOPS, UMD_BYTES],
        ),
        "ConvolutionWrwAttributes" => fields!(
            [
                input("x_tensor_uid"),
                input("dy_tensor_uid"),
                output("dw_tensor_uid")
            ],
            CONV_GEOMETRY,
            [UMD_FLOPS, UMD_BYTES],
        ),
        "MatmulAttributes" => fields!([
            input("a_tensor_uid"),
            input("b_tensor_uid"),
            output("c_tensor_uid"),
            UMD_FLOPS,
            UMD_BYTES,
        ]),
        "RMSNormAttributes" => fields!([
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            input("epsilon_tensor_uid"),
            input_if_some("bias_tensor_uid"),
            output("y_tensor_uid"),
            output_if_some("inv_rms_tensor_uid"),
            // The schema name ("INFERENCE"), left out when NOT_SET.
            field(Group::Top, "forward_phase", IfSet, Spell::Same),
        ]),
        "RMSNormBackwardAttributes" => fields!([
            input("dy_tensor_uid"),
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            input("inv_rms_tensor_uid"),
            output("dx_tensor_uid"),
            output("dscale_tensor_uid"),
            output_if_some("dbias_tensor_uid"),
        ]),
        "LayernormAttributes" => fields!([
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            input("bias_tensor_uid"),
            input("epsilon_tensor_uid"),
            output("y_tensor_uid"),
            output_or_null("mean_tensor_uid"),
            output_or_null("inv_variance_tensor_uid"),
            top("normalized_dim_count", Spell::Same),
            // A number here, unlike RMS norm's.
            field(
                Group::Top,
                "forward_phase",
                Always,
                Spell::Number(norm_fwd_phase_number)
            ),
        ]),
        "LayernormBackwardAttributes" => fields!([
            input("dy_tensor_uid"),
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            input_or_null("mean_tensor_uid"),
            input_or_null("inv_variance_tensor_uid"),
            input_or_null("epsilon_tensor_uid"),
            output("dx_tensor_uid"),
            output("dscale_tensor_uid"),
            output("dbias_tensor_uid"),
            top("normalized_dim_count", Spell::Same),
        ]),
        "SdpaAttributes" => fields!([
            input("q_tensor_uid"),
            input("k_tensor_uid"),
            input("v_tensor_uid"),
            input_or_null("attn_mask_tensor_uid"),
            input_or_null("scale_tensor_uid"),
            input_or_null("seq_len_q_tensor_uid"),
            input_or_null("seq_len_kv_tensor_uid"),
            input_or_null("seed_tensor_uid"),
            input_or_null("offset_tensor_uid"),
            input_or_null("dropout_mask_tensor_uid"),
            input_or_null("dropout_scale_tensor_uid"),
            input_or_null("page_table_k_tensor_uid"),
            input_or_null("page_table_v_tensor_uid"),
            input_or_null("block_mask_tensor_uid"),
            input_or_null("sink_token_tensor_uid"),
            input_or_null("descale_q_tensor_uid"),
            input_or_null("descale_k_tensor_uid"),
            input_or_null("descale_v_tensor_uid"),
            input_or_null("descale_s_tensor_uid"),
            input_or_null("scale_s_tensor_uid"),
            input_or_null("scale_o_tensor_uid"),
            output("o_tensor_uid"),
            output_or_null("stats_tensor_uid"),
            output_or_null("max_tensor_uid"),
            output_or_null("sum_exp_tensor_uid"),
            output_or_null("rng_dump_tensor_uid"),
            output_or_null("amax_s_tensor_uid"),
            output_or_null("amax_o_tensor_uid"),
            field(Group::Attributes, "generate_stats", Null, Spell::Same),
            field(
                Group::Attributes,
                "alibi_mask",
                Presence::Required,
                Spell::Same
            ),
            field(
                Group::Attributes,
                "padding_mask",
                Presence::Required,
                Spell::Same
            ),
            field(
                Group::Attributes,
                "causal_mask",
                Presence::Required,
                Spell::Same
            ),
            field(
                Group::Attributes,
                "causal_mask_bottom_right",
                Presence::Required,
                Spell::Same
            ),
            field(Group::Attributes, "dropout_probability", Null, Spell::Same),
            field(Group::Attributes, "attn_scale_value", Null, Spell::Same),
            field(Group::Attributes, "left_bound", Null, Spell::Same),
            field(Group::Attributes, "right_bound", Null, Spell::Same),
            field(Group::Attributes, "max_seq_len_kv", Null, Spell::Same),
            field(
                Group::Attributes,
                "diagonal_alignment",
                Presence::Required,
                Spell::Same
            ),
            field(
                Group::Attributes,
                "mma_core_mode",
                Presence::Required,
                Spell::Lower
            ),
            field(
                Group::Attributes,
                "implementation",
                Presence::Required,
                Spell::Same
            ),
            UMD_FLOPS,
            UMD_BYTES,
        ]),
        "SdpaBackwardAttributes" => fields!([
            input("q_tensor_uid"),
            input("k_tensor_uid"),
            input("v_tensor_uid"),
            input("o_tensor_uid"),
            input("do_tensor_uid"),
            input("stats_tensor_uid"),
            input_or_null("scale_tensor_uid"),
            input_or_null("attn_mask_tensor_uid"),
            input_or_null("seq_len_q_tensor_uid"),
            input_or_null("seq_len_kv_tensor_uid"),
            input_or_null("seed_tensor_uid"),
            input_or_null("offset_tensor_uid"),
            input_or_null("dropout_mask_tensor_uid"),
            input_or_null("dropout_scale_tensor_uid"),
            input_or_null("dropout_scale_inv_tensor_uid"),
            output("dq_tensor_uid"),
            output("dk_tensor_uid"),
            output("dv_tensor_uid"),
            output_or_null("dbias_tensor_uid"),
            conv_parameter("alibi_mask", Spell::Same),
            conv_parameter("padding_mask", Spell::Same),
            conv_parameter("causal_mask", Spell::Same),
            conv_parameter("causal_mask_bottom_right", Spell::Same),
            field(Group::Parameters, "dropout_probability", Null, Spell::Same),
            field(Group::Parameters, "attn_scale_value", Null, Spell::Same),
            field(Group::Parameters, "left_bound", Null, Spell::Same),
            field(Group::Parameters, "right_bound", Null, Spell::Same),
            conv_parameter("diagonal_alignment", Spell::Same),
        ]),
        "BlockScaleDequantizeAttributes" => fields!([
            input("x_tensor_uid"),
            input("scale_tensor_uid"),
            output("y_tensor_uid"),
            field(Group::Top, "block_size", Always, Spell::List),
            field(Group::Top, "is_negative_scale", Always, Spell::Same),
        ]),
        "BlockScaleQuantizeAttributes" => fields!([
            input("x_tensor_uid"),
            output("y_tensor_uid"),
            output("scale_tensor_uid"),
            field(Group::Top, "block_size", IfSet, Spell::Same),
            field(Group::Top, "axis", IfSome, Spell::Same),
            field(Group::Top, "transpose", Always, Spell::Same),
        ]),
        "CustomOpAttributes" => fields!([
            top("custom_op_id", Spell::Text),
            top("input_tensor_uids", Spell::List),
            top("output_tensor_uids", Spell::List),
            top("data", Spell::List),
            extra("test_generation_marker", Spell::Same),
        ]),
        "ReductionAttributes" => fields!([
            top("mode", Spell::Reduction),
            top("in_tensor_uid", Spell::Same),
            top("out_tensor_uid", Spell::Same),
            field(Group::Top, "is_deterministic", Always, Spell::Same),
        ]),
        "ResampleFwdAttributes" => fields!(
            [
                top("x_tensor_uid", Spell::Same),
                top("y_tensor_uid", Spell::Same),
                field(Group::Top, "index_tensor_uid", IfSome, Spell::Same),
            ],
            RESAMPLE_GEOMETRY,
            [field(Group::Top, "generate_index", Always, Spell::Same)],
        ),
        "ResampleBwdAttributes" => fields!(
            [
                top("dy_tensor_uid", Spell::Same),
                top("dx_tensor_uid", Spell::Same),
                field(Group::Top, "index_tensor_uid", IfSome, Spell::Same),
            ],
            RESAMPLE_GEOMETRY,
        ),
        "MoeGroupedMatmulAttributes" => fields!([
            input("token_tensor_uid"),
            input("weight_tensor_uid"),
            input("first_token_offset_tensor_uid"),
            input_if_some("token_index_tensor_uid"),
            input_if_some("token_ks_tensor_uid"),
            output("output_tensor_uid"),
            top("mode", Spell::Lower),
            top("top_k", Spell::Same),
        ]),
        "MoeGroupedMatmulBwdAttributes" => fields!([
            input("doutput_tensor_uid"),
            input("token_tensor_uid"),
            input("first_token_offset_tensor_uid"),
            output("dweight_tensor_uid"),
        ]),
        _ => return None,
    })
}

/// True when `value` is the schema default of a field (for [`Presence::IfSet`]).
fn is_default(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty() || s == "NOT_SET",
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

fn data_type_json(dt: DataType) -> Value {
    Value::String(dt.name().to_ascii_lowercase())
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => unreachable!("a table serializes to an object, not {other}"),
    }
}

/// A node in upstream's dialect.
fn node_to_upstream(node: &Node) -> Value {
    let type_name = node.attributes.type_name();
    let fields = layout(type_name)
        .unwrap_or_else(|| unreachable!("every NodeAttributes member has a layout"));
    let mut flat = object(JsonUnion::to_json(&node.attributes));
    let mut out = Map::new();
    let mut groups: Vec<(Group, Map<String, Value>)> = Vec::new();
    for f in fields {
        if f.group != Group::Top && !groups.iter().any(|(g, _)| *g == f.group) {
            groups.push((f.group, Map::new()));
        }
        let value = flat.remove(f.name);
        let written = match f.presence {
            Presence::Required | Presence::Always => value.or_else(|| f.spell.empty()),
            Presence::Null => Some(value.unwrap_or(Value::Null)),
            Presence::IfSome => value.filter(|v| !v.is_null()),
            Presence::IfSet => value.filter(|v| !is_default(v)),
        };
        let Some(written) = written else { continue };
        let written = f.spell.write(written);
        let target = match f.group {
            Group::Top => &mut out,
            group => {
                &mut groups
                    .iter_mut()
                    .find(|(g, _)| *g == group)
                    .expect("made above")
                    .1
            }
        };
        target.insert(f.name.to_owned(), written);
    }
    debug_assert!(
        flat.is_empty(),
        "{type_name}: fields missing from its upstream layout: {:?}",
        flat.keys().collect::<Vec<_>>()
    );
    for (group, map) in groups {
        out.insert(group.key().to_owned(), Value::Object(map));
    }
    out.insert("name".to_owned(), Value::String(node.name.clone()));
    out.insert("type".to_owned(), Value::String(type_name.to_owned()));
    out.insert(
        "compute_data_type".to_owned(),
        data_type_json(node.compute_data_type),
    );
    Value::Object(out)
}

fn tensor_value_json(value: TensorValue) -> (&'static str, Value) {
    let name = value.member_name();
    let json = match value {
        TensorValue::Float32(v) | TensorValue::Float16(v) | TensorValue::BFloat16(v) => {
            Value::from(v)
        }
        TensorValue::Float8(v) => Value::from(v),
        TensorValue::Int32(v) => Value::from(v),
        TensorValue::Float64(v) => Value::from(v),
        TensorValue::Int64(v) => Value::from(v),
        TensorValue::Bool(v) => Value::from(v),
    };
    (name, json)
}

/// A tensor in upstream's dialect (`TensorAttributes.hpp`).
fn tensor_to_upstream(t: &TensorAttributes) -> Value {
    let mut out = Map::new();
    out.insert("uid".into(), Value::from(t.uid));
    out.insert("data_type".into(), data_type_json(t.data_type));
    out.insert("dims".into(), Value::from(t.dims.clone()));
    out.insert("strides".into(), Value::from(t.strides.clone()));
    out.insert("name".into(), Value::String(t.name.clone()));
    out.insert("virtual".into(), Value::Bool(t.is_virtual));
    out.insert("alignment".into(), Value::from(t.alignment));
    out.insert(
        "is_runtime_pass_by_value".into(),
        Value::Bool(t.is_runtime_pass_by_value),
    );
    if let Some(uid) = t.ragged_offset_tensor_uid {
        out.insert("ragged_offset_tensor_uid".into(), Value::from(uid));
    }
    if let Some(value) = t.value {
        let (name, json) = tensor_value_json(value);
        out.insert("value_type".into(), Value::String(name.to_owned()));
        out.insert("value".into(), json);
    }
    // Not part of upstream's dialect: written only when it is not the default.
    if t.ragged_offset_multiplier != 1 {
        out.insert(
            "ragged_offset_multiplier".into(),
            Value::from(t.ragged_offset_multiplier),
        );
    }
    Value::Object(out)
}

/// The graph in upstream's dialect, as a JSON value (`Graph.hpp`).
pub(crate) fn graph_to_upstream(graph: &Graph) -> Value {
    let mut out = Map::new();
    out.insert(
        "nodes".into(),
        Value::Array(graph.nodes.iter().map(node_to_upstream).collect()),
    );
    out.insert(
        "compute_data_type".into(),
        data_type_json(graph.compute_data_type),
    );
    out.insert("io_data_type".into(), data_type_json(graph.io_data_type));
    out.insert(
        "intermediate_data_type".into(),
        data_type_json(graph.intermediate_data_type),
    );
    out.insert("name".into(), Value::String(graph.name.clone()));
    out.insert(
        "tensors".into(),
        Value::Array(graph.tensors.iter().map(tensor_to_upstream).collect()),
    );
    out.insert(
        "is_override_shape_enabled".into(),
        Value::Bool(graph.is_override_shape_enabled),
    );
    if let Some(id) = graph.preferred_engine_id {
        out.insert("preferred_engine_id".into(), Value::from(id));
    }
    if let Some(id) = graph.id {
        out.insert("id".into(), Value::String(id.to_string()));
    }
    if let Some(v) = graph.min_required_engine_api_version {
        out.insert(
            "min_required_engine_api_version".into(),
            serde_json::json!({ "major": v.major, "minor": v.minor, "patch": v.patch }),
        );
    }
    Value::Object(out)
}

/// Reading: errors are plain strings with their location, wrapped once at the top.
type Read<T> = Result<T, String>;

/// Takes `key` out of `map`; `null` counts as missing.
fn take(map: &mut Map<String, Value>, key: &str) -> Option<Value> {
    map.remove(key).filter(|v| !v.is_null())
}

fn take_object(map: &mut Map<String, Value>, key: &str) -> Read<Option<Map<String, Value>>> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(format!("`{key}` must be an object, not {other}")),
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Read<Option<String>> {
    match take(map, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

fn take_typed<T: serde::de::DeserializeOwned>(
    map: &mut Map<String, Value>,
    key: &str,
) -> Read<Option<T>> {
    take(map, key)
        .map(|v| serde_json::from_value(v).map_err(|e| format!("`{key}`: {e}")))
        .transpose()
}

fn take_data_type(map: &mut Map<String, Value>, key: &str) -> Read<DataType> {
    match take_string(map, key)? {
        None => Ok(DataType::Unset),
        Some(name) => name
            .parse()
            .map_err(|_| format!("`{key}`: unknown data type \"{name}\"")),
    }
}

fn no_other_keys(map: &Map<String, Value>, prefix: &str) -> Read<()> {
    match map.keys().next() {
        None => Ok(()),
        Some(key) => Err(format!("unknown key `{prefix}{key}`")),
    }
}

fn node_from_upstream(value: Value, index: usize) -> Read<Node> {
    let Value::Object(mut obj) = value else {
        return Err(format!("node {index}: not an object"));
    };
    let name = take_string(&mut obj, "name")
        .map_err(|e| format!("node {index}: {e}"))?
        .unwrap_or_default();
    let at = format!("node {index} (\"{name}\")");
    let type_name = take_string(&mut obj, "type")
        .map_err(|e| format!("{at}: {e}"))?
        .ok_or_else(|| format!("{at}: `type` is missing"))?;
    let at = format!("{at}, {type_name}");
    let compute_data_type =
        take_data_type(&mut obj, "compute_data_type").map_err(|e| format!("{at}: {e}"))?;
    let fields = layout(&type_name).ok_or_else(|| {
        format!(
            "node {index} (\"{name}\"): node type \"{type_name}\" is not part of \
             upstream's graph JSON dialect"
        )
    })?;
    let mut groups = Vec::new();
    for group in Group::NESTED {
        if fields.iter().any(|f| f.group == group) {
            let map = take_object(&mut obj, group.key())
                .map_err(|e| format!("{at}: {e}"))?
                .unwrap_or_default();
            groups.push((group, map));
        }
    }
    let mut flat = Map::new();
    for f in fields {
        let source = match f.group {
            Group::Top => &mut obj,
            group => {
                &mut groups
                    .iter_mut()
                    .find(|(g, _)| *g == group)
                    .expect("taken above")
                    .1
            }
        };
        match take(source, f.name) {
            Some(v) => {
                flat.insert(f.name.to_owned(), f.spell.read(v));
            }
            None if f.presence == Presence::Required => {
                return Err(format!("{at}: `{}` is missing", f.group.path(f.name)));
            }
            None => {}
        }
    }
    no_other_keys(&obj, "").map_err(|e| format!("{at}: {e}"))?;
    for (group, map) in &groups {
        no_other_keys(map, &format!("{}.", group.key())).map_err(|e| format!("{at}: {e}"))?;
    }
    let attributes = NodeAttributes::from_json(&type_name, Value::Object(flat))
        .map_err(|e| format!("{at}: {e}"))?;
    Ok(Node {
        name,
        compute_data_type,
        attributes,
    })
}

fn tensor_value_from_upstream(member: &str, value: Value) -> Read<TensorValue> {
    fn scalar<T: serde::de::DeserializeOwned>(member: &str, value: Value) -> Read<T> {
        serde_json::from_value(value).map_err(|e| format!("`value` of a {member}: {e}"))
    }
    Ok(match member {
        "Float32Value" => TensorValue::Float32(scalar(member, value)?),
        "Float16Value" => TensorValue::Float16(scalar(member, value)?),
        "BFloat16Value" => TensorValue::BFloat16(scalar(member, value)?),
        "Float8Value" => TensorValue::Float8(scalar(member, value)?),
        "Int32Value" => TensorValue::Int32(scalar(member, value)?),
        "Int64Value" => TensorValue::Int64(scalar(member, value)?),
        "Float64Value" => TensorValue::Float64(scalar(member, value)?),
        "BoolValue" => TensorValue::Bool(scalar(member, value)?),
        _ => return Err(format!("unknown value_type \"{member}\"")),
    })
}

fn tensor_from_upstream(value: Value, index: usize) -> Read<TensorAttributes> {
    let Value::Object(mut obj) = value else {
        return Err(format!("tensor {index}: not an object"));
    };
    let uid: i64 = take_typed(&mut obj, "uid")
        .map_err(|e| format!("tensor {index}: {e}"))?
        .ok_or_else(|| format!("tensor {index}: `uid` is missing"))?;
    let at = format!("tensor uid {uid}");
    let inner = |obj: &mut Map<String, Value>| -> Read<TensorAttributes> {
        let required = |obj: &mut Map<String, Value>, key: &str| -> Read<Vec<i64>> {
            take_typed(obj, key)?.ok_or_else(|| format!("`{key}` is missing"))
        };
        if !obj.contains_key("data_type") {
            return Err("`data_type` is missing".to_owned());
        }
        let data_type = take_data_type(obj, "data_type")?;
        let dims = required(obj, "dims")?;
        let strides = required(obj, "strides")?;
        let value_type = take_string(obj, "value_type")?;
        let value = match (value_type, take(obj, "value")) {
            (None, None) => None,
            (Some(member), Some(v)) => Some(tensor_value_from_upstream(&member, v)?),
            (Some(member), None) => {
                return Err(format!(
                    "`value_type` is \"{member}\" but `value` is missing"
                ));
            }
            (None, Some(_)) => return Err("`value` is present but `value_type` is missing".into()),
        };
        let defaults = TensorAttributes::default();
        let t = TensorAttributes {
            uid,
            name: take_string(obj, "name")?.unwrap_or_default(),
            data_type,
            strides,
            dims,
            is_virtual: take_typed(obj, "virtual")?.unwrap_or(false),
            value,
            is_runtime_pass_by_value: take_typed(obj, "is_runtime_pass_by_value")?.unwrap_or(false),
            ragged_offset_tensor_uid: take_typed(obj, "ragged_offset_tensor_uid")?,
            alignment: take_typed(obj, "alignment")?.unwrap_or(defaults.alignment),
            ragged_offset_multiplier: take_typed(obj, "ragged_offset_multiplier")?
                .unwrap_or(defaults.ragged_offset_multiplier),
        };
        no_other_keys(obj, "")?;
        Ok(t)
    };
    inner(&mut obj).map_err(|e| format!("{at}: {e}"))
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as upstream's `parseUuid` requires (it also
/// requires version 4, which this reader does not).
fn parse_uuid(text: &str) -> Read<Uuid> {
    let b = text.as_bytes();
    let dashes_ok = b.len() == 36 && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-');
    if !dashes_ok {
        return Err(format!(
            "`id` \"{text}\" is not a UUID in xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx form"
        ));
    }
    text.parse().map_err(|e| format!("`id`: {e}"))
}

/// Reads a graph in upstream's dialect from a parsed JSON value.
pub(crate) fn graph_from_upstream(value: Value) -> Read<Graph> {
    let Value::Object(mut obj) = value else {
        return Err("the graph is not a JSON object".to_owned());
    };
    let list = |obj: &mut Map<String, Value>, key: &str| -> Read<Vec<Value>> {
        match obj.remove(key) {
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(format!("`{key}` must be an array, not {other}")),
            None => Err(format!("`{key}` is missing")),
        }
    };
    let nodes = list(&mut obj, "nodes")?;
    let tensors = list(&mut obj, "tensors")?;
    let id = take_string(&mut obj, "id")?
        .map(|s| parse_uuid(&s))
        .transpose()?;
    let min_required_engine_api_version =
        match take_object(&mut obj, "min_required_engine_api_version")? {
            None => None,
            Some(mut v) => {
                let mut part = |key: &str| -> Read<u32> {
                    take_typed(&mut v, key)?.ok_or_else(|| {
                        format!("`min_required_engine_api_version.{key}` is missing")
                    })
                };
                let version = EngineApiVersion::new(part("major")?, part("minor")?, part("patch")?);
                no_other_keys(&v, "min_required_engine_api_version.")?;
                Some(version)
            }
        };
    let graph = Graph {
        name: take_string(&mut obj, "name")?.unwrap_or_default(),
        compute_data_type: take_data_type(&mut obj, "compute_data_type")?,
        intermediate_data_type: take_data_type(&mut obj, "intermediate_data_type")?,
        io_data_type: take_data_type(&mut obj, "io_data_type")?,
        tensors: tensors
            .into_iter()
            .enumerate()
            .map(|(i, t)| tensor_from_upstream(t, i))
            .collect::<Read<_>>()?,
        nodes: nodes
            .into_iter()
            .enumerate()
            .map(|(i, n)| node_from_upstream(n, i))
            .collect::<Read<_>>()?,
        preferred_engine_id: take_typed(&mut obj, "preferred_engine_id")?,
        is_override_shape_enabled: take_typed(&mut obj, "is_override_shape_enabled")?
            .unwrap_or(false),
        min_required_engine_api_version,
        id,
    };
    no_other_keys(&obj, "")?;
    Ok(graph)
}

/// The two JSON dialects a graph can be read from and written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonDialect {
    /// This project's form: what `flatc --json` prints for the binary graph under our
    /// schemas (nodes carry `attributes_type` and `attributes`; `docs/graph-json.md`).
    Flatc,
    /// Upstream hipDNN's nlohmann::json form (nodes carry `type`, and their attribute
    /// fields grouped under `inputs`, `outputs`, ...), which upstream's graph logger
    /// dumps and its tools read.
    Upstream,
}

impl JsonDialect {
    /// Which dialect a parsed graph is written in.
    ///
    /// A node with `attributes_type` is ours and one with `type` (and no
    /// `attributes_type`) is upstream's; the first node that has either decides. A
    /// graph whose nodes say neither (none at all, say) is upstream's when its
    /// `compute_data_type`, `io_data_type` or `intermediate_data_type` is spelt in lower
    /// case (`"float"`) or its `id` is a string, and ours otherwise. Anything that is
    /// not a JSON object is ours, whose parser then reports what is wrong.
    pub fn detect(graph: &Value) -> Self {
        let Some(obj) = graph.as_object() else {
            return JsonDialect::Flatc;
        };
        let nodes = obj.get("nodes").and_then(Value::as_array);
        for node in nodes.into_iter().flatten().filter_map(Value::as_object) {
            if node.contains_key("attributes_type") {
                return JsonDialect::Flatc;
            }
            if node.contains_key("type") {
                return JsonDialect::Upstream;
            }
        }
        let lower_case_type = [
            "compute_data_type",
            "io_data_type",
            "intermediate_data_type",
        ]
        .iter()
        .filter_map(|key| obj.get(*key).and_then(Value::as_str))
        .any(|s| s.chars().any(|c| c.is_ascii_lowercase()));
        if lower_case_type || obj.get("id").is_some_and(Value::is_string) {
            JsonDialect::Upstream
        } else {
            JsonDialect::Flatc
        }
    }
}

impl std::fmt::Display for JsonDialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JsonDialect::Flatc => "flatc",
            JsonDialect::Upstream => "upstream",
        })
    }
}

/// Wraps a reader's message into the crate's error.
pub(crate) fn error(message: String) -> Error {
    Error::UpstreamJson(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph_of(attributes: NodeAttributes) -> Graph {
        Graph {
            name: attributes.type_name().to_owned(),
            compute_data_type: DataType::Float,
            nodes: vec![Node {
                name: "n".into(),
                compute_data_type: DataType::Half,
                attributes,
            }],
            ..Graph::default()
        }
    }

    /// Every field of every table has exactly one place in its layout, and no key
    /// collides with a node's own keys or group names.
    #[test]
    fn every_table_field_has_one_upstream_key() {
        let reserved = ["name", "type", "compute_data_type"]
            .into_iter()
            .chain(Group::NESTED.iter().map(|g| g.key()))
            .collect::<Vec<_>>();
        for attributes in NodeAttributes::all_samples(true) {
            let type_name = attributes.type_name();
            let fields = layout(type_name).unwrap_or_else(|| panic!("{type_name}: no layout"));
            let mut names: Vec<&str> = fields.iter().map(|f| f.name).collect();
            names.sort_unstable();
            let mut expected: Vec<String> = object(JsonUnion::to_json(&attributes))
                .keys()
                .cloned()
                .collect();
            expected.sort_unstable();
            assert_eq!(names, expected, "{type_name}");
            for f in fields {
                assert!(
                    f.group != Group::Top || !reserved.contains(&f.name),
                    "{type_name}.{}",
                    f.name
                );
            }
        }
        assert!(layout("PoolingFwdAttributes").is_none());
    }

    /// One graph per node type, every field set and every optional one absent, through
    /// upstream's dialect and back.
    #[test]
    fn every_node_type_round_trips_through_upstream_json() {
        for present in [true, false] {
            for attributes in NodeAttributes::all_samples(present) {
                let type_name = attributes.type_name();
                let graph = graph_of(attributes);
                let json = graph.to_upstream_json();
                assert_eq!(
                    JsonDialect::detect(&serde_json::from_str(&json).unwrap()),
                    JsonDialect::Upstream
                );
                let back = Graph::from_upstream_json(&json)
                    .unwrap_or_else(|e| panic!("{type_name} ({present}): {e}\n{json}"));
                assert_eq!(back, graph, "{type_name} ({present}):\n{json}");
                assert_eq!(Graph::from_json(&json).unwrap(), graph, "{type_name}");
            }
        }
    }

    /// Upstream writes a nullable field as `null` and a left-out one not at all; both
    /// read back as absent, and a default-valued extra key is not written.
    #[test]
    fn absent_values_are_null_or_left_out_as_upstream_writes_them() {
        let samples = NodeAttributes::all_samples(false);
        let node = |name: &str| {
            let a = samples.iter().find(|a| a.type_name() == name).unwrap();
            let json: Value =
                serde_json::from_str(&graph_of(a.clone()).to_upstream_json()).unwrap();
            json["nodes"][0].clone()
        };
        let pw = node("PointwiseAttributes");
        assert_eq!(pw["inputs"]["in_1_tensor_uid"], Value::Null);
        assert!(
            pw["inputs"]
                .as_object()
                .unwrap()
                .contains_key("relu_lower_clip")
        );
        let rms = node("RMSNormAttributes");
        assert!(
            !rms["inputs"]
                .as_object()
                .unwrap()
                .contains_key("bias_tensor_uid")
        );
        assert!(node("ConvolutionFwdAttributes")["umd_flops"].is_string());
        let conv = graph_of(super::super::ConvolutionFwdAttributes::default().into());
        let conv: Value = serde_json::from_str(&conv.to_upstream_json()).unwrap();
        assert!(
            !conv["nodes"][0]
                .as_object()
                .unwrap()
                .contains_key("umd_flops")
        );
        assert_eq!(
            conv["nodes"][0]["parameters"]["pre_padding"],
            serde_json::json!([])
        );
        let quantize = node("BlockScaleQuantizeAttributes");
        assert!(!quantize.as_object().unwrap().contains_key("axis"));
    }

    #[test]
    fn enums_take_upstream_spellings() {
        assert_eq!(
            Spell::Reduction.write(Value::from("MIN_OP")),
            Value::from("min")
        );
        assert_eq!(
            Spell::Reduction.read(Value::from("max")),
            Value::from("MAX_OP")
        );
        assert_eq!(
            Spell::Reduction.write(Value::from("MUL_NO_ZEROS")),
            Value::from("mul_no_zeros")
        );
        let resample = Spell::Number(resample_mode_number);
        assert_eq!(
            resample.write(Value::from("AVGPOOL_INCLUDE_PADDING")),
            Value::from(3)
        );
        assert_eq!(
            resample.read(Value::from("maxpool")),
            Value::from("MAXPOOL")
        );
        assert_eq!(resample.read(Value::from(2)), Value::from(2));
        assert_eq!(
            Spell::Lower.write(Value::from("GELU_FWD")),
            Value::from("gelu_fwd")
        );
        assert_eq!(Spell::Lower.write(Value::from(99)), Value::from(99));
    }

    #[test]
    fn detection_looks_at_nodes_then_spellings() {
        let detect = |s: &str| JsonDialect::detect(&serde_json::from_str(s).unwrap());
        assert_eq!(
            detect(r#"{"nodes": [{"attributes_type": "X", "type": 1}]}"#),
            JsonDialect::Flatc
        );
        assert_eq!(
            detect(r#"{"nodes": [{"type": "X"}]}"#),
            JsonDialect::Upstream
        );
        assert_eq!(
            detect(r#"{"nodes": [], "io_data_type": "float"}"#),
            JsonDialect::Upstream
        );
        assert_eq!(
            detect(r#"{"nodes": [], "io_data_type": "FLOAT"}"#),
            JsonDialect::Flatc
        );
        assert_eq!(
            detect(r#"{"id": "00000000-0000-4000-8000-000000000000"}"#),
            JsonDialect::Upstream
        );
        assert_eq!(detect("[1]"), JsonDialect::Flatc);
    }
}
