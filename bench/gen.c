/*
 * gen.c: the workload model (see work.h).  Values are generated directly in
 * their native-protocol serialization from a per-value seed, so the same
 * seed always gives the same value (as cassandra-stress does) and the
 * partition picture can be kept without storing rows.
 *
 * Per-request cost matters (the bench shares the machine with the server):
 * a build allocates nothing once warm (rows go to scratch buffers kept in
 * the model, the message to the caller's buffer), and the partition
 * picture (bench/picture.c) takes its updates in prefetched batches.
 * docs/bench.md, "Client cost".
 */
#include "bench/work_int.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/hash.h"
#include "server/frame.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BASE_MS 1767225600000LL          /* 2026-01-01T00:00:00Z */
#define DAY_MS 86400000LL
/* ------------------------------------------------------------ types */

static uint16_t type_id(const char *t)
{
    static const struct { const char *n; uint16_t id; } map[] = {
        { "ascii", 0x01 }, { "bigint", 0x02 }, { "blob", 0x03 }, { "boolean", 0x04 }, { "counter", 0x05 },
        { "decimal", 0x06 }, { "double", 0x07 }, { "float", 0x08 }, { "int", 0x09 }, { "timestamp", 0x0B },
        { "uuid", 0x0C }, { "text", 0x0D }, { "varchar", 0x0D }, { "varint", 0x0E }, { "timeuuid", 0x0F },
        { "inet", 0x10 }, { "date", 0x11 }, { "time", 0x12 }, { "smallint", 0x13 }, { "tinyint", 0x14 },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(t, map[i].n))
            return map[i].id;
    return 0xFFFF;
}

/* ------------------------------------------------------------ values */

typedef struct rowvals {          /* one generated row: value per column */
    cs_buf data;
    size_t *off; int32_t *len;
    uint64_t pk_hash, ck_hash;
    uint64_t bytes;
} rowvals;

static void rowvals_init(rowvals *v, int n)
{
    cs_buf_init(&v->data);
    v->off = cs_calloc((size_t)n + 1, sizeof(size_t));
    v->len = cs_calloc((size_t)n + 1, sizeof(int32_t));
}

static void rowvals_destroy(rowvals *v)
{
    cs_buf_destroy(&v->data);
    cs_free(v->off);
    cs_free(v->len);
}

/* Buffers every build reuses (one build at a time: the runner is single-threaded). */
#define MR_ROWS 8   /* fields: multirow: rows a query's markers draw from */

struct bench_scratch {
    rowvals v, w;
    rowvals mr[MR_ROWS];        /* multirow queries: further rows of the partition */
    const rowvals **src;        /* per marker: the row it binds from (put_values) */
    cs_buf pk, pk2, stmts;
    cs_buf last_key;            /* key of the last built op's partition (routing) */
};

static void scratch_init(bench_model *m)
{
    bench_scratch *s = cs_calloc(1, sizeof(*s));
    rowvals_init(&s->v, m->n_cols);
    rowvals_init(&s->w, m->n_cols);
    for (int i = 0; i < MR_ROWS; i++)
        rowvals_init(&s->mr[i], m->n_cols);
    cs_buf_init(&s->pk);
    cs_buf_init(&s->pk2);
    cs_buf_init(&s->stmts);
    cs_buf_init(&s->last_key);
    m->scratch = s;
}

static void scratch_destroy(bench_model *m)
{
    bench_scratch *s = m->scratch;
    if (!s)
        return;
    rowvals_destroy(&s->v);
    rowvals_destroy(&s->w);
    for (int i = 0; i < MR_ROWS; i++)
        rowvals_destroy(&s->mr[i]);
    cs_free(s->src);
    cs_buf_destroy(&s->pk);
    cs_buf_destroy(&s->pk2);
    cs_buf_destroy(&s->stmts);
    cs_buf_destroy(&s->last_key);
    cs_free(s);
    m->scratch = NULL;
}

static void put_varint_i64(cs_buf *b, int64_t v)
{
    uint8_t tmp[8];
    cs_st64(tmp, (uint64_t)v);
    int i = 0;
    while (i < 7 && ((tmp[i] == 0x00 && !(tmp[i + 1] & 0x80)) || (tmp[i] == 0xFF && (tmp[i + 1] & 0x80))))
        i++;
    cs_buf_put(b, tmp + i, (size_t)(8 - i));
}

static int32_t gen_value(bench_model *m, const bench_col *c, int64_t seed, int64_t clock, uint64_t uniq,
                         cs_buf *out)
{
    size_t start = out->len;
    uint64_t vseed = (uint64_t)seed * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)c->name[0];
    switch (c->type) {
    case 0x01: case 0x0D: case 0x03: {
        /* the length from the size distribution seeded by the value (stress:
         * Strings/Bytes reseed it with the identity), uniform(4..8) by default */
        static const bench_dist default_size = { .kind = DIST_UNIFORM, .min = 4, .max = 8, .divisor = 1 };
        const bench_dist *sz = c->spec && c->spec->has_size ? &c->spec->size : &default_size;
        int64_t n = bench_dist_sample_seeded(sz, vseed);
        if (n < 0) n = 0;
        if (n > 1 << 20) n = 1 << 20;
        uint8_t *d = cs_buf_extend(out, (size_t)n);
        if (!d) return -1;
        /* bytes from a splitmix64 stream of the seed: 8 bytes (blob) or 12
         * alphanumeric characters (text) per step */
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        uint64_t k = 0;
        if (c->type == 0x03) {
            int64_t i = 0;
            for (; i + 8 <= n; i += 8)
                cs_st64(d + i, bench_mix64(vseed + ++k * 0x9E3779B97F4A7C15ULL));
            if (i < n) {
                uint8_t w[8];
                cs_st64(w, bench_mix64(vseed + ++k * 0x9E3779B97F4A7C15ULL));
                memcpy(d + i, w, (size_t)(n - i));
            }
        } else {
            for (int64_t i = 0; i < n;) {
                uint64_t x = bench_mix64(vseed + ++k * 0x9E3779B97F4A7C15ULL);
                for (int j = 0; j < 12 && i < n; j++, x /= 36)
                    d[i++] = (uint8_t)alnum[x % 36];
            }
        }
        break;
    }
    case 0x02: case 0x05: cs_buf_put_u64(out, (uint64_t)seed); break;
    case 0x09: cs_buf_put_u32(out, (uint32_t)seed); break;
    case 0x13: cs_buf_put_u16(out, (uint16_t)seed); break;
    case 0x14: cs_buf_put_u8(out, (uint8_t)seed); break;
    case 0x04: cs_buf_put_u8(out, (uint8_t)(seed & 1)); break;
    case 0x07: { double d = (double)seed + 0.5; uint64_t u; memcpy(&u, &d, 8); cs_buf_put_u64(out, u); break; }
    case 0x08: { float f = (float)seed + 0.5f; uint32_t u; memcpy(&u, &f, 4); cs_buf_put_u32(out, u); break; }
    /* as stress's Dates, LocalDates, Times, Inets, BigDecimals: the value is
     * the seed (ms since the epoch, days since the epoch, ns of the day, the
     * address's 32 bits, a decimal of scale 0); generator columns use the clock */
    case 0x0B: cs_buf_put_u64(out, (uint64_t)(clock ? clock : seed)); break;
    case 0x11:
        cs_buf_put_u32(out, clock ? (uint32_t)(clock / DAY_MS + (1LL << 31)) : (uint32_t)(int32_t)seed + (1u << 31));
        break;
    case 0x12:
        cs_buf_put_u64(out, clock ? (uint64_t)((clock / 1000 % 86400) * 1000000000LL)
                                  : (uint64_t)(seed % 86400000000000LL));
        break;
    case 0x0E: put_varint_i64(out, seed); break;
    case 0x06: cs_buf_put_u32(out, 0); put_varint_i64(out, seed); break;
    case 0x10: cs_buf_put_u32(out, (uint32_t)seed); break;
    case 0x0C: {
        uint8_t u[16];
        cs_st64(u, bench_mix64((uint64_t)seed));
        cs_st64(u + 8, bench_mix64((uint64_t)seed ^ 0xABCDEF));
        u[6] = (uint8_t)((u[6] & 0x0F) | 0x40);
        u[8] = (uint8_t)((u[8] & 0x3F) | 0x80);
        cs_buf_put(out, u, 16);
        break;
    }
    case 0x0F: {
        /* version 1: 100ns ticks since 1582; uniq spreads the clock's
         * same-ms values; a seeded one is the same for the same seed (stress:
         * the ms of its Dates value) */
        int64_t ms = clock ? clock : seed;
        uint64_t t = (uint64_t)ms * 10000 + (clock ? uniq % 10000 : 0) + 0x01B21DD213814000ULL;
        uint8_t u[16];
        cs_st32(u, (uint32_t)t);
        cs_st16(u + 4, (uint16_t)(t >> 32));
        cs_st16(u + 6, (uint16_t)(((t >> 48) & 0x0FFF) | 0x1000));
        cs_st64(u + 8, 0x8000C0FFEE000001ULL);
        cs_buf_put(out, u, 16);
        break;
    }
    default:
        return -1;
    }
    return out->err ? -1 : (int32_t)(out->len - start);
}

/* ------------------------------------------------------------ picture */

/* Size the partition picture for the partitions the profile can produce
 * (the product of the partition key columns' populations or of the values
 * their types have, when none has a generator, and at most one per seed),
 * up to PRESIZE_MAX, before the run: doubling a table of a million
 * partitions mid-run rehashes it in one go and stalls the client's loop
 * for ~100 ms, which a fixed-rate run reports as a latency spike of the
 * server. */
#define PRESIZE_MAX (4u << 20)
static void presize_parts(bench_model *m, double seeds)
{
    double n = 1;
    for (int i = 0; i < m->n_cols; i++) {
        if (m->cols[i].kind != 0) continue;
        const bench_colspec *c = m->cols[i].spec;
        if (c && c->gen != GEN_DEFAULT) return;
        double pop = c && c->has_population ? (double)(c->population.max - c->population.min + 1) : 1e11;
        uint16_t t = m->cols[i].type;
        double values = t == 0x04 ? 2 : t == 0x14 ? 256 : t == 0x13 ? 65536 : t == 0x09 ? 4294967296.0 : pop;
        n *= pop < values ? pop : values;   /* a boolean key has two values, whatever its population */
    }
    if (n > seeds) n = seeds;
    if (n > PRESIZE_MAX) n = PRESIZE_MAX;
    bench_picture_reserve(&m->pic, (size_t)n);
}

/* What the op being built adds to the partition picture once the server
 * acknowledges it (picture.h): an operation on partition (h, key) and/or
 * a written row (row_h, bytes). */
static void track(bench_pending *pd, uint64_t h, const cs_buf *key, uint32_t what, uint64_t row_h, uint64_t bytes)
{
    bench_pending_add(pd, h, key->p, (uint32_t)key->len, what, row_h, bytes);
}

/* ------------------------------------------------------------ buckets */

static uint64_t *bucket_rows(bench_model *m, uint64_t key)
{
    if (!key) key = 1;
    if ((m->n_bk + 1) * 2 > m->bk_cap) {
        size_t nc = m->bk_cap ? m->bk_cap * 2 : 256;
        uint64_t *nk = cs_calloc(nc, 8), *nr = cs_calloc(nc, 8);
        for (size_t i = 0; i < m->bk_cap; i++) {
            if (!m->bk_keys[i]) continue;
            size_t j = m->bk_keys[i] & (nc - 1);
            while (nk[j]) j = (j + 1) & (nc - 1);
            nk[j] = m->bk_keys[i];
            nr[j] = m->bk_rows[i];
        }
        cs_free(m->bk_keys);
        cs_free(m->bk_rows);
        m->bk_keys = nk;
        m->bk_rows = nr;
        m->bk_cap = nc;
    }
    size_t j = key & (m->bk_cap - 1);
    while (m->bk_keys[j] && m->bk_keys[j] != key)
        j = (j + 1) & (m->bk_cap - 1);
    if (!m->bk_keys[j]) {
        m->bk_keys[j] = key;
        m->n_bk++;
    }
    return &m->bk_rows[j];
}

/* ------------------------------------------------------------ rows */

/* Seeds and values follow cassandra-stress's generators (Generator.java):
 *  - an op's partition comes from a seed drawn from the seed population
 *    (stress's -pop; bench_model_set_seeds), and each partition key
 *    column's value from its population distribution seeded by that seed
 *    and the column's salt;
 *  - a partition's rows are the leaves of its clustering tree (tree.c); a
 *    clustering value is drawn from its column's population seeded by its
 *    node, so values differ between parents and two draws alike are one
 *    row, as stress drops duplicates;
 *  - a value column is drawn from its population seeded by its row, so a
 *    row written again gets the same values.
 * Populations default to uniform(1..100B) (timestamp and timeuuid: 1 ms
 * to 50 years, stress's Dates), sizes to uniform(4..8), clusters to
 * fixed(1).  Generator columns (clock, day, slot, bucket, timeuuid) take
 * their values from the simulated clock instead. */
#define DEFAULT_POP 100000000000LL
#define DATES_POP (50LL * 365 * 24 * 60 * 60 * 1000)

/* The value seed of column c drawn with seed s. */
static int64_t col_draw(const bench_model *m, const bench_col *c, int ci, uint64_t s)
{
    uint64_t k = s ^ m->col_salt[ci];
    if (c->spec && c->spec->has_population)
        return bench_dist_sample_seeded(&c->spec->population, k);
    int64_t pop = c->type == 0x0B || c->type == 0x0F ? DATES_POP : DEFAULT_POP;
    return 1 + (int64_t)(bench_mix64(k) % (uint64_t)pop);
}

/* The partition of the next rows: a seed from the seed population, and
 * from it the value seed of every partition key column without a generator.
 * (A seq() population walks its range with the op seeds, 1 first: stress
 * scrambles the seed with the column's salt there, which can even land
 * below the range.) */
static void pick_partition(bench_model *m)
{
    uint64_t s = (uint64_t)bench_dist_sample(&m->seeds, &m->rng);
    for (int i = 0; i < m->n_cols; i++) {
        const bench_col *c = &m->cols[i];
        if (c->kind != 0 || (c->spec && c->spec->gen != GEN_DEFAULT))
            continue;
        if (c->spec && c->spec->has_population && c->spec->population.kind == DIST_SEQ)
            m->pk_seed[i] = bench_dist_sample_seeded(&c->spec->population, s - 1);
        else
            m->pk_seed[i] = col_draw(m, c, i, s);
    }
}

/* Fill v's partition key columns for the partition pick_partition chose,
 * serialize the key into pkbuf and hash it.  clock: the simulated time for
 * generator columns; bump_bucket counts a row in the bucket generator
 * (writes only). */
static void gen_key(bench_model *m, rowvals *v, int64_t clock, bool bump_bucket, cs_buf *pkbuf)
{
    cs_buf_reset(&v->data);
    for (int i = 0; i < m->n_cols; i++)
        v->len[i] = -1;
    cs_buf_reset(pkbuf);
    int n_pk = m->n_pk;
    m->uniq = bench_rng_next(&m->rng);
    /* partition key: non-bucket columns first (the bucket depends on them) */
    uint64_t bk_key = 0x51ED;
    int bucket_col = -1;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < m->n_cols; i++) {
            bench_col *c = &m->cols[i];
            if (c->kind != 0)
                continue;
            bench_gen_kind g = c->spec ? c->spec->gen : GEN_DEFAULT;
            if ((g == GEN_BUCKET) != (pass == 1))
                continue;
            int64_t seed = 0, cl = 0;
            if (g == GEN_DAY) cl = clock;
            else if (g == GEN_SLOT) seed = (clock / 1000) % c->spec->gen_param;
            else if (g == GEN_BUCKET) { bucket_col = i; seed = (int64_t)(*bucket_rows(m, bk_key) / (uint64_t)c->spec->gen_param); }
            else if (g == GEN_CLOCK || g == GEN_TIMEUUID_NOW) cl = clock;
            else seed = m->pk_seed[i];
            v->off[i] = v->data.len;
            v->len[i] = gen_value(m, c, seed, cl, m->uniq, &v->data);
            if (pass == 0 && m->has_bucket && v->len[i] > 0)
                bk_key = bench_mix64(bk_key ^ cs_xxh64(v->data.p + v->off[i], (size_t)v->len[i], 0));
        }
    }
    /* serialized partition key, in key order */
    for (int pos = 0; pos < n_pk; pos++) {
        for (int i = 0; i < m->n_cols; i++) {
            if (m->cols[i].kind != 0 || m->cols[i].position != pos)
                continue;
            int32_t l = v->len[i] < 0 ? 0 : v->len[i];
            if (n_pk == 1) {
                cs_buf_put(pkbuf, v->data.p + v->off[i], (size_t)l);
            } else {
                cs_buf_put_u16(pkbuf, (uint16_t)l);
                cs_buf_put(pkbuf, v->data.p + v->off[i], (size_t)l);
                cs_buf_put_u8(pkbuf, 0);
            }
        }
    }
    v->pk_hash = cs_xxh64(pkbuf->p, pkbuf->len, 42);
    if (bump_bucket && bucket_col >= 0)
        (*bucket_rows(m, bk_key))++;
}

/* The rows of v's partition (gen_key first). */
static int64_t part_rows(bench_model *m, const rowvals *v)
{
    return bench_tree_rows(&m->tree, v->pk_hash);
}

/* Fill the rest of row `leaf` (0..part_rows-1) of v's partition:
 * clustering columns, then (values) the regular and static ones, each
 * column past the row-population ratio null (stress: the value columns in
 * name order, the k-th of n set when k/n <= the ratio).  values = false
 * leaves them null (v->bytes 0): for rows whose values nobody binds. */
static int gen_rest(bench_model *m, rowvals *v, int64_t clock, int64_t leaf, bool values)
{
    uint64_t node_seed[64];
    int64_t digit[64];
    bench_tree_leaf(&m->tree, v->pk_hash, leaf, node_seed, digit);
    v->ck_hash = 0xC1;
    for (int k = 0; k < m->n_ck_all; k++) {
        int i = m->ck_all[k];
        bench_col *c = &m->cols[i];
        bench_gen_kind g = c->spec ? c->spec->gen : GEN_DEFAULT;
        int64_t seed = 0, cl = 0;
        if (g == GEN_CLOCK || g == GEN_TIMEUUID_NOW || g == GEN_DAY)
            cl = clock;
        else if (g == GEN_SLOT)
            seed = (clock / 1000) % c->spec->gen_param;
        else
            seed = col_draw(m, c, i, node_seed[m->col_level[i]]);
        v->off[i] = v->data.len;
        v->len[i] = gen_value(m, c, seed, cl, m->uniq, &v->data);
        if (v->len[i] > 0)
            v->ck_hash = bench_mix64(v->ck_hash ^ cs_xxh64(v->data.p + v->off[i], (size_t)v->len[i], 1));
    }
    v->bytes = 0;
    uint64_t row_seed = bench_mix64(v->pk_hash ^ v->ck_hash);
    for (int i = 0; values && i < m->n_cols; i++) {
        bench_col *c = &m->cols[i];
        if (c->kind < 2 || (double)(m->val_rank[i] + 1) / m->n_vals > m->row_pop)
            continue;
        bench_gen_kind g = c->spec ? c->spec->gen : GEN_DEFAULT;
        v->off[i] = v->data.len;
        v->len[i] = gen_value(m, c, col_draw(m, c, i, row_seed), g != GEN_DEFAULT ? clock : 0, m->uniq, &v->data);
        if (v->len[i] > 0)
            v->bytes += (uint64_t)v->len[i];
    }
    for (int i = 0; i < m->n_cols; i++)
        if (m->cols[i].kind < 2 && v->len[i] > 0)
            v->bytes += (uint64_t)v->len[i];
    return v->data.err;
}

/* A random row of the partition pick_partition chose, as of clock. */
static int gen_any_row(bench_model *m, rowvals *v, int64_t clock, bool values, cs_buf *pkbuf, int64_t *leaf)
{
    gen_key(m, v, clock, false, pkbuf);
    if (*leaf < 0)
        *leaf = (int64_t)(bench_rng_next(&m->rng) % (uint64_t)part_rows(m, v));
    return gen_rest(m, v, clock, *leaf, values);
}

/* ------------------------------------------------------------ statements */

/* Operator in front of each '?' of a statement (outside quotes). */
static void marker_ops(const char *cql, char *ops, int max)
{
    int n = 0;
    bool in_str = false;
    for (const char *p = cql; *p && n < max; p++) {
        if (*p == '\'') in_str = !in_str;
        if (in_str || *p != '?')
            continue;
        const char *q = p - 1;
        while (q >= cql && isspace((unsigned char)*q)) q--;
        char op = '=';
        if (q >= cql) {
            if (*q == '>' || (*q == '=' && q > cql && q[-1] == '>')) op = '>';
            else if (*q == '<' || (*q == '=' && q > cql && q[-1] == '<')) op = '<';
            else if (*q == '+' || *q == '-') op = '+';
            else if (q >= cql + 4 && !strncasecmp(q - 4, "LIMIT", 5)) op = 'L';
            else if (q >= cql + 1 && !strncasecmp(q - 1, "IN", 2)) op = 'I';
        }
        ops[n++] = op;
    }
}

static int prepare_stmt(bench_model *m, bc_sync *conn, const char *cql, bench_stmt *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    st->cql = cs_strdup(cql);
    bc_result r;
    if (bc_sync_prepare(conn, cql, &r)) {
        snprintf(err, errlen, "PREPARE failed for \"%s\": %s", cql, conn->err);
        bc_result_destroy(&r);
        return -1;
    }
    memcpy(st->id, r.prep_id, (size_t)r.prep_id_len);
    st->idlen = r.prep_id_len;
    st->n_binds = r.n_binds;
    st->bind_col = cs_calloc((size_t)(r.n_binds + 1), sizeof(int));
    st->bind_type = cs_calloc((size_t)(r.n_binds + 1), sizeof(uint16_t));
    st->bind_op = cs_calloc((size_t)(r.n_binds + 1), 1);
    marker_ops(cql, st->bind_op, r.n_binds);
    for (int i = 0; i < r.n_binds; i++) {
        st->bind_col[i] = -1;
        st->bind_type[i] = r.bind_types[i].id;
        for (int c = 0; c < m->n_cols; c++)
            if (!strcmp(m->cols[c].name, r.bind_names[i]))
                st->bind_col[i] = c;
        if (!strcmp(r.bind_names[i], "[limit]"))
            st->bind_op[i] = 'L';
        if (r.bind_types[i].id == 0x05)
            st->is_counter_update = true;
        if (st->bind_col[i] >= 0 && m->cols[st->bind_col[i]].kind == 0 && st->bind_op[i] == '=')
            st->bound_pk++;
        if (st->bind_col[i] >= 0 && m->cols[st->bind_col[i]].kind >= 2)
            st->binds_values = true;
    }
    bc_result_destroy(&r);
    return 0;
}

static void stmt_destroy(bench_stmt *s)
{
    cs_free(s->cql);
    cs_free(s->bind_col);
    cs_free(s->bind_type);
    cs_free(s->bind_op);
}

static int run_ddl(bc_sync *conn, const char *cql, char *err, size_t errlen)
{
    bc_result r;
    int rc = bc_sync_query(conn, cql, 0, NULL, -1, &r);
    if (rc && !(r.opcode == OP_ERROR && r.err_code == 0x2400)) /* AlreadyExists is fine */
        snprintf(err, errlen, "\"%s\": %s", cql, conn->err);
    else
        rc = 0;
    bc_result_destroy(&r);
    return rc;
}

int bench__col_by_position(const void *a, const void *b, void *arg)
{
    const bench_col *c = arg;
    return c[*(const int *)a].position - c[*(const int *)b].position;
}

int bench__col_by_name(const void *a, const void *b, void *arg)
{
    const bench_col *c = arg;
    return strcmp(c[*(const int *)a].name, c[*(const int *)b].name);
}

/* Salts, the clustering tree and the value columns' order, from the
 * table's columns and the profile. */
static int layout_init(bench_model *m, char *err, size_t errlen)
{
    int n = m->n_cols;
    m->col_salt = cs_calloc((size_t)n + 1, sizeof(uint64_t));
    m->pk_seed = cs_calloc((size_t)n + 1, sizeof(int64_t));
    m->ck_all = cs_calloc((size_t)n + 1, sizeof(int));
    m->col_level = cs_calloc((size_t)n + 1, sizeof(int));
    m->val_rank = cs_calloc((size_t)n + 1, sizeof(int));
    int *vals = cs_calloc((size_t)n + 1, sizeof(int));
    bench_dist **cluster = cs_calloc((size_t)n + 1, sizeof(bench_dist *));
    int n_vals = 0, levels = 0;
    for (int i = 0; i < n; i++) {
        m->col_salt[i] = cs_xxh64(m->cols[i].name, strlen(m->cols[i].name), 0x5A17);
        m->col_level[i] = -1;
        if (m->cols[i].kind == 1)
            m->ck_all[m->n_ck_all++] = i;
        else if (m->cols[i].kind >= 2)
            vals[n_vals++] = i;
    }
    qsort_r(m->ck_all, (size_t)m->n_ck_all, sizeof(int), bench__col_by_position, m->cols);
    qsort_r(vals, (size_t)n_vals, sizeof(int), bench__col_by_name, m->cols);
    for (int k = 0; k < n_vals; k++)
        m->val_rank[vals[k]] = k;
    m->n_vals = n_vals;
    for (int k = 0; k < m->n_ck_all; k++) {
        const bench_col *c = &m->cols[m->ck_all[k]];
        if (c->spec && c->spec->gen != GEN_DEFAULT)
            continue;   /* generator columns take the clock: no rows of their own */
        m->col_level[m->ck_all[k]] = levels;
        cluster[levels++] = c->spec && c->spec->has_cluster ? &c->spec->cluster : NULL;
    }
    int rc = bench_tree_init(&m->tree, cluster, levels);
    if (rc)
        snprintf(err, errlen, "%s: too many clustering columns (%d)", m->p->table, levels);
    cs_free(vals);
    cs_free(cluster);
    m->row_pop = 1;
    m->last_cursor = -1;
    return rc;
}

/* The insert statement, as stress's (StressProfile.getInsert): UPDATE ...
 * SET every value column = ? WHERE every key column = ? [condition], a
 * counter column as c = c + ?; INSERT INTO ... VALUES for a table of key
 * columns only, or with cassette's insert.statement: insert.  Columns of
 * types the bench cannot generate are left out.  Caller frees. */
static char *insert_cql(bench_model *m)
{
    const bench_profile *p = m->p;
    cs_buf s;
    cs_buf_init(&s);
    char tmp[512];
    int n_set = 0;
    for (int i = 0; i < m->n_cols; i++)
        n_set += m->cols[i].kind >= 2 && m->cols[i].type != 0xFFFF;
    if (n_set && !p->insert_verb) {
        snprintf(tmp, sizeof(tmp), "UPDATE \"%s\".\"%s\" SET ", p->keyspace, p->table);
        cs_buf_put(&s, tmp, strlen(tmp));
        int n = 0;
        for (int i = 0; i < m->n_cols; i++) {
            const bench_col *c = &m->cols[i];
            if (c->kind < 2 || c->type == 0xFFFF) continue;
            if (c->type == 0x05)
                snprintf(tmp, sizeof(tmp), "%s\"%s\" = \"%s\" + ?", n++ ? ", " : "", c->name, c->name);
            else
                snprintf(tmp, sizeof(tmp), "%s\"%s\" = ?", n++ ? ", " : "", c->name);
            cs_buf_put(&s, tmp, strlen(tmp));
        }
        n = 0;
        for (int i = 0; i < m->n_cols; i++) {
            if (m->cols[i].kind > 1) continue;
            snprintf(tmp, sizeof(tmp), "%s\"%s\" = ?", n++ ? " AND " : " WHERE ", m->cols[i].name);
            cs_buf_put(&s, tmp, strlen(tmp));
        }
        if (p->condition) {
            cs_buf_put(&s, " ", 1);
            cs_buf_put(&s, p->condition, strlen(p->condition));
        }
    } else {
        snprintf(tmp, sizeof(tmp), "INSERT INTO \"%s\".\"%s\" (", p->keyspace, p->table);
        cs_buf_put(&s, tmp, strlen(tmp));
        int n = 0;
        for (int i = 0; i < m->n_cols; i++) {
            if (m->cols[i].type == 0xFFFF) continue;
            snprintf(tmp, sizeof(tmp), "%s\"%s\"", n++ ? ", " : "", m->cols[i].name);
            cs_buf_put(&s, tmp, strlen(tmp));
        }
        cs_buf_put(&s, ") VALUES (", 10);
        for (int i = 0; i < n; i++)
            cs_buf_put(&s, i ? ", ?" : "?", i ? 3 : 1);
        cs_buf_put(&s, ")", 1);
        if (p->condition) {
            cs_buf_put(&s, " ", 1);
            cs_buf_put(&s, p->condition, strlen(p->condition));
        }
    }
    cs_buf_put_u8(&s, 0);
    char *out = cs_strdup(s.err ? "" : (const char *)s.p);
    cs_buf_destroy(&s);
    return out;
}

int bench_model_init(bench_model *m, bench_profile *p, bc_sync *conn, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->p = p;
    bench_picture_init(&m->pic);
    bench_rng_seed(&m->rng, 0xBE7C4);
    char q[1024];
    if (p->keyspace_def && run_ddl(conn, p->keyspace_def, err, errlen))
        return -1;
    snprintf(q, sizeof(q), "USE \"%s\"", p->keyspace);
    if (run_ddl(conn, q, err, errlen))
        return -1;
    if (p->table_def && run_ddl(conn, p->table_def, err, errlen))
        return -1;
    for (int i = 0; i < p->n_extra; i++)
        if (run_ddl(conn, p->extra_defs[i], err, errlen))
            return -1;
    snprintf(q, sizeof(q),
             "SELECT column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = '%s' AND table_name = '%s'",
             p->keyspace, p->table);
    bc_result r;
    if (bc_sync_query(conn, q, 0, NULL, -1, &r) || r.n_rows == 0) {
        snprintf(err, errlen, "cannot read the columns of %s.%s: %s", p->keyspace, p->table,
                 r.n_rows == 0 ? "table not found" : conn->err);
        bc_result_destroy(&r);
        return -1;
    }
    m->cols = cs_calloc((size_t)r.n_rows, sizeof(bench_col));
    for (int i = 0; i < r.n_rows; i++) {
        bench_col *c = &m->cols[m->n_cols++];
        c->name = bc_result_text(&r, i, 0);
        char *kind = bc_result_text(&r, i, 1), *type = bc_result_text(&r, i, 3);
        size_t pi = (size_t)i * (size_t)r.n_cols + 2;
        c->position = r.lens[pi] == 4 ? (int)cs_be32(r.vals[pi]) : -1;
        c->kind = !strcmp(kind, "partition_key") ? 0 : !strcmp(kind, "clustering") ? 1 : !strcmp(kind, "static") ? 3 : 2;
        c->type = type_id(type);
        if (c->type == 0x05)
            m->counter_table = true;
        for (int s = 0; s < p->n_cols; s++)
            if (!strcmp(p->cols[s].name, c->name))
                c->spec = &p->cols[s];
        cs_free(kind);
        cs_free(type);
    }
    bc_result_destroy(&r);
    m->pic.one_row_per_part = true;
    for (int i = 0; i < m->n_cols; i++) {
        m->n_pk += m->cols[i].kind == 0;
        if (m->cols[i].kind == 0 && m->cols[i].spec && m->cols[i].spec->gen == GEN_BUCKET)
            m->has_bucket = true;
        if (m->cols[i].kind == 1)
            m->pic.one_row_per_part = false;
    }
    scratch_init(m);
    if (layout_init(m, err, errlen))
        return -1;
    for (int i = 0; i < m->n_cols; i++)
        if (m->cols[i].spec && m->cols[i].spec->gen == GEN_CLOCK)
            m->clock_step_ms = m->cols[i].spec->gen_step_ms;
    for (int i = 0; i < m->n_cols; i++)
        if (m->cols[i].kind == 1 && m->cols[i].spec &&
            (m->cols[i].spec->gen == GEN_CLOCK || m->cols[i].spec->gen == GEN_TIMEUUID_NOW))
            m->ck_clock = true;
    for (int i = 0; i < m->n_cols; i++)
        if (m->cols[i].spec && m->cols[i].spec->gen == GEN_TIMEUUID_NOW && !m->clock_step_ms)
            m->clock_step_ms = m->cols[i].spec->gen_step_ms;
    if (!m->clock_step_ms)
        m->clock_step_ms = 1000;
    m->clock_ms = BASE_MS;
    for (int i = 0; i < p->n_cols; i++)
        if (p->cols[i].gen_start_ms)
            m->clock_ms = p->cols[i].gen_start_ms;
    char tmp[512];
    char *ins = insert_cql(m);
    int rc = prepare_stmt(m, conn, ins, &m->insert, err, errlen);
    cs_free(ins);
    if (rc)
        return -1;
    m->extra = cs_calloc((size_t)(p->n_extra_ins + 1), sizeof(bench_stmt));
    for (int i = 0; i < p->n_extra_ins; i++, m->n_extra++)
        if (prepare_stmt(m, conn, p->extra_inserts[i], &m->extra[i], err, errlen))
            return -1;
    m->queries = cs_calloc((size_t)(p->n_queries + 1), sizeof(bench_stmt));
    for (int i = 0; i < p->n_queries; i++) {
        if (p->queries[i].token_range) {
            cs_free(p->queries[i].cql);
            p->queries[i].cql = bench__token_range_cql(m, p->queries[i].columns);
        }
        if (prepare_stmt(m, conn, p->queries[i].cql, &m->queries[i], err, errlen))
            return -1;
    }
    /* per-marker sources for put_values, sized for the widest statement */
    int max_binds = m->insert.n_binds;
    for (int i = 0; i < m->n_extra; i++)
        max_binds = m->extra[i].n_binds > max_binds ? m->extra[i].n_binds : max_binds;
    for (int i = 0; i < p->n_queries; i++)
        max_binds = m->queries[i].n_binds > max_binds ? m->queries[i].n_binds : max_binds;
    m->scratch->src = cs_calloc((size_t)max_binds + 1, sizeof(rowvals *));
    bench_model_set_ring(m, NULL, 0);
    /* a fresh seed per partition until bench_model_set_seeds (which sizes
     * the partition table for the seeds) */
    if (bench_dist_parse("uniform(1..1000000b)", &m->seeds, err, errlen))
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.%s", p->keyspace, p->table);
    m->table_q = cs_strdup(tmp);
    return 0;
}

void bench_model_destroy(bench_model *m)
{
    for (int i = 0; i < m->n_cols; i++)
        cs_free(m->cols[i].name);
    cs_free(m->cols);
    stmt_destroy(&m->insert);
    for (int i = 0; i < m->n_extra; i++)
        stmt_destroy(&m->extra[i]);
    cs_free(m->extra);
    for (int i = 0; m->p && i < m->p->n_queries && m->queries; i++)
        stmt_destroy(&m->queries[i]);
    cs_free(m->queries);
    bench_picture_destroy(&m->pic);
    scratch_destroy(m);
    cs_free(m->op_query);
    cs_free(m->bk_keys);
    cs_free(m->bk_rows);
    cs_free(m->table_q);
    bench_dist_destroy(&m->seeds);
    cs_free(m->col_salt);
    cs_free(m->pk_seed);
    cs_free(m->ck_all);
    cs_free(m->col_level);
    cs_free(m->val_rank);
    bench_tree_destroy(&m->tree);
    bench__token_range_destroy(m);
    memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ requests */

static const uint8_t one_bigint[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t limit_100[4] = { 0, 0, 0, 100 };

/* Values of a statement's markers: marker i from row src[i] (or v when src
 * is NULL).  A counter marker binds its column's value (stress: the
 * counter is incremented by the column's generated value), or 1 when the
 * marker names no column. */
static void put_values(const bench_stmt *st, const rowvals *v, const rowvals *const *src, cs_buf *out)
{
    /* sizes first, then one reservation and plain stores */
    size_t need = 2;
    for (int i = 0; i < st->n_binds; i++) {
        int c = st->bind_col[i];
        const rowvals *r = src ? src[i] : v;
        need += 4;
        if (c >= 0 && r->len[c] > 0)
            need += (size_t)r->len[c];
        else if (st->bind_type[i] == 0x05 || st->bind_op[i] == '+')
            need += 8;
        else if (st->bind_op[i] == 'L')
            need += 4;
    }
    uint8_t *d = cs_buf_extend(out, need);
    if (!d)
        return;
    cs_st16(d, (uint16_t)st->n_binds);
    d += 2;
    for (int i = 0; i < st->n_binds; i++) {
        int c = st->bind_col[i];
        const rowvals *r = src ? src[i] : v;
        const uint8_t *p = NULL;
        int32_t n = -1;
        if (c >= 0 && r->len[c] >= 0) {
            n = r->len[c];
            p = r->data.p + r->off[c];
        } else if (st->bind_type[i] == 0x05 || st->bind_op[i] == '+') {
            p = one_bigint;
            n = 8;
        } else if (st->bind_op[i] == 'L') {
            p = limit_100;
            n = 4;
        }
        cs_st32(d, (uint32_t)n);
        d += 4;
        if (n > 0) {
            memcpy(d, p, (size_t)n);
            d += n;
        }
    }
}

/* ------------------------------------------------------------ seeds */

int bench_model_set_seeds(bench_model *m, const char *spec, bool insert_only, int64_t n_ops, char *err,
                          size_t errlen)
{
    char def[96];
    const char *dist = NULL;
    if (!spec) {
        /* stress (SettingsPopulation): seq=1..N for inserts only, else
         * dist=gaussian(1..N), N the op count or 1M */
        long long n = n_ops > 0 ? (long long)n_ops : 1000000;
        snprintf(def, sizeof(def), insert_only ? "seq(1..%lld)" : "gaussian(1..%lld)", n < 2 ? 2 : n);
        dist = def;
    } else if (!strncasecmp(spec, "seq=", 4)) {
        snprintf(def, sizeof(def), "seq(%s)", spec + 4);
        dist = def;
    } else if (!strncasecmp(spec, "dist=", 5)) {
        dist = spec + 5;
    } else {
        snprintf(err, errlen, "bad seed population '%s' (seq=A..B or dist=DIST, as stress's -pop)", spec);
        return -1;
    }
    bench_dist d;
    if (bench_dist_parse(dist, &d, err, errlen)) {
        bench_dist_destroy(&d);
        return -1;
    }
    bench_dist_destroy(&m->seeds);
    m->seeds = d;
    presize_parts(m, (double)(d.max - d.min) + 1);
    return 0;
}

/* ------------------------------------------------------------ requests */

#define MAX_STMTS_PER_OP 65535   /* a BATCH's statement count is a [short] */

/* Distinct rows for an insert: row r of the op is leaf (a * r + b) mod rows,
 * a coprime to rows, so up to rows rows are all different (stress visits
 * each row at most once per op). */
static void pick_rows(bench_model *m, int64_t rows, uint64_t *a, uint64_t *b)
{
    *a = 1;
    *b = rows > 1 ? bench_rng_next(&m->rng) % (uint64_t)rows : 0;
    if (rows <= 2)
        return;
    for (int tries = 0; tries < 64; tries++) {
        uint64_t x = 1 + bench_rng_next(&m->rng) % (uint64_t)(rows - 1), g = x, h = (uint64_t)rows;
        while (h) {
            uint64_t t = g % h;
            g = h;
            h = t;
        }
        if (g == 1) {
            *a = x;
            return;
        }
    }
}

static int64_t row_at(uint64_t a, uint64_t b, int64_t r, int64_t rows)
{
    return (int64_t)(((unsigned __int128)a * (uint64_t)r + b) % (uint64_t)rows);
}

/* The INSERT op: partitions from insert.partitions, each with its rows
 * (insert.select of the partition's rows, or cassette's insert.rows), one
 * EXECUTE for a single statement, else one BATCH of insert.batchtype. */
static int build_insert(bench_model *m, cs_buf *msg, uint8_t *opcode, size_t *flags_off, bench_pending *pd)
{
    bench_profile *p = m->p;
    bench_scratch *sc = m->scratch;
    rowvals *vp = &sc->v;
    cs_buf *pkp = &sc->pk;
    int64_t nparts = bench_dist_sample(&p->insert_partitions, &m->rng);
    if (nparts < 1) nparts = 1;
    cs_buf *stmts = &sc->stmts;   /* each: [byte kind=1][short idlen][id][values] */
    cs_buf_reset(stmts);
    int n_stmts = 0, per_row = 1 + (m->n_extra < 16 ? m->n_extra : 16);
    bool direct = nparts == 1 && m->n_extra == 0;   /* a plain EXECUTE if it is one row */
    for (int64_t k = 0; k < nparts && n_stmts + per_row <= MAX_STMTS_PER_OP; k++) {
        m->clock_ms += m->clock_step_ms;
        pick_partition(m);
        m->row_pop = bench_dist_sample_ratio(&p->insert_row_pop, &m->rng);
        gen_key(m, vp, m->clock_ms, true, pkp);
        int64_t rows = part_rows(m, vp), nrows;
        if (p->has_insert_rows)
            nrows = bench_dist_sample(&p->insert_rows, &m->rng);
        else
            nrows = llround(bench_dist_sample_ratio(&p->insert_select, &m->rng) * (double)rows);
        if (nrows < 1) nrows = 1;
        /* insert.rows asks for that many rows; a clock clustering column
         * makes each a new row, other clustering columns choose among the
         * partition's rows */
        if (nrows > rows && !(p->has_insert_rows && m->ck_clock)) nrows = rows;
        uint64_t a, b;
        pick_rows(m, rows, &a, &b);
        gen_rest(m, vp, m->clock_ms, row_at(a, b, 0, rows), true);
        if (direct && nrows == 1) {
            /* one row, one statement: straight into the EXECUTE */
            track(pd, vp->pk_hash, pkp, BENCH_PIC_OP | BENCH_PIC_ROW, bench_mix64(vp->pk_hash ^ vp->ck_hash), vp->bytes);
            cs_buf_reset(&sc->last_key);
            cs_buf_put(&sc->last_key, pkp->p, pkp->len);
            m->last_token_set = true;
            *opcode = OP_EXECUTE;
            cs_buf_put_u16(msg, (uint16_t)m->insert.idlen);
            cs_buf_put(msg, m->insert.id, (size_t)m->insert.idlen);
            cs_buf_put_u16(msg, 0x0001);   /* ONE */
            *flags_off = msg->len;
            cs_buf_put_u8(msg, 0x01);      /* VALUES */
            put_values(&m->insert, vp, NULL, msg);
            return msg->err;
        }
        for (int64_t r = 0; r < nrows && n_stmts + per_row <= MAX_STMTS_PER_OP; r++) {
            if (r) {
                m->clock_ms += m->clock_step_ms;
                gen_key(m, vp, m->clock_ms, true, pkp);   /* again: a bucket may fill up */
                gen_rest(m, vp, m->clock_ms, row_at(a, b, r, rows) % part_rows(m, vp), true);
            }
            track(pd, vp->pk_hash, pkp, (r == 0 ? BENCH_PIC_OP : 0) | BENCH_PIC_ROW,
                  bench_mix64(vp->pk_hash ^ vp->ck_hash), vp->bytes);
            if (!m->last_token_set) {
                cs_buf_reset(&sc->last_key);
                cs_buf_put(&sc->last_key, pkp->p, pkp->len);
                m->last_token_set = true;
            }
            for (int s = 0; s < per_row; s++) {
                const bench_stmt *st = s ? &m->extra[s - 1] : &m->insert;
                cs_buf_put_u8(stmts, 1);
                cs_buf_put_u16(stmts, (uint16_t)st->idlen);
                cs_buf_put(stmts, st->id, (size_t)st->idlen);
                put_values(st, vp, NULL, stmts);
                n_stmts++;
            }
        }
    }
    if (n_stmts == 1) {
        /* plain EXECUTE: strip the batch item's kind byte */
        *opcode = OP_EXECUTE;
        cs_rd rd;
        cs_rd_init(&rd, stmts->p + 1, stmts->len - 1);
        uint16_t idl = cs_rd_u16(&rd);
        cs_buf_put_u16(msg, idl);
        cs_buf_put(msg, cs_rd_take(&rd, idl), idl);
        cs_buf_put_u16(msg, 0x0001);   /* ONE */
        *flags_off = msg->len;
        cs_buf_put_u8(msg, 0x01);      /* VALUES */
        cs_buf_put(msg, stmts->p + 1 + rd.pos, stmts->len - 1 - rd.pos);
    } else {
        *opcode = OP_BATCH;
        uint8_t type = m->counter_table ? 2 : !strcasecmp(p->batchtype, "LOGGED") ? 0
                     : !strcasecmp(p->batchtype, "COUNTER") ? 2 : 1;
        cs_buf_put_u8(msg, type);
        cs_buf_put_u16(msg, (uint16_t)n_stmts);
        cs_buf_put(msg, stmts->p, stmts->len);
        cs_buf_put_u16(msg, 0x0001);
        cs_buf_put_u8(msg, 0);
    }
    return msg->err;
}

/* A query op: one row of a partition, or (fields: multirow, stress's
 * default) each marker of a clustering or value column from its own random
 * row of the partition; window markers (`col > ?`) from the row at the
 * window's start. */
static int build_query(bench_model *m, int qi, cs_buf *msg, uint8_t *opcode, size_t *flags_off,
                       bench_pending *pd)
{
    bench_scratch *sc = m->scratch;
    const bench_query *q = &m->p->queries[qi];
    const bench_stmt *st = &m->queries[qi];
    rowvals *vp = &sc->v, *wp = &sc->w;
    int64_t at = m->clock_ms - q->lag_ms, leaf = -1;
    pick_partition(m);
    m->row_pop = 1;
    gen_any_row(m, vp, at, st->binds_values, &sc->pk, &leaf);
    if (q->window_ms) {
        /* the same partition and row, earlier */
        gen_key(m, wp, at - q->window_ms, false, &sc->pk2);
        gen_rest(m, wp, at - q->window_ms, leaf, st->binds_values);
    }
    const rowvals **src = NULL;
    if (q->multirow || q->window_ms) {
        src = sc->src;
        int used = 0;
        for (int i = 0; i < st->n_binds; i++) {
            int c = st->bind_col[i];
            src[i] = vp;
            if (q->window_ms && st->bind_op[i] == '>') {
                src[i] = wp;
            } else if (q->multirow && c >= 0 && m->cols[c].kind >= 1 && used++ > 0) {
                /* the first such marker takes vp's row, the others a row each */
                rowvals *r = &sc->mr[(used - 2) % MR_ROWS];
                if (used - 2 < MR_ROWS) {
                    int64_t l = -1;
                    gen_any_row(m, r, at, st->binds_values, &sc->pk2, &l);
                }
                src[i] = r;
            }
        }
    }
    /* the partition read is known when every key column is bound */
    if (st->bound_pk == m->n_pk) {
        track(pd, vp->pk_hash, &sc->pk, BENCH_PIC_OP, 0, 0);
        cs_buf_reset(&sc->last_key);
        cs_buf_put(&sc->last_key, sc->pk.p, sc->pk.len);
        m->last_token_set = true;
    }
    *opcode = OP_EXECUTE;
    cs_buf_put_u16(msg, (uint16_t)st->idlen);
    cs_buf_put(msg, st->id, (size_t)st->idlen);
    cs_buf_put_u16(msg, 0x0001);
    *flags_off = msg->len;
    cs_buf_put_u8(msg, 0x01 | 0x04);
    put_values(st, vp, src, msg);
    cs_buf_put_u32(msg, (uint32_t)(q->page_size > 0 ? q->page_size : 5000));
    return msg->err;
}

int bench_model_build(bench_model *m, int op, cs_buf *msg, uint8_t *opcode, size_t *flags_off,
                      bench_pending *pd)
{
    bench_profile *p = m->p;
    if (m->n_op_query != p->n_ops) {
        /* op kinds, once (the ops are fixed before the run starts) */
        cs_free(m->op_query);
        m->op_query = cs_calloc((size_t)p->n_ops + 1, sizeof(int));
        for (int i = 0; i < p->n_ops; i++) {
            m->op_query[i] = strcmp(p->op_names[i], "insert") ? -2 : -1;
            for (int k = 0; k < p->n_queries && m->op_query[i] == -2; k++)
                if (!strcmp(p->queries[k].name, p->op_names[i]))
                    m->op_query[i] = k;
        }
        m->n_op_query = p->n_ops;
    }
    *flags_off = 0;
    bench_pending_reset(pd);
    m->last_token_set = false;
    m->last_cursor = -1;
    int qi = m->op_query[op];
    if (qi == -1)
        return build_insert(m, msg, opcode, flags_off, pd);
    if (qi < 0)
        return CS_EINVAL;
    if (p->queries[qi].token_range) {
        bench__token_range_build(m, qi, msg, opcode, flags_off);
        return msg->err;
    }
    return build_query(m, qi, msg, opcode, flags_off, pd);
}

bool bench_model_last_token(const bench_model *m, int64_t *token)
{
    if (m->last_token_set)
        *token = cs_murmur3_token(m->scratch->last_key.p, m->scratch->last_key.len);
    return m->last_token_set;
}
