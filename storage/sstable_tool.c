/*
 * sstable_tool.c: offline verification and dump of one sstable, for
 * cassette-tool and tests (storage/sstable.h).
 */
#include "storage/sstable_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Split ".../cs-<gen>-<Component>" into dir and gen. */
static int parse_path(const char *path, char *dir, size_t dn, uint64_t *gen)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dl = slash ? (size_t)(slash - path) : 1;
    if (dl + 1 > dn) return CS_EINVAL;
    if (slash) { memcpy(dir, path, dl); dir[dl] = 0; } else strcpy(dir, ".");
    int c = 0;
    if (sscanf(base, "cs-%" SCNu64 "-%n", gen, &c) != 1 || c == 0) return CS_EINVAL;
    return 0;
}

/* A wide partition's row index: the runs that slices and the engine's
 * windowed reads of wide partitions read instead of the whole partition.
 * Each run, read alone through a slice of its first to its last
 * clustering, must decode and start and end with those rows, and the runs
 * together must hold every row of the whole read `all`. */
static int ri_corrupt(sst_reader *r, const char *what, uint64_t i)
{
    char *p = sst__path(r->dir, r->gen, "Index.db", false);
    int rc = CS_CORRUPT(what, p ? p : "Index.db", i);
    cs_free(p);
    return rc;
}

static int verify_row_index(sst_reader *r, uint64_t i, const st__part *all, cs_arena *a)
{
    const sst_index_entry *e = &r->idx[i];
    st_slice every = { { NULL, 0, true }, { NULL, 0, true } };
    st__part q;
    int rc = sst__read_entry(r, i, &every, 1, &q, a);   /* parses and checks the row index */
    if (rc < 0) return rc;
    const sst_ri *ri = atomic_load(&r->ri_slots[e->ri_slot]);
    if (!ri) return ri_corrupt(r, "row index not parsed", i);
    uint64_t seen = 0;
    for (uint32_t k = 0; k < ri->n && rc >= 0; k++) {
        const sst_ri_run *u = &ri->runs[k];
        st_slice s = { { u->first, u->fl, true }, { u->last, u->ll, true } };
        cs_arena ra;
        cs_arena_init(&ra);
        rc = sst__read_entry(r, i, &s, 1, &q, &ra);
        if (rc >= 0) {
            int n = q.n_rows;
            if (n == 0 || st__bytes_cmp(q.rows[0]->ck, q.rows[0]->ck_len, u->first, u->fl) ||
                st__bytes_cmp(q.rows[n - 1]->ck, q.rows[n - 1]->ck_len, u->last, u->ll))
                rc = ri_corrupt(r, "row index run does not match its rows", i);
            seen += (uint64_t)n;
        }
        cs_arena_destroy(&ra);
    }
    if (rc >= 0 && seen != (uint64_t)all->n_rows)
        rc = ri_corrupt(r, "row index does not cover the partition's rows", i);
    return rc < 0 ? rc : 0;
}

int sst_verify(const char *path, FILE *out)
{
    char dir[4096];
    uint64_t gen;
    if (!path || parse_path(path, dir, sizeof dir, &gen)) return CS_EINVAL;
    sst_reader *r;
    int rc = sst_reader_open(dir, gen, &r);
    if (rc) {
        if (out) fprintf(out, "%s/cs-%" PRIu64 ": cannot open: %s\n", dir, gen, cs_strerror(rc));
        return rc;
    }
    uint64_t expect = 0, rows = 0;
    for (uint64_t i = 0; i < r->n_idx && !rc; i++) {
        const sst_index_entry *e = &r->idx[i];
        if (e->pos != expect) {
            char *p = sst__path(dir, gen, "Index.db", false);
            rc = CS_CORRUPT("partition does not follow the previous one", p ? p : "Index.db", e->pos);
            cs_free(p);
            break;
        }
        expect = e->pos + e->len;
        if (!sst__bloom_test(r->bloom, r->bloom_bits, r->bloom_k, sst__bloom_hash(e->pk, e->pk_len))) {
            char *p = sst__path(dir, gen, "Filter.db", false);
            rc = CS_CORRUPT("bloom filter misses a key", p ? p : "Filter.db", i);
            cs_free(p);
            break;
        }
        cs_arena a;
        cs_arena_init(&a);
        st__part p;
        int k = sst__read_entry(r, i, NULL, 0, &p, &a);
        if (k < 0) rc = k;
        else rows += (uint64_t)p.n_rows;
        if (k >= 0 && e->n_ri) rc = verify_row_index(r, i, &p, &a);
        cs_arena_destroy(&a);
    }
    if (!rc && expect != r->logical) {
        char *p = sst__path(dir, gen, "Data.db", false);
        rc = CS_CORRUPT("data length differs from the index", p ? p : "Data.db", expect);
        cs_free(p);
    }
    if (out) {
        if (rc) fprintf(out, "%s/cs-%" PRIu64 ": CORRUPT (%s)\n", dir, gen, cs_strerror(rc));
        else fprintf(out, "%s/cs-%" PRIu64 ": OK, %" PRIu64 " partitions, %" PRIu64 " rows, %" PRIu64
                     " data bytes, level %d, clog position %" PRIu64 ":%" PRIu64 "\n",
                     dir, gen, r->n_idx, rows, r->logical, r->st.level, r->st.clog_pos.segment, r->st.clog_pos.offset);
    }
    sst_reader_unref(r);
    return rc;
}

int sst_format_current(const char *path, bool *current)
{
    char dir[4096];
    uint64_t gen;
    *current = false;
    if (!path || parse_path(path, dir, sizeof dir, &gen)) return CS_EINVAL;
    sst_reader *r;
    int rc = sst_reader_open(dir, gen, &r);
    if (rc) return rc;
    *current = r->stats_version >= SST_STATS_VERSION;
    sst_reader_unref(r);
    return 0;
}

static void hex(FILE *out, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) fprintf(out, "%02x", p[i]);
}

static void dump_del(FILE *out, const char *what, st_deletion d)
{
    fprintf(out, " %s(ts=%" PRId64 " ldt=%d)", what, d.ts_us, d.ldt_s);
}

static void dump_row(FILE *out, const st__row *r)
{
    fprintf(out, "  row %s", (r->flags & ST_ROW_STATIC) ? "STATIC" : "ck=");
    hex(out, r->ck, r->ck_len);
    if (r->lv.ts_us != INT64_MIN) fprintf(out, " marker(ts=%" PRId64 " ttl=%d ldt=%d)", r->lv.ts_us, r->lv.ttl_s, r->lv.ldt_s);
    if (r->del.ts_us != INT64_MIN) dump_del(out, "deleted", r->del);
    fputc('\n', out);
    for (int i = 0; i < r->n_cdels; i++) {
        fprintf(out, "    col %u", r->cdels[i].col);
        dump_del(out, "complex-deleted", r->cdels[i].d);
        fputc('\n', out);
    }
    for (int i = 0; i < r->n_cells; i++) {
        const st_cell *c = &r->cells[i];
        fprintf(out, "    col %u", c->col);
        if (c->path_len) { fprintf(out, " path="); hex(out, c->path, c->path_len); }
        fprintf(out, " ts=%" PRId64, c->ts_us);
        if (c->flags & ST_CELL_TOMBSTONE) fprintf(out, " TOMBSTONE ldt=%d", c->ldt_s);
        if (c->flags & ST_CELL_EXPIRING) fprintf(out, " ttl=%d expires=%d", c->ttl_s, c->ldt_s);
        if (c->flags & ST_CELL_COUNTER) fprintf(out, " COUNTER");
        fprintf(out, " value=");
        hex(out, c->val, c->val_len);
        fputc('\n', out);
    }
}

int sst_dump(const char *path, FILE *out)
{
    char dir[4096];
    uint64_t gen;
    if (!path || !out || parse_path(path, dir, sizeof dir, &gen)) return CS_EINVAL;
    sst_reader *r;
    int rc = sst_reader_open(dir, gen, &r);
    if (rc) return rc;
    fprintf(out, "sstable %s/cs-%" PRIu64 ": %" PRIu64 " partitions, level %d, ts %" PRId64 "..%" PRId64 "\n",
            dir, gen, r->n_idx, r->st.level, r->st.min_ts, r->st.max_ts);
    for (uint64_t i = 0; i < r->n_idx && !rc; i++) {
        cs_arena a;
        cs_arena_init(&a);
        st__part p;
        int k = sst__read_entry(r, i, NULL, 0, &p, &a);
        if (k < 0) { rc = k; cs_arena_destroy(&a); break; }
        fprintf(out, "partition token=%" PRId64 " key=", p.token);
        hex(out, p.pk, p.pk_len);
        if (p.pdel.ts_us != INT64_MIN) dump_del(out, "deleted", p.pdel);
        fputc('\n', out);
        for (int j = 0; j < p.n_rts; j++) {
            fprintf(out, "  range %s", p.rts[j].start_incl ? "[" : "(");
            hex(out, p.rts[j].start, p.rts[j].start_len);
            fprintf(out, ", ");
            hex(out, p.rts[j].end, p.rts[j].end_len);
            fprintf(out, "%s", p.rts[j].end_incl ? "]" : ")");
            dump_del(out, "deleted", p.rts[j].d);
            fputc('\n', out);
        }
        if (p.stat) dump_row(out, p.stat);
        for (int j = 0; j < p.n_rows; j++) dump_row(out, p.rows[j]);
        cs_arena_destroy(&a);
    }
    sst_reader_unref(r);
    return rc;
}

/* "  offset: count" per used bucket; the overflow bucket as "  >last: count". */
static void hist_lines(FILE *out, const uint64_t *counts, const uint64_t *off, int n)
{
    for (int i = 0; i < n; i++)
        if (counts[i]) fprintf(out, "  %" PRIu64 ": %" PRIu64 "\n", off[i], counts[i]);
    if (counts[n]) fprintf(out, "  >%" PRIu64 ": %" PRIu64 "\n", off[n - 1], counts[n]);
}

int sst_metadata(const char *path, FILE *out)
{
    char dir[4096];
    uint64_t gen;
    if (!path || !out || parse_path(path, dir, sizeof dir, &gen)) return CS_EINVAL;
    sst_reader *r;
    int rc = sst_reader_open(dir, gen, &r);
    if (rc) return rc;
    const sst_stats *s = &r->st;
    fprintf(out, "SSTable: %s/cs-%" PRIu64 "\n", dir, gen);
    fprintf(out, "Format version: %u (Statistics.db %u)\n", SST_VERSION, r->stats_version);
    fprintf(out, "Partitions: %" PRIu64 "\nRows: %" PRIu64 "\nCells: %" PRIu64 "\n", s->partitions, s->rows, s->cells);
    fprintf(out, "Minimum timestamp: %" PRId64 "\nMaximum timestamp: %" PRId64 "\n", s->min_ts, s->max_ts);
    fprintf(out, "Maximum local deletion time: %d\n", s->max_ldt);
    fprintf(out, "Tombstones: %" PRIu64 "\nTombstones and TTL'd data: %" PRIu64 "\n", s->tombstones, s->droppable);
    int32_t now = cs_now_s();
    fprintf(out, "Estimated droppable tombstones now: %.1f (gc_grace_seconds 0), ratio %.5f\n",
            sst__droppable_before(s, now), sst__droppable_ratio(s, now));
    fprintf(out, "Local deletion times (time: count):");
    for (int i = 0; i < s->n_drop; i++) fprintf(out, " %d:%" PRIu64, s->drop_pt[i], s->drop_cnt[i]);
    fprintf(out, "\n");
    fprintf(out, "Token range: %" PRId64 " .. %" PRId64 "\n", s->min_token, s->max_token);
    fprintf(out, "Clustering bounds: ");
    if (s->ck_bounds) {
        hex(out, s->min_ck, s->min_ck_len);
        fprintf(out, " .. ");
        hex(out, s->max_ck, s->max_ck_len);
        fprintf(out, "%s\n", s->max_ck_truncated ? "..." : "");
    } else {
        fprintf(out, "none\n");
    }
    fprintf(out, "SSTable level: %d\n", s->level);
    fprintf(out, "Commit log position: %" PRIu64 ":%" PRIu64 "\n", s->clog_pos.segment, s->clog_pos.offset);
    fprintf(out, "Uncompressed data: %" PRIu64 " bytes in %" PRIu64 " blocks of %u; on disk %" PRIu64 " bytes\n",
            r->logical, r->n_chunks, r->block_size, r->file_bytes);
    fprintf(out, "Bloom filter: %" PRIu64 " bits, %u hashes\n", r->bloom_bits, r->bloom_k);
    fprintf(out, "Ancestors:");
    for (int i = 0; i < s->n_ancestors; i++) fprintf(out, " %" PRIu64, s->ancestors[i]);
    fprintf(out, "\nPartition size histogram (bytes: count):\n");
    uint64_t off[SST_SIZE_BUCKETS];
    st_hist_offsets(off, SST_SIZE_BUCKETS);
    hist_lines(out, s->size_hist, off, SST_SIZE_BUCKETS);
    fprintf(out, "Cells per partition histogram (cells: count):\n");
    hist_lines(out, s->cell_hist, off, SST_CELL_BUCKETS);
    sst_reader_unref(r);
    return 0;
}
