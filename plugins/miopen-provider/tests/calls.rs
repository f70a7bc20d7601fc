//! Which MIOpen calls each pattern makes, in which order, with which descriptors: the
//! provider runs on the software MIOpen, whose call log (a test hook of that library)
//! is read back here after each plan is built and executed through the backend.
//!
//! One test (it sets the environment variables that point the provider at the software
//! libraries, and the call log is process-wide).

mod support;

use std::ffi::{CStr, c_char, c_void};
use std::ptr::NonNull;

use hipdnn_backend::{Handle, OperationGraph, VariantPack};
use hipdnn_conformance::DeviceAllocator;
use hipdnn_flatbuffers_sdk::model::Graph;
use hipdnn_flatbuffers_sdk::model::{KnobSetting, KnobValue};
use hipdnn_test_sdk::conformance::{Case, standard_cases};

/// The software MIOpen's call log, taken (and cleared) through its test hooks.
struct CallLog {
    take: unsafe extern "C" fn() -> *mut c_char,
    free: unsafe extern "C" fn(*mut c_char),
    _lib: libloading::Library,
}

impl CallLog {
    fn open(soft: &std::path::Path) -> Self {
        // SAFETY: the software MIOpen (already loaded by the provider: the same
        // instance) exports these two test hooks with these signatures.
        unsafe {
            let lib = libloading::Library::new(soft).unwrap();
            let take = *lib
                .get::<unsafe extern "C" fn() -> *mut c_char>(b"hipdnnSoftMiopenTakeCallLog\0")
                .unwrap();
            let free = *lib
                .get::<unsafe extern "C" fn(*mut c_char)>(b"hipdnnSoftMiopenFreeString\0")
                .unwrap();
            Self {
                take,
                free,
                _lib: lib,
            }
        }
    }

    /// The MIOpen calls since the last take (HIP calls left out).
    fn take(&self) -> Vec<String> {
        // SAFETY: the hook returns a NUL-terminated string we free with its partner.
        let text = unsafe {
            let raw = (self.take)();
            let text = CStr::from_ptr(raw).to_string_lossy().into_owned();
            (self.free)(raw);
            text
        };
        text.lines()
            .filter(|l| l.starts_with("miopen"))
            .map(str::to_owned)
            .collect()
    }
}

fn name(call: &str) -> &str {
    call.split('(').next().unwrap_or(call)
}

/// Asserts that `calls` contains `expected` (call names, or `name(` prefixes with
/// argument text after a `|`: every listed fragment must appear in that call) as a
/// subsequence, in order.
#[track_caller]
fn assert_sequence(calls: &[String], expected: &[&str]) {
    let mut at = 0;
    for want in expected {
        let mut parts = want.split('|');
        let call = parts.next().unwrap();
        let fragments: Vec<&str> = parts.collect();
        match calls[at..]
            .iter()
            .position(|c| name(c) == call && fragments.iter().all(|f| c.contains(f)))
        {
            Some(i) => at += i + 1,
            None => panic!(
                "expected {want} after call {at}; the calls:\n{}",
                calls.join("\n")
            ),
        }
    }
}

fn graph_of(name: &str) -> Graph {
    standard_cases()
        .into_iter()
        .find(|c: &Case| c.name == name)
        .unwrap_or_else(|| panic!("no case {name}"))
        .graph()
}

/// Builds a plan for `graph` on `engine`, runs it once on scratch device buffers, and
/// returns `(calls while building, calls while executing)`.
fn run(
    handle: &Handle,
    log: &CallLog,
    device: &support::HipAllocator,
    graph: Graph,
    engine: &str,
    knobs: &[KnobSetting],
) -> (Vec<String>, Vec<String>) {
    let graph = OperationGraph::new(graph).unwrap();
    let id = handle.engine_id_by_name(engine).unwrap();
    log.take();
    let plan = handle
        .create_plan(&graph, id, knobs)
        .unwrap_or_else(|e| panic!("{e}"));
    let built = log.take();
    let mut buffers: Vec<NonNull<c_void>> = Vec::new();
    let mut pack = VariantPack::new();
    for t in graph
        .graph()
        .tensors
        .iter()
        .filter(|t| !t.is_virtual && t.value.is_none())
    {
        let dims: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
        let strides: Vec<usize> = t.strides.iter().map(|&s| s as usize).collect();
        let len = hipdnn_reference::data::byte_len(t.data_type, &dims, &strides).unwrap();
        let ptr = device.allocate(len).unwrap();
        pack.set(t.uid, ptr.as_ptr());
        buffers.push(ptr);
    }
    let workspace =
        (plan.workspace_size() > 0).then(|| device.allocate(plan.workspace_size()).unwrap());
    // SAFETY: a buffer of each tensor's extent, the plan's workspace; the software
    // MIOpen runs synchronously.
    unsafe {
        plan.execute(
            &pack,
            workspace.map_or(std::ptr::null_mut(), NonNull::as_ptr),
        )
    }
    .unwrap_or_else(|e| panic!("{e}"));
    device.synchronize().unwrap();
    let executed = log.take();
    for b in buffers.into_iter().chain(workspace) {
        // SAFETY: allocated above, no longer used.
        unsafe { device.free(b) };
    }
    (built, executed)
}

#[test]
fn each_pattern_makes_the_miopen_calls_it_should() {
    let [plugin, soft] = support::libraries();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&plugin, dir.path().join(plugin.file_name().unwrap())).unwrap();
    // SAFETY: this binary's only test; set before any handle exists.
    unsafe {
        std::env::set_var("HIPDNN_PLUGIN_DIR", dir.path());
        support::use_soft_miopen(&soft);
    }
    let handle = Handle::new();
    let log = CallLog::open(&soft);
    let device = support::HipAllocator::open(&soft, "software HIP").unwrap();

    // Convolution forward: descriptors, solutions, compile at build; immediate at run
    // with w before x.
    let (built, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("conv_fprop/3x3_pad1/fp32/nhwc"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &built,
        &[
            "miopenInitConvolutionNdDescriptor|pad=[1,1]|stride=[1,1]",
            "miopenSetTensorDescriptor|[6,4,3,3]",
            "miopenSetTensorDescriptor|[2,4,8,8]|[256,1,32,4]",
            "miopenConvolutionForwardGetSolutionCount",
            "miopenConvolutionForwardGetSolution",
            "miopenConvolutionForwardCompileSolution",
        ],
    );
    assert!(
        !built
            .iter()
            .any(|c| name(c) == "miopenFindConvolutionForwardAlgorithm"),
        "{built:#?}"
    );
    // The plan's convolution is not restricted (the deterministic engine's
    // applicability check, made in the same request, is).
    assert_sequence(&built, &["miopenConvolutionForwardCompileSolution|det=0"]);
    assert_sequence(
        &ran,
        &["miopenConvolutionForwardImmediate|T(float,[6,4,3,3]"],
    );
    assert_eq!(ran.len(), 1, "{ran:#?}");

    // Benchmarking runs Find (exhaustive) before choosing; the deterministic engine
    // sets the attribute.
    let bench = [KnobSetting {
        knob_id: "global.benchmarking".to_owned(),
        value: KnobValue::Int(1),
    }];
    let (built, _) = run(
        &handle,
        &log,
        &device,
        graph_of("conv_wgrad/3x3_pad1/fp32/nchw"),
        "MIOPEN_ENGINE",
        &bench,
    );
    assert_sequence(
        &built,
        &[
            "miopenConvolutionBackwardWeightsGetSolution",
            "miopenFindConvolutionBackwardWeightsAlgorithm|true",
            "miopenConvolutionBackwardWeightsGetSolution",
            "miopenConvolutionBackwardWeightsCompileSolution",
        ],
    );
    let (built, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("conv_dgrad/groups2/fp16/nchw"),
        "MIOPEN_ENGINE_DETERMINISTIC",
        &[],
    );
    assert_sequence(
        &built,
        &[
            "miopenSetConvolutionGroupCount|2",
            "miopenSetConvolutionAttribute|MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC",
            "miopenConvolutionBackwardDataCompileSolution|det=1",
        ],
    );
    assert_sequence(
        &ran,
        &["miopenConvolutionBackwardDataImmediate|T(half,[1,6,6,6]"],
    );

    // A 1-D convolution goes to MIOpen as 2-D.
    let (built, _) = run(
        &handle,
        &log,
        &device,
        graph_of("conv_fprop/1d_k3_stride2/fp32/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &built,
        &[
            "miopenInitConvolutionNdDescriptor|pad=[0,1]|stride=[1,2]",
            "miopenSetTensorDescriptor|[2,3,1,10]",
        ],
    );

    // Convolution + bias + ReLU: a fusion plan, compiled at build, arguments bound at
    // run.
    let (built, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("conv_bias_relu/3x3_pad1/fp16/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &built,
        &[
            "miopenCreateFusionPlan",
            "miopenCreateOpConvForward",
            "miopenCreateOpBiasForward|[1,6,1,1]",
            "miopenCreateOpActivationForward|RELU",
            "miopenCompileFusionPlan",
        ],
    );
    assert_sequence(
        &ran,
        &[
            "miopenCreateOperatorArgs",
            "miopenSetOpArgsConvForward",
            "miopenSetOpArgsBiasForward",
            "miopenSetOpArgsActivForward",
            "miopenExecuteFusionPlan_v2",
            "miopenDestroyOperatorArgs",
        ],
    );

    // Batch norm: inverse variance, variance + epsilon, training with running stats,
    // backward.
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("batchnorm_inference/2x4x5x5/fp32/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &ran,
        &["miopenBatchNormalizationForwardInferenceInvVariance|T(float,[1,4,1,1]"],
    );
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("batchnorm_inference_relu/2x4x5x5/fp16/nhwc"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &ran,
        &["miopenBatchNormForwardInferenceActivationInvVariance|A(RELU"],
    );
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("batchnorm_inference_variance/2x4x5x5/bf16/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(
        &ran,
        &["miopenBatchNormalizationForwardInference_V2|T(bfloat16,[2,4,5,5]"],
    );
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("batchnorm_training/2x4x5x5_running/fp32/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(&ran, &["miopenBatchNormalizationForwardTraining_V3|0.1"]);
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("batchnorm_backward/2x4x5x5/fp32/nhwc"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(&ran, &["miopenBatchNormalizationBackward_V2"]);

    // Standalone activation and binary operations.
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("pointwise/relu_fwd_clipped/fp16/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(&ran, &["miopenActivationForward|A(CLAMP,-0.5,0.5"]);
    let (_, ran) = run(
        &handle,
        &log,
        &device,
        graph_of("pointwise/sub/fp32/nchw"),
        "MIOPEN_ENGINE",
        &[],
    );
    assert_sequence(&ran, &["miopenOpTensor|miopenTensorOpAdd|-1|[1,3,1,1]"]);
}
