//! The graph builder and the built graph.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use hipdnn_data_sdk::{DataType, TensorLayout, check_dims_strides, engine_id_for_name_checked};
use hipdnn_flatbuffers_sdk::model::{EngineApiVersion, Graph, Node, TensorAttributes};
use hipdnn_flatbuffers_sdk::wire::{
    ConvMode, NormFwdPhase, PointwiseMode, ReductionMode, ResampleMode,
};

use super::attrs::*;
use super::error::FrontendError;
use super::op::{NodeEntry, Op, PointwiseParams, pointwise_parameter_modes};
use super::shape::{self, ConvGeometry, MatmulShapeError};
use super::tensor::{Tensor, TensorDescriptor, TensorInfo};
use hipdnn_flatbuffers_sdk::pointwise_arity;

type Result<T, E = FrontendError> = std::result::Result<T, E>;

/// Identifies builders, so a handle cannot be used with the wrong one.
static NEXT_GRAPH_ID: AtomicU32 = AtomicU32::new(1);

/// Builds an operation graph: tensors, then operations on them, then
/// [`build`](Self::build).
///
/// Graph-level data types are defaults for what is left unset: `io_data_type` for
/// graph inputs and outputs, `intermediate_data_type` for virtual tensors,
/// `compute_data_type` for nodes. See the [module documentation](super) for a complete
/// example.
#[derive(Debug, Clone)]
pub struct GraphBuilder {
    id: u32,
    name: String,
    io_data_type: DataType,
    intermediate_data_type: DataType,
    compute_data_type: DataType,
    preferred_engine_id: Option<i64>,
    override_shape: bool,
    tensors: Vec<TensorInfo>,
    nodes: Vec<NodeEntry>,
    /// Uids the application set, to the tensor that has each.
    uids: HashMap<i64, usize>,
}

impl GraphBuilder {
    /// An empty graph called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            id: NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            io_data_type: DataType::Unset,
            intermediate_data_type: DataType::Unset,
            compute_data_type: DataType::Unset,
            preferred_engine_id: None,
            override_shape: false,
            tensors: Vec::new(),
            nodes: Vec::new(),
            uids: HashMap::new(),
        }
    }

    /// Default type of graph inputs and outputs.
    pub fn io_data_type(mut self, data_type: DataType) -> Self {
        self.io_data_type = data_type;
        self
    }

    /// Default type of virtual tensors (intermediates).
    pub fn intermediate_data_type(mut self, data_type: DataType) -> Self {
        self.intermediate_data_type = data_type;
        self
    }

    /// Default compute (accumulation) type of nodes.
    pub fn compute_data_type(mut self, data_type: DataType) -> Self {
        self.compute_data_type = data_type;
        self
    }

    /// Asks for this engine first.
    pub fn preferred_engine_id(mut self, id: i64) -> Self {
        self.preferred_engine_id = Some(id);
        self
    }

    /// Asks for the engine called `name` first (its id is the FNV-1a hash of the name, so
    /// any engine's name works, registered or not).
    pub fn preferred_engine(self, name: &str) -> Self {
        self.preferred_engine_id(engine_id_for_name_checked(name))
    }

    /// Allows execute-time shape overrides.
    pub fn override_shape_enabled(mut self, enabled: bool) -> Self {
        self.override_shape = enabled;
        self
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of tensors so far (inputs and operation outputs).
    pub fn tensor_count(&self) -> usize {
        self.tensors.len()
    }

    /// Number of nodes so far.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Adds a graph input (or a pass-by-value scalar).
    ///
    /// # Errors
    /// [`FrontendError::InvalidTensor`] for dims, strides or layout that do not describe
    /// a tensor; [`FrontendError::DuplicateUid`] for a uid another tensor has.
    pub fn tensor(&mut self, descriptor: TensorDescriptor) -> Result<Tensor> {
        let info = TensorInfo::from_descriptor(descriptor)?;
        let index = self.tensors.len();
        if let Some(uid) = info.uid {
            self.check_uid_free(uid, index, &info.name)?;
            self.uids.insert(uid, index);
        }
        self.tensors.push(info);
        Ok(self.handle(index))
    }

    /// What the builder knows about a tensor: dims and strides (inferred for outputs),
    /// data type, uid if set, …
    ///
    /// # Errors
    /// [`FrontendError::UnknownTensor`] for a handle of another graph.
    pub fn tensor_info(&self, tensor: Tensor) -> Result<&TensorInfo> {
        let i = self.index(tensor, || "tensor_info".into())?;
        Ok(&self.tensors[i])
    }

    /// Marks a tensor as a graph output (`true`: not virtual, the application binds a
    /// buffer) or back as an intermediate (`false`).
    ///
    /// # Errors
    /// [`FrontendError::UnknownTensor`] for a handle of another graph.
    pub fn set_output(&mut self, tensor: Tensor, is_output: bool) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_output".into())?;
        self.tensors[i].is_virtual = !is_output;
        Ok(self)
    }

    /// Gives a tensor a uid (replacing the one it had, if any).
    ///
    /// # Errors
    /// [`FrontendError::DuplicateUid`] when another tensor has it;
    /// [`FrontendError::UnknownTensor`].
    pub fn set_uid(&mut self, tensor: Tensor, uid: i64) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_uid".into())?;
        self.check_uid_free(uid, i, &self.tensors[i].name)?;
        if let Some(old) = self.tensors[i].uid.replace(uid) {
            self.uids.remove(&old);
        }
        self.uids.insert(uid, i);
        Ok(self)
    }

    /// Renames a tensor.
    ///
    /// # Errors
    /// [`FrontendError::UnknownTensor`].
    pub fn set_name(&mut self, tensor: Tensor, name: impl Into<String>) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_name".into())?;
        self.tensors[i].name = name.into();
        Ok(self)
    }

    /// Sets a tensor's data type (e.g. an output that should not take the io default).
    ///
    /// # Errors
    /// [`FrontendError::UnknownTensor`].
    pub fn set_data_type(&mut self, tensor: Tensor, data_type: DataType) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_data_type".into())?;
        self.tensors[i].data_type = data_type;
        Ok(self)
    }

    /// Replaces a tensor's strides (e.g. to give an output another layout). Operations
    /// added later that derive their output layout from this tensor follow the new one.
    ///
    /// # Errors
    /// [`FrontendError::InvalidTensor`] for strides that do not fit the dims;
    /// [`FrontendError::UnknownTensor`].
    pub fn set_strides(
        &mut self,
        tensor: Tensor,
        strides: impl Into<Vec<i64>>,
    ) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_strides".into())?;
        let strides = strides.into();
        let t = &mut self.tensors[i];
        check_dims_strides(&t.dims, &strides).map_err(|e| FrontendError::InvalidTensor {
            tensor: t.name.clone(),
            reason: e.to_string(),
        })?;
        t.layout = shape::detect_layout(&t.dims, &strides);
        t.strides = strides;
        Ok(self)
    }

    /// Replaces a tensor's strides by packed ones in `layout`.
    ///
    /// # Errors
    /// [`FrontendError::InvalidTensor`] for a layout of another rank;
    /// [`FrontendError::UnknownTensor`].
    pub fn set_layout(&mut self, tensor: Tensor, layout: TensorLayout) -> Result<&mut Self> {
        let i = self.index(tensor, || "set_layout".into())?;
        let t = &mut self.tensors[i];
        let invalid = |reason: String| FrontendError::InvalidTensor {
            tensor: t.name.clone(),
            reason,
        };
        layout
            .check_rank(t.dims.len())
            .map_err(|e| invalid(e.to_string()))?;
        let strides = shape::strides_for(&t.dims, layout).map_err(invalid)?;
        t.strides = strides;
        t.layout = shape::family(layout);
        Ok(self)
    }

    // ----------------------------------------------------------------------------------
    // Operations
    // ----------------------------------------------------------------------------------

    /// Forward convolution `y = conv(x, w)`; `x` is `[N, C, spatial…]` (1 to 3 or more
    /// spatial dims), `w` is `[K, C / groups, kernel…]`.
    ///
    /// Infers `y = [N, K, out…]` with `out = (in + pre + post - (dilation·(kernel-1)+1))
    /// / stride + 1`, laid out like `x`. Groups follow from the channel counts.
    ///
    /// # Errors
    /// Rank mismatches, parameter vectors of the wrong length, channel counts that do
    /// not divide into groups, a filter larger than the padded input, an `output_dims`
    /// that differs from the inferred one.
    pub fn conv_fprop(&mut self, x: Tensor, w: Tensor, attrs: ConvAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "conv_fprop");
        let x = self.input(&node, "x", x)?;
        let w = self.input(&node, "w", w)?;
        let geometry = self.conv_geometry(&node, x, w, &attrs)?;
        let y_dims = shape::conv_output_dims(self.dims(x), self.dims(w), &geometry)
            .map_err(|reason| conv_error(&node, reason))?;
        if let Some(given) = &attrs.output_dims
            && *given != y_dims
        {
            return Err(FrontendError::InvalidAttribute {
                node,
                attribute: "output_dims",
                reason: format!("{given:?} given, but x and w give {y_dims:?}"),
            });
        }
        let y = TensorInfo::output(format!("{node}.y"), y_dims, self.tensors[x].layout)?;
        let mode = attrs.mode;
        let out = self.commit(node, attrs.compute_data_type, vec![y], |o| Op::ConvFprop {
            x,
            w,
            y: o[0],
            geometry,
            mode,
        });
        Ok(out[0])
    }

    /// Convolution data gradient: `dx` from `dy` and `w`. `attrs.output_dims` gives `dx`'s
    /// dims (required); the forward convolution of such an `x` with `w` must give `dy`'s
    /// dims. `dx` is laid out like `dy`.
    ///
    /// # Errors
    /// As [`conv_fprop`](Self::conv_fprop), plus a missing `output_dims` and a `dy` that
    /// does not match them.
    pub fn conv_dgrad(&mut self, dy: Tensor, w: Tensor, attrs: ConvAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "conv_dgrad");
        let dy = self.input(&node, "dy", dy)?;
        let w = self.input(&node, "w", w)?;
        let geometry = self.conv_geometry(&node, dy, w, &attrs)?;
        let dx_dims = self.gradient_dims(&node, &attrs, self.dims(dy).len())?;
        let forward = shape::conv_output_dims(&dx_dims, self.dims(w), &geometry)
            .map_err(|reason| conv_error(&node, reason))?;
        if forward != self.dims(dy) {
            return Err(conv_error(
                &node,
                format!(
                    "dy {} has dims {:?}, but the forward convolution of dx {dx_dims:?} with \
                     w {:?} gives {forward:?}",
                    self.tensors[dy].label(),
                    self.dims(dy),
                    self.dims(w)
                ),
            ));
        }
        let dx = TensorInfo::output(format!("{node}.dx"), dx_dims, self.tensors[dy].layout)?;
        let mode = attrs.mode;
        let out = self.commit(node, attrs.compute_data_type, vec![dx], |o| Op::ConvDgrad {
            dy,
            w,
            dx: o[0],
            geometry,
            mode,
        });
        Ok(out[0])
    }

    /// Convolution weight gradient: `dw` from `x` and `dy`. `attrs.output_dims` gives
    /// `dw`'s dims (required); the forward convolution of `x` with such a `w` must give
    /// `dy`'s dims. `dw` is laid out like `x`.
    ///
    /// # Errors
    /// As [`conv_dgrad`](Self::conv_dgrad).
    pub fn conv_wgrad(&mut self, x: Tensor, dy: Tensor, attrs: ConvAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "conv_wgrad");
        let x = self.input(&node, "x", x)?;
        let dy = self.input(&node, "dy", dy)?;
        let geometry = self.conv_geometry(&node, x, dy, &attrs)?;
        let dw_dims = self.gradient_dims(&node, &attrs, self.dims(x).len())?;
        let forward = shape::conv_output_dims(self.dims(x), &dw_dims, &geometry)
            .map_err(|reason| conv_error(&node, reason))?;
        if forward != self.dims(dy) {
            return Err(conv_error(
                &node,
                format!(
                    "dy {} has dims {:?}, but the forward convolution of x {:?} with \
                     dw {dw_dims:?} gives {forward:?}",
                    self.tensors[dy].label(),
                    self.dims(dy),
                    self.dims(x)
                ),
            ));
        }
        let dw = TensorInfo::output(format!("{node}.dw"), dw_dims, self.tensors[x].layout)?;
        let mode = attrs.mode;
        let out = self.commit(node, attrs.compute_data_type, vec![dw], |o| Op::ConvWgrad {
            x,
            dy,
            dw: o[0],
            geometry,
            mode,
        });
        Ok(out[0])
    }

    /// Batch norm for inference: `y = scale · (x - mean) · inv_variance + bias`. The four
    /// parameters are per channel, `[1, C, 1, …]`; `y` has `x`'s dims and layout.
    ///
    /// # Errors
    /// `x` of rank below 2, parameters of other dims.
    pub fn batchnorm_inference(
        &mut self,
        x: Tensor,
        mean: Tensor,
        inv_variance: Tensor,
        scale: Tensor,
        bias: Tensor,
        attrs: BatchnormInferenceAttrs,
    ) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "batchnorm_inference");
        let x = self.input(&node, "x", x)?;
        let mean = self.input(&node, "mean", mean)?;
        let inv_variance = self.input(&node, "inv_variance", inv_variance)?;
        let scale = self.input(&node, "scale", scale)?;
        let bias = self.input(&node, "bias", bias)?;
        self.expect_min_rank(&node, x, 2)?;
        let c = shape::channel_dims(self.dims(x));
        for t in [mean, inv_variance, scale, bias] {
            self.expect_dims(&node, t, &c)?;
        }
        let y = self.like(&node, "y", x, self.dims(x).to_vec())?;
        let out = self.commit(node, attrs.compute_data_type, vec![y], |o| {
            Op::BatchnormInference {
                x,
                mean,
                inv_variance,
                scale,
                bias,
                y: o[0],
            }
        });
        Ok(out[0])
    }

    /// Batch norm for inference from a variance (hipDNN's
    /// `BatchnormInferenceAttributesVarianceExt`):
    /// `y = scale · (x - mean) / sqrt(variance + epsilon) + bias`. The four parameters
    /// are per channel, `[1, C, 1, …]`; `y` has `x`'s dims and layout.
    ///
    /// # Errors
    /// `x` of rank below 2, parameters of other dims, a non-scalar epsilon.
    pub fn batchnorm_inference_variance(
        &mut self,
        x: Tensor,
        mean: Tensor,
        variance: Tensor,
        scale: Tensor,
        bias: Tensor,
        attrs: BatchnormInferenceVarianceAttrs,
    ) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "batchnorm_inference_variance");
        let x = self.input(&node, "x", x)?;
        let mean = self.input(&node, "mean", mean)?;
        let variance = self.input(&node, "variance", variance)?;
        let scale = self.input(&node, "scale", scale)?;
        let bias = self.input(&node, "bias", bias)?;
        let epsilon = self.input(&node, "epsilon", attrs.epsilon)?;
        self.expect_min_rank(&node, x, 2)?;
        let c = shape::channel_dims(self.dims(x));
        for t in [mean, variance, scale, bias] {
            self.expect_dims(&node, t, &c)?;
        }
        self.expect_scalar(&node, epsilon)?;
        let y = self.like(&node, "y", x, self.dims(x).to_vec())?;
        let out = self.commit(node, attrs.compute_data_type, vec![y], |o| {
            Op::BatchnormInferenceVariance {
                x,
                mean,
                variance,
                scale,
                bias,
                epsilon,
                y: o[0],
            }
        });
        Ok(out[0])
    }

    /// Batch norm for training: normalizes with the batch statistics, which it also
    /// outputs (mean and inverse variance, `[1, C, 1, …]`), and updates running
    /// statistics when [`BatchnormAttrs::running_stats`] is set.
    ///
    /// The saved statistics are optional in the schema: left virtual and unread, they are
    /// left out of the built graph.
    ///
    /// # Errors
    /// `x` of rank below 2, per-channel tensors of other dims, non-scalar epsilon or
    /// momentum.
    pub fn batchnorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        attrs: BatchnormAttrs,
    ) -> Result<BatchnormOutputs> {
        let node = self.node_name(&attrs.name, "batchnorm");
        let x = self.input(&node, "x", x)?;
        let scale = self.input(&node, "scale", scale)?;
        let bias = self.input(&node, "bias", bias)?;
        let epsilon = self.input(&node, "epsilon", attrs.epsilon)?;
        let running = match attrs.running {
            Some((m, v, momentum)) => Some((
                self.input(&node, "prev_running_mean", m)?,
                self.input(&node, "prev_running_variance", v)?,
                self.input(&node, "momentum", momentum)?,
            )),
            None => None,
        };
        let peer_stats = attrs
            .peer_stats
            .iter()
            .map(|&t| self.input(&node, "peer_stats", t))
            .collect::<Result<Vec<_>>>()?;
        self.expect_min_rank(&node, x, 2)?;
        let c = shape::channel_dims(self.dims(x));
        self.expect_dims(&node, scale, &c)?;
        self.expect_dims(&node, bias, &c)?;
        self.expect_scalar(&node, epsilon)?;
        if let Some((m, v, momentum)) = running {
            self.expect_dims(&node, m, &c)?;
            self.expect_dims(&node, v, &c)?;
            self.expect_scalar(&node, momentum)?;
        }
        let mut outputs = vec![
            self.like(&node, "y", x, self.dims(x).to_vec())?,
            self.stats(&node, "mean", x, c.clone())?,
            self.stats(&node, "inv_variance", x, c.clone())?,
        ];
        if running.is_some() {
            outputs.push(self.like(&node, "next_running_mean", x, c.clone())?);
            outputs.push(self.like(&node, "next_running_variance", x, c)?);
        }
        let out = self.commit(node, attrs.compute_data_type, outputs, |o| Op::Batchnorm {
            x,
            scale,
            bias,
            epsilon,
            peer_stats,
            running,
            y: o[0],
            mean: o[1],
            inv_variance: o[2],
            next_running: running.map(|_| (o[3], o[4])),
        });
        Ok(BatchnormOutputs {
            y: out[0],
            mean: out[1],
            inv_variance: out[2],
            next_running_mean: out.get(3).copied(),
            next_running_variance: out.get(4).copied(),
        })
    }

    /// Batch norm backward: `dx` (dims of `x`), `dscale` and `dbias` (`[1, C, 1, …]`)
    /// from `dy`, `x`, `scale` and optionally the saved statistics.
    ///
    /// # Errors
    /// `dy` with other dims than `x`, per-channel tensors of other dims.
    pub fn batchnorm_backward(
        &mut self,
        dy: Tensor,
        x: Tensor,
        scale: Tensor,
        attrs: BatchnormBackwardAttrs,
    ) -> Result<BatchnormBackwardOutputs> {
        let node = self.node_name(&attrs.name, "batchnorm_backward");
        let dy = self.input(&node, "dy", dy)?;
        let x = self.input(&node, "x", x)?;
        let scale = self.input(&node, "scale", scale)?;
        let saved = match attrs.saved {
            Some((m, v)) => Some((
                self.input(&node, "mean", m)?,
                self.input(&node, "inv_variance", v)?,
            )),
            None => None,
        };
        let peer_stats = attrs
            .peer_stats
            .iter()
            .map(|&t| self.input(&node, "peer_stats", t))
            .collect::<Result<Vec<_>>>()?;
        self.expect_min_rank(&node, x, 2)?;
        self.expect_dims(&node, dy, self.dims(x))?;
        let c = shape::channel_dims(self.dims(x));
        self.expect_dims(&node, scale, &c)?;
        if let Some((m, v)) = saved {
            self.expect_dims(&node, m, &c)?;
            self.expect_dims(&node, v, &c)?;
        }
        let outputs = vec![
            self.like(&node, "dx", x, self.dims(x).to_vec())?,
            self.like(&node, "dscale", x, c.clone())?,
            self.like(&node, "dbias", x, c)?,
        ];
        let out = self.commit(node, attrs.compute_data_type, outputs, |o| {
            Op::BatchnormBackward {
                dy,
                x,
                saved,
                scale,
                peer_stats,
                dx: o[0],
                dscale: o[1],
                dbias: o[2],
            }
        });
        Ok(BatchnormBackwardOutputs {
            dx: out[0],
            dscale: out[1],
            dbias: out[2],
        })
    }

    /// Element-wise operation on 1 to 3 inputs (as many as the mode takes, e.g. 1 for
    /// `RELU_FWD`, 2 for `ADD` and the backward activations (`x`, `dy`), 3 for
    /// `BINARY_SELECT`).
    ///
    /// The output's dims are the numpy-style broadcast of the inputs' (right-aligned,
    /// extent 1 repeats); it is laid out like the first input that has those dims.
    ///
    /// # Errors
    /// `UNSET` or unknown modes, the wrong number of inputs, inputs that do not
    /// broadcast, parameters the mode does not take, `GEN_INDEX` without a valid axis.
    pub fn pointwise(&mut self, inputs: &[Tensor], attrs: PointwiseAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "pointwise");
        let mode = attrs.mode;
        let mode_name = mode
            .variant_name()
            .map_or_else(|| format!("value {}", mode.0), str::to_owned);
        let arity = pointwise_arity(mode).ok_or_else(|| FrontendError::InvalidAttribute {
            node: node.clone(),
            attribute: "operation",
            reason: format!("{mode_name} is not a pointwise operation"),
        })?;
        if inputs.len() != arity {
            return Err(FrontendError::Arity {
                node,
                mode: mode_name,
                expected: arity,
                got: inputs.len(),
            });
        }
        const ROLES: [&str; 3] = ["in_0", "in_1", "in_2"];
        let inputs = inputs
            .iter()
            .zip(ROLES)
            .map(|(&t, role)| self.input(&node, role, t))
            .collect::<Result<Vec<_>>>()?;
        let mut out_dims = self.dims(inputs[0]).to_vec();
        for &i in &inputs[1..] {
            out_dims = shape::broadcast(&out_dims, self.dims(i)).ok_or_else(|| {
                FrontendError::Broadcast {
                    node: node.clone(),
                    tensor: self.tensors[i].label(),
                    dims: self.dims(i).to_vec(),
                    target: out_dims.clone(),
                }
            })?;
        }
        let params = PointwiseParams {
            mode,
            relu_lower_clip: attrs.relu_lower_clip,
            relu_upper_clip: attrs.relu_upper_clip,
            relu_lower_clip_slope: attrs.relu_lower_clip_slope,
            axis: attrs.axis,
            swish_beta: attrs.swish_beta,
            elu_alpha: attrs.elu_alpha,
            softplus_beta: attrs.softplus_beta,
        };
        for (attribute, set, modes) in pointwise_parameter_modes(&params) {
            if set && !modes.contains(&mode) {
                return Err(FrontendError::InvalidAttribute {
                    node,
                    attribute,
                    reason: format!("does not apply to mode {mode_name}"),
                });
            }
        }
        if mode == PointwiseMode::GEN_INDEX {
            let rank = out_dims.len();
            match params.axis {
                None => {
                    return Err(FrontendError::MissingAttribute {
                        node,
                        attribute: "axis",
                    });
                }
                Some(axis) if !usize::try_from(axis).is_ok_and(|a| a < rank) => {
                    return Err(FrontendError::InvalidAttribute {
                        node,
                        attribute: "axis",
                        reason: format!("{axis} is not a dimension of a rank-{rank} tensor"),
                    });
                }
                Some(_) => {}
            }
        }
        let layout = inputs
            .iter()
            .find(|&&i| self.dims(i) == out_dims)
            .map_or(TensorLayout::Packed, |&i| self.tensors[i].layout);
        let out = TensorInfo::output(format!("{node}.out"), out_dims, layout)?;
        let result = self.commit(node, attrs.compute_data_type, vec![out], |o| {
            Op::Pointwise {
                params,
                inputs,
                out: o[0],
            }
        });
        Ok(result[0])
    }

    /// Batched matrix product `c = a · b`: `[batch…, m, k] · [batch…, k, n]` gives
    /// `[batch…, m, n]`, the batch dims broadcast numpy-style (so `[b, m, k] · [k, n]`
    /// works). `c` is packed row-major.
    ///
    /// # Errors
    /// Operands of rank below 2, inner dims that differ, batch dims that do not broadcast.
    pub fn matmul(&mut self, a: Tensor, b: Tensor, attrs: MatmulAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "matmul");
        let a = self.input(&node, "a", a)?;
        let b = self.input(&node, "b", b)?;
        self.expect_min_rank(&node, a, 2)?;
        self.expect_min_rank(&node, b, 2)?;
        let c_dims =
            shape::matmul_output_dims(self.dims(a), self.dims(b)).map_err(|e| match e {
                MatmulShapeError::Inner { k_a, k_b } => FrontendError::MatmulInnerDim {
                    node: node.clone(),
                    a_dims: self.dims(a).to_vec(),
                    b_dims: self.dims(b).to_vec(),
                    k_a,
                    k_b,
                },
                MatmulShapeError::Batch => FrontendError::Broadcast {
                    node: node.clone(),
                    tensor: self.tensors[b].label(),
                    dims: self.dims(b).to_vec(),
                    target: self.dims(a).to_vec(),
                },
            })?;
        let c = TensorInfo::output(format!("{node}.c"), c_dims, TensorLayout::Packed)?;
        let out = self.commit(node, attrs.compute_data_type, vec![c], |o| Op::Matmul {
            a,
            b,
            c: o[0],
        });
        Ok(out[0])
    }

    /// Reduction of `x` to `attrs.output_dims` (same rank; 1 where reduced), laid out
    /// like `x`.
    ///
    /// # Errors
    /// `NOT_SET` or unknown modes, missing output dims, output dims that are neither the
    /// input's extent nor 1.
    pub fn reduction(&mut self, x: Tensor, attrs: ReductionAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "reduction");
        let x = self.input(&node, "in", x)?;
        if attrs.mode == ReductionMode::NOT_SET || attrs.mode.variant_name().is_none() {
            return Err(FrontendError::InvalidAttribute {
                node,
                attribute: "mode",
                reason: format!("{:?} is not a reduction operator", attrs.mode),
            });
        }
        let Some(y_dims) = attrs.output_dims else {
            return Err(FrontendError::MissingAttribute {
                node,
                attribute: "output_dims",
            });
        };
        shape::check_reduction(self.dims(x), &y_dims).map_err(|reason| {
            FrontendError::InvalidAttribute {
                node: node.clone(),
                attribute: "output_dims",
                reason,
            }
        })?;
        let y = self.like(&node, "out", x, y_dims)?;
        let (mode, deterministic) = (attrs.mode, attrs.deterministic);
        let out = self.commit(node, attrs.compute_data_type, vec![y], |o| Op::Reduction {
            mode,
            deterministic,
            x,
            y: o[0],
        });
        Ok(out[0])
    }

    /// Pooling (resample forward) of `x` (`[N, C, spatial…]`, 1 to 3 spatial dims) with
    /// `attrs`' window function.
    ///
    /// Infers `y = [N, C, (in + pre + post − window) / stride + 1 …]`, laid out like
    /// `x`. Stride defaults to the window, padding to 0.
    ///
    /// # Errors
    /// A rank outside 3..=5, a `NOT_SET` or unknown mode, parameter vectors of the wrong
    /// length, a window or stride below 1, padding that is negative or not below the
    /// window, a window larger than the padded input.
    pub fn resample_fwd(&mut self, x: Tensor, attrs: ResampleAttrs) -> Result<Tensor> {
        let node = self.node_name(&attrs.name, "resample_fwd");
        let x = self.input(&node, "x", x)?;
        let rank = self.dims(x).len();
        if !(3..=5).contains(&rank) {
            return Err(FrontendError::RankMismatch {
                node,
                tensor: self.tensors[x].label(),
                expected: "3 to 5".into(),
                got: rank,
            });
        }
        let invalid = |attribute, reason| FrontendError::InvalidAttribute {
            node: node.clone(),
            attribute,
            reason,
        };
        if !matches!(
            attrs.mode,
            ResampleMode::MAXPOOL
                | ResampleMode::AVGPOOL_EXCLUDE_PADDING
                | ResampleMode::AVGPOOL_INCLUDE_PADDING
        ) {
            let reason = format!("{:?} is not a pooling mode", attrs.mode);
            return Err(invalid("resample_mode", reason));
        }
        let spatial = rank - 2;
        let window = attrs.window.clone();
        let field = |attribute: &'static str, v: &[i64], default: &[i64], min: i64| {
            let v = if v.is_empty() { default } else { v };
            if v.len() != spatial {
                let reason = format!("{v:?} has {} entries for {spatial} spatial dims", v.len());
                return Err(invalid(attribute, reason));
            }
            if let Some(bad) = v.iter().find(|&&e| e < min) {
                return Err(invalid(attribute, format!("{v:?}: {bad} is below {min}")));
            }
            Ok(v.to_vec())
        };
        let zeros = vec![0; spatial];
        let window = field("window", &window, &[], 1)?;
        let stride = field("stride", &attrs.stride, &window, 1)?;
        let pre = field("pre_padding", &attrs.pre_padding, &zeros, 0)?;
        let post = field("post_padding", &attrs.post_padding, &zeros, 0)?;
        let mut y_dims = self.dims(x)[..2].to_vec();
        for i in 0..spatial {
            for (attribute, pad) in [("pre_padding", pre[i]), ("post_padding", post[i])] {
                if pad >= window[i] {
                    let reason = format!(
                        "{pad} is not below the window {} in spatial dim {i}",
                        window[i]
                    );
                    return Err(invalid(attribute, reason));
                }
            }
            let padded = self.dims(x)[i + 2] + pre[i] + post[i];
            if padded < window[i] {
                let reason = format!(
                    "{} exceeds the padded input {padded} in spatial dim {i}",
                    window[i]
                );
                return Err(invalid("window", reason));
            }
            y_dims.push((padded - window[i]) / stride[i] + 1);
        }
        let y = self.like(&node, "y", x, y_dims)?;
        let (mode, padding_mode) = (attrs.mode, attrs.padding_mode);
        let out = self.commit(node, attrs.compute_data_type, vec![y], |o| {
            Op::ResampleFwd {
                mode,
                padding_mode,
                geometry: [window, stride, pre, post],
                x,
                y: o[0],
            }
        });
        Ok(out[0])
    }

    /// Layer norm over the trailing `normalized_dims` dims of `x` (default: all but the
    /// batch dim). `scale` and `bias` have the normalized dims' extents and 1 elsewhere;
    /// `y` has `x`'s dims and layout. The training phase also outputs `mean` and
    /// `inv_variance` (`[leading…, 1, …]`), left out of the graph when virtual and unread.
    ///
    /// # Errors
    /// `x` of rank below 2, a normalized-dim count outside `1..=rank`, `scale`/`bias` of
    /// other dims, a non-scalar epsilon, a `NOT_SET` phase.
    pub fn layernorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        bias: Tensor,
        attrs: LayernormAttrs,
    ) -> Result<LayernormOutputs> {
        let node = self.node_name(&attrs.name, "layernorm");
        let x = self.input(&node, "x", x)?;
        let scale = self.input(&node, "scale", scale)?;
        let bias = self.input(&node, "bias", bias)?;
        let epsilon = self.input(&node, "epsilon", attrs.epsilon)?;
        self.expect_min_rank(&node, x, 2)?;
        let rank = self.dims(x).len();
        let count = attrs.normalized_dims.unwrap_or(rank as i64 - 1);
        let normalized = usize::try_from(count)
            .ok()
            .filter(|n| (1..=rank).contains(n))
            .ok_or_else(|| FrontendError::InvalidAttribute {
                node: node.clone(),
                attribute: "normalized_dim_count",
                reason: format!("{count} is not between 1 and the rank of x ({rank})"),
            })?;
        let (param, stats) = shape::norm_dims(self.dims(x), normalized);
        self.expect_dims(&node, scale, &param)?;
        self.expect_dims(&node, bias, &param)?;
        self.expect_scalar(&node, epsilon)?;
        let training = self.training(&node, attrs.phase)?;
        let mut outputs = vec![self.like(&node, "y", x, self.dims(x).to_vec())?];
        if training {
            outputs.push(self.stats(&node, "mean", x, stats.clone())?);
            outputs.push(self.stats(&node, "inv_variance", x, stats)?);
        }
        let phase = attrs.phase;
        let out = self.commit(node, attrs.compute_data_type, outputs, |o| Op::Layernorm {
            x,
            scale,
            bias,
            epsilon,
            y: o[0],
            normalized_dim_count: count,
            stats: training.then(|| (o[1], o[2])),
            phase,
        });
        Ok(LayernormOutputs {
            y: out[0],
            mean: out.get(1).copied(),
            inv_variance: out.get(2).copied(),
        })
    }

    /// RMS norm: `y = x / rms(x) · scale (+ bias)`, normalizing over the dims where
    /// `scale` has `x`'s extent (scale has extent 1 on the others). The training phase
    /// also outputs `inv_rms` (dims of `x` with the normalized dims set to 1), left out of
    /// the graph when virtual and unread.
    ///
    /// # Errors
    /// `x` of rank below 2, a `scale` that does not broadcast to `x` at the same rank, a
    /// `bias` with other dims than `scale`, a non-scalar epsilon, a `NOT_SET` phase.
    pub fn rmsnorm(
        &mut self,
        x: Tensor,
        scale: Tensor,
        attrs: RmsnormAttrs,
    ) -> Result<RmsnormOutputs> {
        let node = self.node_name(&attrs.name, "rmsnorm");
        let x = self.input(&node, "x", x)?;
        let scale = self.input(&node, "scale", scale)?;
        let epsilon = self.input(&node, "epsilon", attrs.epsilon)?;
        let bias = match attrs.bias {
            Some(b) => Some(self.input(&node, "bias", b)?),
            None => None,
        };
        self.expect_min_rank(&node, x, 2)?;
        let (xd, sd) = (self.dims(x), self.dims(scale));
        if xd.len() != sd.len() || xd.iter().zip(sd).any(|(&a, &s)| s != 1 && s != a) {
            return Err(FrontendError::Broadcast {
                node,
                tensor: self.tensors[scale].label(),
                dims: sd.to_vec(),
                target: xd.to_vec(),
            });
        }
        let stats: Vec<i64> = xd
            .iter()
            .zip(sd)
            .map(|(&a, &s)| if s == 1 { a } else { 1 })
            .collect();
        if let Some(b) = bias {
            self.expect_dims(&node, b, self.dims(scale))?;
        }
        self.expect_scalar(&node, epsilon)?;
        let training = self.training(&node, attrs.phase)?;
        let mut outputs = vec![self.like(&node, "y", x, self.dims(x).to_vec())?];
        if training {
            outputs.push(self.stats(&node, "inv_rms", x, stats)?);
        }
        let phase = attrs.phase;
        let out = self.commit(node, attrs.compute_data_type, outputs, |o| Op::Rmsnorm {
            x,
            scale,
            epsilon,
            y: o[0],
            bias,
            inv_rms: o.get(1).copied(),
            phase,
        });
        Ok(RmsnormOutputs {
            y: out[0],
            inv_rms: out.get(1).copied(),
        })
    }

    // ----------------------------------------------------------------------------------
    // Build
    // ----------------------------------------------------------------------------------

    /// Assembles and validates the graph.
    ///
    /// Tensors without a uid get the smallest positive uids no tensor has, in creation
    /// order. Optional statistics outputs (batch/layer norm mean and inverse variance,
    /// RMS norm `inv_rms`) that are virtual and unread are left out. The result went
    /// through [`Graph::validate`]: nodes sorted topologically, unset data types filled
    /// from the graph defaults. The builder is not consumed: it can be extended and built
    /// again.
    ///
    /// # Errors
    /// [`FrontendError::Validation`] with the first problem
    /// [`Graph::validate`] finds, e.g. a tensor no node uses, a virtual output nobody
    /// reads (mark it with [`set_output`](Self::set_output)), or a data type left unset
    /// with no graph default.
    pub fn build(&self) -> Result<BuiltGraph> {
        let n = self.tensors.len();
        let mut uids = Vec::with_capacity(n);
        let mut next = 1i64;
        for t in &self.tensors {
            uids.push(t.uid.unwrap_or_else(|| {
                while self.uids.contains_key(&next) {
                    next += 1;
                }
                next += 1;
                next - 1
            }));
        }

        // Which tensors some node reads: from the attribute tables over indices.
        let mut read = vec![false; n];
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        for node in &self.nodes {
            ins.clear();
            outs.clear();
            node.op
                .to_model(&|i| i as i64, &|_| true)
                .tensor_uids(&mut ins, &mut outs);
            for &i in &ins {
                read[i as usize] = true;
            }
        }
        let keep: Vec<bool> = (0..n)
            .map(|i| {
                let t = &self.tensors[i];
                !(t.prunable && t.is_virtual && !read[i])
            })
            .collect();

        let tensors: Vec<TensorAttributes> = (0..n)
            .filter(|&i| keep[i])
            .map(|i| {
                let t = &self.tensors[i];
                TensorAttributes {
                    uid: uids[i],
                    name: t.name.clone(),
                    data_type: t.data_type,
                    strides: t.strides.clone(),
                    dims: t.dims.clone(),
                    is_virtual: t.is_virtual,
                    value: t.value,
                    is_runtime_pass_by_value: t.runtime_pass_by_value,
                    alignment: t.alignment,
                    ..TensorAttributes::default()
                }
            })
            .collect();
        let min_version = if tensors.iter().any(|t| t.alignment != 16) {
            Some(EngineApiVersion::new(1, 3, 0))
        } else if tensors.iter().any(|t| t.is_runtime_pass_by_value) {
            Some(EngineApiVersion::new(1, 2, 0))
        } else {
            None
        };
        let nodes = self
            .nodes
            .iter()
            .map(|node| Node {
                name: node.name.clone(),
                compute_data_type: node.compute_data_type,
                attributes: node.op.to_model(&|i| uids[i], &|i| keep[i]),
            })
            .collect();
        let mut graph = Graph {
            name: self.name.clone(),
            compute_data_type: self.compute_data_type,
            intermediate_data_type: self.intermediate_data_type,
            io_data_type: self.io_data_type,
            tensors,
            nodes,
            preferred_engine_id: self.preferred_engine_id,
            is_override_shape_enabled: self.override_shape,
            min_required_engine_api_version: min_version,
            id: None,
        };
        graph.validate()?;
        tracing::debug!(
            graph = %graph.name,
            tensors = graph.tensors.len(),
            nodes = graph.nodes.len(),
            "frontend graph built"
        );
        Ok(BuiltGraph {
            graph,
            graph_id: self.id,
            uids: (0..n).map(|i| keep[i].then_some(uids[i])).collect(),
        })
    }

    // ----------------------------------------------------------------------------------
    // Helpers
    // ----------------------------------------------------------------------------------

    fn handle(&self, index: usize) -> Tensor {
        Tensor {
            graph: self.id,
            index: u32::try_from(index).expect("fewer than 2^32 tensors"),
        }
    }

    fn index(&self, t: Tensor, context: impl FnOnce() -> String) -> Result<usize> {
        let i = t.index as usize;
        if t.graph != self.id || i >= self.tensors.len() {
            return Err(FrontendError::UnknownTensor { context: context() });
        }
        Ok(i)
    }

    fn input(&self, node: &str, role: &str, t: Tensor) -> Result<usize> {
        self.index(t, || format!("node \"{node}\" input {role}"))
    }

    fn dims(&self, i: usize) -> &[i64] {
        &self.tensors[i].dims
    }

    fn check_uid_free(&self, uid: i64, index: usize, name: &str) -> Result<()> {
        match self.uids.get(&uid) {
            Some(&other) if other != index => Err(FrontendError::DuplicateUid {
                uid,
                first: self.tensors[other].name.clone(),
                second: name.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    fn node_name(&self, given: &str, op: &str) -> String {
        if given.is_empty() {
            format!("{op}_{}", self.nodes.len())
        } else {
            given.to_owned()
        }
    }

    fn expect_min_rank(&self, node: &str, i: usize, min: usize) -> Result<()> {
        let rank = self.dims(i).len();
        if rank < min {
            return Err(FrontendError::RankMismatch {
                node: node.to_owned(),
                tensor: self.tensors[i].label(),
                expected: format!("at least {min}"),
                got: rank,
            });
        }
        Ok(())
    }

    fn expect_dims(&self, node: &str, i: usize, expected: &[i64]) -> Result<()> {
        if self.dims(i) != expected {
            return Err(FrontendError::ShapeMismatch {
                node: node.to_owned(),
                tensor: self.tensors[i].label(),
                expected: expected.to_vec(),
                got: self.dims(i).to_vec(),
            });
        }
        Ok(())
    }

    /// A scalar operand (epsilon, momentum): every extent 1.
    fn expect_scalar(&self, node: &str, i: usize) -> Result<()> {
        self.expect_dims(node, i, &vec![1; self.dims(i).len()])
    }

    /// A virtual output of `node` with `dims`, laid out like tensor `like`.
    fn like(&self, node: &str, field: &str, like: usize, dims: Vec<i64>) -> Result<TensorInfo> {
        TensorInfo::output(format!("{node}.{field}"), dims, self.tensors[like].layout)
    }

    /// An optional statistics output: as [`like`](Self::like), but prunable.
    fn stats(&self, node: &str, field: &str, like: usize, dims: Vec<i64>) -> Result<TensorInfo> {
        let mut t = self.like(node, field, like, dims)?;
        t.prunable = true;
        Ok(t)
    }

    fn training(&self, node: &str, phase: NormFwdPhase) -> Result<bool> {
        match phase {
            NormFwdPhase::INFERENCE => Ok(false),
            NormFwdPhase::TRAINING => Ok(true),
            other => Err(FrontendError::InvalidAttribute {
                node: node.to_owned(),
                attribute: "forward_phase",
                reason: format!("{other:?} is neither INFERENCE nor TRAINING"),
            }),
        }
    }

    /// Checks the operands' ranks and the convolution parameters, filling in defaults.
    /// `data` is the `[N, C, spatial…]` operand (x or dy), `other` the second one.
    fn conv_geometry(
        &self,
        node: &str,
        data: usize,
        other: usize,
        attrs: &ConvAttrs,
    ) -> Result<ConvGeometry> {
        self.expect_min_rank(node, data, 3)?;
        let rank = self.dims(data).len();
        if self.dims(other).len() != rank {
            return Err(FrontendError::RankMismatch {
                node: node.to_owned(),
                tensor: self.tensors[other].label(),
                expected: format!("{rank} (the rank of {})", self.tensors[data].label()),
                got: self.dims(other).len(),
            });
        }
        if attrs.mode != ConvMode::CONVOLUTION && attrs.mode != ConvMode::CROSS_CORRELATION {
            return Err(FrontendError::InvalidAttribute {
                node: node.to_owned(),
                attribute: "conv_mode",
                reason: format!(
                    "{:?} is neither CONVOLUTION nor CROSS_CORRELATION",
                    attrs.mode
                ),
            });
        }
        let spatial = rank - 2;
        let field = |attribute: &'static str, v: &[i64], default: i64, min: i64| {
            if v.is_empty() {
                return Ok(vec![default; spatial]);
            }
            let invalid = |reason| FrontendError::InvalidAttribute {
                node: node.to_owned(),
                attribute,
                reason,
            };
            if v.len() != spatial {
                return Err(invalid(format!(
                    "{v:?} has {} entries for {spatial} spatial dims",
                    v.len()
                )));
            }
            if let Some(bad) = v.iter().find(|&&e| e < min) {
                return Err(invalid(format!("{v:?}: {bad} is below {min}")));
            }
            Ok(v.to_vec())
        };
        Ok(ConvGeometry {
            pre_padding: field("pre_padding", &attrs.pre_padding, 0, 0)?,
            post_padding: field("post_padding", &attrs.post_padding, 0, 0)?,
            stride: field("stride", &attrs.stride, 1, 1)?,
            dilation: field("dilation", &attrs.dilation, 1, 1)?,
        })
    }

    /// The output dims a gradient convolution was given: required, of rank `rank`,
    /// positive.
    fn gradient_dims(&self, node: &str, attrs: &ConvAttrs, rank: usize) -> Result<Vec<i64>> {
        let dims = attrs
            .output_dims
            .clone()
            .ok_or_else(|| FrontendError::MissingAttribute {
                node: node.to_owned(),
                attribute: "output_dims",
            })?;
        if dims.len() != rank || dims.iter().any(|&d| d <= 0) {
            return Err(FrontendError::InvalidAttribute {
                node: node.to_owned(),
                attribute: "output_dims",
                reason: format!("{dims:?} are not {rank} positive extents"),
            });
        }
        Ok(dims)
    }

    /// Adds the outputs and the node; returns the outputs' handles.
    fn commit(
        &mut self,
        name: String,
        compute_data_type: DataType,
        outputs: Vec<TensorInfo>,
        op: impl FnOnce(&[usize]) -> Op,
    ) -> Vec<Tensor> {
        let first = self.tensors.len();
        let indices: Vec<usize> = (first..first + outputs.len()).collect();
        self.tensors.extend(outputs);
        self.nodes.push(NodeEntry {
            name,
            compute_data_type,
            op: op(&indices),
        });
        indices.into_iter().map(|i| self.handle(i)).collect()
    }
}

fn conv_error(node: &str, reason: String) -> FrontendError {
    FrontendError::Convolution {
        node: node.to_owned(),
        reason,
    }
}

/// A validated graph, with the uid of each builder tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltGraph {
    graph: Graph,
    graph_id: u32,
    /// Per builder tensor, its uid (`None` if left out of the graph).
    uids: Vec<Option<i64>>,
}

impl BuiltGraph {
    /// The graph, validated and sorted.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Takes the graph out.
    pub fn into_graph(self) -> Graph {
        self.graph
    }

    /// The uid of a tensor (to bind its buffer at execute time); `None` for a handle of
    /// another graph, a tensor added after the build, or an optional output left out.
    pub fn uid(&self, tensor: Tensor) -> Option<i64> {
        if tensor.graph != self.graph_id {
            return None;
        }
        self.uids.get(tensor.index as usize).copied().flatten()
    }

    /// The FlatBuffer bytes plugins receive.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.graph.to_bytes()
    }

    /// The JSON form of the graph (`docs/graph-json.md`).
    pub fn to_json(&self) -> String {
        self.graph.to_json()
    }
}
