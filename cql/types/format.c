/*
 * format.c: CQL literal and JSON text of values (work in progress).
 */
#include "cql/types/types_int.h"

int ctype_format_cql(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    return CS_EINVAL;
}

int ctype_format_json(const ctype *t, const uint8_t *v, size_t n, cs_buf *out)
{
    return CS_EINVAL;
}
