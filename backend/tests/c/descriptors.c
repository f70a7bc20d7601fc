/* The descriptor path from C, against the example ReLU plugin (HIPDNN_PLUGIN_DIR):
 * JSON graph -> OPERATIONGRAPH -> ENGINEHEUR -> ENGINECFG (+ knob) -> EXECUTION_PLAN ->
 * VARIANT_PACK -> hipdnnBackendExecute, results checked; then the refusals; then the
 * handle is destroyed before the descriptors that use it. Prints OK and returns 0 when
 * every check passes. */
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "hipdnn_backend.h"

static int failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            char message[512];                                                                     \
            hipdnnGetLastErrorString(message, sizeof message);                                     \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
                    message);                                                                      \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

static const char graph_json[] =
    "{\"name\": \"relu\", \"io_data_type\": \"FLOAT\", \"compute_data_type\": \"FLOAT\","
    " \"tensors\": ["
    "  {\"uid\": 1, \"name\": \"x\", \"dims\": [2, 4], \"strides\": [4, 1]},"
    "  {\"uid\": 2, \"name\": \"y\", \"dims\": [2, 4], \"strides\": [4, 1]}],"
    " \"nodes\": [{\"name\": \"act\", \"attributes_type\": \"PointwiseAttributes\","
    "  \"attributes\": {\"operation\": \"RELU_FWD\", \"in_0_tensor_uid\": 1, \"out_0_tensor_uid\": 2}}]}";

int main(void)
{
    hipdnnHandle_t handle = NULL;
    CHECK(hipdnnCreate(&handle) == HIPDNN_STATUS_SUCCESS);

    hipdnnBackendDescriptor_t graph = NULL;
    CHECK(hipdnnBackendCreateAndDeserializeJsonGraph_ext(&graph, graph_json, strlen(graph_json))
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(graph) == HIPDNN_STATUS_BAD_PARAM); /* no handle yet */
    CHECK(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &handle)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(graph) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(graph, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1, &handle)
          == HIPDNN_STATUS_NOT_INITIALIZED);

    /* The binary form round-trips through the deserializing constructor. */
    size_t size = 0;
    CHECK(hipdnnBackendGetSerializedBinaryGraph_ext(graph, 0, &size, NULL) == HIPDNN_STATUS_SUCCESS && size > 0);
    unsigned char bytes[4096];
    CHECK(size <= sizeof bytes);
    CHECK(hipdnnBackendGetSerializedBinaryGraph_ext(graph, size - 1, &size, bytes)
          == HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT);
    CHECK(hipdnnBackendGetSerializedBinaryGraph_ext(graph, sizeof bytes, &size, bytes) == HIPDNN_STATUS_SUCCESS);
    hipdnnBackendDescriptor_t copy = NULL;
    CHECK(hipdnnBackendCreateAndDeserializeGraph_ext(&copy, bytes, size) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendDestroyDescriptor(copy) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendCreateAndDeserializeGraph_ext(&copy, bytes, 7) == HIPDNN_STATUS_BAD_PARAM);

    /* Heuristic: ranked engine configs. */
    hipdnnBackendDescriptor_t heur = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                                    1, &graph) == HIPDNN_STATUS_SUCCESS);
    int64_t count = 0;
    CHECK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                    NULL) == HIPDNN_STATUS_NOT_INITIALIZED);
    /* The mode is required, and FALLBACK is the one there is. */
    CHECK(hipdnnBackendFinalize(heur) == HIPDNN_STATUS_BAD_PARAM);
    hipdnnBackendHeurMode_t mode = (hipdnnBackendHeurMode_t)3;
    CHECK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &mode) ==
          HIPDNN_STATUS_NOT_SUPPORTED);
    mode = HIPDNN_HEUR_MODE_FALLBACK;
    CHECK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &mode) ==
          HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(heur) == HIPDNN_STATUS_SUCCESS);
    mode = (hipdnnBackendHeurMode_t)7;
    CHECK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE, 1, &count, &mode) ==
          HIPDNN_STATUS_SUCCESS);
    CHECK(mode == HIPDNN_HEUR_MODE_FALLBACK && count == 1);
    CHECK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                    NULL) == HIPDNN_STATUS_SUCCESS);
    CHECK(count == 1);
    hipdnnBackendDescriptor_t ranked = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &ranked) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                    &ranked) == HIPDNN_STATUS_SUCCESS);

    /* The engine by id, its name; a config with a knob. */
    int64_t relu_id = 0;
    CHECK(hipdnnGetEngineIdByName_ext(handle, "EXAMPLE_RELU_ENGINE", &relu_id) == HIPDNN_STATUS_SUCCESS);
    hipdnnBackendDescriptor_t engine = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(engine, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                    &graph) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(engine, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64, 1, &relu_id)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(engine) == HIPDNN_STATUS_SUCCESS);
    char name[64];
    CHECK(hipdnnBackendGetAttribute(engine, HIPDNN_ATTR_ENGINE_NAME_EXT, HIPDNN_TYPE_CHAR, sizeof name, &count, name)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(strcmp(name, "EXAMPLE_RELU_ENGINE") == 0 && count == (int64_t)sizeof "EXAMPLE_RELU_ENGINE");

    static const char slope_id[] = "example.relu.negative_slope";
    hipdnnBackendDescriptor_t knob = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knob) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(knob, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_TYPE_CHAR,
                                    (int64_t)strlen(slope_id), slope_id) == HIPDNN_STATUS_SUCCESS);
    double slope = 0.5;
    CHECK(hipdnnBackendSetAttribute(knob, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_DOUBLE, 1, &slope)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(knob) == HIPDNN_STATUS_SUCCESS);
    hipdnnBackendDescriptor_t config = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &config) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(config, HIPDNN_ATTR_ENGINECFG_ENGINE, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(config, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                    &knob) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(config) == HIPDNN_STATUS_SUCCESS);

    /* An out-of-range knob is refused at finalize, naming the knob. */
    hipdnnBackendDescriptor_t steep = NULL, bad_config = NULL;
    double too_steep = 3.0;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &steep) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(steep, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_TYPE_CHAR,
                                    (int64_t)strlen(slope_id), slope_id) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(steep, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_DOUBLE, 1, &too_steep)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(steep) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR, &bad_config) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(bad_config, HIPDNN_ATTR_ENGINECFG_ENGINE, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                    &engine) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(bad_config, HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                                    1, &steep) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(bad_config) == HIPDNN_STATUS_BAD_PARAM);
    char message[512];
    hipdnnGetLastErrorString(message, sizeof message);
    CHECK(strstr(message, slope_id) != NULL);

    /* The plan, from the knob config; the ranked config builds too. */
    hipdnnBackendDescriptor_t plan = NULL, default_plan = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, HIPDNN_TYPE_BACKEND_DESCRIPTOR,
                                    1, &config) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(plan) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &default_plan)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(default_plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                    HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ranked) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(default_plan) == HIPDNN_STATUS_SUCCESS);
    int64_t workspace = -1;
    CHECK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, HIPDNN_TYPE_INT64, 1, &count,
                                    &workspace) == HIPDNN_STATUS_SUCCESS);
    CHECK(workspace == 0);
    int64_t uids[4] = {0};
    CHECK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_TENSOR_UIDS_EXT, HIPDNN_TYPE_INT64, 4, &count,
                                    uids) == HIPDNN_STATUS_SUCCESS);
    CHECK(count == 2 && uids[0] == 1 && uids[1] == 2);

    /* Execute: y = x > 0 ? x : 0.5 x. */
    alignas(64) float x[8] = {-2, -1, 0, 1, 2, -0.5f, 3, -4};
    alignas(64) float y[8] = {0};
    int64_t pack_uids[2] = {1, 2};
    void* pointers[2] = {x, y};
    hipdnnBackendDescriptor_t pack = NULL;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64, 2, pack_uids)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_TYPE_VOID_PTR, 2, pointers)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(pack) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendExecute(handle, plan, pack) == HIPDNN_STATUS_SUCCESS);
    for (int i = 0; i < 8; ++i) {
        float want = x[i] > 0 ? x[i] : 0.5f * x[i];
        CHECK(y[i] == want);
    }

    /* A pack missing y runs nothing. */
    hipdnnBackendDescriptor_t short_pack = NULL;
    y[0] = 42;
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &short_pack)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(short_pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, HIPDNN_TYPE_INT64, 1, pack_uids)
          == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendSetAttribute(short_pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_TYPE_VOID_PTR, 1,
                                    pointers) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendFinalize(short_pack) == HIPDNN_STATUS_SUCCESS);
    CHECK(hipdnnBackendExecute(handle, default_plan, short_pack) == HIPDNN_STATUS_BAD_PARAM);
    hipdnnGetLastErrorString(message, sizeof message);
    CHECK(strstr(message, "no pointer for tensor uid 2") != NULL);
    CHECK(y[0] == 42);

    /* Wrong descriptor kinds and attributes are refused. */
    CHECK(hipdnnBackendExecute(handle, pack, plan) == HIPDNN_STATUS_BAD_PARAM);
    CHECK(hipdnnBackendSetAttribute(pack, 9999, HIPDNN_TYPE_INT64, 1, pack_uids) == HIPDNN_STATUS_NOT_INITIALIZED);
    CHECK(hipdnnBackendCreateDescriptor(999, &copy) == HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_ENGINE_DESCRIPTOR, NULL) == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);

    /* The handle may go before the descriptors that use it: they keep it alive, a plan
     * still answers, and destroying the plans afterwards is safe (valgrind checks it). */
    CHECK(hipdnnDestroy(handle) == HIPDNN_STATUS_SUCCESS);
    workspace = -1;
    CHECK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, HIPDNN_TYPE_INT64, 1, &count,
                                    &workspace) == HIPDNN_STATUS_SUCCESS);
    CHECK(workspace == 0);
    /* Executing through the destroyed handle is refused, not a use after free. */
    CHECK(hipdnnBackendExecute(handle, plan, pack) == HIPDNN_STATUS_BAD_PARAM);
    hipdnnBackendDescriptor_t all[] = {short_pack, pack, default_plan, plan, bad_config, steep, config,
                                       knob,       engine, ranked,     heur, graph};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        CHECK(hipdnnBackendDestroyDescriptor(all[i]) == HIPDNN_STATUS_SUCCESS);
    }
    /* Destroying again is refused without reading the freed objects (valgrind checks
     * that nothing reads them). */
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        CHECK(hipdnnBackendDestroyDescriptor(all[i]) == HIPDNN_STATUS_BAD_PARAM);
    }
    CHECK(hipdnnBackendFinalize(plan) == HIPDNN_STATUS_BAD_PARAM);
    CHECK(hipdnnDestroy(handle) == HIPDNN_STATUS_BAD_PARAM);
    if (failures == 0) {
        printf("OK\n");
    }
    return failures == 0 ? 0 : 1;
}
