//! Graphs built through the descriptor API, as hipDNN's frontend builds them: one TENSOR
//! descriptor per tensor, one operation descriptor per node, an OPERATIONGRAPH from
//! `HIPDNN_ATTR_OPERATIONGRAPH_OPS`. The same operations give the same wire bytes as the
//! graph made from bytes (FlatBuffer or JSON), the graph shares what it was built from
//! (the tensor and operation descriptors may go first), the set/get/finalize rules are
//! hipDNN's, and a built graph runs.
//!
//! The plugins are this crate's `[[example]]` cdylibs (plain `cargo test` builds them).

use std::ffi::c_void;
use std::ptr;

use hipdnn_backend::OperationGraph;
use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{
    BatchnormAttributes, BatchnormBackwardAttributes, BatchnormInferenceAttributes,
    BatchnormInferenceAttributesVarianceExt, ConvolutionBwdAttributes, ConvolutionFwdAttributes,
    ConvolutionWrwAttributes, Graph, MatmulAttributes, Node, PointwiseAttributes, TensorAttributes,
};
use hipdnn_flatbuffers_sdk::wire::{ConvMode, PointwiseMode};

mod support;
use support::capi::*;

/// A finalized TENSOR descriptor, packed strides, set as hipDNN's frontend sets them.
fn tensor(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> hipdnnBackendDescriptor_t {
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
        &[HIPDNN_DATA_FLOAT],
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
        &[u8::from(is_virtual)],
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
        HIPDNN_TYPE_INT64,
        &[16i64],
    ));
    ok(finalize(t));
    t
}

fn tensor_model(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> TensorAttributes {
    TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type: DataType::Float,
        dims: dims.to_vec(),
        strides: packed(dims),
        is_virtual,
        ..TensorAttributes::default()
    }
}

/// A finalized pointwise operation.
fn pointwise(
    name: &str,
    mode: hipdnnPointwiseMode_t,
    inputs: &[hipdnnBackendDescriptor_t],
    out: hipdnnBackendDescriptor_t,
) -> hipdnnBackendDescriptor_t {
    let op = create(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    let slots = [
        HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT,
        HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT,
    ];
    for (slot, input) in slots.iter().zip(inputs) {
        ok(set(op, *slot, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[*input]));
    }
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[out],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_POINTWISE_MODE,
        HIPDNN_TYPE_POINTWISE_MODE,
        &[mode],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_POINTWISE_MATH_PREC,
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

/// conv(x, w) + b, then ReLU: the model hipDNN's frontend would serialize.
fn conv_bias_relu_model() -> Graph {
    let conv = ConvolutionFwdAttributes {
        x_tensor_uid: 1,
        w_tensor_uid: 2,
        y_tensor_uid: 3,
        pre_padding: vec![1, 1],
        post_padding: vec![1, 1],
        stride: vec![1, 1],
        dilation: vec![1, 1],
        conv_mode: ConvMode::CROSS_CORRELATION,
        ..ConvolutionFwdAttributes::default()
    };
    let add = PointwiseAttributes {
        operation: PointwiseMode::ADD,
        in_0_tensor_uid: 3,
        in_1_tensor_uid: Some(4),
        out_0_tensor_uid: 5,
        ..PointwiseAttributes::default()
    };
    let relu = PointwiseAttributes {
        operation: PointwiseMode::RELU_FWD,
        in_0_tensor_uid: 5,
        out_0_tensor_uid: 6,
        ..PointwiseAttributes::default()
    };
    let node = |name: &str, attrs: hipdnn_flatbuffers_sdk::model::NodeAttributes| Node {
        name: name.to_owned(),
        compute_data_type: DataType::Float,
        attributes: attrs,
    };
    Graph {
        name: "conv_bias_relu".to_owned(),
        io_data_type: DataType::Float,
        compute_data_type: DataType::Float,
        intermediate_data_type: DataType::Float,
        preferred_engine_id: Some(42),
        // Each operation's tensors in order, first use first.
        tensors: vec![
            tensor_model(1, "x", &[1, 4, 8, 8], false),
            tensor_model(2, "w", &[8, 4, 3, 3], false),
            tensor_model(3, "conv_out", &[1, 8, 8, 8], true),
            tensor_model(5, "biased", &[1, 8, 8, 8], true),
            tensor_model(4, "b", &[1, 8, 1, 1], false),
            tensor_model(6, "y", &[1, 8, 8, 8], false),
        ],
        nodes: vec![
            node("conv", conv.into()),
            node("bias", add.into()),
            node("relu", relu.into()),
        ],
        ..Graph::default()
    }
}

/// Builds conv → bias add → ReLU through descriptors; the tensor and operation
/// descriptors are destroyed once the graph has them.
fn conv_bias_relu_descriptors() -> hipdnnBackendDescriptor_t {
    let x = tensor(1, "x", &[1, 4, 8, 8], false);
    let w = tensor(2, "w", &[8, 4, 3, 3], false);
    let conv_out = tensor(3, "conv_out", &[1, 8, 8, 8], true);
    let b = tensor(4, "b", &[1, 8, 1, 1], false);
    let biased = tensor(5, "biased", &[1, 8, 8, 8], true);
    let y = tensor(6, "y", &[1, 8, 8, 8], false);

    let conv = create(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    for (name, t) in [
        (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x),
        (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w),
        (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv_out),
    ] {
        ok(set(conv, name, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[t]));
    }
    for name in [
        HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
        HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS,
        HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
        HIPDNN_ATTR_CONVOLUTION_DILATIONS,
    ] {
        ok(set(conv, name, HIPDNN_TYPE_INT64, &[1i64, 1]));
    }
    ok(set(
        conv,
        HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
        HIPDNN_TYPE_CONVOLUTION_MODE,
        &[HIPDNN_CROSS_CORRELATION],
    ));
    ok(set(
        conv,
        HIPDNN_ATTR_CONVOLUTION_COMP_TYPE,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        conv,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        b"conv",
    ));
    ok(finalize(conv));
    let add = pointwise("bias", HIPDNN_POINTWISE_ADD, &[conv_out, b], biased);
    let relu = pointwise("relu", HIPDNN_POINTWISE_RELU_FWD, &[biased], y);

    let graph = create(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    // Two calls: OPS appends.
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_OPS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[conv, add],
    ));
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_OPS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[relu],
    ));
    for name in [
        HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT,
        HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT,
        HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT,
    ] {
        ok(set(
            graph,
            name,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
    }
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT,
        HIPDNN_TYPE_INT64,
        &[42i64],
    ));
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        b"conv_bias_relu",
    ));
    for d in [x, w, conv_out, b, biased, y, conv, add, relu] {
        destroy(d);
    }
    graph
}

#[test]
fn a_graph_built_from_descriptors_has_the_bytes_of_the_same_graph_from_bytes() {
    let _serial = serial();
    let expected = OperationGraph::new(conv_bias_relu_model()).unwrap();

    let built = conv_bias_relu_descriptors();
    // Not finalized yet: serializing builds from the operations (as hipDNN does).
    assert_eq!(serialized(built), expected.bytes());

    // The same graph from its JSON form and from its bytes.
    let json = conv_bias_relu_model().to_json();
    let from_json = deserialized_json(&json);
    assert_eq!(serialized(from_json), expected.bytes());
    let from_bytes = deserialized(expected.bytes());
    assert_eq!(serialized(from_bytes), expected.bytes());

    // Finalized with a handle: the same bytes, and its graph-level attributes read back.
    let dir = tempfile::tempdir().unwrap();
    use_only(dir.path());
    let h = handle();
    ok(set(
        built,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    ok(finalize(built));
    assert_eq!(serialized(built), expected.bytes());
    let mut name = [0u8; 32];
    assert_eq!(
        get(
            built,
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            &mut name
        ),
        Ok(15)
    );
    assert_eq!(&name[..15], b"conv_bias_relu\0");
    let mut data_type = [-1];
    assert_eq!(
        get(
            built,
            HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT,
            HIPDNN_TYPE_DATA_TYPE,
            &mut data_type
        ),
        Ok(1)
    );
    assert_eq!(data_type, [HIPDNN_DATA_FLOAT]);
    let mut engine = [0i64];
    assert_eq!(
        get(
            built,
            HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT,
            HIPDNN_TYPE_INT64,
            &mut engine
        ),
        Ok(1)
    );
    assert_eq!(engine, [42]);
    // A finalized graph cannot change.
    fails(
        set(
            built,
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            b"x",
        ),
        HIPDNN_STATUS_NOT_INITIALIZED,
    );
    for d in [built, from_json, from_bytes] {
        destroy(d);
    }
    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}

#[test]
fn tensor_descriptors_check_what_they_take_and_read_back() {
    let _serial = serial();
    let t = create(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    let mut uid = [0i64];
    // Not finalized: nothing reads back.
    assert_eq!(
        get(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &mut uid),
        Err(HIPDNN_STATUS_NOT_INITIALIZED)
    );
    let m = fails(finalize(t), HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("dimensions and strides must be set"), "{m}");
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_UNIQUE_ID,
        HIPDNN_TYPE_INT64,
        &[7i64],
    ));
    fails(
        set(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT32, &[7i32]),
        HIPDNN_STATUS_BAD_PARAM,
    );
    fails(
        set(
            t,
            HIPDNN_ATTR_TENSOR_DATA_TYPE,
            HIPDNN_TYPE_DATA_TYPE,
            &[99i32],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    // A value needs the data type first, and its size.
    let m = fails(
        set(
            t,
            HIPDNN_ATTR_TENSOR_VALUE_EXT,
            HIPDNN_TYPE_CHAR,
            &2.5f32.to_ne_bytes(),
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    assert!(m.contains("before the value"), "{m}");
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_DATA_TYPE,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    fails(
        set(t, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_CHAR, &[0u8; 8]),
        HIPDNN_STATUS_BAD_PARAM,
    );
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_VALUE_EXT,
        HIPDNN_TYPE_CHAR,
        &2.5f32.to_ne_bytes(),
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_DIMENSIONS,
        HIPDNN_TYPE_INT64,
        &[1i64, 1],
    ));
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_STRIDES,
        HIPDNN_TYPE_INT64,
        &[1i64],
    ));
    let m = fails(finalize(t), HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("2 dimensions but 1 strides"), "{m}");
    ok(set(
        t,
        HIPDNN_ATTR_TENSOR_STRIDES,
        HIPDNN_TYPE_INT64,
        &[1i64, 1],
    ));
    fails(
        set(
            t,
            HIPDNN_ATTR_TENSOR_COLUMN_NOT_A_NAME,
            HIPDNN_TYPE_INT64,
            &[1i64],
        ),
        HIPDNN_STATUS_NOT_SUPPORTED,
    );
    ok(finalize(t));
    fails(
        set(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &[8i64]),
        HIPDNN_STATUS_NOT_INITIALIZED,
    );

    assert_eq!(
        get(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &mut uid),
        Ok(1)
    );
    assert_eq!(uid, [7]);
    let mut value = [0u8; 8];
    assert_eq!(
        get(
            t,
            HIPDNN_ATTR_TENSOR_VALUE_EXT,
            HIPDNN_TYPE_CHAR,
            &mut value
        ),
        Ok(4)
    );
    assert_eq!(f32::from_ne_bytes(value[..4].try_into().unwrap()), 2.5);
    let mut by_value = [0u8];
    assert_eq!(
        get(
            t,
            HIPDNN_ATTR_TENSOR_IS_BY_VALUE,
            HIPDNN_TYPE_BOOLEAN,
            &mut by_value
        ),
        Ok(1)
    );
    assert_eq!(by_value, [1]);
    let mut alignment = [0i64];
    get(
        t,
        HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
        HIPDNN_TYPE_INT64,
        &mut alignment,
    )
    .unwrap();
    assert_eq!(alignment, [16], "hipDNN's default");
    destroy(t);
}

/// Not a hipDNN attribute name: an unknown one is `NOT_SUPPORTED`.
const HIPDNN_ATTR_TENSOR_COLUMN_NOT_A_NAME: hipdnnBackendAttributeName_t = 1399;

#[test]
fn operation_and_graph_descriptors_refuse_what_hipdnn_refuses() {
    let _serial = serial();
    let x = tensor(1, "x", &[2, 4], false);
    let y = tensor(2, "y", &[2, 4], false);
    let unfinalized = create(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    // A finalized descriptor that is not a tensor.
    let first = pointwise("first", HIPDNN_POINTWISE_RELU_FWD, &[x], y);

    let conv = create(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    fails(
        set(
            conv,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[unfinalized],
        ),
        HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
    );
    let m = fails(
        set(
            conv,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[first],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    assert!(m.contains("takes a TENSOR descriptor"), "{m}");
    ok(set(
        conv,
        HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[x],
    ));
    // hipDNN's earlier frontend gives the conv mode as the wire value in an INT64.
    ok(set(
        conv,
        HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
        HIPDNN_TYPE_INT64,
        &[2i64],
    ));
    fails(
        set(
            conv,
            HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
            HIPDNN_TYPE_CONVOLUTION_MODE,
            &[5i32],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    fails(
        set(
            conv,
            HIPDNN_ATTR_CONVOLUTION_DILATIONS,
            HIPDNN_TYPE_INT64,
            &[] as &[i64],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    let m = fails(finalize(conv), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W"),
        "{m}"
    );

    // An unfinalized operation is not an operation of a graph; an empty graph does not
    // finalize; a uid is one descriptor.
    let graph = create(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    fails(
        set(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_OPS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[conv],
        ),
        HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
    );
    let dir = tempfile::tempdir().unwrap();
    use_only(dir.path());
    let h = handle();
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    let m = fails(finalize(graph), HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("no operations"), "{m}");
    let twin = tensor(1, "x again", &[2, 4], false);
    let second = pointwise("second", HIPDNN_POINTWISE_TANH_FWD, &[twin], y);
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_OPS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[first, second],
    ));
    let m = fails(finalize(graph), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("tensor uid 1 is used with two different TENSOR descriptors"),
        "{m}"
    );

    // The operation reads back its parameters and kind.
    let mut kind = [-1i32];
    assert_eq!(
        get(
            first,
            HIPDNN_ATTR_OPERATION_TYPE_EXT,
            HIPDNN_TYPE_OPERATION_TYPE_EXT,
            &mut kind
        ),
        Ok(1)
    );
    assert_eq!(kind, [HIPDNN_OPERATION_TYPE_POINTWISE]);
    let mut mode = [0i32];
    get(
        first,
        HIPDNN_ATTR_POINTWISE_MODE,
        HIPDNN_TYPE_POINTWISE_MODE,
        &mut mode,
    )
    .unwrap();
    assert_eq!(mode, [HIPDNN_POINTWISE_RELU_FWD]);

    // A graph made from bytes takes its handle only.
    let bytes = OperationGraph::new(conv_bias_relu_model()).unwrap();
    let from_bytes = deserialized(bytes.bytes());
    fails(
        set(
            from_bytes,
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            b"renamed",
        ),
        HIPDNN_STATUS_NOT_SUPPORTED,
    );
    for d in [
        x,
        unfinalized,
        conv,
        graph,
        twin,
        y,
        first,
        second,
        from_bytes,
    ] {
        destroy(d);
    }
    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}

/// A ReLU graph built from descriptors runs on the example plugin's engine.
#[test]
fn a_graph_built_from_descriptors_runs() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    support::install(dir.path(), &["good_plugin"]);
    use_only(dir.path());
    let h = handle();

    let x = tensor(1, "x", &[2, 4], false);
    let y = tensor(2, "y", &[2, 4], false);
    let relu = pointwise("relu", HIPDNN_POINTWISE_RELU_FWD, &[x], y);
    let graph = create(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_OPS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[relu],
    ));
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    ok(finalize(graph));
    for d in [x, y, relu] {
        destroy(d);
    }

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
        Ok(1)
    );
    let plan = create(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    ok(set(
        plan,
        HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[config],
    ));
    ok(finalize(plan));

    #[repr(align(64))]
    struct Buffers {
        x: [f32; 8],
        y: [f32; 8],
    }
    let mut b = Buffers {
        x: [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5, 0.0, 1.0],
        y: [9.0; 8],
    };
    let pack = create(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    ok(set(
        pack,
        HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
        HIPDNN_TYPE_INT64,
        &[1i64, 2],
    ));
    let pointers: [*mut c_void; 2] = [b.x.as_mut_ptr().cast(), b.y.as_mut_ptr().cast()];
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
        &[ptr::null_mut::<c_void>()],
    ));
    ok(finalize(pack));
    // SAFETY: live handle and descriptors; host buffers of the graph's sizes for a host
    // engine, 64-byte aligned.
    ok(unsafe { hipdnnBackendExecute(h, plan, pack) });
    assert_eq!(b.y, [0.0, 2.0, 0.0, 4.0, 0.5, 0.0, 0.0, 1.0]);

    for d in [pack, plan, config, heur, graph] {
        destroy(d);
    }
    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}

/// A finalized operation of `kind`: each `(attribute, tensor)` set, FLOAT as the compute
/// type (`compute`), and a name.
fn operation(
    kind: hipdnnBackendDescriptorType_t,
    tensors: &[(hipdnnBackendAttributeName_t, hipdnnBackendDescriptor_t)],
    compute: hipdnnBackendAttributeName_t,
    name: &str,
) -> hipdnnBackendDescriptor_t {
    let op = create(kind);
    for &(attribute, t) in tensors {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[t]));
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

/// Sets the padding, stride, dilation and mode every convolution takes (1 each).
fn convolution_parameters(op: hipdnnBackendDescriptor_t) {
    for name in [
        HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
        HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS,
        HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
        HIPDNN_ATTR_CONVOLUTION_DILATIONS,
    ] {
        ok(set(op, name, HIPDNN_TYPE_INT64, &[1i64, 1]));
    }
    ok(set(
        op,
        HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
        HIPDNN_TYPE_CONVOLUTION_MODE,
        &[HIPDNN_CROSS_CORRELATION],
    ));
}

/// A finalized convolution of `kind` over three tensors, as `conv_bias_relu_descriptors`
/// sets the forward one.
fn convolution(
    kind: hipdnnBackendDescriptorType_t,
    tensors: &[(hipdnnBackendAttributeName_t, hipdnnBackendDescriptor_t)],
    name: &str,
) -> hipdnnBackendDescriptor_t {
    let op = create(kind);
    for &(attribute, t) in tensors {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[t]));
    }
    convolution_parameters(op);
    ok(set(
        op,
        HIPDNN_ATTR_CONVOLUTION_COMP_TYPE,
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

/// The descriptor-built graph serializes as `model` does, from bytes and from JSON; the
/// graph (and everything in `others`) is destroyed afterwards.
#[track_caller]
fn assert_same_bytes(
    graph: hipdnnBackendDescriptor_t,
    model: Graph,
    others: &[hipdnnBackendDescriptor_t],
) {
    let json = model.to_json();
    let expected = OperationGraph::new(model).unwrap();
    for &d in others {
        destroy(d);
    }
    assert_eq!(serialized(graph), expected.bytes());
    let from_json = deserialized_json(&json);
    assert_eq!(serialized(from_json), expected.bytes());
    destroy(from_json);
    destroy(graph);
}

fn geometry() -> (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, ConvMode) {
    (
        vec![1, 1],
        vec![1, 1],
        vec![1, 1],
        vec![1, 1],
        ConvMode::CROSS_CORRELATION,
    )
}

#[test]
fn convolution_backward_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Data gradient: dx from dy and w.
    let dy = tensor(1, "dy", &[1, 8, 8, 8], false);
    let w = tensor(2, "w", &[8, 4, 3, 3], false);
    let dx = tensor(3, "dx", &[1, 4, 8, 8], false);
    let op = convolution(
        HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, dy),
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w),
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, dx),
        ],
        "dgrad",
    );
    assert_eq!(
        operation_type(op),
        HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_DATA
    );
    let mut strides = [0i64; 4];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
            HIPDNN_TYPE_INT64,
            &mut strides
        ),
        Ok(2)
    );
    let graph = graph_of_operations(&[op], "dgrad");
    let (pre_padding, post_padding, stride, dilation, conv_mode) = geometry();
    let model = one_node_model(
        "dgrad",
        "dgrad",
        vec![
            tensor_model(1, "dy", &[1, 8, 8, 8], false),
            tensor_model(2, "w", &[8, 4, 3, 3], false),
            tensor_model(3, "dx", &[1, 4, 8, 8], false),
        ],
        ConvolutionBwdAttributes {
            dy_tensor_uid: 1,
            w_tensor_uid: 2,
            dx_tensor_uid: 3,
            pre_padding,
            post_padding,
            stride,
            dilation,
            conv_mode,
            ..ConvolutionBwdAttributes::default()
        }
        .into(),
    );
    assert_same_bytes(graph, model, &[dy, w, dx, op]);

    // Filter gradient: dw from x and dy.
    let x = tensor(1, "x", &[1, 4, 8, 8], false);
    let dy = tensor(2, "dy", &[1, 8, 8, 8], false);
    let dw = tensor(3, "dw", &[8, 4, 3, 3], false);
    let op = convolution(
        HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x),
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, dy),
            (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, dw),
        ],
        "wgrad",
    );
    assert_eq!(
        operation_type(op),
        HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_WEIGHTS
    );
    let graph = graph_of_operations(&[op], "wgrad");
    let (pre_padding, post_padding, stride, dilation, conv_mode) = geometry();
    let model = one_node_model(
        "wgrad",
        "wgrad",
        vec![
            tensor_model(1, "x", &[1, 4, 8, 8], false),
            tensor_model(2, "dy", &[1, 8, 8, 8], false),
            tensor_model(3, "dw", &[8, 4, 3, 3], false),
        ],
        ConvolutionWrwAttributes {
            x_tensor_uid: 1,
            dy_tensor_uid: 2,
            dw_tensor_uid: 3,
            pre_padding,
            post_padding,
            stride,
            dilation,
            conv_mode,
            ..ConvolutionWrwAttributes::default()
        }
        .into(),
    );
    assert_same_bytes(graph, model, &[x, dy, dw, op]);
}

/// Per-channel tensors of a batch norm over `[2, 4, 3, 3]`: `[1, 4, 1, 1]`.
const CHANNEL: [i64; 4] = [1, 4, 1, 1];
const SCALAR: [i64; 4] = [1, 1, 1, 1];
const ACTIVATION: [i64; 4] = [2, 4, 3, 3];

/// Tensors `(uid, name, dims)` made into descriptors and models, uids in order.
fn tensors(specs: &[(&str, &[i64])]) -> (Vec<hipdnnBackendDescriptor_t>, Vec<TensorAttributes>) {
    specs
        .iter()
        .zip(1..)
        .map(|(&(name, dims), uid)| {
            (
                tensor(uid, name, dims, false),
                tensor_model(uid, name, dims, false),
            )
        })
        .unzip()
}

#[test]
fn batch_norm_inference_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    let (t, models) = tensors(&[
        ("x", &ACTIVATION),
        ("mean", &CHANNEL),
        ("inv_variance", &CHANNEL),
        ("scale", &CHANNEL),
        ("bias", &CHANNEL),
        ("y", &ACTIVATION),
    ]);
    // Set out of order: the graph lists them in hipDNN's order all the same.
    let op = operation(
        HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT, t[5]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT, t[1]),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT,
                t[2],
            ),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT, t[3]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT, t[4]),
        ],
        HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT,
        "bn",
    );
    assert_eq!(
        operation_type(op),
        HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE
    );
    let mut compute = [-1];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT,
            HIPDNN_TYPE_DATA_TYPE,
            &mut compute
        ),
        Ok(1)
    );
    assert_eq!(compute, [HIPDNN_DATA_FLOAT]);
    let graph = graph_of_operations(&[op], "bn_inference");
    let model = one_node_model(
        "bn_inference",
        "bn",
        models,
        BatchnormInferenceAttributes {
            x_tensor_uid: 1,
            mean_tensor_uid: 2,
            inv_variance_tensor_uid: 3,
            scale_tensor_uid: 4,
            bias_tensor_uid: 5,
            y_tensor_uid: 6,
        }
        .into(),
    );
    let mut others = t.clone();
    others.push(op);
    assert_same_bytes(graph, model, &others);

    // The variance form, with an epsilon tensor.
    let (t, models) = tensors(&[
        ("x", &ACTIVATION),
        ("mean", &CHANNEL),
        ("variance", &CHANNEL),
        ("scale", &CHANNEL),
        ("bias", &CHANNEL),
        ("y", &ACTIVATION),
        ("epsilon", &SCALAR),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT,
        &[
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT,
                t[0],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT,
                t[1],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT,
                t[2],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT,
                t[3],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT,
                t[4],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT,
                t[5],
            ),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT,
                t[6],
            ),
        ],
        HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT,
        "bn",
    );
    assert_eq!(
        operation_type(op),
        HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE_VARIANCE
    );
    let graph = graph_of_operations(&[op], "bn_inference_variance");
    let model = one_node_model(
        "bn_inference_variance",
        "bn",
        models,
        BatchnormInferenceAttributesVarianceExt {
            x_tensor_uid: 1,
            mean_tensor_uid: 2,
            variance_tensor_uid: 3,
            scale_tensor_uid: 4,
            bias_tensor_uid: 5,
            y_tensor_uid: 6,
            epsilon_tensor_uid: 7,
        }
        .into(),
    );
    let mut others = t.clone();
    others.push(op);
    assert_same_bytes(graph, model, &others);
}

#[test]
fn batch_norm_training_descriptors_have_the_bytes_of_the_same_graphs() {
    let _serial = serial();
    // Forward training with saved and running statistics: hipDNN lists x, scale, bias,
    // epsilon, y, then the optional outputs and inputs.
    let (t, models) = tensors(&[
        ("x", &ACTIVATION),
        ("scale", &CHANNEL),
        ("bias", &CHANNEL),
        ("epsilon", &SCALAR),
        ("y", &ACTIVATION),
        ("mean", &CHANNEL),
        ("inv_variance", &CHANNEL),
        ("prev_running_mean", &CHANNEL),
        ("prev_running_variance", &CHANNEL),
        ("momentum", &SCALAR),
        ("next_running_mean", &CHANNEL),
        ("next_running_variance", &CHANNEL),
    ]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT,
        &[
            (HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT, t[0]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT, t[1]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT, t[2]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT, t[3]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT, t[4]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_MEAN_EXT, t[7]),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_VARIANCE_EXT,
                t[8],
            ),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT, t[9]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT, t[5]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT, t[6]),
            (HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_MEAN_EXT, t[10]),
            (
                HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT,
                t[11],
            ),
        ],
        HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT,
        "bn",
    );
    assert_eq!(operation_type(op), HIPDNN_OPERATION_TYPE_BATCHNORM);
    let graph = graph_of_operations(&[op], "bn_training");
    let model = one_node_model(
        "bn_training",
        "bn",
        models,
        BatchnormAttributes {
            x_tensor_uid: 1,
            scale_tensor_uid: 2,
            bias_tensor_uid: 3,
            epsilon_tensor_uid: 4,
            y_tensor_uid: 5,
            mean_tensor_uid: Some(6),
            inv_variance_tensor_uid: Some(7),
            prev_running_mean_tensor_uid: Some(8),
            prev_running_variance_tensor_uid: Some(9),
            momentum_tensor_uid: Some(10),
            next_running_mean_tensor_uid: Some(11),
            next_running_variance_tensor_uid: Some(12),
            peer_stats_tensor_uid: Vec::new(),
        }
        .into(),
    );
    let mut others = t.clone();
    others.push(op);
    assert_same_bytes(graph, model, &others);

    // Backward, from the saved statistics, with one peer's statistics.
    let (t, models) = tensors(&[
        ("dy", &ACTIVATION),
        ("x", &ACTIVATION),
        ("scale", &CHANNEL),
        ("dx", &ACTIVATION),
        ("dscale", &CHANNEL),
        ("dbias", &CHANNEL),
        ("mean", &CHANNEL),
        ("inv_variance", &CHANNEL),
        ("peer_stats", &CHANNEL),
    ]);
    let op = create(HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT);
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_PEER_STATS_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[t[8]],
    ));
    for (attribute, i) in [
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT, 0),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT, 1),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT, 2),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT, 3),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT, 4),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT, 5),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_MEAN_EXT, 6),
        (HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_INV_VARIANCE_EXT, 7),
    ] {
        ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[t[i]]));
    }
    ok(set(
        op,
        HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        op,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        b"bn_bwd",
    ));
    ok(finalize(op));
    assert_eq!(operation_type(op), HIPDNN_OPERATION_TYPE_BATCHNORM_BACKWARD);
    let graph = graph_of_operations(&[op], "bn_backward");
    let model = one_node_model(
        "bn_backward",
        "bn_bwd",
        models,
        BatchnormBackwardAttributes {
            dy_tensor_uid: 1,
            x_tensor_uid: 2,
            scale_tensor_uid: 3,
            dx_tensor_uid: 4,
            dscale_tensor_uid: 5,
            dbias_tensor_uid: 6,
            mean_tensor_uid: Some(7),
            inv_variance_tensor_uid: Some(8),
            peer_stats_tensor_uid: vec![9],
        }
        .into(),
    );
    let mut others = t.clone();
    others.push(op);
    assert_same_bytes(graph, model, &others);
}

#[test]
fn matmul_descriptors_have_the_bytes_of_the_same_graph() {
    let _serial = serial();
    let (t, models) = tensors(&[("a", &[1, 2, 3]), ("b", &[1, 3, 4]), ("c", &[1, 2, 4])]);
    let op = operation(
        HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
        &[
            (HIPDNN_ATTR_OPERATION_MATMUL_ADESC, t[0]),
            (HIPDNN_ATTR_OPERATION_MATMUL_BDESC, t[1]),
            (HIPDNN_ATTR_OPERATION_MATMUL_CDESC, t[2]),
        ],
        HIPDNN_ATTR_MATMUL_COMP_TYPE,
        "matmul",
    );
    assert_eq!(operation_type(op), HIPDNN_OPERATION_TYPE_MATMUL);
    let mut name = [0u8; 16];
    assert_eq!(
        get(
            op,
            HIPDNN_ATTR_OPERATION_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            &mut name
        ),
        Ok(7)
    );
    let graph = graph_of_operations(&[op], "matmul");
    let model = one_node_model(
        "matmul",
        "matmul",
        models,
        MatmulAttributes {
            a_tensor_uid: 1,
            b_tensor_uid: 2,
            c_tensor_uid: 3,
            ..MatmulAttributes::default()
        }
        .into(),
    );
    let mut others = t.clone();
    others.push(op);
    assert_same_bytes(graph, model, &others);
}

/// For each new kind: nothing set names the first required tensor; every tensor but no
/// compute type names the compute attribute; a non-TENSOR descriptor where a tensor goes
/// is `BAD_PARAM`; an attribute of another operation is `NOT_SUPPORTED`.
#[test]
fn new_operation_descriptors_refuse_what_hipdnn_refuses() {
    let _serial = serial();
    let a = tensor(1, "a", &[2, 2], false);
    let b = tensor(2, "b", &[2, 2], false);
    let not_a_tensor = pointwise("relu", HIPDNN_POINTWISE_RELU_FWD, &[a], b);
    let cases: &[(
        hipdnnBackendDescriptorType_t,
        &[hipdnnBackendAttributeName_t],
        &str,
        &str,
    )] = &[
        (
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
            &[
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
            ],
            "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY",
            "HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS",
        ),
        (
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
            &[
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
            ],
            "HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X",
            "HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS",
        ),
        (
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT,
            &[
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT,
            ],
            "HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT",
            "HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT",
        ),
        (
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT,
            &[
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT,
            ],
            "HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT",
            "HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT",
        ),
        (
            HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT,
            &[
                HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT,
            ],
            "HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT",
            "HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT",
        ),
        (
            HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT,
            &[
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT,
            ],
            "HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT",
            "HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT",
        ),
        (
            HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
            &[
                HIPDNN_ATTR_OPERATION_MATMUL_ADESC,
                HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
                HIPDNN_ATTR_OPERATION_MATMUL_CDESC,
            ],
            "HIPDNN_ATTR_OPERATION_MATMUL_ADESC",
            "HIPDNN_ATTR_MATMUL_COMP_TYPE",
        ),
    ];
    for &(kind, required, first, after_tensors) in cases {
        let op = create(kind);
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(first), "{kind}: {m}");
        let m = fails(
            set(
                op,
                required[0],
                HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                &[not_a_tensor],
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
        for &attribute in required {
            ok(set(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[a]));
        }
        let m = fails(finalize(op), HIPDNN_STATUS_BAD_PARAM);
        assert!(m.contains(after_tensors), "{kind}: {m}");
        // Not finalized: nothing reads back.
        let mut kind_read = [0i32];
        assert_eq!(
            get(
                op,
                HIPDNN_ATTR_OPERATION_TYPE_EXT,
                HIPDNN_TYPE_OPERATION_TYPE_EXT,
                &mut kind_read
            ),
            Err(HIPDNN_STATUS_NOT_INITIALIZED)
        );
        destroy(op);
    }

    // Statistics hipDNN takes together: saved mean without inverse variance, one running
    // statistic without the rest.
    let bn = create(HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT);
    for attribute in [
        HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT,
        HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT,
    ] {
        ok(set(bn, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[a]));
    }
    ok(set(
        bn,
        HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    let m = fails(finalize(bn), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT"),
        "{m}"
    );
    ok(set(
        bn,
        HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[b],
    ));
    ok(set(
        bn,
        HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[b],
    ));
    let m = fails(finalize(bn), HIPDNN_STATUS_BAD_PARAM);
    assert!(
        m.contains("HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT"),
        "{m}"
    );
    // Peer statistics are TENSORs too.
    fails(
        set(
            bn,
            HIPDNN_ATTR_OPERATION_BATCHNORM_PEER_STATS_EXT,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &[a, not_a_tensor],
        ),
        HIPDNN_STATUS_BAD_PARAM,
    );
    for d in [bn, not_a_tensor, a, b] {
        destroy(d);
    }
}

/// A finalized ReLU graph on `h`.
fn relu_graph(h: hipdnnHandle_t) -> hipdnnBackendDescriptor_t {
    let x = tensor(1, "x", &[2, 4], false);
    let y = tensor(2, "y", &[2, 4], false);
    let relu = pointwise("relu", HIPDNN_POINTWISE_RELU_FWD, &[x], y);
    let graph = graph_of_operations(&[relu], "relu");
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    ok(finalize(graph));
    for d in [x, y, relu] {
        destroy(d);
    }
    graph
}

/// The text of a CHAR attribute.
fn text_of(d: hipdnnBackendDescriptor_t, name: hipdnnBackendAttributeName_t) -> String {
    let mut bytes = [0u8; 256];
    let n = get(d, name, HIPDNN_TYPE_CHAR, &mut bytes).unwrap() as usize;
    String::from_utf8(bytes[..n.saturating_sub(1)].to_vec()).unwrap()
}

/// The knob discovery hipDNN's C callers use: an ENGINE hands out one KNOB_INFO per knob
/// (caller-owned), each with its id, description, default (and its type), bounds, step,
/// valid values; an ENGINECFG reports the workspace the plugin asks for.
#[test]
fn engines_describe_their_knobs_and_engine_configs_their_workspace() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    support::install(dir.path(), &["counting_plugin"]);
    use_only(dir.path());
    let h = handle();
    let graph = relu_graph(h);
    let engine = create(HIPDNN_BACKEND_ENGINE_DESCRIPTOR);
    ok(set(
        engine,
        HIPDNN_ATTR_ENGINE_OPERATION_GRAPH,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[graph],
    ));
    ok(set(
        engine,
        HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
        HIPDNN_TYPE_INT64,
        &[hipdnn_data_sdk::engine_name_to_id("COUNTING_ENGINE")],
    ));
    ok(finalize(engine));

    assert_eq!(
        count(
            engine,
            HIPDNN_ATTR_ENGINE_KNOB_INFO,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR
        ),
        Ok(4)
    );
    // Room for every knob or nothing is made.
    let mut too_few: [hipdnnBackendDescriptor_t; 2] = [ptr::null_mut(); 2];
    assert_eq!(
        get(
            engine,
            HIPDNN_ATTR_ENGINE_KNOB_INFO,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &mut too_few
        ),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    assert_eq!(too_few, [ptr::null_mut(); 2]);
    let mut knobs: [hipdnnBackendDescriptor_t; 4] = [ptr::null_mut(); 4];
    assert_eq!(
        get(
            engine,
            HIPDNN_ATTR_ENGINE_KNOB_INFO,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &mut knobs
        ),
        Ok(4)
    );
    let by_id = |id: &str| {
        *knobs
            .iter()
            .find(|&&k| text_of(k, HIPDNN_ATTR_KNOB_INFO_TYPE) == id)
            .unwrap_or_else(|| panic!("no knob {id}"))
    };
    let int = |k, name| {
        let mut v = [0i64; 4];
        let n = get(k, name, HIPDNN_TYPE_INT64, &mut v).unwrap() as usize;
        v[..n].to_vec()
    };
    let double = |k, name| {
        let mut v = [0f64; 2];
        let n = get(k, name, HIPDNN_TYPE_DOUBLE, &mut v).unwrap() as usize;
        v[..n].to_vec()
    };

    // An integer knob with a list of values.
    let deterministic = by_id("global.deterministic");
    assert_eq!(
        int(deterministic, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE_TYPE),
        [i64::from(HIPDNN_TYPE_INT64)]
    );
    assert_eq!(int(deterministic, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE), [0]);
    assert_eq!(
        int(deterministic, HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_INT),
        [0, 1]
    );
    assert_eq!(
        int(deterministic, HIPDNN_ATTR_KNOB_INFO_MINIMUM_VALUE),
        [0i64; 0]
    );
    assert!(!text_of(deterministic, HIPDNN_ATTR_KNOB_INFO_DESCRIPTION).is_empty());
    let mut deprecated = [1u8];
    get(
        deterministic,
        HIPDNN_ATTR_KNOB_INFO_DEPRECATED,
        HIPDNN_TYPE_BOOLEAN,
        &mut deprecated,
    )
    .unwrap();
    assert_eq!(deprecated, [0]);
    // Read-only: a KNOB_INFO is finalized when made.
    fails(
        set(
            deterministic,
            HIPDNN_ATTR_KNOB_INFO_DEPRECATED,
            HIPDNN_TYPE_BOOLEAN,
            &[1u8],
        ),
        HIPDNN_STATUS_NOT_INITIALIZED,
    );
    // The default is read in its own type.
    let mut wrong = [0f64];
    assert_eq!(
        get(
            deterministic,
            HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE,
            HIPDNN_TYPE_DOUBLE,
            &mut wrong
        ),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );

    // An integer range.
    let limit = by_id("global.workspace_size_limit");
    assert_eq!(int(limit, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE), [-1]);
    assert_eq!(int(limit, HIPDNN_ATTR_KNOB_INFO_MINIMUM_VALUE), [-1]);
    assert_eq!(int(limit, HIPDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE), [i64::MAX]);
    assert_eq!(int(limit, HIPDNN_ATTR_KNOB_INFO_STRIDE), [1]);
    assert_eq!(
        int(limit, HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_INT),
        [0i64; 0]
    );

    // A float range.
    let tolerance = by_id("counting.tolerance");
    assert_eq!(
        int(tolerance, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE_TYPE),
        [i64::from(HIPDNN_TYPE_DOUBLE)]
    );
    assert_eq!(
        double(tolerance, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE),
        [0.5]
    );
    assert_eq!(
        double(tolerance, HIPDNN_ATTR_KNOB_INFO_MINIMUM_VALUE),
        [0.0]
    );
    assert_eq!(
        double(tolerance, HIPDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE),
        [1.0]
    );
    assert_eq!(
        int(tolerance, HIPDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE),
        [0i64; 0]
    );
    assert_eq!(
        text_of(tolerance, HIPDNN_ATTR_KNOB_INFO_DESCRIPTION),
        "how close is close enough"
    );

    // A string list: "fast\0exact\0", whole strings only.
    let mode = by_id("counting.mode");
    assert_eq!(
        int(mode, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE_TYPE),
        [i64::from(HIPDNN_TYPE_CHAR)]
    );
    assert_eq!(text_of(mode, HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE), "fast");
    assert_eq!(int(mode, HIPDNN_ATTR_KNOB_INFO_STRING_MAX_LENGTH), [8]);
    assert_eq!(
        count(
            mode,
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_STRING,
            HIPDNN_TYPE_CHAR
        ),
        Ok(11)
    );
    let mut values = [0xffu8; 16];
    assert_eq!(
        get(
            mode,
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_STRING,
            HIPDNN_TYPE_CHAR,
            &mut values
        ),
        Ok(11)
    );
    assert_eq!(&values[..11], b"fast\0exact\0");
    let mut short = [0xffu8; 8];
    assert_eq!(
        get(
            mode,
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_STRING,
            HIPDNN_TYPE_CHAR,
            &mut short
        ),
        Ok(5)
    );
    assert_eq!(&short[..6], b"fast\0\xff");
    // The caller owns them.
    for k in knobs {
        destroy(k);
    }

    // An engine config: the workspace is read-only, read after finalize, one INT64.
    let config = create(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    fails(
        set(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            &[0i64],
        ),
        HIPDNN_STATUS_NOT_SUPPORTED,
    );
    ok(set(
        config,
        HIPDNN_ATTR_ENGINECFG_ENGINE,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &[engine],
    ));
    let mut size = [0i64];
    assert_eq!(
        get(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            &mut size
        ),
        Err(HIPDNN_STATUS_NOT_INITIALIZED)
    );
    ok(finalize(config));
    assert_eq!(
        get(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            &mut size
        ),
        Ok(1)
    );
    assert_eq!(size, [64], "the counting plugin's plans take 64 bytes");
    assert_eq!(
        count(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64
        ),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    let mut two = [0i64; 2];
    assert_eq!(
        get(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            &mut two
        ),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    let mut null_array = 0;
    // SAFETY: a writable count and a null array.
    let status = unsafe {
        hipdnnBackendGetAttribute(
            config,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
            HIPDNN_TYPE_INT64,
            1,
            &mut null_array,
            ptr::null_mut(),
        )
    };
    assert_eq!(status, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);

    // A config the heuristic fills reports the same.
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
    let ranked = create(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    get(
        heur,
        HIPDNN_ATTR_ENGINEHEUR_RESULTS,
        HIPDNN_TYPE_BACKEND_DESCRIPTOR,
        &mut [ranked],
    )
    .unwrap();
    let mut size = [0i64];
    get(
        ranked,
        HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE,
        HIPDNN_TYPE_INT64,
        &mut size,
    )
    .unwrap();
    assert_eq!(size, [64]);

    for d in [ranked, heur, config, engine, graph] {
        destroy(d);
    }
    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}

/// With `HIPDNN_LOG_GRAPH_DIR` set, finalizing an OPERATIONGRAPH (from descriptors or from
/// bytes) writes it as JSON into that directory (created if missing), named by the hash
/// of its bytes (no id is set here); finalizing the same graph again adds no file; the
/// dump reads back as the same graph; unset, nothing is written.
#[test]
fn finalized_graphs_are_dumped_to_the_graph_log_dir() {
    use hipdnn_backend::graph_log::{LOG_GRAPH_DIR_ENV, dump_file_name};

    let _serial = serial();
    let plugins = tempfile::tempdir().unwrap();
    use_only(plugins.path());
    let h = handle();
    let logs = tempfile::tempdir().unwrap();
    let dir = logs.path().join("nested").join("graphs");
    let json_files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&dir).map_or_else(
            |_| Vec::new(),
            |entries| {
                entries
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            },
        )
    };
    let finalize_with_handle = |g: hipdnnBackendDescriptor_t| {
        ok(set(
            g,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            &[h],
        ));
        ok(finalize(g));
        destroy(g);
    };
    let expected = OperationGraph::new(conv_bias_relu_model()).unwrap();

    // Unset: nothing.
    // SAFETY: tests that touch the environment hold the serial lock.
    unsafe { std::env::remove_var(LOG_GRAPH_DIR_ENV) };
    finalize_with_handle(conv_bias_relu_descriptors());
    assert!(json_files().is_empty());

    // Set (with surrounding blanks): one file, named by the bytes' hash, the same graph.
    // SAFETY: as above.
    unsafe { std::env::set_var(LOG_GRAPH_DIR_ENV, format!(" {} ", dir.display())) };
    finalize_with_handle(conv_bias_relu_descriptors());
    let files = json_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = dump_file_name(&expected);
    assert!(
        name.starts_with("graph_") && name.len() == "graph_.json".len() + 16,
        "{name}"
    );
    assert_eq!(files[0].file_name().unwrap().to_str().unwrap(), name);
    // Upstream hipDNN's dialect, pretty-printed as its graph logger writes it.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(text, expected.graph().to_upstream_json());
    let dumped = Graph::from_upstream_json(&text).unwrap();
    assert_eq!(
        OperationGraph::new(dumped).unwrap().bytes(),
        expected.bytes()
    );

    // The same graph from its bytes: no second file.
    let from_bytes = deserialized(expected.bytes());
    finalize_with_handle(from_bytes);
    assert_eq!(json_files().len(), 1);

    // SAFETY: as above.
    unsafe { std::env::remove_var(LOG_GRAPH_DIR_ENV) };
    // SAFETY: a live handle, destroyed once.
    ok(unsafe { hipdnnDestroy(h) });
}
