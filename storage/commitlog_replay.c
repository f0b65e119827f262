/*
 * commitlog_replay.c: reading segments back: replay of the segments found
 * at open (clog_replay, records up to the first torn or corrupt one) and
 * the offline dump behind cassette-tool commitlog dump (clog_dump).  The
 * writing side is storage/commitlog.c; both share commitlog_int.h.
 */
#include "storage/commitlog_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"
#include "common/vfs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- replay */

/* Does a record of the segment whose length CRCs start from seed begin at
 * p (n bytes left)?  Its length CRC and its payload CRC must check. */
static bool record_at(const uint8_t *p, size_t n, uint32_t seed)
{
    if (n < CLOG_REC_HDR + CLOG_REC_TRL) return false;
    uint32_t len = cs_be32(p);
    if (cs_be32(p + 4) != cs_crc32c(seed, p, 4)) return false;
    if (len == 0 || (uint64_t)len + CLOG_REC_HDR + CLOG_REC_TRL > n) return false;
    return cs_be32(p + CLOG_REC_HDR + len) == cs_crc32c(0, p + CLOG_REC_HDR, len);
}

/* The offset of the first record of seed's segment after off, or 0. */
static size_t next_record(const uint8_t *p, size_t n, size_t off, uint32_t seed)
{
    for (size_t o = off + 1; o + CLOG_REC_HDR + CLOG_REC_TRL <= n; o++)
        if (record_at(p + o, n - o, seed)) return o;
    return 0;
}

/* Replay one old segment: records up to the first torn or corrupt one.
 * *good is the end of the last good record; *clean tells whether what
 * follows is an expected end (the file's end, zero fill, or bytes a reused
 * file kept from its earlier segments) rather than damage. */
static int replay_seg(clog *l, clog_seg *s, clog_replay_cb cb, void *arg, uint64_t *good, bool *clean)
{
    (void)l;
    *good = 0;
    *clean = false;
    uint8_t *p; size_t n;
    int rc = vfs_read_all(s->path, &p, &n);
    if (rc) {
        CS_ERROR("commitlog: cannot read %s: %s", s->path, cs_strerror(rc));
        return 0;
    }
    size_t hdr = s->ver == 1 ? CLOG_HDR_V1 : CLOG_HDR;
    uint32_t seed = 0, flags = 0;
    bool hdr_ok = n >= hdr && cs_be32(p) == CLOG_MAGIC && cs_be32(p + 4) == s->ver &&
                  (s->ver == 1 || s->ver == CLOG_VERSION) && cs_be32(p + hdr - 4) == cs_crc32c(0, p, hdr - 4);
    if (hdr_ok && s->ver != 1) {
        flags = cs_be32(p + 16);
        seed = cs_be32(p + 20);
    }
    if (hdr_ok && s->ver != 1 && cs_be64(p + 8) < s->id) {
        /* A spare renamed to this name before a crash, its new header not
         * yet written: still the header of the segment it held.  The new
         * segment had no record yet (records follow the header). */
        CS_INFO("commitlog: %s was being reused when the server stopped; nothing to replay", s->path);
        *clean = true;
        cs_free(p);
        return 0;
    }
    if (!hdr_ok || cs_be64(p + 8) != s->id) {
        if (n > 0) CS_WARN("commitlog: %s: bad segment header, %zu bytes dropped", s->path, n);
        else *clean = true;
        cs_free(p);
        return 0;
    }
    size_t off = hdr;
    *good = off;
    while (off < n) {
        size_t left = n - off;
        if (left < CLOG_REC_HDR) {
            if (flags & CLOG_F_REUSED) { *clean = true; break; }
            CS_WARN("commitlog: %s: torn record header at offset %zu, %zu bytes dropped", s->path, off, left);
            break;
        }
        uint32_t len = cs_be32(p + off);
        if (len == 0 && cs_be32(p + off + 4) == 0) { *clean = true; break; }   /* zero fill: end */
        if (cs_be32(p + off + 4) != cs_crc32c(seed, p + off, 4)) {
            if (flags & CLOG_F_REUSED) {
                /* The end of this segment's records, unless one of them
                 * follows (then these bytes are damage). */
                size_t next = next_record(p, n, off, seed);
                if (!next) { *clean = true; break; }
                CS_WARN("commitlog: %s: corrupt record length at offset %zu, %zu bytes dropped "
                        "(a record of this segment follows at offset %zu)", s->path, off, left, next);
                break;
            }
            CS_WARN("commitlog: %s: corrupt record length at offset %zu, %zu bytes dropped", s->path, off, left);
            break;
        }
        if ((uint64_t)len + CLOG_REC_HDR + CLOG_REC_TRL > left) {
            CS_WARN("commitlog: %s: torn record at offset %zu, %zu bytes dropped", s->path, off, left);
            break;
        }
        const uint8_t *pl = p + off + CLOG_REC_HDR;
        if (cs_be32(pl + len) != cs_crc32c(0, pl, len)) {
            CS_WARN("commitlog: %s: bad record checksum at offset %zu, %zu bytes dropped", s->path, off, left);
            break;
        }
        off += CLOG_REC_HDR + len + CLOG_REC_TRL;
        *good = off;
        st_clog_pos pos = { s->id, off };
        rc = cb(pl, len, pos, arg);
        if (rc) break;
    }
    if (off >= n) *clean = true;
    if (*clean && off < n)
        CS_DEBUG("commitlog: %s: records end at offset %zu; the %zu bytes after are from its earlier use",
                 s->path, off, n - off);
    cs_free(p);
    return rc;
}

int clog_replay(clog *l, clog_replay_cb cb, void *arg)
{
    /* Old segments are never modified, so iterate without holding mu. */
    pthread_mutex_lock(&l->mu);
    int n = l->n_segs;
    clog_seg **v = cs_malloc(sizeof *v * (size_t)(n ? n : 1));
    int k = 0;
    if (v) for (int i = 0; i < n; i++) if (l->segs[i]->old) v[k++] = l->segs[i];
    pthread_mutex_unlock(&l->mu);
    if (!v) return CS_ENOMEM;
    int rc = 0;
    uint64_t good;
    bool clean;
    for (int i = 0; i < k && !rc; i++) rc = replay_seg(l, v[i], cb, arg, &good, &clean);
    cs_free(v);
    return rc;
}

void clog_replay_mark(clog *l, uint64_t seg, const uint8_t id[16])
{
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < l->n_segs; i++)
        if (l->segs[i]->id == seg) { clog__seg_mark(l->segs[i], id); break; }
    pthread_mutex_unlock(&l->mu);
}

void clog_replay_done(clog *l)
{
    pthread_mutex_lock(&l->mu);
    l->replay_done = true;
    pthread_mutex_unlock(&l->mu);
}

/* ---------------------------------------------------------------- dump */

static void hexs(FILE *out, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) fprintf(out, "%02x", p[i]);
}

static void dump_ops(FILE *out, const uint8_t *p, size_t n)
{
    cs_rd r;
    cs_rd_init(&r, p, n);
    st__op op;
    int k;
    while ((k = st__op_next(&r, &op)) == 1) {
        switch (op.kind) {
        case ST__OP_PARTITION:
            fprintf(out, "  partition table=");
            hexs(out, op.id, 16);
            fprintf(out, " key=");
            hexs(out, op.pk, op.pk_len);
            break;
        case ST__OP_PDEL:
            fprintf(out, "    partition delete ts=%" PRId64 " ldt=%d", op.d.ts_us, op.d.ldt_s);
            break;
        case ST__OP_RT:
            fprintf(out, "    range delete %s", op.rt.start_incl ? "[" : "(");
            hexs(out, op.rt.start, op.rt.start_len);
            fprintf(out, ", ");
            hexs(out, op.rt.end, op.rt.end_len);
            fprintf(out, "%s ts=%" PRId64 " ldt=%d", op.rt.end_incl ? "]" : ")", op.rt.d.ts_us, op.rt.d.ldt_s);
            break;
        case ST__OP_ROW:
            fprintf(out, "    row%s ck=", (op.rflags & ST_ROW_STATIC) ? " STATIC" : "");
            hexs(out, op.ck, op.ck_len);
            break;
        case ST__OP_LIVENESS:
            fprintf(out, "      marker ts=%" PRId64 " ttl=%d ldt=%d", op.lv.ts_us, op.lv.ttl_s, op.lv.ldt_s);
            break;
        case ST__OP_ROWDEL:
            fprintf(out, "      row delete ts=%" PRId64 " ldt=%d", op.d.ts_us, op.d.ldt_s);
            break;
        case ST__OP_CDEL:
            fprintf(out, "      complex delete col=%u ts=%" PRId64 " ldt=%d", op.col, op.d.ts_us, op.d.ldt_s);
            break;
        case ST__OP_CELL:
            fprintf(out, "      cell col=%u flags=%u ts=%" PRId64 " ttl=%d ldt=%d", op.cell.col, op.cell.flags,
                    op.cell.ts_us, op.cell.ttl_s, op.cell.ldt_s);
            if (op.cell.path_len) { fprintf(out, " path="); hexs(out, op.cell.path, op.cell.path_len); }
            fprintf(out, " value=");
            hexs(out, op.cell.val, op.cell.val_len);
            break;
        }
        fputc('\n', out);
    }
    if (k < 0) fprintf(out, "  (undecodable ops at payload offset %zu)\n", r.pos);
}

typedef struct dump_ctx { FILE *out; uint64_t n; } dump_ctx;

static int dump_cb(const uint8_t *p, size_t n, st_clog_pos pos, void *arg)
{
    dump_ctx *d = arg;
    fprintf(d->out, "record %" PRIu64 " ends at %" PRIu64 ":%" PRIu64 ", %zu bytes\n", d->n++, pos.segment, pos.offset, n);
    dump_ops(d->out, p, n);
    return 0;
}

static int dump_dir(const char *dir, FILE *out)
{
    clog__seg_name *ids; int k;
    int rc = clog__seg_list(dir, NULL, &ids, &k);
    if (rc) return rc;
    int worst = 0;
    for (int i = 0; i < k; i++) {
        char *p = clog__seg_path(dir, ids[i].ver, ids[i].id);
        if (!p) { worst = CS_ENOMEM; break; }
        rc = clog_dump(p, out);
        cs_free(p);
        if (rc && !worst) worst = rc;
    }
    cs_free(ids);
    return worst;
}

int clog_dump(const char *path, FILE *out)
{
    if (!path || !out) return CS_EINVAL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    unsigned ver; uint64_t id;
    if (sscanf(base, "CommitLog-%u-%" SCNu64 ".log", &ver, &id) != 2) return dump_dir(path, out);
    int64_t sz = vfs_file_size(path);
    if (sz < 0) return (int)sz;
    clog_seg s = { .id = id, .ver = ver, .fd = -1, .path = (char *)path, .size = (uint64_t)sz, .old = true };
    dump_ctx d = { out, 0 };
    uint64_t good = 0;
    bool clean = false;
    int rc = replay_seg(NULL, &s, dump_cb, &d, &good, &clean);
    if (clean && good < (uint64_t)sz)
        fprintf(out, "%s: %" PRIu64 " records in %" PRIu64 " bytes; the other %" PRIu64 " bytes are zero fill "
                "or left from the file's earlier use\n", path, d.n, good, (uint64_t)sz - good);
    else
        fprintf(out, "%s: %" PRIu64 " records, %" PRIu64 " of %" PRId64 " bytes valid\n", path, d.n, good, sz);
    if (rc) return rc;
    return clean ? 0 : CS_ECORRUPT;
}
