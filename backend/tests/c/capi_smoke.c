/* Drives the backend's C API as an application does, against the committed header and the
 * built libhipdnn_backend.so. Expects HIPDNN_PLUGIN_DIR to hold exactly one plugin, the
 * example ReLU plugin. Prints OK and returns 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipdnn_backend.h"

static int failures = 0;

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
    if (failures == 0) {
        printf("OK\n");
    }
    return failures == 0 ? 0 : 1;
}
