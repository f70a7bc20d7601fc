/* Lists the engines the hipDNN backend finds: build it against an installed layout,
 *
 *     cc -std=c99 list_engines.c -I PREFIX/include -L PREFIX/lib -Wl,-rpath,PREFIX/lib \
 *        -lhipdnn_backend -o list_engines
 *
 * and run it with no environment set: the backend looks for plugins in
 * PREFIX/lib/hipdnn_plugins/engines, next to libhipdnn_backend.so. Exits with 1 when no
 * engine is found. */
#include <stdio.h>
#include <stdlib.h>

#include <hipdnn_backend.h>

/* Prints the last error for a failed call and returns 1. */
static int fail(const char* what, hipdnnStatus_t status)
{
    char message[512];
    hipdnnGetLastErrorString(message, sizeof message);
    fprintf(stderr, "%s failed: %s (%s)\n", what, hipdnnGetErrorString(status), message);
    return 1;
}

int main(void)
{
    hipdnnHandle_t handle = NULL;
    hipdnnStatus_t status = hipdnnCreate(&handle);
    if (status != HIPDNN_STATUS_SUCCESS) {
        return fail("hipdnnCreate", status);
    }
    int result = 0;

    /* Plugin paths: ask for the count and the longest length, then fetch. */
    size_t count = 0, longest = 0;
    status = hipdnnGetLoadedEnginePluginPaths_ext(handle, &count, NULL, &longest);
    if (status != HIPDNN_STATUS_SUCCESS) {
        result = fail("hipdnnGetLoadedEnginePluginPaths_ext", status);
        goto done;
    }
    char** paths = calloc(count ? count : 1, sizeof *paths);
    for (size_t i = 0; i < count; ++i) {
        paths[i] = malloc(longest);
    }
    status = hipdnnGetLoadedEnginePluginPaths_ext(handle, &count, paths, &longest);
    for (size_t i = 0; i < count; ++i) {
        if (status == HIPDNN_STATUS_SUCCESS) {
            printf("plugin %s\n", paths[i]);
        }
        free(paths[i]);
    }
    free(paths);
    if (status != HIPDNN_STATUS_SUCCESS) {
        result = fail("hipdnnGetLoadedEnginePluginPaths_ext", status);
        goto done;
    }

    size_t engines = 0;
    status = hipdnnGetEngineCount_ext(handle, &engines);
    if (status != HIPDNN_STATUS_SUCCESS) {
        result = fail("hipdnnGetEngineCount_ext", status);
        goto done;
    }
    for (size_t i = 0; i < engines; ++i) {
        int64_t id = 0;
        char name[256], plugin[256], version[64], type[64];
        size_t name_len = sizeof name, plugin_len = sizeof plugin;
        size_t version_len = sizeof version, type_len = sizeof type;
        status = hipdnnGetEngineInfo_ext(handle, i, &id, name, &name_len, plugin, &plugin_len, version,
                                         &version_len, type, &type_len);
        if (status != HIPDNN_STATUS_SUCCESS) {
            result = fail("hipdnnGetEngineInfo_ext", status);
            goto done;
        }
        printf("engine 0x%016llx %s (plugin %s %s)\n", (unsigned long long)id, name, plugin, version);
    }
    if (engines == 0) {
        fprintf(stderr, "no engine found: is a plugin installed in hipdnn_plugins/engines next to "
                        "libhipdnn_backend.so?\n");
        result = 1;
    }

done:
    hipdnnDestroy(handle);
    return result;
}
