//! The expected outputs of a case, computed op by op with the references
//! (independently of the whole-graph interpreter in [`crate::executor`], so the suite can
//! test that interpreter too).

use std::collections::BTreeMap;

use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::wire::{PaddingMode, PointwiseMode, ResampleMode};

use super::prepare::tensor_attrs;
use super::{Case, Op};
use crate::graphs::{self, uid_of};
use crate::reference::{self, PointwiseParams, ReferenceError, RunningStats};
use crate::tensor::{HostTensor, dims_usize};

impl Case {
    /// The expected value of every output tensor, by uid, computed op by op with the
    /// references (independently of [`crate::executor`]).
    pub(super) fn expected_outputs(
        &self,
        graph: &Graph,
        inputs: &BTreeMap<i64, HostTensor>,
    ) -> Result<BTreeMap<i64, HostTensor>, ReferenceError> {
        let get = |name: &str| &inputs[&uid_of(graph, name)];
        let out = |name: &str| {
            let t = tensor_attrs(graph, uid_of(graph, name));
            HostTensor::zeros(dims_usize(&t.dims), dims_usize(&t.strides))
        };
        let per_channel = |name: &str, values: &[f32]| {
            let mut t = out(name);
            let mut it = values.iter();
            t.map_inplace(|_| *it.next().expect("one value per channel"));
            (uid_of(graph, name), t)
        };
        let mut results = BTreeMap::new();
        let mut put = |name: &str, t: HostTensor| {
            results.insert(uid_of(graph, name), t);
        };
        match &self.op {
            Op::ConvFprop(s) => {
                let mut y = out("y");
                reference::conv_fprop(get("x"), get("w"), &mut y, &s.params)?;
                put("y", y);
            }
            Op::ConvBiasRelu(s) => {
                let mut conv = HostTensor::packed(dims_usize(&s.y_dims()));
                reference::conv_fprop(get("x"), get("w"), &mut conv, &s.params)?;
                let mut biased = HostTensor::packed(conv.dims.clone());
                let add = PointwiseParams::new(PointwiseMode::ADD);
                reference::pointwise(&add, &[&conv, get("bias")], &mut biased)?;
                let mut y = out("y");
                let relu = PointwiseParams::new(PointwiseMode::RELU_FWD);
                reference::pointwise(&relu, &[&biased], &mut y)?;
                put("y", y);
            }
            Op::ConvRelu(s) => {
                let mut conv = HostTensor::packed(dims_usize(&s.y_dims()));
                reference::conv_fprop(get("x"), get("w"), &mut conv, &s.params)?;
                let mut y = out("y");
                let relu = PointwiseParams::new(PointwiseMode::RELU_FWD);
                reference::pointwise(&relu, &[&conv], &mut y)?;
                put("y", y);
            }
            Op::ConvDgrad(s) => {
                let mut dx = out("dx");
                reference::conv_dgrad(get("dy"), get("w"), &mut dx, &s.params)?;
                put("dx", dx);
            }
            Op::ConvWgrad(s) => {
                let mut dw = out("dw");
                reference::conv_wgrad(get("x"), get("dy"), &mut dw, &s.params)?;
                put("dw", dw);
            }
            Op::BatchnormInference { relu, .. } => {
                let mut y = out("y");
                reference::batchnorm_inference(
                    get("x"),
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    get("bias"),
                    &mut y,
                )?;
                if *relu {
                    y.map_inplace(|v| v.max(0.0));
                }
                put("y", y);
            }
            Op::BatchnormInferenceVariance { epsilon, .. } => {
                let mut y = out("y");
                reference::batchnorm_inference_variance(
                    get("x"),
                    get("mean"),
                    get("variance"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    &mut y,
                )?;
                put("y", y);
            }
            Op::BatchnormTraining {
                epsilon, momentum, ..
            } => {
                let running = momentum.map(|m| RunningStats {
                    mean: get("prev_running_mean"),
                    variance: get("prev_running_variance"),
                    momentum: m,
                });
                let mut y = out("y");
                let s = reference::batchnorm_training(
                    get("x"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    running,
                    &mut y,
                )?;
                put("y", y);
                let (u, t) = per_channel("mean", &s.mean);
                results.insert(u, t);
                let (u, t) = per_channel("inv_variance", &s.inv_variance);
                results.insert(u, t);
                if let (Some(m), Some(v)) = (&s.next_running_mean, &s.next_running_variance) {
                    let (u, t) = per_channel("next_running_mean", m);
                    results.insert(u, t);
                    let (u, t) = per_channel("next_running_variance", v);
                    results.insert(u, t);
                }
            }
            Op::BatchnormTrainingActivation {
                epsilon,
                momentum,
                activation,
                ..
            } => {
                let running = momentum.map(|m| RunningStats {
                    mean: get("prev_running_mean"),
                    variance: get("prev_running_variance"),
                    momentum: m,
                });
                let x = get("x");
                let mut bn = HostTensor::packed(x.dims.clone());
                let s = reference::batchnorm_training(
                    x,
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    running,
                    &mut bn,
                )?;
                let mut y = out("y");
                reference::pointwise(activation, &[&bn], &mut y)?;
                put("y", y);
                let (u, t) = per_channel("mean", &s.mean);
                results.insert(u, t);
                let (u, t) = per_channel("inv_variance", &s.inv_variance);
                results.insert(u, t);
                if let (Some(m), Some(v)) = (&s.next_running_mean, &s.next_running_variance) {
                    let (u, t) = per_channel("next_running_mean", m);
                    results.insert(u, t);
                    let (u, t) = per_channel("next_running_variance", v);
                    results.insert(u, t);
                }
            }
            Op::BatchnormBackwardRelu { .. } => {
                let x = get("x");
                let mut z = HostTensor::packed(x.dims.clone());
                reference::batchnorm_inference(
                    x,
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    get("bias"),
                    &mut z,
                )?;
                let mut dy = HostTensor::packed(x.dims.clone());
                let drelu = PointwiseParams::new(PointwiseMode::RELU_BWD);
                reference::pointwise(&drelu, &[&z, get("dy")], &mut dy)?;
                let mut dx = out("dx");
                let g = reference::batchnorm_backward(
                    &dy,
                    x,
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    &mut dx,
                )?;
                put("dx", dx);
                let (u, t) = per_channel("dscale", &g.dscale);
                results.insert(u, t);
                let (u, t) = per_channel("dbias", &g.dbias);
                results.insert(u, t);
            }
            Op::BatchnormBackward { .. } => {
                let mut dx = out("dx");
                let g = reference::batchnorm_backward(
                    get("dy"),
                    get("x"),
                    get("mean"),
                    get("inv_variance"),
                    get("scale"),
                    &mut dx,
                )?;
                put("dx", dx);
                let (u, t) = per_channel("dscale", &g.dscale);
                results.insert(u, t);
                let (u, t) = per_channel("dbias", &g.dbias);
                results.insert(u, t);
            }
            Op::Matmul { .. } => {
                let mut c = out("c");
                reference::matmul(get("a"), get("b"), &mut c)?;
                put("c", c);
            }
            Op::MatmulBiasGelu { a_dims, b_dims } => {
                let mut mm = HostTensor::packed(dims_usize(&graphs::matmul_dims(a_dims, b_dims)));
                reference::matmul(get("a"), get("b"), &mut mm)?;
                let mut biased = HostTensor::packed(mm.dims.clone());
                let add = PointwiseParams::new(PointwiseMode::ADD);
                reference::pointwise(&add, &[&mm, get("bias")], &mut biased)?;
                let mut y = out("y");
                let gelu = PointwiseParams::new(PointwiseMode::GELU_FWD);
                reference::pointwise(&gelu, &[&biased], &mut y)?;
                put("y", y);
            }
            Op::Pointwise {
                params, input_dims, ..
            } => {
                let ins: Vec<&HostTensor> = (0..input_dims.len())
                    .map(|i| get(&format!("in_{i}")))
                    .collect();
                let mut o = out("out");
                reference::pointwise(params, &ins, &mut o)?;
                put("out", o);
            }
            Op::Reduction { mode, .. } => {
                let mut o = out("out");
                reference::reduction(*mode, get("in"), &mut o)?;
                put("out", o);
            }
            Op::ResampleFwd {
                mode,
                window,
                stride,
                pre_padding,
                post_padding,
                ..
            } => {
                let params = reference::ResampleParams {
                    pre_padding: dims_usize(pre_padding),
                    post_padding: dims_usize(post_padding),
                    stride: dims_usize(stride),
                    window: dims_usize(window),
                    mode: *mode,
                    padding_mode: if *mode == ResampleMode::MAXPOOL {
                        PaddingMode::NEG_INF_PAD
                    } else {
                        PaddingMode::ZERO_PAD
                    },
                };
                let mut y = out("y");
                reference::resample_fwd(get("x"), &mut y, &params)?;
                put("y", y);
            }
            Op::Layernorm {
                normalized_dims,
                epsilon,
                training,
                ..
            } => {
                let mut y = out("y");
                let s = reference::layernorm(
                    get("x"),
                    get("scale"),
                    get("bias"),
                    *epsilon,
                    *normalized_dims,
                    &mut y,
                )?;
                put("y", y);
                if *training {
                    let (u, t) = per_channel("mean", &s.mean);
                    results.insert(u, t);
                    let (u, t) = per_channel("inv_variance", &s.inv);
                    results.insert(u, t);
                }
            }
            Op::Rmsnorm {
                x_dims,
                epsilon,
                bias,
                training,
            } => {
                let mut y = out("y");
                let b = bias.then(|| get("bias"));
                let s = reference::rmsnorm(
                    get("x"),
                    get("scale"),
                    b,
                    *epsilon,
                    x_dims.len() - 1,
                    &mut y,
                )?;
                put("y", y);
                if *training {
                    let (u, t) = per_channel("inv_rms", &s.inv);
                    results.insert(u, t);
                }
            }
        }
        Ok(results)
    }
}
