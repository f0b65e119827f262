/*
 * test_cql_fixture.h: the engine + CQL context fixture shared by the
 * executor tests (test_cql_exec_*.c through test_cql_exec_harness.h,
 * test_cql_exec_modify.c, test_cql_index.c): a real engine in a temp dir per
 * test (/tmp/cs_<tag>_<pid>), a session at protocol v4, a cqlsh-like value
 * formatter, and a leak check at teardown (allocation count and bytes back
 * where they were at setup).
 */
#ifndef CS_TEST_CQL_FIXTURE_H
#define CS_TEST_CQL_FIXTURE_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cql/cql_int.h"
#include "cql/exec.h"
#include "storage/storage.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/vfs.h"
#include "common/util.h"

static char g_dir[256];
static st_engine *g_eng;
static cql_ctx *g_ctx;
static cql_session g_sess;
static cs_error g_err;
static char g_warn[2048] __attribute__((unused));
static size_t g_alloc0, g_used0;

/* Open the engine and the CQL context over g_dir/data<sfx> and
 * g_dir/commitlog<sfx> (kept across reopen), in sync mode sync (-1: the
 * default). */
static void fixture_open_with(const char *sfx, int sync)
{
    static char d[300], c[300];
    snprintf(d, sizeof d, "%s/data%s", g_dir, sfx);
    snprintf(c, sizeof c, "%s/commitlog%s", g_dir, sfx);
    vfs_mkdirs(d);
    vfs_mkdirs(c);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d;
    cfg.commitlog_dir = c;
    if (sync >= 0) cfg.sync_mode = sync;
    cr_assert_eq(st_engine_open(&cfg, &g_eng), 0);
    cql_config cc;
    cql_config_defaults(&cc);
    cr_assert_eq(cql_ctx_new(g_eng, &cc, &g_ctx), 0);
    memset(&g_sess, 0, sizeof g_sess);
    g_sess.protocol_version = 4;
}

static void fixture_open(void) { fixture_open_with("", -1); }

static void fixture_close(void)
{
    cql_ctx_free(g_ctx);
    st_engine_close(g_eng, false);
}

static void fixture_setup(const char *tag)
{
    g_alloc0 = cs_alloc_count();
    g_used0 = cs_alloc_used();
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_%s_%d", tag, (int)getpid());
    vfs_rmtree(g_dir);
    fixture_open();
}

static void fixture_teardown(void)
{
    fixture_close();
    vfs_rmtree(g_dir);
    /* Every allocation of the test (engine, catalog, executor) is returned. */
    cr_expect_eq(cs_alloc_count(), g_alloc0, "leak: %zu blocks", cs_alloc_count() - g_alloc0);
    cr_expect_eq(cs_alloc_used(), g_used0, "leak: %zu bytes", cs_alloc_used() - g_used0);
}

/* The default query parameters: ONE, no paging, the server's timestamp. */
static void fixture_default_params(cql_params *p)
{
    memset(p, 0, sizeof *p);
    p->consistency = 1;
    p->paging_state_len = -1;
    p->timestamp = INT64_MIN;
}

/* r's warnings, one a line, into g_warn. */
static void fixture_take_warnings(const cql_result *r)
{
    g_warn[0] = 0;
    for (int i = 0; i < r->n_warnings; i++)
        snprintf(g_warn + strlen(g_warn), sizeof g_warn - strlen(g_warn), "%s\n", r->warnings[i]);
}

/* cql_query of q with the default parameters, its warnings into g_warn,
 * the error into g_err.  r is initialized here; the caller destroys it. */
static int fixture_query(const char *q, cql_result *r)
{
    cql_result_init(r);
    cs_error_init(&g_err);
    cql_params p;
    fixture_default_params(&p);
    int rc = cql_query(g_ctx, &g_sess, q, strlen(q), &p, r, &g_err);
    fixture_take_warnings(r);
    return rc;
}

/* Minimal value formatter (cqlsh-like) for the types these tests use. */
static void fmt(const ctype *t, const uint8_t *v, int32_t n, cs_buf *b)
{
    char tmp[64];
    if (n < 0) { cs_buf_put(b, "null", 4); return; }
    switch (t->kind) {
    case CT_INT:
        snprintf(tmp, sizeof tmp, "%d", n == 4 ? (int32_t)cs_be32(v) : 0);
        cs_buf_put(b, tmp, strlen(tmp));
        return;
    case CT_BIGINT: case CT_COUNTER: case CT_TIMESTAMP:
        snprintf(tmp, sizeof tmp, "%lld", n == 8 ? (long long)(int64_t)cs_be64(v) : 0LL);
        cs_buf_put(b, tmp, strlen(tmp));
        return;
    case CT_BOOLEAN:
        cs_buf_put(b, n && v[0] ? "true" : "false", n && v[0] ? 4 : 5);
        return;
    case CT_VARCHAR: case CT_ASCII:
        cs_buf_put_u8(b, '\'');
        cs_buf_put(b, v, (size_t)n);
        cs_buf_put_u8(b, '\'');
        return;
    case CT_LIST: case CT_SET: case CT_MAP: {
        cs_rd r;
        cs_rd_init(&r, v, (size_t)n);
        int32_t cnt = (int32_t)cs_rd_u32(&r);
        cs_buf_put_u8(b, t->kind == CT_LIST ? '[' : '{');
        for (int32_t i = 0; i < cnt && !r.err; i++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_bytes(&r, &p);
            if (i) cs_buf_put(b, ", ", 2);
            fmt(t->sub[0], p, l, b);
            if (t->kind == CT_MAP) {
                cs_buf_put(b, ": ", 2);
                l = cs_rd_bytes(&r, &p);
                fmt(t->sub[1], p, l, b);
            }
        }
        cs_buf_put_u8(b, t->kind == CT_LIST ? ']' : '}');
        return;
    }
    case CT_UDT: {
        cs_rd r;
        cs_rd_init(&r, v, (size_t)n);
        cs_buf_put_u8(b, '{');
        for (int i = 0; i < t->n_sub; i++) {
            const uint8_t *p = NULL;
            int32_t l = cs_rd_left(&r) ? cs_rd_bytes(&r, &p) : -1;
            if (i) cs_buf_put(b, ", ", 2);
            cs_buf_put(b, t->field_names[i], strlen(t->field_names[i]));
            cs_buf_put(b, ": ", 2);
            fmt(t->sub[i], p, l, b);
        }
        cs_buf_put_u8(b, '}');
        return;
    }
    default:
        if (ctype_format_cql(t, v, (size_t)n, b) < 0) cs_buf_put(b, "?", 1);
    }
}

#endif
