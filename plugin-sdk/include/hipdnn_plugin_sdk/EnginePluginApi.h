/* SPDX-License-Identifier: MIT */
/*
 * EnginePluginApi.h: the entry points of an engine plugin (hipdnnPluginGetType reports
 * HIPDNN_PLUGIN_TYPE_ENGINE), on top of the ones in PluginApi.h.
 *
 * Hand-written for hipdnn-rs; names and signatures match hipDNN's engine-plugin C ABI
 * exactly. The general conventions (status codes, last error, NULL handling, outputs
 * written only on success) are listed at the top of PluginApi.h.
 *
 * Life cycle, as the host drives it:
 *   load:      GetAllEngineIds (twice), GetEngineName for each id if exported
 *   per host handle:
 *              Create -> SetStream -> { GetApplicableEngineIds, GetEngineDetails /
 *              DestroyEngineDetails, GetWorkspaceSize, CreateExecutionContext,
 *              GetWorkspaceSizeFromExecutionContext, ExecuteOpGraph[WithOverrides],
 *              serialization, DestroyExecutionContext }* -> Destroy
 *
 * Engine ids are int64 values, process-wide across all plugins: by convention an id is the
 * 64-bit FNV-1a hash of the engine's name, reinterpreted as signed. When two plugins claim
 * the same id, the host keeps the engine of the plugin that was loaded first.
 *
 * Graphs and engine configurations arrive as hipdnnPluginConstData_t spans holding
 * FlatBuffers (root types Graph and EngineConfig). They belong to the host and are valid
 * only during the call that receives them; a plugin copies what it wants to keep.
 *
 * Buffers a plugin allocates for the host (engine details, serialized execution contexts)
 * stay owned by the plugin: the host gives each one back through the matching Destroy
 * function, on the same plugin handle that produced it.
 */
#ifndef HIPDNN_PLUGIN_SDK_ENGINE_PLUGIN_API_H
#define HIPDNN_PLUGIN_SDK_ENGINE_PLUGIN_API_H

#include "PluginApi.h"
#include "PluginApiDataTypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Engines offered by the plugin (no handle needed)
 * ------------------------------------------------------------------------------------- */

/*
 * Lists the ids of every engine the plugin provides. Required.
 *
 * Two calls: first with `max_engines` = 0 (`engine_ids` may then be NULL), which writes
 * the total number of engines to `*num_engines`; then with a caller-owned array of
 * `max_engines` elements, into which the plugin copies min(`max_engines`, total) ids and
 * writes that number of copied ids to `*num_engines`.
 * The host refuses the whole plugin unless there is at least one engine, both calls agree
 * on the count, and no id repeats.
 * NULL `num_engines`, or NULL `engine_ids` with `max_engines` > 0: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetAllEngineIds(int64_t* engine_ids,
                                      uint32_t max_engines,
                                      uint32_t* num_engines);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetAllEngineIds_fn)(int64_t* engine_ids,
                                                                     uint32_t max_engines,
                                                                     uint32_t* num_engines);

/*
 * Writes the name of engine `engine_id` to `*name`. Optional (engine ABI 1.4.0; the host
 * decides by the symbol's presence alone).
 *
 * The name is NUL-terminated, owned by the plugin and valid while the library is loaded;
 * never free it. Its 64-bit FNV-1a hash, reinterpreted as int64, must equal `engine_id`,
 * otherwise the host drops that engine.
 * NOT_APPLICABLE: the plugin has no name for this id; the engine is kept and the host
 * names it some other way. Any other failure makes the host drop the engine.
 * NULL `name`: BAD_PARAM. An id the plugin never listed: INVALID_VALUE.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetEngineName(int64_t engine_id, const char** name);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetEngineName_fn)(int64_t engine_id,
                                                                   const char** name);

/* ---------------------------------------------------------------------------------------
 * Plugin handle
 * ------------------------------------------------------------------------------------- */

/*
 * Creates the plugin's state for one host handle and writes it to `*handle`. Required.
 *
 * Free it with hipdnnEnginePluginDestroy. The host creates one plugin handle per host
 * handle, and may hold several at once on different threads.
 * If this fails, or writes NULL, or writes an address another plugin already handed out,
 * the host leaves the plugin out of that host handle (it destroys the colliding handle
 * first). NULL `handle`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginCreate_fn)(hipdnnEnginePluginHandle_t* handle);

/*
 * Destroys a handle made by hipdnnEnginePluginCreate. Required.
 *
 * The host first destroys every execution context, engine details buffer and serialized
 * context it obtained through this handle. A NULL `handle` frees nothing (hipDNN's C++ SDK
 * reports BAD_PARAM for it; callers must not rely on the status).
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginDestroy(hipdnnEnginePluginHandle_t handle);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginDestroy_fn)(hipdnnEnginePluginHandle_t handle);

/*
 * Sets the HIP stream on which later executions through `handle` are enqueued. Required.
 *
 * The stream stays owned by the caller, who keeps it alive as long as it is set. A NULL
 * `stream` is HIP's default stream and is valid. NULL `handle`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginSetStream(hipdnnEnginePluginHandle_t handle, hipStream_t stream);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginSetStream_fn)(hipdnnEnginePluginHandle_t handle,
                                                               hipStream_t stream);

/* ---------------------------------------------------------------------------------------
 * Which engines fit a graph
 * ------------------------------------------------------------------------------------- */

/*
 * Lists the ids of the plugin's engines that can run the graph in `*op_graph` (a `Graph`
 * FlatBuffer, host-owned, valid during the call). Required.
 *
 * Same two-call scheme as hipdnnEnginePluginGetAllEngineIds: `max_engines` = 0 writes only
 * the count; otherwise at most `max_engines` ids go into the caller-owned `engine_ids` and
 * `*num_engines` says how many were written. (Some plugins instead report the full
 * applicable count when it exceeds `max_engines`, still writing only `max_engines` ids;
 * hipDNN's host sizes the array to the plugin's total engine count and treats a count
 * above `max_engines` as a plugin error, so report the number written.)
 * Every id must be one the plugin listed in hipdnnEnginePluginGetAllEngineIds, at most
 * once. No applicable engine is SUCCESS with a count of 0.
 * NULL `handle`, `op_graph` or `num_engines`, or NULL `engine_ids` with `max_engines` > 0:
 * BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetApplicableEngineIds(hipdnnEnginePluginHandle_t handle,
                                             const hipdnnPluginConstData_t* op_graph,
                                             int64_t* engine_ids,
                                             uint32_t max_engines,
                                             uint32_t* num_engines);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetApplicableEngineIds_fn)(
    hipdnnEnginePluginHandle_t handle,
    const hipdnnPluginConstData_t* op_graph,
    int64_t* engine_ids,
    uint32_t max_engines,
    uint32_t* num_engines);

/*
 * Describes engine `engine_id` for the graph in `*op_graph` (its knobs and behaviour
 * notes) as an `EngineDetails` FlatBuffer, which the plugin allocates and points
 * `engine_details->ptr` / `engine_details->size` at. Required.
 *
 * The buffer belongs to the plugin; the caller reads it and returns it with
 * hipdnnEnginePluginDestroyEngineDetails on the same `handle`. The host rejects an empty
 * buffer or one that does not verify as `EngineDetails`. The `name` field inside is for
 * information only and never names the engine.
 * NULL `handle`, `op_graph` or `engine_details`: BAD_PARAM. Unknown `engine_id`:
 * INVALID_VALUE.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetEngineDetails(hipdnnEnginePluginHandle_t handle,
                                       int64_t engine_id,
                                       const hipdnnPluginConstData_t* op_graph,
                                       hipdnnPluginConstData_t* engine_details);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetEngineDetails_fn)(
    hipdnnEnginePluginHandle_t handle,
    int64_t engine_id,
    const hipdnnPluginConstData_t* op_graph,
    hipdnnPluginConstData_t* engine_details);

/*
 * Frees a buffer produced by hipdnnEnginePluginGetEngineDetails on this `handle` and sets
 * both `engine_details->ptr` and `engine_details->size` to zero. Required.
 *
 * NULL `handle`, NULL `engine_details` or a NULL `engine_details->ptr` free nothing
 * (hipDNN's C++ SDK reports BAD_PARAM for them; callers must not rely on the status).
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginDestroyEngineDetails(hipdnnEnginePluginHandle_t handle,
                                           hipdnnPluginConstData_t* engine_details);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginDestroyEngineDetails_fn)(
    hipdnnEnginePluginHandle_t handle, hipdnnPluginConstData_t* engine_details);

/* ---------------------------------------------------------------------------------------
 * Planning
 * ------------------------------------------------------------------------------------- */

/*
 * Writes to `*workspace_size` how many bytes of device workspace running the graph in
 * `*op_graph` with the configuration in `*engine_config` (an `EngineConfig` FlatBuffer:
 * engine id and knob settings) would need. Required. Both spans are host-owned and valid
 * during the call only.
 * NULL `handle`, `engine_config`, `op_graph` or `workspace_size`: BAD_PARAM.
 * Configuration naming an engine the plugin does not have: INVALID_VALUE.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetWorkspaceSize(hipdnnEnginePluginHandle_t handle,
                                       const hipdnnPluginConstData_t* engine_config,
                                       const hipdnnPluginConstData_t* op_graph,
                                       size_t* workspace_size);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetWorkspaceSize_fn)(
    hipdnnEnginePluginHandle_t handle,
    const hipdnnPluginConstData_t* engine_config,
    const hipdnnPluginConstData_t* op_graph,
    size_t* workspace_size);

/*
 * Prepares everything needed to run the graph in `*op_graph` with the configuration in
 * `*engine_config` and writes the new execution context to `*execution_context`. Required.
 *
 * The context must not refer to the two input spans, which the host may free as soon as
 * this returns. Free the context with hipdnnEnginePluginDestroyExecutionContext on the
 * same `handle`.
 * NULL `handle`, `engine_config`, `op_graph` or `execution_context`: BAD_PARAM.
 * Configuration naming an engine the plugin does not have: INVALID_VALUE.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginCreateExecutionContext(
        hipdnnEnginePluginHandle_t handle,
        const hipdnnPluginConstData_t* engine_config,
        const hipdnnPluginConstData_t* op_graph,
        hipdnnEnginePluginExecutionContext_t* execution_context);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginCreateExecutionContext_fn)(
    hipdnnEnginePluginHandle_t handle,
    const hipdnnPluginConstData_t* engine_config,
    const hipdnnPluginConstData_t* op_graph,
    hipdnnEnginePluginExecutionContext_t* execution_context);

/*
 * Destroys an execution context created through this `handle` (by
 * hipdnnEnginePluginCreateExecutionContext or
 * hipdnnEnginePluginCreateExecutionContextFromSerialized). Required.
 *
 * The ABI does not make the host wait for work still running on the stream, so a plugin
 * whose enqueued kernels use memory owned by the context must synchronize (or defer the
 * release) itself. A NULL `handle` or `execution_context` frees nothing (hipDNN's C++ SDK
 * reports BAD_PARAM; callers must not rely on the status).
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginDestroyExecutionContext(
        hipdnnEnginePluginHandle_t handle,
        hipdnnEnginePluginExecutionContext_t execution_context);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginDestroyExecutionContext_fn)(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t execution_context);

/*
 * Writes to `*workspace_size` the number of bytes of device workspace that executing
 * `execution_context` needs. Required.
 * NULL `handle`, `execution_context` or `workspace_size`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
        hipdnnEnginePluginHandle_t handle,
        hipdnnEnginePluginExecutionContext_t execution_context,
        size_t* workspace_size);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn)(
    hipdnnEnginePluginHandle_t handle,
    hipdnnEnginePluginExecutionContext_t execution_context,
    size_t* workspace_size);

/* ---------------------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------------------- */

/*
 * Enqueues the work of `execution_context` on the stream last set on `handle`, and returns
 * without waiting for it to finish. Required.
 *
 * `workspace`: device memory of at least the size reported for this context, owned by the
 * caller; may be NULL when that size is 0.
 * `device_buffers`: `num_device_buffers` (uid, device pointer) pairs, one for each
 * non-virtual tensor of the graph. The array is host-owned and valid only during the call; the
 * device memory it points to (and the workspace) must stay valid until the enqueued work
 * has completed.
 * NULL `handle` or `execution_context`, NULL `device_buffers` with `num_device_buffers` >
 * 0, or a non-virtual tensor without a buffer: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginExecuteOpGraph(hipdnnEnginePluginHandle_t handle,
                                     hipdnnEnginePluginExecutionContext_t execution_context,
                                     void* workspace,
                                     const hipdnnPluginDeviceBuffer_t* device_buffers,
                                     uint32_t num_device_buffers);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginExecuteOpGraph_fn)(
    hipdnnEnginePluginHandle_t handle,
    hipdnnEnginePluginExecutionContext_t execution_context,
    void* workspace,
    const hipdnnPluginDeviceBuffer_t* device_buffers,
    uint32_t num_device_buffers);

/*
 * Like hipdnnEnginePluginExecuteOpGraph, but some tensors take, for this execution only,
 * a shape and strides other than the ones in the graph. Optional (engine ABI 1.1.0); the
 * host uses it only when the plugin exports it AND reports API version 1.1.0 or later,
 * and never falls back to ExecuteOpGraph when overrides are requested.
 *
 * Override i (0 <= i < `num_overrides`) applies to the tensor whose uid is
 * `override_unique_ids[i]`; that tensor has rank `override_lengths[i]` (> 0), and its
 * dimensions and strides are the `override_lengths[i]` values at `override_shapes[i]` and
 * `override_strides[i]`. Every overridden uid also appears in `device_buffers`. All these
 * arrays belong to the host and are valid only during the call. With no overrides the
 * host calls ExecuteOpGraph instead.
 * A plugin that exports this function but cannot take overrides for some graph should
 * leave its engines out of hipdnnEnginePluginGetApplicableEngineIds for that graph rather
 * than fail here.
 * NULL arguments follow ExecuteOpGraph; a NULL override array with `num_overrides` > 0,
 * or an override for an unknown uid: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginExecuteOpGraphWithOverrides(
        hipdnnEnginePluginHandle_t handle,
        hipdnnEnginePluginExecutionContext_t execution_context,
        void* workspace,
        const hipdnnPluginDeviceBuffer_t* device_buffers,
        uint32_t num_device_buffers,
        uint32_t num_overrides,
        const int64_t* override_unique_ids,
        const uint32_t* override_lengths,
        const int64_t* const* override_shapes,
        const int64_t* const* override_strides);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginExecuteOpGraphWithOverrides_fn)(
    hipdnnEnginePluginHandle_t handle,
    hipdnnEnginePluginExecutionContext_t execution_context,
    void* workspace,
    const hipdnnPluginDeviceBuffer_t* device_buffers,
    uint32_t num_device_buffers,
    uint32_t num_overrides,
    const int64_t* override_unique_ids,
    const uint32_t* override_lengths,
    const int64_t* const* override_shapes,
    const int64_t* const* override_strides);

/* ---------------------------------------------------------------------------------------
 * Saving and restoring execution contexts. Optional as a group: the host supports
 * serialization for a plugin only when all three functions are exported.
 * ------------------------------------------------------------------------------------- */

/*
 * Turns `execution_context` into bytes from which
 * hipdnnEnginePluginCreateExecutionContextFromSerialized can rebuild it, allocated by the
 * plugin and described by `serialized_context->ptr` / `serialized_context->size`.
 *
 * The format is the plugin's own business. The buffer belongs to the plugin: the host
 * copies the bytes and then always returns the buffer with
 * hipdnnEnginePluginDestroySerializedExecutionContext on the same `handle`. An empty
 * result is treated by the host as a failure.
 * NULL `handle`, `execution_context` or `serialized_context`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginSerializeExecutionContext(
        hipdnnEnginePluginHandle_t handle,
        hipdnnEnginePluginExecutionContext_t execution_context,
        hipdnnPluginConstData_t* serialized_context);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginSerializeExecutionContext_fn)(
    hipdnnEnginePluginHandle_t handle,
    hipdnnEnginePluginExecutionContext_t execution_context,
    hipdnnPluginConstData_t* serialized_context);

/*
 * Frees a buffer produced by hipdnnEnginePluginSerializeExecutionContext on this `handle`
 * and sets both `serialized_context->ptr` and `serialized_context->size` to zero.
 * NULL `handle`, NULL `serialized_context` or a NULL `serialized_context->ptr` free
 * nothing (callers must not rely on the status).
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginDestroySerializedExecutionContext(
        hipdnnEnginePluginHandle_t handle,
        hipdnnPluginConstData_t* serialized_context);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginDestroySerializedExecutionContext_fn)(
    hipdnnEnginePluginHandle_t handle, hipdnnPluginConstData_t* serialized_context);

/*
 * Rebuilds an execution context from bytes made by
 * hipdnnEnginePluginSerializeExecutionContext, possibly in another process, and writes it
 * to `*execution_context`.
 *
 * The bytes are host-owned and valid during the call only; the new context must not refer
 * to them. Free it with hipdnnEnginePluginDestroyExecutionContext on the same `handle`.
 * Bytes the plugin cannot use (another plugin's, another version's, corrupted) are
 * rejected with a non-SUCCESS status, typically INVALID_VALUE.
 * NULL `handle`, `serialized_context` or `execution_context`: BAD_PARAM.
 * (An older hipDNN host passed the engine configuration as an extra argument; this
 * three-argument form is the current one.)
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnEnginePluginCreateExecutionContextFromSerialized(
        hipdnnEnginePluginHandle_t handle,
        const hipdnnPluginConstData_t* serialized_context,
        hipdnnEnginePluginExecutionContext_t* execution_context);
typedef hipdnnPluginStatus_t (*hipdnnEnginePluginCreateExecutionContextFromSerialized_fn)(
    hipdnnEnginePluginHandle_t handle,
    const hipdnnPluginConstData_t* serialized_context,
    hipdnnEnginePluginExecutionContext_t* execution_context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPDNN_PLUGIN_SDK_ENGINE_PLUGIN_API_H */
