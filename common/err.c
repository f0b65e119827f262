/* err.c: error strings and the user-facing error record (see err.h). */
#include "common/err.h"
#include "common/log.h"
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

_Thread_local int cs_last_errno;

const char *cs_strerror(int rc)
{
    switch (rc) {
    case CS_OK: return "ok";
    case CS_ENOMEM: return "out of memory";
    case CS_EIO: return "I/O error";
    case CS_ECORRUPT: return "corrupt data";
    case CS_ENOTFOUND: return "not found";
    case CS_EINVAL: return "invalid argument";
    case CS_EEXIST: return "already exists";
    case CS_ETOOBIG: return "too big";
    case CS_EAGAIN: return "try again";
    case CS_EUSER: return "request error";
    case CS_ECANCELED: return "stopped";
    default: return "unknown error";
    }
}

void cs_error_init(cs_error *e)
{
    memset(e, 0, sizeof(*e));
    e->code = -1;
}

_Static_assert(offsetof(cs_error, cl) == offsetof(cs_error, msg) + sizeof(((cs_error *)0)->msg),
               "cs_error_set clears the fields from cl on: code, msg, then the others");

int cs_error_set(cs_error *e, int code, const char *fmt, ...)
{
    if (e->code >= 0)
        return CS_EUSER;
    e->code = code;
    /* The fields after msg start clear for every recorded error, so an
     * error initialized without them (the request loop's, conn.c
     * error_init) is as one from cs_error_init once it holds an error;
     * callers fill the ones their error kind carries after this call. */
    memset((char *)e + offsetof(cs_error, cl), 0, sizeof *e - offsetof(cs_error, cl));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return CS_EUSER;
}

int cs__corrupt(const char *file, int line, const char *what, const char *path, uint64_t off)
{
    cs_log(CS_LOG_ERROR, "corruption: %s in %s at offset %llu (detected at %s:%d)", what,
           path ? path : "?", (unsigned long long)off, file, line);
    return CS_ECORRUPT;
}
