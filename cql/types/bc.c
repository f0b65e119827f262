/*
 * bc.c: byte-comparable encoding (work in progress; see types.h).
 */
#include "cql/types/types_int.h"

int ctype_bc_encode(const ctype *t, const uint8_t *v, size_t n, bool desc, cs_buf *out)
{
    return CS_EINVAL;
}

int ctype_bc_decode(const ctype *t, cs_rd *r, bool desc, cs_buf *out)
{
    return CS_EINVAL;
}
