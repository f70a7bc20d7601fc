//! Owned `Graph`, `Node` and `TensorAttributes`.

use std::fmt;

use flatbuffers::{Allocator, FlatBufferBuilder, WIPOffset};
use hipdnn_data_sdk::DataType;
use serde::{Deserialize, Serialize};

use super::field::{WireField, data_type_from_wire};
use super::json;
use super::node::{NodeAttributes, NodeAttributesRef};
use super::upstream::{self, JsonDialect};
use crate::error::Error;
use crate::tensor_value::{self, TensorValue};
use crate::wire;

/// Semantic version of the engine plugin API a graph needs (`EngineApiVersion`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct EngineApiVersion {
    /// Major version; plugins of another major are not compatible.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch version.
    pub patch: u32,
}

impl EngineApiVersion {
    /// The floor assumed when a graph carries no version: 1.0.0.
    pub const BASELINE: Self = Self::new(1, 0, 0);
    /// The floor of a graph that enables execute-time shape overrides: 1.1.0.
    pub const OVERRIDE_SHAPES: Self = Self::new(1, 1, 0);
    /// The floor of a graph with runtime pass-by-value scalars: 1.2.0.
    pub const RUNTIME_PASS_BY_VALUE: Self = Self::new(1, 2, 0);
    /// The floor of a graph with ragged tensors or non-default alignments: 1.3.0.
    pub const RAGGED_AND_ALIGNMENT: Self = Self::new(1, 3, 0);

    /// The version a graph needs: the floor it declares (absent: [`Self::BASELINE`]),
    /// raised to the floor of each feature it uses, as hipDNN computes it
    /// (`PluginVersionConstants`). `tensors` gives, per tensor, whether its scalar is
    /// bound at run time, whether it is ragged, and its alignment.
    pub(crate) fn required(
        declared: Option<Self>,
        override_shapes: bool,
        tensors: impl Iterator<Item = (bool, bool, i64)>,
    ) -> Self {
        let mut required = declared.unwrap_or(Self::BASELINE).max(Self::BASELINE);
        if override_shapes {
            required = required.max(Self::OVERRIDE_SHAPES);
        }
        for (runtime_scalar, ragged, alignment) in tensors {
            if runtime_scalar {
                required = required.max(Self::RUNTIME_PASS_BY_VALUE);
            }
            if ragged || alignment != DEFAULT_ALIGNMENT {
                required = required.max(Self::RAGGED_AND_ALIGNMENT);
            }
        }
        required
    }

    /// Makes a version.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for EngineApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl From<&wire::EngineApiVersion> for EngineApiVersion {
    fn from(v: &wire::EngineApiVersion) -> Self {
        Self::new(v.major(), v.minor(), v.patch())
    }
}

impl From<EngineApiVersion> for wire::EngineApiVersion {
    fn from(v: EngineApiVersion) -> Self {
        wire::EngineApiVersion::new(v.major, v.minor, v.patch)
    }
}

/// A 128-bit graph identity in network byte order. It displays (and parses from text)
/// in the usual `8-4-4-4-12` hexadecimal form; JSON keeps the struct's `bytes` array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Uuid {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex: String = s.chars().filter(|c| *c != '-').collect();
        if hex.len() != 32 || !hex.is_ascii() {
            return Err(format!("uuid \"{s}\" does not have 32 hexadecimal digits"));
        }
        let mut bytes = [0u8; 16];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                .map_err(|_| format!("uuid \"{s}\" has a non-hexadecimal digit"))?;
        }
        Ok(Uuid(bytes))
    }
}

/// The JSON form of a `Uuid` struct, as flatc writes it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UuidJson {
    bytes: [u8; 16],
}

impl Serialize for Uuid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        UuidJson { bytes: self.0 }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Uuid {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        UuidJson::deserialize(d).map(|u| Uuid(u.bytes))
    }
}

/// The alignment a tensor has unless it says otherwise (the schema default).
const DEFAULT_ALIGNMENT: i64 = 16;

fn default_alignment() -> i64 {
    DEFAULT_ALIGNMENT
}

fn default_multiplier() -> i64 {
    1
}

fn is_default_alignment(v: &i64) -> bool {
    *v == default_alignment()
}

fn is_default_multiplier(v: &i64) -> bool {
    *v == default_multiplier()
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// One tensor of a graph (`TensorAttributes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TensorJson", into = "TensorJson")]
pub struct TensorAttributes {
    /// Unique id within the graph; nodes refer to tensors by uid.
    pub uid: i64,
    /// Human-readable name (diagnostics only).
    pub name: String,
    /// Element type; `UNSET` takes the graph's io or intermediate default.
    pub data_type: DataType,
    /// Element strides, one per dimension.
    pub strides: Vec<i64>,
    /// Extents, one per dimension.
    pub dims: Vec<i64>,
    /// An intermediate that never gets a user buffer (`virtual` in the schema).
    pub is_virtual: bool,
    /// Pass-by-value scalar.
    pub value: Option<TensorValue>,
    /// The scalar is bound at execute time (engine API 1.2.0).
    pub is_runtime_pass_by_value: bool,
    /// Uid of the per-batch offsets of a ragged tensor (engine API 1.3.0).
    pub ragged_offset_tensor_uid: Option<i64>,
    /// Required byte alignment of the device pointer (default 16; others need API 1.3.0).
    pub alignment: i64,
    /// Stored ragged offsets times this give element offsets (default 1).
    pub ragged_offset_multiplier: i64,
}

fn is_unset(v: &DataType) -> bool {
    *v == DataType::Unset
}

/// `TensorAttributes` as flatc writes it in JSON (the value union split in two).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TensorJson {
    #[serde(default)]
    uid: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(default, skip_serializing_if = "is_unset")]
    data_type: DataType,
    #[serde(default)]
    strides: Vec<i64>,
    #[serde(default)]
    dims: Vec<i64>,
    #[serde(default, rename = "virtual", skip_serializing_if = "is_false")]
    is_virtual: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    is_runtime_pass_by_value: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ragged_offset_tensor_uid: Option<i64>,
    #[serde(
        default = "default_alignment",
        skip_serializing_if = "is_default_alignment"
    )]
    alignment: i64,
    #[serde(
        default = "default_multiplier",
        skip_serializing_if = "is_default_multiplier"
    )]
    ragged_offset_multiplier: i64,
}

impl From<TensorAttributes> for TensorJson {
    fn from(t: TensorAttributes) -> Self {
        let (value_type, value) = json::split(t.value.as_ref());
        Self {
            uid: t.uid,
            name: t.name,
            data_type: t.data_type,
            strides: t.strides,
            dims: t.dims,
            is_virtual: t.is_virtual,
            value_type,
            value,
            is_runtime_pass_by_value: t.is_runtime_pass_by_value,
            ragged_offset_tensor_uid: t.ragged_offset_tensor_uid,
            alignment: t.alignment,
            ragged_offset_multiplier: t.ragged_offset_multiplier,
        }
    }
}

impl TryFrom<TensorJson> for TensorAttributes {
    type Error = String;
    fn try_from(t: TensorJson) -> Result<Self, String> {
        let value = json::join("value", t.value_type, t.value)
            .map_err(|e| format!("tensor uid {}: {e}", t.uid))?;
        Ok(Self {
            uid: t.uid,
            name: t.name,
            data_type: t.data_type,
            strides: t.strides,
            dims: t.dims,
            is_virtual: t.is_virtual,
            value,
            is_runtime_pass_by_value: t.is_runtime_pass_by_value,
            ragged_offset_tensor_uid: t.ragged_offset_tensor_uid,
            alignment: t.alignment,
            ragged_offset_multiplier: t.ragged_offset_multiplier,
        })
    }
}

impl Default for TensorAttributes {
    fn default() -> Self {
        Self {
            uid: 0,
            name: String::new(),
            data_type: DataType::Unset,
            strides: Vec::new(),
            dims: Vec::new(),
            is_virtual: false,
            value: None,
            is_runtime_pass_by_value: false,
            ragged_offset_tensor_uid: None,
            alignment: default_alignment(),
            ragged_offset_multiplier: default_multiplier(),
        }
    }
}

impl TensorAttributes {
    /// Writes this table into `fbb` and returns its offset.
    ///
    /// Written by hand (not through the generated builder) because of the
    /// struct-union `value` slot; fields are pushed largest first, like flatc's builders.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::TensorAttributes<'b>> {
        type T<'x> = wire::TensorAttributes<'x>;
        let name = self.name.pack(fbb);
        let strides = self.strides.pack(fbb);
        let dims = self.dims.pack(fbb);
        let value = self.value.map(|v| v.push(fbb));
        let start = fbb.start_table();
        fbb.push_slot::<i64>(
            T::VT_RAGGED_OFFSET_MULTIPLIER,
            self.ragged_offset_multiplier,
            1,
        );
        fbb.push_slot::<i64>(T::VT_ALIGNMENT, self.alignment, 16);
        if let Some(uid) = self.ragged_offset_tensor_uid {
            fbb.push_slot_always::<i64>(T::VT_RAGGED_OFFSET_TENSOR_UID, uid);
        }
        fbb.push_slot::<i64>(T::VT_UID, self.uid, 0);
        if let Some((_, offset)) = value {
            fbb.push_slot_always(tensor_value::VT_VALUE, offset);
        }
        if let Some(dims) = dims {
            fbb.push_slot_always(T::VT_DIMS, dims);
        }
        if let Some(strides) = strides {
            fbb.push_slot_always(T::VT_STRIDES, strides);
        }
        if let Some(name) = name {
            fbb.push_slot_always(T::VT_NAME, name);
        }
        fbb.push_slot::<bool>(
            T::VT_IS_RUNTIME_PASS_BY_VALUE,
            self.is_runtime_pass_by_value,
            false,
        );
        if let Some((tag, _)) = value {
            fbb.push_slot::<wire::TensorValueType>(
                T::VT_VALUE_TYPE,
                tag,
                wire::TensorValueType::NONE,
            );
        }
        fbb.push_slot::<bool>(T::VT_VIRTUAL_, self.is_virtual, false);
        fbb.push_slot::<wire::DataType>(
            T::VT_DATA_TYPE,
            wire::DataType(self.data_type.to_wire()),
            wire::DataType::UNSET,
        );
        let end = fbb.end_table(start);
        WIPOffset::new(end.value())
    }

    /// Copies a verified table into an owned value.
    ///
    /// # Errors
    /// A data type unknown to this schema version.
    pub fn from_view(view: &wire::TensorAttributes<'_>) -> Result<Self, Error> {
        let located = |e: Error| e.within(&format!("tensor uid {}", view.uid()));
        Ok(Self {
            uid: view.uid(),
            name: view.name().unwrap_or_default().to_owned(),
            data_type: data_type_from_wire(view.data_type(), "data_type").map_err(located)?,
            strides: Vec::<i64>::unpack(view.strides(), "strides")?,
            dims: Vec::<i64>::unpack(view.dims(), "dims")?,
            is_virtual: view.virtual_(),
            value: TensorValue::read_checked(view).map_err(located)?,
            is_runtime_pass_by_value: view.is_runtime_pass_by_value(),
            ragged_offset_tensor_uid: view.ragged_offset_tensor_uid(),
            alignment: view.alignment(),
            ragged_offset_multiplier: view.ragged_offset_multiplier(),
        })
    }
}

/// One operation of a graph (`Node`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "NodeJson", into = "NodeJson")]
pub struct Node {
    /// Name used in diagnostics.
    pub name: String,
    /// Accumulation type; `UNSET` takes the graph's compute default.
    pub compute_data_type: DataType,
    /// What the node computes, and on which tensors.
    pub attributes: NodeAttributes,
}

/// `Node` as flatc writes it in JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeJson {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(default, skip_serializing_if = "is_unset")]
    compute_data_type: DataType,
    #[serde(default)]
    attributes_type: Option<String>,
    #[serde(default)]
    attributes: Option<serde_json::Value>,
}

impl From<Node> for NodeJson {
    fn from(n: Node) -> Self {
        let (attributes_type, attributes) = json::split(Some(&n.attributes));
        Self {
            name: n.name,
            compute_data_type: n.compute_data_type,
            attributes_type,
            attributes,
        }
    }
}

impl TryFrom<NodeJson> for Node {
    type Error = String;
    fn try_from(n: NodeJson) -> Result<Self, String> {
        let attributes = json::join("attributes", n.attributes_type, n.attributes)
            .and_then(|a| a.ok_or_else(|| "attributes are missing".to_owned()))
            .map_err(|e| format!("node \"{}\": {e}", n.name))?;
        Ok(Self {
            name: n.name,
            compute_data_type: n.compute_data_type,
            attributes,
        })
    }
}

impl Node {
    /// Makes a node with an unset compute type.
    pub fn new(name: impl Into<String>, attributes: impl Into<NodeAttributes>) -> Self {
        Self {
            name: name.into(),
            compute_data_type: DataType::Unset,
            attributes: attributes.into(),
        }
    }

    /// Writes this table into `fbb` and returns its offset.
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::Node<'b>> {
        let name = self.name.pack(fbb);
        let (attributes_type, attributes) = self.attributes.pack(fbb);
        let compute_data_type = self.compute_data_type.pack(fbb);
        wire::Node::create(
            fbb,
            &wire::NodeArgs {
                name,
                compute_data_type,
                attributes_type,
                attributes: Some(attributes),
            },
        )
    }

    /// Copies a verified node into an owned value.
    ///
    /// # Errors
    /// A node without attributes, an unknown attribute type or data type.
    pub fn from_view(view: &wire::Node<'_>) -> Result<Self, Error> {
        let name = view.name().unwrap_or_default();
        let located = |e: Error| e.within(&format!("node \"{name}\""));
        let tag = view.attributes_type();
        // Check the tag before touching the value slot: verifiers skip the slot of tags
        // they do not know.
        if tag == wire::NodeAttributes::NONE || tag.0 > wire::NodeAttributes::ENUM_MAX {
            return Err(located(Error::UnknownUnionTag {
                location: String::new(),
                union: "NodeAttributes",
                tag: tag.0,
            }));
        }
        let table = view.attributes().ok_or_else(|| {
            located(Error::MissingUnionValue {
                location: String::new(),
                union: "NodeAttributes",
                tag: tag.0,
            })
        })?;
        // SAFETY: `view` comes from a verified buffer (every public path to a
        // `wire::Node` goes through the verifier), which checked `table` against `tag`.
        let attributes = unsafe { NodeAttributesRef::new(tag, table) }.ok_or_else(|| {
            located(Error::UnknownUnionTag {
                location: String::new(),
                union: "NodeAttributes",
                tag: tag.0,
            })
        })?;
        Ok(Self {
            name: name.to_owned(),
            compute_data_type: data_type_from_wire(view.compute_data_type(), "compute_data_type")
                .map_err(located)?,
            attributes: attributes.to_owned().map_err(located)?,
        })
    }
}

/// An operation graph (`Graph`, the root of the graph wire format).
///
/// Build one, [`validate`](Graph::validate) it (sorts nodes, fills unset data types),
/// then [`to_bytes`](Graph::to_bytes) for plugins or `serde_json` for people.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// Graph name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Default accumulation type for nodes.
    #[serde(default, skip_serializing_if = "is_unset")]
    pub compute_data_type: DataType,
    /// Default type for virtual tensors.
    #[serde(default, skip_serializing_if = "is_unset")]
    pub intermediate_data_type: DataType,
    /// Default type for non-virtual tensors.
    #[serde(default, skip_serializing_if = "is_unset")]
    pub io_data_type: DataType,
    /// Every tensor the nodes refer to.
    #[serde(default)]
    pub tensors: Vec<TensorAttributes>,
    /// Operations, in topological order once validated.
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// Engine to try first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_engine_id: Option<i64>,
    /// Opt-in for execute-time shape overrides.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_override_shape_enabled: bool,
    /// Lowest engine plugin API version that can run the graph (absent: 1.0.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_required_engine_api_version: Option<EngineApiVersion>,
    /// Identity of a finalized graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
}

impl Graph {
    /// The lowest engine plugin API version that can run this graph: its
    /// `min_required_engine_api_version`, raised to the floor of every feature it uses
    /// (see [`EngineApiVersion`]'s constants).
    pub fn required_engine_api_version(&self) -> EngineApiVersion {
        EngineApiVersion::required(
            self.min_required_engine_api_version,
            self.is_override_shape_enabled,
            self.tensors.iter().map(|t| {
                (
                    t.is_runtime_pass_by_value,
                    t.ragged_offset_tensor_uid.is_some(),
                    t.alignment,
                )
            }),
        )
    }

    /// Writes this graph into `fbb` and returns its offset (call `fbb.finish` after).
    pub fn pack<'b, A: Allocator + 'b>(
        &self,
        fbb: &mut FlatBufferBuilder<'b, A>,
    ) -> WIPOffset<wire::Graph<'b>> {
        let name = self.name.pack(fbb);
        let tensors: Vec<_> = self.tensors.iter().map(|t| t.pack(fbb)).collect();
        let tensors = fbb.create_vector(&tensors);
        let nodes: Vec<_> = self.nodes.iter().map(|n| n.pack(fbb)).collect();
        let nodes = fbb.create_vector(&nodes);
        let version = self
            .min_required_engine_api_version
            .map(wire::EngineApiVersion::from);
        let id = self.id.map(|u| wire::Uuid::new(&u.0));
        let compute_data_type = self.compute_data_type.pack(fbb);
        let intermediate_data_type = self.intermediate_data_type.pack(fbb);
        let io_data_type = self.io_data_type.pack(fbb);
        wire::Graph::create(
            fbb,
            &wire::GraphArgs {
                name,
                compute_data_type,
                intermediate_data_type,
                io_data_type,
                tensors: Some(tensors),
                nodes: Some(nodes),
                preferred_engine_id: self.preferred_engine_id,
                is_override_shape_enabled: self.is_override_shape_enabled,
                min_required_engine_api_version: version.as_ref(),
                id: id.as_ref(),
            },
        )
    }

    /// Serializes the graph (no file identifier, as hipDNN writes it).
    pub fn to_bytes(&self) -> Vec<u8> {
        // FlatBuffers are written back to front: take the builder's buffer and drop the
        // unused front instead of copying the finished bytes into a new allocation.
        let estimate = 256 + 128 * (self.tensors.len() + self.nodes.len());
        let mut fbb = FlatBufferBuilder::with_capacity(estimate);
        let root = self.pack(&mut fbb);
        fbb.finish_minimal(root);
        let (mut bytes, head) = fbb.collapse();
        bytes.drain(..head);
        bytes
    }

    /// Copies a verified graph into an owned value.
    ///
    /// # Errors
    /// Unknown union tags or data types, nodes without attributes.
    pub fn from_view(view: &wire::Graph<'_>) -> Result<Self, Error> {
        let tensors = view
            .tensors()
            .map(|ts| {
                ts.iter()
                    .map(|t| TensorAttributes::from_view(&t))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let nodes = view
            .nodes()
            .map(|ns| {
                ns.iter()
                    .enumerate()
                    .map(|(i, n)| Node::from_view(&n).map_err(|e| e.within(&format!("node {i}"))))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        Ok(Self {
            name: view.name().unwrap_or_default().to_owned(),
            compute_data_type: data_type_from_wire(view.compute_data_type(), "compute_data_type")?,
            intermediate_data_type: data_type_from_wire(
                view.intermediate_data_type(),
                "intermediate_data_type",
            )?,
            io_data_type: data_type_from_wire(view.io_data_type(), "io_data_type")?,
            tensors,
            nodes,
            preferred_engine_id: view.preferred_engine_id(),
            is_override_shape_enabled: view.is_override_shape_enabled(),
            min_required_engine_api_version: view.min_required_engine_api_version().map(Into::into),
            id: view.id().map(|u| {
                let mut bytes = [0u8; 16];
                for (dst, src) in bytes.iter_mut().zip(u.bytes().iter()) {
                    *dst = src;
                }
                Uuid(bytes)
            }),
        })
    }

    /// The graph's JSON form (see `docs/graph-json.md`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a graph always serializes to JSON")
    }

    /// The graph in upstream hipDNN's JSON dialect, pretty-printed with a two-space
    /// indent and keys in sorted order, as upstream's `nlohmann::json(graph).dump(2)`
    /// writes it (see `docs/graph-json.md`, "Upstream's dialect").
    pub fn to_upstream_json(&self) -> String {
        serde_json::to_string_pretty(&upstream::graph_to_upstream(self))
            .expect("a JSON value always serializes")
    }

    /// The graph in `dialect`: [`Graph::to_json`] or [`Graph::to_upstream_json`].
    pub fn to_json_in(&self, dialect: JsonDialect) -> String {
        match dialect {
            JsonDialect::Flatc => self.to_json(),
            JsonDialect::Upstream => self.to_upstream_json(),
        }
    }

    /// Parses a graph's JSON in either dialect, telling them apart by content
    /// ([`JsonDialect::detect`]).
    ///
    /// # Errors
    /// Malformed JSON, and the errors of [`Graph::from_flatc_json`] or
    /// [`Graph::from_upstream_json`], whichever dialect the text is in.
    pub fn from_json(json: &str) -> Result<Self, Error> {
        Self::from_json_detected(json).map(|(graph, _)| graph)
    }

    /// [`Graph::from_json`], also saying which dialect the text was in.
    ///
    /// # Errors
    /// As [`Graph::from_json`].
    pub fn from_json_detected(json: &str) -> Result<(Self, JsonDialect), Error> {
        let value: serde_json::Value = serde_json::from_str(json)?;
        match JsonDialect::detect(&value) {
            // Parsed again from the text, so that errors say where they are.
            JsonDialect::Flatc => Self::from_flatc_json(json).map(|g| (g, JsonDialect::Flatc)),
            JsonDialect::Upstream => {
                Self::from_upstream_value(value).map(|g| (g, JsonDialect::Upstream))
            }
        }
    }

    /// Parses upstream hipDNN's JSON dialect.
    ///
    /// # Errors
    /// Malformed JSON; a missing key upstream requires, an unknown key, data type, enum
    /// name or node type, each named with the node or tensor it is in; a number too
    /// large for its type (as [`Graph::from_flatc_json`]).
    pub fn from_upstream_json(json: &str) -> Result<Self, Error> {
        Self::from_upstream_value(serde_json::from_str(json)?)
    }

    fn from_upstream_value(value: serde_json::Value) -> Result<Self, Error> {
        let graph = upstream::graph_from_upstream(value).map_err(upstream::error)?;
        graph.refuse_non_finite()
    }

    /// Parses this project's JSON form (flatc's), and only that.
    ///
    /// # Errors
    /// Malformed JSON, unknown fields, enum names or op types, and a number too large
    /// for its type: JSON numbers are finite, and one that overflows a `float` field
    /// (`1e300` for a `Float32Value`) is refused rather than read as infinity, which the
    /// JSON form could not write back.
    pub fn from_flatc_json(json: &str) -> Result<Self, Error> {
        let graph: Self = serde_json::from_str(json)?;
        graph.refuse_non_finite()
    }

    fn refuse_non_finite(self) -> Result<Self, Error> {
        let graph = self;
        if let Some(what) = graph.non_finite_value() {
            return Err(Error::Json(serde::de::Error::custom(format!(
                "{what} overflows to infinity; the JSON form holds finite values only"
            ))));
        }
        Ok(graph)
    }

    /// The first floating-point value of the graph that is not finite, named: a
    /// tensor's pass-by-value scalar or a float attribute of a node (pointwise clips and
    /// coefficients, attention's dropout and scale). Such values come only from binary
    /// graphs; the JSON form writes them as `null`.
    pub fn non_finite_value(&self) -> Option<String> {
        for t in &self.tensors {
            let finite = match t.value {
                Some(
                    TensorValue::Float32(v) | TensorValue::Float16(v) | TensorValue::BFloat16(v),
                ) => v.is_finite(),
                Some(TensorValue::Float64(v)) => v.is_finite(),
                _ => true,
            };
            if !finite {
                return Some(format!("tensor uid {} (\"{}\"): its value", t.uid, t.name));
            }
        }
        for node in &self.nodes {
            let fields: Vec<(&str, Option<f32>)> = match &node.attributes {
                NodeAttributes::PointwiseAttributes(a) => vec![
                    ("relu_lower_clip", a.relu_lower_clip),
                    ("relu_upper_clip", a.relu_upper_clip),
                    ("relu_lower_clip_slope", a.relu_lower_clip_slope),
                    ("swish_beta", a.swish_beta),
                    ("elu_alpha", a.elu_alpha),
                    ("softplus_beta", a.softplus_beta),
                ],
                NodeAttributes::SdpaAttributes(a) => vec![
                    ("dropout_probability", a.dropout_probability),
                    ("attn_scale_value", a.attn_scale_value),
                ],
                NodeAttributes::SdpaBackwardAttributes(a) => vec![
                    ("dropout_probability", a.dropout_probability),
                    ("attn_scale_value", a.attn_scale_value),
                ],
                _ => Vec::new(),
            };
            if let Some((field, _)) = fields
                .into_iter()
                .find(|(_, v)| v.is_some_and(|v| !v.is_finite()))
            {
                return Some(format!("node \"{}\": {field}", node.name));
            }
        }
        None
    }
}
