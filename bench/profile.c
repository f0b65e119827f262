/*
 * profile.c: workload profiles.  Reads cassandra-stress user profiles as they
 * are (keyspace, keyspace_definition, table, table_definition, columnspec
 * with size/population/cluster, insert with partitions/select/batchtype,
 * queries with cql/fields) plus cassette's extensions in the same spirit:
 *   name, description, extra_definitions: [CQL...], extra_inserts: [CQL...],
 *   columnspec[].generator: clock|day|slot|bucket|timeuuid (with step_ms,
 *   start_ms, slots, bucket_rows), insert.rows, queries.X.pages/page_size,
 *   ops: {insert: 3, q: 1}.
 * YAML is parsed with libyaml's document API.
 */
#include "bench/bench.h"
#include "common/alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

typedef struct ydoc { yaml_document_t doc; } ydoc;

static yaml_node_t *node(ydoc *d, int id) { return yaml_document_get_node(&d->doc, id); }

static yaml_node_t *map_get(ydoc *d, yaml_node_t *m, const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcasecmp((char *)k->data.scalar.value, key))
            return node(d, p->value);
    }
    return NULL;
}

static char *scalar_dup(yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    return cs_strndup((char *)n->data.scalar.value, n->data.scalar.length);
}

static const char *scalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int parse_dist_key(ydoc *d, yaml_node_t *m, const char *key, bench_dist *out, bool *has,
                          const char *def, char *err, size_t errlen)
{
    const char *s = scalar(map_get(d, m, key));
    if (has)
        *has = s != NULL;
    if (!s)
        s = def;
    if (!s)
        return 0;
    if (bench_dist_parse(s, out, err, errlen)) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, " (in %s)", key);
        return -1;
    }
    return 0;
}

static int str_list(ydoc *d, yaml_node_t *n, char ***out, int *count)
{
    *out = NULL;
    *count = 0;
    if (!n)
        return 0;
    if (n->type == YAML_SCALAR_NODE) {
        *out = cs_calloc(1, sizeof(char *));
        (*out)[0] = scalar_dup(n);
        *count = 1;
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return -1;
    int len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = cs_calloc((size_t)(len ? len : 1), sizeof(char *));
    for (int i = 0; i < len; i++)
        (*out)[(*count)++] = scalar_dup(node(d, n->data.sequence.items.start[i]));
    return 0;
}

static bench_gen_kind gen_kind(const char *s)
{
    if (!s) return GEN_DEFAULT;
    if (!strcasecmp(s, "clock")) return GEN_CLOCK;
    if (!strcasecmp(s, "day")) return GEN_DAY;
    if (!strcasecmp(s, "slot")) return GEN_SLOT;
    if (!strcasecmp(s, "bucket")) return GEN_BUCKET;
    if (!strcasecmp(s, "timeuuid")) return GEN_TIMEUUID_NOW;
    return (bench_gen_kind)-1;
}

static int load_columns(ydoc *d, yaml_node_t *root, bench_profile *p, char *err, size_t errlen)
{
    yaml_node_t *cs = map_get(d, root, "columnspec");
    if (!cs)
        return 0;
    if (cs->type != YAML_SEQUENCE_NODE) {
        snprintf(err, errlen, "columnspec must be a list");
        return -1;
    }
    int len = (int)(cs->data.sequence.items.top - cs->data.sequence.items.start);
    p->cols = cs_calloc((size_t)(len ? len : 1), sizeof(bench_colspec));
    for (int i = 0; i < len; i++) {
        yaml_node_t *c = node(d, cs->data.sequence.items.start[i]);
        bench_colspec *col = &p->cols[p->n_cols++];
        col->name = scalar_dup(map_get(d, c, "name"));
        if (!col->name) {
            snprintf(err, errlen, "columnspec entry %d has no name", i + 1);
            return -1;
        }
        if (parse_dist_key(d, c, "size", &col->size, &col->has_size, NULL, err, errlen) ||
            parse_dist_key(d, c, "population", &col->population, &col->has_population, NULL, err, errlen) ||
            parse_dist_key(d, c, "cluster", &col->cluster, &col->has_cluster, NULL, err, errlen))
            return -1;
        const char *g = scalar(map_get(d, c, "generator"));
        int gk = (int)gen_kind(g);
        if (gk < 0) {
            snprintf(err, errlen, "column %s: unknown generator '%s' (clock, day, slot, bucket, timeuuid)",
                     col->name, g);
            return -1;
        }
        col->gen = (bench_gen_kind)gk;
        const char *v;
        col->gen_step_ms = (v = scalar(map_get(d, c, "step_ms"))) ? atoll(v) : 1000;
        col->gen_start_ms = (v = scalar(map_get(d, c, "start_ms"))) ? atoll(v) : 0;
        if ((v = scalar(map_get(d, c, "slots"))))
            col->gen_param = atoll(v);
        if ((v = scalar(map_get(d, c, "bucket_rows"))))
            col->gen_param = atoll(v);
        if ((col->gen == GEN_SLOT || col->gen == GEN_BUCKET) && col->gen_param <= 0) {
            snprintf(err, errlen, "column %s: generator %s needs %s > 0", col->name, g,
                     col->gen == GEN_SLOT ? "slots" : "bucket_rows");
            return -1;
        }
    }
    return 0;
}

static int load_queries(ydoc *d, yaml_node_t *root, bench_profile *p, char *err, size_t errlen)
{
    yaml_node_t *qs = map_get(d, root, "queries");
    if (!qs)
        return 0;
    if (qs->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "queries must be a mapping of name: {cql: ...}");
        return -1;
    }
    int len = (int)(qs->data.mapping.pairs.top - qs->data.mapping.pairs.start);
    p->queries = cs_calloc((size_t)(len ? len : 1), sizeof(bench_query));
    for (int i = 0; i < len; i++) {
        yaml_node_pair_t *pr = &qs->data.mapping.pairs.start[i];
        bench_query *q = &p->queries[p->n_queries++];
        q->name = scalar_dup(node(d, pr->key));
        yaml_node_t *v = node(d, pr->value);
        q->cql = v && v->type == YAML_SCALAR_NODE ? scalar_dup(v) : scalar_dup(map_get(d, v, "cql"));
        if (!q->name || !q->cql) {
            snprintf(err, errlen, "query %d has no cql", i + 1);
            return -1;
        }
        const char *f = scalar(map_get(d, v, "fields"));
        q->multirow = f && !strcasecmp(f, "multirow");
        const char *s;
        q->pages = (s = scalar(map_get(d, v, "pages"))) ? atoi(s) : 1;
        q->page_size = (s = scalar(map_get(d, v, "page_size"))) ? atoi(s) : 5000;
        q->lag_ms = (s = scalar(map_get(d, v, "lag_ms"))) ? atoll(s) : 0;
        q->window_ms = (s = scalar(map_get(d, v, "window_ms"))) ? atoll(s) : 0;
        if (q->pages < 1)
            q->pages = 1;
    }
    return 0;
}

static int load_ops(ydoc *d, yaml_node_t *root, bench_profile *p)
{
    yaml_node_t *ops = map_get(d, root, "ops");
    if (ops && ops->type == YAML_MAPPING_NODE) {
        int len = (int)(ops->data.mapping.pairs.top - ops->data.mapping.pairs.start);
        p->op_names = cs_calloc((size_t)(len ? len : 1), sizeof(char *));
        p->op_ratios = cs_calloc((size_t)(len ? len : 1), sizeof(double));
        for (int i = 0; i < len; i++) {
            yaml_node_pair_t *pr = &ops->data.mapping.pairs.start[i];
            p->op_names[p->n_ops] = scalar_dup(node(d, pr->key));
            const char *v = scalar(node(d, pr->value));
            p->op_ratios[p->n_ops++] = v ? atof(v) : 1;
        }
        return 0;
    }
    /* cassandra-stress default when no ops are given: inserts only */
    p->op_names = cs_calloc(1, sizeof(char *));
    p->op_ratios = cs_calloc(1, sizeof(double));
    p->op_names[0] = cs_strdup("insert");
    p->op_ratios[0] = 1;
    p->n_ops = 1;
    return 0;
}

int bench_profile_load_text(const char *name, const char *yaml, bench_profile *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    yaml_parser_t parser;
    ydoc d;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errlen, "yaml: out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, strlen(yaml));
    if (!yaml_parser_load(&parser, &d.doc)) {
        snprintf(err, errlen, "%s: YAML error at line %zu: %s", name, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "?");
        yaml_parser_delete(&parser);
        return -1;
    }
    yaml_parser_delete(&parser);
    int rc = -1;
    yaml_node_t *root = yaml_document_get_root_node(&d.doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        snprintf(err, errlen, "%s: profile must be a YAML mapping", name);
        goto out;
    }
    p->name = scalar_dup(map_get(&d, root, "name"));
    if (!p->name)
        p->name = cs_strdup(name);
    p->description = scalar_dup(map_get(&d, root, "description"));
    p->keyspace = scalar_dup(map_get(&d, root, "keyspace"));
    p->keyspace_def = scalar_dup(map_get(&d, root, "keyspace_definition"));
    p->table = scalar_dup(map_get(&d, root, "table"));
    p->table_def = scalar_dup(map_get(&d, root, "table_definition"));
    if (!p->keyspace || !p->table) {
        snprintf(err, errlen, "%s: profile needs 'keyspace' and 'table'", name);
        goto out;
    }
    if (str_list(&d, map_get(&d, root, "extra_definitions"), &p->extra_defs, &p->n_extra) ||
        str_list(&d, map_get(&d, root, "extra_inserts"), &p->extra_inserts, &p->n_extra_ins)) {
        snprintf(err, errlen, "%s: extra_definitions/extra_inserts must be lists of CQL", name);
        goto out;
    }
    if (load_columns(&d, root, p, err, errlen) || load_queries(&d, root, p, err, errlen))
        goto out;
    yaml_node_t *ins = map_get(&d, root, "insert");
    if (parse_dist_key(&d, ins, "partitions", &p->insert_partitions, NULL, "fixed(1)", err, errlen) ||
        parse_dist_key(&d, ins, "select", &p->insert_select, NULL, "fixed(1)/1", err, errlen) ||
        parse_dist_key(&d, ins, "rows", &p->insert_rows, &p->has_insert_rows, NULL, err, errlen))
        goto out;
    const char *bt = scalar(map_get(&d, ins, "batchtype"));
    p->batchtype = cs_strdup(bt ? bt : "UNLOGGED");
    load_ops(&d, root, p);
    rc = 0;
out:
    yaml_document_delete(&d.doc);
    if (rc)
        bench_profile_destroy(p);
    return rc;
}

int bench_profile_load_file(const char *path, bench_profile *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open profile %s", path);
        return -1;
    }
    cs_buf b;
    cs_buf_init(&b);
    char tmp[8192];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        cs_buf_put(&b, tmp, n);
    fclose(f);
    cs_buf_put_u8(&b, 0);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char name[256];
    snprintf(name, sizeof(name), "%s", base);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = 0;
    int rc = b.err ? -1 : bench_profile_load_text(name, (const char *)b.p, p, err, errlen);
    cs_buf_destroy(&b);
    return rc;
}

int bench_profile_set_ops(bench_profile *p, const char *spec, char *err, size_t errlen)
{
    for (int i = 0; i < p->n_ops; i++)
        cs_free(p->op_names[i]);
    cs_free(p->op_names);
    cs_free(p->op_ratios);
    p->n_ops = 0;
    p->op_names = cs_calloc(32, sizeof(char *));
    p->op_ratios = cs_calloc(32, sizeof(double));
    char *s = cs_strdup(spec), *save = NULL;
    /* accept cassandra-stress's "ops(insert=1,q=2)" as well as "insert=1,q=2" */
    char *body = s;
    if (!strncasecmp(body, "ops(", 4)) {
        body += 4;
        char *close = strrchr(body, ')');
        if (close)
            *close = 0;
    }
    for (char *tok = strtok_r(body, ",", &save); tok && p->n_ops < 32; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        double r = 1;
        if (eq) {
            *eq = 0;
            r = atof(eq + 1);
        }
        bool known = !strcmp(tok, "insert");
        for (int i = 0; i < p->n_queries; i++)
            known |= !strcmp(tok, p->queries[i].name);
        if (!known) {
            snprintf(err, errlen, "unknown operation '%s' in --ops", tok);
            cs_free(s);
            return -1;
        }
        p->op_names[p->n_ops] = cs_strdup(tok);
        p->op_ratios[p->n_ops++] = r;
    }
    cs_free(s);
    return 0;
}

void bench_profile_destroy(bench_profile *p)
{
    cs_free(p->name);
    cs_free(p->description);
    cs_free(p->keyspace);
    cs_free(p->keyspace_def);
    cs_free(p->table);
    cs_free(p->table_def);
    for (int i = 0; i < p->n_extra; i++)
        cs_free(p->extra_defs[i]);
    cs_free(p->extra_defs);
    for (int i = 0; i < p->n_extra_ins; i++)
        cs_free(p->extra_inserts[i]);
    cs_free(p->extra_inserts);
    for (int i = 0; i < p->n_cols; i++) {
        cs_free(p->cols[i].name);
        bench_dist_destroy(&p->cols[i].size);
        bench_dist_destroy(&p->cols[i].population);
        bench_dist_destroy(&p->cols[i].cluster);
    }
    cs_free(p->cols);
    for (int i = 0; i < p->n_queries; i++) {
        cs_free(p->queries[i].name);
        cs_free(p->queries[i].cql);
    }
    cs_free(p->queries);
    for (int i = 0; i < p->n_ops; i++)
        cs_free(p->op_names[i]);
    cs_free(p->op_names);
    cs_free(p->op_ratios);
    bench_dist_destroy(&p->insert_partitions);
    bench_dist_destroy(&p->insert_select);
    bench_dist_destroy(&p->insert_rows);
    cs_free(p->batchtype);
    memset(p, 0, sizeof(*p));
}
