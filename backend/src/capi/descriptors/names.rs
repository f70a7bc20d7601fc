//! hipDNN's numbers for descriptor types, attribute names and attribute value types.

/// Kinds of backend descriptor (`hipdnnBackendDescriptorType_t`).
pub type hipdnnBackendDescriptorType_t = i32;
/// Not a descriptor type.
pub const HIPDNN_BACKEND_INVALID_TYPE: hipdnnBackendDescriptorType_t = 0;
/// An engine of an operation graph.
pub const HIPDNN_BACKEND_ENGINE_DESCRIPTOR: hipdnnBackendDescriptorType_t = 1;
/// An engine with knob choices.
pub const HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR: hipdnnBackendDescriptorType_t = 2;
/// The engine heuristic: ranked engine configs for a graph.
pub const HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: hipdnnBackendDescriptorType_t = 3;
/// An execution plan.
pub const HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: hipdnnBackendDescriptorType_t = 4;
/// Intermediate tensor information (not supported).
pub const HIPDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 5;
/// One knob setting.
pub const HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: hipdnnBackendDescriptorType_t = 6;
/// A knob's description (not supported).
pub const HIPDNN_BACKEND_KNOB_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 7;
/// Layout information (not supported).
pub const HIPDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR: hipdnnBackendDescriptorType_t = 8;
/// Statistics generation (not supported).
pub const HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: hipdnnBackendDescriptorType_t = 9;
/// An operation graph (made from FlatBuffer or JSON bytes).
pub const HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: hipdnnBackendDescriptorType_t = 10;
/// Tensor pointers and workspace for one execution.
pub const HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: hipdnnBackendDescriptorType_t = 11;

/// Attribute names (`hipdnnBackendAttributeName_t`).
pub type hipdnnBackendAttributeName_t = i32;
/// ENGINEHEUR: heuristic mode (HEUR_MODE; recorded, every mode ranks the same way).
pub const HIPDNN_ATTR_ENGINEHEUR_MODE: hipdnnBackendAttributeName_t = 100;
/// ENGINEHEUR: the operation graph (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH: hipdnnBackendAttributeName_t = 101;
/// ENGINEHEUR: ranked engine configs (BACKEND_DESCRIPTOR, read).
pub const HIPDNN_ATTR_ENGINEHEUR_RESULTS: hipdnnBackendAttributeName_t = 102;
/// ENGINECFG: the engine (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINECFG_ENGINE: hipdnnBackendAttributeName_t = 200;
/// ENGINECFG: knob choices (BACKEND_DESCRIPTOR array of KNOB_CHOICE).
pub const HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES: hipdnnBackendAttributeName_t = 202;
/// EXECUTION_PLAN: the handle (HANDLE; defaults to the graph's).
pub const HIPDNN_ATTR_EXECUTION_PLAN_HANDLE: hipdnnBackendAttributeName_t = 300;
/// EXECUTION_PLAN: the engine config (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG: hipdnnBackendAttributeName_t = 301;
/// EXECUTION_PLAN: workspace bytes (INT64, read).
pub const HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: hipdnnBackendAttributeName_t = 302;
/// EXECUTION_PLAN: uids the variant pack must give pointers for (INT64, read).
pub const HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT: hipdnnBackendAttributeName_t = 308;
/// KNOB_CHOICE: the knob id (CHAR).
pub const HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE: hipdnnBackendAttributeName_t = 500;
/// KNOB_CHOICE: the value (INT64, DOUBLE or CHAR).
pub const HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE: hipdnnBackendAttributeName_t = 501;
/// OPERATIONGRAPH: the handle (HANDLE).
pub const HIPDNN_ATTR_OPERATIONGRAPH_HANDLE: hipdnnBackendAttributeName_t = 600;
/// OPERATIONGRAPH: number of engines that can run it (INT64, read).
pub const HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: hipdnnBackendAttributeName_t = 602;
/// VARIANT_PACK: tensor uids (INT64).
pub const HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS: hipdnnBackendAttributeName_t = 700;
/// VARIANT_PACK: one pointer per uid (VOID_PTR).
pub const HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS: hipdnnBackendAttributeName_t = 701;
/// VARIANT_PACK: the workspace (VOID_PTR).
pub const HIPDNN_ATTR_VARIANT_PACK_WORKSPACE: hipdnnBackendAttributeName_t = 703;
/// ENGINE: the operation graph (BACKEND_DESCRIPTOR).
pub const HIPDNN_ATTR_ENGINE_OPERATION_GRAPH: hipdnnBackendAttributeName_t = 1000;
/// ENGINE: the engine id (INT64).
pub const HIPDNN_ATTR_ENGINE_GLOBAL_INDEX: hipdnnBackendAttributeName_t = 1001;
/// ENGINE: behavior notes (BEHAVIOR_NOTE, read).
pub const HIPDNN_ATTR_ENGINE_BEHAVIOR_NOTE: hipdnnBackendAttributeName_t = 1005;
/// ENGINE: the engine's name (CHAR, read; the count includes the NUL).
pub const HIPDNN_ATTR_ENGINE_NAME_EXT: hipdnnBackendAttributeName_t = 1008;

/// Attribute value types (`hipdnnBackendAttributeType_t`).
pub type hipdnnBackendAttributeType_t = i32;
/// `hipdnnHandle_t`.
pub const HIPDNN_TYPE_HANDLE: hipdnnBackendAttributeType_t = 0;
/// `int64_t`.
pub const HIPDNN_TYPE_INT64: hipdnnBackendAttributeType_t = 3;
/// `double`.
pub const HIPDNN_TYPE_DOUBLE: hipdnnBackendAttributeType_t = 5;
/// `void*`.
pub const HIPDNN_TYPE_VOID_PTR: hipdnnBackendAttributeType_t = 6;
/// A heuristic mode (`int32_t`-sized enum).
pub const HIPDNN_TYPE_HEUR_MODE: hipdnnBackendAttributeType_t = 7;
/// `hipdnnBackendDescriptor_t`.
pub const HIPDNN_TYPE_BACKEND_DESCRIPTOR: hipdnnBackendAttributeType_t = 13;
/// A behavior note (`int32_t`-sized enum).
pub const HIPDNN_TYPE_BEHAVIOR_NOTE: hipdnnBackendAttributeType_t = 16;
/// `char`.
pub const HIPDNN_TYPE_CHAR: hipdnnBackendAttributeType_t = 19;
