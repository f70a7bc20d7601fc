//! Operation descriptors: one node of a graph built from descriptors. Each refers to
//! finalized TENSOR descriptors and holds the node's parameters; finalizing checks that
//! everything the node needs is set and freezes the node, which an OPERATIONGRAPH then
//! shares (so the operation descriptor may be destroyed once the graph has it).
//!
//! Implemented, with hipDNN's attributes: the three convolutions (`FORWARD`,
//! `BACKWARD_DATA`, `BACKWARD_FILTER`, which share the `HIPDNN_ATTR_CONVOLUTION_*`
//! parameters), `POINTWISE`, the batch-norm family (`BATCHNORM_INFERENCE`, its
//! `_VARIANCE` variant, `BATCHNORM` forward training, `BATCHNORM_BACKWARD`), `MATMUL`,
//! `REDUCTION`, `LAYERNORM` and its `_BACKWARD`, `RMSNORM` and its `_BACKWARD`,
//! `RESAMPLE_FWD` (pooling), `SDPA_FWD` and `SDPA_BWD`, `BLOCK_SCALE_QUANTIZE` and
//! `_DEQUANTIZE`, `CUSTOM_OP`, and `MOE_GROUPED_MATMUL` and its `_BWD` (hipDNN's
//! attributes 3800-3804). All but the convolutions and pointwise are table-driven
//! ([`table`], [`layouts`]). Every operation also takes a name
//! (`HIPDNN_ATTR_OPERATION_NAME_EXT`) and reports its kind
//! (`HIPDNN_ATTR_OPERATION_TYPE_EXT`; `NOT_SUPPORTED` for the two norm backwards and the
//! grouped matmuls, which this header's `hipdnnOperationType_t` has no value for). A
//! missing required tensor or parameter is `BAD_PARAM` at finalize, naming the
//! attribute, as in hipDNN. Scalar parameters read back in the type they were set in
//! (or, where hipDNN takes two, either).
//!
//! A TENSOR attribute reads back as hipDNN's does: the caller passes a pointer to a
//! `hipdnnBackendDescriptor_t` (an array of them for the TENSOR-array attributes: batch
//! norm's peer statistics, the custom op's inputs and outputs), and the backend writes a
//! new, finalized TENSOR descriptor there, which the caller owns and frees with
//! `hipdnnBackendDestroyDescriptor`. It describes the very tensor that was set (same uid,
//! name, dimensions, strides, type, value), can be set on another operation (a graph
//! takes it for the descriptor it was read from) and is independent of the operation:
//! destroying either leaves the other intact. The count is 1 for a set tensor, 0 for an
//! optional one that is not set (nothing is written then), the number of tensors for an
//! array (of which the first `requested` are handed out). A null array or a requested
//! count of 0 asks for the count only. Like every read, it needs a finalized operation
//! (`NOT_INITIALIZED` before).
//!
//! A graph made from bytes hands out, for `HIPDNN_ATTR_OPERATIONGRAPH_OPS`, the operation
//! descriptor each node stands for ([`OperationDescriptor::from_node`]: every part as if
//! set, the table-driven ones through [`layouts::unbuild`], each layout's `build` read
//! backwards), as hipDNN's backend makes one per node when it deserializes a graph.
//!
//! Not implemented: resample backward, whose descriptor type this header does not
//! declare yet (its attributes, `HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_*`, are declared).

use std::sync::Arc;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    ConvGeometryRef, ConvolutionBwdAttributes, ConvolutionFwdAttributes, ConvolutionWrwAttributes,
    Node, NodeAttributes, PointwiseAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};

use super::attributes::{GetTarget, SetValue};
use super::tensor::{
    FrozenTensor, TensorDescriptor, get_data_type, get_text, put_i64s, set_data_type, set_i64,
    set_i64s, set_text,
};
use super::{Kind, unsupported_attribute, wrong_kind};
use crate::capi::enums::tables::*;
use crate::status::*;

mod layouts;
mod table;

use table::{Layout, TensorOperation};

/// A frozen node and the tensors it uses, in the order the graph lists them (hipDNN's:
/// each operation's tensors in its attribute order, first use first).
#[derive(Debug)]
pub(super) struct FrozenOperation {
    pub(super) node: Node,
    pub(super) tensors: Vec<Arc<FrozenTensor>>,
}

/// An operation descriptor. A clone is the same operation (its frozen node shared),
/// which is what a graph keeps and hands back for `HIPDNN_ATTR_OPERATIONGRAPH_OPS`.
#[derive(Debug, Clone)]
pub(super) struct OperationDescriptor {
    name: String,
    op: Operation,
    frozen: Option<Arc<FrozenOperation>>,
}

#[derive(Debug, Clone)]
enum Operation {
    Convolution(Convolution),
    Pointwise(Pointwise),
    Tensors(TensorOperation),
}

/// Which convolution: the three share their parameters and differ in their tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    BackwardData,
    BackwardFilter,
}

impl Direction {
    /// The three tensor attributes, in the node's order (hipDNN's: forward X, W, Y;
    /// data DY, W, DX; filter X, DY, DW), with their names.
    fn slots(self) -> [(hipdnnBackendAttributeName_t, &'static str); 3] {
        match self {
            Direction::Forward => [
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y",
                ),
            ],
            Direction::BackwardData => [
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX",
                ),
            ],
            Direction::BackwardFilter => [
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY",
                ),
                (
                    HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                    "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW",
                ),
            ],
        }
    }
}

#[derive(Debug, Clone)]
struct Convolution {
    direction: Direction,
    tensors: [Option<Arc<FrozenTensor>>; 3],
    pre_padding: Vec<i64>,
    post_padding: Vec<i64>,
    stride: Vec<i64>,
    dilation: Vec<i64>,
    mode: ConvMode,
    compute: DataType,
}

impl Convolution {
    fn new(direction: Direction) -> Self {
        Self {
            direction,
            tensors: Default::default(),
            pre_padding: Vec::new(),
            post_padding: Vec::new(),
            stride: Vec::new(),
            dilation: Vec::new(),
            mode: ConvMode::UNSET,
            compute: DataType::Unset,
        }
    }

    /// The index of tensor attribute `name` among this convolution's three.
    fn slot(&self, name: hipdnnBackendAttributeName_t) -> Option<usize> {
        self.direction.slots().iter().position(|(a, _)| *a == name)
    }
}

#[derive(Debug, Default, Clone)]
struct Pointwise {
    in_0: Option<Arc<FrozenTensor>>,
    in_1: Option<Arc<FrozenTensor>>,
    in_2: Option<Arc<FrozenTensor>>,
    out_0: Option<Arc<FrozenTensor>>,
    /// The mode and scalar parameters (the uids are filled at finalize).
    params: PointwiseAttributes,
    compute: DataType,
}

/// A TENSOR attribute: the frozen tensor of a finalized TENSOR descriptor.
fn set_tensor(value: &SetValue) -> BackendResult<Arc<FrozenTensor>> {
    let d = value.descriptor()?;
    match &d.kind {
        Kind::Tensor(t) => Ok(Arc::clone(
            t.frozen().expect("a finalized TENSOR descriptor is frozen"),
        )),
        other => Err(wrong_kind(value.name, "TENSOR", other)),
    }
}

/// Reads a TENSOR attribute back: a new TENSOR descriptor of `tensor` for the caller, or
/// a count of 0 when it is not set (which needs somewhere to go).
fn get_tensor(target: &GetTarget, tensor: Option<&Arc<FrozenTensor>>) -> BackendResult<()> {
    match tensor {
        Some(t) => {
            target.put_new_descriptors(1, false, |_| Kind::Tensor(TensorDescriptor::from_frozen(t)))
        }
        None => {
            target.expect_type(HIPDNN_TYPE_BACKEND_DESCRIPTOR)?;
            target.write_count(0)
        }
    }
}

/// Reads a TENSOR-array attribute back: a new TENSOR descriptor for each of the first
/// `requested` of `tensors`; the count is all of them.
fn get_tensors(target: &GetTarget, tensors: &[Arc<FrozenTensor>]) -> BackendResult<()> {
    target.put_new_descriptors(tensors.len(), false, |i| {
        Kind::Tensor(TensorDescriptor::from_frozen(&tensors[i]))
    })
}

/// One `HIPDNN_TYPE_FLOAT`.
fn set_f32(value: &SetValue) -> BackendResult<f32> {
    value.expect_type(HIPDNN_TYPE_FLOAT)?;
    // SAFETY: the type is checked: one `float`.
    unsafe { value.one::<f32>() }
}

fn put_f32(target: &GetTarget, value: Option<f32>) -> BackendResult<()> {
    target.expect_type(HIPDNN_TYPE_FLOAT)?;
    let values: Vec<f32> = value.into_iter().collect();
    // SAFETY: the type is checked: `float`s.
    unsafe { target.put(&values) }
}

/// The convolution mode: a `hipdnnConvolutionMode_t` (`HIPDNN_TYPE_CONVOLUTION_MODE`,
/// hipDNN's current frontend) or the wire value as an `INT64` (its earlier frontend).
fn set_conv_mode(value: &SetValue) -> BackendResult<ConvMode> {
    let mode = if value.ty() == HIPDNN_TYPE_INT64 {
        // SAFETY: the type is checked: one `int64_t`.
        match unsafe { value.one::<i64>() }? {
            1 => Some(ConvMode::CONVOLUTION),
            2 => Some(ConvMode::CROSS_CORRELATION),
            _ => None,
        }
    } else {
        value.expect_type(HIPDNN_TYPE_CONVOLUTION_MODE)?;
        // SAFETY: the type is checked: one `hipdnnConvolutionMode_t` (an int).
        match unsafe { value.one::<hipdnnConvolutionMode_t>() }? {
            HIPDNN_CONVOLUTION => Some(ConvMode::CONVOLUTION),
            HIPDNN_CROSS_CORRELATION => Some(ConvMode::CROSS_CORRELATION),
            _ => None,
        }
    };
    mode.ok_or_else(|| {
        BackendError::bad_param(format!(
            "attribute {}: not a convolution mode (HIPDNN_CONVOLUTION or \
             HIPDNN_CROSS_CORRELATION)",
            value.name
        ))
    })
}

fn missing(what: &str, attribute: &str) -> BackendError {
    BackendError::bad_param(format!("{what}: {attribute} is not set"))
}

impl OperationDescriptor {
    /// An empty operation descriptor of `descriptor_type`, if it is one this backend
    /// implements.
    pub(super) fn new(descriptor_type: hipdnnBackendDescriptorType_t) -> Option<Self> {
        let op = match descriptor_type {
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR => {
                Operation::Convolution(Convolution::new(Direction::Forward))
            }
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR => {
                Operation::Convolution(Convolution::new(Direction::BackwardData))
            }
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR => {
                Operation::Convolution(Convolution::new(Direction::BackwardFilter))
            }
            HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR => {
                Operation::Pointwise(Pointwise::default())
            }
            other => Operation::Tensors(TensorOperation::new(Layout::of(other)?)),
        };
        Some(Self {
            name: String::new(),
            op,
            frozen: None,
        })
    }

    /// The operation descriptor a node of a graph made from bytes stands for, finalized,
    /// as hipDNN's backend makes one for each node of a deserialized graph: every part
    /// as if set (the tensors found by uid with `tensor`), checked as finalize checks a
    /// descriptor, and frozen with the node as it came (fields no attribute sets
    /// included), so a graph of these descriptors has the node's bytes.
    ///
    /// # Errors
    /// `NOT_SUPPORTED` for a kind no operation descriptor stands for here; what
    /// finalize refuses.
    pub(super) fn from_node(
        node: &Node,
        tensor: &dyn Fn(i64) -> BackendResult<Arc<FrozenTensor>>,
    ) -> BackendResult<Self> {
        let compute = node.compute_data_type;
        let convolution = |direction, uids: [i64; 3], geometry: ConvGeometryRef<'_>| {
            let mut c = Convolution::new(direction);
            for (slot, uid) in c.tensors.iter_mut().zip(uids) {
                *slot = Some(tensor(uid)?);
            }
            c.pre_padding = geometry.pre_padding.to_vec();
            c.post_padding = geometry.post_padding.to_vec();
            c.stride = geometry.stride.to_vec();
            c.dilation = geometry.dilation.to_vec();
            c.mode = geometry.conv_mode;
            c.compute = compute;
            Ok::<_, BackendError>(Operation::Convolution(c))
        };
        let op = match &node.attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => convolution(
                Direction::Forward,
                [a.x_tensor_uid, a.w_tensor_uid, a.y_tensor_uid],
                a.geometry(),
            )?,
            NodeAttributes::ConvolutionBwdAttributes(a) => convolution(
                Direction::BackwardData,
                [a.dy_tensor_uid, a.w_tensor_uid, a.dx_tensor_uid],
                a.geometry(),
            )?,
            NodeAttributes::ConvolutionWrwAttributes(a) => convolution(
                Direction::BackwardFilter,
                [a.x_tensor_uid, a.dy_tensor_uid, a.dw_tensor_uid],
                a.geometry(),
            )?,
            NodeAttributes::PointwiseAttributes(a) => Operation::Pointwise(Pointwise {
                in_0: Some(tensor(a.in_0_tensor_uid)?),
                in_1: a.in_1_tensor_uid.map(tensor).transpose()?,
                in_2: a.in_2_tensor_uid.map(tensor).transpose()?,
                out_0: Some(tensor(a.out_0_tensor_uid)?),
                params: a.clone(),
                compute,
            }),
            other => match layouts::unbuild(other) {
                Some((layout, unbuilt)) => Operation::Tensors(TensorOperation::from_unbuilt(
                    layout, unbuilt, compute, tensor,
                )?),
                None => {
                    return Err(BackendError::not_supported(format!(
                        "a {} node has no operation descriptor here",
                        other.type_name()
                    )));
                }
            },
        };
        let mut descriptor = Self {
            name: node.name.clone(),
            op,
            frozen: None,
        };
        descriptor.finalize()?;
        let tensors = descriptor
            .frozen
            .take()
            .map(|f| f.tensors.clone())
            .unwrap_or_default();
        descriptor.frozen = Some(Arc::new(FrozenOperation {
            node: node.clone(),
            tensors,
        }));
        Ok(descriptor)
    }

    pub(super) fn type_name(&self) -> &'static str {
        match &self.op {
            Operation::Convolution(Convolution {
                direction: Direction::Forward,
                ..
            }) => "OPERATION_CONVOLUTION_FORWARD",
            Operation::Convolution(Convolution {
                direction: Direction::BackwardData,
                ..
            }) => "OPERATION_CONVOLUTION_BACKWARD_DATA",
            Operation::Convolution(Convolution {
                direction: Direction::BackwardFilter,
                ..
            }) => "OPERATION_CONVOLUTION_BACKWARD_FILTER",
            Operation::Pointwise(_) => "OPERATION_POINTWISE",
            Operation::Tensors(t) => t.layout.type_name,
        }
    }

    /// The frozen node (finalized descriptors only).
    pub(super) fn frozen(&self) -> Option<&Arc<FrozenOperation>> {
        self.frozen.as_ref()
    }

    pub(super) fn set(&mut self, value: SetValue) -> BackendResult<()> {
        if value.name == HIPDNN_ATTR_OPERATION_NAME_EXT {
            self.name = set_text(&value)?;
            return Ok(());
        }
        let type_name = self.type_name();
        match &mut self.op {
            Operation::Tensors(t) => t.set(&value)?,
            Operation::Convolution(c) => match (c.slot(value.name), value.name) {
                (Some(i), _) => c.tensors[i] = Some(set_tensor(&value)?),
                (None, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS) => c.pre_padding = set_i64s(&value)?,
                (None, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS) => c.post_padding = set_i64s(&value)?,
                (None, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES) => c.stride = set_i64s(&value)?,
                (None, HIPDNN_ATTR_CONVOLUTION_DILATIONS) => c.dilation = set_i64s(&value)?,
                (None, HIPDNN_ATTR_CONVOLUTION_CONV_MODE) => c.mode = set_conv_mode(&value)?,
                (None, HIPDNN_ATTR_CONVOLUTION_COMP_TYPE) => c.compute = set_data_type(&value)?,
                (None, other) => return Err(unsupported_attribute(type_name, other)),
            },
            Operation::Pointwise(p) => match value.name {
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT => p.in_0 = Some(set_tensor(&value)?),
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT => p.in_1 = Some(set_tensor(&value)?),
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_2_EXT => p.in_2 = Some(set_tensor(&value)?),
                HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT => {
                    p.out_0 = Some(set_tensor(&value)?);
                }
                HIPDNN_ATTR_POINTWISE_MODE => {
                    value.expect_type(HIPDNN_TYPE_POINTWISE_MODE)?;
                    // SAFETY: the type is checked: one `hipdnnPointwiseMode_t` (an int).
                    let mode = unsafe { value.one::<hipdnnPointwiseMode_t>() }?;
                    // The C API's numbers are the wire format's.
                    let wire = i8::try_from(mode)
                        .ok()
                        .filter(|m| (1..=PointwiseMode::ENUM_MAX).contains(m))
                        .ok_or_else(|| {
                            BackendError::bad_param(format!(
                                "attribute {}: {mode} is not a hipdnnPointwiseMode_t",
                                value.name
                            ))
                        })?;
                    p.params.operation = PointwiseMode(wire);
                }
                HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP => {
                    p.params.relu_lower_clip = Some(set_f32(&value)?);
                }
                HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP => {
                    p.params.relu_upper_clip = Some(set_f32(&value)?);
                }
                HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE => {
                    p.params.relu_lower_clip_slope = Some(set_f32(&value)?);
                }
                HIPDNN_ATTR_POINTWISE_SWISH_BETA => p.params.swish_beta = Some(set_f32(&value)?),
                HIPDNN_ATTR_POINTWISE_ELU_ALPHA => p.params.elu_alpha = Some(set_f32(&value)?),
                HIPDNN_ATTR_POINTWISE_SOFTPLUS_BETA => {
                    p.params.softplus_beta = Some(set_f32(&value)?);
                }
                HIPDNN_ATTR_POINTWISE_AXIS => p.params.axis_tensor_uid = Some(set_i64(&value)?),
                HIPDNN_ATTR_POINTWISE_MATH_PREC => p.compute = set_data_type(&value)?,
                other => return Err(unsupported_attribute(type_name, other)),
            },
        }
        Ok(())
    }

    pub(super) fn finalize(&mut self) -> BackendResult<()> {
        let what = self.type_name();
        let frozen = match &self.op {
            Operation::Tensors(t) => {
                let (attributes, tensors) = t.finalize()?;
                FrozenOperation {
                    node: self.node(t.compute, attributes),
                    tensors,
                }
            }
            Operation::Convolution(c) => {
                let mut tensors = Vec::with_capacity(3);
                for (tensor, (_, attribute)) in c.tensors.iter().zip(c.direction.slots()) {
                    let tensor = tensor.clone().ok_or_else(|| missing(what, attribute))?;
                    tensors.push(tensor);
                }
                for (values, attribute) in [
                    (&c.pre_padding, "HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS"),
                    (&c.post_padding, "HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS"),
                    (&c.stride, "HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES"),
                    (&c.dilation, "HIPDNN_ATTR_CONVOLUTION_DILATIONS"),
                ] {
                    if values.is_empty() {
                        return Err(missing(what, attribute));
                    }
                }
                if c.compute == DataType::Unset {
                    return Err(missing(what, "HIPDNN_ATTR_CONVOLUTION_COMP_TYPE"));
                }
                if c.mode == ConvMode::UNSET {
                    return Err(missing(what, "HIPDNN_ATTR_CONVOLUTION_CONV_MODE"));
                }
                let [a, b, out] = [0, 1, 2].map(|i| tensors[i].uid);
                let (pre_padding, post_padding) = (c.pre_padding.clone(), c.post_padding.clone());
                let (stride, dilation, conv_mode) = (c.stride.clone(), c.dilation.clone(), c.mode);
                let attributes: NodeAttributes = match c.direction {
                    Direction::Forward => ConvolutionFwdAttributes {
                        x_tensor_uid: a,
                        w_tensor_uid: b,
                        y_tensor_uid: out,
                        pre_padding,
                        post_padding,
                        stride,
                        dilation,
                        conv_mode,
                        ..ConvolutionFwdAttributes::default()
                    }
                    .into(),
                    Direction::BackwardData => ConvolutionBwdAttributes {
                        dy_tensor_uid: a,
                        w_tensor_uid: b,
                        dx_tensor_uid: out,
                        pre_padding,
                        post_padding,
                        stride,
                        dilation,
                        conv_mode,
                        ..ConvolutionBwdAttributes::default()
                    }
                    .into(),
                    Direction::BackwardFilter => ConvolutionWrwAttributes {
                        x_tensor_uid: a,
                        dy_tensor_uid: b,
                        dw_tensor_uid: out,
                        pre_padding,
                        post_padding,
                        stride,
                        dilation,
                        conv_mode,
                        ..ConvolutionWrwAttributes::default()
                    }
                    .into(),
                };
                FrozenOperation {
                    node: self.node(c.compute, attributes),
                    tensors,
                }
            }
            Operation::Pointwise(p) => {
                let in_0 = p.in_0.clone().ok_or_else(|| {
                    missing(
                        what,
                        "the IN_0 tensor (HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT)",
                    )
                })?;
                let out_0 = p.out_0.clone().ok_or_else(|| {
                    missing(
                        what,
                        "the OUT_0 tensor (HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT)",
                    )
                })?;
                if p.compute == DataType::Unset {
                    return Err(missing(what, "HIPDNN_ATTR_POINTWISE_MATH_PREC"));
                }
                if p.params.operation == PointwiseMode::UNSET {
                    return Err(missing(what, "HIPDNN_ATTR_POINTWISE_MODE"));
                }
                let attributes = PointwiseAttributes {
                    in_0_tensor_uid: in_0.uid,
                    out_0_tensor_uid: out_0.uid,
                    in_1_tensor_uid: p.in_1.as_ref().map(|t| t.uid),
                    in_2_tensor_uid: p.in_2.as_ref().map(|t| t.uid),
                    ..p.params.clone()
                };
                let mut tensors = vec![in_0, out_0];
                tensors.extend(p.in_1.iter().chain(&p.in_2).cloned());
                FrozenOperation {
                    node: self.node(p.compute, attributes.into()),
                    tensors,
                }
            }
        };
        self.frozen = Some(Arc::new(frozen));
        Ok(())
    }

    fn node(&self, compute: DataType, attributes: NodeAttributes) -> Node {
        Node {
            name: self.name.clone(),
            compute_data_type: compute,
            attributes,
        }
    }

    pub(super) fn get(&self, target: GetTarget) -> BackendResult<()> {
        let type_name = self.type_name();
        match target.name {
            HIPDNN_ATTR_OPERATION_NAME_EXT => return get_text(&target, &self.name),
            HIPDNN_ATTR_OPERATION_TYPE_EXT => {
                target.expect_type(HIPDNN_TYPE_OPERATION_TYPE_EXT)?;
                let kind = match &self.op {
                    Operation::Convolution(c) => match c.direction {
                        Direction::Forward => HIPDNN_OPERATION_TYPE_CONVOLUTION_FORWARD,
                        Direction::BackwardData => HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_DATA,
                        Direction::BackwardFilter => {
                            HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_WEIGHTS
                        }
                    },
                    Operation::Pointwise(_) => HIPDNN_OPERATION_TYPE_POINTWISE,
                    Operation::Tensors(t) => t.layout.operation_type.ok_or_else(|| {
                        BackendError::not_supported(format!(
                            "attribute {}: hipdnnOperationType_t has no value for {type_name} \
                             (hipDNN's newer header adds one)",
                            target.name
                        ))
                    })?,
                };
                // SAFETY: the type is checked: `hipdnnOperationType_t`s (ints).
                return unsafe { target.put(&[kind]) };
            }
            _ => {}
        }
        match &self.op {
            Operation::Tensors(t) => t.get(&target),
            Operation::Convolution(c) => match (c.slot(target.name), target.name) {
                (Some(i), _) => get_tensor(&target, c.tensors[i].as_ref()),
                (None, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS) => put_i64s(&target, &c.pre_padding),
                (None, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS) => put_i64s(&target, &c.post_padding),
                (None, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES) => put_i64s(&target, &c.stride),
                (None, HIPDNN_ATTR_CONVOLUTION_DILATIONS) => put_i64s(&target, &c.dilation),
                (None, HIPDNN_ATTR_CONVOLUTION_COMP_TYPE) => get_data_type(&target, c.compute),
                (None, HIPDNN_ATTR_CONVOLUTION_CONV_MODE) if target.ty() == HIPDNN_TYPE_INT64 => {
                    put_i64s(&target, &[i64::from(c.mode.0)])
                }
                (None, HIPDNN_ATTR_CONVOLUTION_CONV_MODE) => {
                    target.expect_type(HIPDNN_TYPE_CONVOLUTION_MODE)?;
                    let mode = if c.mode == ConvMode::CONVOLUTION {
                        HIPDNN_CONVOLUTION
                    } else {
                        HIPDNN_CROSS_CORRELATION
                    };
                    // SAFETY: the type is checked: `hipdnnConvolutionMode_t`s (ints).
                    unsafe { target.put(&[mode]) }
                }
                (None, other) => Err(unsupported_attribute(type_name, other)),
            },
            Operation::Pointwise(p) => match target.name {
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT => get_tensor(&target, p.in_0.as_ref()),
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT => get_tensor(&target, p.in_1.as_ref()),
                HIPDNN_ATTR_OPERATION_POINTWISE_IN_2_EXT => get_tensor(&target, p.in_2.as_ref()),
                HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT => get_tensor(&target, p.out_0.as_ref()),
                HIPDNN_ATTR_POINTWISE_MODE => {
                    target.expect_type(HIPDNN_TYPE_POINTWISE_MODE)?;
                    let mode: hipdnnPointwiseMode_t = p.params.operation.0.into();
                    // SAFETY: the type is checked: `hipdnnPointwiseMode_t`s (ints).
                    unsafe { target.put(&[mode]) }
                }
                HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP => put_f32(&target, p.params.relu_lower_clip),
                HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP => put_f32(&target, p.params.relu_upper_clip),
                HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE => {
                    put_f32(&target, p.params.relu_lower_clip_slope)
                }
                HIPDNN_ATTR_POINTWISE_SWISH_BETA => put_f32(&target, p.params.swish_beta),
                HIPDNN_ATTR_POINTWISE_ELU_ALPHA => put_f32(&target, p.params.elu_alpha),
                HIPDNN_ATTR_POINTWISE_SOFTPLUS_BETA => put_f32(&target, p.params.softplus_beta),
                HIPDNN_ATTR_POINTWISE_AXIS => {
                    let axis: Vec<i64> = p.params.axis_tensor_uid.into_iter().collect();
                    put_i64s(&target, &axis)
                }
                HIPDNN_ATTR_POINTWISE_MATH_PREC => get_data_type(&target, p.compute),
                other => Err(unsupported_attribute(type_name, other)),
            },
        }
    }
}
