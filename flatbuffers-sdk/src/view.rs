//! Verified, zero-copy views of untrusted buffers.
//!
//! A view can only be made by `from_bytes*`, which runs the FlatBuffers verifier under
//! [`VerifyLimits`] and then the checks the verifier does not make: union type tags and
//! data types must be known to this schema version, and union tags must come with a
//! value. After that, accessors never fail and never copy.

use flatbuffers::{ForwardsUOffset, Vector, VerifierOptions};
use hipdnn_data_sdk::DataType;

use crate::error::Error;
use crate::model::{self, NodeAttributesRef};
use crate::tensor_value::{self, TensorValue};
use crate::wire;

/// Bounds the verifier enforces on untrusted buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyLimits {
    /// Deepest nesting of tables (a graph needs 3: graph, node, attributes).
    pub max_depth: usize,
    /// Most tables in one buffer.
    pub max_tables: usize,
    /// Largest buffer accepted, in bytes.
    pub max_bytes: usize,
}

impl VerifyLimits {
    /// Limits used by `from_bytes`: depth 16, 1 Mi tables, 256 MiB.
    pub const DEFAULT: Self = Self {
        max_depth: 16,
        max_tables: 1 << 20,
        max_bytes: 256 << 20,
    };

    fn options(&self) -> VerifierOptions {
        VerifierOptions {
            max_depth: self.max_depth,
            max_tables: self.max_tables,
            max_apparent_size: self.max_bytes.saturating_mul(2),
            ignore_missing_null_terminator: false,
        }
    }

    fn check_size(&self, root: &'static str, buf: &[u8]) -> Result<(), Error> {
        if buf.len() > self.max_bytes {
            return Err(Error::TooLarge {
                root,
                size: buf.len(),
                limit: self.max_bytes,
            });
        }
        Ok(())
    }
}

impl Default for VerifyLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn known_data_type(
    value: wire::DataType,
    location: impl FnOnce() -> String,
) -> Result<DataType, Error> {
    DataType::from_wire(value.0).ok_or_else(|| Error::UnknownEnumValue {
        location: location(),
        enum_name: "DataType",
        value: i64::from(value.0),
    })
}

/// A verified `Graph` buffer.
#[derive(Debug, Clone, Copy)]
pub struct GraphView<'a> {
    raw: wire::Graph<'a>,
    bytes: &'a [u8],
}

impl<'a> GraphView<'a> {
    /// Verifies `bytes` as a `Graph` under [`VerifyLimits::DEFAULT`].
    ///
    /// # Errors
    /// Whatever the verifier rejects, plus unknown node attribute types, tensor value
    /// types and data types.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::from_bytes_with_limits(bytes, &VerifyLimits::DEFAULT)
    }

    /// Verifies `bytes` as a `Graph` under `limits`.
    ///
    /// # Errors
    /// See [`GraphView::from_bytes`].
    pub fn from_bytes_with_limits(bytes: &'a [u8], limits: &VerifyLimits) -> Result<Self, Error> {
        const ROOT: &str = "Graph";
        limits.check_size(ROOT, bytes)?;
        let opts = limits.options();
        let raw = flatbuffers::root_with_opts::<wire::Graph<'_>>(&opts, bytes)
            .map_err(|source| Error::Invalid { root: ROOT, source })?;
        known_data_type(raw.compute_data_type(), || "graph compute_data_type".into())?;
        known_data_type(raw.intermediate_data_type(), || {
            "graph intermediate_data_type".into()
        })?;
        known_data_type(raw.io_data_type(), || "graph io_data_type".into())?;
        for (i, tensor) in raw.tensors().iter().flatten().enumerate() {
            let location = || format!("tensor {i} (uid {})", tensor.uid());
            let tag = tensor.value_type();
            // Most tensors carry no scalar: then neither slot is set and there is nothing
            // more to verify (a tag without a value, or the reverse, is caught below).
            if tag != wire::TensorValueType::NONE
                || tensor._tab.vtable().get(tensor_value::VT_VALUE) != 0
            {
                let mut verifier = flatbuffers::Verifier::new(&opts, bytes);
                tensor_value::verify(&mut verifier, tensor._tab.loc())
                    .map_err(|source| Error::Invalid { root: ROOT, source })?;
            }
            if tag.0 > wire::TensorValueType::ENUM_MAX {
                return Err(Error::UnknownUnionTag {
                    location: location(),
                    union: "TensorValue",
                    tag: tag.0,
                });
            }
            known_data_type(tensor.data_type(), location)?;
        }
        for (i, node) in raw.nodes().iter().flatten().enumerate() {
            let location = || format!("node {i} (\"{}\")", node.name().unwrap_or_default());
            let tag = node.attributes_type();
            // The verifier only checks the value slot for tags it knows: reject unknown
            // tags before touching the slot.
            if tag == wire::NodeAttributes::NONE || tag.0 > wire::NodeAttributes::ENUM_MAX {
                return Err(Error::UnknownUnionTag {
                    location: location(),
                    union: "NodeAttributes",
                    tag: tag.0,
                });
            }
            let Some(table) = node.attributes() else {
                return Err(Error::MissingUnionValue {
                    location: location(),
                    union: "NodeAttributes",
                    tag: tag.0,
                });
            };
            // SAFETY: `raw` was verified above; the verifier checked `table` as the
            // member named by `tag` (and skips tags it does not know, caught here).
            if unsafe { NodeAttributesRef::new(tag, table) }.is_none() {
                return Err(Error::UnknownUnionTag {
                    location: location(),
                    union: "NodeAttributes",
                    tag: tag.0,
                });
            }
            known_data_type(node.compute_data_type(), location)?;
        }
        Ok(Self { raw, bytes })
    }

    /// The generated table, for fields without a convenience accessor.
    pub fn raw(&self) -> wire::Graph<'a> {
        self.raw
    }

    /// The verified bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Graph name (empty when absent).
    pub fn name(&self) -> &'a str {
        self.raw.name().unwrap_or_default()
    }

    /// Default accumulation type.
    pub fn compute_data_type(&self) -> DataType {
        // Known: checked at construction.
        DataType::from_wire(self.raw.compute_data_type().0).unwrap_or_default()
    }

    /// Default type of virtual tensors.
    pub fn intermediate_data_type(&self) -> DataType {
        DataType::from_wire(self.raw.intermediate_data_type().0).unwrap_or_default()
    }

    /// Default type of non-virtual tensors.
    pub fn io_data_type(&self) -> DataType {
        DataType::from_wire(self.raw.io_data_type().0).unwrap_or_default()
    }

    /// Engine to try first, if the graph names one.
    pub fn preferred_engine_id(&self) -> Option<i64> {
        self.raw.preferred_engine_id()
    }

    /// The engine plugin API version the graph needs (1.0.0 when absent).
    pub fn min_required_engine_api_version(&self) -> model::EngineApiVersion {
        self.raw
            .min_required_engine_api_version()
            .map_or(model::EngineApiVersion::BASELINE, Into::into)
    }

    /// As [`model::Graph::required_engine_api_version`].
    pub fn required_engine_api_version(&self) -> model::EngineApiVersion {
        model::EngineApiVersion::required(
            self.raw.min_required_engine_api_version().map(Into::into),
            self.raw.is_override_shape_enabled(),
            self.tensors().map(|t| {
                let raw = t.raw();
                (
                    raw.is_runtime_pass_by_value(),
                    raw.ragged_offset_tensor_uid().is_some(),
                    raw.alignment(),
                )
            }),
        )
    }

    /// Number of tensors.
    pub fn tensor_count(&self) -> usize {
        self.raw.tensors().map_or(0, |t| t.len())
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.raw.nodes().map_or(0, |n| n.len())
    }

    /// The tensors, in buffer order.
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = TensorView<'a>> + 'a {
        let tensors: Option<Vector<'a, ForwardsUOffset<wire::TensorAttributes<'a>>>> =
            self.raw.tensors();
        let len = tensors.map_or(0, |t| t.len());
        (0..len).map(move |i| TensorView {
            raw: tensors.expect("non-empty").get(i),
        })
    }

    /// The nodes, in buffer order (topological in a valid graph).
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeView<'a>> + 'a {
        let nodes = self.raw.nodes();
        let len = nodes.map_or(0, |n| n.len());
        (0..len).map(move |index| NodeView {
            raw: nodes.expect("non-empty").get(index),
            index,
        })
    }

    /// The tensor with `uid` (a linear scan; see [`GraphView::validate`] for an index).
    pub fn tensor(&self, uid: i64) -> Option<TensorView<'a>> {
        self.tensors().find(|t| t.uid() == uid)
    }

    /// The graph's only node, when it has exactly one.
    pub fn single_node(&self) -> Option<NodeView<'a>> {
        let mut nodes = self.nodes();
        (nodes.len() == 1).then(|| nodes.next()).flatten()
    }

    /// The element type `tensor` has in this graph: its own, or when unset the graph's
    /// intermediate type (virtual tensors) or I/O type (the others).
    pub fn data_type_of(&self, tensor: &TensorView<'_>) -> DataType {
        match tensor.data_type() {
            DataType::Unset if tensor.is_virtual() => self.intermediate_data_type(),
            DataType::Unset => self.io_data_type(),
            own => own,
        }
    }

    /// Copies the graph into its owned form.
    ///
    /// # Errors
    /// None in practice for a view (everything was checked at construction); kept for
    /// data types inside attribute tables (e.g. SDPA's `mma_core_mode`).
    pub fn to_model(&self) -> Result<model::Graph, Error> {
        model::Graph::from_view(&self.raw)
    }
}

/// A node of a verified graph.
#[derive(Debug, Clone, Copy)]
pub struct NodeView<'a> {
    raw: wire::Node<'a>,
    index: usize,
}

impl<'a> NodeView<'a> {
    /// The generated table.
    pub fn raw(&self) -> wire::Node<'a> {
        self.raw
    }

    /// Position in the graph's node list.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Node name (empty when absent).
    pub fn name(&self) -> &'a str {
        self.raw.name().unwrap_or_default()
    }

    /// Accumulation type (`Unset` when the node leaves it to the graph).
    pub fn compute_data_type(&self) -> DataType {
        DataType::from_wire(self.raw.compute_data_type().0).unwrap_or_default()
    }

    /// The node's attribute table.
    pub fn attributes(&self) -> NodeAttributesRef<'a> {
        let table = self
            .raw
            .attributes()
            .expect("checked when the view was made");
        // SAFETY: the buffer was verified when the graph view was made, and the tag was
        // checked to be a known member with a value.
        unsafe { NodeAttributesRef::new(self.raw.attributes_type(), table) }
            .expect("checked when the view was made")
    }
}

/// A tensor of a verified graph.
#[derive(Debug, Clone, Copy)]
pub struct TensorView<'a> {
    raw: wire::TensorAttributes<'a>,
}

impl<'a> TensorView<'a> {
    /// The generated table (its `value` slot is read by [`TensorView::value`]).
    pub fn raw(&self) -> wire::TensorAttributes<'a> {
        self.raw
    }

    /// The tensor's uid.
    pub fn uid(&self) -> i64 {
        self.raw.uid()
    }

    /// Tensor name (empty when absent).
    pub fn name(&self) -> &'a str {
        self.raw.name().unwrap_or_default()
    }

    /// Element type as written (`Unset` means the graph default applies).
    pub fn data_type(&self) -> DataType {
        DataType::from_wire(self.raw.data_type().0).unwrap_or_default()
    }

    /// Extents.
    pub fn dims(&self) -> Vector<'a, i64> {
        self.raw.dims().unwrap_or_default()
    }

    /// Strides.
    pub fn strides(&self) -> Vector<'a, i64> {
        self.raw.strides().unwrap_or_default()
    }

    /// Whether the tensor is a virtual intermediate.
    pub fn is_virtual(&self) -> bool {
        self.raw.virtual_()
    }

    /// Number of elements (the product of the extents; 1 for a scalar).
    pub fn element_count(&self) -> u64 {
        self.dims().iter().map(|d| d.max(0) as u64).product()
    }

    /// Whether the elements are packed in dims order: the last extent has stride 1 and
    /// each stride is the product of the extents after it (NCHW-style, no gaps).
    pub fn is_packed(&self) -> bool {
        let (dims, strides) = (self.dims(), self.strides());
        let mut expected = 1i64;
        dims.len() == strides.len()
            && (0..dims.len()).rev().all(|i| {
                let ok = strides.get(i) == expected;
                expected = expected.saturating_mul(dims.get(i));
                ok
            })
    }

    /// The pass-by-value scalar, if any.
    pub fn value(&self) -> Option<TensorValue> {
        TensorValue::read(&self.raw)
    }

    /// Required byte alignment of the device pointer.
    pub fn alignment(&self) -> i64 {
        self.raw.alignment()
    }

    /// Copies the tensor into its owned form.
    ///
    /// # Errors
    /// None for a view (data types were checked at construction).
    pub fn to_model(&self) -> Result<model::TensorAttributes, Error> {
        model::TensorAttributes::from_view(&self.raw)
    }
}

/// A verified `EngineConfig` buffer.
#[derive(Debug, Clone, Copy)]
pub struct EngineConfigView<'a> {
    raw: wire::EngineConfig<'a>,
}

impl<'a> EngineConfigView<'a> {
    /// Verifies `bytes` as an `EngineConfig` under [`VerifyLimits::DEFAULT`].
    ///
    /// # Errors
    /// Whatever the verifier rejects, settings without a value or with an unknown type.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::from_bytes_with_limits(bytes, &VerifyLimits::DEFAULT)
    }

    /// Verifies `bytes` as an `EngineConfig` under `limits`.
    ///
    /// # Errors
    /// See [`EngineConfigView::from_bytes`].
    pub fn from_bytes_with_limits(bytes: &'a [u8], limits: &VerifyLimits) -> Result<Self, Error> {
        const ROOT: &str = "EngineConfig";
        limits.check_size(ROOT, bytes)?;
        let raw = flatbuffers::root_with_opts::<wire::EngineConfig<'_>>(&limits.options(), bytes)
            .map_err(|source| Error::Invalid { root: ROOT, source })?;
        for setting in raw.knobs().iter().flatten() {
            model::KnobSetting::from_view(&setting)?;
        }
        Ok(Self { raw })
    }

    /// The generated table.
    pub fn raw(&self) -> wire::EngineConfig<'a> {
        self.raw
    }

    /// The engine's id.
    pub fn engine_id(&self) -> i64 {
        self.raw.engine_id()
    }

    /// The knob settings, copied (settings are few and small).
    pub fn knob_settings(&self) -> Vec<model::KnobSetting> {
        self.to_model().knobs
    }

    /// Copies the config into its owned form.
    pub fn to_model(&self) -> model::EngineConfig {
        model::EngineConfig::from_view(&self.raw).expect("checked when the view was made")
    }
}

/// A verified `EngineDetails` buffer.
#[derive(Debug, Clone, Copy)]
pub struct EngineDetailsView<'a> {
    raw: wire::EngineDetails<'a>,
}

impl<'a> EngineDetailsView<'a> {
    /// Verifies `bytes` as `EngineDetails` under [`VerifyLimits::DEFAULT`].
    ///
    /// # Errors
    /// Whatever the verifier rejects (including a knob without a default), unknown
    /// knob value or constraint types.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::from_bytes_with_limits(bytes, &VerifyLimits::DEFAULT)
    }

    /// Verifies `bytes` as `EngineDetails` under `limits`.
    ///
    /// # Errors
    /// See [`EngineDetailsView::from_bytes`].
    pub fn from_bytes_with_limits(bytes: &'a [u8], limits: &VerifyLimits) -> Result<Self, Error> {
        const ROOT: &str = "EngineDetails";
        limits.check_size(ROOT, bytes)?;
        let raw = flatbuffers::root_with_opts::<wire::EngineDetails<'_>>(&limits.options(), bytes)
            .map_err(|source| Error::Invalid { root: ROOT, source })?;
        model::EngineDetails::from_view(&raw)?;
        Ok(Self { raw })
    }

    /// The generated table.
    pub fn raw(&self) -> wire::EngineDetails<'a> {
        self.raw
    }

    /// The engine's id.
    pub fn engine_id(&self) -> i64 {
        self.raw.engine_id()
    }

    /// Informational name (empty when absent).
    pub fn name(&self) -> &'a str {
        self.raw.name().unwrap_or_default()
    }

    /// The advertised knobs.
    pub fn knobs(&self) -> impl ExactSizeIterator<Item = KnobView<'a>> + 'a {
        let knobs = self.raw.knobs();
        let len = knobs.map_or(0, |k| k.len());
        (0..len).map(move |i| KnobView {
            raw: knobs.expect("non-empty").get(i),
        })
    }

    /// Behavior notes (`BehaviorNote` values).
    pub fn behavior_notes(&self) -> impl ExactSizeIterator<Item = i32> + 'a {
        self.raw.behavior_notes().unwrap_or_default().iter()
    }

    /// Copies the details into their owned form.
    pub fn to_model(&self) -> model::EngineDetails {
        model::EngineDetails::from_view(&self.raw).expect("checked when the view was made")
    }
}

/// A knob of verified engine details.
#[derive(Debug, Clone, Copy)]
pub struct KnobView<'a> {
    raw: wire::Knob<'a>,
}

impl<'a> KnobView<'a> {
    /// The generated table.
    pub fn raw(&self) -> wire::Knob<'a> {
        self.raw
    }

    /// The knob's id.
    pub fn knob_id(&self) -> &'a str {
        self.raw.knob_id().unwrap_or_default()
    }

    /// Description (empty when absent).
    pub fn description(&self) -> &'a str {
        self.raw.description().unwrap_or_default()
    }

    /// Whether the knob is deprecated.
    pub fn deprecated(&self) -> bool {
        self.raw.deprecated()
    }

    /// Copies the knob (default value, constraint) into its owned form.
    pub fn to_model(&self) -> model::Knob {
        model::Knob::from_view(&self.raw).expect("checked when the view was made")
    }
}

/// A verified `SerializedGraphAndPlan` container (file identifier `"HDGP"`).
#[derive(Debug, Clone, Copy)]
pub struct GraphAndPlanView<'a> {
    raw: wire::SerializedGraphAndPlan<'a>,
}

impl<'a> GraphAndPlanView<'a> {
    /// Verifies `bytes` as a `SerializedGraphAndPlan` under `limits`.
    ///
    /// # Errors
    /// A missing identifier or whatever the verifier rejects.
    pub fn from_bytes_with_limits(bytes: &'a [u8], limits: &VerifyLimits) -> Result<Self, Error> {
        const ROOT: &str = "SerializedGraphAndPlan";
        limits.check_size(ROOT, bytes)?;
        if !has_identifier(bytes, model::SerializedGraphAndPlan::IDENTIFIER) {
            return Err(Error::WrongIdentifier {
                root: ROOT,
                expected: model::SerializedGraphAndPlan::IDENTIFIER,
            });
        }
        let raw = flatbuffers::root_with_opts::<wire::SerializedGraphAndPlan<'_>>(
            &limits.options(),
            bytes,
        )
        .map_err(|source| Error::Invalid { root: ROOT, source })?;
        Ok(Self { raw })
    }

    /// The graph bytes (verify them with [`GraphView`]).
    pub fn graph_blob(&self) -> &'a [u8] {
        self.raw.graph_blob().map(|b| b.bytes()).unwrap_or_default()
    }

    /// The plan bytes (opaque here).
    pub fn plan_blob(&self) -> &'a [u8] {
        self.raw.plan_blob().map(|b| b.bytes()).unwrap_or_default()
    }
}

/// True when `bytes` is long enough to hold a root offset and carries `identifier`.
pub fn has_identifier(bytes: &[u8], identifier: &str) -> bool {
    bytes.len() >= 8 && flatbuffers::buffer_has_identifier(bytes, identifier, false)
}
