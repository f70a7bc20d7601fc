/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* When plugins are unloaded (hipdnnSetPluginUnloadMode_ext). */
#ifndef HIPDNN_BACKEND_PLUGIN_UNLOADING_MODE_H
#define HIPDNN_BACKEND_PLUGIN_UNLOADING_MODE_H

/* Plugin unloading mode. */
typedef enum
{
    /* Keep plugins loaded after the last handle (default). */
    HIPDNN_PLUGIN_UNLOAD_LAZY = 0,
    /* Unload plugins with the last handle. */
    HIPDNN_PLUGIN_UNLOAD_EAGER = 1
} hipdnnPluginUnloadingMode_ext_t;

/* The mode used until hipdnnSetPluginUnloadMode_ext sets one. (hipDNN declares this as a
   C++ constexpr; a macro is valid C too.) */
#define HIPDNN_DEFAULT_PLUGIN_UNLOADING_MODE HIPDNN_PLUGIN_UNLOAD_LAZY

#endif /* HIPDNN_BACKEND_PLUGIN_UNLOADING_MODE_H */
