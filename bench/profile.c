/*
 * profile.c: workload profiles.  Reads cassandra-stress user profiles as
 * stress does (StressProfile.java, StressYaml.java): keyspace,
 * keyspace_definition, table, table_definition, extra_definitions,
 * specname, columnspec with size/population/cluster, insert with
 * partitions/select/row-population/batchtype/condition, queries with
 * cql/fields and token_range_queries with columns/page_size.  Keys stress
 * does not know are refused, as stress refuses them, except cassette's
 * extensions in the same spirit:
 *   name, description, extra_inserts: [CQL...], ops: {insert: 3, q: 1},
 *   columnspec[].generator: clock|day|slot|bucket|timeuuid (with step_ms,
 *   start_ms, slots, bucket_rows), insert.rows, insert.statement,
 *   queries.X.pages/page_size/lag_ms/window_ms.
 * YAML is parsed with libyaml's document API.
 */
#include "bench/bench.h"
#include "common/alloc.h"
#include <ctype.h>
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

/* Refuse a key of mapping m not in the NULL-terminated known list (stress
 * refuses unknown options: "Unrecognised option(s) in column spec", and
 * its YAML bean refuses unknown properties), so a misspelt key is an error,
 * not a silently ignored setting. */
static int check_keys(ydoc *d, yaml_node_t *m, const char *const *known, const char *where, char *err,
                      size_t errlen)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(d, p->key));
        bool ok = false;
        for (int i = 0; k && known[i] && !ok; i++)
            ok = !strcasecmp(k, known[i]);
        if (!ok) {
            size_t l = (size_t)snprintf(err, errlen, "unknown key '%s' in %s (known:", k ? k : "?", where);
            for (int i = 0; known[i] && l < errlen; i++)
                l += (size_t)snprintf(err + l, errlen - l, " %s", known[i]);
            if (l < errlen)
                snprintf(err + l, errlen - l, ")");
            return -1;
        }
    }
    return 0;
}

static void lower(char *s)
{
    for (; s && *s; s++)
        *s = (char)tolower((unsigned char)*s);
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
        static const char *const known[] = { "name", "size", "population", "cluster", "generator", "step_ms",
                                             "start_ms", "slots", "bucket_rows", NULL };
        yaml_node_t *c = node(d, cs->data.sequence.items.start[i]);
        if (check_keys(d, c, known, "columnspec", err, errlen))
            return -1;
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

/* Parse a query's fields: samerow | multirow; stress's default is multirow. */
static int query_fields(const char *f, bool *multirow)
{
    *multirow = !f || !strcasecmp(f, "multirow");
    return !f || *multirow || !strcasecmp(f, "samerow") ? 0 : -1;
}

static int load_queries(ydoc *d, yaml_node_t *root, bench_profile *p, char *err, size_t errlen)
{
    yaml_node_t *qs = map_get(d, root, "queries"), *tr = map_get(d, root, "token_range_queries");
    if ((qs && qs->type != YAML_MAPPING_NODE) || (tr && tr->type != YAML_MAPPING_NODE)) {
        snprintf(err, errlen, "queries and token_range_queries must be mappings of name: {...}");
        return -1;
    }
    int nq = qs ? (int)(qs->data.mapping.pairs.top - qs->data.mapping.pairs.start) : 0;
    int nt = tr ? (int)(tr->data.mapping.pairs.top - tr->data.mapping.pairs.start) : 0;
    p->queries = cs_calloc((size_t)(nq + nt + 1), sizeof(bench_query));
    for (int i = 0; i < nq + nt; i++) {
        bool is_tr = i >= nq;
        yaml_node_pair_t *pr = is_tr ? &tr->data.mapping.pairs.start[i - nq] : &qs->data.mapping.pairs.start[i];
        bench_query *q = &p->queries[p->n_queries++];
        q->name = scalar_dup(node(d, pr->key));
        lower(q->name);   /* stress lower-cases query names, and ops match them so */
        yaml_node_t *v = node(d, pr->value);
        static const char *const known_q[] = { "cql", "fields", "pages", "page_size", "lag_ms", "window_ms", NULL };
        static const char *const known_t[] = { "columns", "page_size", NULL };
        if (check_keys(d, v, is_tr ? known_t : known_q, is_tr ? "token_range_queries" : "queries", err, errlen))
            return -1;
        for (int k = 0; q->name && k < i; k++)
            if (!strcmp(p->queries[k].name, q->name)) {
                snprintf(err, errlen, "query '%s' is defined twice (queries and token_range_queries share names)",
                         q->name);
                return -1;
            }
        const char *s;
        q->pages = 1;
        q->page_size = (s = scalar(map_get(d, v, "page_size"))) ? atoi(s) : 5000;
        if (is_tr) {
            q->token_range = true;
            q->columns = scalar_dup(map_get(d, v, "columns"));
            if (!q->name || !q->columns) {
                snprintf(err, errlen, "token range query %d has no columns", i - nq + 1);
                return -1;
            }
            continue;
        }
        q->cql = v && v->type == YAML_SCALAR_NODE ? scalar_dup(v) : scalar_dup(map_get(d, v, "cql"));
        if (!q->name || !q->cql) {
            snprintf(err, errlen, "query %d has no cql", i + 1);
            return -1;
        }
        const char *f = scalar(map_get(d, v, "fields"));
        if (query_fields(f, &q->multirow)) {
            snprintf(err, errlen, "query %s: fields must be samerow or multirow, not '%s'", q->name, f);
            return -1;
        }
        q->pages = (s = scalar(map_get(d, v, "pages"))) ? atoi(s) : 1;
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
            lower(p->op_names[p->n_ops]);
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

static int check_profile_ops(bench_profile *p, char *err, size_t errlen);

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
    static const char *const known[] = { "specname", "keyspace", "keyspace_definition", "table",
                                         "table_definition", "extra_definitions", "columnspec", "insert",
                                         "queries", "token_range_queries", "name", "description",
                                         "extra_inserts", "ops", "pop", NULL };
    if (check_keys(&d, root, known, "the profile", err, errlen))
        goto out;
    p->name = scalar_dup(map_get(&d, root, "name"));
    if (!p->name)
        p->name = scalar_dup(map_get(&d, root, "specname"));
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
    p->pop = scalar_dup(map_get(&d, root, "pop"));
    p->specname = scalar_dup(map_get(&d, root, "specname"));
    if (!p->specname) {
        char sn[512];
        snprintf(sn, sizeof(sn), "%s.%s", p->keyspace, p->table);
        p->specname = cs_strdup(sn);
    }
    if (str_list(&d, map_get(&d, root, "extra_definitions"), &p->extra_defs, &p->n_extra) ||
        str_list(&d, map_get(&d, root, "extra_inserts"), &p->extra_inserts, &p->n_extra_ins)) {
        snprintf(err, errlen, "%s: extra_definitions/extra_inserts must be lists of CQL", name);
        goto out;
    }
    if (load_columns(&d, root, p, err, errlen) || load_queries(&d, root, p, err, errlen))
        goto out;
    yaml_node_t *ins = map_get(&d, root, "insert");
    static const char *const known_ins[] = { "partitions", "select", "row-population", "batchtype", "condition",
                                             "rows", "statement", NULL };
    if (check_keys(&d, ins, known_ins, "insert", err, errlen))
        goto out;
    if (parse_dist_key(&d, ins, "partitions", &p->insert_partitions, NULL, "fixed(1)", err, errlen) ||
        parse_dist_key(&d, ins, "select", &p->insert_select, NULL, "fixed(1)/1", err, errlen) ||
        parse_dist_key(&d, ins, "row-population", &p->insert_row_pop, NULL, "fixed(1)/1", err, errlen) ||
        parse_dist_key(&d, ins, "rows", &p->insert_rows, &p->has_insert_rows, NULL, err, errlen))
        goto out;
    /* stress: BatchStatement.Type, LOGGED when not given */
    const char *bt = scalar(map_get(&d, ins, "batchtype"));
    if (bt && strcasecmp(bt, "LOGGED") && strcasecmp(bt, "UNLOGGED") && strcasecmp(bt, "COUNTER")) {
        snprintf(err, errlen, "%s: insert.batchtype must be LOGGED, UNLOGGED or COUNTER, not '%s'", name, bt);
        goto out;
    }
    p->batchtype = cs_strdup(bt ? bt : "LOGGED");
    p->condition = scalar_dup(map_get(&d, ins, "condition"));
    const char *verb = scalar(map_get(&d, ins, "statement"));
    if (verb && strcasecmp(verb, "insert") && strcasecmp(verb, "update")) {
        snprintf(err, errlen, "%s: insert.statement must be insert or update, not '%s'", name, verb);
        goto out;
    }
    p->insert_verb = verb && !strcasecmp(verb, "insert");
    if (p->insert_verb && p->condition) {
        snprintf(err, errlen, "%s: insert.condition needs the UPDATE statement (not insert.statement: insert)", name);
        goto out;
    }
    load_ops(&d, root, p);
    if (check_profile_ops(p, err, errlen))
        goto out;
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

/* Resolve op name tok (lower-cased in place): "insert", a query or token
 * range query, optionally prefixed with the profile's specname as stress's
 * "keyspace.table.op" form for several profiles.  0, or -1 with err. */
static int op_resolve(const bench_profile *p, char *tok, char **out, char *err, size_t errlen)
{
    char *name = tok, *dot = strrchr(tok, '.');
    if (dot) {
        *dot = 0;
        if (strcasecmp(tok, p->specname)) {
            snprintf(err, errlen, "operation '%s.%s' names another profile (this one is '%s')", tok, dot + 1,
                     p->specname);
            return -1;
        }
        name = dot + 1;
    }
    lower(name);
    bool known = !strcmp(name, "insert");
    for (int i = 0; i < p->n_queries; i++)
        known |= !strcmp(name, p->queries[i].name);
    if (!known) {
        snprintf(err, errlen, "unknown operation '%s' (insert or a query of the profile)", name);
        return -1;
    }
    *out = name;
    return 0;
}

static int check_profile_ops(bench_profile *p, char *err, size_t errlen)
{
    for (int i = 0; i < p->n_ops; i++) {
        char *name;
        if (op_resolve(p, p->op_names[i], &name, err, errlen))
            return -1;
        memmove(p->op_names[i], name, strlen(name) + 1);
        for (int k = 0; k < i; k++)
            if (!strcmp(p->op_names[k], p->op_names[i])) {
                snprintf(err, errlen, "operation '%s' set twice", name);
                return -1;
            }
    }
    return 0;
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
    int rc = 0;
    for (char *tok = strtok_r(body, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (p->n_ops == 32) {
            snprintf(err, errlen, "more than 32 operations in --ops");
            rc = -1;
            break;
        }
        char *eq = strchr(tok, '=');
        double r = 1;
        if (eq) {
            *eq = 0;
            char *end;
            r = strtod(eq + 1, &end);
            if (end == eq + 1 || *end || r < 0) {
                snprintf(err, errlen, "bad ratio '%s' for '%s' in --ops", eq + 1, tok);
                rc = -1;
                break;
            }
        }
        char *name;
        if (op_resolve(p, tok, &name, err, errlen)) {
            rc = -1;
            break;
        }
        p->op_names[p->n_ops] = cs_strdup(name);
        p->op_ratios[p->n_ops++] = r;
    }
    cs_free(s);
    if (rc == 0)
        rc = check_profile_ops(p, err, errlen);
    if (rc == 0 && p->n_ops == 0) {
        snprintf(err, errlen, "--ops names no operation");
        rc = -1;
    }
    return rc;
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
        cs_free(p->queries[i].columns);
    }
    cs_free(p->queries);
    for (int i = 0; i < p->n_ops; i++)
        cs_free(p->op_names[i]);
    cs_free(p->op_names);
    cs_free(p->op_ratios);
    bench_dist_destroy(&p->insert_partitions);
    bench_dist_destroy(&p->insert_select);
    bench_dist_destroy(&p->insert_rows);
    bench_dist_destroy(&p->insert_row_pop);
    cs_free(p->batchtype);
    cs_free(p->condition);
    cs_free(p->specname);
    cs_free(p->pop);
    memset(p, 0, sizeof(*p));
}
