//! Operation descriptors: one node of a graph built from descriptors. Each refers to
//! finalized TENSOR descriptors and holds the node's parameters; finalizing checks that
//! everything the node needs is set and freezes the node, which an OPERATIONGRAPH then
//! shares (so the operation descriptor may be destroyed once the graph has it).
//!
//! Implemented, with hipDNN's attributes: the three convolutions (`FORWARD`,
//! `BACKWARD_DATA`, `BACKWARD_FILTER`, which share the `HIPDNN_ATTR_CONVOLUTION_*`
//! parameters), `POINTWISE`, the batch-norm family (`BATCHNORM_INFERENCE`, its
//! `_VARIANCE` variant, `BATCHNORM` forward training, `BATCHNORM_BACKWARD`) and
//! `MATMUL`. Every operation also takes a name (`HIPDNN_ATTR_OPERATION_NAME_EXT`) and
//! reports its kind (`HIPDNN_ATTR_OPERATION_TYPE_EXT`). A missing required tensor or
//! parameter is `BAD_PARAM` at finalize, as in hipDNN. Reading back a tensor attribute
//! of an operation is not supported yet (it would hand out a new descriptor).

use std::sync::Arc;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, ConvolutionBwdAttributes, ConvolutionFwdAttributes,
    ConvolutionWrwAttributes, MatmulAttributes, Node, NodeAttributes, PointwiseAttributes,
    TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};

use super::attributes::{GetTarget, SetValue};
use super::tensor::{
    get_data_type, get_text, put_i64s, set_data_type, set_i64, set_i64s, set_text,
};
use super::{Kind, unsupported_attribute, wrong_kind};
use crate::capi::enums::tables::*;
use crate::status::*;

/// A frozen node and the tensors it uses, in the order the graph lists them (hipDNN's:
/// each operation's tensors in its attribute order, first use first).
#[derive(Debug)]
pub(super) struct FrozenOperation {
    pub(super) node: Node,
    pub(super) tensors: Vec<Arc<TensorAttributes>>,
}

/// An operation descriptor.
#[derive(Debug)]
pub(super) struct OperationDescriptor {
    name: String,
    op: Operation,
    frozen: Option<Arc<FrozenOperation>>,
}

#[derive(Debug)]
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

#[derive(Debug)]
struct Convolution {
    direction: Direction,
    tensors: [Option<Arc<TensorAttributes>>; 3],
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

/// One tensor attribute of an operation made of tensors and a compute type.
#[derive(Debug)]
struct Slot {
    attribute: hipdnnBackendAttributeName_t,
    name: &'static str,
    required: bool,
}

macro_rules! slots {
    ($($required:ident $name:ident),* $(,)?) => {
        &[$(Slot { attribute: $name, name: stringify!($name), required: slots!(@ $required) }),*]
    };
    (@ required) => { true };
    (@ optional) => { false };
}

/// What an operation made of tensors and a compute type takes and builds: the batch
/// norms and matmul.
#[derive(Debug)]
struct Layout {
    type_name: &'static str,
    operation_type: hipdnnOperationType_t,
    /// The tensor attributes, in the order hipDNN lists the node's tensors in a graph.
    slots: &'static [Slot],
    /// The compute-type attribute (required) and its name.
    compute: (hipdnnBackendAttributeName_t, &'static str),
    /// The peer-statistics attribute (an array of TENSORs), if the operation has one.
    peer_stats: Option<hipdnnBackendAttributeName_t>,
    /// Groups of slots (indices) that are set all together or not at all.
    together: &'static [&'static [usize]],
    /// The node's attributes from the slots' uids (required ones are set) and the
    /// peer-statistics uids.
    build: fn(&[Option<i64>], Vec<i64>) -> NodeAttributes,
}

/// A required slot's uid (checked set at finalize).
fn uid(uids: &[Option<i64>], i: usize) -> i64 {
    uids[i].unwrap_or_default()
}

static BATCHNORM_INFERENCE: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_INFERENCE_EXT",
    operation_type: HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT,
    ],
    compute: (
        HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT",
    ),
    peer_stats: None,
    together: &[],
    build: |u, _| {
        BatchnormInferenceAttributes {
            x_tensor_uid: uid(u, 0),
            mean_tensor_uid: uid(u, 1),
            inv_variance_tensor_uid: uid(u, 2),
            scale_tensor_uid: uid(u, 3),
            bias_tensor_uid: uid(u, 4),
            y_tensor_uid: uid(u, 5),
        }
        .into()
    },
};

static BATCHNORM_INFERENCE_VARIANCE: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_INFERENCE_VARIANCE_EXT",
    operation_type: HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE_VARIANCE,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT,
    ],
    compute: (
        HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT",
    ),
    peer_stats: None,
    together: &[],
    build: |u, _| {
        BatchnormInferenceAttributesVarianceExt {
            x_tensor_uid: uid(u, 0),
            mean_tensor_uid: uid(u, 1),
            variance_tensor_uid: uid(u, 2),
            scale_tensor_uid: uid(u, 3),
            bias_tensor_uid: uid(u, 4),
            y_tensor_uid: uid(u, 5),
            epsilon_tensor_uid: uid(u, 6),
        }
        .into()
    },
};

static BATCHNORM: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_EXT",
    operation_type: HIPDNN_OPERATION_TYPE_BATCHNORM,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_VARIANCE_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT,
    ],
    compute: (
        HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT",
    ),
    peer_stats: Some(HIPDNN_ATTR_OPERATION_BATCHNORM_PEER_STATS_EXT),
    // The saved statistics as a pair; the running statistics all five or none.
    together: &[&[5, 6], &[7, 8, 9, 10, 11]],
    build: |u, peer_stats| {
        BatchnormAttributes {
            x_tensor_uid: uid(u, 0),
            scale_tensor_uid: uid(u, 1),
            bias_tensor_uid: uid(u, 2),
            epsilon_tensor_uid: uid(u, 3),
            y_tensor_uid: uid(u, 4),
            mean_tensor_uid: u[5],
            inv_variance_tensor_uid: u[6],
            prev_running_mean_tensor_uid: u[7],
            prev_running_variance_tensor_uid: u[8],
            momentum_tensor_uid: u[9],
            next_running_mean_tensor_uid: u[10],
            next_running_variance_tensor_uid: u[11],
            peer_stats_tensor_uid: peer_stats,
        }
        .into()
    },
};

static BATCHNORM_BACKWARD: Layout = Layout {
    type_name: "OPERATION_BATCHNORM_BACKWARD_EXT",
    operation_type: HIPDNN_OPERATION_TYPE_BATCHNORM_BACKWARD,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT,
        required HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_MEAN_EXT,
        optional HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_INV_VARIANCE_EXT,
    ],
    compute: (
        HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT,
        "HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT",
    ),
    peer_stats: Some(HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_PEER_STATS_EXT),
    together: &[&[6, 7]],
    build: |u, peer_stats| {
        BatchnormBackwardAttributes {
            dy_tensor_uid: uid(u, 0),
            x_tensor_uid: uid(u, 1),
            scale_tensor_uid: uid(u, 2),
            dx_tensor_uid: uid(u, 3),
            dscale_tensor_uid: uid(u, 4),
            dbias_tensor_uid: uid(u, 5),
            mean_tensor_uid: u[6],
            inv_variance_tensor_uid: u[7],
            peer_stats_tensor_uid: peer_stats,
        }
        .into()
    },
};

static MATMUL: Layout = Layout {
    type_name: "OPERATION_MATMUL",
    operation_type: HIPDNN_OPERATION_TYPE_MATMUL,
    slots: slots![
        required HIPDNN_ATTR_OPERATION_MATMUL_ADESC,
        required HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
        required HIPDNN_ATTR_OPERATION_MATMUL_CDESC,
    ],
    compute: (HIPDNN_ATTR_MATMUL_COMP_TYPE, "HIPDNN_ATTR_MATMUL_COMP_TYPE"),
    peer_stats: None,
    together: &[],
    build: |u, _| {
        MatmulAttributes {
            a_tensor_uid: uid(u, 0),
            b_tensor_uid: uid(u, 1),
            c_tensor_uid: uid(u, 2),
            ..MatmulAttributes::default()
        }
        .into()
    },
};

impl Layout {
    /// The layout of an operation descriptor type, if it is one of these.
    fn of(descriptor_type: hipdnnBackendDescriptorType_t) -> Option<&'static Layout> {
        Some(match descriptor_type {
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT => &BATCHNORM_INFERENCE,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT => {
                &BATCHNORM_INFERENCE_VARIANCE
            }
            HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT => &BATCHNORM,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT => &BATCHNORM_BACKWARD,
            HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR => &MATMUL,
            _ => return None,
        })
    }
}

/// An operation made of tensors and a compute type, as its [`Layout`] says.
#[derive(Debug)]
struct TensorOperation {
    layout: &'static Layout,
    tensors: Vec<Option<Arc<TensorAttributes>>>,
    peer_stats: Vec<Arc<TensorAttributes>>,
    compute: DataType,
}

impl TensorOperation {
    fn new(layout: &'static Layout) -> Self {
        Self {
            layout,
            tensors: vec![None; layout.slots.len()],
            peer_stats: Vec::new(),
            compute: DataType::Unset,
        }
    }

    fn set(&mut self, value: &SetValue) -> BackendResult<()> {
        let layout = self.layout;
        if let Some(i) = layout.slots.iter().position(|s| s.attribute == value.name) {
            self.tensors[i] = Some(set_tensor(value)?);
        } else if value.name == layout.compute.0 {
            self.compute = set_data_type(value)?;
        } else if Some(value.name) == layout.peer_stats {
            let mut tensors = Vec::new();
            for d in value.descriptors()? {
                match &d?.kind {
                    Kind::Tensor(t) => tensors.push(Arc::clone(
                        t.frozen().expect("a finalized TENSOR descriptor is frozen"),
                    )),
                    other => return Err(wrong_kind(value.name, "TENSOR", other)),
                }
            }
            self.peer_stats = tensors;
        } else {
            return Err(unsupported_attribute(layout.type_name, value.name));
        }
        Ok(())
    }

    /// The node's attributes and its tensors in hipDNN's order (the slots that are set,
    /// then the peer statistics).
    fn finalize(&self) -> BackendResult<(NodeAttributes, Vec<Arc<TensorAttributes>>)> {
        let layout = self.layout;
        let what = layout.type_name;
        for (slot, tensor) in layout.slots.iter().zip(&self.tensors) {
            if slot.required && tensor.is_none() {
                return Err(missing(what, slot.name));
            }
        }
        if self.compute == DataType::Unset {
            return Err(missing(what, layout.compute.1));
        }
        for group in layout.together {
            let set = group.iter().filter(|&&i| self.tensors[i].is_some()).count();
            if set != 0 && set != group.len() {
                let names: Vec<&str> = group.iter().map(|&i| layout.slots[i].name).collect();
                return Err(BackendError::bad_param(format!(
                    "{what}: {} are set together or not at all",
                    names.join(", ")
                )));
            }
        }
        let uids: Vec<Option<i64>> = self
            .tensors
            .iter()
            .map(|t| t.as_ref().map(|t| t.uid))
            .collect();
        let peer_stats = self.peer_stats.iter().map(|t| t.uid).collect();
        let mut tensors: Vec<_> = self.tensors.iter().flatten().cloned().collect();
        tensors.extend(self.peer_stats.iter().cloned());
        Ok(((layout.build)(&uids, peer_stats), tensors))
    }
}

#[derive(Debug, Default)]
struct Pointwise {
    in_0: Option<Arc<TensorAttributes>>,
    in_1: Option<Arc<TensorAttributes>>,
    in_2: Option<Arc<TensorAttributes>>,
    out_0: Option<Arc<TensorAttributes>>,
    /// The mode and scalar parameters (the uids are filled at finalize).
    params: PointwiseAttributes,
    compute: DataType,
}

/// A TENSOR attribute: the frozen tensor of a finalized TENSOR descriptor.
fn set_tensor(value: &SetValue) -> BackendResult<Arc<TensorAttributes>> {
    let d = value.descriptor()?;
    match &d.kind {
        Kind::Tensor(t) => Ok(Arc::clone(
            t.frozen().expect("a finalized TENSOR descriptor is frozen"),
        )),
        other => Err(wrong_kind(value.name, "TENSOR", other)),
    }
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
                    Operation::Tensors(t) => t.layout.operation_type,
                };
                // SAFETY: the type is checked: `hipdnnOperationType_t`s (ints).
                return unsafe { target.put(&[kind]) };
            }
            _ => {}
        }
        match &self.op {
            Operation::Tensors(t) => match target.name {
                name if name == t.layout.compute.0 => get_data_type(&target, t.compute),
                other => Err(unsupported_attribute(type_name, other)),
            },
            Operation::Convolution(c) => match target.name {
                HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS => put_i64s(&target, &c.pre_padding),
                HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS => put_i64s(&target, &c.post_padding),
                HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES => put_i64s(&target, &c.stride),
                HIPDNN_ATTR_CONVOLUTION_DILATIONS => put_i64s(&target, &c.dilation),
                HIPDNN_ATTR_CONVOLUTION_COMP_TYPE => get_data_type(&target, c.compute),
                HIPDNN_ATTR_CONVOLUTION_CONV_MODE if target.ty() == HIPDNN_TYPE_INT64 => {
                    put_i64s(&target, &[i64::from(c.mode.0)])
                }
                HIPDNN_ATTR_CONVOLUTION_CONV_MODE => {
                    target.expect_type(HIPDNN_TYPE_CONVOLUTION_MODE)?;
                    let mode = if c.mode == ConvMode::CONVOLUTION {
                        HIPDNN_CONVOLUTION
                    } else {
                        HIPDNN_CROSS_CORRELATION
                    };
                    // SAFETY: the type is checked: `hipdnnConvolutionMode_t`s (ints).
                    unsafe { target.put(&[mode]) }
                }
                other => Err(unsupported_attribute(type_name, other)),
            },
            Operation::Pointwise(p) => match target.name {
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
