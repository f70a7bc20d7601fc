/* SPDX-License-Identifier: MIT */
/*
 * header_check.c: checks the plugin C headers against the ABI, and a built plugin against
 * the headers.
 *
 * At compile time it asserts the layout of the ABI structs, the sizes of the enums and
 * the numeric values the ABI fixes, and it takes the address of every declared entry
 * point into a table typed with the matching `_fn` typedef, so a prototype that drifts
 * from its typedef does not compile. At link time every declared function must be
 * exported by the plugin; at run time main() calls the base functions and
 * hipdnnEnginePluginGetAllEngineIds and prints what they return (exit 0 = all good).
 *
 * Compile only (from the repository root):
 *   gcc -std=c99 -Wall -Wextra -Werror -pedantic -Iplugin-sdk/include \
 *       -c plugin-sdk/tests/c/header_check.c -o /tmp/header_check.o
 *   g++ -std=c++17 -Wall -Werror -Iplugin-sdk/include \
 *       -x c++ -c plugin-sdk/tests/c/header_check.c -o /tmp/header_check_cxx.o
 * Against a plugin libfoo.so in DIR:
 *   gcc ... plugin-sdk/tests/c/header_check.c -LDIR -lfoo -Wl,-rpath,DIR -o header_check
 * The optional entry points are referenced by default. For a plugin that lacks some, leave
 * groups out (they are then neither referenced nor called):
 *   HEADER_CHECK_NO_OPTIONAL_BASE    GetApiVersion, SetLoggingCallback, SetLogLevel
 *   HEADER_CHECK_NO_ENGINE_NAME      hipdnnEnginePluginGetEngineName
 *   HEADER_CHECK_NO_OVERRIDES        hipdnnEnginePluginExecuteOpGraphWithOverrides
 *   HEADER_CHECK_NO_SERIALIZATION    the three execution-context serialization functions
 *   HEADER_CHECK_REQUIRED_ONLY       all of the above
 */
/* Engine header first: each header must compile on its own. */
#include <hipdnn_plugin_sdk/EnginePluginApi.h>
#include <hipdnn_plugin_sdk/PluginApi.h>
#include <hipdnn_plugin_sdk/PluginApiDataTypes.h>

#ifdef HEADER_CHECK_REQUIRED_ONLY
#define HEADER_CHECK_NO_OPTIONAL_BASE
#define HEADER_CHECK_NO_ENGINE_NAME
#define HEADER_CHECK_NO_OVERRIDES
#define HEADER_CHECK_NO_SERIALIZATION
#endif

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* _Static_assert is C11; GCC and Clang accept it in C99 mode when marked as an
 * extension, and C++ spells it static_assert. */
#if defined(__cplusplus)
#define HC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define HC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else
#define HC_STATIC_ASSERT(cond, msg) __extension__ _Static_assert(cond, msg)
#endif

/* ---- layouts ---------------------------------------------------------------------- */

HC_STATIC_ASSERT(offsetof(hipdnnPluginConstData_t, ptr) == 0, "ConstData.ptr at 0");
HC_STATIC_ASSERT(offsetof(hipdnnPluginConstData_t, size) == sizeof(void*),
                 "ConstData.size right after ptr");
HC_STATIC_ASSERT(sizeof(hipdnnPluginConstData_t) == sizeof(void*) + sizeof(size_t),
                 "ConstData has no padding");
HC_STATIC_ASSERT(offsetof(hipdnnPluginDeviceBuffer_t, uid) == 0, "DeviceBuffer.uid at 0");
HC_STATIC_ASSERT(offsetof(hipdnnPluginDeviceBuffer_t, ptr) == 8, "DeviceBuffer.ptr at 8");
HC_STATIC_ASSERT(sizeof(((hipdnnPluginDeviceBuffer_t*)0)->uid) == 8, "uid is 64-bit");
#if defined(__LP64__) || defined(_WIN64)
HC_STATIC_ASSERT(sizeof(hipdnnPluginConstData_t) == 16, "ConstData is 16 bytes on 64-bit");
HC_STATIC_ASSERT(sizeof(hipdnnPluginDeviceBuffer_t) == 16, "DeviceBuffer is 16 bytes on 64-bit");
HC_STATIC_ASSERT(offsetof(hipdnnPluginConstData_t, size) == 8, "ConstData.size at 8");
#endif
HC_STATIC_ASSERT(sizeof(hipStream_t) == sizeof(void*), "hipStream_t is a pointer");
HC_STATIC_ASSERT(sizeof(hipdnnEnginePluginHandle_t) == sizeof(void*), "handle is a pointer");
HC_STATIC_ASSERT(sizeof(hipdnnEnginePluginExecutionContext_t) == sizeof(void*),
                 "execution context is a pointer");

/* Enums cross the ABI as C int. */
HC_STATIC_ASSERT(sizeof(hipdnnPluginStatus_t) == 4, "status enum is 4 bytes");
HC_STATIC_ASSERT(sizeof(hipdnnPluginType_t) == 4, "plugin type enum is 4 bytes");
HC_STATIC_ASSERT(sizeof(hipdnnEnginePredictionKind_t) == 4, "prediction kind enum is 4 bytes");
HC_STATIC_ASSERT(sizeof(hipdnnSeverity_t) == 4, "severity enum is 4 bytes");

/* ---- values ----------------------------------------------------------------------- */

HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_SUCCESS == 0, "SUCCESS");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_BAD_PARAM == 1, "BAD_PARAM");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_INVALID_VALUE == 2, "INVALID_VALUE");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR == 3, "INTERNAL_ERROR");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED == 4, "ALLOC_FAILED");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE == 5, "NOT_APPLICABLE");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_STATUS_NOT_INITIALIZED == 6, "NOT_INITIALIZED");

HC_STATIC_ASSERT(HIPDNN_PLUGIN_TYPE_UNSPECIFIED == 0, "TYPE_UNSPECIFIED");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_TYPE_ENGINE == 1, "TYPE_ENGINE");
HC_STATIC_ASSERT(HIPDNN_PLUGIN_TYPE_HEURISTIC == 2, "TYPE_HEURISTIC");

HC_STATIC_ASSERT(HIPDNN_ENGINE_PREDICTION_ENGINE == 0, "PREDICTION_ENGINE");
HC_STATIC_ASSERT(HIPDNN_ENGINE_PREDICTION_CONFIGURATION == 1, "PREDICTION_CONFIGURATION");

HC_STATIC_ASSERT(HIPDNN_SEV_INFO == 0, "SEV_INFO");
HC_STATIC_ASSERT(HIPDNN_SEV_WARN == 1, "SEV_WARN");
HC_STATIC_ASSERT(HIPDNN_SEV_ERROR == 2, "SEV_ERROR");
HC_STATIC_ASSERT(HIPDNN_SEV_FATAL == 3, "SEV_FATAL");
HC_STATIC_ASSERT(HIPDNN_SEV_OFF == 4, "SEV_OFF");

HC_STATIC_ASSERT(HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH == 2048, "error buffer size");
HC_STATIC_ASSERT(HIPDNN_ENGINE_API_VERSION_MAJOR == 1, "engine API major");
HC_STATIC_ASSERT(HIPDNN_ENGINE_API_VERSION_MINOR == 4, "engine API minor");
HC_STATIC_ASSERT(HIPDNN_ENGINE_API_VERSION_PATCH == 0, "engine API patch");
HC_STATIC_ASSERT(sizeof(HIPDNN_ENGINE_API_VERSION) == sizeof("1.4.0"), "engine API string");

/* ---- every entry point, typed by its _fn typedef ------------------------------------ */

struct plugin_api
{
    /* PluginApi.h */
    hipdnnPluginGetName_fn get_name;
    hipdnnPluginGetVersion_fn get_version;
    hipdnnPluginGetType_fn get_type;
    hipdnnPluginGetLastErrorString_fn get_last_error_string;
#ifndef HEADER_CHECK_NO_OPTIONAL_BASE
    hipdnnPluginGetApiVersion_fn get_api_version;
    hipdnnPluginSetLoggingCallback_fn set_logging_callback;
    hipdnnPluginSetLogLevel_fn set_log_level;
#endif
    /* EnginePluginApi.h, required */
    hipdnnEnginePluginGetAllEngineIds_fn get_all_engine_ids;
    hipdnnEnginePluginCreate_fn create;
    hipdnnEnginePluginDestroy_fn destroy;
    hipdnnEnginePluginSetStream_fn set_stream;
    hipdnnEnginePluginGetApplicableEngineIds_fn get_applicable_engine_ids;
    hipdnnEnginePluginGetEngineDetails_fn get_engine_details;
    hipdnnEnginePluginDestroyEngineDetails_fn destroy_engine_details;
    hipdnnEnginePluginGetWorkspaceSize_fn get_workspace_size;
    hipdnnEnginePluginCreateExecutionContext_fn create_execution_context;
    hipdnnEnginePluginDestroyExecutionContext_fn destroy_execution_context;
    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext_fn
        get_workspace_size_from_execution_context;
    hipdnnEnginePluginExecuteOpGraph_fn execute_op_graph;
    /* EnginePluginApi.h, optional */
#ifndef HEADER_CHECK_NO_ENGINE_NAME
    hipdnnEnginePluginGetEngineName_fn get_engine_name;
#endif
#ifndef HEADER_CHECK_NO_OVERRIDES
    hipdnnEnginePluginExecuteOpGraphWithOverrides_fn execute_op_graph_with_overrides;
#endif
#ifndef HEADER_CHECK_NO_SERIALIZATION
    hipdnnEnginePluginSerializeExecutionContext_fn serialize_execution_context;
    hipdnnEnginePluginDestroySerializedExecutionContext_fn destroy_serialized_execution_context;
    hipdnnEnginePluginCreateExecutionContextFromSerialized_fn
        create_execution_context_from_serialized;
#endif
};

/* Same order as the struct (positional: C++17 has no designated initializers). */
static const struct plugin_api api = {
    hipdnnPluginGetName,
    hipdnnPluginGetVersion,
    hipdnnPluginGetType,
    hipdnnPluginGetLastErrorString,
#ifndef HEADER_CHECK_NO_OPTIONAL_BASE
    hipdnnPluginGetApiVersion,
    hipdnnPluginSetLoggingCallback,
    hipdnnPluginSetLogLevel,
#endif
    hipdnnEnginePluginGetAllEngineIds,
    hipdnnEnginePluginCreate,
    hipdnnEnginePluginDestroy,
    hipdnnEnginePluginSetStream,
    hipdnnEnginePluginGetApplicableEngineIds,
    hipdnnEnginePluginGetEngineDetails,
    hipdnnEnginePluginDestroyEngineDetails,
    hipdnnEnginePluginGetWorkspaceSize,
    hipdnnEnginePluginCreateExecutionContext,
    hipdnnEnginePluginDestroyExecutionContext,
    hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext,
    hipdnnEnginePluginExecuteOpGraph,
#ifndef HEADER_CHECK_NO_ENGINE_NAME
    hipdnnEnginePluginGetEngineName,
#endif
#ifndef HEADER_CHECK_NO_OVERRIDES
    hipdnnEnginePluginExecuteOpGraphWithOverrides,
#endif
#ifndef HEADER_CHECK_NO_SERIALIZATION
    hipdnnEnginePluginSerializeExecutionContext,
    hipdnnEnginePluginDestroySerializedExecutionContext,
    hipdnnEnginePluginCreateExecutionContextFromSerialized,
#endif
};

/* ---- run time ---------------------------------------------------------------------- */

static int failures = 0;

/* Reports a failed expectation, with the plugin's last error when `status` is one. */
static void fail(const char* what, hipdnnPluginStatus_t status)
{
    const char* message = NULL;
    api.get_last_error_string(&message);
    fprintf(stderr,
            "FAIL %s: status %d, last error: %s\n",
            what,
            (int)status,
            message != NULL ? message : "(null)");
    ++failures;
}

/* Calls a `const char**` getter and checks it yields a non-empty string. */
static void print_string(const char* label, hipdnnPluginGetName_fn getter)
{
    const char* value = NULL;
    hipdnnPluginStatus_t status = getter(&value);
    if(status != HIPDNN_PLUGIN_STATUS_SUCCESS || value == NULL || value[0] == '\0')
    {
        fail(label, status);
        return;
    }
    printf("%s: %s\n", label, value);
}

static void check_engine_ids(void)
{
    enum
    {
        max_ids = 256
    };
    int64_t ids[max_ids];
    uint32_t total = 0;
    uint32_t written = 0;
    uint32_t i;
    hipdnnPluginStatus_t status;

    /* First call: the count only. */
    status = api.get_all_engine_ids(NULL, 0, &total);
    if(status != HIPDNN_PLUGIN_STATUS_SUCCESS)
    {
        fail("GetAllEngineIds(NULL, 0)", status);
        return;
    }
    if(total == 0)
    {
        fail("GetAllEngineIds reports no engines", status);
        return;
    }
    if(total > max_ids)
    {
        fprintf(stderr, "note: %u engines, checking the first %u\n", total, (unsigned)max_ids);
        total = max_ids;
    }
    /* Second call: the ids. */
    status = api.get_all_engine_ids(ids, total, &written);
    if(status != HIPDNN_PLUGIN_STATUS_SUCCESS)
    {
        fail("GetAllEngineIds(ids, total)", status);
        return;
    }
    if(written != total)
    {
        fprintf(stderr, "FAIL GetAllEngineIds wrote %u ids, expected %u\n", written, total);
        ++failures;
        return;
    }
    printf("engines: %u\n", written);
    for(i = 0; i < written; ++i)
    {
        uint32_t j;
        for(j = 0; j < i; ++j)
        {
            if(ids[j] == ids[i])
            {
                fprintf(stderr, "FAIL engine id %" PRId64 " listed twice\n", ids[i]);
                ++failures;
            }
        }
#ifndef HEADER_CHECK_NO_ENGINE_NAME
        {
            const char* name = NULL;
            status = api.get_engine_name(ids[i], &name);
            if(status == HIPDNN_PLUGIN_STATUS_SUCCESS && name != NULL)
            {
                printf("  %" PRId64 " (0x%016" PRIx64 ") %s\n", ids[i], (uint64_t)ids[i], name);
                continue;
            }
            if(status != HIPDNN_PLUGIN_STATUS_NOT_APPLICABLE)
            {
                fail("GetEngineName", status);
            }
        }
#endif
        printf("  %" PRId64 " (0x%016" PRIx64 ")\n", ids[i], (uint64_t)ids[i]);
    }
    /* A short array gets a prefix, and the count says how many were written. */
    if(written > 1)
    {
        int64_t first = 0;
        uint32_t one = 0;
        status = api.get_all_engine_ids(&first, 1, &one);
        if(status != HIPDNN_PLUGIN_STATUS_SUCCESS || one != 1 || first != ids[0])
        {
            fail("GetAllEngineIds(ids, 1)", status);
        }
    }
    /* NULL count pointer is a bad parameter. */
    status = api.get_all_engine_ids(ids, total, NULL);
    if(status != HIPDNN_PLUGIN_STATUS_BAD_PARAM)
    {
        fail("GetAllEngineIds(ids, total, NULL) should be BAD_PARAM", status);
    }
}

int main(void)
{
    hipdnnPluginType_t type = HIPDNN_PLUGIN_TYPE_UNSPECIFIED;
    hipdnnPluginStatus_t status;
    const char* message = NULL;

    print_string("name", api.get_name);
    print_string("version", api.get_version);
#ifndef HEADER_CHECK_NO_OPTIONAL_BASE
    print_string("api version", api.get_api_version);
#endif

    status = api.get_type(&type);
    if(status != HIPDNN_PLUGIN_STATUS_SUCCESS || type != HIPDNN_PLUGIN_TYPE_ENGINE)
    {
        fail("GetType should be ENGINE", status);
    }
    else
    {
        printf("type: ENGINE\n");
    }

    /* NULL out-pointers: BAD_PARAM with a message; GetLastErrorString(NULL) is a no-op. */
    status = api.get_name(NULL);
    if(status != HIPDNN_PLUGIN_STATUS_BAD_PARAM)
    {
        fail("GetName(NULL) should be BAD_PARAM", status);
    }
    api.get_last_error_string(&message);
    if(message == NULL)
    {
        fail("GetLastErrorString after a failure gave NULL", status);
    }
    api.get_last_error_string(NULL);

    check_engine_ids();

    if(failures != 0)
    {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("OK\n");
    return 0;
}
