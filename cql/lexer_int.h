/*
 * lexer_int.h: shared between cql/lexer.c and cql/parser*.c only (owner:
 * parser).  The token model, the keyword table, and the recursive-descent
 * parser's state and helpers.
 *
 * The lexer turns the whole statement text into an array of tokens up front,
 * including hidden ones (whitespace, comments), as Cassandra's ANTLR lexer
 * does: error snippets count hidden tokens when they pick the tokens around
 * the offending one (Cassandra ErrorCollector.java).  The parser walks the
 * on-channel tokens and remembers the furthest one it looked at, which plays
 * the part of ANTLR's lazily filled token stream size.
 *
 * Parse errors unwind with longjmp to cql_parse(); every node lives in the
 * statement arena, so nothing leaks.  Single-threaded per parse.
 */
#ifndef CS_CQL_LEXER_INT_H
#define CS_CQL_LEXER_INT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include "cql/ast.h"
#include "common/err.h"

/* ---------------------------------------------------------------- tokens */

typedef enum {
    TK_EOF = 0,
    TK_WS, TK_COMMENT,                 /* hidden */
    TK_IDENT, TK_QUOTED_NAME, TK_STRING, TK_INTEGER, TK_FLOAT, TK_BOOLEAN,
    TK_DURATION, TK_UUID, TK_HEX, TK_QMARK,
    TK_SEMI, TK_COMMA, TK_DOT, TK_RANGE, TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET,
    TK_LBRACE, TK_RBRACE, TK_EQ, TK_LT, TK_LTE, TK_GT, TK_GTE, TK_NEQ,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT, TK_COLON, TK_PLUS_EQ, TK_MINUS_EQ,
    TK_KEYWORD,                        /* kw holds the keyword id */
    TK__COUNT
} cql__tok_type;

/* Keyword ids; the table in lexer.c is in this order. */
typedef enum {
    KW_NONE = -1,
    KW_ACCESS, KW_ADD, KW_AGGREGATE, KW_AGGREGATES, KW_ALL, KW_ALLOW, KW_ALTER, KW_AND, KW_APPLY,
    KW_AS, KW_ASC, KW_ASCII, KW_AUTHORIZE, KW_BATCH, KW_BEGIN, KW_BIGINT, KW_BLOB, KW_BOOLEAN,
    KW_BY, KW_CALLED, KW_CAST, KW_CLUSTER, KW_CLUSTERING, KW_COLUMNFAMILY, KW_COMPACT,
    KW_CONTAINS, KW_COUNT, KW_COUNTER, KW_CREATE, KW_CUSTOM, KW_DATACENTERS, KW_DATE,
    KW_DECIMAL, KW_DEFAULT, KW_DELETE, KW_DESC, KW_DESCRIBE, KW_DISTINCT, KW_DOUBLE,
    KW_DROP, KW_DURATION, KW_ENTRIES, KW_EXECUTE, KW_EXISTS, KW_FILTERING, KW_FINALFUNC,
    KW_FLOAT, KW_FROM, KW_FROZEN, KW_FULL, KW_FUNCTION, KW_FUNCTIONS, KW_GRANT, KW_GROUP,
    KW_HASHED, KW_IF, KW_IN, KW_INDEX, KW_INET, KW_INFINITY, KW_INITCOND, KW_INPUT,
    KW_INSERT, KW_INT, KW_INTERNALS, KW_INTO, KW_IS, KW_JSON, KW_KEY, KW_KEYS, KW_KEYSPACE,
    KW_KEYSPACES, KW_LANGUAGE, KW_LIKE, KW_LIMIT, KW_LIST, KW_LOGIN, KW_MAP,
    KW_MATERIALIZED, KW_MAXWRITETIME, KW_MBEAN, KW_MBEANS, KW_MODIFY, KW_NAN, KW_NOLOGIN,
    KW_NORECURSIVE, KW_NOSUPERUSER, KW_NOT, KW_NULL, KW_OF, KW_ON, KW_ONLY, KW_OPTIONS,
    KW_OR, KW_ORDER, KW_PARTITION, KW_PASSWORD, KW_PER, KW_PERMISSION, KW_PERMISSIONS,
    KW_PRIMARY, KW_RENAME, KW_REPLACE, KW_RETURNS, KW_REVOKE, KW_ROLE, KW_ROLES, KW_SCHEMA,
    KW_SELECT, KW_SET, KW_SFUNC, KW_SMALLINT, KW_STATIC, KW_STORAGE, KW_STYPE, KW_SUPERUSER,
    KW_TABLE, KW_TABLES, KW_TEXT, KW_TIME, KW_TIMESTAMP, KW_TIMEUUID, KW_TINYINT, KW_TO,
    KW_TOKEN, KW_TRIGGER, KW_TRUNCATE, KW_TTL, KW_TUPLE, KW_TYPE, KW_TYPES, KW_UNLOGGED,
    KW_UNSET, KW_UPDATE, KW_USE, KW_USER, KW_USERS, KW_USING, KW_UUID, KW_VALUES, KW_VARCHAR,
    KW_VARINT, KW_VIEW, KW_WHERE, KW_WITH, KW_WRITETIME,
    KW__COUNT
} cql__kw;

typedef struct cql__tok {
    cql__tok_type type;
    int kw;                            /* TK_KEYWORD: a cql__kw */
    const char *start; size_t len;     /* raw source bytes */
    int line, col;                     /* ANTLR positions: line 1-based, col 0-based (code points) */
    size_t text_chars;                 /* length of ANTLR's token text in code points
                                        * (strings/quoted names: unescaped content) */
} cql__tok;

typedef struct cql__lexed {
    cql__tok *toks; int n;             /* every token; the last one is TK_EOF */
    int err_tok;                       /* index of the token whose production hit a lexer error, or -1 */
    char err_msg[256];                 /* "line L:C mismatched character ..." */
} cql__lexed;

/* Lex text into l.  The token array is cs_malloc'd (it only lives while
 * parsing): free it with cql__lexed_free, also after an error.  Returns 0
 * or CS_ENOMEM. */
int cql__lex(const char *text, size_t len, cql__lexed *l);
void cql__lexed_free(cql__lexed *l);
/* Keyword id of a word (any case), or KW_NONE. */
int cql__kw_lookup(const char *s, size_t n);
/* Upper-case keyword name without the K_ prefix ("SELECT"). */
const char *cql__kw_name(int kw);
bool cql__kw_reserved(int kw);
/* ANTLR's token name for "expecting X": K_FROM, IDENT, ')', EOF ... */
const char *cql__tok_name(cql__tok_type t, int kw);

/* ---------------------------------------------------------------- parser state */

typedef struct cql__parser {
    const char *src; size_t len;
    cql__lexed lx;
    int *on; int n_on;                 /* indexes of on-channel tokens (the last is EOF) */
    int pos;                           /* current index into on[] */
    int fetched;                       /* furthest token index looked at */
    cs_arena *a;
    cs_error *e;
    jmp_buf jb;
    cql_stmt *st;                      /* top statement */
    char **bind_names; int n_binds, cap_binds;
    int depth;                         /* nesting of terms/types/selectors/relations */
} cql__parser;

/* Nesting limit: deeper input is refused instead of exhausting the stack. */
#define CQL__MAX_DEPTH 256
void cql__enter(cql__parser *p);
static inline void cql__leave(cql__parser *p) { p->depth--; }

/* Token access.  cql__peek(p, 1) is the current token. */
cql__tok *cql__peek(cql__parser *p, int k);
int cql__peek_index(cql__parser *p, int k);   /* absolute token index of peek(k) */
void cql__next(cql__parser *p);
bool cql__is(cql__parser *p, cql__tok_type t);
bool cql__is_kw(cql__parser *p, int kw);
bool cql__is_kw_at(cql__parser *p, int k, int kw);
bool cql__accept(cql__parser *p, cql__tok_type t);
bool cql__accept_kw(cql__parser *p, int kw);
void cql__expect(cql__parser *p, cql__tok_type t);
void cql__expect_kw(cql__parser *p, int kw);

/* Errors (never return). */
_Noreturn void cql__fail_noviable(cql__parser *p, int k, int snippet_k);
_Noreturn void cql__fail_mismatch(cql__parser *p, const char *expecting);
_Noreturn void cql__fail_msg(cql__parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void cql__fail_oom(cql__parser *p);

/* Arena helpers (fail with OOM). */
void *cql__alloc(cql__parser *p, size_t n);
char *cql__strndup(cql__parser *p, const char *s, size_t n);
/* Append one pointer-sized element to a growing arena array. */
void cql__push(cql__parser *p, void *arrp, int *n, size_t elem_size, const void *elem);

/* Token values. */
char *cql__printf(cql__parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *cql__unquote(cql__parser *p, const cql__tok *t, size_t *outlen);   /* 'str', $$str$$, "name" */
char *cql__lower(cql__parser *p, const cql__tok *t);                      /* lower-cased token text */

/* Names and values. */
bool cql__is_ident_tok(cql__parser *p, int k);    /* IDENT, QUOTED_NAME or unreserved keyword */
char *cql__ident(cql__parser *p);                 /* folded identifier or no viable alternative */
ast_qname cql__qname(cql__parser *p);             /* [ks.]name */
char *cql__ks_name(cql__parser *p);
char *cql__tok_text(cql__parser *p, const cql__tok *t);   /* raw source copy */
char *cql__type(cql__parser *p);                  /* comparatorType -> normalized text */
bool cql__at_type_start(cql__parser *p, int k);
ast_term *cql__term(cql__parser *p);              /* with arithmetic (operator functions) */
ast_term *cql__simple_term(cql__parser *p);       /* simpleTerm: no operators */
bool cql__at_simple_term(cql__parser *p, int k);
bool cql__at_cast(cql__parser *p);                 /* '(' type ')' at token 1 */
const char *cql__operator_function(cql__tok_type op);   /* "_add", "_substract", ... */
ast_term *cql__bind(cql__parser *p);              /* ? or :name */
bool cql__at_bind(cql__parser *p);
ast_term *cql__literal(cql__parser *p);           /* a constant, consumed; NULL if none */
bool cql__at_function(cql__parser *p, int k);     /* [ks.]name '(' at token k */
ast_qname cql__func_name(cql__parser *p);
char *cql__src_text(cql__parser *p, int from_tok, int to_tok);  /* source between absolute tokens */
static inline int cql__last_index(cql__parser *p) { return p->pos > 0 ? p->on[p->pos - 1] : 0; }
ast_term *cql__int_value(cql__parser *p);         /* INTEGER | ? | :name */
void cql__props(cql__parser *p, ast_props *props);   /* property (AND property)* */
void cql__prop(cql__parser *p, ast_props *props);
ast_pos cql__pos(cql__parser *p);

/* Statements (parser_dml.c / parser_ddl.c). */
void cql__parse_select(cql__parser *p, ast_select *s, bool in_view);
void cql__parse_insert(cql__parser *p, cql_stmt *st);
void cql__parse_update(cql__parser *p, cql_stmt *st);
void cql__parse_delete(cql__parser *p, cql_stmt *st);
void cql__parse_batch(cql__parser *p, cql_stmt *st);
void cql__parse_where(cql__parser *p, ast_relation ***rels, int *n);
void cql__parse_create(cql__parser *p, cql_stmt *st);
void cql__parse_alter(cql__parser *p, cql_stmt *st);
void cql__parse_drop(cql__parser *p, cql_stmt *st);
void cql__parse_describe(cql__parser *p, cql_stmt *st);
void cql__parse_auth(cql__parser *p, cql_stmt *st);

#endif
