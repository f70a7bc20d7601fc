/* SPDX-License-Identifier: MIT */
/*
 * PluginApiDataTypes.h: the types shared by every hipDNN plugin entry point.
 *
 * Hand-written for hipdnn-rs. Identifiers, numeric values and struct layouts follow the
 * hipDNN engine-plugin C ABI exactly, because a plugin built against this header must
 * load in hipDNN's backend as well as in ours; everything else (comments, helper macros)
 * is our own. Valid C99 and C++; pulls in nothing beyond <stddef.h> and <stdint.h>,
 * unless HIP itself is in play (see hipStream_t below).
 */
#ifndef HIPDNN_PLUGIN_SDK_PLUGIN_API_DATA_TYPES_H
#define HIPDNN_PLUGIN_SDK_PLUGIN_API_DATA_TYPES_H

#include <stddef.h>
#include <stdint.h>

/*
 * hipStream_t is passed straight through the ABI (hipdnnEnginePluginSetStream), and the
 * plugin ABI does not require HIP headers to be installed. Three cases:
 *   - the HIP runtime API header was already included (its include guard is defined), or
 *     the includer defined HIPDNN_PLUGIN_HAVE_HIP_STREAM: use the existing type;
 *   - we are compiled for a HIP platform (hipcc defines __HIP_PLATFORM_AMD__ or
 *     __HIP_PLATFORM_NVIDIA__): include the real header, so the type is exactly HIP's
 *     (on the NVIDIA platform it is not an ihipStream_t pointer);
 *   - otherwise: declare the same opaque pointer type HIP declares on AMD.
 * In C99 a typedef may not be repeated, so a C99 translation unit that includes HIP after
 * this header must define HIPDNN_PLUGIN_HAVE_HIP_STREAM, or include HIP first. C11 and C++
 * accept the identical repeated typedef.
 */
#if defined(HIPDNN_PLUGIN_HAVE_HIP_STREAM) || defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)
/* hipStream_t is already declared. */
#elif defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_NVIDIA__)
#include <hip/hip_runtime_api.h>
#else
typedef struct ihipStream_t* hipStream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version of the engine-plugin C ABI that these headers describe (semantic versioning).
 * An engine plugin normally reports HIPDNN_ENGINE_API_VERSION from
 * hipdnnPluginGetApiVersion. Hosts accept major version 1 only; the minor version gates
 * features per graph (1.1.0: execution with shape overrides, 1.2.0: runtime scalars
 * passed by value, 1.3.0: ragged tensors and non-default tensor alignment, 1.4.0:
 * hipdnnEnginePluginGetEngineName).
 */
#define HIPDNN_ENGINE_API_VERSION_MAJOR 1
#define HIPDNN_ENGINE_API_VERSION_MINOR 4
#define HIPDNN_ENGINE_API_VERSION_PATCH 0
#define HIPDNN_ENGINE_API_VERSION "1.4.0"

/*
 * Size, terminating NUL included, of the per-thread buffer a plugin is expected to keep
 * for its last error message (see hipdnnPluginGetLastErrorString). Longer messages are
 * truncated by the plugin; hosts must not assume any particular length.
 */
#define HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH 2048

/*
 * Result of every plugin entry point except hipdnnPluginGetLastErrorString. The numbers
 * are part of the ABI and never change. Any status other than SUCCESS comes with a message
 * that the caller can fetch, on the same thread, with hipdnnPluginGetLastErrorString.
 */
typedef enum
{
    /* The call did what it was asked to. */
    HIPDNN_PLUGIN_STATUS_SUCCESS = 0,
    /* A required pointer was NULL, or an argument was malformed. */
    HIPDNN_PLUGIN_STATUS_BAD_PARAM = 1,
    /* Arguments were well-formed but refer to something the plugin does not know,
     * such as an engine id it never reported. */
    HIPDNN_PLUGIN_STATUS_INVALID_VALUE = 2,
    /* Any other failure inside the plugin. */
    HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR = 3,
    /* Host or device memory could not be allocated. */
    HIPDNN_PLUGIN_STATUS_ALLOC_FAILED = 4,
    /* The call was valid but the plugin has nothing to give for it (for example, no
     * name for an engine id). Not an error from the host's point of view. Newer ABI. */
    HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE = 5,
    /* The object the call needs has not been set up yet. Newer ABI. */
    HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED = 6
} hipdnnPluginStatus_t;

/* What kind of plugin a shared library is (hipdnnPluginGetType). */
typedef enum
{
    HIPDNN_PLUGIN_TYPE_UNSPECIFIED = 0,
    /* Provides engines: loaded from the engine plugin directory. */
    HIPDNN_PLUGIN_TYPE_ENGINE = 1,
    /* Ranks engines: loaded from the heuristic plugin directory. */
    HIPDNN_PLUGIN_TYPE_HEURISTIC = 2
} hipdnnPluginType_t;

/*
 * What an engine performance prediction estimates. Producing a prediction must never
 * benchmark, tune or run an engine. No exported C entry point takes this type yet; it is
 * here because the prediction FlatBuffers refer to the same values.
 */
typedef enum
{
    /* Cost of running the engine as it would run by default, without tuning. */
    HIPDNN_ENGINE_PREDICTION_ENGINE = 0,
    /* Choose a complete engine configuration and estimate the cost of that one. */
    HIPDNN_ENGINE_PREDICTION_CONFIGURATION = 1
} hipdnnEnginePredictionKind_t;

/*
 * A read-only span of bytes: `size` bytes starting at `ptr`. Used for every FlatBuffer
 * that crosses the ABI (graphs, engine configurations, engine details, serialized
 * execution contexts). Who owns the bytes is stated by each function. An empty span is
 * {NULL, 0}.
 */
typedef struct
{
    const void* ptr;
    size_t size;
} hipdnnPluginConstData_t;

/* Binds one tensor, named by its graph-unique id, to the device memory it lives in. */
typedef struct
{
    int64_t uid;
    void* ptr;
} hipdnnPluginDeviceBuffer_t;

/*
 * A plugin's per-host-handle state, created by hipdnnEnginePluginCreate. Opaque to the
 * host: only the plugin that made it may look inside. The backend tells plugins apart by
 * this pointer value, so two plugins must never hand out the same address.
 */
struct HipdnnEnginePluginHandle;
typedef struct HipdnnEnginePluginHandle* hipdnnEnginePluginHandle_t;

/*
 * A prepared ("planned") execution of one graph with one engine configuration, created by
 * hipdnnEnginePluginCreateExecutionContext. Opaque to the host.
 */
struct HipdnnEnginePluginExecutionContext;
typedef struct HipdnnEnginePluginExecutionContext* hipdnnEnginePluginExecutionContext_t;

/*
 * Logging types. hipDNN's backend header declares the same two types behind the same
 * guard macro, so a translation unit may include both headers in either order.
 */
#ifndef HIPDNN_CALLBACK_TYPES_DEFINED
#define HIPDNN_CALLBACK_TYPES_DEFINED

/* Severity of a log message, least severe first. HIPDNN_SEV_OFF as a level disables
 * logging. */
typedef enum
{
    HIPDNN_SEV_INFO = 0,
    HIPDNN_SEV_WARN = 1,
    HIPDNN_SEV_ERROR = 2,
    HIPDNN_SEV_FATAL = 3,
    HIPDNN_SEV_OFF = 4
} hipdnnSeverity_t;

/* Receives one formatted log message. `message` is NUL-terminated and valid only for the
 * duration of the call; copy it to keep it. */
typedef void (*hipdnnCallback_t)(hipdnnSeverity_t severity, const char* message);

#endif /* HIPDNN_CALLBACK_TYPES_DEFINED */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPDNN_PLUGIN_SDK_PLUGIN_API_DATA_TYPES_H */
