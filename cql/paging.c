/*
 * paging.c: the paging state of SELECT and resuming clustering slices.
 * Owner: exec-read.  Caller: exec_select.c.
 *
 * Paging state (opaque to clients; our own format, version 1):
 *   u8   version (1)
 *   u8   flags: 0x01 part_done (resume at the partition after pk),
 *               0x02 has ck (resume right after ck inside pk)
 *   u32  pk length, pk bytes (serialized partition key)
 *   u32  ck length, ck bytes (byte-comparable clustering key)
 *   u32  rows already returned (for LIMIT)
 *   u32  rows already returned in pk (for PER PARTITION LIMIT)
 * The query shape (IN list, token range, filters) is re-derived from the
 * statement on every page, so the state only needs the resume point.
 */
#include <string.h>
#include "cql/select_int.h"

#define PSTATE_VERSION 1

void cql__pstate_encode(const cql_pstate *ps, cs_buf *out)
{
    cs_buf_put_u8(out, PSTATE_VERSION);
    cs_buf_put_u8(out, (uint8_t)((ps->part_done ? 1 : 0) | (ps->ck ? 2 : 0)));
    cs_buf_put_u32(out, ps->pk_len);
    cs_buf_put(out, ps->pk, ps->pk_len);
    cs_buf_put_u32(out, ps->ck ? ps->ck_len : 0);
    if (ps->ck)
        cs_buf_put(out, ps->ck, ps->ck_len);
    cs_buf_put_u32(out, (uint32_t)ps->emitted);
    cs_buf_put_u32(out, (uint32_t)ps->part_emitted);
}

int cql__pstate_decode(const uint8_t *p, int32_t len, cql_pstate *ps, cs_error *e)
{
    memset(ps, 0, sizeof(*ps));
    cs_rd r;
    cs_rd_init(&r, p, len > 0 ? (size_t)len : 0);
    uint8_t ver = cs_rd_u8(&r);
    uint8_t flags = cs_rd_u8(&r);
    ps->pk_len = cs_rd_u32(&r);
    ps->pk = cs_rd_take(&r, ps->pk_len);
    ps->ck_len = cs_rd_u32(&r);
    const uint8_t *ck = cs_rd_take(&r, ps->ck_len);
    ps->emitted = (int32_t)cs_rd_u32(&r);
    ps->part_emitted = (int32_t)cs_rd_u32(&r);
    if (r.err || ver != PSTATE_VERSION || cs_rd_left(&r) != 0 || ps->emitted < 0 ||
        ps->part_emitted < 0)
        return cs_error_set(e, CS_ERR_PROTOCOL, "Invalid value for the paging state");
    ps->part_done = flags & 1;
    ps->ck = (flags & 2) ? (ck ? ck : (const uint8_t *)"") : NULL;
    return 0;
}

static int bcmp_(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

/*
 * Forward: keep rows > ck, i.e. start = max(start, ck ++ 0xFF).
 * Reversed: keep rows < ck, i.e. end = min(end, ck) (ends are exclusive).
 */
int cql__slices_after(cs_arena *a, const st_slice *in, int n_in, const uint8_t *ck, uint32_t ck_len,
                      bool reversed, st_slice **out, int *n, bool *empty)
{
    st_slice all = { { (const uint8_t *)"", 0, true }, { (const uint8_t *)"", 0, true } };
    if (n_in == 0) {
        in = &all;
        n_in = 1;
    }
    st_slice *res = cs_arena_zalloc(a, sizeof(st_slice) * (size_t)n_in);
    uint8_t *after = cs_arena_alloc(a, ck_len + 1);
    if (!res || !after)
        return CS_ENOMEM;
    memcpy(after, ck, ck_len);
    after[ck_len] = 0xFF;
    int m = 0;
    for (int i = 0; i < n_in; i++) {
        st_slice s = in[i];
        if (!reversed) {
            if (s.start.len == 0 || bcmp_(s.start.key, s.start.len, after, ck_len + 1) < 0) {
                s.start.key = after;
                s.start.len = ck_len + 1;
                s.start.inclusive = true;
            }
        } else {
            if (s.end.len == 0 || bcmp_(s.end.key, s.end.len, ck, ck_len) > 0) {
                s.end.key = ck;
                s.end.len = ck_len;
                s.end.inclusive = false;
            }
        }
        if (s.start.len && s.end.len && bcmp_(s.start.key, s.start.len, s.end.key, s.end.len) >= 0)
            continue;
        res[m++] = s;
    }
    *out = res;
    *n = m;
    *empty = m == 0;
    return 0;
}
