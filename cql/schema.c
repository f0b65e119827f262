/*
 * schema.c: the in-memory catalog (keyspaces, tables, columns, UDTs), its
 * lookups, and the partition/clustering key encodings shared with the
 * executor.  Owner: catalog.  Thread: request loop only.
 *
 * Column order inside a table (Cassandra's select order): partition key
 * columns in key order, clustering columns in key order, then static
 * columns by name, then regular columns by name.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <math.h>

#include "cql/schema_int.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/util.h"

/* ---------------------------------------------------------------- small helpers */

uint32_t sch__col_id(const char *name)
{
    return (uint32_t)cs_xxh64(name, strlen(name), 0);
}

void sch__puts(cs_buf *b, const char *s) { cs_buf_put(b, s, strlen(s)); }

void sch__printf(cs_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) { cs_buf_put(b, tmp, (size_t)n); return; }
    char *big = cs_malloc((size_t)n + 1);
    if (!big) { b->err = CS_ENOMEM; return; }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cs_buf_put(b, big, (size_t)n);
    cs_free(big);
}

/* Java's Double.toString for the values table options take: integers print
 * with ".0", others with the shortest round-tripping digits. */
void sch__put_double(cs_buf *b, double d)
{
    char tmp[64];
    if (isnan(d)) { sch__puts(b, "NaN"); return; }
    if (isinf(d)) { sch__puts(b, d > 0 ? "Infinity" : "-Infinity"); return; }
    double a = fabs(d);
    if (a == 0 || (a >= 1e-3 && a < 1e7)) {
        if (d == floor(d)) { sch__printf(b, "%.1f", d); return; }
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*f", prec, d);
            if (strtod(tmp, NULL) == d) break;
        }
        sch__puts(b, tmp);
        return;
    }
    /* Java's computerized scientific notation: 1.0E-4, 1.2345E7 */
    int prec;
    for (prec = 0; prec <= 16; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    char *ep = strchr(tmp, 'e');
    if (!ep) { sch__puts(b, tmp); return; }
    int exp = atoi(ep + 1);
    *ep = 0;
    sch__puts(b, tmp);
    if (!strchr(tmp, '.')) sch__puts(b, ".0");
    sch__printf(b, "E%d", exp);
}

char *sch__bufstr(cs_buf *b)
{
    cs_buf_put_u8(b, 0);
    if (b->err) return NULL;
    b->len--;
    return (char *)b->p;
}

void sch__kv_set(char ***k, char ***v, int *n, const char *key, const char *val)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp((*k)[i], key) == 0) {
            char *nv = cs_strdup(val);
            if (!nv) return;
            cs_free((*v)[i]);
            (*v)[i] = nv;
            return;
        }
    }
    char **nk = cs_realloc(*k, sizeof(char *) * (size_t)(*n + 1));
    if (!nk) return;
    *k = nk;
    char **nv = cs_realloc(*v, sizeof(char *) * (size_t)(*n + 1));
    if (!nv) return;
    *v = nv;
    char *ks = cs_strdup(key), *vs = cs_strdup(val);
    if (!ks || !vs) { cs_free(ks); cs_free(vs); return; }
    /* keep sorted by key (Cassandra's maps are sorted) */
    int i = *n;
    while (i > 0 && strcmp((*k)[i - 1], key) > 0) {
        (*k)[i] = (*k)[i - 1];
        (*v)[i] = (*v)[i - 1];
        i--;
    }
    (*k)[i] = ks;
    (*v)[i] = vs;
    (*n)++;
}

void sch__kv_free(char **k, char **v, int n)
{
    for (int i = 0; i < n; i++) {
        if (k) cs_free(k[i]);
        if (v) cs_free(v[i]);
    }
    cs_free(k);
    cs_free(v);
}

const char *sch__kv_get(char **k, char **v, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(k[i], key) == 0) return v[i];
    return NULL;
}

/* UUID.nameUUIDFromBytes(ks ++ table): MD5, version 3, IETF variant. */
void sch__system_table_id(const char *ks, const char *table, uint8_t out[16])
{
    char tmp[512];
    size_t a = strlen(ks), b = strlen(table);
    if (a + b > sizeof tmp) b = sizeof tmp - a;
    memcpy(tmp, ks, a);
    memcpy(tmp + a, table, b);
    cs_md5(tmp, a + b, out);
    out[6] = (uint8_t)((out[6] & 0x0f) | 0x30);
    out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

bool sch__is_system_ks_name(const char *n)
{
    static const char *const names[] = {
        "system", "system_schema", "system_auth", "system_distributed", "system_traces",
        "system_views", "system_virtual_schema",
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(names); i++)
        if (strcmp(n, names[i]) == 0) return true;
    return false;
}

void sch__new_version(sch_catalog *c)
{
    cs_uuid u;
    cs_uuid_random(&u);
    memcpy(c->version, u.b, 16);
}

/* ---------------------------------------------------------------- keyspaces */

sch_keyspace *sch__keyspace_new(const char *name)
{
    sch_keyspace *k = cs_calloc(1, sizeof *k);
    if (!k) return NULL;
    k->name = cs_strdup(name);
    if (!k->name) { cs_free(k); return NULL; }
    k->durable_writes = true;
    return k;
}

void sch__keyspace_free(sch_keyspace *k)
{
    if (!k) return;
    for (int i = 0; i < k->n_tables; i++) sch__table_free(k->tables[i]);
    cs_free(k->tables);
    for (int i = 0; i < k->n_types; i++) ctype_unref(k->types[i]);
    cs_free(k->types);
    sch__kv_free(k->repl_k, k->repl_v, k->n_repl);
    cs_free(k->name);
    cs_free(k);
}

int sch__keyspace_add(sch_catalog *c, sch_keyspace *k)
{
    if (c->n_ks == c->cap_ks) {
        int nc = c->cap_ks ? c->cap_ks * 2 : 16;
        sch_keyspace **nk = cs_realloc(c->ks, sizeof(*nk) * (size_t)nc);
        if (!nk) return CS_ENOMEM;
        c->ks = nk;
        c->cap_ks = nc;
    }
    int i = c->n_ks;
    while (i > 0 && strcmp(c->ks[i - 1]->name, k->name) > 0) {
        c->ks[i] = c->ks[i - 1];
        i--;
    }
    c->ks[i] = k;
    c->n_ks++;
    return 0;
}

void sch__keyspace_remove(sch_catalog *c, sch_keyspace *k)
{
    for (int i = 0; i < c->n_ks; i++) {
        if (c->ks[i] == k) {
            memmove(&c->ks[i], &c->ks[i + 1], sizeof(*c->ks) * (size_t)(c->n_ks - i - 1));
            c->n_ks--;
            return;
        }
    }
}

sch_keyspace *sch_keyspace_find(sch_catalog *c, const char *name)
{
    if (!c || !name) return NULL;
    int lo = 0, hi = c->n_ks - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = strcmp(c->ks[mid]->name, name);
        if (r == 0) return c->ks[mid];
        if (r < 0) lo = mid + 1; else hi = mid - 1;
    }
    return NULL;
}

int sch_keyspace_count(sch_catalog *c) { return c ? c->n_ks : 0; }
sch_keyspace *sch_keyspace_at(sch_catalog *c, int i)
{
    return (c && i >= 0 && i < c->n_ks) ? c->ks[i] : NULL;
}

void sch_version(sch_catalog *c, uint8_t out[16]) { memcpy(out, c->version, 16); }

/* ---------------------------------------------------------------- tables */

sch_table *sch__table_new(sch_keyspace *ks, const char *name)
{
    sch_table *t = cs_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ks = ks;
    t->name = cs_strdup(name);
    if (!t->name) { cs_free(t); return NULL; }
    sch__table_defaults(t);
    return t;
}

/* Cassandra 4.1's table defaults (TableParams.Builder, CachingParams,
 * CompactionParams, CompressionParams). */
void sch__table_defaults(sch_table *t)
{
    cs_free(t->comment);
    t->comment = cs_strdup("");
    t->default_ttl_s = 0;
    t->gc_grace_s = 864000;
    t->bloom_fp_chance = 0.01;
    t->crc_check_chance = 1.0;
    t->min_index_interval = 128;
    t->max_index_interval = 2048;
    t->memtable_flush_period_ms = 0;
    cs_free(t->speculative_retry); t->speculative_retry = cs_strdup("99p");
    cs_free(t->additional_write_policy); t->additional_write_policy = cs_strdup("99p");
    cs_free(t->read_repair); t->read_repair = cs_strdup("BLOCKING");
    t->cdc = false;
    sch__kv_free(t->caching_k, t->caching_v, t->n_caching);
    t->caching_k = t->caching_v = NULL; t->n_caching = 0;
    sch__kv_set(&t->caching_k, &t->caching_v, &t->n_caching, "keys", "ALL");
    sch__kv_set(&t->caching_k, &t->caching_v, &t->n_caching, "rows_per_partition", "NONE");
    sch__kv_free(t->compaction_k, t->compaction_v, t->n_compaction);
    t->compaction_k = t->compaction_v = NULL; t->n_compaction = 0;
    sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "class",
                "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy");
    sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "max_threshold", "32");
    sch__kv_set(&t->compaction_k, &t->compaction_v, &t->n_compaction, "min_threshold", "4");
    sch__kv_free(t->compression_k, t->compression_v, t->n_compression);
    t->compression_k = t->compression_v = NULL; t->n_compression = 0;
    sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "chunk_length_in_kb", "16");
    sch__kv_set(&t->compression_k, &t->compression_v, &t->n_compression, "class",
                "org.apache.cassandra.io.compress.LZ4Compressor");
}

static void index_free(sch_index *ix)
{
    if (!ix) return;
    cs_free(ix->name);
    cs_free(ix->kind);
    cs_free(ix->target);
    cs_free(ix->class_name);
    sch__kv_free(ix->opt_keys, ix->opt_values, ix->n_opts);
    cs_free(ix);
}

void sch__table_free(sch_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_cols; i++) {
        cs_free(t->cols[i].name);
        if (t->cols[i].type) ctype_unref(t->cols[i].type);
    }
    cs_free(t->cols);
    cs_free(t->pk);
    cs_free(t->ck);
    cs_free(t->name);
    cs_free(t->comment);
    cs_free(t->speculative_retry);
    cs_free(t->additional_write_policy);
    cs_free(t->read_repair);
    sch__kv_free(t->caching_k, t->caching_v, t->n_caching);
    sch__kv_free(t->compaction_k, t->compaction_v, t->n_compaction);
    sch__kv_free(t->compression_k, t->compression_v, t->n_compression);
    cs_free(t->view_where);
    cs_free(t->views);
    for (int i = 0; i < t->n_indexes; i++) index_free(t->indexes[i]);
    cs_free(t->indexes);
    for (int i = 0; i < t->n_dropped; i++) {
        cs_free(t->dropped[i].name);
        if (t->dropped[i].type) ctype_unref(t->dropped[i].type);
    }
    cs_free(t->dropped);
    cs_free(t);
}

int sch__table_add_col(sch_table *t, const char *name, ctype *type, sch_col_kind kind,
                       int position, bool desc)
{
    sch_column *nc = cs_realloc(t->cols, sizeof(*nc) * (size_t)(t->n_cols + 1));
    if (!nc) { if (type) ctype_unref(type); return CS_ENOMEM; }
    t->cols = nc;
    sch_column *c = &t->cols[t->n_cols];
    memset(c, 0, sizeof *c);
    c->name = cs_strdup(name);
    if (!c->name) { if (type) ctype_unref(type); return CS_ENOMEM; }
    c->type = type;
    c->kind = kind;
    c->position = (kind == COL_PARTITION_KEY || kind == COL_CLUSTERING) ? position : -1;
    c->desc = desc;
    c->id = sch__col_id(name);
    t->n_cols++;
    return 0;
}

static int col_rank(const sch_column *c)
{
    switch (c->kind) {
    case COL_PARTITION_KEY: return 0;
    case COL_CLUSTERING: return 1;
    case COL_STATIC: return 2;
    default: return 3;
    }
}

static int col_cmp(const void *a, const void *b)
{
    const sch_column *x = a, *y = b;
    int rx = col_rank(x), ry = col_rank(y);
    if (rx != ry) return rx - ry;
    if (rx <= 1) return x->position - y->position;
    return strcmp(x->name, y->name);
}

int sch__table_finish(sch_table *t, cs_error *e)
{
    if (t->n_cols > 1) qsort(t->cols, (size_t)t->n_cols, sizeof(*t->cols), col_cmp);
    cs_free(t->pk); cs_free(t->ck);
    t->pk = t->ck = NULL;
    t->n_pk = t->n_ck = 0;
    t->is_counter = false;
    for (int i = 0; i < t->n_cols; i++) {
        if (t->cols[i].kind == COL_PARTITION_KEY) t->n_pk++;
        else if (t->cols[i].kind == COL_CLUSTERING) t->n_ck++;
        if (t->cols[i].type && t->cols[i].type->kind == CT_COUNTER) t->is_counter = true;
        for (int j = 0; j < i; j++) {
            if (t->cols[j].id == t->cols[i].id) {
                if (e) cs_error_set(e, CS_ERR_INVALID,
                                    "Column names '%s' and '%s' collide in this implementation's column id space; rename one",
                                    t->cols[j].name, t->cols[i].name);
                return CS_EUSER;
            }
        }
    }
    t->pk = cs_calloc((size_t)t->n_pk + 1, sizeof(*t->pk));
    t->ck = cs_calloc((size_t)t->n_ck + 1, sizeof(*t->ck));
    if (!t->pk || !t->ck) return CS_ENOMEM;
    for (int i = 0; i < t->n_cols; i++) {
        sch_column *c = &t->cols[i];
        sch_column **slot = NULL;
        if (c->kind == COL_PARTITION_KEY && c->position >= 0 && c->position < t->n_pk) slot = &t->pk[c->position];
        else if (c->kind == COL_CLUSTERING && c->position >= 0 && c->position < t->n_ck) slot = &t->ck[c->position];
        else if (c->kind != COL_PARTITION_KEY && c->kind != COL_CLUSTERING) continue;
        if (!slot || *slot) {   /* only possible with damaged schema rows */
            if (e) cs_error_set(e, CS_ERR_SERVER, "Invalid key column positions in table %s", t->name);
            return CS_EUSER;
        }
        *slot = c;
    }
    /* COMPACT STORAGE's hidden columns (see sch_compact) */
    t->compact_value = NULL;
    for (int i = 0; i < t->n_cols; i++) {
        sch_column *c = &t->cols[i];
        c->hidden = false;
        if (t->compact == SCH_COMPACT_NONE)
            continue;
        if (c->kind == COL_REGULAR)
            t->compact_value = c;
        if (t->compact == SCH_COMPACT_STATIC)
            c->hidden = c->kind == COL_CLUSTERING || c->kind == COL_REGULAR;
        else
            c->hidden = c->kind == COL_REGULAR && c->type && c->type->kind == CT_EMPTY;
    }
    return 0;
}

int sch__ks_add_table(sch_keyspace *k, sch_table *t)
{
    sch_table **nt = cs_realloc(k->tables, sizeof(*nt) * (size_t)(k->n_tables + 1));
    if (!nt) return CS_ENOMEM;
    k->tables = nt;
    int i = k->n_tables;
    while (i > 0 && strcmp(k->tables[i - 1]->name, t->name) > 0) {
        k->tables[i] = k->tables[i - 1];
        i--;
    }
    k->tables[i] = t;
    k->n_tables++;
    t->ks = k;
    return 0;
}

void sch__ks_remove_table(sch_keyspace *k, sch_table *t)
{
    for (int i = 0; i < k->n_tables; i++) {
        if (k->tables[i] == t) {
            memmove(&k->tables[i], &k->tables[i + 1], sizeof(*k->tables) * (size_t)(k->n_tables - i - 1));
            k->n_tables--;
            return;
        }
    }
}

int sch__ks_add_type(sch_keyspace *k, ctype *udt)
{
    ctype **nt = cs_realloc(k->types, sizeof(*nt) * (size_t)(k->n_types + 1));
    if (!nt) { ctype_unref(udt); return CS_ENOMEM; }
    k->types = nt;
    k->types[k->n_types++] = udt;
    return 0;
}

void sch__ks_remove_type(sch_keyspace *k, int i)
{
    if (i < 0 || i >= k->n_types) return;
    ctype_unref(k->types[i]);
    memmove(&k->types[i], &k->types[i + 1], sizeof(*k->types) * (size_t)(k->n_types - i - 1));
    k->n_types--;
}

int sch__ks_type_index(const sch_keyspace *k, const char *name)
{
    for (int i = 0; i < k->n_types; i++)
        if (k->types[i]->udt_name && strcmp(k->types[i]->udt_name, name) == 0) return i;
    return -1;
}

sch_table *sch_table_find(sch_catalog *c, const char *ks, const char *name)
{
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k || !name) return NULL;
    int lo = 0, hi = k->n_tables - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int r = strcmp(k->tables[mid]->name, name);
        if (r == 0) return k->tables[mid];
        if (r < 0) lo = mid + 1; else hi = mid - 1;
    }
    return NULL;
}

sch_table *sch_table_by_id(sch_catalog *c, const uint8_t id[16])
{
    if (!c) return NULL;
    for (int i = 0; i < c->n_ks; i++) {
        sch_keyspace *k = c->ks[i];
        for (int j = 0; j < k->n_tables; j++)
            if (memcmp(k->tables[j]->id, id, 16) == 0) return k->tables[j];
    }
    return NULL;
}

sch_column *sch_column_find(const sch_table *t, const char *name)
{
    if (!t || !name) return NULL;
    for (int i = 0; i < t->n_cols; i++)
        if (!t->cols[i].hidden && strcmp(t->cols[i].name, name) == 0) return &t->cols[i];
    return NULL;
}

int sch_undefined_column(const sch_table *t, const char *name, cs_error *e)
{
    cs_buf b;
    cs_buf_init(&b);
    cql_quote_ident(name, &b);
    cs_buf_put_u8(&b, 0);
    size_t ks_at = b.len;
    cql_quote_ident(t && t->ks ? t->ks->name : "", &b);
    cs_buf_put_u8(&b, 0);
    size_t t_at = b.len;
    cql_quote_ident(t ? t->name : "", &b);
    cs_buf_put_u8(&b, 0);
    int rc = b.err ? cs_error_set(e, CS_ERR_INVALID, "Undefined column name %s", name)
                   : cs_error_set(e, CS_ERR_INVALID, "Undefined column name %s in table %s.%s", (const char *)b.p,
                                  (const char *)b.p + ks_at, (const char *)b.p + t_at);
    cs_buf_destroy(&b);
    return rc;
}

int64_t sch_dropped_us(const sch_table *t, uint32_t col_id)
{
    int64_t best = INT64_MIN;
    for (int i = 0; t && i < t->n_dropped; i++)
        if (t->dropped[i].name && sch__col_id(t->dropped[i].name) == col_id && t->dropped[i].dropped_us > best)
            best = t->dropped[i].dropped_us;
    return best;
}

const ctype *sch_type_find(sch_catalog *c, const char *ks, const char *name)
{
    sch_keyspace *k = sch_keyspace_find(c, ks);
    if (!k || !name) return NULL;
    int i = sch__ks_type_index(k, name);
    return i < 0 ? NULL : k->types[i];
}

/* ctype_parse's UDT lookup: arg is the catalog. */
const ctype *sch__udt_lookup_cb(void *arg, const char *ks, const char *name)
{
    return sch_type_find((sch_catalog *)arg, ks, name);
}

sch_table *sch_resolve_table(sch_catalog *c, const char *ks, const char *name,
                             const char *session_ks, cs_error *e)
{
    const char *k = ks ? ks : (session_ks && session_ks[0] ? session_ks : NULL);
    if (!k) {
        cs_error_set(e, CS_ERR_INVALID,
                     "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
        return NULL;
    }
    if (!sch_keyspace_find(c, k)) {
        cs_error_set(e, CS_ERR_INVALID, "keyspace %s does not exist", k);
        return NULL;
    }
    sch_table *t = sch_table_find(c, k, name);
    if (!t) {
        cs_error_set(e, CS_ERR_INVALID, "table %s does not exist", name);
        return NULL;
    }
    return t;
}

/* Java's Long.parseLong / Integer.parseInt: an optional sign and decimal
 * digits, nothing else, in range. */
bool sch__java_long(const char *v, int64_t *out)
{
    const char *q = v;
    if (*q == '+' || *q == '-') q++;
    if (!*q || strspn(q, "0123456789") != strlen(q)) return false;
    errno = 0;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (errno || *end) return false;
    *out = n;
    return true;
}

/* Java's Double.parseDouble / Float.parseFloat (FloatingDecimal): leading
 * and trailing whitespace trimmed, an optional sign, then NaN, Infinity or
 * decimal digits with an optional point and exponent and an optional
 * f/F/d/D suffix.  (Hexadecimal floats are not taken.) */
bool sch__java_double(const char *v, double *out)
{
    char buf[128];
    while (*v && (unsigned char)*v <= ' ') v++;
    size_t n = strlen(v);
    while (n && (unsigned char)v[n - 1] <= ' ') n--;
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, v, n);
    buf[n] = 0;
    const char *q = buf + (buf[0] == '+' || buf[0] == '-');
    if (!strcmp(q, "NaN")) { *out = NAN; return true; }
    if (!strcmp(q, "Infinity")) { *out = buf[0] == '-' ? -INFINITY : INFINITY; return true; }
    if (strchr("fFdD", buf[n - 1]) && n > 1) buf[--n] = 0;
    size_t i = (size_t)(q - buf), digits = 0;
    while (isdigit((unsigned char)buf[i])) { i++; digits++; }
    if (buf[i] == '.') { i++; while (isdigit((unsigned char)buf[i])) { i++; digits++; } }
    if (digits == 0) return false;
    if (buf[i] == 'e' || buf[i] == 'E') {
        i++;
        if (buf[i] == '+' || buf[i] == '-') i++;
        if (!isdigit((unsigned char)buf[i])) return false;
        while (isdigit((unsigned char)buf[i])) i++;
    }
    if (buf[i]) return false;
    *out = strtod(buf, NULL);
    return true;
}

/* A compaction option as a number; false (out untouched) when absent or
 * not one (options are validated when set: ddl_opts.c; a stored schema is
 * taken as it is). */
static bool opt_double(const sch_table *t, const char *key, double *out)
{
    const char *v = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, key);
    return v && sch__java_double(v, out);
}

static bool opt_long(const sch_table *t, const char *key, int64_t *out)
{
    const char *v = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, key);
    return v && sch__java_long(v, out);
}

static bool opt_int(const sch_table *t, const char *key, int *out)
{
    int64_t n;
    if (!opt_long(t, key, &n) || n < INT32_MIN || n > INT32_MAX) return false;
    *out = (int)n;
    return true;
}

/* Translate the table's compaction map to storage options, as Cassandra's
 * strategies read them (AbstractCompactionStrategy, SizeTieredCompaction-
 * StrategyOptions, TimeWindowCompactionStrategy(Options),
 * LeveledCompactionStrategy). */
void sch__table_st_opts(const sch_table *t, st_table_opts *o)
{
    st_table_opts_defaults(o);
    o->gc_grace_s = t->gc_grace_s;
    o->bloom_fp_chance = t->bloom_fp_chance;
    o->min_index_interval = t->min_index_interval > 0 ? t->min_index_interval : 128;
    o->flush_period_ms = t->memtable_flush_period_ms > 0 ? t->memtable_flush_period_ms : 0;
    const char *cls = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "class");
    if (cls && strstr(cls, "TimeWindowCompactionStrategy")) o->compaction = ST_COMPACT_TWCS;
    else if (cls && strstr(cls, "LeveledCompactionStrategy")) o->compaction = ST_COMPACT_LCS;
    else o->compaction = ST_COMPACT_STCS;
    const char *v;
    opt_int(t, "min_threshold", &o->min_threshold);
    opt_int(t, "max_threshold", &o->max_threshold);
    opt_int(t, "sstable_size_in_mb", &o->lcs_sstable_size_mb);
    opt_int(t, "fanout_size", &o->lcs_fanout);
    if ((v = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "enabled")))
        o->compaction_enabled = strcasecmp(v, "true") == 0;   /* CompactionParams.create: Boolean.parseBoolean */
    opt_double(t, "bucket_low", &o->bucket_low);
    opt_double(t, "bucket_high", &o->bucket_high);
    opt_long(t, "min_sstable_size", &o->min_sstable_bytes);
    double thr;
    if (opt_double(t, "tombstone_threshold", &thr)) o->tombstone_threshold = (double)(float)thr;   /* a Java float */
    opt_long(t, "tombstone_compaction_interval", &o->tombstone_interval_s);
    if ((v = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, "unchecked_tombstone_compaction")))
        o->unchecked_tombstone = strcasecmp(v, "true") == 0;   /* Boolean.parseBoolean */
    if (o->compaction == ST_COMPACT_TWCS) {
        /* TimeWindowCompactionStrategy's constructor: tombstone compactions
         * only when one of the three tombstone options is given with a
         * value other than "false". */
        static const char *const ts_opts[] = {
            "unchecked_tombstone_compaction", "tombstone_compaction_interval", "tombstone_threshold",
        };
        o->tombstone_compactions = false;
        for (size_t i = 0; i < CS_ARRAY_LEN(ts_opts); i++) {
            v = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction, ts_opts[i]);
            if (v && strcmp(v, "false") != 0) o->tombstone_compactions = true;
        }
        const char *unit = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction,
                                       "compaction_window_unit");
        const char *size = sch__kv_get(t->compaction_k, t->compaction_v, t->n_compaction,
                                       "compaction_window_size");
        int64_t mult = 86400;
        if (unit) {
            if (strcmp(unit, "MINUTES") == 0) mult = 60;
            else if (strcmp(unit, "HOURS") == 0) mult = 3600;
            else if (strcmp(unit, "DAYS") == 0) mult = 86400;
        }
        int64_t n = size ? atoll(size) : 1;
        if (n <= 0) n = 1;
        o->twcs_window_s = n * mult;
        opt_long(t, "expired_sstable_check_frequency_seconds", &o->twcs_expired_check_s);
    }
}

/* ---------------------------------------------------------------- key encodings */

int sch_partition_key(const sch_table *t, const cql_value *vals, cs_buf *out)
{
    if (t->n_pk == 1) {
        if (vals[0].len < 0) return CS_EINVAL;
        cs_buf_put(out, vals[0].p, (size_t)vals[0].len);
        return out->err;
    }
    for (int i = 0; i < t->n_pk; i++) {
        if (vals[i].len < 0 || vals[i].len > 0xFFFF) return CS_EINVAL;
        cs_buf_put_u16(out, (uint16_t)vals[i].len);
        cs_buf_put(out, vals[i].p, (size_t)vals[i].len);
        cs_buf_put_u8(out, 0);
    }
    return out->err;
}

int sch_partition_key_split(const sch_table *t, const uint8_t *pk, size_t n, cql_value *out)
{
    if (t->n_pk == 1) {
        out[0].p = pk;
        out[0].len = (int32_t)n;
        return 0;
    }
    size_t pos = 0;
    for (int i = 0; i < t->n_pk; i++) {
        if (pos + 2 > n) return CS_ECORRUPT;
        size_t l = cs_be16(pk + pos);
        pos += 2;
        if (pos + l + 1 > n) return CS_ECORRUPT;
        out[i].p = pk + pos;
        out[i].len = (int32_t)l;
        pos += l + 1;
    }
    return pos == n ? 0 : CS_ECORRUPT;
}

void sch_partition_key_text(const sch_table *t, const uint8_t *pk, size_t n, cs_buf *out)
{
    cql_value v[64];
    if (t->n_pk > 64 || sch_partition_key_split(t, pk, n, v))
        return;
    for (int i = 0; i < t->n_pk; i++) {
        if (i)
            cs_buf_put_u8(out, ':');
        cs_buf tmp;
        cs_buf_init(&tmp);
        if (ctype_format_cql(t->pk[i]->type, v[i].p, (size_t)v[i].len, &tmp) == 0 && tmp.len >= 2 &&
            tmp.p[0] == '\'' && tmp.p[tmp.len - 1] == '\'')
            cs_buf_put(out, tmp.p + 1, tmp.len - 2);
        else
            cs_buf_put(out, tmp.p, tmp.len);
        cs_buf_destroy(&tmp);
    }
}

int sch_clustering_key(const sch_table *t, const cql_value *vals, int n, cs_buf *out)
{
    if (n > t->n_ck) return CS_EINVAL;
    for (int i = 0; i < n; i++) {
        if (vals[i].len < 0) return CS_EINVAL;
        cs_buf_put_u8(out, CK_COMPONENT);
        int rc = ctype_bc_encode(t->ck[i]->type, vals[i].p, (size_t)vals[i].len, t->ck[i]->desc, out);
        if (rc) return rc;
    }
    return out->err;
}

int sch_clustering_decode(const sch_table *t, const uint8_t *ck, size_t n, cs_buf *store,
                          size_t *out_off, int32_t *out_len)
{
    cs_rd r;
    cs_rd_init(&r, ck, n);
    for (int i = 0; i < t->n_ck; i++) {
        out_off[i] = store->len;
        if (cs_rd_left(&r) == 0 || r.p[r.pos] != CK_COMPONENT) {
            out_len[i] = -1;
            continue;
        }
        r.pos++;
        size_t before = store->len;
        int rc = ctype_bc_decode(t->ck[i]->type, &r, t->ck[i]->desc, store);
        if (rc) return rc;
        if (r.err) return CS_ECORRUPT;
        out_len[i] = (int32_t)(store->len - before);
    }
    return store->err;
}
