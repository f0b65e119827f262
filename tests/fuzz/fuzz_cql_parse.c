/*
 * fuzz_cql_parse.c: the CQL lexer and parser on arbitrary text, as a
 * QUERY or PREPARE body gives it (cql_parse, cql/lexer.c + cql/parser*.c).
 *
 * Checked: cql_parse returns a statement or NULL with a SyntaxException
 * (0x2000) and a message, never anything else; a statement parses the same
 * way twice (bind marker count, kind); every cs_malloc is freed.  Text that
 * parses is also given to the identifier quoting DESCRIBE uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
#include "cql/ast.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_cql_stmts.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "fuzz_cql_parse: check failed: %s: ", #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t base = cs_alloc_count();
    /* An exact-size copy: the parser is given (text, len), not a C string. */
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    cs_error e;
    cs_error_init(&e);
    cql_stmt *s = cql_parse(text, size, &e);
    if (!s) {
        CHECK(e.code == CS_ERR_SYNTAX && e.msg[0], "no SyntaxException (code %d: %s)", e.code, e.msg);
    } else {
        cs_error e2;
        cs_error_init(&e2);
        cql_stmt *s2 = cql_parse(text, size, &e2);
        CHECK(s2 != NULL, "parses once, not twice: %s", e2.msg);
        CHECK(s2->kind == s->kind && s2->n_binds == s->n_binds, "second parse differs");
        cql_stmt_free(s2);
        cql_stmt_free(s);
        if (size < 256) {
            char name[256];
            memcpy(name, data, size);
            name[size] = 0;
            cs_buf b;
            cs_buf_init(&b);
            cql_quote_ident(name, &b);
            cs_buf_destroy(&b);
        }
    }
    free(text);
    CHECK(cs_alloc_count() == base, "%zu allocations not freed", cs_alloc_count() - base);
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet();
    if (fz_seed_dir()) {
        char name[64];
        int n = 0;
        const char *const *lists[] = { fz_schema, fz_prepared, fz_statements };
        size_t lens[] = { sizeof fz_schema / sizeof *fz_schema, sizeof fz_prepared / sizeof *fz_prepared,
                          sizeof fz_statements / sizeof *fz_statements };
        for (int l = 0; l < 3; l++)
            for (size_t i = 0; i < lens[l]; i++) {
                snprintf(name, sizeof name, "stmt-%03d", n++);
                fz_seed(name, lists[l][i], strlen(lists[l][i]));
            }
        exit(0);
    }
    return 0;
}
