//! A whole-graph interpreter over the reference kernels: hipDNN's
//! `CpuReferenceGraphExecutor` in miniature.
//!
//! Nodes run in order (a validated graph is topologically sorted). Every tensor a node
//! writes is rounded to its data type (virtual ones to their own type, which is the
//! graph's intermediate type unless the tensor sets one) before the next node reads it,
//! as a kernel that stores it would: a virtual HALF tensor holds HALF values, and an
//! engine that keeps the intermediate in registers must round it the same way.
//! Scalars (`epsilon`, `momentum`) are read from the tensor's pass-by-value `value`, or
//! else from the first element of its buffer.
//!
//! Memory is bounded before anything is allocated: a tensor is held packed, as its
//! elements only, when it is virtual (whatever strides the graph gives it) or when its
//! strides address more than its elements (a sparse layout; its buffer is then read and
//! written element by element, touching only the pages its elements are on), and by its
//! strides' span otherwise (a broadcast input is as small as its buffer). The sum, as
//! `f32`, must stay within [`reference_max_bytes`]. Allocations that fail anyway are
//! errors, not aborts.

use std::collections::BTreeMap;

use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{ConvGeometryRef, Graph, NodeAttributes, TensorAttributes};

use crate::data::{byte_len, decode, decode_logical, encode_into, round_to};
use crate::kernels::{self, ConvParams, PointwiseParams, ResampleParams, RunningStats};
use crate::tensor::{HostTensor, dims_usize, row_major_strides, span};

/// Environment variable bounding the memory [`execute_graph`] may use for a graph's
/// tensors, in bytes (decimal or `0x` hex).
pub const REFERENCE_MAX_BYTES_ENV: &str = "HIPDNN_REFERENCE_MAX_BYTES";

/// The bound when [`REFERENCE_MAX_BYTES_ENV`] is unset: 16 GiB, room for the `f32`
/// copies of graphs far larger than the reference can run in reasonable time.
pub const DEFAULT_REFERENCE_MAX_BYTES: u64 = 16 << 30;

/// The bound [`execute_graph`] applies: [`REFERENCE_MAX_BYTES_ENV`] when it is set to a
/// positive integer, else [`DEFAULT_REFERENCE_MAX_BYTES`].
pub fn reference_max_bytes() -> u64 {
    std::env::var(REFERENCE_MAX_BYTES_ENV)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => v.parse().ok(),
            }
        })
        .filter(|&v| v > 0)
        .unwrap_or(DEFAULT_REFERENCE_MAX_BYTES)
}

/// Runs `graph` on the host with the references. `buffers` holds every non-virtual,
/// non-scalar tensor's bytes (its data type, laid out by its strides); outputs are
/// overwritten in place.
///
/// # Errors
/// A missing or mis-sized buffer, a node type or mode the references do not cover,
/// inconsistent shapes (the message names the node), or tensors needing more memory
/// than [`reference_max_bytes`].
pub fn execute_graph(graph: &Graph, buffers: &mut BTreeMap<i64, Vec<u8>>) -> Result<(), String> {
    execute_graph_within(graph, buffers, reference_max_bytes())
}

/// The `f32` storage the executor holds for tensor `t`: its element count when it is
/// virtual or its strides address more than that (held packed, see [`held_strides`]),
/// else its strides' span (a broadcast input is held as its buffer is). `None` on
/// overflow.
fn storage_elements(t: &TensorAttributes) -> Option<usize> {
    let dims: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    let elements = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
    if t.is_virtual {
        return Some(elements);
    }
    let strides: Vec<usize> = t
        .strides
        .iter()
        .map(|&s| usize::try_from(s).ok())
        .collect::<Option<_>>()?;
    if dims.contains(&0) {
        return Some(0);
    }
    let reach = dims.iter().zip(&strides).try_fold(0usize, |n, (&d, &s)| {
        n.checked_add(d.checked_sub(1)?.checked_mul(s)?)
    })?;
    Some(reach.checked_add(1)?.min(elements))
}

/// The strides the executor holds tensor `t` (dims `dims`) with: packed when it is
/// virtual (its strides are only a layout hint) or when its strides address more than
/// its elements (a sparse layout: eight elements strided 2²⁸ apart are eight values
/// here, not a buffer's 2³¹), else its own.
fn held_strides(t: &TensorAttributes, dims: &[usize]) -> Vec<usize> {
    let strides = dims_usize(&t.strides);
    if t.is_virtual || span(dims, &strides) > dims.iter().product::<usize>() {
        row_major_strides(dims)
    } else {
        strides
    }
}

/// [`execute_graph`] with an explicit memory bound, in bytes.
///
/// # Errors
/// As [`execute_graph`].
pub fn execute_graph_within(
    graph: &Graph,
    buffers: &mut BTreeMap<i64, Vec<u8>>,
    max_bytes: u64,
) -> Result<(), String> {
    // Every tensor once; a written one with a buffer twice (decoded, then computed).
    let (mut ins, mut written) = (Vec::new(), Vec::new());
    for node in &graph.nodes {
        node.attributes.tensor_uids(&mut ins, &mut written);
    }
    let mut needed: u64 = 0;
    for t in graph.tensors.iter().filter(|t| t.value.is_none()) {
        let copies = if !t.is_virtual && written.contains(&t.uid) {
            2
        } else {
            1
        };
        let bytes = storage_elements(t)
            .and_then(|n| u64::try_from(n).ok())
            .and_then(|n| n.checked_mul(4 * copies))
            .unwrap_or(u64::MAX);
        needed = needed.saturating_add(bytes);
    }
    if needed > max_bytes {
        return Err(format!(
            "the graph's tensors need {needed} bytes of f32 storage, above the reference's \
             limit of {max_bytes} ({REFERENCE_MAX_BYTES_ENV})"
        ));
    }
    let mut ex = Executor {
        graph,
        values: BTreeMap::new(),
    };
    for t in &graph.tensors {
        if t.is_virtual || t.value.is_some() {
            continue;
        }
        if let Some(bytes) = buffers.get(&t.uid) {
            let (dims, strides) = (dims_usize(&t.dims), dims_usize(&t.strides));
            let held = held_strides(t, &dims);
            let v = if held == strides {
                decode(data_type(graph, t), bytes, &dims, &strides)
            } else {
                decode_logical(data_type(graph, t), bytes, &dims, &strides)
                    .map(|v| HostTensor::from_vec(dims.clone(), &v))
            }
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
        let (dims, strides) = (dims_usize(&t.dims), dims_usize(&t.strides));
        let dt = data_type(graph, t);
        let expected = byte_len(dt, &dims, &strides).map_err(|e| e.to_string())?;
        if expected != slot.len() {
            return Err(format!(
                "tensor \"{}\": buffer has {} bytes, expected {expected}",
                t.name,
                slot.len(),
            ));
        }
        // Element by element at the tensor's offsets (only the pages they are on).
        encode_into(dt, &v.logical(), &dims, &strides, slot).map_err(|e| e.to_string())?;
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

    /// A zeroed tensor for `uid` to be written: laid out by its strides when it has a
    /// buffer, packed when it is virtual (its strides are only a layout hint, and may
    /// span far more than its elements).
    fn out(&self, uid: i64) -> Result<HostTensor, String> {
        let t = self.attrs(uid)?;
        let dims = dims_usize(&t.dims);
        let strides = held_strides(t, &dims);
        let elements = span(&dims, &strides);
        HostTensor::try_zeros(dims, strides).map_err(|_| {
            format!(
                "tensor \"{}\" (uid {uid}): cannot allocate {elements} f32 values",
                t.name
            )
        })
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

#[cfg(test)]
mod tests {
    use hipdnn_flatbuffers_sdk::model::{Node, PointwiseAttributes};
    use hipdnn_flatbuffers_sdk::wire::PointwiseMode;

    use super::*;
    use crate::data::{DataGen, encode};

    fn tensor(uid: i64, name: &str, dims: &[i64], strides: &[i64]) -> TensorAttributes {
        TensorAttributes {
            uid,
            name: name.into(),
            data_type: DataType::Float,
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            ..TensorAttributes::default()
        }
    }

    fn relu(name: &str, x: i64, y: i64) -> Node {
        Node::new(
            name,
            PointwiseAttributes {
                operation: PointwiseMode::RELU_FWD,
                in_0_tensor_uid: x,
                out_0_tensor_uid: y,
                ..PointwiseAttributes::default()
            },
        )
    }

    /// x → ReLU → t (virtual) → ReLU → y, over `[4, 8]`; `t` has strides `t_strides`.
    fn two_relus(t_strides: &[i64]) -> Graph {
        let mut t = tensor(2, "t", &[4, 8], t_strides);
        t.is_virtual = true;
        Graph {
            name: "two_relus".into(),
            io_data_type: DataType::Float,
            intermediate_data_type: DataType::Float,
            compute_data_type: DataType::Float,
            tensors: vec![
                tensor(1, "x", &[4, 8], &[8, 1]),
                t,
                tensor(3, "y", &[4, 8], &[8, 1]),
            ],
            nodes: vec![relu("a", 1, 2), relu("b", 2, 3)],
            ..Graph::default()
        }
    }

    fn inputs(graph: &Graph) -> BTreeMap<i64, Vec<u8>> {
        let x = DataGen::new(3).values(32, -1.0, 1.0, DataType::Float);
        let x = HostTensor::from_vec([4, 8], &x);
        BTreeMap::from([
            (1, encode(DataType::Float, &x).unwrap()),
            (3, vec![0; 32 * 4]),
        ])
        .into_iter()
        .filter(|(uid, _)| graph.tensors.iter().any(|t| t.uid == *uid))
        .collect()
    }

    /// A virtual tensor whose strides span 2³⁶ elements (256 GiB as f32) is held packed:
    /// the graph runs, in no time, and gives what packed strides give.
    #[test]
    fn a_virtual_tensor_with_huge_strides_is_held_packed() {
        let packed = two_relus(&[8, 1]);
        let mut expected = inputs(&packed);
        execute_graph(&packed, &mut expected).unwrap();
        let huge = two_relus(&[1 << 33, 1 << 30]);
        let mut got = inputs(&huge);
        execute_graph(&huge, &mut got).unwrap();
        assert_eq!(got, expected);
        assert!(expected[&3].iter().any(|&b| b != 0));
    }

    /// Input and output buffers with sparse strides (4 × 8 elements, rows 2²⁰ apart:
    /// 12 MiB of buffer each) are held as their 32 elements: within a bound of 512
    /// bytes, giving the packed graph's values at the buffers' offsets and leaving the
    /// bytes between them as they were.
    #[test]
    fn sparse_buffers_are_held_as_their_elements() {
        let packed = two_relus(&[8, 1]);
        let mut expected = inputs(&packed);
        execute_graph(&packed, &mut expected).unwrap();
        let want = decode_logical(DataType::Float, &expected[&3], &[4, 8], &[8, 1]).unwrap();

        let mut sparse = packed.clone();
        let strides = [1i64 << 20, 1];
        for uid in [1, 3] {
            let t = sparse.tensors.iter_mut().find(|t| t.uid == uid).unwrap();
            t.strides = strides.to_vec();
        }
        let len = byte_len(DataType::Float, &[4, 8], &[1 << 20, 1]).unwrap();
        let x = decode_logical(DataType::Float, &expected[&1], &[4, 8], &[8, 1]).unwrap();
        let mut x_bytes = vec![0u8; len];
        encode_into(DataType::Float, &x, &[4, 8], &[1 << 20, 1], &mut x_bytes).unwrap();
        let mut buffers = BTreeMap::from([(1, x_bytes), (3, vec![0xEE; len])]);
        execute_graph_within(&sparse, &mut buffers, 512).unwrap();
        let got = decode_logical(DataType::Float, &buffers[&3], &[4, 8], &[1 << 20, 1]).unwrap();
        assert_eq!(got, want);
        assert!(buffers[&3][8 * 4..(1 << 20) * 4].iter().all(|&b| b == 0xEE));
    }

    /// Tensors beyond the memory bound are refused before anything is allocated, with
    /// the bound named; a failed allocation is an error, not an abort.
    #[test]
    fn graphs_beyond_the_reference_memory_bound_are_refused() {
        let g = two_relus(&[8, 1]);
        // x (128 bytes) + t (128) + y (twice: decoded, then computed).
        assert!(execute_graph_within(&g, &mut inputs(&g), 512).is_ok());
        let error = execute_graph_within(&g, &mut inputs(&g), 511).unwrap_err();
        assert!(
            error.contains("need 512 bytes") && error.contains(REFERENCE_MAX_BYTES_ENV),
            "{error}"
        );
        assert!(HostTensor::try_zeros([usize::MAX / 8], [1]).is_err());
    }
}
