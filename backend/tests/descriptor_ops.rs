//! The operation descriptors beyond convolution, pointwise, batch norm and matmul, as
//! hipDNN's frontend sets them: each builds, through TENSOR and operation descriptors and
//! an OPERATIONGRAPH, the wire bytes of the same graph made as a model (and from its
//! JSON); each refuses what hipDNN refuses (a missing required attribute named, a wrong
//! value type, a value outside its enumeration, another operation's attribute); and the
//! ones the CPU engine runs (reduction, layer and RMS norm, pooling) run through it, the
//! results checked against a plain computation here.
//!
//! The CPU engine is the `hipdnn-cpu-provider` cdylib, built by a nested cargo into
//! `target/cpu-plugin-test` (the directory that crate's own tests build it in).

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::OnceLock;

use hipdnn_backend::OperationGraph;
use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::TensorValue;
use hipdnn_flatbuffers_sdk::model::{
    BlockScaleDequantizeAttributes, BlockScaleQuantizeAttributes, CustomOpAttributes, Graph,
    LayernormAttributes, LayernormBackwardAttributes, MoeGroupedMatmulAttributes,
    MoeGroupedMatmulBwdAttributes, RMSNormAttributes, RMSNormBackwardAttributes,
    ReductionAttributes, ResampleFwdAttributes, SdpaAttributes, SdpaBackwardAttributes,
    TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{
    AttentionImplementation, DiagonalAlignment, MoeGroupedMatmulMode, NormFwdPhase, PaddingMode,
    ReductionMode, ResampleMode,
};

mod support;
use support::capi::*;

/// A finalized FLOAT TENSOR descriptor, packed strides, set as hipDNN's frontend sets
/// them; `value` makes it a pass-by-value scalar.
fn tensor(uid: i64, name: &str, dims: &[i64], value: Option<f32>) -> hipdnnBackendDescriptor_t {
    typed_tensor(uid, name, dims, value, HIPDNN_DATA_FLOAT)
}

/// [`tensor`] of element type `data_type`.
fn typed_tensor(
    uid: i64,
    name: &str,
    dims: &[i64],
    value: Option<f32>,
    data_type: hipdnnDataType_t,
) -> hipdnnBackendDescriptor_t {
    let t = create(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_UNIQUE_ID,
        HIPDNN_TYPE_INT64,
        &[uid],
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        name.as_bytes(),
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_DATA_TYPE,
        HIPDNN_TYPE_DATA_TYPE,
        &[data_type],
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_DIMENSIONS,
        HIPDNN_TYPE_INT64,
        dims,
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_STRIDES,
        HIPDNN_TYPE_INT64,
        &packed(dims),
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
        HIPDNN_TYPE_BOOLEAN,
        &[false],
    ));
    if let Some(v) = value {
        ok(set(
            t,
            HIPDNN_ATTR_TENSOR_VALUE_EXT,
            HIPDNN_TYPE_CHAR,
            &v.to_le_bytes(),
        ));
    }
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
        HIPDNN_TYPE_INT64,
        &[16i64],
    ));
    ok(finalize(t));
    t
}

fn tensor_model(uid: i64, name: &str, dims: &[i64], value: Option<f32>) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type: DataType::Float,
        dims: dims.to_vec(),
        strides: packed(dims),
        value: value.map(TensorValue::Float32),
        ..TensorAttributes::default()
    }
}

/// Tensors `(name, dims, by-value scalar)` made into descriptors and models, uids 1, 2, …
fn tensors(
    specs: &[(&str, &[i64], Option<f32>)],
) -> (Vec<hipdnnBackendDescriptor_t>, Vec<TensorAttributes>) {
    specs
        .iter()
        .zip(1..)
        .map(|(&(name, dims, value), uid)| {
            (
                tensor(uid, name, dims, value),
                tensor_model(uid, name, dims, value),
            )
        })
        .unzip()
}

/// Tensors `(name, dims, element type)`, FLOAT or INT32 and none by value, made into
/// descriptors and models as [`tensors`] makes them.
fn typed_tensors(
    specs: &[(&str, &[i64], hipdnnDataType_t)],
) -> (Vec<hipdnnBackendDescriptor_t>, Vec<TensorAttributes>) {
    specs
        .iter()
        .zip(1..)
        .map(|(&(name, dims, ty), uid)| {
            let mut model = tensor_model(uid, name, dims, None);
            if ty == HIPDNN_DATA_INT32 {
                model.data_type = DataType::Int32;
            }
            (typed_tensor(uid, name, dims, None, ty), model)
        })
        .unzip()
}

/// A value of one scalar attribute, with its attribute type.
#[derive(Clone, Copy)]
enum Scalar<'a> {
    I64(&'a [i64]),
    I32(&'a [i32]),
    Bool(bool),
    F32(f32),
    Data(hipdnnDataType_t),
    Text(&'a str),
    /// A C enumeration value of the attribute type given.
    Enum(hipdnnBackendAttributeType_t, i32),
}

fn set_scalar(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    value: Scalar<'_>,
) -> hipdnnStatus_t {
    match value {
        Scalar::I64(v) => set(d, name, HIPDNN_TYPE_INT64, v),
        Scalar::I32(v) => set(d, name, HIPDNN_TYPE_INT32, v),
        Scalar::Bool(v) => set(d, name, HIPDNN_TYPE_BOOLEAN, &[v]),
        Scalar::F32(v) => set(d, name, HIPDNN_TYPE_FLOAT, &[v]),
        Scalar::Data(v) => set(d, name, HIPDNN_TYPE_DATA_TYPE, &[v]),
        Scalar::Text(v) => set(d, name, HIPDNN_TYPE_CHAR, v.as_bytes()),
        Scalar::Enum(ty, v) => set(d, name, ty, &[v]),
    }
}

/// An operation descriptor of `kind`, each `(attribute, tensor)` and parameter set, FLOAT
/// as the compute type (`compute`) and a name, finalized.
fn operation(
    kind: hipdnnBackendDescriptorType_t,
    tensors: &[(hipdnnBackendAttributeName_t, hipdnnBackendDescriptor_t)],
    params: &[(hipdnnBackendAttributeName_t, Scalar<'_>)],
    compute: hipdnnBackendAttributeName_t,
    name: &str,
) -> hipdnnBackendDescriptor_t {
    let op = create(kind);
    for &(attribute, t) in tensors {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[t]));
    }
    for &(attribute, value) in params {
        ok(set_scalar(op, attribute, value));
    }
    ok(set(
        op,
        compute,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        name.as_bytes(),
    ));
    ok(finalize(op));
    op
}

/// The graph of `ops` serializes as `model` does, from bytes and from JSON; the tensors
/// and operations are destroyed before the graph is read, the graph afterwards.
#[track_caller]
fn assert_same_bytes(
    ops: &[hipdnnBackendDescriptor_t],
    tensors: &[hipdnnBackendDescriptor_t],
    model: Graph,
) {
    let graph = graph_of_operations(ops, &model.name);
    let json = model.to_json();
    let expected = OperationGraph::new(model).unwrap();
    for &d in tensors.iter().chain(ops) {
        destroy(d);
    }
    assert_eq!(serialized(graph), expected.bytes());
    let from_json = deserialized_json(&json);
    assert_eq!(serialized(from_json), expected.bytes());
    destroy(from_json);
    destroy(graph);
}

/// The kind an operation descriptor reports, or the status the read fails with (the
/// shared `support::capi::operation_type` asserts that it succeeds).
fn operation_type(op: hipdnnBackendDescriptor_t) -> Result<i32, hipdnnStatus_t> {
    let mut kind = [-1i32];
    get(
        op,
        HIPDNN_ATTR_OPERATION_TYPE_EXT,
        HIPDNN_TYPE_OPERATION_TYPE_EXT,
        &mut kind,
    )?;
    Ok(kind[0])
}

const TRAINING: Scalar<'static> =
    Scalar::Enum(HIPDNN_TYPE_NORM_FWD_PHASE, HIPDNN_NORM_FWD_TRAINING);
const INFERENCE: Scalar<'static> =
    Scalar::Enum(HIPDNN_TYPE_NORM_FWD_PHASE, HIPDNN_NORM_FWD_INFERENCE);

#[test]
fn reduction_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    let (t, models) = tensors(&[("x", &[2, 3, 4], None), ("y", &[2, 1, 4], None)]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_REDUCTION_YDESC, t[1]),
            (HIPDNN_ATTR_OPERATION_REDUCTION_XDESC, t[0]),
        ],
        &[
            (
                HIPDNN_ATTR_REDUCTION_OPERATOR,
                Scalar::Enum(
                    HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                    HIPDNN_REDUCE_TENSOR_AMAX,
                ),
            ),
            (HIPDNN_ATTR_REDUCTION_IS_DETERMINISTIC, Scalar::Bool(true)),
        ],
        HIPDNN_ATTR_REDUCTION_COMP_TYPE,
        "amax",
    );
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_REDUCTION));
    let mut mode = [0i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_REDUCTION_OPERATOR,
            HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE,
            &mut mode
        ),
        Ok(1)
    );
    assert_eq!(mode, [HIPDNN_REDUCE_TENSOR_AMAX]);
    let mut deterministic = [false];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_REDUCTION_IS_DETERMINISTIC,
            HIPDNN_TYPE_BOOLEAN,
            &mut deterministic
        ),
        Ok(1)
    );
    assert!(deterministic[0]);
    let model = one_node_model(
        "reduction",
        "amax",
        models,
        ReductionAttributes {
            mode: ReductionMode::AMAX,
            in_tensor_uid: 1,
            out_tensor_uid: 2,
            is_deterministic: true,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

/// A layer norm forward named "ln" in `phase` over the last `dims` dimensions, FLOAT, its
/// tensors `t` in hipDNN's order: x, scale, bias, epsilon, y, and (in training) mean and
/// inv_variance.
fn layer_norm(
    t: &[hipdnnBackendDescriptor_t],
    phase: Scalar<'static>,
    dims: i64,
) -> hipdnnBackendDescriptor_t {
    let slots = [
        HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_MEAN_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_INV_VARIANCE_EXT,
    ];
    let tensors: Vec<_> = slots.into_iter().zip(t.iter().copied()).collect();
    operation(
        HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT,
        &tensors,
        &[
            (HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT, phase),
            (
                HIPDNN_ATTR_OPERATION_LAYERNORM_NORMALIZED_DIM_COUNT_EXT,
                Scalar::I64(&[dims]),
            ),
        ],
        HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT,
        "ln",
    )
}

#[test]
fn layer_norm_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Forward training over the last two dims, with the saved statistics: hipDNN lists
    // x, scale, bias, epsilon, y, mean, inv_variance.
    let (t, models) = tensors(&[
        ("x", &[2, 3, 4, 5], None),
        ("scale", &[1, 1, 4, 5], None),
        ("bias", &[1, 1, 4, 5], None),
        ("epsilon", &[1], Some(1e-5)),
        ("y", &[2, 3, 4, 5], None),
        ("mean", &[2, 3, 1, 1], None),
        ("inv_variance", &[2, 3, 1, 1], None),
    ]);
    let op = layer_norm(&t, TRAINING, 2);
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_LAYERNORM));
    let mut phase = [0i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT,
            HIPDNN_TYPE_NORM_FWD_PHASE,
            &mut phase
        ),
        Ok(1)
    );
    assert_eq!(phase, [HIPDNN_NORM_FWD_TRAINING]);
    let mut count = [0i64];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_LAYERNORM_NORMALIZED_DIM_COUNT_EXT,
            HIPDNN_TYPE_INT64,
            &mut count
        ),
        Ok(1)
    );
    assert_eq!(count, [2]);
    let model = one_node_model(
        "layernorm",
        "ln",
        models,
        LayernormAttributes {
            x_tensor_uid: 1,
            scale_tensor_uid: 2,
            bias_tensor_uid: 3,
            epsilon_tensor_uid: 4,
            y_tensor_uid: 5,
            normalized_dim_count: 2,
            mean_tensor_uid: Some(6),
            inv_variance_tensor_uid: Some(7),
            forward_phase: NormFwdPhase::TRAINING,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // Backward from the saved statistics, set out of order: hipDNN lists dy, x, scale,
    // mean, inv_variance, (epsilon), dx, dscale, dbias.
    let (t, models) = tensors(&[
        ("dy", &[2, 3, 4, 5], None),
        ("x", &[2, 3, 4, 5], None),
        ("scale", &[1, 1, 4, 5], None),
        ("mean", &[2, 3, 1, 1], None),
        ("inv_variance", &[2, 3, 1, 1], None),
        ("dx", &[2, 3, 4, 5], None),
        ("dscale", &[1, 1, 4, 5], None),
        ("dbias", &[1, 1, 4, 5], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_LAYERNORM_BACKWARD_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DX_EXT, t[5]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DSCALE_EXT, t[6]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DBIAS_EXT, t[7]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_X_EXT, t[1]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_SCALE_EXT, t[2]),
            (HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_MEAN_EXT, t[3]),
            (
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_INV_VARIANCE_EXT,
                t[4],
            ),
        ],
        &[(
            HIPDNN_ATTR_LAYERNORM_BACKWARD_NORMALIZED_DIM_COUNT_EXT,
            Scalar::I64(&[2]),
        )],
        HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT,
        "ln_bwd",
    );
    // hipDNN's newer header numbers this kind; ours has no value for it yet.
    assert_eq!(operation_type(op), Err(HIPDNN_STATUS_NOT_SUPPORTED));
    let model = one_node_model(
        "layernorm_backward",
        "ln_bwd",
        models,
        LayernormBackwardAttributes {
            dy_tensor_uid: 1,
            x_tensor_uid: 2,
            scale_tensor_uid: 3,
            mean_tensor_uid: Some(4),
            inv_variance_tensor_uid: Some(5),
            epsilon_tensor_uid: None,
            dx_tensor_uid: 6,
            dscale_tensor_uid: 7,
            dbias_tensor_uid: 8,
            normalized_dim_count: 2,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

/// An RMS norm forward named "rms" in inference, FLOAT, its tensors `t` in hipDNN's
/// order: x, scale, epsilon, y.
fn rms_norm_inference(t: &[hipdnnBackendDescriptor_t]) -> hipdnnBackendDescriptor_t {
    operation(
        HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT, t[1]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT, t[2]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT, t[3]),
        ],
        &[(HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT, INFERENCE)],
        HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT,
        "rms",
    )
}

#[test]
fn rms_norm_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Forward training with a bias: hipDNN lists x, scale, epsilon, y, bias, inv_rms.
    // The phase as hipDNN's RMS-norm packer sets it: the wire value as an INT64.
    let (t, models) = tensors(&[
        ("x", &[2, 8], None),
        ("scale", &[1, 8], None),
        ("epsilon", &[1], Some(1e-6)),
        ("y", &[2, 8], None),
        ("bias", &[1, 8], None),
        ("inv_rms", &[2, 1], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_RMSNORM_INV_RMS_EXT, t[5]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BIAS_EXT, t[4]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT, t[1]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT, t[2]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT, t[3]),
        ],
        &[(
            HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT,
            Scalar::I64(&[i64::from(NormFwdPhase::TRAINING.0)]),
        )],
        HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT,
        "rms",
    );
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_RMSNORM));
    // Read back either way.
    let mut phase = [0i64];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT,
            HIPDNN_TYPE_INT64,
            &mut phase
        ),
        Ok(1)
    );
    assert_eq!(phase, [2]);
    let mut phase = [0i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT,
            HIPDNN_TYPE_NORM_FWD_PHASE,
            &mut phase
        ),
        Ok(1)
    );
    assert_eq!(phase, [HIPDNN_NORM_FWD_TRAINING]);
    let model = one_node_model(
        "rmsnorm",
        "rms",
        models,
        RMSNormAttributes {
            x_tensor_uid: 1,
            scale_tensor_uid: 2,
            epsilon_tensor_uid: 3,
            y_tensor_uid: 4,
            bias_tensor_uid: Some(5),
            inv_rms_tensor_uid: Some(6),
            forward_phase: NormFwdPhase::TRAINING,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // Inference without the optional tensors.
    let (t, models) = tensors(&[
        ("x", &[2, 8], None),
        ("scale", &[1, 8], None),
        ("epsilon", &[1], Some(1e-6)),
        ("y", &[2, 8], None),
    ]);
    let op = rms_norm_inference(&t);
    let model = one_node_model(
        "rmsnorm_inference",
        "rms",
        models,
        RMSNormAttributes {
            x_tensor_uid: 1,
            scale_tensor_uid: 2,
            epsilon_tensor_uid: 3,
            y_tensor_uid: 4,
            bias_tensor_uid: None,
            inv_rms_tensor_uid: None,
            forward_phase: NormFwdPhase::INFERENCE,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // Backward with a bias gradient: dy, x, scale, inv_rms, dx, dscale, dbias.
    let (t, models) = tensors(&[
        ("dy", &[2, 8], None),
        ("x", &[2, 8], None),
        ("scale", &[1, 8], None),
        ("inv_rms", &[2, 1], None),
        ("dx", &[2, 8], None),
        ("dscale", &[1, 8], None),
        ("dbias", &[1, 8], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_RMSNORM_BACKWARD_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DBIAS_EXT, t[6]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_X_EXT, t[1]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_SCALE_EXT, t[2]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_INV_RMS_EXT, t[3]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DX_EXT, t[4]),
            (HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DSCALE_EXT, t[5]),
        ],
        &[],
        HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT,
        "rms_bwd",
    );
    let model = one_node_model(
        "rmsnorm_backward",
        "rms_bwd",
        models,
        RMSNormBackwardAttributes {
            dy_tensor_uid: 1,
            x_tensor_uid: 2,
            scale_tensor_uid: 3,
            inv_rms_tensor_uid: 4,
            dx_tensor_uid: 5,
            dscale_tensor_uid: 6,
            dbias_tensor_uid: Some(7),
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

/// The parameters of a 2×2, stride-2 max pooling with one row of padding after, padded
/// with -inf: window, stride, padding, mode and padding mode as `(attribute, value)`.
fn max_pooling() -> Vec<(hipdnnBackendAttributeName_t, Scalar<'static>)> {
    vec![
        (HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS, Scalar::I64(&[2, 2])),
        (HIPDNN_ATTR_RESAMPLE_STRIDES, Scalar::I64(&[2, 2])),
        (HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS, Scalar::I64(&[0, 0])),
        (HIPDNN_ATTR_RESAMPLE_POST_PADDINGS, Scalar::I64(&[1, 0])),
        (
            HIPDNN_ATTR_RESAMPLE_MODE,
            Scalar::Enum(HIPDNN_TYPE_RESAMPLE_MODE, HIPDNN_RESAMPLE_MAXPOOL),
        ),
        (
            HIPDNN_ATTR_RESAMPLE_PADDING_MODE,
            Scalar::Enum(HIPDNN_TYPE_PADDING_MODE, HIPDNN_PADDING_NEG_INF_PAD),
        ),
    ]
}

#[test]
fn resample_forward_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    let (t, models) = tensors(&[
        ("x", &[1, 2, 5, 4], None),
        ("y", &[1, 2, 3, 2], None),
        ("index", &[1, 2, 3, 2], None),
    ]);
    let mut params = max_pooling();
    params.push((HIPDNN_ATTR_RESAMPLE_GENERATE_INDEX_EXT, Scalar::Bool(true)));
    let op = operation(
        HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, t[0]),
            (HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, t[1]),
            (HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC, t[2]),
        ],
        &params,
        HIPDNN_ATTR_RESAMPLE_COMP_TYPE,
        "maxpool",
    );
    // hipDNN's value 18, resample forward (named POOLING_FORWARD in this header).
    assert_eq!(
        operation_type(op),
        Ok(HIPDNN_OPERATION_TYPE_POOLING_FORWARD)
    );
    let mut post = [0i64; 4];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_RESAMPLE_POST_PADDINGS,
            HIPDNN_TYPE_INT64,
            &mut post
        ),
        Ok(2)
    );
    assert_eq!(post[..2], [1, 0]);
    let mut padding = [0i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_RESAMPLE_PADDING_MODE,
            HIPDNN_TYPE_PADDING_MODE,
            &mut padding
        ),
        Ok(1)
    );
    assert_eq!(padding, [HIPDNN_PADDING_NEG_INF_PAD]);
    let model = one_node_model(
        "maxpool",
        "maxpool",
        models,
        ResampleFwdAttributes {
            x_tensor_uid: 1,
            y_tensor_uid: 2,
            index_tensor_uid: Some(3),
            pre_padding: vec![0, 0],
            post_padding: vec![1, 0],
            stride: vec![2, 2],
            window: vec![2, 2],
            resample_mode: ResampleMode::MAXPOOL,
            padding_mode: PaddingMode::NEG_INF_PAD,
            generate_index: true,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

#[test]
fn sdpa_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Forward with a mask and the softmax statistics, and most scalar parameters in the
    // types hipDNN's current frontend sets them in.
    let (t, models) = tensors(&[
        ("q", &[1, 2, 4, 8], None),
        ("k", &[1, 2, 4, 8], None),
        ("v", &[1, 2, 4, 8], None),
        ("o", &[1, 2, 4, 8], None),
        ("mask", &[1, 1, 4, 4], None),
        ("stats", &[1, 2, 4, 1], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, t[5]),
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC, t[0]),
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_KDESC, t[1]),
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_VDESC, t[2]),
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_ODESC, t[3]),
            (HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_MASK_EXT, t[4]),
        ],
        &[
            (HIPDNN_ATTR_SDPA_FWD_GENERATE_STATS_EXT, Scalar::Bool(true)),
            (HIPDNN_ATTR_SDPA_FWD_PADDING_MASK_EXT, Scalar::Bool(false)),
            (
                HIPDNN_ATTR_SDPA_FWD_ATTN_SCALE_VALUE_EXT,
                Scalar::F32(0.125),
            ),
            (HIPDNN_ATTR_SDPA_FWD_RIGHT_BOUND_EXT, Scalar::I64(&[0])),
            (HIPDNN_ATTR_SDPA_FWD_MAX_SEQ_LEN_KV_EXT, Scalar::I32(&[4])),
            (
                HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT,
                Scalar::Enum(
                    HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT,
                    HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT_EXT,
                ),
            ),
            (
                HIPDNN_ATTR_SDPA_FWD_MMA_CORE_MODE_EXT,
                Scalar::Data(HIPDNN_DATA_HALF),
            ),
            (
                HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT,
                Scalar::Enum(
                    HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT,
                    HIPDNN_ATTENTION_IMPLEMENTATION_COMPOSITE_EXT,
                ),
            ),
        ],
        HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT,
        "sdpa",
    );
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_SDPA_FORWARD));
    let mut scale = [0f32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_SDPA_FWD_ATTN_SCALE_VALUE_EXT,
            HIPDNN_TYPE_FLOAT,
            &mut scale
        ),
        Ok(1)
    );
    assert_eq!(scale, [0.125]);
    let mut mma = [-1i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_SDPA_FWD_MMA_CORE_MODE_EXT,
            HIPDNN_TYPE_DATA_TYPE,
            &mut mma
        ),
        Ok(1)
    );
    assert_eq!(mma, [HIPDNN_DATA_HALF]);
    // Unset optional parameters read as nothing (a flag as false).
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_SDPA_FWD_DROPOUT_PROBABILITY_EXT,
            HIPDNN_TYPE_FLOAT,
            &mut scale
        ),
        Ok(0)
    );
    let mut causal = [true];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_SDPA_FWD_CAUSAL_MASK_EXT,
            HIPDNN_TYPE_BOOLEAN,
            &mut causal
        ),
        Ok(1)
    );
    assert!(!causal[0]);
    let model = one_node_model(
        "sdpa",
        "sdpa",
        models,
        SdpaAttributes {
            q_tensor_uid: 1,
            k_tensor_uid: 2,
            v_tensor_uid: 3,
            o_tensor_uid: 4,
            attn_mask_tensor_uid: Some(5),
            stats_tensor_uid: Some(6),
            generate_stats: Some(true),
            attn_scale_value: Some(0.125),
            right_bound: Some(0),
            max_seq_len_kv: Some(4),
            diagonal_alignment: DiagonalAlignment::BOTTOM_RIGHT,
            mma_core_mode: DataType::Half,
            implementation: AttentionImplementation::COMPOSITE,
            ..SdpaAttributes::default()
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // Backward with a bias gradient; the diagonal alignment as an INT64 (hipDNN's
    // earlier descriptors).
    let (t, models) = tensors(&[
        ("q", &[1, 2, 4, 8], None),
        ("k", &[1, 2, 4, 8], None),
        ("v", &[1, 2, 4, 8], None),
        ("o", &[1, 2, 4, 8], None),
        ("do", &[1, 2, 4, 8], None),
        ("stats", &[1, 2, 4, 1], None),
        ("dq", &[1, 2, 4, 8], None),
        ("dk", &[1, 2, 4, 8], None),
        ("dv", &[1, 2, 4, 8], None),
        ("dbias", &[1, 1, 4, 4], None),
    ]);
    let slots = [
        HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT,
        HIPDNN_ATTR_OPERATION_SDPA_BWD_DBIAS_EXT,
    ];
    let set_tensors: Vec<_> = slots.iter().copied().zip(t.iter().copied()).rev().collect();
    let op = operation(
        HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT,
        &set_tensors,
        &[
            (HIPDNN_ATTR_SDPA_BWD_CAUSAL_MASK_EXT, Scalar::Bool(true)),
            (
                HIPDNN_ATTR_SDPA_BWD_DROPOUT_PROBABILITY_EXT,
                Scalar::F32(0.1),
            ),
            (HIPDNN_ATTR_SDPA_BWD_LEFT_BOUND_EXT, Scalar::I64(&[2])),
            (
                HIPDNN_ATTR_SDPA_BWD_DIAGONAL_ALIGNMENT_EXT,
                Scalar::I64(&[1]),
            ),
        ],
        HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT,
        "sdpa_bwd",
    );
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_SDPA_BACKWARD));
    let mut alignment = [-1i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_SDPA_BWD_DIAGONAL_ALIGNMENT_EXT,
            HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT,
            &mut alignment
        ),
        Ok(1)
    );
    assert_eq!(alignment, [HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT_EXT]);
    let model = one_node_model(
        "sdpa_backward",
        "sdpa_bwd",
        models,
        SdpaBackwardAttributes {
            q_tensor_uid: 1,
            k_tensor_uid: 2,
            v_tensor_uid: 3,
            o_tensor_uid: 4,
            do_tensor_uid: 5,
            stats_tensor_uid: 6,
            dq_tensor_uid: 7,
            dk_tensor_uid: 8,
            dv_tensor_uid: 9,
            dbias_tensor_uid: Some(10),
            causal_mask: true,
            dropout_probability: Some(0.1),
            left_bound: Some(2),
            diagonal_alignment: DiagonalAlignment::BOTTOM_RIGHT,
            ..SdpaBackwardAttributes::default()
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

#[test]
fn block_scale_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Quantize: hipDNN lists x, y, scale.
    let (t, models) = tensors(&[
        ("x", &[4, 64], None),
        ("y", &[4, 64], None),
        ("scale", &[4, 2], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC, t[2]),
            (HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC, t[0]),
            (HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC, t[1]),
        ],
        &[
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE,
                Scalar::I32(&[32]),
            ),
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_AXIS_EXT,
                Scalar::I64(&[1]),
            ),
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_TRANSPOSE_EXT,
                Scalar::Bool(true),
            ),
        ],
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC,
        "quantize",
    );
    assert_eq!(
        operation_type(op),
        Ok(HIPDNN_OPERATION_TYPE_BLOCK_SCALE_QUANTIZE)
    );
    let model = one_node_model(
        "quantize",
        "quantize",
        models,
        BlockScaleQuantizeAttributes {
            x_tensor_uid: 1,
            y_tensor_uid: 2,
            scale_tensor_uid: 3,
            block_size: 32,
            axis: Some(1),
            transpose: true,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // Dequantize: x, scale, y; a block size per dimension.
    let (t, models) = tensors(&[
        ("x", &[4, 64], None),
        ("scale", &[4, 2], None),
        ("y", &[4, 64], None),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC, t[2]),
            (HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC, t[0]),
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC,
                t[1],
            ),
        ],
        &[
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE,
                Scalar::I32(&[1, 32]),
            ),
            (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE,
                Scalar::Bool(true),
            ),
        ],
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC,
        "dequantize",
    );
    assert_eq!(
        operation_type(op),
        Ok(HIPDNN_OPERATION_TYPE_BLOCK_SCALE_DEQUANTIZE)
    );
    // The block sizes read back as INT32s, or widened as INT64s.
    let mut block = [0i32; 2];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE,
            HIPDNN_TYPE_INT32,
            &mut block
        ),
        Ok(2)
    );
    assert_eq!(block, [1, 32]);
    let mut wide = [0i64; 2];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE,
            HIPDNN_TYPE_INT64,
            &mut wide
        ),
        Ok(2)
    );
    assert_eq!(wide, [1, 32]);
    let model = one_node_model(
        "dequantize",
        "dequantize",
        models,
        BlockScaleDequantizeAttributes {
            x_tensor_uid: 1,
            scale_tensor_uid: 2,
            y_tensor_uid: 3,
            block_size: vec![1, 32],
            is_negative_scale: true,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

#[test]
fn custom_op_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    // hipDNN lists the inputs' tensors, then the outputs'.
    let (t, models) = tensors(&[
        ("x", &[2, 8], None),
        ("freqs", &[1, 8], None),
        ("y", &[2, 8], None),
    ]);
    let op = create(HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT);
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[t[2]],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_INPUTS_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[t[0], t[1]],
    ));
    ok(set_scalar(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
        Scalar::Text("example.rope"),
    ));
    let payload = [1u8, 0, 2, 255];
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_DATA_EXT,
        HIPDNN_TYPE_CHAR,
        &payload,
    ));
    ok(set(
        op,
        HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        b"rope",
    ));
    ok(finalize(op));
    assert_eq!(operation_type(op), Ok(HIPDNN_OPERATION_TYPE_CUSTOM_OP));
    // The payload reads back byte for byte (a NUL inside included); the id as text.
    let mut data = [0u8; 8];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_DATA_EXT,
            HIPDNN_TYPE_CHAR,
            &mut data
        ),
        Ok(4)
    );
    assert_eq!(data[..4], payload);
    let mut id = [0u8; 32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
            HIPDNN_TYPE_CHAR,
            &mut id
        ),
        Ok(13)
    );
    assert_eq!(&id[..13], b"example.rope\0");
    let model = one_node_model(
        "custom",
        "rope",
        models,
        CustomOpAttributes {
            custom_op_id: "example.rope".into(),
            input_tensor_uids: vec![1, 2],
            output_tensor_uids: vec![3],
            data: payload.to_vec(),
            ..CustomOpAttributes::default()
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

/// The tensors of a scattering grouped matmul over 4 experts: tokens, weights, INT32
/// offsets, index and expert ids, output.
fn moe_tensors() -> (Vec<hipdnnBackendDescriptor_t>, Vec<TensorAttributes>) {
    typed_tensors(&[
        ("tokens", &[8, 16], HIPDNN_DATA_FLOAT),
        ("weights", &[4, 16, 32], HIPDNN_DATA_FLOAT),
        ("first_token_offset", &[5], HIPDNN_DATA_INT32),
        ("token_index", &[8], HIPDNN_DATA_INT32),
        ("token_ks", &[8], HIPDNN_DATA_INT32),
        ("output", &[8, 32], HIPDNN_DATA_FLOAT),
    ])
}

const MOE_SLOTS: [hipdnnBackendAttributeName_t; 6] = [
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC,
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC,
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC,
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC,
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC,
    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC,
];

const SCATTER: Scalar<'static> = Scalar::Enum(
    HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
    HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER,
);

#[test]
fn moe_grouped_matmul_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    let (t, models) = moe_tensors();
    let set_tensors: Vec<_> = MOE_SLOTS.iter().copied().zip(t.iter().copied()).collect();
    let op = operation(
        HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR,
        &set_tensors,
        &[
            (
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K,
                Scalar::I32(&[2]),
            ),
            (HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE, SCATTER),
        ],
        HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC,
        "moe",
    );
    // hipDNN's newer header numbers this kind; ours has no value for it yet.
    assert_eq!(operation_type(op), Err(HIPDNN_STATUS_NOT_SUPPORTED));
    let mut mode = [-1i32];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE,
            HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
            &mut mode
        ),
        Ok(1)
    );
    assert_eq!(mode, [HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER]);
    let model = one_node_model(
        "moe",
        "moe",
        models,
        MoeGroupedMatmulAttributes {
            token_tensor_uid: 1,
            weight_tensor_uid: 2,
            first_token_offset_tensor_uid: 3,
            token_index_tensor_uid: Some(4),
            token_ks_tensor_uid: Some(5),
            output_tensor_uid: 6,
            mode: MoeGroupedMatmulMode::SCATTER,
            top_k: 2,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);
}

/// hipDNN's routing rules for the grouped matmul, each refused at finalize.
#[test]
fn moe_grouped_matmul_descriptors_check_the_routing() {
    let _serial = serial();
    let (t, _) = moe_tensors();
    let float_offsets = tensor(3, "first_token_offset", &[5], None);
    // (tensors set by slot index, mode, top-k, what the message names)
    let cases: [(&[usize], Option<i32>, i32, &str); 5] = [
        (&[0, 1, 2, 3, 5], None, 0, "NONE routing"),
        (
            &[0, 1, 2, 5],
            Some(HIPDNN_MOE_GROUPED_MATMUL_MODE_GATHER),
            0,
            "GATHER routing",
        ),
        (
            &[0, 1, 2, 3, 4, 5],
            Some(HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER),
            5,
            "SCATTER routing",
        ),
        (
            &[0, 1, 2, 3, 4, 5],
            Some(HIPDNN_MOE_GROUPED_MATMUL_MODE_GATHER),
            0,
            "GATHER routing",
        ),
        (
            &[0, 1, 6, 5],
            None,
            0,
            "FIRST_TOKEN_OFFSET_DESC must be INT32",
        ),
    ];
    for (slots, mode, top_k, want) in cases {
        let op = create(HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR);
        for &i in slots {
            let (slot, tensor) = if i == 6 {
                (MOE_SLOTS[2], float_offsets)
            } else {
                (MOE_SLOTS[i], t[i])
            };
            ok(set(op, slot, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[tensor]));
        }
        if let Some(mode) = mode {
            ok(set_scalar(
                op,
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE,
                Scalar::Enum(HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE, mode),
            ));
        }
        ok(set_scalar(
            op,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K,
            Scalar::I32(&[top_k]),
        ));
        ok(set(
            op,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(want), "{want}: {m}");
        destroy(op);
    }
    for d in t.into_iter().chain([float_offsets]) {
        destroy(d);
    }
}

// hipDNN's numbers for the grouped matmul backward's attributes, which this header does
// not declare yet.
const MOE_BWD_DOUTPUT: hipdnnBackendAttributeName_t = 3800;
const MOE_BWD_TOKEN: hipdnnBackendAttributeName_t = 3801;
const MOE_BWD_FIRST_TOKEN_OFFSET: hipdnnBackendAttributeName_t = 3802;
const MOE_BWD_DWEIGHT: hipdnnBackendAttributeName_t = 3803;
const MOE_BWD_MATH_PREC: hipdnnBackendAttributeName_t = 3804;

#[test]
fn moe_grouped_matmul_backward_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    // dweight [experts 4, K 16, N 32] from tokens [1, 8, 16] and doutput [1, 8, 32].
    let (t, models) = typed_tensors(&[
        ("doutput", &[1, 8, 32], HIPDNN_DATA_FLOAT),
        ("tokens", &[1, 8, 16], HIPDNN_DATA_FLOAT),
        ("first_token_offset", &[4, 1, 1], HIPDNN_DATA_INT32),
        ("dweight", &[4, 16, 32], HIPDNN_DATA_FLOAT),
    ]);
    let slots = [
        MOE_BWD_DOUTPUT,
        MOE_BWD_TOKEN,
        MOE_BWD_FIRST_TOKEN_OFFSET,
        MOE_BWD_DWEIGHT,
    ];
    let set_tensors: Vec<_> = slots.iter().copied().zip(t.iter().copied()).rev().collect();
    let op = operation(
        HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR,
        &set_tensors,
        &[],
        MOE_BWD_MATH_PREC,
        "moe_bwd",
    );
    let model = one_node_model(
        "moe_backward",
        "moe_bwd",
        models,
        MoeGroupedMatmulBwdAttributes {
            doutput_tensor_uid: 1,
            token_tensor_uid: 2,
            first_token_offset_tensor_uid: 3,
            dweight_tensor_uid: 4,
        }
        .into(),
    );
    assert_same_bytes(&[op], &t, model);

    // hipDNN's shape rules: a missing tensor named, then offsets that are not INT32,
    // a rank other than 3, and a weight gradient that does not fit the operands.
    let op = create(HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR);
    let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC"),
        "{m}"
    );
    destroy(op);
    let shaped = |name: &str, dims: &[i64], ty| typed_tensor(9, name, dims, None, ty);
    let (t, _) = tensors(&[
        ("doutput", &[1, 8, 32], None),
        ("tokens", &[1, 8, 16], None),
    ]);
    let good_offset = shaped("first_token_offset", &[4, 1, 1], HIPDNN_DATA_INT32);
    let cases = [
        (
            shaped("first_token_offset", &[4, 1, 1], HIPDNN_DATA_FLOAT),
            shaped("dweight", &[4, 16, 32], HIPDNN_DATA_FLOAT),
            "must be INT32",
        ),
        (
            shaped("first_token_offset", &[4], HIPDNN_DATA_INT32),
            shaped("dweight", &[4, 16, 32], HIPDNN_DATA_FLOAT),
            "rank 3",
        ),
        (
            good_offset,
            shaped("dweight", &[4, 32, 16], HIPDNN_DATA_FLOAT),
            "[experts, K, N]",
        ),
        (
            good_offset,
            shaped("dweight", &[3, 16, 32], HIPDNN_DATA_FLOAT),
            "[experts, 1, 1]",
        ),
    ];
    for &(offset, dweight, want) in &cases {
        let op = create(HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR);
        for (slot, tensor) in [
            (MOE_BWD_DOUTPUT, t[0]),
            (MOE_BWD_TOKEN, t[1]),
            (MOE_BWD_FIRST_TOKEN_OFFSET, offset),
            (MOE_BWD_DWEIGHT, dweight),
        ] {
            ok(set(op, slot, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[tensor]));
        }
        ok(set(
            op,
            MOE_BWD_MATH_PREC,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(want), "{want}: {m}");
        destroy(op);
    }
    let mut all: Vec<_> = t;
    all.push(good_offset);
    for (offset, dweight, _) in cases {
        if offset != good_offset {
            all.push(offset);
        }
        all.push(dweight);
    }
    for d in all {
        destroy(d);
    }
}

/// Each new kind, created empty, names its first required tensor at finalize; with
/// every required tensor set it names the compute type, then (with the compute type) its
/// first required parameter; a non-TENSOR descriptor where a tensor goes, a parameter of
/// the wrong attribute type and an enumeration value out of range are `BAD_PARAM`; an
/// attribute of another operation is `NOT_SUPPORTED`.
#[test]
fn new_operation_descriptors_refuse_what_hipdnn_refuses() {
    let _serial = serial();
    let a = tensor(1, "a", &[2, 2], None);
    let b = tensor(2, "b", &[2, 2], None);
    struct Case {
        kind: hipdnnBackendDescriptorType_t,
        required: &'static [hipdnnBackendAttributeName_t],
        first: &'static str,
        compute: (hipdnnBackendAttributeName_t, &'static str),
        /// The first required parameter, its name, a value of the wrong type and one
        /// out of range, if any (or `None` where the kind has no required parameter).
        param: Option<(
            hipdnnBackendAttributeName_t,
            &'static str,
            Scalar<'static>,
            Option<Scalar<'static>>,
        )>,
    }
    let cases = [
        Case {
            kind: HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_REDUCTION_XDESC,
                HIPDNN_ATTR_OPERATION_REDUCTION_YDESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_REDUCTION_XDESC",
            compute: (
                HIPDNN_ATTR_REDUCTION_COMP_TYPE,
                "HIPDNN_ATTR_REDUCTION_COMP_TYPE",
            ),
            param: Some((
                HIPDNN_ATTR_REDUCTION_OPERATOR,
                "HIPDNN_ATTR_REDUCTION_OPERATOR",
                Scalar::I64(&[1]),
                Some(Scalar::Enum(HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE, 10)),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT,
            required: &[
                HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT,
            ],
            first: "HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT",
            compute: (
                HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT,
                "HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT",
            ),
            param: Some((
                HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT,
                "HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT",
                Scalar::Bool(true),
                Some(Scalar::Enum(HIPDNN_TYPE_NORM_FWD_PHASE, 0)),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT,
            required: &[
                HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT,
            ],
            first: "HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT",
            compute: (
                HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT,
                "HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT",
            ),
            param: Some((
                HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT,
                "HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT",
                Scalar::Enum(HIPDNN_TYPE_RESAMPLE_MODE, HIPDNN_NORM_FWD_TRAINING),
                Some(Scalar::I64(&[3])),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC,
                HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC",
            compute: (
                HIPDNN_ATTR_RESAMPLE_COMP_TYPE,
                "HIPDNN_ATTR_RESAMPLE_COMP_TYPE",
            ),
            param: Some((
                HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS,
                "HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS",
                Scalar::Bool(false),
                Some(Scalar::I64(&[])),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_LAYERNORM_BACKWARD_DESCRIPTOR_EXT,
            required: &[
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_X_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DX_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DSCALE_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DBIAS_EXT,
            ],
            first: "HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT",
            compute: (
                HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT,
                "HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT",
            ),
            param: None,
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_RMSNORM_BACKWARD_DESCRIPTOR_EXT,
            required: &[
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_X_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_INV_RMS_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DX_EXT,
                HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DSCALE_EXT,
            ],
            first: "HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT",
            compute: (
                HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT,
                "HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT",
            ),
            param: None,
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_VDESC,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_ODESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC",
            compute: (
                HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT,
                "HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT",
            ),
            param: None,
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT,
            required: &[
                HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT,
            ],
            first: "HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT",
            compute: (
                HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT,
                "HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT",
            ),
            param: None,
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC,
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC,
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC",
            compute: (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC,
                "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC",
            ),
            param: Some((
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE,
                "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE",
                Scalar::F32(32.0),
                Some(Scalar::I64(&[1 << 40])),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC,
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC,
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC",
            compute: (
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC,
                "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC",
            ),
            param: Some((
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE,
                "HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE",
                Scalar::Bool(true),
                Some(Scalar::I32(&[])),
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT,
            // Its tensors are arrays; a one-element array sets the outputs.
            required: &[HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT],
            first: "HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT",
            compute: (
                HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT,
                "HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT",
            ),
            // An empty id is no id: set, still missing.
            param: Some((
                HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
                "HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT",
                Scalar::I64(&[1]),
                None,
            )),
        },
        Case {
            kind: HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR,
            required: &[
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC,
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC,
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC,
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC,
            ],
            first: "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC",
            compute: (
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC,
                "HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC",
            ),
            // Routing checks follow (moe_grouped_matmul_descriptors_check_the_routing).
            param: None,
        },
    ];
    let relu = {
        let op = create(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        ok(set(
            op,
            HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[a],
        ));
        ok(set(
            op,
            HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[b],
        ));
        ok(set(
            op,
            HIPDNN_ATTR_POINTWISE_MODE,
            HIPDNN_TYPE_POINTWISE_MODE,
            &[HIPDNN_POINTWISE_RELU_FWD],
        ));
        ok(set(
            op,
            HIPDNN_ATTR_POINTWISE_MATH_PREC,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
        ok(finalize(op));
        op
    };
    for case in &cases {
        let kind = case.kind;
        let op = create(kind);
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(case.first), "{kind}: {m}");
        let m = fails(
            set(
                op,
                case.required[0],
                HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                &[relu],
            ),
            HIPDNN_STATUS_BAD_PARAM,
        );
        assert!(m.contains("takes a TENSOR descriptor"), "{kind}: {m}");
        fails(
            set(
                op,
                HIPDNN_ATTR_POINTWISE_MODE,
                HIPDNN_TYPE_POINTWISE_MODE,
                &[HIPDNN_POINTWISE_ADD],
            ),
            HIPDNN_STATUS_NOT_SUPPORTED,
        );
        // The compute type is a DATA_TYPE.
        fails(
            set(op, case.compute.0, HIPDNN_TYPE_INT64, &[0i64]),
            HIPDNN_STATUS_BAD_PARAM,
        );
        for &attribute in case.required {
            ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[a]));
        }
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(case.compute.1), "{kind}: {m}");
        ok(set(
            op,
            case.compute.0,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
        if let Some((attribute, name, wrong_type, out_of_range)) = case.param {
            let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
            assert!(m.contains(name), "{kind}: {m}");
            let m = fails(
                set_scalar(op, attribute, wrong_type),
                HIPDNN_STATUS_BAD_PARAM,
            );
            assert!(m.contains("takes attribute type"), "{kind}: {m}");
            if let Some(value) = out_of_range {
                fails(set_scalar(op, attribute, value), HIPDNN_STATUS_BAD_PARAM);
            }
            // Still unset.
            let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
            assert!(m.contains(name), "{kind}: {m}");
        } else if kind != HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR {
            ok(finalize(op));
        }
        destroy(op);
    }

    // An empty custom-op id is set but counts as missing; a non-empty one finalizes.
    let op = create(HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT);
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[a],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set_scalar(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
        Scalar::Text(""),
    ));
    let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT"), "{m}");
    ok(set_scalar(
        op,
        HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
        Scalar::Text("a.b"),
    ));
    ok(finalize(op));
    destroy(op);

    // A block-scale quantize block size must be positive.
    let op = create(HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR);
    for attribute in [
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC,
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC,
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC,
    ] {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[a]));
    }
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set_scalar(
        op,
        HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE,
        Scalar::I32(&[0]),
    ));
    let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("must be positive"), "{m}");
    destroy(op);

    // SDPA's optional parameters check their types and ranges too.
    let op = create(HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
    for (attribute, value) in [
        (
            HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT,
            Scalar::Enum(HIPDNN_TYPE_POINTWISE_MODE, 0),
        ),
        (
            HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT,
            Scalar::Enum(HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT, 2),
        ),
        (HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT, Scalar::I64(&[3])),
        (HIPDNN_ATTR_SDPA_FWD_MAX_SEQ_LEN_KV_EXT, Scalar::F32(4.0)),
        (HIPDNN_ATTR_SDPA_FWD_ATTN_SCALE_VALUE_EXT, Scalar::I64(&[1])),
        (HIPDNN_ATTR_SDPA_FWD_MMA_CORE_MODE_EXT, Scalar::I64(&[1])),
        (HIPDNN_ATTR_SDPA_FWD_GENERATE_STATS_EXT, Scalar::I32(&[1])),
    ] {
        fails(set_scalar(op, attribute, value), HIPDNN_STATUS_BAD_PARAM);
    }
    destroy(op);

    // Layer norm's saved statistics are set as a pair.
    let op = create(HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT);
    for attribute in [
        HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT,
        HIPDNN_ATTR_OPERATION_LAYERNORM_MEAN_EXT,
    ] {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[a]));
    }
    ok(set(
        op,
        HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set_scalar(
        op,
        HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT,
        TRAINING,
    ));
    let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("HIPDNN_ATTR_OPERATION_LAYERNORM_INV_VARIANCE_EXT"),
        "{m}"
    );
    // A parameter is one element.
    fails(
        set(
            op,
            HIPDNN_ATTR_OPERATION_LAYERNORM_NORMALIZED_DIM_COUNT_EXT,
            HIPDNN_TYPE_INT64,
            &[1i64, 2],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    for d in [op, relu, a, b] {
        destroy(d);
    }
}

/// `libhipdnn_cpu_provider.so`, built from this checkout by a nested cargo (once per
/// test process) into `target/cpu-plugin-test`.
fn cpu_plugin() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let target = exe
            .ancestors()
            .nth(3)
            .expect("target/<profile>/deps/<test>")
            .join("cpu-plugin-test");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "hipdnn-cpu-provider", "--lib"])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo");
        assert!(status.success(), "building the CPU plugin failed");
        let library = target.join("debug/libhipdnn_cpu_provider.so");
        assert!(library.is_file(), "{} was not built", library.display());
        library
    })
}

/// 64-byte aligned host storage for `len` floats.
struct Buffer(Vec<[f32; 16]>);

impl Buffer {
    fn new(values: &[f32]) -> Self {
        let mut blocks = vec![[0.0; 16]; values.len().div_ceil(16).max(1)];
        blocks.as_flattened_mut()[..values.len()].copy_from_slice(values);
        Self(blocks)
    }

    fn values(&self, len: usize) -> &[f32] {
        &self.0.as_flattened()[..len]
    }

    fn ptr(&mut self) -> *mut c_void {
        self.0.as_mut_ptr().cast()
    }
}

/// Runs the one-op graph of `op` on handle `h` (the engine the heuristic ranks first),
/// with `inputs` and `outputs` as `(uid, values)` (outputs' values are their sizes);
/// returns the outputs.
fn run(
    h: hipdnnHandle_t,
    op: hipdnnBackendDescriptor_t,
    inputs: &[(i64, Vec<f32>)],
    outputs: &[(i64, usize)],
) -> Vec<Vec<f32>> {
    let graph = graph_of_operations(&[op], "run");
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    ok(finalize(graph));
    let heur = create(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    ok(set(
        heur,
        HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[graph],
    ));
    ok(set(
        heur,
        HIPDNN_ATTR_ENGINEHEUR_MODE,
        HIPDNN_TYPE_HEUR_MODE,
        &[HIPDNN_HEUR_MODE_FALLBACK],
    ));
    ok(finalize(heur));
    let config = create(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    assert_eq!(
        get(
            heur,
            HIPDNN_ATTR_ENGINEHEUR_RESULTS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &mut [config]
        ),
        Ok(1),
        "the CPU engine takes the graph"
    );
    let plan = create(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    ok(set(
        plan,
        HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[config],
    ));
    ok(finalize(plan));
    let mut workspace_size = [0i64];
    get(
        plan,
        HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
        HIPDNN_TYPE_INT64,
        &mut workspace_size,
    )
    .unwrap();
    let mut workspace = Buffer::new(&vec![
        0.0;
        usize::try_from(workspace_size[0]).unwrap().div_ceil(4)
    ]);

    let mut buffers: Vec<Buffer> = inputs.iter().map(|(_, v)| Buffer::new(v)).collect();
    buffers.extend(
        outputs
            .iter()
            .map(|&(_, len)| Buffer::new(&vec![f32::NAN; len])),
    );
    let uids: Vec<i64> = inputs
        .iter()
        .map(|(u, _)| *u)
        .chain(outputs.iter().map(|(u, _)| *u))
        .collect();
    let pointers: Vec<*mut c_void> = buffers.iter_mut().map(Buffer::ptr).collect();
    let pack = create(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    ok(set(
        pack,
        HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
        HIPDNN_TYPE_INT64,
        &uids,
    ));
    ok(set(
        pack,
        HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
        HIPDNN_TYPE_VOID_PTR,
        &pointers,
    ));
    ok(set(
        pack,
        HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
        HIPDNN_TYPE_VOID_PTR,
        &[workspace.ptr()],
    ));
    ok(finalize(pack));
    // SAFETY: live handle and descriptors; 64-byte aligned host buffers of the graph's
    // sizes (the CPU engine takes host memory) and of the plan's workspace size.
    ok(unsafe { hipdnnBackendExecute(h, plan, pack) });
    for d in [pack, plan, config, heur, graph] {
        destroy(d);
    }
    buffers[inputs.len()..]
        .iter()
        .zip(outputs)
        .map(|(b, &(_, len))| b.values(len).to_vec())
        .collect()
}

#[track_caller]
fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
            "element {i}: {g} but {w} expected (got {got:?})"
        );
    }
}

/// Deterministic inputs: `len` values in about [-2, 2].
fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let k = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 16;
            (k % 4001) as f32 / 1000.0 - 2.0
        })
        .collect()
}

/// Reduction, layer norm, RMS norm and pooling graphs built from descriptors run on the
/// CPU engine and give what a plain computation gives.
#[test]
fn descriptor_built_norm_reduction_and_pooling_graphs_run_on_the_cpu_engine() {
    let _serial = serial();
    let plugin = cpu_plugin();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(plugin, dir.path().join("libhipdnn_cpu_provider.so")).unwrap();
    use_only(dir.path());
    let h = handle();

    // Sum over the middle dim: [2, 3, 4] → [2, 1, 4].
    let x = values(24, 1);
    let (t, _) = tensors(&[("x", &[2, 3, 4], None), ("y", &[2, 1, 4], None)]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_REDUCTION_XDESC, t[0]),
            (HIPDNN_ATTR_OPERATION_REDUCTION_YDESC, t[1]),
        ],
        &[(
            HIPDNN_ATTR_REDUCTION_OPERATOR,
            Scalar::Enum(
                HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                HIPDNN_REDUCE_TENSOR_ADD,
            ),
        )],
        HIPDNN_ATTR_REDUCTION_COMP_TYPE,
        "sum",
    );
    let got = run(h, op, &[(1, x.clone())], &[(2, 8)]);
    let want: Vec<f32> = (0..2)
        .flat_map(|n| {
            let x = &x;
            (0..4).map(move |w| (0..3).map(|c| x[n * 12 + c * 4 + w]).sum())
        })
        .collect();
    assert_close(&got[0], &want);
    for d in t.into_iter().chain([op]) {
        destroy(d);
    }

    // Layer norm (inference) over the last dim of [3, 8], and RMS norm over the same.
    let (rows, cols) = (3, 8);
    let x = values(rows * cols, 2);
    let scale = values(cols, 3);
    let bias = values(cols, 4);
    let eps = 1e-5f32;
    let (t, _) = tensors(&[
        ("x", &[3, 8], None),
        ("scale", &[1, 8], None),
        ("bias", &[1, 8], None),
        ("epsilon", &[1], Some(eps)),
        ("y", &[3, 8], None),
    ]);
    let op = layer_norm(&t, INFERENCE, 1);
    let got = run(
        h,
        op,
        &[(1, x.clone()), (2, scale.clone()), (3, bias.clone())],
        &[(5, rows * cols)],
    );
    let mut want = Vec::new();
    for row in x.chunks(cols) {
        let mean = row.iter().sum::<f32>() / cols as f32;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / cols as f32;
        let inv = 1.0 / (var + eps).sqrt();
        want.extend((0..cols).map(|c| (row[c] - mean) * inv * scale[c] + bias[c]));
    }
    assert_close(&got[0], &want);
    for d in t.into_iter().chain([op]) {
        destroy(d);
    }

    let (t, _) = tensors(&[
        ("x", &[3, 8], None),
        ("scale", &[1, 8], None),
        ("epsilon", &[1], Some(eps)),
        ("y", &[3, 8], None),
    ]);
    let op = rms_norm_inference(&t);
    let got = run(
        h,
        op,
        &[(1, x.clone()), (2, scale.clone())],
        &[(4, rows * cols)],
    );
    let mut want = Vec::new();
    for row in x.chunks(cols) {
        let ms = row.iter().map(|v| v * v).sum::<f32>() / cols as f32;
        let inv = 1.0 / (ms + eps).sqrt();
        want.extend((0..cols).map(|c| row[c] * inv * scale[c]));
    }
    assert_close(&got[0], &want);
    for d in t.into_iter().chain([op]) {
        destroy(d);
    }

    // 2×2 max pooling, stride 2, one padded row after: [1, 2, 5, 4] → [1, 2, 3, 2].
    let x = values(40, 5);
    let (t, _) = tensors(&[("x", &[1, 2, 5, 4], None), ("y", &[1, 2, 3, 2], None)]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, t[0]),
            (HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, t[1]),
        ],
        &max_pooling(),
        HIPDNN_ATTR_RESAMPLE_COMP_TYPE,
        "maxpool",
    );
    let got = run(h, op, &[(1, x.clone())], &[(2, 12)]);
    let mut want = Vec::new();
    for c in 0..2 {
        for oh in 0..3 {
            for ow in 0..2 {
                let mut m = f32::NEG_INFINITY;
                for (dh, dw) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let (ih, iw) = (oh * 2 + dh, ow * 2 + dw);
                    if ih < 5 {
                        m = m.max(x[c * 20 + ih * 4 + iw]);
                    }
                }
                want.push(m);
            }
        }
    }
    assert_close(&got[0], &want);
    for d in t.into_iter().chain([op]) {
        destroy(d);
    }

    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}
