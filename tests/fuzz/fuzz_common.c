/* fuzz_common.c: see fuzz_common.h. */
#include "tests/fuzz/fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "cql/types.h"
#include "server/frame.h"
#include "server/msg.h"

void fz_quiet(void)
{
    if (!getenv("CASSETTE_LOG"))
        cs_log_set_level(CS_LOG_ERROR + 1);
}

static char g_scratch[256];

static void rm_rf(const char *path, bool keep_top)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", path, de->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                rm_rf(p, false);
            else
                unlink(p);
        }
        closedir(d);
    }
    if (!keep_top)
        rmdir(path);
}

static void scratch_cleanup(void)
{
    if (g_scratch[0])
        rm_rf(g_scratch, false);
}

const char *fz_scratch_dir(const char *tag)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_scratch, sizeof g_scratch, "%s/cassette-fuzz-%s-%d", base, tag, (int)getpid());
    rm_rf(g_scratch, false);
    if (mkdir(g_scratch, 0700) != 0) {
        perror(g_scratch);
        abort();
    }
    atexit(scratch_cleanup);
    return g_scratch;
}

void fz_empty_dir(const char *dir)
{
    rm_rf(dir, true);
}

int fz_write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = n ? write(fd, p, n) : 0;
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

const char *fz_seed_dir(void)
{
    const char *d = getenv("CASSETTE_FUZZ_SEEDS");
    return d && *d ? d : NULL;
}

void fz_seed(const char *name, const void *p, size_t n)
{
    char path[1024];
    mkdir(fz_seed_dir(), 0755);
    snprintf(path, sizeof path, "%s/%s", fz_seed_dir(), name);
    if (fz_write_file(path, p, n) != 0) {
        perror(path);
        abort();
    }
}

const uint8_t *fz_chunk(fz_in *in, size_t *len)
{
    size_t n = fz_u16(in);
    if (n > fz_left(in))
        n = fz_left(in);
    const uint8_t *p = in->p + in->pos;
    in->pos += n;
    *len = n;
    return p;
}

/* ------------------------------------------------------------ RESULT bodies */

#define RCHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

typedef struct rctx {
    const char *what;                /* the request, for messages */
    int version;
    fz_result *out;
} rctx;

/* Read a [option] (result metadata type) into a ctype. */
static ctype *read_type(const rctx *x, cs_rd *r)
{
    ctype *t = ctype_decode_option(r);
    RCHECK(t != NULL && !r->err, "%s: bad type option in metadata", x->what);
    return t;
}

/* <metadata> of a Rows or Prepared result (spec v4 §4.2.5.2): returns the
 * column count and, if types != NULL, the column types (caller unrefs);
 * a Rows result's paging state goes to x->out. */
static int read_metadata(const rctx *x, cs_rd *r, bool prepared, bool rows, ctype **types, int max_types)
{
    uint32_t flags = cs_rd_u32(r);
    int32_t n = (int32_t)cs_rd_u32(r);
    RCHECK(!r->err && n >= 0 && n < 10000, "%s: metadata column count %d", x->what, n);
    if (prepared && x->version >= 4) {
        int32_t pk = (int32_t)cs_rd_u32(r);
        RCHECK(!r->err && pk >= 0 && pk <= n, "%s: %d partition key indexes of %d", x->what, pk, n);
        for (int i = 0; i < pk; i++)
            RCHECK(cs_rd_u16(r) < (uint16_t)n, "%s: partition key index", x->what);
    }
    if (flags & 0x0002) {                  /* HAS_MORE_PAGES */
        const uint8_t *p;
        int32_t len = cs_rd_bytes(r, &p);
        RCHECK(len >= 0 && !r->err, "%s: paging state", x->what);
        if (rows && (size_t)len <= sizeof x->out->ps) {
            memcpy(x->out->ps, p, (size_t)len);
            x->out->ps_len = len;
        }
    }
    if (flags & 0x0008) {                  /* METADATA_CHANGED (v5): <new_metadata_id> */
        size_t idl;
        RCHECK(x->version >= 5 && !prepared, "%s: METADATA_CHANGED at v%d", x->what, x->version);
        cs_rd_string(r, &idl);             /* [short bytes] */
        RCHECK(!r->err, "%s: new_metadata_id", x->what);
    }
    if (flags & 0x0004)                    /* NO_METADATA */
        return n;
    size_t len;
    if (flags & 0x0001) {                  /* GLOBAL_TABLES_SPEC */
        cs_rd_string(r, &len);
        cs_rd_string(r, &len);
    }
    for (int i = 0; i < n; i++) {
        if (!(flags & 0x0001)) {
            cs_rd_string(r, &len);
            cs_rd_string(r, &len);
        }
        cs_rd_string(r, &len);
        RCHECK(!r->err, "%s: column spec %d", x->what, i);
        ctype *t = read_type(x, r);
        if (types && i < max_types)
            types[i] = t;
        else
            ctype_unref(t);
    }
    return n;
}

static void check_value(const rctx *x, const ctype *t, const uint8_t *v, int32_t len, int col)
{
    if (len < 0)
        return;
    cs_error e;
    cs_error_init(&e);
    int rc = ctype_validate(t, v, (size_t)len, &e);
    RCHECK(rc == 0, "%s: column %d: a value the server returned is not valid for its type: %s",
           x->what, col, e.msg);
    cs_buf b;
    cs_buf_init(&b);
    (void)ctype_format_cql(t, v, (size_t)len, &b);
    cs_buf_reset(&b);
    (void)ctype_format_json(t, v, (size_t)len, &b);
    cs_buf_destroy(&b);
}

static void check_rows(const rctx *x, cs_rd *r)
{
    ctype *types[256] = { 0 };
    int n = read_metadata(x, r, false, true, types, 256);
    int32_t rows = (int32_t)cs_rd_u32(r);
    RCHECK(!r->err && rows >= 0, "%s: row count", x->what);
    for (int32_t j = 0; j < rows; j++)
        for (int i = 0; i < n; i++) {
            const uint8_t *p;
            int32_t len = cs_rd_bytes(r, &p);
            RCHECK(!r->err && len >= -1, "%s: row %d value %d", x->what, j, i);
            if (i < 256 && types[i])
                check_value(x, types[i], p, len, i);
        }
    for (int i = 0; i < 256; i++)
        if (types[i])
            ctype_unref(types[i]);
}

void fz_check_result(const char *what, int version, const uint8_t *body, size_t blen, fz_result *out)
{
    rctx x = { what, version, out };
    out->have_id = false;
    out->ps_len = -1;
    cs_rd r;
    cs_rd_init(&r, body, blen);
    int32_t kind = (int32_t)cs_rd_u32(&r);
    RCHECK(!r.err, "%s: no result kind", what);
    out->kind = kind;
    size_t len;
    cql_schema_change c;
    switch (kind) {
    case RESULT_VOID:
        break;
    case RESULT_ROWS:
        check_rows(&x, &r);
        break;
    case RESULT_SET_KEYSPACE:
        cs_rd_string(&r, &len);
        break;
    case RESULT_PREPARED: {
        const char *s = cs_rd_string(&r, &len);
        RCHECK(!r.err && len == 16, "%s: prepared id of %zu bytes", what, len);
        memcpy(out->id, s, 16);
        out->have_id = true;
        if (version >= 5) {                /* <result_metadata_id> [short bytes] */
            cs_rd_string(&r, &len);
            RCHECK(!r.err && len == 16, "%s: result metadata id of %zu bytes", what, len);
        }
        read_metadata(&x, &r, true, false, NULL, 0);
        read_metadata(&x, &r, false, false, NULL, 0);
        break;
    }
    case RESULT_SCHEMA_CHANGE:
        RCHECK(msg_schema_change_decode(body + 4, blen - 4, &c) == 0, "%s: schema change body", what);
        r.pos = r.len;
        break;
    default:
        RCHECK(false, "%s: result kind %d", what, kind);
    }
    RCHECK(!r.err && cs_rd_left(&r) == 0, "%s: result kind %d: %zu bytes left (err %d)", what, kind,
           cs_rd_left(&r), r.err);
}

/* Sanitizer defaults for every harness (the environment's *_OPTIONS still
 * override them): UBSan reports with a stack, as ASan's do. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "print_stacktrace=1";
}
