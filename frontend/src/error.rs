//! The frontend's error type.

use std::fmt;

use hipdnn_flatbuffers_sdk::GraphError;

/// A tensor as named in an error: its name and, once set, its uid.
///
/// Uids the builder assigns are only known after [`build`](super::GraphBuilder::build),
/// so errors raised while adding operations name such tensors by name alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLabel {
    /// The tensor's name.
    pub name: String,
    /// Its uid, when the application set one.
    pub uid: Option<i64>,
}

impl fmt::Display for TensorLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.uid {
            Some(uid) => write!(f, "\"{}\" (uid {uid})", self.name),
            None => write!(f, "\"{}\"", self.name),
        }
    }
}

/// Why a graph could not be built.
///
/// Operation errors name the node (the name given in the op's attributes, or the one the
/// builder made up) and the tensor at fault, with the dims involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontendError {
    /// A tensor handle from another graph builder.
    #[error("{context}: the tensor handle belongs to another graph")]
    UnknownTensor {
        /// Where the handle was used, e.g. `node "conv" input w`.
        context: String,
    },
    /// Two tensors were given the same uid.
    #[error("tensor uid {uid} is given to both \"{first}\" and \"{second}\"")]
    DuplicateUid {
        /// The uid.
        uid: i64,
        /// The tensor that had it first.
        first: String,
        /// The tensor it was given to next.
        second: String,
    },
    /// Dims, strides or layout that do not describe a tensor.
    #[error("tensor \"{tensor}\": {reason}")]
    InvalidTensor {
        /// Tensor name.
        tensor: String,
        /// What is wrong.
        reason: String,
    },
    /// An input of the wrong rank.
    #[error("node \"{node}\": tensor {tensor} has rank {got}, expected {expected}")]
    RankMismatch {
        /// Node name.
        node: String,
        /// The input.
        tensor: TensorLabel,
        /// The rank(s) accepted, in words (`"4"`, `"at least 2"`, `"3 (as x)"`).
        expected: String,
        /// Its rank.
        got: usize,
    },
    /// An input whose dims are not the ones the operation needs.
    #[error("node \"{node}\": tensor {tensor} has dims {got:?}, expected {expected:?}")]
    ShapeMismatch {
        /// Node name.
        node: String,
        /// The input.
        tensor: TensorLabel,
        /// The dims it must have.
        expected: Vec<i64>,
        /// Its dims.
        got: Vec<i64>,
    },
    /// An input that does not broadcast to the shape of the others.
    #[error(
        "node \"{node}\": tensor {tensor} with dims {dims:?} does not broadcast with {target:?}"
    )]
    Broadcast {
        /// Node name.
        node: String,
        /// The input.
        tensor: TensorLabel,
        /// Its dims.
        dims: Vec<i64>,
        /// The shape it had to broadcast with.
        target: Vec<i64>,
    },
    /// A matmul whose operands do not multiply.
    #[error(
        "node \"{node}\": cannot multiply a {a_dims:?} by b {b_dims:?}: a has {k_a} columns, \
         b has {k_b} rows"
    )]
    MatmulInnerDim {
        /// Node name.
        node: String,
        /// Dims of `a`.
        a_dims: Vec<i64>,
        /// Dims of `b`.
        b_dims: Vec<i64>,
        /// Last dim of `a`.
        k_a: i64,
        /// Second-to-last dim of `b`.
        k_b: i64,
    },
    /// Convolution operands and parameters that give no output.
    #[error("node \"{node}\": {reason}")]
    Convolution {
        /// Node name.
        node: String,
        /// What does not fit, with the numbers.
        reason: String,
    },
    /// A pointwise node with the wrong number of inputs for its mode.
    #[error("node \"{node}\": pointwise mode {mode} takes {expected} input(s), got {got}")]
    Arity {
        /// Node name.
        node: String,
        /// The mode's schema name.
        mode: String,
        /// The number it takes.
        expected: usize,
        /// The number given.
        got: usize,
    },
    /// An attribute value the operation cannot take.
    #[error("node \"{node}\": {attribute}: {reason}")]
    InvalidAttribute {
        /// Node name.
        node: String,
        /// The attribute (schema field name).
        attribute: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An attribute the operation needs and that was not set.
    #[error("node \"{node}\": attribute {attribute} must be set")]
    MissingAttribute {
        /// Node name.
        node: String,
        /// The attribute.
        attribute: &'static str,
    },
    /// The assembled graph failed [`Graph::validate`](hipdnn_flatbuffers_sdk::model::Graph::validate)
    /// (for example an unused tensor, or a virtual output nobody reads).
    #[error("invalid graph: {0}")]
    Validation(#[from] GraphError),
}
