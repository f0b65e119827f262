/* Unit tests for cql/parser*.c: every statement family checked field by
 * field, case folding, bind marker numbering, comments, Cassandra-style
 * syntax errors with positions and snippets, OOM stepping, and a bounded
 * fuzz loop (random bytes, truncations and mutations of valid statements)
 * that must give errors and never crash or leak. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "common/err.h"
#include "cql/ast.h"

static size_t alloc_base;
static void setup(void) { alloc_base = cs_alloc_count(); }
static void teardown(void)
{
    cr_expect_eq(cs_alloc_count(), alloc_base, "leaked %zu allocations", cs_alloc_count() - alloc_base);
}
TestSuite(parser, .init = setup, .fini = teardown);

static cql_stmt *ok(const char *q)
{
    cs_error e;
    cs_error_init(&e);
    cql_stmt *s = cql_parse(q, strlen(q), &e);
    cr_assert(s != NULL, "parse failed: %s\n  query: %s", e.msg, q);
    return s;
}

static void err(const char *q, const char *want)
{
    cs_error e;
    cs_error_init(&e);
    cql_stmt *s = cql_parse(q, strlen(q), &e);
    cr_assert(s == NULL, "expected an error for: %s", q);
    cr_expect_eq(e.code, CS_ERR_SYNTAX, "code %x for %s", e.code, q);
    if (want)
        cr_expect_str_eq(e.msg, want, "query: %s", q);
}

static void bad(const char *q) { err(q, NULL); }

/* ---------------------------------------------------------------- SELECT */

Test(parser, select_full)
{
    cql_stmt *s = ok("SELECT a, b AS \"Bee\", count(*), writetime(v), TTL(v), token(k), "
                     "CAST(a AS text), m['x'], u.f, l[1..3], ks.fn(a, 1) FROM Ks.T "
                     "WHERE k = ? AND c > :x AND (a, b) IN ((1, 2), (3, 4)) AND m CONTAINS KEY 'a' "
                     "AND s CONTAINS 1 AND v IS NOT NULL AND m['k'] = 3 AND token(k) > token(5) "
                     "AND x IN ? AND y IN (1, 2) AND (c1, c2) > (1, 2) AND z LIKE 'a%' AND w != 3 "
                     "GROUP BY k, c ORDER BY c DESC, d ASC PER PARTITION LIMIT 3 LIMIT ? ALLOW FILTERING;");
    cr_assert_eq(s->kind, STMT_SELECT);
    ast_select *q = &s->u.select;
    cr_expect_str_eq(q->table.ks, "ks");
    cr_expect_str_eq(q->table.name, "t");
    cr_expect(!q->star && !q->json && !q->distinct);
    cr_assert_eq(q->n_sels, 11);
    cr_expect_eq(q->sels[0]->kind, SEL_COLUMN);
    cr_expect_str_eq(q->sels[0]->column, "a");
    cr_expect_str_eq(q->sels[0]->text, "a");
    cr_expect_str_eq(q->sels[1]->alias, "Bee");
    cr_expect_eq(q->sels[2]->kind, SEL_COUNT_STAR);
    cr_expect_str_eq(q->sels[2]->text, "count(*)");
    cr_expect_eq(q->sels[3]->kind, SEL_WRITETIME);
    cr_expect_str_eq(q->sels[3]->column, "v");
    cr_expect_eq(q->sels[4]->kind, SEL_TTL);
    cr_expect_str_eq(q->sels[4]->text, "TTL(v)");
    cr_expect_eq(q->sels[5]->kind, SEL_FUNC);
    cr_expect_str_eq(q->sels[5]->func.name, "token");
    cr_expect_eq(q->sels[5]->n_args, 1);
    cr_expect_eq(q->sels[6]->kind, SEL_CAST);
    cr_expect_str_eq(q->sels[6]->cast_type, "text");
    cr_expect_eq(q->sels[6]->args[0]->kind, SEL_COLUMN);
    cr_expect_eq(q->sels[7]->kind, SEL_ELEMENT);
    cr_expect_str_eq(q->sels[7]->text, "m['x']");
    cr_expect_str_eq(q->sels[7]->term->lit.text, "x");
    cr_expect_eq(q->sels[8]->kind, SEL_FIELD);
    cr_expect_str_eq(q->sels[8]->field, "f");
    cr_expect_str_eq(q->sels[8]->args[0]->column, "u");
    cr_expect_eq(q->sels[9]->kind, SEL_SLICE);
    cr_expect_str_eq(q->sels[9]->term->lit.text, "1");
    cr_expect_str_eq(q->sels[9]->term2->lit.text, "3");
    cr_expect_eq(q->sels[10]->kind, SEL_FUNC);
    cr_expect_str_eq(q->sels[10]->func.ks, "ks");
    cr_expect_str_eq(q->sels[10]->func.name, "fn");
    cr_expect_eq(q->sels[10]->n_args, 2);
    cr_expect_eq(q->sels[10]->args[1]->kind, SEL_TERM);

    cr_assert_eq(q->n_where, 13);
    ast_relation **w = q->where;
    cr_expect(w[0]->kind == REL_COLUMN && w[0]->op == OP_EQ && w[0]->value->kind == TERM_BIND);
    cr_expect_eq(w[0]->value->bind.index, 0);
    cr_expect_eq(w[1]->op, OP_GT);
    cr_expect_str_eq(w[1]->value->bind.name, "x");
    cr_expect_eq(w[1]->value->bind.index, 1);
    cr_expect(w[2]->kind == REL_MULTI && w[2]->op == OP_IN && w[2]->n_columns == 2 && w[2]->n_in == 2);
    cr_expect_eq(w[2]->in[1]->kind, TERM_TUPLE);
    cr_expect_eq(w[3]->op, OP_CONTAINS_KEY);
    cr_expect_eq(w[4]->op, OP_CONTAINS);
    cr_expect(w[5]->op == OP_IS_NOT_NULL && w[5]->value == NULL);
    cr_expect(w[6]->kind == REL_ELEMENT && w[6]->op == OP_EQ);
    cr_expect_str_eq(w[6]->key->lit.text, "k");
    cr_expect(w[7]->kind == REL_TOKEN && w[7]->n_columns == 1 && w[7]->op == OP_GT);
    cr_expect_eq(w[7]->value->kind, TERM_FUNC);
    cr_expect(w[8]->op == OP_IN && w[8]->in_marker && w[8]->value->kind == TERM_BIND);
    cr_expect(w[9]->op == OP_IN && !w[9]->in_marker && w[9]->n_in == 2);
    cr_expect(w[10]->kind == REL_MULTI && w[10]->op == OP_GT && w[10]->value->kind == TERM_TUPLE);
    cr_expect_eq(w[11]->op, OP_LIKE);
    cr_expect_eq(w[12]->op, OP_NEQ);

    cr_assert_eq(q->n_group_by, 2);
    cr_expect_str_eq(q->group_by[1], "c");
    cr_assert_eq(q->n_order, 2);
    cr_expect(q->order[0].desc && !q->order[1].desc);
    cr_expect_str_eq(q->per_partition_limit->lit.text, "3");
    cr_expect_eq(q->limit->kind, TERM_BIND);
    cr_expect_eq(q->limit->bind.index, 3);
    cr_expect(q->allow_filtering);
    cr_expect_eq(s->n_binds, 4);
    cr_expect_null(s->bind_names[0]);
    cr_expect_str_eq(s->bind_names[1], "x");
    cql_stmt_free(s);
}

Test(parser, select_star_json_distinct)
{
    cql_stmt *s = ok("select json * from t");
    cr_expect(s->u.select.json && s->u.select.star);
    cr_expect_null(s->u.select.table.ks);
    cql_stmt_free(s);
    s = ok("SELECT DISTINCT k FROM t");
    cr_expect(s->u.select.distinct && s->u.select.n_sels == 1);
    cql_stmt_free(s);
    s = ok("SELECT JSON DISTINCT k, v FROM t");
    cr_expect(s->u.select.json && s->u.select.distinct && s->u.select.n_sels == 2);
    cql_stmt_free(s);
    /* unreserved keywords as column names */
    s = ok("SELECT json, distinct, key, ttl, writetime, count, type, filtering FROM t WHERE key = 1");
    cr_expect(!s->u.select.json && !s->u.select.distinct);
    cr_assert_eq(s->u.select.n_sels, 8);
    cr_expect_str_eq(s->u.select.sels[0]->column, "json");
    cr_expect_str_eq(s->u.select.sels[5]->column, "count");
    cr_expect_str_eq(s->u.select.where[0]->columns[0], "key");
    cql_stmt_free(s);
    s = ok("SELECT json FROM t");
    cr_expect(!s->u.select.json);
    cr_expect_str_eq(s->u.select.sels[0]->column, "json");
    cql_stmt_free(s);
}

Test(parser, select_terms_and_count_one)
{
    cql_stmt *s = ok("SELECT count(1), count(v), 1, 'x', ?, [1, 2], {'a': 1}, (int) ? FROM t");
    ast_select *q = &s->u.select;
    cr_expect_eq(q->sels[0]->kind, SEL_COUNT_STAR);
    cr_expect_eq(q->sels[1]->kind, SEL_FUNC);
    cr_expect_str_eq(q->sels[1]->func.name, "count");
    cr_expect_eq(q->sels[2]->kind, SEL_TERM);
    cr_expect_eq(q->sels[2]->term->lit.kind, LIT_INTEGER);
    cr_expect_eq(q->sels[3]->term->lit.kind, LIT_STRING);
    cr_expect_eq(q->sels[4]->term->kind, TERM_BIND);
    cr_expect_eq(q->sels[5]->term->kind, TERM_LIST);
    cr_expect_eq(q->sels[6]->term->kind, TERM_MAP);
    cr_expect_eq(q->sels[7]->term->kind, TERM_CAST);
    cr_expect_str_eq(q->sels[7]->term->cast_type, "int");
    cql_stmt_free(s);
}

Test(parser, case_folding)
{
    cql_stmt *s = ok("SELECT MyCol, \"MyCol\", \"a\"\"b\" FROM MyKs.\"MyTable\" WHERE \"K\" = 1");
    ast_select *q = &s->u.select;
    cr_expect_str_eq(q->sels[0]->column, "mycol");
    cr_expect_str_eq(q->sels[1]->column, "MyCol");
    cr_expect_str_eq(q->sels[2]->column, "a\"b");
    cr_expect_str_eq(q->table.ks, "myks");
    cr_expect_str_eq(q->table.name, "MyTable");
    cr_expect_str_eq(q->where[0]->columns[0], "K");
    cql_stmt_free(s);
}

/* ---------------------------------------------------------------- terms */

Test(parser, terms)
{
    cql_stmt *s = ok("INSERT INTO t (a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s2) VALUES ("
                     "'it''s', $$raw 'x'$$, -42, 1.5e3, NaN, -Infinity, Infinity, TRUE, 0xCAFE, "
                     "01234567-89ab-cdef-0123-456789abcdef, 1h30m, null, [1, 2], {1, 2}, {}, "
                     "{'k': 'v'}, {f1: 1, \"F2\": 'x'}, (1, 'a'), now())");
    ast_insert *in = &s->u.insert;
    cr_assert_eq(in->n_values, 19);
    ast_term **v = in->values;
    cr_expect(v[0]->kind == TERM_LITERAL && v[0]->lit.kind == LIT_STRING);
    cr_expect_str_eq(v[0]->lit.text, "it's");
    cr_expect_eq(v[0]->lit.len, 4);
    cr_expect_str_eq(v[1]->lit.text, "raw 'x'");
    cr_expect(v[2]->lit.kind == LIT_INTEGER);
    cr_expect_str_eq(v[2]->lit.text, "-42");
    cr_expect(v[3]->lit.kind == LIT_FLOAT);
    cr_expect_str_eq(v[4]->lit.text, "NaN");
    cr_expect_str_eq(v[5]->lit.text, "-Infinity");
    cr_expect_str_eq(v[6]->lit.text, "Infinity");
    cr_expect(v[7]->lit.kind == LIT_BOOLEAN);
    cr_expect_str_eq(v[7]->lit.text, "true");
    cr_expect(v[8]->lit.kind == LIT_HEX);
    cr_expect_str_eq(v[8]->lit.text, "0xCAFE");
    cr_expect(v[9]->lit.kind == LIT_UUID);
    cr_expect(v[10]->lit.kind == LIT_DURATION);
    cr_expect_str_eq(v[10]->lit.text, "1h30m");
    cr_expect_eq(v[11]->kind, TERM_NULL);
    cr_expect(v[12]->kind == TERM_LIST && v[12]->n_elems == 2);
    cr_expect(v[13]->kind == TERM_SET && v[13]->n_elems == 2);
    cr_expect(v[14]->kind == TERM_SET && v[14]->n_elems == 0);
    cr_expect(v[15]->kind == TERM_MAP && v[15]->n_elems == 2);
    cr_expect_str_eq(v[15]->elems[1]->lit.text, "v");
    cr_expect(v[16]->kind == TERM_UDT && v[16]->n_elems == 2);
    cr_expect_str_eq(v[16]->field_names[0], "f1");
    cr_expect_str_eq(v[16]->field_names[1], "F2");
    cr_expect(v[17]->kind == TERM_TUPLE && v[17]->n_elems == 2);
    cr_expect(v[18]->kind == TERM_FUNC && v[18]->n_elems == 0);
    cr_expect_str_eq(v[18]->func.name, "now");
    cql_stmt_free(s);
}

Test(parser, cast_function_term)
{
    cql_stmt *s = ok("INSERT INTO t (a) VALUES (CAST(1 AS text))");
    ast_term *v = s->u.insert.values[0];
    cr_expect_eq(v->kind, TERM_FUNC);
    cr_expect_str_eq(v->func.ks, "system");
    cr_expect_str_eq(v->func.name, "castastext");
    cr_expect_eq(v->n_elems, 1);
    cql_stmt_free(s);
    s = ok("CREATE TABLE t (k int PRIMARY KEY) WITH compaction = {'class': 'X', 'enabled': false} "
           "AND caching = {'keys': 'ALL'} AND speculative_retry = ALL");
    cr_expect_str_eq(s->u.create_table.props.items[0].map_values[1], "false");
    cr_expect_eq(s->u.create_table.props.items[2].kind, PROP_IDENT);
    cql_stmt_free(s);
}

Test(parser, casts_and_negation)
{
    cql_stmt *s = ok("INSERT INTO t (a, b, c, d) VALUES ((bigint) 1, (frozen<list<int>>) ?, -(int) 3, "
                     "(ks.my_type) {f: 1})");
    ast_term **v = s->u.insert.values;
    cr_expect(v[0]->kind == TERM_CAST && v[0]->n_elems == 1);
    cr_expect_str_eq(v[0]->cast_type, "bigint");
    cr_expect_str_eq(v[1]->cast_type, "frozen<list<int>>");
    cr_expect_eq(v[2]->kind, TERM_NEG);
    cr_expect_eq(v[2]->elems[0]->kind, TERM_CAST);
    cr_expect_str_eq(v[3]->cast_type, "ks.my_type");
    cql_stmt_free(s);
}

/* ---------------------------------------------------------------- INSERT / UPDATE / DELETE */

Test(parser, insert)
{
    cql_stmt *s = ok("INSERT INTO ks.t (k, \"V\") VALUES (?, :val) IF NOT EXISTS USING TTL 10 AND TIMESTAMP ?");
    ast_insert *in = &s->u.insert;
    cr_expect_eq(s->kind, STMT_INSERT);
    cr_expect_str_eq(in->table.ks, "ks");
    cr_assert_eq(in->n_columns, 2);
    cr_expect_str_eq(in->columns[1], "V");
    cr_expect(in->if_not_exists);
    cr_expect_str_eq(in->using.ttl->lit.text, "10");
    cr_expect_eq(in->using.timestamp->kind, TERM_BIND);
    cr_expect_eq(in->using.timestamp->bind.index, 2);
    cr_expect_eq(s->n_binds, 3);
    cr_expect_str_eq(s->bind_names[1], "val");
    cr_expect_null(in->json);
    cql_stmt_free(s);

    s = ok("INSERT INTO t JSON '{\"k\": 1}' DEFAULT UNSET");
    cr_expect_eq(s->u.insert.json->lit.kind, LIT_STRING);
    cr_expect_str_eq(s->u.insert.json->lit.text, "{\"k\": 1}");
    cr_expect(s->u.insert.json_default_unset);
    cr_expect_null(s->u.insert.columns);
    cql_stmt_free(s);
    s = ok("INSERT INTO t JSON ? DEFAULT NULL IF NOT EXISTS");
    cr_expect_eq(s->u.insert.json->kind, TERM_BIND);
    cr_expect(!s->u.insert.json_default_unset && s->u.insert.if_not_exists);
    cql_stmt_free(s);
}

Test(parser, update)
{
    cql_stmt *s = ok("UPDATE t USING TTL 5 AND TIMESTAMP 7 SET a = 1, c = c + 1, d = d - ?, "
                     "l = [0] + l, m['k'] = 'v', u.f = 3, n = n -1, s += {1}, s2 -= {2} "
                     "WHERE k = 1 AND c IN (1, 2) IF a = 1 AND m['k'] != 'x' AND u.f > 2 AND b IN (1, 2)");
    ast_update *u = &s->u.update;
    cr_expect_eq(s->kind, STMT_UPDATE);
    cr_expect_str_eq(u->using.ttl->lit.text, "5");
    cr_expect_str_eq(u->using.timestamp->lit.text, "7");
    cr_assert_eq(u->n_sets, 9);
    cr_expect(u->sets[0].kind == SET_ASSIGN);
    cr_expect(u->sets[1].kind == SET_ADD);
    cr_expect_str_eq(u->sets[1].column, "c");
    cr_expect(u->sets[2].kind == SET_SUB && u->sets[2].value->kind == TERM_BIND);
    cr_expect(u->sets[3].kind == SET_PREPEND && u->sets[3].value->kind == TERM_LIST);
    cr_expect(u->sets[4].kind == SET_ELEMENT);
    cr_expect_str_eq(u->sets[4].key->lit.text, "k");
    cr_expect(u->sets[5].kind == SET_FIELD);
    cr_expect_str_eq(u->sets[5].field, "f");
    cr_expect(u->sets[6].kind == SET_ADD);
    cr_expect_str_eq(u->sets[6].value->lit.text, "-1");
    cr_expect(u->sets[7].kind == SET_ADD_ASSIGN);
    cr_expect(u->sets[8].kind == SET_SUB_ASSIGN);
    cr_expect_eq(u->n_where, 2);
    cr_expect(!u->if_exists);
    cr_assert_eq(u->n_conds, 4);
    cr_expect(u->conds[0].op == OP_EQ && !u->conds[0].elem && !u->conds[0].field);
    cr_expect(u->conds[1].op == OP_NEQ && u->conds[1].elem);
    cr_expect(u->conds[2].op == OP_GT);
    cr_expect_str_eq(u->conds[2].field, "f");
    cr_expect(u->conds[3].op == OP_IN && u->conds[3].n_in == 2);
    cql_stmt_free(s);

    s = ok("UPDATE t SET v = 1 WHERE k = 1 IF EXISTS");
    cr_expect(s->u.update.if_exists && s->u.update.n_conds == 0);
    cql_stmt_free(s);
    err("UPDATE t SET a = b + 1 WHERE k = 1", "Only expressions of the form X = X +<value> are supported.");
    err("UPDATE t SET a = [1] + b WHERE k = 1", "Only expressions of the form X = <value> + X are supported.");
}

Test(parser, delete)
{
    cql_stmt *s = ok("DELETE a, m['k'], u.f FROM t USING TIMESTAMP 1 WHERE k IN (1, 2) IF EXISTS");
    ast_delete *d = &s->u.del;
    cr_expect_eq(s->kind, STMT_DELETE);
    cr_assert_eq(d->n_targets, 3);
    cr_expect(d->targets[0].key == NULL && d->targets[0].field == NULL);
    cr_expect_str_eq(d->targets[1].key->lit.text, "k");
    cr_expect_str_eq(d->targets[2].field, "f");
    cr_expect_str_eq(d->using.timestamp->lit.text, "1");
    cr_expect(d->if_exists);
    cr_expect(d->where[0]->op == OP_IN && d->where[0]->n_in == 2);
    cql_stmt_free(s);
    s = ok("DELETE FROM t WHERE k = 1 IF v = 2");
    cr_expect_eq(s->u.del.n_targets, 0);
    cr_expect_eq(s->u.del.n_conds, 1);
    cql_stmt_free(s);
    err("DELETE FROM t USING TTL 1 WHERE k = 1",
        "line 1:20 mismatched input 'TTL' expecting K_TIMESTAMP (DELETE FROM t USING [TTL]...)");
}

Test(parser, batch)
{
    cql_stmt *s = ok("BEGIN UNLOGGED BATCH USING TIMESTAMP ? "
                     "INSERT INTO t (a, b) VALUES (?, ?); UPDATE t SET a = :x WHERE k = ? "
                     "DELETE FROM t WHERE k = ?; APPLY BATCH;");
    ast_batch *b = &s->u.batch;
    cr_expect_eq(s->kind, STMT_BATCH);
    cr_expect_eq(b->kind, BATCH_UNLOGGED);
    cr_expect_eq(b->using.timestamp->bind.index, 0);
    cr_assert_eq(b->n_stmts, 3);
    cr_expect_eq(b->stmts[0]->kind, STMT_INSERT);
    cr_expect_eq(b->stmts[1]->kind, STMT_UPDATE);
    cr_expect_eq(b->stmts[2]->kind, STMT_DELETE);
    cr_expect_eq(s->n_binds, 6);
    cr_expect_eq(b->stmts[0]->n_binds, 2);
    cr_expect_eq(b->stmts[0]->u.insert.values[1]->bind.index, 2);
    cr_expect_eq(b->stmts[1]->n_binds, 2);
    cr_expect_str_eq(b->stmts[1]->bind_names[0], "x");
    cr_expect_eq(b->stmts[2]->u.del.where[0]->value->bind.index, 5);
    cr_expect_str_eq(b->stmts[0]->text, "INSERT INTO t (a, b) VALUES (?, ?)");
    cql_stmt_free(s);
    s = ok("BEGIN COUNTER BATCH UPDATE t SET c = c + 1 WHERE k = 1 APPLY BATCH");
    cr_expect_eq(s->u.batch.kind, BATCH_COUNTER);
    cql_stmt_free(s);
    s = ok("BEGIN BATCH APPLY BATCH");
    cr_expect(s->u.batch.kind == BATCH_LOGGED && s->u.batch.n_stmts == 0);
    cql_stmt_free(s);
    bad("BEGIN BATCH SELECT * FROM t APPLY BATCH");
}

Test(parser, bind_numbering)
{
    cql_stmt *s = ok("SELECT * FROM t WHERE a = :x AND b = ? AND c = :x AND d IN (?, :y) LIMIT :lim");
    cr_expect_eq(s->n_binds, 6);
    const char *names[] = { "x", NULL, "x", NULL, "y", "lim" };
    for (int i = 0; i < 6; i++) {
        if (names[i])
            cr_expect_str_eq(s->bind_names[i], names[i]);
        else
            cr_expect_null(s->bind_names[i]);
    }
    cr_expect_eq(s->u.select.where[2]->value->bind.index, 2);
    cr_expect_eq(s->u.select.limit->bind.index, 5);
    cql_stmt_free(s);
}

/* ---------------------------------------------------------------- misc statements */

Test(parser, use_truncate_comments)
{
    cql_stmt *s = ok("  -- leading comment\nUSE \"MyKs\" /* trailing */ ;\n");
    cr_expect_eq(s->kind, STMT_USE);
    cr_expect_str_eq(s->u.use_keyspace, "MyKs");
    cql_stmt_free(s);
    s = ok("TRUNCATE TABLE ks.t");
    cr_expect_eq(s->kind, STMT_TRUNCATE);
    cr_expect_str_eq(s->u.drop.name.ks, "ks");
    cr_expect_str_eq(s->u.drop.name.name, "t");
    cql_stmt_free(s);
    s = ok("truncate t;;");
    cr_expect_str_eq(s->u.drop.name.name, "t");
    cql_stmt_free(s);
    s = ok("SELECT * // a comment\nFROM t -- another\n");
    cr_expect_str_eq(s->u.select.table.name, "t");
    cql_stmt_free(s);
}

/* ---------------------------------------------------------------- DDL */

Test(parser, keyspace)
{
    cql_stmt *s = ok("CREATE KEYSPACE IF NOT EXISTS Ks WITH replication = {'class': 'SimpleStrategy', "
                     "'replication_factor': 1} AND durable_writes = false");
    ast_keyspace_def *k = &s->u.keyspace;
    cr_expect_eq(s->kind, STMT_CREATE_KEYSPACE);
    cr_expect_str_eq(k->name, "ks");
    cr_expect(k->if_not_exists);
    cr_assert_eq(k->props.n, 2);
    cr_expect_str_eq(k->props.items[0].name, "replication");
    cr_expect_eq(k->props.items[0].kind, PROP_MAP);
    cr_assert_eq(k->props.items[0].n_map, 2);
    cr_expect_str_eq(k->props.items[0].map_keys[1], "replication_factor");
    cr_expect_str_eq(k->props.items[0].map_values[1], "1");
    cr_expect_str_eq(k->props.items[0].map_values[0], "SimpleStrategy");
    cr_expect_eq(k->props.items[1].kind, PROP_BOOL);
    cr_expect_str_eq(k->props.items[1].value, "false");
    cql_stmt_free(s);
    s = ok("ALTER KEYSPACE ks WITH durable_writes = true");
    cr_expect_eq(s->kind, STMT_ALTER_KEYSPACE);
    cql_stmt_free(s);
    s = ok("DROP KEYSPACE IF EXISTS ks");
    cr_expect(s->kind == STMT_DROP_KEYSPACE && s->u.keyspace.if_exists);
    cql_stmt_free(s);
    err("CREATE KEYSPACE ks WITH a = 1 AND a = 2", "Multiple definition for property a");
}

Test(parser, create_table)
{
    cql_stmt *s = ok("CREATE TABLE IF NOT EXISTS ks.t (k int, k2 text, c timestamp, "
                     "v frozen<map<text, list<int>>>, s int static, u ks.\"Addr\", t tuple<int, text>, "
                     "PRIMARY KEY ((k, k2), c)) WITH CLUSTERING ORDER BY (c DESC) AND "
                     "compaction = {'class': 'LeveledCompactionStrategy'} AND gc_grace_seconds = 0 "
                     "AND comment = 'x' AND COMPACT STORAGE");
    ast_create_table *t = &s->u.create_table;
    cr_expect_eq(s->kind, STMT_CREATE_TABLE);
    cr_expect(t->if_not_exists);
    cr_assert_eq(t->n_cols, 7);
    cr_expect_str_eq(t->cols[2].type, "timestamp");
    cr_expect_str_eq(t->cols[3].type, "frozen<map<text, list<int>>>");
    cr_expect(t->cols[4].is_static);
    cr_expect_str_eq(t->cols[5].type, "ks.\"Addr\"");
    cr_expect_str_eq(t->cols[6].type, "tuple<int, text>");
    cr_assert_eq(t->n_pk, 2);
    cr_expect_str_eq(t->pk[1], "k2");
    cr_assert_eq(t->n_ck, 1);
    cr_expect_str_eq(t->ck[0], "c");
    cr_assert_eq(t->n_clustering_order, 1);
    cr_expect(t->clustering_order[0].desc);
    cr_expect(t->compact_storage);
    cr_assert_eq(t->props.n, 3);
    cr_expect_eq(t->props.items[0].kind, PROP_MAP);
    cr_expect_eq(t->props.items[1].kind, PROP_NUMBER);
    cr_expect_eq(t->props.items[2].kind, PROP_STRING);
    cql_stmt_free(s);

    s = ok("CREATE TABLE t (key int PRIMARY KEY, Value TEXT,)");
    t = &s->u.create_table;
    cr_expect(t->cols[0].primary_key && t->n_pk == 0);
    cr_expect_str_eq(t->cols[0].name, "key");
    cr_expect_str_eq(t->cols[1].name, "value");
    cr_expect_str_eq(t->cols[1].type, "text");
    cql_stmt_free(s);
    s = ok("CREATE COLUMNFAMILY t (a int, b int, PRIMARY KEY (a, b))");
    cr_expect(s->u.create_table.n_pk == 1 && s->u.create_table.n_ck == 1);
    cql_stmt_free(s);
}

Test(parser, alter_drop_table)
{
    cql_stmt *s = ok("ALTER TABLE t ADD v int static");
    ast_alter_table *a = &s->u.alter_table;
    cr_expect(a->kind == ALTER_ADD && a->n_cols == 1 && a->cols[0].is_static);
    cr_expect_eq(a->drop_timestamp, INT64_MIN);
    cql_stmt_free(s);
    s = ok("ALTER TABLE ks.t ADD (a int, b list<text>)");
    a = &s->u.alter_table;
    cr_expect(a->kind == ALTER_ADD && a->n_cols == 2);
    cr_expect_str_eq(a->cols[1].type, "list<text>");
    cql_stmt_free(s);
    s = ok("ALTER TABLE t DROP (a, b) USING TIMESTAMP 1234");
    a = &s->u.alter_table;
    cr_expect(a->kind == ALTER_DROP && a->n_cols == 2 && a->drop_timestamp == 1234);
    cql_stmt_free(s);
    s = ok("ALTER TABLE t DROP v");
    cr_expect(s->u.alter_table.kind == ALTER_DROP && s->u.alter_table.n_cols == 1);
    cql_stmt_free(s);
    s = ok("ALTER TABLE t RENAME a TO b AND c TO d");
    a = &s->u.alter_table;
    cr_expect(a->kind == ALTER_RENAME && a->n_renames == 2);
    cr_expect_str_eq(a->rename_to[1], "d");
    cql_stmt_free(s);
    s = ok("ALTER TABLE t WITH comment = 'x' AND default_time_to_live = 10");
    cr_expect(s->u.alter_table.kind == ALTER_WITH && s->u.alter_table.props.n == 2);
    cql_stmt_free(s);
    s = ok("ALTER TABLE t ALTER v TYPE blob");
    cr_expect(s->u.alter_table.kind == ALTER_TYPE_CHANGE);
    cr_expect_str_eq(s->u.alter_table.cols[0].type, "blob");
    cql_stmt_free(s);
    s = ok("ALTER TABLE t DROP COMPACT STORAGE");
    cr_expect(s->u.alter_table.kind == ALTER_DROP_COMPACT);
    cql_stmt_free(s);
    s = ok("DROP TABLE IF EXISTS ks.t");
    cr_expect(s->kind == STMT_DROP_TABLE && s->u.drop.if_exists);
    cr_expect_str_eq(s->u.drop.name.ks, "ks");
    cql_stmt_free(s);
}

Test(parser, types)
{
    cql_stmt *s = ok("CREATE TYPE IF NOT EXISTS ks.addr (street text, zip int, tags set<text>)");
    ast_type_def *t = &s->u.type_def;
    cr_expect(s->kind == STMT_CREATE_TYPE && t->if_not_exists && t->n_fields == 3);
    cr_expect_str_eq(t->name.ks, "ks");
    cr_expect_str_eq(t->field_types[2], "set<text>");
    cql_stmt_free(s);
    s = ok("ALTER TYPE addr ADD city text");
    cr_expect(s->kind == STMT_ALTER_TYPE && s->u.type_def.alter_add && s->u.type_def.n_fields == 1);
    cql_stmt_free(s);
    s = ok("ALTER TYPE addr RENAME a TO b AND c TO d");
    cr_expect(s->u.type_def.alter_rename && s->u.type_def.n_renames == 2);
    cql_stmt_free(s);
    s = ok("DROP TYPE IF EXISTS addr");
    cr_expect(s->kind == STMT_DROP_TYPE && s->u.drop.if_exists);
    cql_stmt_free(s);
}

Test(parser, indexes)
{
    cql_stmt *s = ok("CREATE INDEX ON t (v)");
    ast_create_index *ix = &s->u.create_index;
    cr_expect(s->kind == STMT_CREATE_INDEX && ix->name == NULL);
    cr_expect_str_eq(ix->target_kind, "");
    cr_expect_str_eq(ix->target_column, "v");
    cql_stmt_free(s);
    s = ok("CREATE INDEX IF NOT EXISTS idx ON ks.t (keys(m))");
    ix = &s->u.create_index;
    cr_expect(ix->if_not_exists);
    cr_expect_str_eq(ix->name, "idx");
    cr_expect_str_eq(ix->target_kind, "keys");
    cql_stmt_free(s);
    s = ok("CREATE INDEX i2 ON t (values(l))");
    cr_expect_str_eq(s->u.create_index.target_kind, "values");
    cql_stmt_free(s);
    s = ok("CREATE INDEX ON t (entries(m))");
    cr_expect_str_eq(s->u.create_index.target_kind, "entries");
    cql_stmt_free(s);
    s = ok("CREATE INDEX ON t (full(fl))");
    cr_expect_str_eq(s->u.create_index.target_kind, "full");
    cql_stmt_free(s);
    s = ok("CREATE INDEX ON t (keys)");   /* a column named keys */
    cr_expect_str_eq(s->u.create_index.target_kind, "");
    cr_expect_str_eq(s->u.create_index.target_column, "keys");
    cql_stmt_free(s);
    s = ok("CREATE CUSTOM INDEX ci ON t (v) USING 'org.example.Idx' WITH OPTIONS = {'mode': 'CONTAINS'}");
    ix = &s->u.create_index;
    cr_expect_str_eq(ix->using_class, "org.example.Idx");
    cr_expect_str_eq(ix->props.items[0].name, "options");
    cr_expect_str_eq(ix->props.items[0].map_values[0], "CONTAINS");
    cql_stmt_free(s);
    s = ok("DROP INDEX IF EXISTS ks.idx");
    cr_expect(s->kind == STMT_DROP_INDEX && s->u.drop.if_exists);
    cql_stmt_free(s);
}

Test(parser, views)
{
    cql_stmt *s = ok("CREATE MATERIALIZED VIEW IF NOT EXISTS ks.v AS SELECT k, c, v FROM ks.t "
                     "WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY ((c), k) "
                     "WITH CLUSTERING ORDER BY (k DESC) AND comment = 'x'");
    ast_create_view *v = &s->u.create_view;
    cr_expect(s->kind == STMT_CREATE_VIEW && v->if_not_exists);
    cr_expect_str_eq(v->view.name, "v");
    cr_expect_str_eq(v->base.ks, "ks");
    cr_expect_str_eq(v->base.name, "t");
    cr_expect_eq(v->select->n_sels, 3);
    cr_expect_eq(v->select->n_where, 2);
    cr_expect_str_eq(v->where_text, "k IS NOT NULL AND c IS NOT NULL");
    cr_expect(v->n_pk == 1 && v->n_ck == 1);
    cr_expect(v->n_clustering_order == 1 && v->clustering_order[0].desc);
    cr_expect_eq(v->props.n, 1);
    cql_stmt_free(s);
    s = ok("ALTER MATERIALIZED VIEW v WITH comment = 'y'");
    cr_expect(s->kind == STMT_ALTER_VIEW && s->u.alter_view.props.n == 1);
    cql_stmt_free(s);
    s = ok("DROP MATERIALIZED VIEW IF EXISTS ks.v");
    cr_expect(s->kind == STMT_DROP_VIEW && s->u.drop.if_exists);
    cql_stmt_free(s);
}

Test(parser, functions_aggregates)
{
    cql_stmt *s = ok("CREATE OR REPLACE FUNCTION ks.f (a int, b text) CALLED ON NULL INPUT "
                     "RETURNS int LANGUAGE java AS 'return a;'");
    cr_expect_eq(s->kind, STMT_CREATE_FUNCTION);
    cr_expect_str_eq(s->u.drop.name.name, "f");
    cql_stmt_free(s);
    s = ok("CREATE FUNCTION IF NOT EXISTS f () RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE lua AS $$ x $$");
    cr_expect_eq(s->kind, STMT_CREATE_FUNCTION);
    cql_stmt_free(s);
    s = ok("CREATE AGGREGATE ks.agg (int) SFUNC f STYPE int FINALFUNC g INITCOND 0");
    cr_expect_eq(s->kind, STMT_CREATE_AGGREGATE);
    cql_stmt_free(s);
    s = ok("DROP FUNCTION IF EXISTS ks.f (int, text)");
    cr_expect(s->kind == STMT_DROP_FUNCTION && s->u.drop.if_exists);
    cql_stmt_free(s);
    s = ok("DROP AGGREGATE agg");
    cr_expect_eq(s->kind, STMT_DROP_AGGREGATE);
    cql_stmt_free(s);
}

static void desc(const char *q, ast_describe_kind k, const char *ks, const char *name, bool only, bool internals)
{
    cql_stmt *s = ok(q);
    cr_expect_eq(s->kind, STMT_DESCRIBE, "%s", q);
    ast_describe *d = &s->u.describe;
    cr_expect_eq(d->kind, k, "%s: kind %d", q, d->kind);
    if (ks)
        cr_expect_str_eq(d->name.ks, ks, "%s", q);
    else
        cr_expect_null(d->name.ks, "%s", q);
    if (name)
        cr_expect_str_eq(d->name.name, name, "%s", q);
    else
        cr_expect_null(d->name.name, "%s", q);
    cr_expect_eq(d->only, only, "%s", q);
    cr_expect_eq(d->with_internals, internals, "%s", q);
    cql_stmt_free(s);
}

Test(parser, describe)
{
    desc("DESCRIBE CLUSTER", DESC_CLUSTER, NULL, NULL, false, false);
    desc("DESC KEYSPACES", DESC_KEYSPACES, NULL, NULL, false, false);
    desc("DESCRIBE KEYSPACE", DESC_KEYSPACE, NULL, NULL, false, false);
    desc("DESCRIBE ONLY KEYSPACE ks WITH INTERNALS", DESC_KEYSPACE, NULL, "ks", true, true);
    desc("describe keyspace \"Ks\";", DESC_KEYSPACE, NULL, "Ks", false, false);
    desc("DESCRIBE TABLES", DESC_TABLES, NULL, NULL, false, false);
    desc("DESCRIBE TABLE ks.t", DESC_TABLE, "ks", "t", false, false);
    desc("DESC COLUMNFAMILY t", DESC_TABLE, NULL, "t", false, false);
    desc("DESCRIBE SCHEMA", DESC_SCHEMA, NULL, NULL, false, false);
    desc("DESCRIBE FULL SCHEMA", DESC_FULL_SCHEMA, NULL, NULL, false, false);
    desc("DESCRIBE TYPES", DESC_TYPES, NULL, NULL, false, false);
    desc("DESCRIBE TYPE ks.addr", DESC_TYPE, "ks", "addr", false, false);
    desc("DESCRIBE FUNCTIONS", DESC_FUNCTIONS, NULL, NULL, false, false);
    desc("DESCRIBE FUNCTION ks.f", DESC_FUNCTION, "ks", "f", false, false);
    desc("DESCRIBE AGGREGATES", DESC_AGGREGATES, NULL, NULL, false, false);
    desc("DESCRIBE AGGREGATE a", DESC_AGGREGATE, NULL, "a", false, false);
    desc("DESCRIBE INDEX ks.i", DESC_INDEX, "ks", "i", false, false);
    desc("DESCRIBE MATERIALIZED VIEW v", DESC_MATERIALIZED_VIEW, NULL, "v", false, false);
    desc("DESCRIBE ks", DESC_GENERIC, NULL, "ks", false, false);
    desc("DESC ks.t WITH INTERNALS", DESC_GENERIC, "ks", "t", false, true);
    desc("DESCRIBE keyspaces.t", DESC_GENERIC, "keyspaces", "t", false, false);
    desc("DESCRIBE only", DESC_GENERIC, NULL, "only", false, false);
    err("DESCRIBE ONLY ks", "line 1:14 mismatched input 'ks' expecting EOF (DESCRIBE ONLY [ks])");
}

Test(parser, auth_errors)
{
    err("GRANT", "line 0:-1 no viable alternative at input '<EOF>'");
    err("GRANT SELECT ON ks.t", "line 0:-1 mismatched input '<EOF>' expecting K_TO");
    err("CREATE ROLE ? WITH LOGIN = true", "Bind variables cannot be used for role names");
    err("CREATE USER \"Bob\"", "Quoted strings are are not supported for user names and USER is deprecated, please use ROLE");
    err("CREATE ROLE r WITH LOGIN = 1", "line 1:27 mismatched input '1' expecting BOOLEAN (...ROLE r WITH LOGIN = [1])");
    err("LIST FOO", NULL);
    err("CREATE ROLE r WITH PASSWORD 'x'", NULL);
}

Test(parser, auth)
{
    struct { const char *q, *verb; } cases[] = {
        { "CREATE ROLE IF NOT EXISTS bob WITH PASSWORD = 'x' AND LOGIN = true", "CREATE ROLE" },
        { "ALTER ROLE bob WITH SUPERUSER = false", "ALTER ROLE" },
        { "DROP ROLE IF EXISTS bob", "DROP ROLE" },
        { "CREATE USER alice WITH PASSWORD 'p' NOSUPERUSER", "CREATE USER" },
        { "ALTER USER alice WITH PASSWORD 'q'", "ALTER USER" },
        { "DROP USER alice", "DROP USER" },
        { "GRANT SELECT ON ALL KEYSPACES TO bob", "GRANT" },
        { "GRANT admin TO bob", "GRANT" },
        { "REVOKE MODIFY ON KEYSPACE ks FROM bob", "REVOKE" },
        { "LIST ROLES", "LIST ROLES" },
        { "LIST USERS", "LIST USERS" },
        { "LIST ALL PERMISSIONS OF bob", "LIST PERMISSIONS" },
        { "LIST SELECT ON TABLE ks.t", "LIST PERMISSIONS" },
        { "LIST ROLES OF bob NORECURSIVE", "LIST ROLES" },
        { "GRANT ALL PERMISSIONS ON ALL TABLES IN KEYSPACE ks TO 'bob'", "GRANT" },
        { "GRANT EXECUTE ON FUNCTION ks.f(int, text) TO r", "GRANT" },
        { "GRANT SELECT PERMISSION, MODIFY ON ks.t TO r", "GRANT" },
        { "REVOKE ALL ON ALL FUNCTIONS IN KEYSPACE ks FROM r", "REVOKE" },
        { "GRANT DESCRIBE ON ALL MBEANS TO r", "GRANT" },
        { "GRANT SELECT ON MBEAN 'org.apache.cassandra.db:type=Tables' TO r", "GRANT" },
        { "REVOKE admin FROM bob", "REVOKE" },
        { "CREATE ROLE r WITH OPTIONS = {'a': 'b'} AND ACCESS TO DATACENTERS {'dc1', 'dc2'}", "CREATE ROLE" },
        { "ALTER ROLE r WITH HASHED PASSWORD = 'x' AND ACCESS TO ALL DATACENTERS", "ALTER ROLE" },
        { "CREATE USER IF NOT EXISTS 'u' WITH HASHED PASSWORD 'h' SUPERUSER", "CREATE USER" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cql_stmt *s = ok(cases[i].q);
        cr_expect_eq(s->kind, STMT_AUTH, "%s", cases[i].q);
        cr_expect_str_eq(s->u.auth.verb, cases[i].verb, "%s", cases[i].q);
        cql_stmt_free(s);
    }
}

/* What the executor needs from each auth statement: names (case rules of
 * roleName and username), options with the grammar's defaults, and the
 * resource. */
Test(parser, auth_fields)
{
    cql_stmt *s = ok("CREATE ROLE IF NOT EXISTS Bob WITH PASSWORD = 'Pw' AND SUPERUSER = TRUE");
    const ast_auth *a = &s->u.auth;
    cr_expect_eq(a->kind, AUTH_CREATE_ROLE);
    cr_expect(a->if_exists);
    cr_expect_str_eq(a->role, "bob");                         /* an identifier is folded */
    cr_expect_eq(a->opts, ROLEOPT_PASSWORD | ROLEOPT_SUPERUSER | ROLEOPT_LOGIN);
    cr_expect(a->superuser);
    cr_expect(!a->login);                                     /* CREATE ROLE: LOGIN false by default */
    cr_expect_str_eq(a->password, "Pw");
    cql_stmt_free(s);

    s = ok("CREATE USER Alice WITH PASSWORD 'x'");
    a = &s->u.auth;
    cr_expect_str_eq(a->role, "Alice");                       /* a user name keeps its case */
    cr_expect(a->user_form);
    cr_expect(a->login);                                      /* CREATE USER: LOGIN true */
    cr_expect_eq(a->opts, ROLEOPT_PASSWORD | ROLEOPT_SUPERUSER | ROLEOPT_LOGIN);
    cr_expect(!a->superuser);
    cql_stmt_free(s);

    s = ok("CREATE ROLE 'Quoted Name'");
    cr_expect_str_eq(s->u.auth.role, "Quoted Name");
    cql_stmt_free(s);

    s = ok("ALTER USER alice SUPERUSER");
    cr_expect_eq(s->u.auth.opts, ROLEOPT_SUPERUSER);
    cr_expect(s->u.auth.superuser);
    cql_stmt_free(s);

    s = ok("ALTER ROLE r WITH LOGIN = false");
    cr_expect_eq(s->u.auth.opts, ROLEOPT_LOGIN);
    cr_expect(!s->u.auth.login);
    cql_stmt_free(s);

    s = ok("GRANT admin TO \"Bob\"");
    cr_expect_eq(s->u.auth.kind, AUTH_GRANT_ROLE);
    cr_expect_str_eq(s->u.auth.role, "admin");
    cr_expect_str_eq(s->u.auth.grantee, "Bob");
    cql_stmt_free(s);

    s = ok("GRANT SELECT, MODIFY ON TABLE ks.t TO r");
    cr_expect_eq(s->u.auth.kind, AUTH_GRANT_PERMS);
    cr_expect_eq(s->u.auth.perms, PERM_SELECT | PERM_MODIFY);
    cr_expect_eq(s->u.auth.res.kind, RES_TABLE);
    cr_expect_str_eq(s->u.auth.res.ks, "ks");
    cr_expect_str_eq(s->u.auth.res.name, "t");
    cql_stmt_free(s);

    s = ok("LIST ALL PERMISSIONS ON ALL TABLES IN KEYSPACE ks OF bob NORECURSIVE");
    cr_expect_eq(s->u.auth.kind, AUTH_LIST_PERMS);
    cr_expect_eq(s->u.auth.perms, PERM_ALL);
    cr_expect_eq(s->u.auth.res.kind, RES_ALL_TABLES);
    cr_expect_str_eq(s->u.auth.role, "bob");
    cr_expect(!s->u.auth.recursive);
    cql_stmt_free(s);

    err("CREATE ROLE r WITH LOGIN = true AND LOGIN = false", "Multiple definition for property 'LOGIN'");
    err("CREATE ROLE r WITH PASSWORD = 'a' AND HASHED PASSWORD = 'b'",
        "Options 'password' and 'hashed password' are mutually exclusive");
}

/* ---------------------------------------------------------------- errors */

Test(parser, cassandra_error_messages)
{
    err("SELECT * FORM ks.t", "line 1:9 mismatched input 'FORM' expecting K_FROM (SELECT * [FORM]...)");
    err("SELEC * FROM t", "line 1:0 no viable alternative at input 'SELEC' ([SELEC]...)");
    err("SELECT * FROM t WHERE a = 'abc", "line 1:30 mismatched character '<EOF>' expecting '''");
    err("SELECT * FROM t; SELECT * FROM t",
        "line 1:17 mismatched input 'SELECT' expecting EOF (SELECT * FROM t; [SELECT]...)");
    err("DROP cqlkeyspace.t;", "line 1:5 no viable alternative at input 'cqlkeyspace' ([DROP] cqlkeyspace...)");
    err("DELETE cqlkeyspace.t;", "line 1:20 mismatched input ';' expecting K_FROM (DELETE cqlkeyspace.t[;])");
    err("select*\n;", "line 2:0 mismatched input ';' expecting K_FROM (select*[;])");
    err("SELECT FROM t", "line 1:7 no viable alternative at input 'FROM' (SELECT [FROM]...)");
    err("SELECT * FROM", "line 0:-1 no viable alternative at input '<EOF>'");
    err("UPDATE t SET", "line 0:-1 no viable alternative at input '<EOF>'");
    err("INSERT INTO t (a) VALUES", "line 0:-1 mismatched input '<EOF>' expecting '('");
    err("SELECT * zeppelin.albums;", "line 1:9 mismatched input 'zeppelin' expecting K_FROM (SELECT * [zeppelin]...)");
    err("", "line 0:-1 no viable alternative at input '<EOF>'");
    err("SELECT * FROM t WHERE k = 1 AND @", "line 1:32 no viable alternative at character '@'");
}

Test(parser, reserved_keyword_as_identifier)
{
    err("CREATE TABLE select (a int PRIMARY KEY)",
        "line 1:13 no viable alternative at input 'select' (CREATE TABLE [select]...)");
    err("SELECT * FROM t WHERE from = 1", NULL);
    err("INSERT INTO t (table) VALUES (1)", NULL);
    cql_stmt *s = ok("CREATE TABLE \"select\" (\"from\" int PRIMARY KEY, key int, type text, ttl int)");
    cr_expect_str_eq(s->u.create_table.table.name, "select");
    cr_expect_str_eq(s->u.create_table.cols[0].name, "from");
    cr_expect_str_eq(s->u.create_table.cols[2].name, "type");
    cql_stmt_free(s);
}

Test(parser, long_line_snippet)
{
    static char q[12000];
    strcpy(q, "SELECT * FROM t WHERE k IN (");
    for (int i = 0; i < 2000; i++)
        strcat(q, i ? ",1" : "1");
    strcat(q, ") FORM");
    cs_error e;
    cs_error_init(&e);
    cr_assert_null(cql_parse(q, strlen(q), &e));
    cr_expect_str_eq(e.msg, "line 1:4029 mismatched input 'FORM' expecting EOF (...,1,1,1,1) [FORM])");
}

/* Messages are bounded; a cut must not split a UTF-8 sequence. */
Test(parser, long_message_stays_utf8)
{
    static char q[8000];
    for (int shift = 0; shift < 3; shift++) {
        strcpy(q, "SELECT * FROM t WHERE k = '");
        for (int i = 0; i < shift; i++)
            strcat(q, "a");
        for (int i = 0; i < 1500; i++)
            strcat(q, "\xc3\xa9");
        strcat(q, "' FORM");
        cs_error e;
        cs_error_init(&e);
        cr_assert_null(cql_parse(q, strlen(q), &e));
        size_t n = strlen(e.msg);
        cr_assert_gt(n, 100);
        /* valid UTF-8: every lead byte has its continuation bytes */
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)e.msg[i];
            if (c == 0xC3) {
                cr_assert_lt(i + 1, n, "cut sequence at the end");
                cr_assert_eq((unsigned char)e.msg[i + 1], 0xA9);
            }
        }
    }
}

Test(parser, misc_errors)
{
    bad("SELECT * FROM t LIMIT");
    bad("SELECT * FROM t WHERE a = 1 AND");
    bad("INSERT INTO t (a) VALUES (1");
    bad("UPDATE t SET a = 1");
    bad("CREATE TABLE t (a int PRIMARY KEY");
    bad("CREATE KEYSPACE ks");
    bad("ALTER TABLE t");
    bad("DESCRIBE");
    bad("BEGIN BATCH INSERT INTO t (a) VALUES (1)");
    bad("SELECT * FROM t WHERE a = \"\"");
    bad("USE ?");
    err("SELECT * FROM t WHERE a = 1 AND b c",
        "line 1:34 no viable alternative at input 'c' (...WHERE a = 1 AND [b] c)");
    err("UPDATE t SET a b WHERE k = 1", "line 1:15 no viable alternative at input 'b' (UPDATE t SET a [b]...)");
    err("ALTER TABLE t WITH CLUSTERING ORDER BY (c DESC)",
        "line 1:30 mismatched input 'ORDER' expecting '=' (ALTER TABLE t WITH CLUSTERING [ORDER]...)");
    bad("ALTER TABLE t WITH COMPACT STORAGE");
    bad("ALTER MATERIALIZED VIEW v WITH CLUSTERING ORDER BY (c DESC)");
    bad("CREATE TABLE t (a int PRIMARY KEY) WITH CLUSTERING ORDER BY (a)");
    err("INSERT INTO t VALUES (1)", "line 1:14 no viable alternative at input 'VALUES' (INSERT INTO t [VALUES]...)");
    err("CREATE TABLE t (a int PRIMARY KEY) WITH caching = keys_only", NULL);
    err("CREATE KEYSPACE k WITH replication = {'a': ?}",
        "Invalid property value: ? for property: 'a' (bind variables are not supported in DDL queries)");
    err("CREATE KEYSPACE k WITH replication = {'a': 1, 'a': 2}", "Multiple definition for property a");
    err("CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k) WITH COMPACT STORAGE",
        "COMPACT STORAGE tables are not allowed starting with version 4.0");
    err("CREATE TABLE t (a int PRIMARY KEY) WITH comment = 'a' AND comment = 'b'",
        "Multiple definition for property comment");
    err("SELECT * FROM t\nWHERE a = 1\n  GARBAGE",
        "line 3:2 mismatched input 'GARBAGE' expecting EOF (...tWHERE a = 1  [GARBAGE])");
}

/* ---------------------------------------------------------------- robustness */

Test(parser, oom_stepping)
{
    const char *q = "SELECT a, count(*) FROM ks.t WHERE k IN (1, 2, 3) AND c > ? LIMIT 10";
    for (long n = 1; n < 200; n++) {
        cs_error e;
        cs_error_init(&e);
        cs_alloc_fail_nth(n);
        cql_stmt *s = cql_parse(q, strlen(q), &e);
        cs_alloc_fail_nth(0);
        if (s) {
            cql_stmt_free(s);
            break;
        }
        cr_expect(e.code >= 0);
    }
}

static const char *corpus[] = {
    "SELECT a, b AS c, count(*), writetime(v) FROM ks.t WHERE k = ? AND (a, b) IN ((1, 2)) LIMIT 5",
    "INSERT INTO t (a, b) VALUES ('x''y', {1: [2], 3: [4]}) IF NOT EXISTS USING TTL 1",
    "UPDATE t SET m['a'] = 1, l = [1] + l, c = c - 1 WHERE k = 1 IF x.y = 2 AND z IN (1)",
    "DELETE m['k'], u.f FROM t USING TIMESTAMP 3 WHERE k = :k IF EXISTS",
    "BEGIN UNLOGGED BATCH INSERT INTO t (a) VALUES (?); DELETE FROM t WHERE k = 1; APPLY BATCH",
    "CREATE TABLE ks.t (k int, c text, v frozen<map<text, tuple<int, blob>>>, PRIMARY KEY ((k), c)) "
    "WITH CLUSTERING ORDER BY (c DESC) AND compaction = {'class': 'x', 'n': -1}",
    "CREATE MATERIALIZED VIEW v AS SELECT * FROM t WHERE k IS NOT NULL PRIMARY KEY (k)",
    "CREATE CUSTOM INDEX IF NOT EXISTS i ON t (entries(m)) USING 'sai' WITH OPTIONS = {'a': 'b'}",
    "DESCRIBE ONLY KEYSPACE ks WITH INTERNALS",
    "SELECT * FROM t WHERE token(k) > -9223372036854775808 AND d = 1h30m AND u = 01234567-89ab-cdef-0123-456789abcdef",
    "INSERT INTO t (a) VALUES ($$dollar$$) -- c\n",
    "SELECT \"Quoted\"\"Name\" FROM \"Ks\".\"T\" /* block */ WHERE x = 0xff",
    "ALTER TABLE ks.t WITH comment = 'x' AND compaction = {'class': 'LeveledCompactionStrategy'}",
    "ALTER TABLE t ADD IF NOT EXISTS (a int, b frozen<list<text>>)",
    "ALTER TABLE t RENAME a TO b AND c TO d",
    "ALTER TYPE ks.ty ADD f map<int, text>",
    "ALTER MATERIALIZED VIEW ks.v WITH comment = 'c'",
    "CREATE TYPE ks.ty (a int, b text)",
    "CREATE KEYSPACE ks WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND durable_writes = true",
    "CREATE OR REPLACE FUNCTION ks.f (a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return a;'",
    "CREATE AGGREGATE ks.a (int) SFUNC f STYPE int FINALFUNC g INITCOND (0, 1)",
    "GRANT SELECT ON ALL TABLES IN KEYSPACE ks TO r",
    "CREATE ROLE r WITH PASSWORD = 'p' AND LOGIN = true AND OPTIONS = {'a': 1}",
    "LIST ALL PERMISSIONS ON KEYSPACE ks OF r NORECURSIVE",
    "UPDATE ks.t USING TTL ? SET s = s + {1}, l[0] = 'x' WHERE (a, b) = (1, 2) AND k IN ?",
    "SELECT JSON DISTINCT k, CAST(v AS text) AS c, m['a'..'b'] FROM t WHERE k = 1 GROUP BY k ORDER BY c DESC PER PARTITION LIMIT 1",
    "DROP INDEX IF EXISTS ks.i",
    "TRUNCATE TABLE ks.t",
    "DESCRIBE MATERIALIZED VIEW ks.v",
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void try_parse(const char *q, size_t n)
{
    cs_error e;
    cs_error_init(&e);
    cql_stmt *s = cql_parse(q, n, &e);
    if (s)
        cql_stmt_free(s);
    else
        cr_assert(e.code == CS_ERR_SYNTAX || e.code == CS_ERR_SERVER, "no error set for %.*s", (int)n, q);
}

Test(parser, deep_nesting_is_refused)
{
    size_t n = 200000;
    char *q = malloc(n + 64);
    strcpy(q, "SELECT * FROM t WHERE a = ");
    size_t o = strlen(q);
    for (size_t i = 0; i < n; i++)
        q[o++] = "([{"[i % 3];
    q[o] = 0;
    cs_error e;
    cs_error_init(&e);
    cql_stmt *s = cql_parse(q, o, &e);
    cr_expect_null(s);
    cr_expect_eq(e.code, CS_ERR_SYNTAX);
    cr_expect(strstr(e.msg, "too deeply nested") != NULL, "%s", e.msg);
    strcpy(q, "SELECT * FROM t WHERE ");
    o = strlen(q);
    for (size_t i = 0; i < 1000; i++)
        q[o++] = '(';
    q[o] = 0;
    cs_error_init(&e);
    cr_expect_null(cql_parse(q, o, &e));
    free(q);
    /* a reasonable depth still parses */
    cql_stmt_free(ok("INSERT INTO t (a) VALUES ([[[[[[[[[[1]]]]]]]]]])"));
}

Test(parser, corpus_parses)
{
    for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
        cql_stmt_free(ok(corpus[i]));
}

Test(parser, fuzz)
{
    char buf[512];
    /* every truncation of every corpus statement */
    for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
        size_t n = strlen(corpus[i]);
        for (size_t k = 0; k <= n; k++)
            try_parse(corpus[i], k);
    }
    /* random byte mutations, token-ish splices and pure garbage */
    for (int iter = 0; iter < 20000; iter++) {
        const char *src = corpus[rnd() % (sizeof(corpus) / sizeof(corpus[0]))];
        size_t n = strlen(src);
        if (n >= sizeof(buf))
            n = sizeof(buf) - 1;
        memcpy(buf, src, n);
        int muts = 1 + (int)(rnd() % 4);
        for (int m = 0; m < muts; m++) {
            size_t at = rnd() % (n ? n : 1);
            switch (rnd() % 4) {
            case 0: buf[at] = (char)(rnd() & 0xff); break;
            case 1: buf[at] = "'\"$()[]{}<>,;.:?-+*/=!@ \n"[rnd() % 26]; break;
            case 2: if (n > 1) { memmove(buf + at, buf + at + 1, n - at - 1); n--; } break;
            case 3: { size_t j = rnd() % (n ? n : 1); char c = buf[at]; buf[at] = buf[j]; buf[j] = c; } break;
            }
        }
        try_parse(buf, n);
    }
    for (int iter = 0; iter < 5000; iter++) {
        size_t n = rnd() % 64;
        for (size_t k = 0; k < n; k++)
            buf[k] = (char)(rnd() & 0xff);
        try_parse(buf, n);
    }
}

/* Token-level mutations of the corpus: replace, insert or drop whole
 * words, which keeps most of a statement valid and reaches every clause. */
Test(parser, token_mutations)
{
    static const char *vocab[] = {
        "WITH", "CLUSTERING", "ORDER", "BY", "COMPACT", "STORAGE", "AND", "IF", "NOT", "EXISTS",
        "(", ")", "[", "]", "{", "}", ",", ";", ".", ":", "?", "=", "+", "-", "..", "'x'", "1", "a",
        "KEY", "PRIMARY", "STATIC", "AS", "FROM", "WHERE", "IN", "TOKEN", "NULL", "frozen", "<", ">",
        "USING", "TTL", "TIMESTAMP", "SET", "ALL", "ON", "TO", "OF", "FUNCTION", "KEYSPACE", "TABLE",
    };
    char words[64][96];
    char buf[2048];
    size_t ncorpus = sizeof(corpus) / sizeof(corpus[0]);
    for (int iter = 0; iter < 60000; iter++) {
        const char *src = corpus[rnd() % ncorpus];
        int nw = 0;
        const char *c = src;
        while (*c && nw < 64) {
            while (*c == ' ')
                c++;
            size_t l = strcspn(c, " ");
            if (!l)
                break;
            if (l >= sizeof(words[0]))
                l = sizeof(words[0]) - 1;
            memcpy(words[nw], c, l);
            words[nw][l] = 0;
            nw++;
            c += strcspn(c, " ");
        }
        int muts = 1 + (int)(rnd() % 3);
        for (int m = 0; m < muts && nw > 0; m++) {
            int at = (int)(rnd() % (uint64_t)nw);
            const char *w = vocab[rnd() % (sizeof(vocab) / sizeof(vocab[0]))];
            switch (rnd() % 3) {
            case 0:
                strcpy(words[at], w);
                break;
            case 1:
                if (nw < 64) {
                    memmove(words[at + 1], words[at], sizeof(words[0]) * (size_t)(nw - at));
                    strcpy(words[at], w);
                    nw++;
                }
                break;
            case 2:
                memmove(words[at], words[at + 1], sizeof(words[0]) * (size_t)(nw - at - 1));
                nw--;
                break;
            }
        }
        size_t o = 0;
        for (int i = 0; i < nw; i++) {
            size_t l = strlen(words[i]);
            memcpy(buf + o, words[i], l);
            o += l;
            buf[o++] = ' ';
        }
        try_parse(buf, o);
    }
}

/* Token soup: random sequences of CQL words and symbols reach deep into the
 * grammar (every statement prefix, odd keyword combinations). */
Test(parser, token_soup)
{
    static const char *vocab[] = {
        "SELECT", "INSERT", "UPDATE", "DELETE", "BEGIN", "BATCH", "APPLY", "UNLOGGED", "COUNTER",
        "CREATE", "ALTER", "DROP", "TRUNCATE", "USE", "DESCRIBE", "DESC", "GRANT", "REVOKE", "LIST",
        "KEYSPACE", "TABLE", "TYPE", "INDEX", "CUSTOM", "MATERIALIZED", "VIEW", "FUNCTION",
        "AGGREGATE", "ROLE", "USER", "ROLES", "FROM", "WHERE", "AND", "IN", "CONTAINS", "KEY", "IS",
        "NOT", "NULL", "IF", "EXISTS", "SET", "VALUES", "INTO", "USING", "TTL", "TIMESTAMP", "WITH",
        "PRIMARY", "STATIC", "CLUSTERING", "ORDER", "BY", "ASC", "DESC", "LIMIT", "PER", "PARTITION",
        "GROUP", "ALLOW", "FILTERING", "JSON", "DISTINCT", "AS", "CAST", "TOKEN", "COUNT",
        "WRITETIME", "ON", "TO", "RENAME", "ADD", "OR", "REPLACE", "KEYS", "ENTRIES", "FULL", "FROZEN",
        "map", "list", "tuple", "int", "text", "SCHEMA", "ONLY", "INTERNALS", "CLUSTER",
        "a", "b", "ks", "t", "\"Q\"", "'s'", "1", "-2", "1.5", "0xff", "true", "1h", "?", ":n", "NaN",
        "(", ")", "[", "]", "{", "}", "<", ">", ",", ";", ".", "..", "=", "!=", "<=", "+", "-", "*",
        "+=", "-=", ":",
    };
    char buf[1024];
    for (int iter = 0; iter < 100000; iter++) {
        size_t o = 0;
        int n = 1 + (int)(rnd() % 24);
        for (int i = 0; i < n; i++) {
            const char *w = vocab[rnd() % (sizeof(vocab) / sizeof(vocab[0]))];
            size_t l = strlen(w);
            if (o + l + 2 >= sizeof(buf))
                break;
            memcpy(buf + o, w, l);
            o += l;
            buf[o++] = ' ';
        }
        try_parse(buf, o);
    }
}

Test(parser, arithmetic)
{
    cql_stmt *s = ok("SELECT a + b * 2, -c, (int) 1 - d AS x FROM t WHERE k = 1 + 2 * ? AND c = -(1)");
    ast_select *q = &s->u.select;
    cr_assert_eq(q->n_sels, 3);
    ast_selector *s0 = q->sels[0];
    cr_expect(s0->kind == SEL_FUNC && s0->n_args == 2);
    cr_expect_str_eq(s0->func.ks, "system");
    cr_expect_str_eq(s0->func.name, "_add");
    cr_expect_str_eq(s0->args[1]->func.name, "_multiply");
    cr_expect_str_eq(s0->text, "a + b * 2");
    cr_expect_str_eq(q->sels[1]->func.name, "_negate");
    cr_expect_eq(q->sels[1]->n_args, 1);
    cr_expect_str_eq(q->sels[2]->func.name, "_substract");
    cr_expect_eq(q->sels[2]->args[0]->kind, SEL_TERM);
    cr_expect_eq(q->sels[2]->args[0]->term->kind, TERM_CAST);
    cr_expect_str_eq(q->sels[2]->alias, "x");
    ast_term *v = q->where[0]->value;
    cr_expect(v->kind == TERM_FUNC && v->n_elems == 2);
    cr_expect_str_eq(v->func.name, "_add");
    cr_expect_str_eq(v->elems[1]->func.name, "_multiply");
    cr_expect_eq(v->elems[1]->elems[1]->kind, TERM_BIND);
    cr_expect_eq(q->where[1]->value->kind, TERM_NEG);
    cql_stmt_free(s);
    /* '+' before a column is the prepend form, not an addition */
    s = ok("UPDATE t SET l = [1] + l, v = 1 + 2 - 3, c = c + 1 WHERE k = 1");
    cr_expect_eq(s->u.update.sets[0].kind, SET_PREPEND);
    cr_expect_eq(s->u.update.sets[1].kind, SET_ASSIGN);
    cr_expect_str_eq(s->u.update.sets[1].value->func.name, "_substract");
    cr_expect_eq(s->u.update.sets[2].kind, SET_ADD);
    cql_stmt_free(s);
    s = ok("SELECT (a + b) * 2, (1, 'x'), ((c)) FROM t");
    cr_expect_str_eq(s->u.select.sels[0]->func.name, "_multiply");
    cr_expect_str_eq(s->u.select.sels[0]->args[0]->func.name, "_add");
    cr_expect_str_eq(s->u.select.sels[0]->text, "(a + b) * 2");
    cr_expect_eq(s->u.select.sels[1]->term->kind, TERM_TUPLE);
    cr_expect_eq(s->u.select.sels[1]->term->n_elems, 2);
    cr_expect_str_eq(s->u.select.sels[2]->column, "c");
    cr_expect_str_eq(s->u.select.sels[2]->text, "((c))");
    cql_stmt_free(s);
    bad("SELECT (a, b) FROM t");
    s = ok("SELECT (text) AS x, (int) ?, (ks.ty) {a: 1} FROM t");
    cr_expect_str_eq(s->u.select.sels[0]->column, "text");
    cr_expect_str_eq(s->u.select.sels[0]->alias, "x");
    cr_expect_str_eq(s->u.select.sels[1]->term->cast_type, "int");
    cr_expect_str_eq(s->u.select.sels[2]->term->cast_type, "ks.ty");
    cql_stmt_free(s);
    s = ok("SELECT a % 2, b / c FROM t");
    cr_expect_str_eq(s->u.select.sels[0]->func.name, "_modulo");
    cr_expect_str_eq(s->u.select.sels[1]->func.name, "_divide");
    cql_stmt_free(s);
}

Test(parser, negative_specials)
{
    cql_stmt *s = ok("INSERT INTO t (a, b, c) VALUES (-NaN, -infinity, - 1)");
    ast_term **v = s->u.insert.values;
    cr_expect_str_eq(v[0]->lit.text, "NaN");
    cr_expect_str_eq(v[1]->lit.text, "-Infinity");
    cr_expect_eq(v[2]->kind, TERM_NEG);
    cql_stmt_free(s);
}
