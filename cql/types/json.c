/*
 * json.c: values from JSON text (work in progress).
 */
#include "cql/types/types_int.h"

int ctype_from_json(const ctype *t, const char *json, size_t n, cs_buf *out, cs_error *e)
{
    return cs_error_set(e, CS_ERR_INVALID, "JSON values are not supported yet");
}
