//! The list of generated sub-headers of `hipdnn_backend.h`: hipDNN's names and numbers
//! (facts of its interface), with our own descriptions. See the [parent module](super).

#![expect(non_camel_case_types, reason = "hipDNN's C type names")]

c_headers! {
    /// How scaled dot-product attention is computed (`HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT`).
    header "HipdnnAttentionImplementation.h" guard "HIPDNN_ATTENTION_IMPLEMENTATION_H" {
        /// Attention implementation strategy.
        new hipdnnAttentionImplementation_t {
            /// The engine chooses.
            HIPDNN_ATTENTION_IMPLEMENTATION_AUTO_EXT = 0,
            /// Composed of separate matmul and softmax steps.
            HIPDNN_ATTENTION_IMPLEMENTATION_COMPOSITE_EXT = 1,
            /// One fused kernel.
            HIPDNN_ATTENTION_IMPLEMENTATION_UNIFIED_EXT = 2,
        }
    }
    /// Attribute names for hipdnnBackendSetAttribute and hipdnnBackendGetAttribute, grouped by
    /// descriptor in ranges of 100. Every hipDNN name is declared; the ones this backend
    /// implements are documented with what they take (see hipdnn_backend.h for the others:
    /// setting or reading an unimplemented attribute is HIPDNN_STATUS_NOT_SUPPORTED or
    /// HIPDNN_STATUS_BAD_PARAM).
    header "HipdnnBackendAttributeName.h" guard "HIPDNN_BACKEND_ATTRIBUTE_NAME_H" {
        /// Attribute names.
        new hipdnnBackendAttributeName_t {
            /// § Engine heuristic (ENGINEHEUR, 100-199)
            /// ENGINEHEUR: heuristic mode (HEUR_MODE, required; HIPDNN_HEUR_MODE_FALLBACK is the one mode).
            HIPDNN_ATTR_ENGINEHEUR_MODE = 100,
            /// ENGINEHEUR: the operation graph (BACKEND_DESCRIPTOR).
            HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 101,
            /// ENGINEHEUR: ranked engine configs (BACKEND_DESCRIPTOR, read).
            HIPDNN_ATTR_ENGINEHEUR_RESULTS = 102,
            HIPDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET = 103,
            HIPDNN_ATTR_ENGINEHEUR_DEVICEPROP = 104,
            /// ENGINEHEUR: only whether an engine runs the graph (BOOLEAN; results: at most the best one).
            HIPDNN_ATTR_ENGINEHEUR_FIND_FIRST_EXT = 105,
            HIPDNN_ATTR_ENGINEHEUR_POLICY_ORDER_EXT = 106,
            /// § Engine config (ENGINECFG, 200-299)
            /// ENGINECFG: the engine (BACKEND_DESCRIPTOR).
            HIPDNN_ATTR_ENGINECFG_ENGINE = 200,
            HIPDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO = 201,
            /// ENGINECFG: knob choices (BACKEND_DESCRIPTOR array of KNOB_CHOICE).
            HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES = 202,
            HIPDNN_ATTR_ENGINECFG_WORKSPACE_SIZE = 203,
            /// § Execution plan (EXECUTION_PLAN, 300-399)
            /// EXECUTION_PLAN: the handle (HANDLE; defaults to the graph's).
            HIPDNN_ATTR_EXECUTION_PLAN_HANDLE = 300,
            /// EXECUTION_PLAN: the engine config (BACKEND_DESCRIPTOR).
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 301,
            /// EXECUTION_PLAN: workspace bytes (INT64, read).
            HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 302,
            HIPDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS = 303,
            HIPDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS = 304,
            HIPDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION = 305,
            HIPDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE = 306,
            HIPDNN_ATTR_EXECUTION_PLAN_DEVICEPROP = 307,
            /// EXECUTION_PLAN: uids the variant pack must give pointers for (INT64, read).
            HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT = 308,
            HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_GLOBAL_INDEX_EXT = 309,
            HIPDNN_ATTR_EXECUTION_PLAN_IS_OVERRIDE_SHAPE_ENABLED_EXT = 310,
            /// § Intermediate info (400-499)
            HIPDNN_ATTR_INTERMEDIATE_INFO_UNIQUE_ID = 400,
            HIPDNN_ATTR_INTERMEDIATE_INFO_SIZE = 401,
            HIPDNN_ATTR_INTERMEDIATE_INFO_DEPENDENT_DATA_UIDS = 402,
            HIPDNN_ATTR_INTERMEDIATE_INFO_DEPENDENT_ATTRIBUTES = 403,
            /// § Knob choice (KNOB_CHOICE, 500-599)
            /// KNOB_CHOICE: the knob id (CHAR).
            HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE = 500,
            /// KNOB_CHOICE: the value (INT64, DOUBLE or CHAR).
            HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE = 501,
            /// § Operation graph (OPERATIONGRAPH, 600-699)
            /// OPERATIONGRAPH: the handle (HANDLE).
            HIPDNN_ATTR_OPERATIONGRAPH_HANDLE = 600,
            /// OPERATIONGRAPH: operations (BACKEND_DESCRIPTOR array of finalized operation descriptors; each call appends).
            HIPDNN_ATTR_OPERATIONGRAPH_OPS = 601,
            /// OPERATIONGRAPH: number of engines that can run it (INT64, read).
            HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT = 602,
            HIPDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED = 603,
            /// OPERATIONGRAPH: default compute type (DATA_TYPE).
            HIPDNN_ATTR_OPERATIONGRAPH_COMPUTE_DATA_TYPE_EXT = 604,
            /// OPERATIONGRAPH: default type of virtual tensors (DATA_TYPE).
            HIPDNN_ATTR_OPERATIONGRAPH_INTERMEDIATE_DATA_TYPE_EXT = 605,
            /// OPERATIONGRAPH: default type of the other tensors (DATA_TYPE).
            HIPDNN_ATTR_OPERATIONGRAPH_IO_DATA_TYPE_EXT = 606,
            /// OPERATIONGRAPH: the engine to rank first when it accepts the graph (INT64).
            HIPDNN_ATTR_OPERATIONGRAPH_PREFERRED_ENGINE_ID_EXT = 607,
            /// OPERATIONGRAPH: the graph's name (CHAR).
            HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT = 608,
            /// OPERATIONGRAPH: shapes may be overridden at execute (BOOLEAN).
            HIPDNN_ATTR_OPERATIONGRAPH_IS_OVERRIDE_SHAPE_ENABLED_EXT = 609,
            /// § Variant pack (VARIANT_PACK, 700-799)
            /// VARIANT_PACK: tensor uids (INT64).
            HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 700,
            /// VARIANT_PACK: one pointer per uid (VOID_PTR).
            HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 701,
            HIPDNN_ATTR_VARIANT_PACK_INTERMEDIATES = 702,
            /// VARIANT_PACK: the workspace (VOID_PTR).
            HIPDNN_ATTR_VARIANT_PACK_WORKSPACE = 703,
            HIPDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS_EXT = 704,
            HIPDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES_EXT = 705,
            HIPDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES_EXT = 706,
            HIPDNN_ATTR_VARIANT_PACK_OVERRIDE_LENGTHS_EXT = 707,
            /// § Layout info (800-899)
            HIPDNN_ATTR_LAYOUT_INFO_TENSOR_UID = 800,
            HIPDNN_ATTR_LAYOUT_INFO_TYPES = 801,
            /// § Knob info (KNOB_INFO, 900-999)
            HIPDNN_ATTR_KNOB_INFO_TYPE = 900,
            HIPDNN_ATTR_KNOB_INFO_MAXIMUM_VALUE = 901,
            HIPDNN_ATTR_KNOB_INFO_MINIMUM_VALUE = 902,
            HIPDNN_ATTR_KNOB_INFO_STRIDE = 903,
            HIPDNN_ATTR_KNOB_INFO_DESCRIPTION = 904,
            HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE = 905,
            HIPDNN_ATTR_KNOB_INFO_DEPRECATED = 906,
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_INT = 907,
            HIPDNN_ATTR_KNOB_INFO_VALID_VALUES_STRING = 908,
            HIPDNN_ATTR_KNOB_INFO_STRING_MAX_LENGTH = 909,
            HIPDNN_ATTR_KNOB_INFO_DEFAULT_VALUE_TYPE = 910,
            /// § Engine (ENGINE, 1000-1099)
            /// ENGINE: the operation graph (BACKEND_DESCRIPTOR).
            HIPDNN_ATTR_ENGINE_OPERATION_GRAPH = 1000,
            /// ENGINE: the engine id (INT64).
            HIPDNN_ATTR_ENGINE_GLOBAL_INDEX = 1001,
            HIPDNN_ATTR_ENGINE_KNOB_INFO = 1002,
            HIPDNN_ATTR_ENGINE_NUMERICAL_NOTE = 1003,
            HIPDNN_ATTR_ENGINE_LAYOUT_INFO = 1004,
            /// ENGINE: behavior notes (BEHAVIOR_NOTE, read).
            HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE = 1005,
            HIPDNN_ATTR_ENGINE_CU_COUNT_TARGET_EXT = 1006,
            HIPDNN_ATTR_ENGINE_DEVICEPROP = 1007,
            /// ENGINE: the engine's name (CHAR, read; the count includes the NUL).
            HIPDNN_ATTR_ENGINE_NAME_EXT = 1008,
            /// § Kernel cache (1100-1199)
            HIPDNN_ATTR_KERNEL_CACHE_IS_ENGINECFG_KERNEL_CACHED = 1100,
            /// § Device properties (1200-1299)
            HIPDNN_ATTR_DEVICEPROP_DEVICE_ID = 1200,
            HIPDNN_ATTR_DEVICEPROP_HANDLE = 1201,
            HIPDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION = 1202,
            /// § Tensor (TENSOR, 1300-1399)
            /// TENSOR: the uid (INT64).
            HIPDNN_ATTR_TENSOR_UNIQUE_ID = 1300,
            /// TENSOR: the name (CHAR).
            HIPDNN_ATTR_TENSOR_NAME_EXT = 1301,
            /// TENSOR: the element type (DATA_TYPE; required).
            HIPDNN_ATTR_TENSOR_DATA_TYPE = 1302,
            /// TENSOR: the extents (INT64 array; required).
            HIPDNN_ATTR_TENSOR_DIMENSIONS = 1303,
            /// TENSOR: the strides in elements (INT64 array, one per dimension; required).
            HIPDNN_ATTR_TENSOR_STRIDES = 1304,
            /// TENSOR: an intermediate that gets no buffer (BOOLEAN).
            HIPDNN_ATTR_TENSOR_IS_VIRTUAL = 1305,
            /// TENSOR: a pass-by-value scalar (CHAR: the value's bytes; after the data type).
            HIPDNN_ATTR_TENSOR_VALUE_EXT = 1306,
            /// TENSOR: whether a pass-by-value scalar is set (BOOLEAN, read).
            HIPDNN_ATTR_TENSOR_IS_BY_VALUE = 1307,
            /// The same attribute as HIPDNN_ATTR_TENSOR_VALUE_EXT (cuDNN's name).
            HIPDNN_ATTR_TENSOR_CONSTANT_VALUE = 1306,
            /// TENSOR: the scalar is given at execute time (BOOLEAN).
            HIPDNN_ATTR_TENSOR_IS_RUNTIME_PASS_BY_VALUE_EXT = 1308,
            /// TENSOR: required pointer alignment in bytes (INT64; default 16).
            HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 1309,
            /// TENSOR: uid of the ragged-offset tensor (INT64).
            HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC = 1310,
            /// § Convolution forward (1400-1499)
            /// OPERATION_CONVOLUTION_FORWARD: the filter (BACKEND_DESCRIPTOR, a finalized TENSOR).
            HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 1400,
            /// OPERATION_CONVOLUTION_FORWARD: the input (BACKEND_DESCRIPTOR, a finalized TENSOR).
            HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 1401,
            /// OPERATION_CONVOLUTION_FORWARD: the output (BACKEND_DESCRIPTOR, a finalized TENSOR).
            HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 1402,
            /// § Convolution parameters, on every convolution descriptor (1500-1599)
            /// Convolution: compute type (DATA_TYPE; required).
            HIPDNN_ATTR_CONVOLUTION_COMP_TYPE = 1500,
            /// Convolution: mode (CONVOLUTION_MODE, or INT64 holding the wire value; required).
            HIPDNN_ATTR_CONVOLUTION_CONV_MODE = 1501,
            /// Convolution: dilation per spatial dimension (INT64 array; required).
            HIPDNN_ATTR_CONVOLUTION_DILATIONS = 1502,
            /// Convolution: stride per spatial dimension (INT64 array; required).
            HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 1503,
            /// Convolution: padding after, per spatial dimension (INT64 array; required).
            HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS = 1504,
            /// Convolution: padding before, per spatial dimension (INT64 array; required).
            HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 1505,
            /// § Convolution backward filter (1600-1699)
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X = 1600,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY = 1601,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW = 1602,
            /// § Convolution backward data (1700-1799)
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY = 1700,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W = 1701,
            HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX = 1702,
            /// § Batch-norm inference (1800-1899)
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_X_EXT = 1800,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_MEAN_EXT = 1801,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_INV_VARIANCE_EXT = 1802,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_SCALE_EXT = 1803,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_BIAS_EXT = 1804,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_Y_EXT = 1805,
            HIPDNN_ATTR_BATCHNORM_INF_COMP_TYPE_EXT = 1806,
            /// § Batch-norm inference with variance (1900-1999)
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_X_EXT = 1900,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_MEAN_EXT = 1901,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_VARIANCE_EXT = 1902,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_SCALE_EXT = 1903,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_BIAS_EXT = 1904,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_Y_EXT = 1905,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INFERENCE_VARIANCE_EPSILON_EXT = 1906,
            HIPDNN_ATTR_BATCHNORM_INF_VAR_COMP_TYPE_EXT = 1907,
            /// § Batch-norm backward (2000-2199)
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DY_EXT = 2000,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_X_EXT = 2001,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_SCALE_EXT = 2002,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DX_EXT = 2003,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DSCALE_EXT = 2004,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_DBIAS_EXT = 2005,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_MEAN_EXT = 2006,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_INV_VARIANCE_EXT = 2007,
            HIPDNN_ATTR_BATCHNORM_BACKWARD_COMP_TYPE_EXT = 2100,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BACKWARD_PEER_STATS_EXT = 2101,
            /// § Pointwise (2200-2299), with its parameters (2300-2399)
            /// OPERATION_POINTWISE: first input (BACKEND_DESCRIPTOR, a finalized TENSOR; required).
            HIPDNN_ATTR_OPERATION_POINTWISE_IN_0_EXT = 2200,
            /// OPERATION_POINTWISE: output (BACKEND_DESCRIPTOR, a finalized TENSOR; required).
            HIPDNN_ATTR_OPERATION_POINTWISE_OUT_0_EXT = 2201,
            /// OPERATION_POINTWISE: second input (BACKEND_DESCRIPTOR, a finalized TENSOR).
            HIPDNN_ATTR_OPERATION_POINTWISE_IN_1_EXT = 2202,
            /// OPERATION_POINTWISE: third input (BACKEND_DESCRIPTOR, a finalized TENSOR).
            HIPDNN_ATTR_OPERATION_POINTWISE_IN_2_EXT = 2203,
            /// Pointwise: the operation (POINTWISE_MODE; required).
            HIPDNN_ATTR_POINTWISE_MODE = 2300,
            /// Pointwise: ReLU lower clip (FLOAT).
            HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP = 2301,
            /// Pointwise: ReLU upper clip (FLOAT).
            HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP = 2302,
            /// Pointwise: slope below the lower clip (FLOAT).
            HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE = 2303,
            /// Pointwise: Swish beta (FLOAT).
            HIPDNN_ATTR_POINTWISE_SWISH_BETA = 2304,
            /// Pointwise: ELU alpha (FLOAT).
            HIPDNN_ATTR_POINTWISE_ELU_ALPHA = 2305,
            /// Pointwise: Softplus beta (FLOAT).
            HIPDNN_ATTR_POINTWISE_SOFTPLUS_BETA = 2306,
            /// Pointwise: compute type (DATA_TYPE; required).
            HIPDNN_ATTR_POINTWISE_MATH_PREC = 2307,
            /// Pointwise: axis index (INT64).
            HIPDNN_ATTR_POINTWISE_AXIS = 2308,
            /// § RMS norm (2400-2499)
            HIPDNN_ATTR_OPERATION_RMSNORM_X_EXT = 2400,
            HIPDNN_ATTR_OPERATION_RMSNORM_SCALE_EXT = 2401,
            HIPDNN_ATTR_OPERATION_RMSNORM_EPSILON_EXT = 2402,
            HIPDNN_ATTR_OPERATION_RMSNORM_Y_EXT = 2403,
            HIPDNN_ATTR_OPERATION_RMSNORM_BIAS_EXT = 2404,
            HIPDNN_ATTR_OPERATION_RMSNORM_INV_RMS_EXT = 2405,
            HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT = 2406,
            HIPDNN_ATTR_RMSNORM_COMP_TYPE_EXT = 2407,
            /// § Matmul (2500-2599)
            HIPDNN_ATTR_OPERATION_MATMUL_ADESC = 2500,
            HIPDNN_ATTR_OPERATION_MATMUL_BDESC = 2501,
            HIPDNN_ATTR_OPERATION_MATMUL_CDESC = 2502,
            HIPDNN_ATTR_MATMUL_COMP_TYPE = 2503,
            /// § Scaled dot-product attention, forward (2600-2699)
            HIPDNN_ATTR_OPERATION_SDPA_FWD_QDESC = 2600,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_KDESC = 2601,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_VDESC = 2602,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_ODESC = 2603,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_MASK_EXT = 2604,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC = 2605,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC = 2606,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC = 2607,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SEED_EXT = 2608,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_OFFSET_EXT = 2609,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_MASK_EXT = 2610,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DROPOUT_SCALE_EXT = 2611,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC = 2612,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_VDESC = 2613,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC = 2614,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SINK_TOKEN_EXT = 2615,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_Q_EXT = 2616,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_K_EXT = 2617,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_V_EXT = 2618,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_DESCALE_S_EXT = 2619,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALE_S_EXT = 2620,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SCALE_O_EXT = 2621,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC = 2622,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_MAX_EXT = 2623,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_SUM_EXP_EXT = 2624,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_RNG_DUMP_EXT = 2625,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_AMAX_S_EXT = 2626,
            HIPDNN_ATTR_OPERATION_SDPA_FWD_AMAX_O_EXT = 2627,
            HIPDNN_ATTR_SDPA_FWD_GENERATE_STATS_EXT = 2628,
            HIPDNN_ATTR_SDPA_FWD_ALIBI_MASK_EXT = 2629,
            HIPDNN_ATTR_SDPA_FWD_PADDING_MASK_EXT = 2630,
            HIPDNN_ATTR_SDPA_FWD_CAUSAL_MASK_EXT = 2631,
            HIPDNN_ATTR_SDPA_FWD_CAUSAL_MASK_BOTTOM_RIGHT_EXT = 2632,
            HIPDNN_ATTR_SDPA_FWD_DROPOUT_PROBABILITY_EXT = 2633,
            HIPDNN_ATTR_SDPA_FWD_ATTN_SCALE_VALUE_EXT = 2634,
            HIPDNN_ATTR_SDPA_FWD_LEFT_BOUND_EXT = 2635,
            HIPDNN_ATTR_SDPA_FWD_RIGHT_BOUND_EXT = 2636,
            HIPDNN_ATTR_SDPA_FWD_MAX_SEQ_LEN_KV_EXT = 2637,
            HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT = 2638,
            HIPDNN_ATTR_SDPA_FWD_MMA_CORE_MODE_EXT = 2639,
            HIPDNN_ATTR_SDPA_FWD_IMPLEMENTATION_EXT = 2640,
            HIPDNN_ATTR_SDPA_FWD_COMP_TYPE_EXT = 2641,
            /// § Layer norm (2700-2799)
            HIPDNN_ATTR_OPERATION_LAYERNORM_X_EXT = 2700,
            HIPDNN_ATTR_OPERATION_LAYERNORM_SCALE_EXT = 2701,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BIAS_EXT = 2702,
            HIPDNN_ATTR_OPERATION_LAYERNORM_EPSILON_EXT = 2703,
            HIPDNN_ATTR_OPERATION_LAYERNORM_Y_EXT = 2704,
            HIPDNN_ATTR_OPERATION_LAYERNORM_MEAN_EXT = 2705,
            HIPDNN_ATTR_OPERATION_LAYERNORM_INV_VARIANCE_EXT = 2706,
            HIPDNN_ATTR_OPERATION_LAYERNORM_FWD_PHASE_EXT = 2707,
            HIPDNN_ATTR_LAYERNORM_COMP_TYPE_EXT = 2708,
            HIPDNN_ATTR_OPERATION_LAYERNORM_NORMALIZED_DIM_COUNT_EXT = 2709,
            /// § Block-scale quantize (2800-2806) and dequantize (2807-2899)
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC = 2800,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC = 2801,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC = 2802,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE = 2803,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_AXIS_EXT = 2804,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_TRANSPOSE_EXT = 2805,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC = 2806,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC = 2807,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC = 2808,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC = 2809,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE = 2810,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_NEG_SCALE = 2811,
            HIPDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC = 2812,
            /// § Batch-norm training forward (2900-2913)
            HIPDNN_ATTR_OPERATION_BATCHNORM_X_EXT = 2900,
            HIPDNN_ATTR_OPERATION_BATCHNORM_SCALE_EXT = 2901,
            HIPDNN_ATTR_OPERATION_BATCHNORM_BIAS_EXT = 2902,
            HIPDNN_ATTR_OPERATION_BATCHNORM_EPSILON_EXT = 2903,
            HIPDNN_ATTR_OPERATION_BATCHNORM_Y_EXT = 2904,
            HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_MEAN_EXT = 2905,
            HIPDNN_ATTR_OPERATION_BATCHNORM_PREV_RUNNING_VARIANCE_EXT = 2906,
            HIPDNN_ATTR_OPERATION_BATCHNORM_MOMENTUM_EXT = 2907,
            HIPDNN_ATTR_OPERATION_BATCHNORM_MEAN_EXT = 2908,
            HIPDNN_ATTR_OPERATION_BATCHNORM_INV_VARIANCE_EXT = 2909,
            HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_MEAN_EXT = 2910,
            HIPDNN_ATTR_OPERATION_BATCHNORM_NEXT_RUNNING_VARIANCE_EXT = 2911,
            HIPDNN_ATTR_BATCHNORM_COMP_TYPE_EXT = 2912,
            HIPDNN_ATTR_OPERATION_BATCHNORM_PEER_STATS_EXT = 2913,
            /// § Custom operation (3000-3099)
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_INPUTS_EXT = 3000,
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_OUTPUTS_EXT = 3001,
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_ID_EXT = 3002,
            HIPDNN_ATTR_OPERATION_CUSTOM_OP_DATA_EXT = 3003,
            HIPDNN_ATTR_CUSTOM_OP_COMP_TYPE_EXT = 3004,
            /// § Scaled dot-product attention, backward (3100-3199)
            HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT = 3100,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT = 3101,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT = 3102,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT = 3103,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT = 3104,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT = 3105,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT = 3106,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT = 3107,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT = 3108,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_SCALE_EXT = 3109,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_ATTN_MASK_EXT = 3110,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_Q_EXT = 3111,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KV_EXT = 3112,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_SEED_EXT = 3113,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_OFFSET_EXT = 3114,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_MASK_EXT = 3115,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_SCALE_EXT = 3116,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DROPOUT_SCALE_INV_EXT = 3117,
            HIPDNN_ATTR_OPERATION_SDPA_BWD_DBIAS_EXT = 3118,
            HIPDNN_ATTR_SDPA_BWD_ALIBI_MASK_EXT = 3119,
            HIPDNN_ATTR_SDPA_BWD_PADDING_MASK_EXT = 3120,
            HIPDNN_ATTR_SDPA_BWD_CAUSAL_MASK_EXT = 3121,
            HIPDNN_ATTR_SDPA_BWD_CAUSAL_MASK_BOTTOM_RIGHT_EXT = 3122,
            HIPDNN_ATTR_SDPA_BWD_DROPOUT_PROBABILITY_EXT = 3123,
            HIPDNN_ATTR_SDPA_BWD_ATTN_SCALE_VALUE_EXT = 3124,
            HIPDNN_ATTR_SDPA_BWD_LEFT_BOUND_EXT = 3125,
            HIPDNN_ATTR_SDPA_BWD_RIGHT_BOUND_EXT = 3126,
            HIPDNN_ATTR_SDPA_BWD_DIAGONAL_ALIGNMENT_EXT = 3127,
            HIPDNN_ATTR_SDPA_BWD_COMP_TYPE_EXT = 3128,
            /// § Reduction (3200-3299)
            HIPDNN_ATTR_OPERATION_REDUCTION_XDESC = 3200,
            HIPDNN_ATTR_OPERATION_REDUCTION_YDESC = 3201,
            HIPDNN_ATTR_REDUCTION_OPERATOR = 3202,
            HIPDNN_ATTR_REDUCTION_COMP_TYPE = 3203,
            HIPDNN_ATTR_REDUCTION_IS_DETERMINISTIC = 3204,
            /// § Resample forward (3300-3399), backward (3408-3410) and their parameters (3400-3407)
            HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC = 3300,
            HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC = 3301,
            HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC = 3302,
            HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC = 3408,
            HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC = 3409,
            HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC = 3410,
            HIPDNN_ATTR_RESAMPLE_MODE = 3400,
            HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS = 3401,
            HIPDNN_ATTR_RESAMPLE_POST_PADDINGS = 3402,
            HIPDNN_ATTR_RESAMPLE_STRIDES = 3403,
            HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS = 3404,
            HIPDNN_ATTR_RESAMPLE_PADDING_MODE = 3405,
            HIPDNN_ATTR_RESAMPLE_GENERATE_INDEX_EXT = 3406,
            HIPDNN_ATTR_RESAMPLE_COMP_TYPE = 3407,
            /// § RMS norm backward (3500-3599)
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DY_EXT = 3500,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_X_EXT = 3501,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_SCALE_EXT = 3502,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_INV_RMS_EXT = 3503,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DX_EXT = 3504,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DSCALE_EXT = 3505,
            HIPDNN_ATTR_OPERATION_RMSNORM_BACKWARD_DBIAS_EXT = 3506,
            HIPDNN_ATTR_RMSNORM_BACKWARD_COMP_TYPE_EXT = 3507,
            /// § Layer norm backward (3600-3699)
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DY_EXT = 3600,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_X_EXT = 3601,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_SCALE_EXT = 3602,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_MEAN_EXT = 3603,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_INV_VARIANCE_EXT = 3604,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_EPSILON_EXT = 3605,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DX_EXT = 3606,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DSCALE_EXT = 3607,
            HIPDNN_ATTR_OPERATION_LAYERNORM_BACKWARD_DBIAS_EXT = 3608,
            HIPDNN_ATTR_LAYERNORM_BACKWARD_NORMALIZED_DIM_COUNT_EXT = 3609,
            HIPDNN_ATTR_LAYERNORM_BACKWARD_COMP_TYPE_EXT = 3610,
            /// § Mixture-of-experts grouped matmul (3700-3799)
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC = 3700,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC = 3701,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC = 3702,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC = 3703,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC = 3704,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC = 3705,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE = 3706,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K = 3707,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC = 3708,
            /// § Mixture-of-experts grouped matmul backward (3800-3899)
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC = 3800,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_TOKEN_DESC = 3801,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_FIRST_TOKEN_OFFSET_DESC = 3802,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC = 3803,
            HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC = 3804,
            /// § Extensions: serialized knobs, operation type and name (60000-60399)
            HIPDNN_ATTR_KNOB_INFO_SERIALIZED_VALUE = 60000,
            HIPDNN_ATTR_KNOB_CHOICE_SERIALIZED_VALUE = 60100,
            /// Any operation: its kind (OPERATION_TYPE_EXT, read).
            HIPDNN_ATTR_OPERATION_TYPE_EXT = 60200,
            /// Any operation: the node's name (CHAR).
            HIPDNN_ATTR_OPERATION_NAME_EXT = 60300,
            /// § Profiling control (60400-60499)
            HIPDNN_ATTR_PROFILING_HANDLE_EXT = 60400,
            HIPDNN_ATTR_PROFILING_START_EXT = 60401,
            HIPDNN_ATTR_PROFILING_STOP_EXT = 60402,
            HIPDNN_ATTR_PROFILING_ELAPSED_MS_EXT = 60403,
            HIPDNN_ATTR_PROFILING_DEVICE_SYNC_EXT = 60404,
        }
    }
    /// The type of an attribute's values, given with every hipdnnBackendSetAttribute and
    /// hipdnnBackendGetAttribute call.
    header "HipdnnBackendAttributeType.h" guard "HIPDNN_BACKEND_ATTRIBUTE_TYPE_H" {
        /// Attribute value types.
        new hipdnnBackendAttributeType_t {
            /// hipdnnHandle_t.
            HIPDNN_TYPE_HANDLE = 0,
            /// hipdnnDataType_t.
            HIPDNN_TYPE_DATA_TYPE = 1,
            /// bool.
            HIPDNN_TYPE_BOOLEAN = 2,
            /// int64_t.
            HIPDNN_TYPE_INT64 = 3,
            /// float.
            HIPDNN_TYPE_FLOAT = 4,
            /// double.
            HIPDNN_TYPE_DOUBLE = 5,
            /// void*.
            HIPDNN_TYPE_VOID_PTR = 6,
            /// hipdnnBackendHeurMode_t.
            HIPDNN_TYPE_HEUR_MODE = 7,
            HIPDNN_TYPE_KNOB_TYPE = 8,
            HIPDNN_TYPE_NAN_PROPOGATION = 9,
            HIPDNN_TYPE_NUMERICAL_NOTE = 10,
            HIPDNN_TYPE_LAYOUT_TYPE = 11,
            /// hipdnnBackendAttributeName_t.
            HIPDNN_TYPE_ATTRIB_NAME = 12,
            /// hipdnnBackendDescriptor_t.
            HIPDNN_TYPE_BACKEND_DESCRIPTOR = 13,
            HIPDNN_TYPE_GENSTATS_MODE = 14,
            HIPDNN_TYPE_BN_FINALIZE_STATS_MODE = 15,
            /// hipdnnBackendBehaviorNote_t.
            HIPDNN_TYPE_BEHAVIOR_NOTE = 16,
            HIPDNN_TYPE_TENSOR_REORDERING_MODE = 17,
            /// int32_t.
            HIPDNN_TYPE_INT32 = 18,
            /// char.
            HIPDNN_TYPE_CHAR = 19,
            HIPDNN_TYPE_SIGNAL_MODE = 20,
            HIPDNN_TYPE_FRACTION = 21,
            /// hipdnnNormFwdPhase_t.
            HIPDNN_TYPE_NORM_FWD_PHASE = 22,
            HIPDNN_TYPE_RNG_DISTRIBUTION = 23,
            /// hipdnnConvolutionMode_t.
            HIPDNN_TYPE_CONVOLUTION_MODE = 24,
            /// hipdnnPointwiseMode_t.
            HIPDNN_TYPE_POINTWISE_MODE = 25,
            /// hipdnnDiagonalAlignment_t.
            HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT = 26,
            /// Older spelling of HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT.
            HIPDNN_TYPE_DIAGONAL_ALIGNMENT = 26,
            /// hipdnnAttentionImplementation_t.
            HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT = 27,
            /// Older spelling of HIPDNN_TYPE_ATTENTION_IMPLEMENTATION_EXT.
            HIPDNN_TYPE_ATTENTION_IMPLEMENTATION = 27,
            /// hipdnnReduceTensorOp_t.
            HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE = 28,
            /// hipdnnResampleMode_t.
            HIPDNN_TYPE_RESAMPLE_MODE = 29,
            /// hipdnnPaddingMode_t.
            HIPDNN_TYPE_PADDING_MODE = 30,
            /// hipdnnMoeGroupedMatmulMode_t.
            HIPDNN_TYPE_MOE_GROUPED_MATMUL_MODE = 31,
            /// hipdnnBackendFlatbufferData_t (a serialized FlatBuffer).
            HIPDNN_TYPE_FLATBUFFER_DATA_STRUCT_EXT = 10000,
            /// hipdnnOperationType_t.
            HIPDNN_TYPE_OPERATION_TYPE_EXT = 10001,
        }
    }
    /// Behavior notes of an engine (`HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE`).
    header "HipdnnBackendBehaviorNote.h" guard "HIPDNN_BACKEND_BEHAVIOR_NOTE_H"
    prelude r#"#ifndef HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED
#define HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED"#
    epilogue r#"#endif /* HIPDNN_BEHAVIOR_NOTE_TYPES_DEFINED */"#
    {
        /// What an engine's plans do or need, beyond computing the graph.
        new hipdnnBackendBehaviorNote_t {
            /// Plans compile kernels at build time.
            HIPDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION = 0,
            /// Tensors are transformed to another layout.
            HIPDNN_BEHAVIOR_NOTE_REQUIRES_LAYOUT_TRANSFORM = 1,
            /// Execution can be captured in a HIP graph.
            HIPDNN_BEHAVIOR_NOTE_SUPPORTS_GRAPH_CAPTURE = 2,
            /// Plans call into another library.
            HIPDNN_BEHAVIOR_NOTE_EXTERNAL_LIBRARY_DEPENDENCY = 3,
            /// Plans can be serialized.
            HIPDNN_BEHAVIOR_NOTE_SUPPORTS_EXECUTION_PLAN_SERIALIZATION = 4,
            /// The number of hipDNN's notes (not a note).
            HIPDNN_BEHAVIOR_NOTE_TYPE_COUNT = 5,
            /// This backend's extension: the engine takes HOST memory. Its variant-pack data
            /// pointers and workspace must be host pointers, and it runs on the calling thread.
            /// An engine without this note takes device memory, used on the handle's stream.
            HIPDNN_BEHAVIOR_NOTE_HOST_MEMORY_EXT = 10000,
        }
    }
    /// Logging types: severities and the callbacks that receive messages.
    header "HipdnnBackendCallbackTypes.h" guard "HIPDNN_BACKEND_CALLBACK_TYPES_H"
    prelude r#"#ifdef __cplusplus
extern "C" {
#endif

/* The same two types, behind the same guard, as the plugin SDK's PluginApiDataTypes.h:
   the headers may be included together, in either order. */
#ifndef HIPDNN_CALLBACK_TYPES_DEFINED
#define HIPDNN_CALLBACK_TYPES_DEFINED

/* Severity of a log message, least severe first; HIPDNN_SEV_OFF as a level disables
   logging. */
typedef enum
{
    HIPDNN_SEV_INFO = 0,
    HIPDNN_SEV_WARN = 1,
    HIPDNN_SEV_ERROR = 2,
    HIPDNN_SEV_FATAL = 3,
    HIPDNN_SEV_OFF = 4
} hipdnnSeverity_t;

/* Receives one formatted log message, valid for the call only. */
typedef void (*hipdnnCallback_t)(hipdnnSeverity_t severity, const char* message);

#endif /* HIPDNN_CALLBACK_TYPES_DEFINED */

#ifndef HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED
#define HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED

/* The user data passed back to a log callback; with the callback, it identifies the
   registration (hipdnnSetUserLogCallback_ext). */
typedef void* hipdnnUserLogCallbackHandle_t;

/* A user log callback: (userHandle, severity, message). The message is valid for the
   call only. */
typedef void (*hipdnnUserLogCallback_t)(hipdnnUserLogCallbackHandle_t userHandle,
                                        hipdnnSeverity_t severity,
                                        const char* message);

#endif /* HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED */

#ifdef __cplusplus
} /* extern "C" */
#endif"#
    {
    }
    /// Kinds of descriptor for hipdnnBackendCreateDescriptor. Every hipDNN kind is declared;
    /// creating one this backend does not implement is HIPDNN_STATUS_NOT_SUPPORTED.
    header "HipdnnBackendDescriptorType.h" guard "HIPDNN_BACKEND_DESCRIPTOR_TYPE_H" {
        /// Kinds of backend descriptor.
        new hipdnnBackendDescriptorType_t {
            /// Not a descriptor type.
            HIPDNN_INVALID_TYPE_EXT = 0,
            /// Older spelling of HIPDNN_INVALID_TYPE_EXT.
            HIPDNN_INVALID_TYPE = 0,
            /// An engine of an operation graph.
            HIPDNN_BACKEND_ENGINE_DESCRIPTOR = 1,
            /// An engine with knob choices.
            HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR = 2,
            /// The engine heuristic: ranked engine configs for a graph.
            HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 3,
            /// An execution plan.
            HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 4,
            HIPDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR = 5,
            /// One knob setting.
            HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 6,
            HIPDNN_BACKEND_KNOB_INFO_DESCRIPTOR = 7,
            HIPDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR = 8,
            HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR = 9,
            /// An operation graph, from operation descriptors (OPS) or from bytes.
            HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 10,
            /// Tensor pointers and workspace for one execution.
            HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 11,
            HIPDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR = 12,
            HIPDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR = 13,
            /// A tensor of a graph built from descriptors.
            HIPDNN_BACKEND_TENSOR_DESCRIPTOR = 14,
            /// A forward convolution node.
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 15,
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR = 16,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT = 17,
            /// A pointwise node (unary, binary or ternary).
            HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 18,
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR = 19,
            /// Older spelling of HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR.
            HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DESCRIPTOR = 19,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_BACKWARD_DESCRIPTOR_EXT = 20,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_VARIANCE_DESCRIPTOR_EXT = 21,
            HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 22,
            HIPDNN_BACKEND_OPERATION_RMSNORM_DESCRIPTOR_EXT = 23,
            HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR = 24,
            HIPDNN_BACKEND_OPERATION_LAYERNORM_DESCRIPTOR_EXT = 25,
            HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR = 26,
            HIPDNN_BACKEND_OPERATION_BATCHNORM_DESCRIPTOR_EXT = 27,
            HIPDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR = 28,
            HIPDNN_BACKEND_OPERATION_CUSTOM_OP_DESCRIPTOR_EXT = 29,
            HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT = 30,
            HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 31,
            HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR = 32,
            HIPDNN_BACKEND_OPERATION_RMSNORM_BACKWARD_DESCRIPTOR_EXT = 33,
            HIPDNN_BACKEND_PROFILING_CONTROL_EXT = 34,
            HIPDNN_BACKEND_OPERATION_LAYERNORM_BACKWARD_DESCRIPTOR_EXT = 35,
            HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR = 36,
            HIPDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR = 37,
        }
    }
    /// Enumerations of the extension functions that hipDNN declares in hipdnn_backend.h itself.
    header "HipdnnBackendExtensionTypes.h" guard "HIPDNN_BACKEND_EXTENSION_TYPES_H" {
        /// How a user log callback is invoked (hipdnnSetUserLogCallback_ext).
        new hipdnnLogCallbackMode_t {
            /// On the logging thread, before the logging call returns.
            HIPDNN_LOG_CALLBACK_SYNC = 0,
            /// On the backend's log thread, in order, through a queue of 8192 messages that blocks logging threads when full.
            HIPDNN_LOG_CALLBACK_ASYNC = 1,
        }
        /// What a serialized blob holds (bits, combined with OR).
        new hipdnnSerializedContentFlags_t {
            /// A graph.
            HIPDNN_SERIALIZED_CONTENT_GRAPH = 1,
            /// An execution plan.
            HIPDNN_SERIALIZED_CONTENT_EXECUTION_PLAN = 2,
        }
    }
    /// A serialized FlatBuffer passed as an attribute value (HIPDNN_TYPE_FLATBUFFER_DATA_STRUCT_EXT).
    header "HipdnnBackendFlatbufferData.h" guard "HIPDNN_BACKEND_FLATBUFFER_DATA_H"
    prelude r#"#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the caller owns: `size` bytes at `ptr`. */
typedef struct
{
    const void* ptr;
    size_t size;
} hipdnnBackendFlatbufferData_t;

#ifdef __cplusplus
} /* extern "C" */
#endif"#
    {
    }
    /// Heuristic modes (`HIPDNN_ATTR_ENGINEHEUR_MODE`).
    header "HipdnnBackendHeuristicType.h" guard "HIPDNN_BACKEND_HEURISTIC_TYPE_H" {
        /// How the engine heuristic ranks engines (every mode ranks the same way here).
        new hipdnnBackendHeurMode_t {
            /// Engines that can run the graph, in the backend's static order.
            HIPDNN_HEUR_MODE_FALLBACK = 0,
        }
    }
    /// Sizes of the C API.
    header "HipdnnBackendLimits.h" guard "HIPDNN_BACKEND_LIMITS_H"
    epilogue r#"/* The longest error message, NUL included: a buffer of this size always holds the whole
   message of hipdnnGetLastErrorString. */
#define HIPDNN_ERROR_STRING_MAX_LENGTH 2048"#
    {
    }
    /// How custom plugin paths combine with the default ones (hipdnnSetEnginePluginPaths_ext).
    header "HipdnnBackendPluginLoadingMode.h" guard "HIPDNN_BACKEND_PLUGIN_LOADING_MODE_H"
    epilogue r#"/* The mode used until hipdnnSetEnginePluginPaths_ext sets one. (hipDNN declares this as a
   C++ constexpr; a macro is valid C too.) */
#define HIPDNN_DEFAULT_PLUGIN_LOADING_MODE HIPDNN_PLUGIN_LOADING_ADDITIVE"#
    {
        /// Plugin loading mode.
        new hipdnnPluginLoadingMode_ext_t {
            /// Default and custom paths.
            HIPDNN_PLUGIN_LOADING_ADDITIVE = 0,
            /// Custom paths only.
            HIPDNN_PLUGIN_LOADING_ABSOLUTE = 1,
        }
    }
    /// When plugins are unloaded (hipdnnSetPluginUnloadMode_ext).
    header "HipdnnBackendPluginUnloadingMode.h" guard "HIPDNN_BACKEND_PLUGIN_UNLOADING_MODE_H"
    epilogue r#"/* The mode used until hipdnnSetPluginUnloadMode_ext sets one. (hipDNN declares this as a
   C++ constexpr; a macro is valid C too.) */
#define HIPDNN_DEFAULT_PLUGIN_UNLOADING_MODE HIPDNN_PLUGIN_UNLOAD_LAZY"#
    {
        /// Plugin unloading mode.
        new hipdnnPluginUnloadingMode_ext_t {
            /// Keep plugins loaded after the last handle (default).
            HIPDNN_PLUGIN_UNLOAD_LAZY = 0,
            /// Unload plugins with the last handle.
            HIPDNN_PLUGIN_UNLOAD_EAGER = 1,
        }
    }
    /// Convolution modes (`HIPDNN_ATTR_CONVOLUTION_CONV_MODE`).
    header "HipdnnConvolutionMode.h" guard "HIPDNN_CONVOLUTION_MODE_H" {
        /// Whether the filter is flipped.
        new hipdnnConvolutionMode_t {
            /// Convolution: the filter is flipped.
            HIPDNN_CONVOLUTION = 0,
            /// Cross-correlation: the filter is not flipped (what deep learning calls convolution).
            HIPDNN_CROSS_CORRELATION = 1,
        }
    }
    /// Tensor element types of the C API. The numbering is the C API's, not the wire format's.
    header "HipdnnDataType.h" guard "HIPDNN_DATA_TYPE_H" {
        /// Element types.
        new hipdnnDataType_t {
            /// 32-bit IEEE float.
            HIPDNN_DATA_FLOAT = 0,
            /// 64-bit IEEE float.
            HIPDNN_DATA_DOUBLE = 1,
            /// 16-bit IEEE float.
            HIPDNN_DATA_HALF = 2,
            /// 8-bit signed integer.
            HIPDNN_DATA_INT8 = 3,
            /// 32-bit signed integer.
            HIPDNN_DATA_INT32 = 4,
            /// 8-bit unsigned integer.
            HIPDNN_DATA_UINT8 = 5,
            /// bfloat16.
            HIPDNN_DATA_BFLOAT16 = 6,
            /// 8-bit float, 4 exponent bits, 3 mantissa bits.
            HIPDNN_DATA_FP8_E4M3 = 7,
            /// 8-bit float, 5 exponent bits, 2 mantissa bits.
            HIPDNN_DATA_FP8_E5M2 = 8,
            /// 8-bit exponent-only float (block scales).
            HIPDNN_DATA_FP8_E8M0 = 9,
            /// 4-bit float.
            HIPDNN_DATA_FP4_E2M1 = 10,
            /// 4-bit signed integer.
            HIPDNN_DATA_INT4 = 11,
            /// 6-bit float, 2 exponent bits.
            HIPDNN_DATA_FP6_E2M3_EXT = 12,
            /// 6-bit float, 3 exponent bits.
            HIPDNN_DATA_FP6_E3M2_EXT = 13,
            /// 64-bit signed integer.
            HIPDNN_DATA_INT64 = 14,
            /// FP8 E4M3, finite with unsigned zero (no negative zero, NaN at 0x80).
            HIPDNN_DATA_FP8_E4M3_FNUZ = 15,
            /// FP8 E5M2, finite with unsigned zero.
            HIPDNN_DATA_FP8_E5M2_FNUZ = 16,
        }
    }
    /// Where the causal-mask diagonal starts (`HIPDNN_ATTR_SDPA_FWD_DIAGONAL_ALIGNMENT_EXT`).
    header "HipdnnDiagonalAlignment.h" guard "HIPDNN_DIAGONAL_ALIGNMENT_H" {
        /// Diagonal alignment of an attention mask.
        new hipdnnDiagonalAlignment_t {
            /// At the top-left corner.
            HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT_EXT = 0,
            /// At the bottom-right corner.
            HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT_EXT = 1,
        }
    }
    /// Token routing of a mixture-of-experts grouped matmul (`HIPDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE`).
    header "HipdnnMoeGroupedMatmulMode.h" guard "HIPDNN_MOE_GROUPED_MATMUL_MODE_H" {
        /// Routing mode.
        new hipdnnMoeGroupedMatmulMode_t {
            /// The tokens are already grouped by expert.
            HIPDNN_MOE_GROUPED_MATMUL_MODE_NONE = 0,
            /// Tokens are gathered by expert first.
            HIPDNN_MOE_GROUPED_MATMUL_MODE_GATHER = 1,
            /// Results are scattered back to token order.
            HIPDNN_MOE_GROUPED_MATMUL_MODE_SCATTER = 2,
        }
    }
    /// Phase of a forward normalization (`HIPDNN_ATTR_OPERATION_RMSNORM_FWD_PHASE_EXT`, …).
    header "HipdnnNormFwdPhase.h" guard "HIPDNN_NORM_FWD_PHASE_H" {
        /// Forward phase.
        new hipdnnNormFwdPhase_t {
            /// Inference: no statistics are saved.
            HIPDNN_NORM_FWD_INFERENCE = 1,
            /// Training: statistics are saved for the backward pass.
            HIPDNN_NORM_FWD_TRAINING = 2,
        }
    }
    /// The kind of an operation descriptor (`HIPDNN_ATTR_OPERATION_TYPE_EXT`).
    header "HipdnnOperationType.h" guard "HIPDNN_OPERATION_TYPE_H"
    epilogue r#"/* The name hipDNN's attribute-type documentation uses for the same type. */
typedef hipdnnOperationType_t hipdnnOperationType_ext_t;"#
    {
        /// Operation kinds.
        new hipdnnOperationType_t {
            HIPDNN_OPERATION_TYPE_NOT_SET = 0,
            HIPDNN_OPERATION_TYPE_CONVOLUTION_FORWARD = 1,
            HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_DATA = 2,
            HIPDNN_OPERATION_TYPE_CONVOLUTION_BACKWARD_WEIGHTS = 3,
            HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE = 4,
            HIPDNN_OPERATION_TYPE_BATCHNORM_BACKWARD = 5,
            HIPDNN_OPERATION_TYPE_BATCHNORM_INFERENCE_VARIANCE = 6,
            HIPDNN_OPERATION_TYPE_BATCHNORM = 7,
            HIPDNN_OPERATION_TYPE_POINTWISE = 8,
            HIPDNN_OPERATION_TYPE_MATMUL = 9,
            HIPDNN_OPERATION_TYPE_RMSNORM = 10,
            HIPDNN_OPERATION_TYPE_LAYERNORM = 11,
            HIPDNN_OPERATION_TYPE_SDPA_FORWARD = 12,
            HIPDNN_OPERATION_TYPE_BLOCK_SCALE_QUANTIZE = 13,
            HIPDNN_OPERATION_TYPE_SDPA_BACKWARD = 14,
            HIPDNN_OPERATION_TYPE_BLOCK_SCALE_DEQUANTIZE = 15,
            HIPDNN_OPERATION_TYPE_CUSTOM_OP = 16,
            HIPDNN_OPERATION_TYPE_REDUCTION = 17,
            HIPDNN_OPERATION_TYPE_POOLING_FORWARD = 18,
            HIPDNN_OPERATION_TYPE_POOLING_BACKWARD = 19,
        }
    }
    /// How a resample pads (`HIPDNN_ATTR_RESAMPLE_PADDING_MODE`).
    header "HipdnnPaddingMode.h" guard "HIPDNN_PADDING_MODE_H" {
        /// Padding mode.
        new hipdnnPaddingMode_t {
            /// Pad with negative infinity.
            HIPDNN_PADDING_NEG_INF_PAD = 1,
            /// Pad with zeros.
            HIPDNN_PADDING_ZERO_PAD = 2,
        }
    }
    /// Pointwise operations (`HIPDNN_ATTR_POINTWISE_MODE`); the values are the wire format's too.
    header "HipdnnPointwiseMode.h" guard "HIPDNN_POINTWISE_MODE_H" {
        /// Pointwise operation, unary, binary or ternary.
        new hipdnnPointwiseMode_t {
            /// § The current spelling.
            HIPDNN_POINTWISE_ABS = 1,
            HIPDNN_POINTWISE_ADD = 2,
            HIPDNN_POINTWISE_ADD_SQUARE = 3,
            HIPDNN_POINTWISE_BINARY_SELECT = 4,
            HIPDNN_POINTWISE_CEIL = 5,
            HIPDNN_POINTWISE_CMP_EQ = 6,
            HIPDNN_POINTWISE_CMP_GE = 7,
            HIPDNN_POINTWISE_CMP_GT = 8,
            HIPDNN_POINTWISE_CMP_LE = 9,
            HIPDNN_POINTWISE_CMP_LT = 10,
            HIPDNN_POINTWISE_CMP_NEQ = 11,
            HIPDNN_POINTWISE_DIV = 12,
            HIPDNN_POINTWISE_ELU_BWD = 13,
            HIPDNN_POINTWISE_ELU_FWD = 14,
            HIPDNN_POINTWISE_ERF = 15,
            HIPDNN_POINTWISE_EXP = 16,
            HIPDNN_POINTWISE_FLOOR = 17,
            HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD = 18,
            HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD = 19,
            HIPDNN_POINTWISE_GELU_BWD = 20,
            HIPDNN_POINTWISE_GELU_FWD = 21,
            HIPDNN_POINTWISE_GEN_INDEX = 22,
            HIPDNN_POINTWISE_IDENTITY = 23,
            HIPDNN_POINTWISE_LOG = 24,
            HIPDNN_POINTWISE_LOGICAL_AND = 25,
            HIPDNN_POINTWISE_LOGICAL_NOT = 26,
            HIPDNN_POINTWISE_LOGICAL_OR = 27,
            HIPDNN_POINTWISE_MAX = 28,
            HIPDNN_POINTWISE_MIN = 29,
            HIPDNN_POINTWISE_MUL = 30,
            HIPDNN_POINTWISE_NEG = 31,
            HIPDNN_POINTWISE_RECIPROCAL = 32,
            HIPDNN_POINTWISE_RELU_BWD = 33,
            HIPDNN_POINTWISE_RELU_FWD = 34,
            HIPDNN_POINTWISE_RSQRT = 35,
            HIPDNN_POINTWISE_SIGMOID_BWD = 36,
            HIPDNN_POINTWISE_SIGMOID_FWD = 37,
            HIPDNN_POINTWISE_SIN = 38,
            HIPDNN_POINTWISE_SOFTPLUS_BWD = 39,
            HIPDNN_POINTWISE_SOFTPLUS_FWD = 40,
            HIPDNN_POINTWISE_SQRT = 41,
            HIPDNN_POINTWISE_SUB = 42,
            HIPDNN_POINTWISE_SWISH_BWD = 43,
            HIPDNN_POINTWISE_SWISH_FWD = 44,
            HIPDNN_POINTWISE_TAN = 45,
            HIPDNN_POINTWISE_TANH_BWD = 46,
            HIPDNN_POINTWISE_TANH_FWD = 47,
            /// § The older spelling, same values.
            HIPDNN_POINTWISE_MODE_ABS = 1,
            HIPDNN_POINTWISE_MODE_ADD = 2,
            HIPDNN_POINTWISE_MODE_ADD_SQUARE = 3,
            HIPDNN_POINTWISE_MODE_BINARY_SELECT = 4,
            HIPDNN_POINTWISE_MODE_CEIL = 5,
            HIPDNN_POINTWISE_MODE_CMP_EQ = 6,
            HIPDNN_POINTWISE_MODE_CMP_GE = 7,
            HIPDNN_POINTWISE_MODE_CMP_GT = 8,
            HIPDNN_POINTWISE_MODE_CMP_LE = 9,
            HIPDNN_POINTWISE_MODE_CMP_LT = 10,
            HIPDNN_POINTWISE_MODE_CMP_NEQ = 11,
            HIPDNN_POINTWISE_MODE_DIV = 12,
            HIPDNN_POINTWISE_MODE_ELU_BWD = 13,
            HIPDNN_POINTWISE_MODE_ELU_FWD = 14,
            HIPDNN_POINTWISE_MODE_ERF = 15,
            HIPDNN_POINTWISE_MODE_EXP = 16,
            HIPDNN_POINTWISE_MODE_FLOOR = 17,
            HIPDNN_POINTWISE_MODE_GELU_APPROX_TANH_BWD = 18,
            HIPDNN_POINTWISE_MODE_GELU_APPROX_TANH_FWD = 19,
            HIPDNN_POINTWISE_MODE_GELU_BWD = 20,
            HIPDNN_POINTWISE_MODE_GELU_FWD = 21,
            HIPDNN_POINTWISE_MODE_GEN_INDEX = 22,
            HIPDNN_POINTWISE_MODE_IDENTITY = 23,
            HIPDNN_POINTWISE_MODE_LOG = 24,
            HIPDNN_POINTWISE_MODE_LOGICAL_AND = 25,
            HIPDNN_POINTWISE_MODE_LOGICAL_NOT = 26,
            HIPDNN_POINTWISE_MODE_LOGICAL_OR = 27,
            HIPDNN_POINTWISE_MODE_MAX = 28,
            HIPDNN_POINTWISE_MODE_MIN = 29,
            HIPDNN_POINTWISE_MODE_MUL = 30,
            HIPDNN_POINTWISE_MODE_NEG = 31,
            HIPDNN_POINTWISE_MODE_RECIPROCAL = 32,
            HIPDNN_POINTWISE_MODE_RELU_BWD = 33,
            HIPDNN_POINTWISE_MODE_RELU_FWD = 34,
            HIPDNN_POINTWISE_MODE_RSQRT = 35,
            HIPDNN_POINTWISE_MODE_SIGMOID_BWD = 36,
            HIPDNN_POINTWISE_MODE_SIGMOID_FWD = 37,
            HIPDNN_POINTWISE_MODE_SIN = 38,
            HIPDNN_POINTWISE_MODE_SOFTPLUS_BWD = 39,
            HIPDNN_POINTWISE_MODE_SOFTPLUS_FWD = 40,
            HIPDNN_POINTWISE_MODE_SQRT = 41,
            HIPDNN_POINTWISE_MODE_SUB = 42,
            HIPDNN_POINTWISE_MODE_SWISH_BWD = 43,
            HIPDNN_POINTWISE_MODE_SWISH_FWD = 44,
            HIPDNN_POINTWISE_MODE_TAN = 45,
            HIPDNN_POINTWISE_MODE_TANH_BWD = 46,
            HIPDNN_POINTWISE_MODE_TANH_FWD = 47,
        }
    }
    /// Pooling modes of hipDNN's earlier pooling descriptors (resample modes replace them).
    header "HipdnnPoolingMode.h" guard "HIPDNN_POOLING_MODE_H" {
        /// Pooling mode.
        new hipdnnPoolingMode_t {
            /// Maximum.
            HIPDNN_POOLING_MODE_MAX = 1,
            /// Average, padding excluded.
            HIPDNN_POOLING_MODE_AVERAGE = 2,
            /// Average, padding included.
            HIPDNN_POOLING_MODE_AVERAGE_INCLUSIVE = 3,
        }
    }
    /// Reduction operators (`HIPDNN_ATTR_REDUCTION_OPERATOR`).
    header "HipdnnReduceTensorOp.h" guard "HIPDNN_REDUCE_TENSOR_OP_H" {
        /// Reduction operator.
        new hipdnnReduceTensorOp_t {
            /// Sum.
            HIPDNN_REDUCE_TENSOR_ADD = 1,
            /// Product.
            HIPDNN_REDUCE_TENSOR_MUL = 2,
            /// Minimum.
            HIPDNN_REDUCE_TENSOR_MIN = 3,
            /// Maximum.
            HIPDNN_REDUCE_TENSOR_MAX = 4,
            /// Maximum of absolute values.
            HIPDNN_REDUCE_TENSOR_AMAX = 5,
            /// Mean.
            HIPDNN_REDUCE_TENSOR_AVG = 6,
            /// L1 norm.
            HIPDNN_REDUCE_TENSOR_NORM1 = 7,
            /// L2 norm.
            HIPDNN_REDUCE_TENSOR_NORM2 = 8,
            /// Product of the non-zero values.
            HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS = 9,
        }
    }
    /// Reduction modes of hipDNN's earlier reduction attribute (reduction operators replace them).
    header "HipdnnReductionMode.h" guard "HIPDNN_REDUCTION_MODE_H" {
        /// Reduction mode.
        new hipdnnReductionMode_t {
            /// Sum.
            HIPDNN_REDUCTION_ADD = 1,
            /// Product.
            HIPDNN_REDUCTION_MUL = 2,
            /// Minimum.
            HIPDNN_REDUCTION_MIN = 3,
            /// Maximum.
            HIPDNN_REDUCTION_MAX = 4,
            /// Maximum of absolute values.
            HIPDNN_REDUCTION_AMAX = 5,
            /// Mean.
            HIPDNN_REDUCTION_AVG = 6,
            /// L1 norm.
            HIPDNN_REDUCTION_NORM1 = 7,
            /// L2 norm.
            HIPDNN_REDUCTION_NORM2 = 8,
            /// Product of the non-zero values.
            HIPDNN_REDUCTION_MUL_NO_ZEROS = 9,
        }
    }
    /// Resample modes (`HIPDNN_ATTR_RESAMPLE_MODE`).
    header "HipdnnResampleMode.h" guard "HIPDNN_RESAMPLE_MODE_H" {
        /// Resample mode.
        new hipdnnResampleMode_t {
            /// Maximum over the window.
            HIPDNN_RESAMPLE_MAXPOOL = 1,
            /// Mean over the window, padding excluded.
            HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING = 2,
            /// Mean over the window, padding included.
            HIPDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING = 3,
        }
    }
    /// Status codes returned by the C API.
    header "HipdnnStatus.h" guard "HIPDNN_STATUS_H" {
        /// A backend status code.
        existing hipdnnStatus_t {
            /// Success.
            HIPDNN_STATUS_SUCCESS = crate::status::HIPDNN_STATUS_SUCCESS.0,
            /// Not initialized (e.g. an attribute read before finalize).
            HIPDNN_STATUS_NOT_INITIALIZED = crate::status::HIPDNN_STATUS_NOT_INITIALIZED.0,
            /// An invalid argument.
            HIPDNN_STATUS_BAD_PARAM = crate::status::HIPDNN_STATUS_BAD_PARAM.0,
            /// A null pointer argument.
            HIPDNN_STATUS_BAD_PARAM_NULL_POINTER = crate::status::HIPDNN_STATUS_BAD_PARAM_NULL_POINTER.0,
            /// A descriptor used before it was finalized.
            HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED = crate::status::HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED.0,
            /// An index or value out of range.
            HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND = crate::status::HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND.0,
            /// A buffer too small for the result.
            HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT = crate::status::HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT.0,
            /// Streams that do not match.
            HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH = crate::status::HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH.0,
            /// Not supported (now, or for this input).
            HIPDNN_STATUS_NOT_SUPPORTED = crate::status::HIPDNN_STATUS_NOT_SUPPORTED.0,
            /// An internal error.
            HIPDNN_STATUS_INTERNAL_ERROR = crate::status::HIPDNN_STATUS_INTERNAL_ERROR.0,
            /// An allocation failed.
            HIPDNN_STATUS_ALLOC_FAILED = crate::status::HIPDNN_STATUS_ALLOC_FAILED.0,
            /// A host allocation failed.
            HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED = crate::status::HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED.0,
            /// A device allocation failed.
            HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED = crate::status::HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED.0,
            /// Execution failed.
            HIPDNN_STATUS_EXECUTION_FAILED = crate::status::HIPDNN_STATUS_EXECUTION_FAILED.0,
            /// A plugin reported an error.
            HIPDNN_STATUS_PLUGIN_ERROR = crate::status::HIPDNN_STATUS_PLUGIN_ERROR.0,
        }
    }
}
