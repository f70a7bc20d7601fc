//! Tensor handles and descriptors.

use hipdnn_data_sdk::{DataType, TensorLayout, check_dims_strides};
use hipdnn_flatbuffers_sdk::TensorValue;

use super::error::{FrontendError, TensorLabel};
use super::shape;

/// A tensor of one [`GraphBuilder`](super::GraphBuilder): what operations take and return.
///
/// A handle is a small copyable index. Using it with another builder is an error
/// ([`FrontendError::UnknownTensor`]); a clone of a builder accepts the handles of the
/// original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tensor {
    pub(crate) graph: u32,
    pub(crate) index: u32,
}

/// How to create a graph input: name, dims and, optionally, strides or layout, data type,
/// uid, a pass-by-value scalar.
///
/// Strides default to packed row-major; [`layout`](Self::layout) picks another packed
/// layout (e.g. [`TensorLayout::ChannelsLast`] for NHWC) and
/// [`strides`](Self::strides) gives them explicitly. The data type defaults to the
/// graph's io (or, for a virtual tensor, intermediate) data type, filled in at build. A
/// uid left unset is assigned at build: the smallest positive uids not taken, in creation
/// order.
///
/// ```
/// use hipdnn_frontend::{DataType, TensorDescriptor, TensorLayout};
///
/// let x = TensorDescriptor::new("x", [8, 64, 56, 56])
///     .layout(TensorLayout::ChannelsLast)
///     .data_type(DataType::Half)
///     .uid(1);
/// # let _ = x;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDescriptor {
    pub(crate) name: String,
    pub(crate) dims: Vec<i64>,
    pub(crate) strides: Option<Vec<i64>>,
    pub(crate) layout: TensorLayout,
    pub(crate) data_type: DataType,
    pub(crate) uid: Option<i64>,
    pub(crate) is_virtual: bool,
    pub(crate) value: Option<TensorValue>,
    pub(crate) runtime_pass_by_value: bool,
    pub(crate) alignment: i64,
}

impl TensorDescriptor {
    /// A packed row-major tensor of shape `dims`.
    pub fn new(name: impl Into<String>, dims: impl Into<Vec<i64>>) -> Self {
        Self {
            name: name.into(),
            dims: dims.into(),
            strides: None,
            layout: TensorLayout::Packed,
            data_type: DataType::Unset,
            uid: None,
            is_virtual: false,
            value: None,
            runtime_pass_by_value: false,
            alignment: 16,
        }
    }

    /// A pass-by-value scalar (dims `[1]`): the value travels in the graph and needs no
    /// buffer at execute time. The data type follows the value (`Float32` → `FLOAT`,
    /// `Float16` → `HALF`, …; fp8 and bool values leave it to be set).
    pub fn scalar(name: impl Into<String>, value: TensorValue) -> Self {
        let data_type = match value {
            TensorValue::Float32(_) => DataType::Float,
            TensorValue::Float16(_) => DataType::Half,
            TensorValue::BFloat16(_) => DataType::Bfloat16,
            TensorValue::Float64(_) => DataType::Double,
            TensorValue::Int32(_) => DataType::Int32,
            TensorValue::Int64(_) => DataType::Int64,
            TensorValue::Float8(_) | TensorValue::Bool(_) => DataType::Unset,
        };
        Self {
            data_type,
            value: Some(value),
            ..Self::new(name, [1])
        }
    }

    /// Sets the uid (unique within the graph).
    pub fn uid(mut self, uid: i64) -> Self {
        self.uid = Some(uid);
        self
    }

    /// Sets explicit strides, in elements, one per dimension.
    pub fn strides(mut self, strides: impl Into<Vec<i64>>) -> Self {
        self.strides = Some(strides.into());
        self
    }

    /// Sets packed strides in `layout` (ignored when [`strides`](Self::strides) are given).
    pub fn layout(mut self, layout: TensorLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Sets the element type.
    pub fn data_type(mut self, data_type: DataType) -> Self {
        self.data_type = data_type;
        self
    }

    /// Marks the tensor virtual (no user buffer). Validation then requires a node to
    /// write it, which only operations do, so graph inputs are normally not virtual.
    pub fn is_virtual(mut self, is_virtual: bool) -> Self {
        self.is_virtual = is_virtual;
        self
    }

    /// Sets a pass-by-value scalar.
    pub fn value(mut self, value: TensorValue) -> Self {
        self.value = Some(value);
        self
    }

    /// The scalar is bound at execute time rather than baked into the graph (needs engine
    /// API 1.2.0, which the built graph then declares).
    pub fn runtime_pass_by_value(mut self, runtime: bool) -> Self {
        self.runtime_pass_by_value = runtime;
        self
    }

    /// Required byte alignment of the device pointer (default 16; any other value needs
    /// engine API 1.3.0, which the built graph then declares).
    pub fn alignment(mut self, bytes: i64) -> Self {
        self.alignment = bytes;
        self
    }
}

/// A tensor as the builder holds it: what [`GraphBuilder::tensor_info`] shows.
///
/// [`GraphBuilder::tensor_info`]: super::GraphBuilder::tensor_info
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub(crate) uid: Option<i64>,
    pub(crate) name: String,
    pub(crate) dims: Vec<i64>,
    pub(crate) strides: Vec<i64>,
    /// The layout family outputs derived from this tensor are given.
    pub(crate) layout: TensorLayout,
    pub(crate) data_type: DataType,
    pub(crate) is_virtual: bool,
    pub(crate) value: Option<TensorValue>,
    pub(crate) runtime_pass_by_value: bool,
    pub(crate) alignment: i64,
    /// An optional statistics output (batch norm mean, …): left out of the built graph
    /// when virtual and unread.
    pub(crate) prunable: bool,
}

impl TensorInfo {
    /// Checks a descriptor and resolves its strides.
    pub(crate) fn from_descriptor(d: TensorDescriptor) -> Result<Self, FrontendError> {
        let invalid = |reason: String| FrontendError::InvalidTensor {
            tensor: d.name.clone(),
            reason,
        };
        let (strides, layout) = match &d.strides {
            Some(strides) => (strides.clone(), shape::detect_layout(&d.dims, strides)),
            None => {
                d.layout
                    .check_rank(d.dims.len())
                    .map_err(|e| invalid(e.to_string()))?;
                if d.dims.is_empty() {
                    return Err(invalid("a tensor needs at least one dimension".into()));
                }
                (
                    shape::strides_for(&d.dims, d.layout).map_err(invalid)?,
                    shape::family(d.layout),
                )
            }
        };
        check_dims_strides(&d.dims, &strides).map_err(|e| invalid(e.to_string()))?;
        Ok(Self {
            uid: d.uid,
            name: d.name,
            dims: d.dims,
            strides,
            layout,
            data_type: d.data_type,
            is_virtual: d.is_virtual,
            value: d.value,
            runtime_pass_by_value: d.runtime_pass_by_value,
            alignment: d.alignment,
            prunable: false,
        })
    }

    /// An operation output: virtual, strides packed in `layout`.
    pub(crate) fn output(
        name: String,
        dims: Vec<i64>,
        layout: TensorLayout,
    ) -> Result<Self, FrontendError> {
        let strides =
            shape::strides_for(&dims, layout).map_err(|reason| FrontendError::InvalidTensor {
                tensor: name.clone(),
                reason,
            })?;
        Ok(Self {
            uid: None,
            name,
            dims,
            strides,
            layout: shape::family(layout),
            data_type: DataType::Unset,
            is_virtual: true,
            value: None,
            runtime_pass_by_value: false,
            alignment: 16,
            prunable: false,
        })
    }

    pub(crate) fn label(&self) -> TensorLabel {
        TensorLabel {
            name: self.name.clone(),
            uid: self.uid,
        }
    }

    /// The uid the application set (assigned ones are known after build).
    pub fn uid(&self) -> Option<i64> {
        self.uid
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Extents, one per dimension (inferred for operation outputs).
    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    /// Strides in elements (inferred for operation outputs).
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// The data type; `UNSET` until build fills in the graph default.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// True for intermediates (operation outputs not marked as graph outputs).
    pub fn is_virtual(&self) -> bool {
        self.is_virtual
    }

    /// The pass-by-value scalar, if any.
    pub fn value(&self) -> Option<TensorValue> {
        self.value
    }
}
