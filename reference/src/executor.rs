//! A whole-graph interpreter over the reference kernels: hipDNN's
//! `CpuReferenceGraphExecutor` in miniature.
//!
//! Nodes run in order (a validated graph is topologically sorted). Every tensor a node
//! writes is rounded to its data type (virtual ones to the graph's intermediate type)
//! before the next node reads it, as a kernel that stores it would. Scalars
//! (`epsilon`, `momentum`) are read from the tensor's pass-by-value `value`, or else
//! from the first element of its buffer.

use std::collections::BTreeMap;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{ConvGeometryRef, Graph, NodeAttributes, TensorAttributes};

use crate::data::{decode, encode, round_to};
use crate::kernels::{self, ConvParams, PointwiseParams, ResampleParams, RunningStats};
use crate::tensor::{HostTensor, dims_usize};

/// Runs `graph` on the host with the references. `buffers` holds every non-virtual,
/// non-scalar tensor's bytes (its data type, laid out by its strides); outputs are
/// overwritten in place.
///
/// # Errors
/// A missing or mis-sized buffer, a node type or mode the references do not cover, or
/// inconsistent shapes; the message names the node.
pub fn execute_graph(graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
    let mut ex = Executor {
        graph,
        values: BTreeMap::new(),
    };
    for t in &graph.tensors {
        if t.is_virtual || t.value.is_some() {
            continue;
        }
        if let Some(bytes) = buffers.get(&t.uid) {
            let v = decode(
                data_type(graph, t),
                bytes,
                &dims_usize(&t.dims),
                &dims_usize(&t.strides),
            )
            .map_err(|e| format!("tensor \"{}\" (uid {}): {e}", t.name, t.uid))?;
            ex.values.insert(t.uid, v);
        }
    }
    for node in &graph.nodes {
        let written = ex
            .run(&node.attributes)
            .map_err(|e| format!("node \"{}\": {e}", node.name))?;
        for (uid, mut value) in written {
            let t = ex.attrs(uid)?;
            let dt = data_type(graph, t);
            value.map_inplace(|v| round_to(dt, v));
            ex.values.insert(uid, value);
        }
    }
    for t in &graph.tensors {
        if t.is_virtual || t.value.is_some() {
            continue;
        }
        let Some(slot) = buffers.get_mut(&t.uid) else {
            continue;
        };
        let Some(v) = ex.values.get(&t.uid) else {
            continue;
        };
        let bytes = encode(data_type(graph, t), v).map_err(|e| e.to_string())?;
        if bytes.len() != slot.len() {
            return Err(format!(
                "tensor \"{}\": buffer has {} bytes, expected {}",
                t.name,
                slot.len(),
                bytes.len()
            ));
        }
        *slot = bytes;
    }
    Ok(())
}

/// A tensor's effective data type (graph defaults applied).
fn data_type(graph: &Graph, t: &TensorAttributes) -> DataType {
    match t.data_type {
        DataType::Unset if t.is_virtual => graph.intermediate_data_type,
        DataType::Unset => graph.io_data_type,
        dt => dt,
    }
}

struct Executor<'g> {
    graph: &'g Graph,
    values: BTreeMap<i64, HostTensor>,
}

type Outputs = Vec<(i64, HostTensor)>;

impl Executor<'_> {
    fn attrs(&self, uid: i64) -> Result<&TensorAttributes, String> {
        self.graph
            .tensors
            .iter()
            .find(|t| t.uid == uid)
            .ok_or_else(|| format!("no tensor with uid {uid}"))
    }

    fn get(&self, uid: i64) -> Result<&HostTensor, String> {
        self.values.get(&uid).ok_or_else(|| {
            let name = self.attrs(uid).map(|t| t.name.as_str()).unwrap_or("?");
            format!("tensor \"{name}\" (uid {uid}) has no value (missing buffer?)")
        })
    }

    fn scalar(&self, uid: i64) -> Result<f32, String> {
        let t = self.attrs(uid)?;
        match t.value {
            Some(v) => Ok(v.as_f64() as f32),
            None => self
                .get(uid)?
                .data
                .first()
                .copied()
                .ok_or_else(|| format!("scalar \"{}\" is empty", t.name)),
        }
    }

    fn out(&self, uid: i64) -> Result<HostTensor, String> {
        let t = self.attrs(uid)?;
        Ok(HostTensor::zeros(
            dims_usize(&t.dims),
            dims_usize(&t.strides),
        ))
    }

    fn per_channel(&self, uid: i64, values: &[f32]) -> Result<(i64, HostTensor), String> {
        let mut t = self.out(uid)?;
        if t.numel() != values.len() {
            return Err(format!(
                "tensor uid {uid} does not hold {} values",
                values.len()
            ));
        }
        let mut it = values.iter();
        t.map_inplace(|_| *it.next().expect("counted"));
        Ok((uid, t))
    }

    fn run(&self, attributes: &NodeAttributes) -> Result<Outputs, String> {
        let e = |e: kernels::ReferenceError| e.to_string();
        let conv = |g: ConvGeometryRef<'_>| ConvParams {
            pre_padding: dims_usize(g.pre_padding),
            post_padding: dims_usize(g.post_padding),
            stride: dims_usize(g.stride),
            dilation: dims_usize(g.dilation),
            mode: g.conv_mode,
        };
        Ok(match attributes {
            NodeAttributes::ConvolutionFwdAttributes(a) => {
                let p = conv(a.geometry());
                let mut y = self.out(a.y_tensor_uid)?;
                kernels::conv_fprop(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.w_tensor_uid)?,
                    &mut y,
                    &p,
                )
                .map_err(e)?;
                vec![(a.y_tensor_uid, y)]
            }
            NodeAttributes::ConvolutionBwdAttributes(a) => {
                let p = conv(a.geometry());
                let mut dx = self.out(a.dx_tensor_uid)?;
                kernels::conv_dgrad(
                    self.get(a.dy_tensor_uid)?,
                    self.get(a.w_tensor_uid)?,
                    &mut dx,
                    &p,
                )
                .map_err(e)?;
                vec![(a.dx_tensor_uid, dx)]
            }
            NodeAttributes::ConvolutionWrwAttributes(a) => {
                let p = conv(a.geometry());
                let mut dw = self.out(a.dw_tensor_uid)?;
                kernels::conv_wgrad(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.dy_tensor_uid)?,
                    &mut dw,
                    &p,
                )
                .map_err(e)?;
                vec![(a.dw_tensor_uid, dw)]
            }
            NodeAttributes::BatchnormInferenceAttributes(a) => {
                let mut y = self.out(a.y_tensor_uid)?;
                kernels::batchnorm_inference(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.mean_tensor_uid)?,
                    self.get(a.inv_variance_tensor_uid)?,
                    self.get(a.scale_tensor_uid)?,
                    self.get(a.bias_tensor_uid)?,
                    &mut y,
                )
                .map_err(e)?;
                vec![(a.y_tensor_uid, y)]
            }
            NodeAttributes::BatchnormInferenceAttributesVarianceExt(a) => {
                let mut y = self.out(a.y_tensor_uid)?;
                kernels::batchnorm_inference_variance(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.mean_tensor_uid)?,
                    self.get(a.variance_tensor_uid)?,
                    self.get(a.scale_tensor_uid)?,
                    self.get(a.bias_tensor_uid)?,
                    self.scalar(a.epsilon_tensor_uid)?,
                    &mut y,
                )
                .map_err(e)?;
                vec![(a.y_tensor_uid, y)]
            }
            NodeAttributes::BatchnormAttributes(a) => {
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err(
                        "peer statistics (multi-device batch norm) are not supported".into(),
                    );
                }
                let running = match (
                    a.prev_running_mean_tensor_uid,
                    a.prev_running_variance_tensor_uid,
                ) {
                    (Some(m), Some(v)) => Some(RunningStats {
                        mean: self.get(m)?,
                        variance: self.get(v)?,
                        momentum: match a.momentum_tensor_uid {
                            Some(uid) => self.scalar(uid)?,
                            None => 0.1,
                        },
                    }),
                    _ => None,
                };
                let mut y = self.out(a.y_tensor_uid)?;
                let s = kernels::batchnorm_training(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.scale_tensor_uid)?,
                    self.get(a.bias_tensor_uid)?,
                    self.scalar(a.epsilon_tensor_uid)?,
                    running,
                    &mut y,
                )
                .map_err(e)?;
                let mut outs = vec![(a.y_tensor_uid, y)];
                if let Some(uid) = a.mean_tensor_uid {
                    outs.push(self.per_channel(uid, &s.mean)?);
                }
                if let Some(uid) = a.inv_variance_tensor_uid {
                    outs.push(self.per_channel(uid, &s.inv_variance)?);
                }
                if let (Some(uid), Some(v)) = (a.next_running_mean_tensor_uid, &s.next_running_mean)
                {
                    outs.push(self.per_channel(uid, v)?);
                }
                if let (Some(uid), Some(v)) =
                    (a.next_running_variance_tensor_uid, &s.next_running_variance)
                {
                    outs.push(self.per_channel(uid, v)?);
                }
                outs
            }
            NodeAttributes::BatchnormBackwardAttributes(a) => {
                let (Some(mean), Some(inv)) = (a.mean_tensor_uid, a.inv_variance_tensor_uid) else {
                    return Err("batch norm backward needs the saved mean and inv_variance".into());
                };
                if !a.peer_stats_tensor_uid.is_empty() {
                    return Err(
                        "peer statistics (multi-device batch norm) are not supported".into(),
                    );
                }
                let mut dx = self.out(a.dx_tensor_uid)?;
                let g = kernels::batchnorm_backward(
                    self.get(a.dy_tensor_uid)?,
                    self.get(a.x_tensor_uid)?,
                    self.get(mean)?,
                    self.get(inv)?,
                    self.get(a.scale_tensor_uid)?,
                    &mut dx,
                )
                .map_err(e)?;
                vec![
                    (a.dx_tensor_uid, dx),
                    self.per_channel(a.dscale_tensor_uid, &g.dscale)?,
                    self.per_channel(a.dbias_tensor_uid, &g.dbias)?,
                ]
            }
            NodeAttributes::MatmulAttributes(a) => {
                let mut c = self.out(a.c_tensor_uid)?;
                kernels::matmul(self.get(a.a_tensor_uid)?, self.get(a.b_tensor_uid)?, &mut c)
                    .map_err(e)?;
                vec![(a.c_tensor_uid, c)]
            }
            NodeAttributes::PointwiseAttributes(a) => {
                let mut inputs = vec![self.get(a.in_0_tensor_uid)?];
                for uid in [a.in_1_tensor_uid, a.in_2_tensor_uid].into_iter().flatten() {
                    inputs.push(self.get(uid)?);
                }
                let mut out = self.out(a.out_0_tensor_uid)?;
                kernels::pointwise(&PointwiseParams::from_attributes(a), &inputs, &mut out)
                    .map_err(e)?;
                vec![(a.out_0_tensor_uid, out)]
            }
            NodeAttributes::ReductionAttributes(a) => {
                let mut out = self.out(a.out_tensor_uid)?;
                kernels::reduction(a.mode, self.get(a.in_tensor_uid)?, &mut out).map_err(e)?;
                vec![(a.out_tensor_uid, out)]
            }
            NodeAttributes::ResampleFwdAttributes(a) => {
                if a.generate_index || a.index_tensor_uid.is_some() {
                    return Err("resample index outputs (generate_index) are not supported".into());
                }
                let geometry = |name: &str, v: &[i64]| {
                    v.iter()
                        .map(|&e| usize::try_from(e))
                        .collect::<Result<Vec<usize>, _>>()
                        .map_err(|_| format!("resample {name} {v:?} has a negative entry"))
                };
                let p = ResampleParams {
                    pre_padding: geometry("pre_padding", &a.pre_padding)?,
                    post_padding: geometry("post_padding", &a.post_padding)?,
                    stride: geometry("stride", &a.stride)?,
                    window: geometry("window", &a.window)?,
                    mode: a.resample_mode,
                    padding_mode: a.padding_mode,
                };
                let mut y = self.out(a.y_tensor_uid)?;
                kernels::resample_fwd(self.get(a.x_tensor_uid)?, &mut y, &p).map_err(e)?;
                vec![(a.y_tensor_uid, y)]
            }
            NodeAttributes::LayernormAttributes(a) => {
                let n = usize::try_from(a.normalized_dim_count)
                    .map_err(|_| format!("normalized_dim_count {}", a.normalized_dim_count))?;
                let mut y = self.out(a.y_tensor_uid)?;
                let s = kernels::layernorm(
                    self.get(a.x_tensor_uid)?,
                    self.get(a.scale_tensor_uid)?,
                    self.get(a.bias_tensor_uid)?,
                    self.scalar(a.epsilon_tensor_uid)?,
                    n,
                    &mut y,
                )
                .map_err(e)?;
                let mut outs = vec![(a.y_tensor_uid, y)];
                if let Some(uid) = a.mean_tensor_uid {
                    outs.push(self.per_channel(uid, &s.mean)?);
                }
                if let Some(uid) = a.inv_variance_tensor_uid {
                    outs.push(self.per_channel(uid, &s.inv)?);
                }
                outs
            }
            NodeAttributes::RMSNormAttributes(a) => {
                let x = self.get(a.x_tensor_uid)?;
                let bias = a.bias_tensor_uid.map(|u| self.get(u)).transpose()?;
                let mut y = self.out(a.y_tensor_uid)?;
                let s = kernels::rmsnorm(
                    x,
                    self.get(a.scale_tensor_uid)?,
                    bias,
                    self.scalar(a.epsilon_tensor_uid)?,
                    x.rank().saturating_sub(1),
                    &mut y,
                )
                .map_err(e)?;
                let mut outs = vec![(a.y_tensor_uid, y)];
                if let Some(uid) = a.inv_rms_tensor_uid {
                    outs.push(self.per_channel(uid, &s.inv)?);
                }
                outs
            }
            other => {
                return Err(format!("no reference for {} nodes", other.type_name()));
            }
        })
    }
}
