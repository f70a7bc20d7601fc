//! The registry of opaque objects (handles, descriptors, fusion plans, ops and
//! argument sets) and their contents.
//!
//! A handle value is the address of a small `Box` this module allocates. Every value
//! handed out is recorded, so a value can be checked (created here? of the right kind?
//! still alive?) before anything is looked up, and nothing the caller passes is ever
//! dereferenced. Destroyed objects stay recorded as destroyed and their boxes are
//! never freed, so an address is never reused and a use after destroy is always
//! reported as one.

use std::collections::HashMap;
use std::time::Instant;

use hipdnn_data_sdk::DataType;
use hipdnn_reference::tensor::{HostTensor, span};

use crate::state::{R, bad, render_list};
use crate::sys::{miopenActivationMode_t, miopenDataType_t};

/// A tensor descriptor's contents (set by `miopenSetTensorDescriptor`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TensorDesc {
    pub(crate) dtype: miopenDataType_t,
    pub(crate) dims: Vec<usize>,
    pub(crate) strides: Vec<usize>,
}

impl TensorDesc {
    pub(crate) fn rank(&self) -> usize {
        self.dims.len()
    }

    pub(crate) fn data_type(&self) -> DataType {
        match self.dtype {
            miopenDataType_t::miopenHalf => DataType::Half,
            miopenDataType_t::miopenBFloat16 => DataType::Bfloat16,
            _ => DataType::Float,
        }
    }

    pub(crate) fn elem_size(&self) -> usize {
        match self.dtype {
            miopenDataType_t::miopenFloat => 4,
            _ => 2,
        }
    }

    /// Bytes a buffer needs: (largest offset + 1) elements.
    pub(crate) fn bytes(&self) -> usize {
        span(&self.dims, &self.strides) * self.elem_size()
    }

    /// A zero tensor laid out as this descriptor (for outputs).
    pub(crate) fn host(&self) -> HostTensor {
        HostTensor::zeros(self.dims.clone(), self.strides.clone())
    }

    /// `T(float,[2,4,8,8],[256,64,8,1])`.
    pub(crate) fn render(&self) -> String {
        format!(
            "T({},{},{})",
            dtype_name(self.dtype),
            render_list(&self.dims),
            render_list(&self.strides)
        )
    }
}

/// `half`, `float`, `bfloat16` (the descriptor types); others by their header name.
pub(crate) fn dtype_name(d: miopenDataType_t) -> String {
    match d {
        miopenDataType_t::miopenHalf => "half".to_owned(),
        miopenDataType_t::miopenFloat => "float".to_owned(),
        miopenDataType_t::miopenBFloat16 => "bfloat16".to_owned(),
        other => other.to_string(),
    }
}

/// A convolution descriptor's contents.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConvDesc {
    /// Set by `miopenInitConvolutionNdDescriptor`.
    pub(crate) geometry: Option<ConvGeometry>,
    pub(crate) groups: usize,
    /// `MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC`.
    pub(crate) deterministic: bool,
    /// `MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL` (-1: unset, MIOpen's default).
    pub(crate) fp16_alt: i32,
}

impl Default for ConvDesc {
    fn default() -> Self {
        Self {
            geometry: None,
            groups: 1,
            deterministic: false,
            fp16_alt: -1,
        }
    }
}

/// Symmetric padding, stride and dilation, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConvGeometry {
    pub(crate) pad: Vec<usize>,
    pub(crate) stride: Vec<usize>,
    pub(crate) dilation: Vec<usize>,
}

impl ConvDesc {
    /// `C(pad=[1,1],stride=[1,1],dil=[1,1],groups=1,det=0)`, with `,fp16alt=N` when
    /// that attribute was set, and `C(unset,…)` before the Nd init.
    pub(crate) fn render(&self) -> String {
        let geometry = match &self.geometry {
            Some(g) => format!(
                "pad={},stride={},dil={}",
                render_list(&g.pad),
                render_list(&g.stride),
                render_list(&g.dilation)
            ),
            None => "unset".to_owned(),
        };
        let alt = if self.fp16_alt == -1 {
            String::new()
        } else {
            format!(",fp16alt={}", self.fp16_alt)
        };
        format!(
            "C({geometry},groups={},det={}{alt})",
            self.groups,
            u8::from(self.deterministic)
        )
    }
}

/// An activation descriptor's contents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ActivDesc {
    pub(crate) mode: miopenActivationMode_t,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) gamma: f64,
}

impl ActivDesc {
    /// `A(RELU,0,0,0)`.
    pub(crate) fn render(&self) -> String {
        format!(
            "A({},{},{},{})",
            activ_name(self.mode),
            self.alpha,
            self.beta,
            self.gamma
        )
    }
}

/// `RELU` for `miopenActivationRELU`.
pub(crate) fn activ_name(mode: miopenActivationMode_t) -> String {
    mode.name()
        .and_then(|n| n.strip_prefix("miopenActivation"))
        .map_or_else(|| mode.to_string(), str::to_owned)
}

/// A fusion plan: the input it was created for and its ops in order.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) input: TensorDesc,
    /// Op handles, in the order they were created.
    pub(crate) ops: Vec<usize>,
    pub(crate) compiled: bool,
}

/// One op of a fusion plan (descriptor contents copied at creation, as MIOpen does).
#[derive(Debug, Clone)]
pub(crate) enum OpKind {
    Conv { conv: ConvDesc, w: TensorDesc },
    Bias { bias: TensorDesc },
    Activation { mode: miopenActivationMode_t },
}

impl OpKind {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Conv { .. } => "conv",
            Self::Bias { .. } => "bias",
            Self::Activation { .. } => "activ",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) index: usize,
    pub(crate) kind: OpKind,
}

impl Op {
    /// `op0:conv`.
    pub(crate) fn render(&self) -> String {
        format!("op{}:{}", self.index, self.kind.name())
    }
}

/// The arguments bound to one op in an argument set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OpArgs {
    /// The filter's device pointer.
    Conv {
        w: usize,
    },
    /// The bias's device pointer.
    Bias {
        bias: usize,
    },
    Activation {
        alpha: f64,
        beta: f64,
        gamma: f64,
    },
}

#[derive(Debug, Clone)]
pub(crate) enum Object {
    /// A MIOpen handle and the stream it was given (an opaque value).
    Handle {
        stream: usize,
    },
    Tensor(Option<TensorDesc>),
    Conv(ConvDesc),
    Activation(Option<ActivDesc>),
    Plan(Plan),
    Op(Op),
    /// Operator arguments, by op handle.
    Args(HashMap<usize, OpArgs>),
    /// A HIP stream (numbered from 1 in creation order, for the log).
    Stream {
        index: u64,
    },
    /// A HIP event and when it was last recorded.
    Event {
        index: u64,
        recorded: Option<Instant>,
    },
}

impl Object {
    fn kind(&self) -> &'static str {
        match self {
            Self::Handle { .. } => "MIOpen handle",
            Self::Tensor(_) => "tensor descriptor",
            Self::Conv(_) => "convolution descriptor",
            Self::Activation(_) => "activation descriptor",
            Self::Plan(_) => "fusion plan",
            Self::Op(_) => "fusion op",
            Self::Args(_) => "operator argument set",
            Self::Stream { .. } => "HIP stream",
            Self::Event { .. } => "HIP event",
        }
    }

    fn render(&self) -> String {
        match self {
            Self::Handle { .. } => "handle".to_owned(),
            Self::Tensor(Some(t)) => t.render(),
            Self::Tensor(None) => "T(unset)".to_owned(),
            Self::Conv(c) => c.render(),
            Self::Activation(Some(a)) => a.render(),
            Self::Activation(None) => "A(unset)".to_owned(),
            Self::Plan(p) => format!(
                "P({},{} ops{})",
                p.input.render(),
                p.ops.len(),
                if p.compiled { ",compiled" } else { "" }
            ),
            Self::Op(op) => op.render(),
            Self::Args(a) => format!("args({} bound)", a.len()),
            Self::Stream { index } => format!("S{index}"),
            Self::Event { index, .. } => format!("E{index}"),
        }
    }
}

#[derive(Debug)]
struct Slot {
    /// `None` once destroyed (the kind is kept for the message).
    object: Option<Object>,
    kind: &'static str,
}

/// Every object handed out, by handle value.
#[derive(Debug, Default)]
pub(crate) struct Objects {
    slots: HashMap<usize, Slot>,
    streams: u64,
    events: u64,
}

/// What a handle value's box holds (never read: the address is what matters).
type Marker = u64;

impl Objects {
    /// Records `object` under a new, never reused handle value.
    pub(crate) fn create(&mut self, object: Object) -> usize {
        let n = self.slots.len() as Marker;
        // Never freed: the address stays unique (see the module docs).
        let addr = Box::into_raw(Box::new(n)) as usize;
        let kind = object.kind();
        self.slots.insert(
            addr,
            Slot {
                object: Some(object),
                kind,
            },
        );
        addr
    }

    /// The live object at `p`, any kind.
    fn slot(&self, p: usize, what: &str) -> R<&Object> {
        if p == 0 {
            return Err(bad(format!("{what} is null")));
        }
        match self.slots.get(&p) {
            None => Err(bad(format!(
                "{what} is not an object created by this library"
            ))),
            Some(Slot { object: None, kind }) => {
                Err(bad(format!("{what} is a {kind} that was destroyed")))
            }
            Some(Slot {
                object: Some(o), ..
            }) => Ok(o),
        }
    }

    fn slot_mut(&mut self, p: usize, what: &str) -> R<&mut Object> {
        self.slot(p, what)?;
        Ok(self
            .slots
            .get_mut(&p)
            .and_then(|s| s.object.as_mut())
            .expect("checked above"))
    }

    fn wrong_kind(what: &str, got: &Object, want: &str) -> crate::state::Fail {
        bad(format!("{what} is a {}, not a {want}", got.kind()))
    }

    /// Destroys the object at `p`, which must be of `kind`; null is a no-op.
    pub(crate) fn destroy(&mut self, p: usize, kind: &str, what: &str) -> R<Object> {
        let o = self.slot(p, what)?;
        if o.kind() != kind {
            return Err(Self::wrong_kind(what, o, kind));
        }
        Ok(self
            .slots
            .get_mut(&p)
            .and_then(|s| s.object.take())
            .expect("checked above"))
    }

    /// Marks the object at `p` destroyed, whatever it is (ops of a destroyed plan).
    pub(crate) fn kill(&mut self, p: usize) {
        if let Some(s) = self.slots.get_mut(&p) {
            s.object = None;
        }
    }

    /// Renders the object at `p` for the log: its contents, `null`, or a note that it
    /// is unknown or destroyed.
    pub(crate) fn render(&self, p: usize) -> String {
        if p == 0 {
            return "null".to_owned();
        }
        match self.slots.get(&p) {
            None => "<unknown object>".to_owned(),
            Some(Slot { object: None, kind }) => format!("<destroyed {kind}>"),
            Some(Slot {
                object: Some(o), ..
            }) => o.render(),
        }
    }

    pub(crate) fn handle(&self, p: usize) -> R<()> {
        match self.slot(p, "handle")? {
            Object::Handle { .. } => Ok(()),
            o => Err(Self::wrong_kind("handle", o, "MIOpen handle")),
        }
    }

    pub(crate) fn handle_mut(&mut self, p: usize) -> R<&mut usize> {
        match self.slot_mut(p, "handle")? {
            Object::Handle { stream } => Ok(stream),
            o => {
                let kind = o.kind();
                Err(bad(format!("handle is a {kind}, not a MIOpen handle")))
            }
        }
    }

    /// The contents of the set tensor descriptor at `p`.
    pub(crate) fn tensor(&self, p: usize, what: &str) -> R<&TensorDesc> {
        match self.slot(p, what)? {
            Object::Tensor(Some(t)) => Ok(t),
            Object::Tensor(None) => Err(bad(format!(
                "{what} was never set (miopenSetTensorDescriptor)"
            ))),
            o => Err(Self::wrong_kind(what, o, "tensor descriptor")),
        }
    }

    /// The tensor descriptor slot at `p`, set or not (for `Set`).
    pub(crate) fn tensor_slot_mut(&mut self, p: usize, what: &str) -> R<&mut Option<TensorDesc>> {
        match self.slot_mut(p, what)? {
            Object::Tensor(t) => Ok(t),
            o => {
                let kind = o.kind();
                Err(bad(format!("{what} is a {kind}, not a tensor descriptor")))
            }
        }
    }

    pub(crate) fn conv(&self, p: usize, what: &str) -> R<&ConvDesc> {
        match self.slot(p, what)? {
            Object::Conv(c) => Ok(c),
            o => Err(Self::wrong_kind(what, o, "convolution descriptor")),
        }
    }

    pub(crate) fn conv_mut(&mut self, p: usize, what: &str) -> R<&mut ConvDesc> {
        match self.slot_mut(p, what)? {
            Object::Conv(c) => Ok(c),
            o => {
                let kind = o.kind();
                Err(bad(format!(
                    "{what} is a {kind}, not a convolution descriptor"
                )))
            }
        }
    }

    /// The set activation descriptor at `p`.
    pub(crate) fn activation(&self, p: usize, what: &str) -> R<ActivDesc> {
        match self.slot(p, what)? {
            Object::Activation(Some(a)) => Ok(*a),
            Object::Activation(None) => Err(bad(format!(
                "{what} was never set (miopenSetActivationDescriptor)"
            ))),
            o => Err(Self::wrong_kind(what, o, "activation descriptor")),
        }
    }

    pub(crate) fn activation_slot_mut(
        &mut self,
        p: usize,
        what: &str,
    ) -> R<&mut Option<ActivDesc>> {
        match self.slot_mut(p, what)? {
            Object::Activation(a) => Ok(a),
            o => {
                let kind = o.kind();
                Err(bad(format!(
                    "{what} is a {kind}, not an activation descriptor"
                )))
            }
        }
    }

    pub(crate) fn plan(&self, p: usize, what: &str) -> R<&Plan> {
        match self.slot(p, what)? {
            Object::Plan(plan) => Ok(plan),
            o => Err(Self::wrong_kind(what, o, "fusion plan")),
        }
    }

    pub(crate) fn plan_mut(&mut self, p: usize, what: &str) -> R<&mut Plan> {
        match self.slot_mut(p, what)? {
            Object::Plan(plan) => Ok(plan),
            o => {
                let kind = o.kind();
                Err(bad(format!("{what} is a {kind}, not a fusion plan")))
            }
        }
    }

    pub(crate) fn op(&self, p: usize, what: &str) -> R<&Op> {
        match self.slot(p, what)? {
            Object::Op(op) => Ok(op),
            o => Err(Self::wrong_kind(what, o, "fusion op")),
        }
    }

    pub(crate) fn args(&self, p: usize, what: &str) -> R<&HashMap<usize, OpArgs>> {
        match self.slot(p, what)? {
            Object::Args(a) => Ok(a),
            o => Err(Self::wrong_kind(what, o, "operator argument set")),
        }
    }

    pub(crate) fn args_mut(&mut self, p: usize, what: &str) -> R<&mut HashMap<usize, OpArgs>> {
        match self.slot_mut(p, what)? {
            Object::Args(a) => Ok(a),
            o => {
                let kind = o.kind();
                Err(bad(format!(
                    "{what} is a {kind}, not an operator argument set"
                )))
            }
        }
    }

    /// A new stream.
    pub(crate) fn create_stream(&mut self) -> usize {
        self.streams += 1;
        let index = self.streams;
        self.create(Object::Stream { index })
    }

    /// A new event (not recorded).
    pub(crate) fn create_event(&mut self) -> usize {
        self.events += 1;
        let index = self.events;
        self.create(Object::Event {
            index,
            recorded: None,
        })
    }

    /// Checks that `p` is null (the default stream) or a live stream.
    pub(crate) fn stream(&self, p: usize, what: &str) -> R<()> {
        if p == 0 {
            return Ok(());
        }
        match self.slot(p, what)? {
            Object::Stream { .. } => Ok(()),
            o => Err(Self::wrong_kind(what, o, "HIP stream")),
        }
    }

    /// The live event at `p`: when it was recorded.
    pub(crate) fn event_mut(&mut self, p: usize, what: &str) -> R<&mut Option<Instant>> {
        match self.slot_mut(p, what)? {
            Object::Event { recorded, .. } => Ok(recorded),
            o => {
                let kind = o.kind();
                Err(bad(format!("{what} is a {kind}, not a HIP event")))
            }
        }
    }
}
