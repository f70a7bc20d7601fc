/* Drives the backend's C API as an application does, against the committed header and the
 * built libhipdnn_backend.so. Expects HIPDNN_PLUGIN_DIR to hold exactly one plugin, the
 * example ReLU plugin. Prints OK and returns 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_backend.h"

static int failures = 0;

/* What a log callback saw. */
struct log_record {
    int count;
    int infos;
    int errors;
    int missing_plugin; /* messages naming the missing plugin file */
    char last[256];
};

static void record_log(void* user, hipdnnSeverity_t severity, const char* message)
{
    struct log_record* record = user;
    ++record->count;
    if (severity == HIPDNN_SEV_INFO) {
        ++record->infos;
    }
    if (severity >= HIPDNN_SEV_ERROR) {
        ++record->errors;
    }
    if (strstr(message, "libnothing.so") != NULL) {
        ++record->missing_plugin;
    }
    snprintf(record->last, sizeof record->last, "%s", message);
}

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            char message[256];                                                 \
            hipdnnGetLastErrorString(message, sizeof message);                 \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",      \
                    __FILE__, __LINE__, #cond, message);                       \
            ++failures;                                                        \
        }                                                                      \
    } while (0)

int main(void)
{
    hipdnnHandle_t handle = NULL;
    CHECK(hipdnnCreate(NULL) == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    char message[256];
    hipdnnGetLastErrorString(message, sizeof message);
    CHECK(strstr(message, "handle is null") != NULL);
    CHECK(hipdnnCreate(&handle) == HIPDNN_STATUS_SUCCESS);

    /* Loaded plugins, two-call. */
    size_t count = 0, longest = 0;
    CHECK(hipdnnGetLoadedEnginePluginPaths_ext(handle, &count, NULL, &longest) == HIPDNN_STATUS_SUCCESS);
    CHECK(count == 1 && longest > 1);
    char* path = malloc(longest);
    size_t short_len = longest - 1;
    CHECK(hipdnnGetLoadedEnginePluginPaths_ext(handle, &count, &path, &short_len)
          == HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    CHECK(hipdnnGetLoadedEnginePluginPaths_ext(handle, &count, &path, &longest) == HIPDNN_STATUS_SUCCESS);
    CHECK(strstr(path, "minimal_plugin") != NULL);
    free(path);

    /* Engines, two-call per string. */
    size_t engines = 0;
    CHECK(hipdnnGetEngineCount_ext(handle, &engines) == HIPDNN_STATUS_SUCCESS);
    CHECK(engines == 1);
    int64_t id = 0;
    size_t name_len = 0, plugin_len = 0, version_len = 0, type_len = 0;
    CHECK(hipdnnGetEngineInfo_ext(handle, 0, &id, NULL, &name_len, NULL, &plugin_len, NULL, &version_len,
                                  NULL, &type_len) == HIPDNN_STATUS_SUCCESS);
    CHECK(name_len == strlen("EXAMPLE_RELU_ENGINE") + 1);
    char name[64], plugin[64], version[64], type[64];
    size_t tiny = 3;
    CHECK(hipdnnGetEngineInfo_ext(handle, 0, &id, name, &tiny, NULL, &plugin_len, NULL, &version_len, NULL,
                                  &type_len) == HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    name_len = plugin_len = version_len = type_len = 64;
    CHECK(hipdnnGetEngineInfo_ext(handle, 0, &id, name, &name_len, plugin, &plugin_len, version, &version_len,
                                  type, &type_len) == HIPDNN_STATUS_SUCCESS);
    CHECK(strcmp(name, "EXAMPLE_RELU_ENGINE") == 0);
    CHECK(strcmp(plugin, "example_relu_plugin") == 0);
    CHECK(strcmp(type, "engine") == 0);
    CHECK(hipdnnGetEngineInfo_ext(handle, 1, &id, NULL, &name_len, NULL, &plugin_len, NULL, &version_len, NULL,
                                  &type_len) == HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
    int64_t by_name = 0;
    CHECK(hipdnnGetEngineIdByName_ext(handle, "EXAMPLE_RELU_ENGINE", &by_name) == HIPDNN_STATUS_SUCCESS);
    CHECK(by_name == id);
    CHECK(hipdnnGetEngineIdByName_ext(handle, "NO_SUCH_ENGINE", &by_name) == HIPDNN_STATUS_NOT_SUPPORTED);
    hipdnnPeekLastErrorString_ext(message, sizeof message);
    CHECK(strstr(message, "NO_SUCH_ENGINE") != NULL);

    /* Paths are frozen while a handle lives. */
    const char* paths[] = {"/nonexistent"};
    CHECK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ABSOLUTE) == HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK(hipdnnSetEnginePluginPaths_ext(1, NULL, HIPDNN_PLUGIN_LOADING_ADDITIVE)
          == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);

    hipStream_t stream = NULL;
    CHECK(hipdnnSetStream(handle, NULL) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnGetStream(handle, &stream) == HIPDNN_STATUS_SUCCESS && stream == NULL);
    CHECK(strcmp(hipdnnGetErrorString(HIPDNN_STATUS_PLUGIN_ERROR), "plugin error") == 0);
    CHECK(hipdnnVersionString_ext() != NULL);

    CHECK(hipdnnDestroy(handle) == HIPDNN_STATUS_SUCCESS);
    /* A second handle reuses the loaded plugins (LAZY, the default). */
    CHECK(hipdnnCreate(&handle) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnGetEngineCount_ext(handle, &engines) == HIPDNN_STATUS_SUCCESS && engines == 1);
    CHECK(hipdnnDestroy(handle) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnSetPluginUnloadMode_ext(7) == HIPDNN_STATUS_BAD_PARAM);

    /* Logging: off by default; callbacks get what passes both their level and the global one. */
    hipdnnSeverity_t level = HIPDNN_SEV_INFO;
    CHECK(hipdnnBackendGetGlobalLogLevel_ext(&level) == HIPDNN_STATUS_SUCCESS && level == HIPDNN_SEV_OFF);
    CHECK(hipdnnBackendGetGlobalLogLevel_ext(NULL) == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK(hipdnnBackendSetGlobalLogLevel_ext((hipdnnSeverity_t)9) == HIPDNN_STATUS_BAD_PARAM);
    struct log_record sync_log = {0, 0, 0, 0, ""}, async_log = {0, 0, 0, 0, ""};
    CHECK(hipdnnSetUserLogCallback_ext(NULL, HIPDNN_SEV_INFO, HIPDNN_LOG_CALLBACK_SYNC, &sync_log)
          == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_INFO, HIPDNN_LOG_CALLBACK_SYNC, NULL)
          == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_INFO, 5, &sync_log) == HIPDNN_STATUS_BAD_PARAM);
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_INFO, HIPDNN_LOG_CALLBACK_SYNC, &sync_log)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_WARN, HIPDNN_LOG_CALLBACK_ASYNC, &async_log)
          == HIPDNN_STATUS_SUCCESS);
    hipdnnLoggingCallback_ext(HIPDNN_SEV_ERROR, "dropped: the global level is OFF");
    CHECK(sync_log.count == 0);
    CHECK(hipdnnBackendSetGlobalLogLevel_ext(HIPDNN_SEV_INFO) == HIPDNN_STATUS_SUCCESS);
    hipdnnLoggingCallback_ext(HIPDNN_SEV_INFO, "info message");
    CHECK(sync_log.count == 1 && strstr(sync_log.last, "info message") != NULL);
    hipdnnLoggingCallback_ext(HIPDNN_SEV_ERROR, "error message");
    hipdnnLoggingCallback_ext(HIPDNN_SEV_FATAL, "fatal message");
    CHECK(sync_log.count == 3 && sync_log.errors == 2);
    /* Backend messages arrive too: an error for a plugin path that does not exist. */
    const char* missing[] = {"/nonexistent/libnothing.so"};
    CHECK(hipdnnSetEnginePluginPaths_ext(1, missing, HIPDNN_PLUGIN_LOADING_ADDITIVE) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnCreate(&handle) == HIPDNN_STATUS_SUCCESS);
    CHECK(sync_log.errors == 3 && sync_log.missing_plugin == 1);
    CHECK(hipdnnGetEngineCount_ext(handle, &engines) == HIPDNN_STATUS_SUCCESS && engines == 1);
    CHECK(hipdnnDestroy(handle) == HIPDNN_STATUS_SUCCESS);
    /* Removing the ASYNC callback delivers its queue first: the error, the fatal, the
     * backend's error and the plugin's warning; never an info. */
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_OFF, HIPDNN_LOG_CALLBACK_ASYNC, &async_log)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(async_log.errors == 3 && async_log.missing_plugin == 1);
    CHECK(async_log.infos == 0 && sync_log.infos > 1 && async_log.count == sync_log.count - sync_log.infos);
    CHECK(hipdnnSetUserLogCallback_ext(record_log, HIPDNN_SEV_OFF, HIPDNN_LOG_CALLBACK_SYNC, &sync_log)
          == HIPDNN_STATUS_SUCCESS);
    int seen = sync_log.count;
    hipdnnLoggingCallback_ext(HIPDNN_SEV_ERROR, "after removal");
    CHECK(sync_log.count == seen);
    CHECK(hipdnnBackendSetGlobalLogLevel_ext(HIPDNN_SEV_OFF) == HIPDNN_STATUS_SUCCESS);

    if (failures == 0) {
        printf("OK\n");
    }
    return failures == 0 ? 0 : 1;
}
