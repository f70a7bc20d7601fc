/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with scripts/gen-backend-header.sh. */
/* Logging types: severities and the callbacks that receive messages. */
#ifndef HIPDNN_BACKEND_CALLBACK_TYPES_H
#define HIPDNN_BACKEND_CALLBACK_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

/* The same two types, behind the same guard, as the plugin SDK's PluginApiDataTypes.h:
   the headers may be included together, in either order. */
#ifndef HIPDNN_CALLBACK_TYPES_DEFINED
#define HIPDNN_CALLBACK_TYPES_DEFINED

/* Severity of a log message, least severe first; HIPDNN_SEV_OFF as a level disables
   logging. */
typedef enum
{
    HIPDNN_SEV_INFO = 0,
    HIPDNN_SEV_WARN = 1,
    HIPDNN_SEV_ERROR = 2,
    HIPDNN_SEV_FATAL = 3,
    HIPDNN_SEV_OFF = 4
} hipdnnSeverity_t;

/* Receives one formatted log message, valid for the call only. */
typedef void (*hipdnnCallback_t)(hipdnnSeverity_t severity, const char* message);

#endif /* HIPDNN_CALLBACK_TYPES_DEFINED */

#ifndef HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED
#define HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED

/* The user data passed back to a log callback; with the callback, it identifies the
   registration (hipdnnSetUserLogCallback_ext). */
typedef void* hipdnnUserLogCallbackHandle_t;

/* A user log callback: (userHandle, severity, message). The message is valid for the
   call only. */
typedef void (*hipdnnUserLogCallback_t)(hipdnnUserLogCallbackHandle_t userHandle,
                                        hipdnnSeverity_t severity,
                                        const char* message);

#endif /* HIPDNN_USER_LOG_CALLBACK_TYPES_DEFINED */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPDNN_BACKEND_CALLBACK_TYPES_H */
