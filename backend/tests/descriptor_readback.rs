//! Reading descriptors back through `hipdnnBackendGetAttribute`, as hipDNN's backend hands
//! them out and its frontend's unpackers read them: every TENSOR attribute of every
//! operation descriptor as a new, finalized TENSOR descriptor that the caller owns (the
//! tensor that was set: uid, name, dimensions, strides, type, value), usable on another
//! operation and independent of the operation it came from; an optional tensor that is
//! not set as a count of 0; the TENSOR arrays (batch norm's peer statistics, the custom
//! op's inputs and outputs) as one descriptor per tensor; and a graph's operations
//! (`HIPDNN_ATTR_OPERATIONGRAPH_OPS`) as new operation descriptors. Every descriptor made
//! or handed out here is destroyed: a counting allocator checks that running a test's
//! body a second time leaves no more blocks allocated than it found ([`no_leaks`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;

use hipdnn_backend::OperationGraph;
use hipdnn_backend::capi::*;
use hipdnn_backend::status::*;
use hipdnn_data_sdk::DataType;
use hipdnn_flatbuffers_sdk::model::{Graph, Node, ResampleBwdAttributes, TensorAttributes};
use hipdnn_flatbuffers_sdk::wire::{PaddingMode, ResampleMode};

mod support;
use support::capi::*;

/// The system allocator, counting the blocks each thread has allocated and not freed.
struct Counting;

thread_local! {
    /// Blocks allocated on this thread minus blocks freed on it.
    static LIVE_BLOCKS: Cell<isize> = const { Cell::new(0) };
}

fn count_blocks(change: isize) {
    // During thread teardown the counter may be gone; nothing is measured then.
    let _ = LIVE_BLOCKS.try_with(|n| n.set(n.get() + change));
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is a const-initialized
// thread-local `Cell` without a destructor, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count_blocks(1);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count_blocks(1);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count_blocks(-1);
        // SAFETY: a block of this allocator (so of `System`) with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded: a block of `System` with its layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `body` twice on this thread: the first run leaves what is made once (the
/// registry's nodes, the thread's last error), the second must leave nothing more, so a
/// descriptor made or handed out and not destroyed fails the test.
#[track_caller]
fn no_leaks(body: impl Fn()) {
    body();
    let before = LIVE_BLOCKS.with(Cell::get);
    body();
    let after = LIVE_BLOCKS.with(Cell::get);
    assert_eq!(after, before, "blocks left allocated by a second run");
}

/// A TENSOR attribute read back as hipDNN's frontend reads it (room for one): the
/// descriptor handed out.
#[track_caller]
fn tensor_of(
    op: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
) -> hipdnnBackendDescriptor_t {
    let mut out = [NONE];
    assert_eq!(
        get(op, name, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &mut out),
        Ok(1),
        "attribute {name}: {}",
        c_last_error()
    );
    assert!(!out[0].is_null(), "attribute {name}");
    out[0]
}

/// No descriptor: what an array slot holds before a read writes it.
const NONE: hipdnnBackendDescriptor_t = ptr::null_mut();

/// What a TENSOR descriptor is made of.
#[derive(Debug, Clone)]
struct Spec {
    uid: i64,
    name: &'static str,
    dims: Vec<i64>,
    strides: Vec<i64>,
    ty: hipdnnDataType_t,
    /// The bytes of a pass-by-value scalar.
    value: Option<Vec<u8>>,
    is_virtual: bool,
    alignment: i64,
}

/// A FLOAT tensor with packed strides.
fn t(uid: i64, name: &'static str, dims: &[i64]) -> Spec {
    Spec {
        uid,
        name,
        dims: dims.to_vec(),
        strides: packed(dims),
        ty: HIPDNN_DATA_FLOAT,
        value: None,
        is_virtual: false,
        alignment: 16,
    }
}

impl Spec {
    fn typed(mut self, ty: hipdnnDataType_t) -> Self {
        self.ty = ty;
        self
    }

    fn strided(mut self, strides: &[i64]) -> Self {
        self.strides = strides.to_vec();
        self
    }

    /// A FLOAT pass-by-value scalar of one element.
    fn scalar(mut self, value: f32) -> Self {
        self.value = Some(value.to_ne_bytes().to_vec());
        self
    }

    fn virtual_(mut self) -> Self {
        self.is_virtual = true;
        self
    }

    fn aligned(mut self, alignment: i64) -> Self {
        self.alignment = alignment;
        self
    }

    /// A finalized TENSOR descriptor of this spec.
    fn make(&self) -> hipdnnBackendDescriptor_t {
        let d = create(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_UNIQUE_ID,
            HIPDNN_TYPE_INT64,
            &[self.uid],
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            self.name.as_bytes(),
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_DATA_TYPE,
            HIPDNN_TYPE_DATA_TYPE,
            &[self.ty],
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_DIMENSIONS,
            HIPDNN_TYPE_INT64,
            &self.dims,
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_STRIDES,
            HIPDNN_TYPE_INT64,
            &self.strides,
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
            HIPDNN_TYPE_BOOLEAN,
            &[self.is_virtual],
        ));
        ok(set(
            d,
            HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
            HIPDNN_TYPE_INT64,
            &[self.alignment],
        ));
        if let Some(bytes) = &self.value {
            ok(set(
                d,
                HIPDNN_ATTR_TENSOR_VALUE_EXT,
                HIPDNN_TYPE_CHAR,
                bytes,
            ));
        }
        ok(finalize(d));
        d
    }

    /// `d` is a finalized TENSOR descriptor of this spec: every attribute reads back as
    /// set (as hipDNN's frontend's `unpackTensorAttributes` reads them), and it cannot
    /// change or be finalized again.
    #[track_caller]
    fn check(&self, d: hipdnnBackendDescriptor_t) {
        let what = self.name;
        let mut uid = [0i64];
        assert_eq!(
            get(d, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &mut uid),
            Ok(1),
            "{what}"
        );
        assert_eq!(uid, [self.uid], "{what}");
        let mut name = [0u8; 64];
        let n = get(d, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR, &mut name).unwrap();
        assert_eq!(&name[..n as usize - 1], self.name.as_bytes(), "{what}");
        let mut ty = [-1];
        assert_eq!(
            get(
                d,
                HIPDNN_ATTR_TENSOR_DATA_TYPE,
                HIPDNN_TYPE_DATA_TYPE,
                &mut ty
            ),
            Ok(1),
            "{what}"
        );
        assert_eq!(ty, [self.ty], "{what}");
        let rank = self.dims.len();
        assert_eq!(
            count(d, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64),
            Ok(rank as i64),
            "{what}"
        );
        let mut dims = vec![0i64; rank];
        get(
            d,
            HIPDNN_ATTR_TENSOR_DIMENSIONS,
            HIPDNN_TYPE_INT64,
            &mut dims,
        )
        .unwrap();
        assert_eq!(dims, self.dims, "{what}");
        let mut strides = vec![0i64; rank];
        assert_eq!(
            get(
                d,
                HIPDNN_ATTR_TENSOR_STRIDES,
                HIPDNN_TYPE_INT64,
                &mut strides
            ),
            Ok(rank as i64),
            "{what}"
        );
        assert_eq!(strides, self.strides, "{what}");
        let mut flag = [2u8];
        get(
            d,
            HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
            HIPDNN_TYPE_BOOLEAN,
            &mut flag,
        )
        .unwrap();
        assert_eq!(flag, [u8::from(self.is_virtual)], "{what}");
        get(
            d,
            HIPDNN_ATTR_TENSOR_IS_BY_VALUE,
            HIPDNN_TYPE_BOOLEAN,
            &mut flag,
        )
        .unwrap();
        assert_eq!(flag, [u8::from(self.value.is_some())], "{what}");
        if let Some(bytes) = &self.value {
            // As hipDNN's frontend asks: room for 8 bytes.
            let mut value = [0u8; 8];
            let n = get(
                d,
                HIPDNN_ATTR_TENSOR_VALUE_EXT,
                HIPDNN_TYPE_CHAR,
                &mut value,
            )
            .unwrap();
            assert_eq!(&value[..n as usize], bytes.as_slice(), "{what}");
        }
        let mut alignment = [0i64];
        get(
            d,
            HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
            HIPDNN_TYPE_INT64,
            &mut alignment,
        )
        .unwrap();
        assert_eq!(alignment, [self.alignment], "{what}");
        // Finalized: it cannot change, nor be finalized again.
        fails(
            set(d, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, &[99i64]),
            HIPDNN_STATUS_NOT_INITIALIZED,
        );
        fails(finalize(d), HIPDNN_STATUS_NOT_INITIALIZED);
    }
}

/// A value of one scalar attribute, with its attribute type.
#[derive(Debug, Clone, Copy)]
enum Scalar {
    I64(&'static [i64]),
    I32(&'static [i32]),
    Bool(bool),
    Text(&'static str),
    /// A C enumeration value of the attribute type given.
    Enum(hipdnnBackendAttributeType_t, i32),
}

fn set_scalar(
    d: hipdnnBackendDescriptor_t,
    name: hipdnnBackendAttributeName_t,
    value: Scalar,
) -> hipdnnStatus_t {
    match value {
        Scalar::I64(v) => set(d, name, HIPDNN_TYPE_INT64, v),
        Scalar::I32(v) => set(d, name, HIPDNN_TYPE_INT32, v),
        Scalar::Bool(v) => set(d, name, HIPDNN_TYPE_BOOLEAN, &[v]),
        Scalar::Text(v) => set(d, name, HIPDNN_TYPE_CHAR, v.as_bytes()),
        Scalar::Enum(ty, v) => set(d, name, ty, &[v]),
    }
}

/// One operation descriptor to build and read back: its TENSOR attributes (set), the
/// optional ones left unset, its TENSOR arrays, and the parameters it needs.
struct Case {
    what: &'static str,
    kind: hipdnnBackendDescriptorType_t,
    /// The compute-type attribute (FLOAT is set).
    compute: hipdnnBackendAttributeName_t,
    tensors: Vec<(hipdnnBackendAttributeName_t, Spec)>,
    unset: Vec<hipdnnBackendAttributeName_t>,
    arrays: Vec<(hipdnnBackendAttributeName_t, Vec<Spec>)>,
    /// TENSOR arrays that are optional and left empty.
    empty: Vec<hipdnnBackendAttributeName_t>,
    params: Vec<(hipdnnBackendAttributeName_t, Scalar)>,
}

impl Case {
    /// The operation, finalized, from these TENSOR descriptors (in the case's order).
    fn build(
        &self,
        tensors: &[hipdnnBackendDescriptor_t],
        arrays: &[Vec<hipdnnBackendDescriptor_t>],
    ) -> hipdnnBackendDescriptor_t {
        let op = create(self.kind);
        for ((attribute, _), &d) in self.tensors.iter().zip(tensors) {
            ok(set(op, *attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &[d]));
        }
        for ((attribute, _), ds) in self.arrays.iter().zip(arrays) {
            ok(set(op, *attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, ds));
        }
        for &(attribute, value) in &self.params {
            ok(set_scalar(op, attribute, value));
        }
        ok(set(
            op,
            self.compute,
            HIPDNN_TYPE_DATA_TYPE,
            &[HIPDNN_DATA_FLOAT],
        ));
        ok(set(
            op,
            HIPDNN_ATTR_OPERATION_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            self.what.as_bytes(),
        ));
        ok(finalize(op));
        op
    }
}

const CROSS_CORRELATION: Scalar =
    Scalar::Enum(HIPDNN_TYPE_CONVOLUTION_MODE, HIPDNN_CROSS_CORRELATION);

fn convolution_params() -> Vec<(hipdnnBackendAttributeName_t, Scalar)> {
    vec![
        (HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, Scalar::I64(&[0, 0])),
        (HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS, Scalar::I64(&[0, 0])),
        (HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES, Scalar::I64(&[1, 1])),
        (HIPDNN_ATTR_CONVOLUTION_DILATIONS, Scalar::I64(&[1, 1])),
        (HIPDNN_ATTR_CONVOLUTION_CONV_MODE, CROSS_CORRELATION),
    ]
}

/// Channels-last input [1, 4, 5, 5], filter [8, 4, 3, 3], output [1, 8, 3, 3].
fn conv_x(uid: i64) -> Spec {
    t(uid, "x", &[1, 4, 5, 5]).strided(&[100, 1, 20, 4])
}

fn conv_w(uid: i64) -> Spec {
    t(uid, "w", &[8, 4, 3, 3])
}

fn conv_y(uid: i64) -> Spec {
    t(uid, "y", &[1, 8, 3, 3])
}

const TRAINING: Scalar = Scalar::Enum(HIPDNN_TYPE_NORM_FWD_PHASE, HIPDNN_NORM_FWD_TRAINING);
const INFERENCE: Scalar = Scalar::Enum(HIPDNN_TYPE_NORM_FWD_PHASE, HIPDNN_NORM_FWD_INFERENCE);

/// Every operation descriptor the backend implements, each with every TENSOR attribute
/// (the optional ones partly set, partly not) and a TENSOR array where it has one.
fn cases() -> Vec<Case> {
    let channel = |uid, name| t(uid, name, &[1, 3, 1, 1]);
    let image = |uid, name| t(uid, name, &[2, 3, 4, 4]);
    let epsilon = |uid| t(uid, "epsilon", &[1]).scalar(1e-5);
    let sdpa = |uid, name| t(uid, name, &[1, 2, 4, 8]);
    let stats = |uid| t(uid, "stats", &[1, 2, 4, 1]);
    vec![
        Case {
            what: "conv_fwd",
            kind: HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
            compute: HIPDNN_ATTR_CONVOLUTION_COMP_TYPE,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, conv_x(1)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, conv_w(2)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, conv_y(3)),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: convolution_params(),
        },
        Case {
            what: "conv_bwd_data",
            kind: HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
            compute: HIPDNN_ATTR_CONVOLUTION_COMP_TYPE,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, conv_y(1)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, conv_w(2)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, conv_x(3)),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: convolution_params(),
        },
        Case {
            what: "conv_bwd_filter",
            kind: HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
            compute: HIPDNN_ATTR_CONVOLUTION_COMP_TYPE,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, conv_x(1)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, conv_y(2)),
                (HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, conv_w(3)),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: convolution_params(),
        },
        Case {
            what: "pointwise",
            kind: HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
            compute: HIPDNN_ATTR_POINTWISE_MATH_PREC,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT, t(1, "a", &[2, 3])),
                (
                    HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT,
                    t(2, "b", &[1, 3]).typed(HIPDNN_DATA_HALF).aligned(4),
                ),
                (
                    HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT,
                    t(3, "sum", &[2, 3]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_POINTWISE_IN_2_EXT],
            arrays: vec![],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_POINTWISE_MODE,
                Scalar::Enum(HIPDNN_TYPE_POINTWISE_MODE, HIPDNN_POINTWISE_ADD),
            )],
        },
        Case {
            what: "batchnorm_inference",
            kind: HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT,
                    image(1, "x"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT,
                    channel(2, "mean"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT,
                    channel(3, "inv_variance"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT,
                    channel(4, "scale"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT,
                    channel(5, "bias"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT,
                    image(6, "y"),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "batchnorm_inference_variance",
            kind: HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT,
                    image(1, "x"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT,
                    channel(2, "mean"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT,
                    channel(3, "variance"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT,
                    channel(4, "scale"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT,
                    channel(5, "bias"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT,
                    image(6, "y"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT,
                    epsilon(7),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "batchnorm",
            kind: HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT, image(1, "x")),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT,
                    channel(2, "scale"),
                ),
                (HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT, channel(3, "bias")),
                (HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT, epsilon(4)),
                (HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT, image(5, "y")),
                (HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT, channel(6, "mean")),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT,
                    channel(7, "inv_variance"),
                ),
            ],
            unset: vec![
                HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_MEAN_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_VARIANCE_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_MEAN_EXT,
                HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT,
            ],
            arrays: vec![(
                HIPDNN_ATTR_OPERATION_BATCHNORM_PEER_STATS_EXT,
                vec![
                    channel(8, "peer_0"),
                    channel(9, "peer_1"),
                    channel(10, "peer_2"),
                ],
            )],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "batchnorm_backward",
            kind: HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT,
                    image(1, "dy"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT,
                    image(2, "x"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT,
                    channel(3, "scale"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT,
                    image(4, "dx"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT,
                    channel(5, "dscale"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT,
                    channel(6, "dbias"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_MEAN_EXT,
                    channel(7, "mean"),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_INV_VARIANCE_EXT,
                    channel(8, "inv_variance"),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_PEER_STATS_EXT],
            params: vec![],
        },
        Case {
            what: "matmul",
            kind: HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
            compute: HIPDNN_ATTR_MATMUL_COMP_TYPE,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_MATMUL_ADESC, t(1, "a", &[2, 3, 4])),
                (
                    HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
                    // Column-major B.
                    t(2, "b", &[2, 4, 5]).strided(&[20, 1, 4]),
                ),
                (HIPDNN_ATTR_OPERATION_MATMUL_CDESC, t(3, "c", &[2, 3, 5])),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "reduction",
            kind: HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
            compute: HIPDNN_ATTR_REDUCTION_COMP_TYPE,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_REDUCTION_XDESC, t(1, "x", &[2, 3, 4])),
                (HIPDNN_ATTR_OPERATION_REDUCTION_YDESC, t(2, "y", &[2, 1, 4])),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_REDUCTION_OPERATOR,
                Scalar::Enum(
                    HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                    HIPDNN_REDUCE_TENSOR_ADD,
                ),
            )],
        },
        Case {
            what: "layernorm",
            kind: HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT,
                    t(1, "x", &[2, 3, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT,
                    t(2, "scale", &[1, 1, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT,
                    t(3, "bias", &[1, 1, 4, 5]),
                ),
                (HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT, epsilon(4)),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT,
                    t(5, "y", &[2, 3, 4, 5]),
                ),
            ],
            unset: vec![
                HIPDNN_ATTR_OPERATION_LAYERNORM_MEAN_EXT,
                HIPDNN_ATTR_OPERATION_LAYERNORM_INV_VARIANCE_EXT,
            ],
            arrays: vec![],
            empty: vec![],
            params: vec![(HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT, INFERENCE)],
        },
        Case {
            what: "layernorm_backward",
            kind: HIPDNN_BACKEND_OPERATION_LAYERNORM_BACKWARD_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT,
                    t(1, "dy", &[2, 3, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_X_EXT,
                    t(2, "x", &[2, 3, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_SCALE_EXT,
                    t(3, "scale", &[1, 1, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_MEAN_EXT,
                    t(4, "mean", &[2, 3, 1, 1]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_INV_VARIANCE_EXT,
                    t(5, "inv_variance", &[2, 3, 1, 1]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DX_EXT,
                    t(6, "dx", &[2, 3, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DSCALE_EXT,
                    t(7, "dscale", &[1, 1, 4, 5]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DBIAS_EXT,
                    t(8, "dbias", &[1, 1, 4, 5]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_EPSILON_EXT],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "rmsnorm",
            kind: HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT, t(1, "x", &[2, 3, 8])),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT,
                    t(2, "scale", &[1, 1, 8]),
                ),
                (HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT, epsilon(3)),
                (HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT, t(4, "y", &[2, 3, 8])),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_INV_RMS_EXT,
                    t(5, "inv_rms", &[2, 3, 1]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_RMSNORM_BIAS_EXT],
            arrays: vec![],
            empty: vec![],
            params: vec![(HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT, TRAINING)],
        },
        Case {
            what: "rmsnorm_backward",
            kind: HIPDNN_BACKEND_OPERATION_RMSNORM_BACKWARD_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT,
                    t(1, "dy", &[2, 3, 8]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_X_EXT,
                    t(2, "x", &[2, 3, 8]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_SCALE_EXT,
                    t(3, "scale", &[1, 1, 8]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_INV_RMS_EXT,
                    t(4, "inv_rms", &[2, 3, 1]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DX_EXT,
                    t(5, "dx", &[2, 3, 8]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DSCALE_EXT,
                    t(6, "dscale", &[1, 1, 8]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DBIAS_EXT],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "resample_fwd",
            kind: HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
            compute: HIPDNN_ATTR_RESAMPLE_COMP_TYPE,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC,
                    t(1, "x", &[1, 2, 4, 4]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC,
                    t(2, "y", &[1, 2, 2, 2]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC],
            arrays: vec![],
            empty: vec![],
            params: vec![
                (HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS, Scalar::I64(&[0, 0])),
                (HIPDNN_ATTR_RESAMPLE_POST_PADDINGS, Scalar::I64(&[0, 0])),
                (HIPDNN_ATTR_RESAMPLE_STRIDES, Scalar::I64(&[2, 2])),
                (HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS, Scalar::I64(&[2, 2])),
                (
                    HIPDNN_ATTR_RESAMPLE_MODE,
                    Scalar::Enum(HIPDNN_TYPE_RESAMPLE_MODE, HIPDNN_RESAMPLE_MAXPOOL),
                ),
                (
                    HIPDNN_ATTR_RESAMPLE_PADDING_MODE,
                    Scalar::Enum(HIPDNN_TYPE_PADDING_MODE, HIPDNN_PADDING_ZERO_PAD),
                ),
            ],
        },
        Case {
            what: "sdpa_fwd",
            kind: HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
            compute: HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC, sdpa(1, "q")),
                (HIPDNN_ATTR_OPERATION_SDPA_FWD_KDESC, sdpa(2, "k")),
                (HIPDNN_ATTR_OPERATION_SDPA_FWD_VDESC, sdpa(3, "v")),
                (HIPDNN_ATTR_OPERATION_SDPA_FWD_ODESC, sdpa(4, "o")),
                (
                    HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
                    t(5, "attn_scale", &[1]).scalar(0.125),
                ),
                (HIPDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats(6)),
            ],
            unset: vec![
                HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_MASK_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_MASK_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_SINK_TOKEN_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_Q_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_FWD_AMAX_O_EXT,
            ],
            arrays: vec![],
            empty: vec![],
            params: vec![(HIPDNN_ATTR_SDPA_FWD_GENERATE_STATS_EXT, Scalar::Bool(true))],
        },
        Case {
            what: "sdpa_bwd",
            kind: HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT,
            tensors: vec![
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT, sdpa(1, "q")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT, sdpa(2, "k")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT, sdpa(3, "v")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT, sdpa(4, "o")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT, sdpa(5, "do")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT, stats(6)),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT, sdpa(7, "dq")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT, sdpa(8, "dk")),
                (HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT, sdpa(9, "dv")),
            ],
            unset: vec![
                HIPDNN_ATTR_OPERATION_SDPA_BWD_SCALE_EXT,
                HIPDNN_ATTR_OPERATION_SDPA_BWD_DBIAS_EXT,
            ],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
        Case {
            what: "block_scale_quantize",
            kind: HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR,
            compute: HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC,
                    t(1, "x", &[4, 64]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC,
                    t(2, "y", &[4, 64]).typed(HIPDNN_DATA_FP8_E4M3),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC,
                    t(3, "scale", &[4, 2]).typed(HIPDNN_DATA_FP8_E8M0),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE,
                Scalar::I32(&[32]),
            )],
        },
        Case {
            what: "block_scale_dequantize",
            kind: HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR,
            compute: HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC,
                    t(1, "x", &[4, 64]).typed(HIPDNN_DATA_FP8_E4M3),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC,
                    t(2, "scale", &[4, 2]).typed(HIPDNN_DATA_FP8_E8M0),
                ),
                (
                    HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC,
                    t(3, "y", &[4, 64]),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE,
                Scalar::I32(&[1, 32]),
            )],
        },
        Case {
            what: "custom_op",
            kind: HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT,
            compute: HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT,
            tensors: vec![],
            unset: vec![],
            arrays: vec![
                (
                    HIPDNN_ATTR_OPERATION_CUSTOM_OP_INPUTS_EXT,
                    vec![t(1, "x", &[2, 8]), t(2, "freqs", &[1, 8])],
                ),
                (
                    HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT,
                    vec![t(3, "y", &[2, 8])],
                ),
            ],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT,
                Scalar::Text("example.rope"),
            )],
        },
        Case {
            what: "moe_grouped_matmul",
            kind: HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR,
            compute: HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC,
                    t(1, "tokens", &[8, 16]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC,
                    t(2, "weights", &[4, 16, 32]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC,
                    t(3, "first_token_offset", &[5]).typed(HIPDNN_DATA_INT32),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC,
                    t(4, "token_index", &[8]).typed(HIPDNN_DATA_INT32),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC,
                    t(5, "output", &[8, 32]),
                ),
            ],
            unset: vec![HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC],
            arrays: vec![],
            empty: vec![],
            params: vec![(
                HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE,
                Scalar::Enum(
                    HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE,
                    HIPDNN_MOE_GROUPED_MATMUL_MODE_GATHER,
                ),
            )],
        },
        Case {
            what: "moe_grouped_matmul_bwd",
            kind: HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR,
            compute: HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC,
            tensors: vec![
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC,
                    t(1, "doutput", &[1, 8, 32]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_TOKEN_DESC,
                    t(2, "tokens", &[1, 8, 16]),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_FIRST_TOKEN_OFFSET_DESC,
                    t(3, "first_token_offset", &[4, 1, 1]).typed(HIPDNN_DATA_INT32),
                ),
                (
                    HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC,
                    t(4, "dweight", &[4, 16, 32]),
                ),
            ],
            unset: vec![],
            arrays: vec![],
            empty: vec![],
            params: vec![],
        },
    ]
}

/// The TENSOR descriptors read back from an operation: its slots', then its arrays'.
type HandedOut = (
    Vec<hipdnnBackendDescriptor_t>,
    Vec<Vec<hipdnnBackendDescriptor_t>>,
);

/// Reads every TENSOR attribute of `op`, an operation of `case`, back and checks what
/// comes back (an unset optional tensor or an empty array as a count of 0, nothing
/// written); returns the descriptors handed out, slots then arrays.
fn check_tensors(case: &Case, op: hipdnnBackendDescriptor_t) -> HandedOut {
    let what = case.what;
    let mut read = Vec::new();
    for (attribute, spec) in &case.tensors {
        assert_eq!(
            count(op, *attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR),
            Ok(1),
            "{what}: attribute {attribute}"
        );
        let d = tensor_of(op, *attribute);
        spec.check(d);
        read.push(d);
    }
    for &attribute in &case.unset {
        assert_reads_nothing(what, op, attribute);
    }
    let mut read_arrays = Vec::new();
    for (attribute, specs) in &case.arrays {
        let n = specs.len();
        assert_eq!(
            count(op, *attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR),
            Ok(n as i64),
            "{what}: attribute {attribute}"
        );
        // Room for one more than there are: the count is the array's, the extra slot is
        // left alone.
        let mut out = vec![NONE; n + 1];
        assert_eq!(
            get(op, *attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &mut out),
            Ok(n as i64),
            "{what}: attribute {attribute}"
        );
        assert!(out[n].is_null(), "{what}: attribute {attribute}");
        out.truncate(n);
        for (spec, &d) in specs.iter().zip(&out) {
            spec.check(d);
        }
        // Room for one: the first is handed out, the count is still all of them.
        let mut first = [NONE; 2];
        assert_eq!(
            get_n(
                op,
                *attribute,
                HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                1,
                &mut first
            ),
            Ok(n as i64),
            "{what}: attribute {attribute}"
        );
        assert!(first[1].is_null(), "{what}: attribute {attribute}");
        specs[0].check(first[0]);
        destroy(first[0]);
        read_arrays.push(out);
    }
    for &attribute in &case.empty {
        assert_reads_nothing(what, op, attribute);
    }
    (read, read_arrays)
}

/// The TENSOR attribute `attribute` of `op` (an operation of case `what`), an optional
/// tensor not set or an empty TENSOR array, reads back as a count of 0; with an array,
/// the count is 0 and nothing is written.
#[track_caller]
fn assert_reads_nothing(
    what: &str,
    op: hipdnnBackendDescriptor_t,
    attribute: hipdnnBackendAttributeName_t,
) {
    assert_eq!(
        count(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR),
        Ok(0),
        "{what}: attribute {attribute}"
    );
    let mut out = [NONE];
    assert_eq!(
        get(op, attribute, HIPDNN_TYPE_BACKEND_DESCRIPTOR, &mut out),
        Ok(0),
        "{what}: attribute {attribute}"
    );
    assert!(out[0].is_null(), "{what}: attribute {attribute}");
}

/// Builds the case's operation and checks its TENSOR attributes ([`check_tensors`]);
/// builds the same operation again from what came back (the same graph bytes); reads
/// the operation of the graph's bytes back (as hipDNN's frontend unpacks a serialized
/// graph: before finalize) and checks its tensors and bytes too; destroys what came back
/// and checks that the operations and graphs are unchanged.
fn read_back(case: &Case) {
    let what = case.what;
    // The operation keeps its tensors: the descriptors it was given are gone.
    let op = built(case);
    let (read, read_arrays) = check_tensors(case, op);

    // What came back makes the same operation: the same graph, byte for byte.
    let again = case.build(&read, &read_arrays);
    let graph = graph_of(&[op]);
    let graph_again = graph_of(&[again]);
    let bytes = serialized(graph);
    assert_eq!(serialized(graph_again), bytes, "{what}");

    // The graph made from those bytes hands out the same operation, before finalize.
    let from_bytes = deserialized(&bytes);
    let mut node_op = [NONE];
    assert_eq!(
        get(
            from_bytes,
            HIPDNN_ATTR_OPERATIONGRAPH_OPS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &mut node_op
        ),
        Ok(1),
        "{what}: {}",
        c_last_error()
    );
    let (node_read, node_arrays) = check_tensors(case, node_op[0]);
    let graph_of_node = graph_of(&node_op);
    assert_eq!(serialized(graph_of_node), bytes, "{what}");
    for d in [from_bytes, node_op[0], graph_of_node]
        .into_iter()
        .chain(node_read)
        .chain(node_arrays.into_iter().flatten())
    {
        destroy(d);
    }

    // Destroying what came back changes neither the operations nor the graphs.
    for d in read.into_iter().chain(read_arrays.into_iter().flatten()) {
        destroy(d);
    }
    for (attribute, spec) in &case.tensors {
        let d = tensor_of(op, *attribute);
        spec.check(d);
        destroy(d);
    }
    let third = graph_of(&[op]);
    assert_eq!(serialized(third), bytes, "{what}");
    destroy(op);
    destroy(again);
    assert_eq!(serialized(graph), bytes, "{what}");
    assert_eq!(serialized(graph_again), bytes, "{what}");
    for g in [graph, graph_again, third] {
        destroy(g);
    }
}

#[test]
fn every_operation_hands_out_its_tensors_as_new_tensor_descriptors() {
    let _serial = serial();
    let cases = cases();
    assert_eq!(
        cases.len(),
        22,
        "every operation descriptor the backend implements"
    );
    no_leaks(|| {
        for case in &cases {
            read_back(case);
        }
    });
}

/// The case's operation, finalized; the TENSOR descriptors it was made from are gone.
fn built(case: &Case) -> hipdnnBackendDescriptor_t {
    let tensors: Vec<_> = case.tensors.iter().map(|(_, s)| s.make()).collect();
    let arrays: Vec<Vec<_>> = case
        .arrays
        .iter()
        .map(|(_, specs)| specs.iter().map(Spec::make).collect())
        .collect();
    let op = case.build(&tensors, &arrays);
    for d in tensors.into_iter().chain(arrays.into_iter().flatten()) {
        destroy(d);
    }
    op
}

fn case(what: &str) -> Case {
    cases()
        .into_iter()
        .find(|c| c.what == what)
        .expect("a case of that name")
}

#[test]
fn each_read_is_a_new_descriptor_that_outlives_the_operation() {
    let _serial = serial();
    no_leaks(read_twice_and_outlive);
}

fn read_twice_and_outlive() {
    let conv = case("conv_fwd");
    let op = built(&conv);
    let x = HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
    let first = tensor_of(op, x);
    let second = tensor_of(op, x);
    assert_ne!(first, second, "each read hands out a descriptor of its own");
    // The operation may go first: what it handed out stays whole.
    destroy(op);
    conv.tensors[0].1.check(first);
    destroy(first);
    conv.tensors[0].1.check(second);
    destroy(second);
    // Destroyed means gone: a second destroy is refused, and nothing is read.
    // SAFETY: any pointer; the backend looks it up among the live descriptors.
    let m = fails(
        unsafe { hipdnnBackendDestroyDescriptor(second) },
        HIPDNN_STATUS_BAD_PARAM,
    );
    assert!(m.contains("descriptor"), "{m}");
}

#[test]
fn tensor_reads_refuse_what_hipdnn_refuses() {
    let _serial = serial();
    no_leaks(refuse_bad_reads);
}

fn refuse_bad_reads() {
    let pointwise = case("pointwise");
    let op = built(&pointwise);
    let in_0 = HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT;
    let in_2 = HIPDNN_ATTR_OPERATION_POINTWISE_IN_2_EXT;
    let descriptor = HIPDNN_TYPE_BACKEND_DESCRIPTOR;
    let mut out = [NONE];
    let mut n = -1i64;

    // The attribute type must be BACKEND_DESCRIPTOR, set or not; the message names the
    // attribute.
    for attribute in [in_0, in_2] {
        let mut wrong = [0i64];
        assert_eq!(
            get(op, attribute, HIPDNN_TYPE_INT64, &mut wrong),
            Err(HIPDNN_STATUS_BAD_PARAM)
        );
        let m = c_last_error();
        assert!(m.contains(&attribute.to_string()), "{m}");
    }
    // A count query needs somewhere to put the count (hipDNN: BAD_PARAM_NULL_POINTER).
    for requested in [0, 1] {
        // SAFETY: no count, no array.
        let status = unsafe {
            hipdnnBackendGetAttribute(
                op,
                in_0,
                descriptor,
                requested,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        fails(status, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    }
    // So does an unset tensor's answer (its count, 0), even with an array.
    // SAFETY: no count; an array of one descriptor.
    let status = unsafe {
        hipdnnBackendGetAttribute(
            op,
            in_2,
            descriptor,
            1,
            ptr::null_mut(),
            out.as_mut_ptr().cast(),
        )
    };
    fails(status, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    assert!(out[0].is_null());
    // With an array and a tensor to hand out, the count may be null (as in hipDNN).
    // SAFETY: no count; an array of one descriptor.
    ok(unsafe {
        hipdnnBackendGetAttribute(
            op,
            in_0,
            descriptor,
            1,
            ptr::null_mut(),
            out.as_mut_ptr().cast(),
        )
    });
    pointwise.tensors[0].1.check(out[0]);
    destroy(out[0]);
    out[0] = ptr::null_mut();
    // A requested count of 0 with an array asks for the count: nothing is made.
    // SAFETY: a writable count; an array of one descriptor.
    ok(unsafe {
        hipdnnBackendGetAttribute(op, in_0, descriptor, 0, &mut n, out.as_mut_ptr().cast())
    });
    assert_eq!(n, 1);
    assert!(out[0].is_null());
    // A negative one is refused (for every attribute), and nothing is written.
    for (attribute, ty) in [
        (in_0, descriptor),
        (HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE),
    ] {
        n = -7;
        // SAFETY: a writable count; an array of one descriptor (room for a mode too).
        let status = unsafe {
            hipdnnBackendGetAttribute(op, attribute, ty, -1, &mut n, out.as_mut_ptr().cast())
        };
        let m = fails(status, HIPDNN_STATUS_BAD_PARAM);
        assert!(
            m.contains(&attribute.to_string()) && m.contains("negative"),
            "{m}"
        );
        assert_eq!(n, -7);
        assert!(out[0].is_null());
    }
    // Another operation's attribute, and no descriptor at all.
    assert_eq!(
        get(op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, descriptor, &mut out),
        Err(HIPDNN_STATUS_NOT_SUPPORTED)
    );
    assert_eq!(
        get(ptr::null_mut(), in_0, descriptor, &mut out),
        Err(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER)
    );
    assert!(out[0].is_null());

    // Not finalized: nothing reads back (hipDNN: NOT_INITIALIZED), nothing is made.
    let unfinished = create(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    let a = pointwise.tensors[0].1.make();
    ok(set(unfinished, in_0, descriptor, &[a]));
    assert_eq!(
        get(unfinished, in_0, descriptor, &mut out),
        Err(HIPDNN_STATUS_NOT_INITIALIZED)
    );
    assert_eq!(
        count(unfinished, in_0, descriptor),
        Err(HIPDNN_STATUS_NOT_INITIALIZED)
    );
    assert!(out[0].is_null());
    for d in [unfinished, a, op] {
        destroy(d);
    }
    // A destroyed operation is not read.
    assert_eq!(
        get(op, in_0, descriptor, &mut out),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    assert!(out[0].is_null());
}

/// A convolution `x * w -> y` then a pointwise `y + b -> z`, `y` virtual; the pointwise
/// takes `y` from `y_for_add`.
fn conv_then_add(
    conv: hipdnnBackendDescriptor_t,
    y_for_add: hipdnnBackendDescriptor_t,
) -> (hipdnnBackendDescriptor_t, Vec<hipdnnBackendDescriptor_t>) {
    let b = t(10, "b", &[1, 8, 1, 1]).make();
    let z = t(11, "z", &[1, 8, 3, 3]).make();
    let add = create(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    let descriptor = HIPDNN_TYPE_BACKEND_DESCRIPTOR;
    ok(set(
        add,
        HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT,
        descriptor,
        &[y_for_add],
    ));
    ok(set(
        add,
        HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT,
        descriptor,
        &[b],
    ));
    ok(set(
        add,
        HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT,
        descriptor,
        &[z],
    ));
    ok(set(
        add,
        HIPDNN_ATTR_POINTWISE_MODE,
        HIPDNN_TYPE_POINTWISE_MODE,
        &[HIPDNN_POINTWISE_ADD],
    ));
    ok(set(
        add,
        HIPDNN_ATTR_POINTWISE_MATH_PREC,
        HIPDNN_TYPE_DATA_TYPE,
        &[HIPDNN_DATA_FLOAT],
    ));
    ok(set(
        add,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        b"add",
    ));
    ok(finalize(add));
    let graph = graph_of_operations(&[conv, add], "conv_add");
    (graph, vec![b, z, add])
}

/// The convolution of [`conv_then_add`] with a virtual `y`, and its `y` descriptor.
fn conv_with_virtual_y() -> (hipdnnBackendDescriptor_t, hipdnnBackendDescriptor_t) {
    let conv = case("conv_fwd");
    let x = conv.tensors[0].1.make();
    let w = conv.tensors[1].1.make();
    let y = conv_y(3).virtual_().make();
    let op = conv.build(&[x, w, y], &[]);
    destroy(x);
    destroy(w);
    (op, y)
}

#[test]
fn a_tensor_read_back_is_the_tensor_it_came_from_to_a_graph() {
    let _serial = serial();
    no_leaks(share_a_read_back_tensor);
}

fn share_a_read_back_tensor() {
    let (conv, y) = conv_with_virtual_y();
    let (expected, made) = conv_then_add(conv, y);
    let bytes = serialized(expected);

    // The pointwise takes the convolution's output as read back from the convolution:
    // one tensor, the same graph.
    let y_back = tensor_of(conv, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
    conv_y(3).virtual_().check(y_back);
    let (graph, made_too) = conv_then_add(conv, y_back);
    destroy(y);
    destroy(y_back);
    assert_eq!(serialized(graph), bytes);

    // A new TENSOR descriptor with the same uid is another tensor (as in hipDNN).
    let other_y = conv_y(3).virtual_().make();
    let (clash, made_clash) = conv_then_add(conv, other_y);
    let mut size = 0;
    // SAFETY: size query: writable size, null buffer.
    let status =
        unsafe { hipdnnBackendGetSerializedBinaryGraph_ext(clash, 0, &mut size, ptr::null_mut()) };
    let m = fails(status, HIPDNN_STATUS_BAD_PARAM);
    assert!(m.contains("two different TENSOR descriptors"), "{m}");

    for d in [expected, graph, clash, conv, other_y]
        .into_iter()
        .chain(made)
        .chain(made_too)
        .chain(made_clash)
    {
        destroy(d);
    }
}

fn operation_name(op: hipdnnBackendDescriptor_t) -> String {
    let mut name = [0u8; 64];
    let n = get(
        op,
        HIPDNN_ATTR_OPERATION_NAME_EXT,
        HIPDNN_TYPE_CHAR,
        &mut name,
    )
    .unwrap();
    String::from_utf8(name[..n as usize - 1].to_vec()).unwrap()
}

#[test]
fn a_graph_hands_out_its_operations_as_new_operation_descriptors() {
    let _serial = serial();
    no_leaks(hand_out_operations);
}

fn hand_out_operations() {
    let ops = HIPDNN_ATTR_OPERATIONGRAPH_OPS;
    let descriptor = HIPDNN_TYPE_BACKEND_DESCRIPTOR;
    let (conv, y) = conv_with_virtual_y();
    let (graph, made) = conv_then_add(conv, y);
    let bytes = serialized(graph);
    // The operations were copied into the graph: they may go first.
    destroy(conv);
    destroy(y);
    for d in made {
        destroy(d);
    }

    // Before finalize, as hipDNN: the graph's attributes, the count, the operations.
    check_graph_attributes_before_finalize(graph);
    assert_eq!(count(graph, ops, descriptor), Ok(2));
    // Room for fewer than all is refused, and nothing is made.
    let mut out = [NONE; 2];
    assert_eq!(
        get_n(graph, ops, descriptor, 1, &mut out),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    let m = c_last_error();
    assert!(m.contains(&ops.to_string()), "{m}");
    assert_eq!(out, [NONE; 2]);
    let mut wrong = [0i64; 2];
    assert_eq!(
        get(graph, ops, HIPDNN_TYPE_INT64, &mut wrong),
        Err(HIPDNN_STATUS_BAD_PARAM)
    );
    // SAFETY: no count, no array.
    let status = unsafe {
        hipdnnBackendGetAttribute(graph, ops, descriptor, 0, ptr::null_mut(), ptr::null_mut())
    };
    fails(status, HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    assert_eq!(get(graph, ops, descriptor, &mut out), Ok(2));

    // Each is the operation that was set, in order: its kind, name, parameters and
    // tensors read back.
    let [conv_back, add_back] = out;
    assert_eq!(
        operation_type(conv_back),
        HIPDNN_OPERATION_TYPE_CONVOLUTION_FORWARD
    );
    assert_eq!(operation_name(conv_back), "conv_fwd");
    let mut dilations = [0i64; 2];
    assert_eq!(
        get(
            conv_back,
            HIPDNN_ATTR_CONVOLUTION_DILATIONS,
            HIPDNN_TYPE_INT64,
            &mut dilations
        ),
        Ok(2)
    );
    assert_eq!(dilations, [1, 1]);
    let x = tensor_of(conv_back, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X);
    conv_x(1).check(x);
    destroy(x);
    assert_eq!(operation_type(add_back), HIPDNN_OPERATION_TYPE_POINTWISE);
    assert_eq!(operation_name(add_back), "add");
    let y_back = tensor_of(add_back, HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT);
    conv_y(3).virtual_().check(y_back);
    destroy(y_back);
    // Finalized: they cannot change.
    fails(
        set(
            add_back,
            HIPDNN_ATTR_OPERATION_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            b"x",
        ),
        HIPDNN_STATUS_NOT_INITIALIZED,
    );
    // They make the same graph again.
    let again = graph_of_operations(&out, "conv_add");
    assert_eq!(serialized(again), bytes);

    // Finalized with a handle, the graph still hands them out.
    let dir = tempfile::tempdir().unwrap();
    use_only(dir.path());
    let h = handle();
    ok(set(
        graph,
        HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
        HIPDNN_TYPE_HANDLE,
        &[h],
    ));
    ok(finalize(graph));
    let mut after = [NONE; 2];
    assert_eq!(get(graph, ops, descriptor, &mut after), Ok(2));
    assert_eq!(
        operation_type(after[0]),
        HIPDNN_OPERATION_TYPE_CONVOLUTION_FORWARD
    );
    assert_eq!(operation_type(after[1]), HIPDNN_OPERATION_TYPE_POINTWISE);

    // Destroying what was handed out changes neither graph.
    for d in out.into_iter().chain(after) {
        destroy(d);
    }
    assert_eq!(serialized(graph), bytes);
    assert_eq!(serialized(again), bytes);
    destroy(again);
    destroy(graph);
    // SAFETY: a live handle, not used again.
    ok(unsafe { hipdnnDestroy(h) });
}

/// The graph-level attributes of an unfinalized `graph` named "conv_add", FLOAT
/// throughout, no preferred engine, read as hipDNN's frontend reads them; the handle
/// needs finalizing.
fn check_graph_attributes_before_finalize(graph: hipdnnBackendDescriptor_t) {
    let mut name = [0u8; 16];
    assert_eq!(
        get(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
            HIPDNN_TYPE_CHAR,
            &mut name
        ),
        Ok(9)
    );
    assert_eq!(&name[..9], b"conv_add\0");
    let mut ty = [-1];
    assert_eq!(
        get(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT,
            HIPDNN_TYPE_DATA_TYPE,
            &mut ty
        ),
        Ok(1)
    );
    assert_eq!(ty, [HIPDNN_DATA_FLOAT]);
    assert_eq!(
        count(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT,
            HIPDNN_TYPE_INT64
        ),
        Ok(0)
    );
    let mut h = [ptr::null_mut::<hipdnnHandle>()];
    assert_eq!(
        get(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE,
            HIPDNN_TYPE_HANDLE,
            &mut h
        ),
        Err(HIPDNN_STATUS_NOT_INITIALIZED)
    );
}

#[test]
fn a_graph_made_from_bytes_hands_out_an_operation_per_node() {
    let _serial = serial();
    no_leaks(hand_out_node_operations);
}

fn hand_out_node_operations() {
    let ops = HIPDNN_ATTR_OPERATIONGRAPH_OPS;
    let descriptor = HIPDNN_TYPE_BACKEND_DESCRIPTOR;
    let (conv, y) = conv_with_virtual_y();
    let (built_graph, made) = conv_then_add(conv, y);
    let bytes = serialized(built_graph);
    for d in [built_graph, conv, y].into_iter().chain(made) {
        destroy(d);
    }

    // Before finalize and without a handle, as hipDNN's frontend unpacks a serialized
    // graph: the graph's attributes and one operation per node, in order.
    let graph = deserialized(&bytes);
    check_graph_attributes_before_finalize(graph);
    assert_eq!(count(graph, ops, descriptor), Ok(2));
    let mut first = [NONE; 2];
    assert_eq!(get(graph, ops, descriptor, &mut first), Ok(2));
    let mut second = [NONE; 2];
    assert_eq!(get(graph, ops, descriptor, &mut second), Ok(2));
    assert_eq!(
        operation_type(first[0]),
        HIPDNN_OPERATION_TYPE_CONVOLUTION_FORWARD
    );
    assert_eq!(operation_name(first[0]), "conv_fwd");
    let mut mode = [-1];
    assert_eq!(
        get(
            first[0],
            HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
            HIPDNN_TYPE_CONVOLUTION_MODE,
            &mut mode
        ),
        Ok(1)
    );
    assert_eq!(mode, [HIPDNN_CROSS_CORRELATION]);
    let x = tensor_of(first[0], HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X);
    conv_x(1).check(x);
    destroy(x);
    assert_eq!(operation_type(second[1]), HIPDNN_OPERATION_TYPE_POINTWISE);
    let mut pointwise_mode = [-1];
    assert_eq!(
        get(
            second[1],
            HIPDNN_ATTR_POINTWISE_MODE,
            HIPDNN_TYPE_POINTWISE_MODE,
            &mut pointwise_mode
        ),
        Ok(1)
    );
    assert_eq!(pointwise_mode, [HIPDNN_POINTWISE_ADD]);
    let y_back = tensor_of(second[1], HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT);
    conv_y(3).virtual_().check(y_back);
    destroy(y_back);
    // Every read shares the graph's tensors: operations of two reads make one graph,
    // the graph the bytes came from.
    let mixed = graph_of_operations(&[first[0], second[1]], "conv_add");
    assert_eq!(serialized(mixed), bytes);
    for d in first.into_iter().chain(second) {
        destroy(d);
    }
    assert_eq!(serialized(mixed), bytes);
    assert_eq!(serialized(graph), bytes);
    destroy(mixed);
    destroy(graph);
}

#[test]
fn a_node_no_operation_descriptor_stands_for_is_not_supported() {
    let _serial = serial();
    no_leaks(refuse_resample_backward);
}

fn refuse_resample_backward() {
    let tensor = |uid: i64, name: &str, dims: &[i64]| TensorAttributes {
        uid,
        name: name.to_owned(),
        data_type: DataType::Float,
        dims: dims.to_vec(),
        strides: packed(dims),
        ..TensorAttributes::default()
    };
    let model = Graph {
        name: "pool_backward".into(),
        tensors: vec![
            tensor(1, "dy", &[1, 2, 2, 2]),
            tensor(2, "dx", &[1, 2, 4, 4]),
        ],
        nodes: vec![Node {
            name: "pool_bwd".into(),
            compute_data_type: DataType::Float,
            attributes: ResampleBwdAttributes {
                dy_tensor_uid: 1,
                dx_tensor_uid: 2,
                pre_padding: vec![0, 0],
                post_padding: vec![0, 0],
                stride: vec![2, 2],
                window: vec![2, 2],
                resample_mode: ResampleMode::AVGPOOL_EXCLUDE_PADDING,
                padding_mode: PaddingMode::ZERO_PAD,
                ..ResampleBwdAttributes::default()
            }
            .into(),
        }],
        ..Graph::default()
    };
    let bytes = OperationGraph::new(model).unwrap().bytes().to_vec();
    let graph = deserialized(&bytes);
    let mut out = [NONE];
    assert_eq!(
        get(
            graph,
            HIPDNN_ATTR_OPERATIONGRAPH_OPS,
            HIPDNN_TYPE_BACKEND_DESCRIPTOR,
            &mut out
        ),
        Err(HIPDNN_STATUS_NOT_SUPPORTED)
    );
    let m = c_last_error();
    assert!(
        m.contains("pool_bwd") && m.contains("ResampleBwdAttributes"),
        "{m}"
    );
    assert!(out[0].is_null());
    destroy(graph);
}
