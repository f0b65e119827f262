/* Unit tests for cql/lexer.c: token kinds, positions, comments, lexer
 * errors, reserved keywords and identifier quoting. */
#include <criterion/criterion.h>
#include <string.h>
#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"
#include "cql/ast.h"
#include "cql/lexer_int.h"

static cs_arena A;
static cql__lexed L;
static size_t alloc_base;

static void setup(void)
{
    alloc_base = cs_alloc_count();
    cs_arena_init(&A);
}

static void teardown(void)
{
    cql__lexed_free(&L);
    cs_arena_destroy(&A);
    cr_expect_eq(cs_alloc_count(), alloc_base, "leaked %zu allocations", cs_alloc_count() - alloc_base);
}

TestSuite(lexer, .init = setup, .fini = teardown);

/* Lex s and return the on-channel token types in out (ends with TK_EOF). */
static int lex_types(const char *s, cql__tok_type *out, int max)
{
    cql__lexed_free(&L);
    cr_assert_eq(cql__lex(s, strlen(s), &L), 0);
    int n = 0;
    for (int i = 0; i < L.n && n < max; i++)
        if (L.toks[i].type != TK_WS && L.toks[i].type != TK_COMMENT)
            out[n++] = L.toks[i].type;
    return n;
}

static const cql__tok *on_tok(int k)
{
    int n = 0;
    for (int i = 0; i < L.n; i++)
        if (L.toks[i].type != TK_WS && L.toks[i].type != TK_COMMENT && n++ == k)
            return &L.toks[i];
    return NULL;
}

Test(lexer, literals)
{
    cql__tok_type t[32];
    int n = lex_types("'a''b' $$x'y$$ 42 -7 3.5 1e10 -2.5E-3 1. 0xCAFe true FALSE "
                      "01234567-89ab-cdef-0123-456789abcdef 1h30m 2d P1Y2M PT1H P2W 10ms 3mo ?", t, 32);
    cql__tok_type want[] = { TK_STRING, TK_STRING, TK_INTEGER, TK_INTEGER, TK_FLOAT, TK_FLOAT,
                             TK_FLOAT, TK_FLOAT, TK_HEX, TK_BOOLEAN, TK_BOOLEAN, TK_UUID,
                             TK_DURATION, TK_DURATION, TK_DURATION, TK_DURATION, TK_DURATION,
                             TK_DURATION, TK_DURATION, TK_QMARK, TK_EOF };
    cr_assert_eq(n, (int)(sizeof(want) / sizeof(want[0])));
    for (int i = 0; i < n; i++)
        cr_expect_eq(t[i], want[i], "token %d: %d != %d", i, t[i], want[i]);
    cr_expect_eq(L.err_tok, -1);
    /* ANTLR text length of a string is its unescaped content */
    cr_expect_eq(on_tok(0)->text_chars, 3);
    cr_expect_eq(on_tok(1)->text_chars, 3);
}

Test(lexer, uuid_starting_with_letters_and_idents)
{
    cql__tok_type t[8];
    int n = lex_types("abcdef01-2345-6789-abcd-ef0123456789 abcdef01 p1 pt x1_y", t, 8);
    cr_assert_eq(n, 6);
    cr_expect_eq(t[0], TK_UUID);
    cr_expect_eq(t[1], TK_IDENT);
    cr_expect_eq(t[2], TK_IDENT);
    cr_expect_eq(t[3], TK_IDENT);
    cr_expect_eq(t[4], TK_IDENT);
}

Test(lexer, keywords_case_insensitive)
{
    cql__tok_type t[8];
    lex_types("SeLeCt FROM where KeY", t, 8);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(t[i], TK_KEYWORD);
    cr_expect_eq(on_tok(0)->kw, KW_SELECT);
    cr_expect_eq(on_tok(1)->kw, KW_FROM);
    cr_expect_eq(on_tok(2)->kw, KW_WHERE);
    cr_expect_eq(on_tok(3)->kw, KW_KEY);
    cr_expect(cql__kw_reserved(KW_SELECT));
    cr_expect(!cql__kw_reserved(KW_KEY));
    cr_expect_str_eq(cql__tok_name(TK_KEYWORD, KW_FROM), "K_FROM");
}

Test(lexer, punctuation)
{
    cql__tok_type t[32];
    int n = lex_types("( ) [ ] { } , ; . .. = < <= > >= != + - * / % : += -=", t, 32);
    cql__tok_type want[] = { TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
                             TK_COMMA, TK_SEMI, TK_DOT, TK_RANGE, TK_EQ, TK_LT, TK_LTE, TK_GT,
                             TK_GTE, TK_NEQ, TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
                             TK_COLON, TK_PLUS_EQ, TK_MINUS_EQ, TK_EOF };
    cr_assert_eq(n, (int)(sizeof(want) / sizeof(want[0])));
    for (int i = 0; i < n; i++)
        cr_expect_eq(t[i], want[i], "token %d", i);
}

Test(lexer, range_after_integer)
{
    cql__tok_type t[8];
    int n = lex_types("1..2", t, 8);
    cr_assert_eq(n, 4);
    cr_expect_eq(t[0], TK_INTEGER);
    cr_expect_eq(t[1], TK_RANGE);
    cr_expect_eq(t[2], TK_INTEGER);
}

/* Lexer.g: (INTEGER '.' RANGE) => INTEGER '.' (CollectionsTest.testMapOverlappingSlicesWithDoubles) */
Test(lexer, float_before_range)
{
    cql__tok_type t[8];
    int n = lex_types("0...3.", t, 8);
    cr_assert_eq(n, 4);
    cr_expect_eq(t[0], TK_FLOAT);
    cr_expect_eq(t[1], TK_RANGE);
    cr_expect_eq(t[2], TK_FLOAT);
    n = lex_types("3...4.4]", t, 8);
    cr_assert_eq(n, 5);
    cr_expect_eq(t[0], TK_FLOAT);
    cr_expect_eq(t[1], TK_RANGE);
    cr_expect_eq(t[2], TK_FLOAT);
}

Test(lexer, comments_are_hidden)
{
    cql__tok_type t[8];
    int n = lex_types("a -- one\n/* two\n */ b // three\n", t, 8);
    cr_assert_eq(n, 3);
    cr_expect_eq(t[0], TK_IDENT);
    cr_expect_eq(t[1], TK_IDENT);
    int comments = 0;
    for (int i = 0; i < L.n; i++)
        comments += L.toks[i].type == TK_COMMENT;
    cr_expect_eq(comments, 3);
}

Test(lexer, positions)
{
    cql__tok_type t[8];
    lex_types("SELECT\n  x,\n\ty", t, 8);
    cr_expect_eq(on_tok(0)->line, 1);
    cr_expect_eq(on_tok(0)->col, 0);
    cr_expect_eq(on_tok(1)->line, 2);
    cr_expect_eq(on_tok(1)->col, 2);
    cr_expect_eq(on_tok(3)->line, 3);
    cr_expect_eq(on_tok(3)->col, 1);
    /* columns count code points, not bytes */
    lex_types("'\xc3\xa9t\xc3\xa9' x", t, 8);
    cr_expect_eq(on_tok(1)->col, 6);
    /* ... as Java chars: a 4-byte sequence is a surrogate pair */
    lex_types("'\xf0\x9f\x98\x80' x", t, 8);
    cr_expect_eq(on_tok(0)->text_chars, 2);
    cr_expect_eq(on_tok(1)->col, 5);
}

Test(lexer, errors)
{
    cql__tok_type t[8];
    lex_types("SELECT 'abc", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:11 mismatched character '<EOF>' expecting '''");
    lex_types("x \"abc", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:6 mismatched character '<EOF>' expecting '\"'");
    lex_types("x /* abc", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:8 mismatched character '<EOF>' expecting '*'");
    lex_types("a\n @ b", t, 8);
    cr_expect_str_eq(L.err_msg, "line 2:1 no viable alternative at character '@'");
    cr_expect_eq(t[1], TK_IDENT);   /* recovered: b still lexed */
    lex_types("\xf0\x9f\x98\x80", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:0 no viable alternative at character '?'");
    lex_types("x \xc3\xa9", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:2 no viable alternative at character '\xc3\xa9'");
    lex_types("a ! b", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:3 mismatched character ' ' expecting '='");
    lex_types("a -- no newline", t, 8);
    cr_expect_str_eq(L.err_msg, "line 1:15 mismatched character '<EOF>' expecting set null");
}

Test(lexer, reserved_keywords)
{
    const char *res[] = { "select", "from", "where", "and", "table", "keyspace", "token", "null",
                          "not", "in", "is", "limit", "order", "by", "use", "nan", "infinity" };
    const char *unres[] = { "key", "type", "ttl", "writetime", "count", "filtering", "keys",
                            "values", "json", "distinct", "as", "exists", "static", "text", "int",
                            "timestamp", "contains", "cluster", "roles", "foo" };
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
        cr_expect(cql_is_reserved_keyword(res[i]), "%s", res[i]);
    for (size_t i = 0; i < sizeof(unres) / sizeof(unres[0]); i++)
        cr_expect(!cql_is_reserved_keyword(unres[i]), "%s", unres[i]);
}

static void quoted(const char *in, const char *want)
{
    cs_buf b;
    cs_buf_init(&b);
    cql_quote_ident(in, &b);
    cr_expect_eq(b.len, strlen(want), "%s", in);
    cr_expect(memcmp(b.p, want, b.len) == 0, "%s -> %.*s", in, (int)b.len, (const char *)b.p);
    cs_buf_destroy(&b);
}

Test(lexer, quote_ident)
{
    quoted("abc", "abc");
    quoted("a_1", "a_1");
    quoted("key", "key");
    quoted("Abc", "\"Abc\"");
    quoted("select", "\"select\"");
    quoted("1a", "\"1a\"");
    quoted("_x", "\"_x\"");
    quoted("a\"b", "\"a\"\"b\"");
    quoted("with space", "\"with space\"");
}

Test(lexer, iso_durations_are_case_sensitive)
{
    cql__tok_type t[16];
    int n = lex_types("P1Y2M3DT4H5M6S -P2W P0001-02-03T04:05:06 p1d P1Dx PT5M P1YT 1Y2mo -3h", t, 16);
    cql__tok_type want[] = { TK_DURATION, TK_DURATION, TK_DURATION, TK_IDENT, TK_IDENT, TK_DURATION,
                             TK_IDENT, TK_DURATION, TK_DURATION, TK_EOF };
    cr_assert_eq(n, (int)(sizeof(want) / sizeof(want[0])));
    for (int i = 0; i < n; i++)
        cr_expect_eq(t[i], want[i], "token %d: %d", i, t[i]);
    cr_expect_eq(on_tok(2)->len, 20);
}

Test(lexer, table_aliases)
{
    cr_expect_eq(cql__kw_lookup("ColumnFamilies", 14), KW_TABLES);
    cr_expect_str_eq(cql__tok_name(TK_KEYWORD, KW_TABLE), "K_COLUMNFAMILY");
    cr_expect_str_eq(cql__tok_name(TK_RPAREN, KW_NONE), "')'");
}
