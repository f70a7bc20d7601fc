/* SPDX-License-Identifier: MIT */
/*
 * PluginApi.h: the entry points every hipDNN plugin exports, whatever its type.
 *
 * Hand-written for hipdnn-rs; names and signatures match hipDNN's plugin C ABI exactly.
 *
 * Conventions for this header and EnginePluginApi.h
 * --------------------------------------------------
 * - A plugin is one shared library. The host opens it with dlopen(RTLD_NOW | RTLD_LOCAL)
 *   (LoadLibrary on Windows) and looks every function up by its exact name, so each one
 *   must be exported unmangled. Export nothing else: build with -fvisibility=hidden and
 *   mark only these functions with HIPDNN_PLUGIN_EXPORT.
 * - Every function except hipdnnPluginGetLastErrorString returns a hipdnnPluginStatus_t.
 *   After a non-SUCCESS status the host calls hipdnnPluginGetLastErrorString on the same
 *   thread, before any other plugin call, to get the reason.
 * - Argument order: handle, then inputs, then outputs. A pointer to an array is followed
 *   by its element count.
 * - Output parameters are written only when the call returns SUCCESS, unless a function
 *   says otherwise. A host must not read them after a failure.
 * - A NULL pointer where the function needs a value is answered with
 *   HIPDNN_PLUGIN_STATUS_BAD_PARAM and nothing is written.
 * - Strings handed out through `const char**` belong to the plugin. The host never frees
 *   them.
 * - "Required" below means the host refuses to load a plugin without the symbol;
 *   "optional" means the host checks for it and copes when it is absent.
 */
#ifndef HIPDNN_PLUGIN_SDK_PLUGIN_API_H
#define HIPDNN_PLUGIN_SDK_PLUGIN_API_H

#include "PluginApiDataTypes.h"

/*
 * HIPDNN_PLUGIN_EXPORT marks a declaration as part of the plugin's public interface.
 * Define HIPDNN_PLUGIN_STATIC_DEFINE when the plugin code goes into a static library (the
 * macro then expands to nothing), or define HIPDNN_PLUGIN_EXPORT yourself before including
 * this header to override it (for example with __declspec(dllimport) in a Windows program
 * that links against a plugin).
 */
#ifndef HIPDNN_PLUGIN_EXPORT
#if defined(HIPDNN_PLUGIN_STATIC_DEFINE)
#define HIPDNN_PLUGIN_EXPORT
#elif defined(_WIN32) || defined(__CYGWIN__)
#define HIPDNN_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define HIPDNN_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define HIPDNN_PLUGIN_EXPORT
#endif
#endif

/*
 * HIPDNN_PLUGIN_NODISCARD makes C++17 compilers warn when a returned status is ignored.
 * It expands to nothing in C and in older C++.
 */
#ifndef HIPDNN_PLUGIN_NODISCARD
#if defined(__cplusplus) && __cplusplus >= 201703L
#define HIPDNN_PLUGIN_NODISCARD [[nodiscard]]
#else
#define HIPDNN_PLUGIN_NODISCARD
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Writes the plugin's name to `*name`. Required.
 *
 * The string is NUL-terminated, owned by the plugin and valid for as long as the library
 * stays loaded; never free it. It identifies the plugin in the host's logs and tools.
 * NULL `name`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginGetName(const char** name);
typedef hipdnnPluginStatus_t (*hipdnnPluginGetName_fn)(const char** name);

/*
 * Writes the version of the plugin's own implementation to `*version` (free-form, for
 * example "1.0.0"). Required. Same ownership and NULL rules as hipdnnPluginGetName.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginGetVersion(const char** version);
typedef hipdnnPluginStatus_t (*hipdnnPluginGetVersion_fn)(const char** version);

/*
 * Writes the version of the plugin C ABI this plugin implements, as "MAJOR.MINOR.PATCH",
 * to `*version` (an engine plugin built against these headers reports
 * HIPDNN_ENGINE_API_VERSION). Same ownership and NULL rules as hipdnnPluginGetName.
 *
 * Optional for the host: a plugin without this symbol is taken to implement "1.0.0". A
 * string that is not a valid version, or whose major version the host does not support,
 * makes the host refuse the plugin. Graphs that need a newer minor version than the one
 * reported are not offered to the plugin.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginGetApiVersion(const char** version);
typedef hipdnnPluginStatus_t (*hipdnnPluginGetApiVersion_fn)(const char** version);

/*
 * Writes the plugin's kind to `*type`; an engine plugin writes HIPDNN_PLUGIN_TYPE_ENGINE.
 * Required. The host refuses a plugin whose type is not the one it is loading.
 * NULL `type`: BAD_PARAM.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginGetType(hipdnnPluginType_t* type);
typedef hipdnnPluginStatus_t (*hipdnnPluginGetType_fn)(hipdnnPluginType_t* type);

/*
 * Writes to `*error_str` the message recorded by the last failing plugin call made on the
 * calling thread. Required.
 *
 * The string is NUL-terminated and lives in a buffer owned by the plugin and private to
 * the thread (at most HIPDNN_PLUGIN_ERROR_STRING_MAX_LENGTH bytes with the NUL). It stays
 * valid only until the same thread calls into the plugin again, so copy it at once; never
 * free it. It may be empty when nothing has failed yet. NULL `error_str`: does nothing.
 * Returns no status, since there would be nowhere to report a failure of this call.
 */
HIPDNN_PLUGIN_EXPORT void hipdnnPluginGetLastErrorString(const char** error_str);
typedef void (*hipdnnPluginGetLastErrorString_fn)(const char** error_str);

/*
 * Gives the plugin a function to send its log messages to. Optional; the host calls it
 * right after loading the plugin and checking its type.
 *
 * The plugin calls `callback` from whichever thread produced the message, including
 * threads it created itself, so the callback must be thread-safe. The message pointer is
 * valid only during the callback. A later call replaces the previous callback.
 * NULL `callback`: BAD_PARAM, and the previous callback stays installed.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginSetLoggingCallback(hipdnnCallback_t callback);
typedef hipdnnPluginStatus_t (*hipdnnPluginSetLoggingCallback_fn)(hipdnnCallback_t callback);

/*
 * Sets the least severe message the plugin passes to its logging callback; HIPDNN_SEV_OFF
 * stops all messages. Optional; the host calls it at load time and whenever its own level
 * changes. A plugin may answer a value outside hipdnnSeverity_t with BAD_PARAM, leaving
 * its level unchanged.
 */
HIPDNN_PLUGIN_NODISCARD HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
    hipdnnPluginSetLogLevel(hipdnnSeverity_t level);
typedef hipdnnPluginStatus_t (*hipdnnPluginSetLogLevel_fn)(hipdnnSeverity_t level);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPDNN_PLUGIN_SDK_PLUGIN_API_H */
