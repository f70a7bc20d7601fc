/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* How custom plugin paths combine with the default ones (hipdnnSetEnginePluginPaths_ext). */
#ifndef HIPDNN_BACKEND_PLUGIN_LOADING_MODE_H
#define HIPDNN_BACKEND_PLUGIN_LOADING_MODE_H

/* Plugin loading mode. */
typedef enum
{
    /* Default and custom paths. */
    HIPDNN_PLUGIN_LOADING_ADDITIVE = 0,
    /* Custom paths only. */
    HIPDNN_PLUGIN_LOADING_ABSOLUTE = 1
} hipdnnPluginLoadingMode_ext_t;

/* The mode used until hipdnnSetEnginePluginPaths_ext sets one. (hipDNN declares this as a
   C++ constexpr; a macro is valid C too.) */
#define HIPDNN_DEFAULT_PLUGIN_LOADING_MODE HIPDNN_PLUGIN_LOADING_ADDITIVE

#endif /* HIPDNN_BACKEND_PLUGIN_LOADING_MODE_H */
