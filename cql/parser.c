/*
 * parser.c: entry point of the hand-written recursive-descent CQL parser
 * (owner: parser), token access, Cassandra-style syntax errors, and the
 * pieces every statement shares: identifiers, qualified names, types,
 * terms, bind markers and WITH properties.
 *
 * Grammar: Cassandra 4.1's Parser.g (CQL 3.4.6) plus the 5.0 additions
 * ast.h names.  Statements live in parser_dml.c and parser_ddl.c.
 *
 * Errors follow ANTLR 3 as Cassandra configures it (no single-token
 * recovery; the first error wins; ErrorCollector adds a snippet):
 *   line L:C mismatched input 'X' expecting K_FROM (SELECT * [X]...)
 *   line L:C no viable alternative at input 'X' (...)
 * An error at end of input names ANTLR 3's EOF token, "line 0:-1", and has
 * no snippet (that token has no position).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cql/lexer_int.h"
#include "common/alloc.h"
#include "common/arena.h"

/* ---------------------------------------------------------------- allocation */

_Noreturn void cql__fail_oom(cql__parser *p)
{
    cs_error_set(p->e, CS_ERR_SERVER, "java.lang.OutOfMemoryError: parser out of memory");
    longjmp(p->jb, 1);
}

void *cql__alloc(cql__parser *p, size_t n)
{
    void *r = cs_arena_zalloc(p->a, n);
    if (!r)
        cql__fail_oom(p);
    return r;
}

char *cql__strndup(cql__parser *p, const char *s, size_t n)
{
    char *r = cs_arena_strndup(p->a, s, n);
    if (!r)
        cql__fail_oom(p);
    return r;
}

/* Append elem to *arrp (an arena array of *n elements).  Capacity is
 * implicit: the array is reallocated when n reaches a power of two. */
void cql__push(cql__parser *p, void *arrp, int *n, size_t elem_size, const void *elem)
{
    char **arr = (char **)arrp;
    int k = *n;
    if (k == 0 || (k >= 4 && (k & (k - 1)) == 0)) {
        int cap = k == 0 ? 4 : k * 2;
        char *na = cql__alloc(p, elem_size * (size_t)cap);
        if (k)
            memcpy(na, *arr, elem_size * (size_t)k);
        *arr = na;
    }
    memcpy(*arr + elem_size * (size_t)k, elem, elem_size);
    *n = k + 1;
}

static char *arena_printf(cql__parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *arena_printf(cql__parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *r = cql__alloc(p, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(r, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return r;
}

/* ---------------------------------------------------------------- tokens */

/* Report the lexer's error if the parser is about to look at a token whose
 * production hit it (the lexer runs lazily in ANTLR). */
static void fetch(cql__parser *p, int idx)
{
    if (p->lx.err_tok >= 0 && idx >= p->lx.err_tok) {
        cs_error_set(p->e, CS_ERR_SYNTAX, "%s", p->lx.err_msg);
        longjmp(p->jb, 1);
    }
    if (idx > p->fetched)
        p->fetched = idx;
}

int cql__peek_index(cql__parser *p, int k)
{
    int i = p->pos + k - 1;
    if (i >= p->n_on)
        i = p->n_on - 1;
    return p->on[i];
}

cql__tok *cql__peek(cql__parser *p, int k)
{
    int idx = cql__peek_index(p, k);
    fetch(p, idx);
    return &p->lx.toks[idx];
}

void cql__next(cql__parser *p)
{
    if (p->pos < p->n_on - 1)
        p->pos++;
    (void)cql__peek(p, 1);   /* ANTLR syncs to the next on-channel token on consume */
}

bool cql__is(cql__parser *p, cql__tok_type t) { return cql__peek(p, 1)->type == t; }

bool cql__is_kw_at(cql__parser *p, int k, int kw)
{
    cql__tok *t = cql__peek(p, k);
    return t->type == TK_KEYWORD && t->kw == kw;
}

bool cql__is_kw(cql__parser *p, int kw) { return cql__is_kw_at(p, 1, kw); }

bool cql__accept(cql__parser *p, cql__tok_type t)
{
    if (!cql__is(p, t))
        return false;
    cql__next(p);
    return true;
}

bool cql__accept_kw(cql__parser *p, int kw)
{
    if (!cql__is_kw(p, kw))
        return false;
    cql__next(p);
    return true;
}

void cql__expect(cql__parser *p, cql__tok_type t)
{
    if (!cql__accept(p, t))
        cql__fail_mismatch(p, cql__tok_name(t, KW_NONE));
}

void cql__expect_kw(cql__parser *p, int kw)
{
    if (!cql__accept_kw(p, kw))
        cql__fail_mismatch(p, cql__tok_name(TK_KEYWORD, kw));
}

ast_pos cql__pos(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    ast_pos r = { t->line, t->col + 1 };
    return r;
}

char *cql__tok_text(cql__parser *p, const cql__tok *t) { return cql__strndup(p, t->start, t->len); }

/* ---------------------------------------------------------------- errors */

/* ANTLR's token text: strings and quoted names hold their unescaped content. */
static char *antlr_text(cql__parser *p, const cql__tok *t);

/* Byte offset of code point cp within s[0..n) (clamped to n). */
static size_t cp_off(const char *s, size_t n, size_t cp)
{
    size_t i = 0;
    while (i < n && cp > 0) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        cp--;
    }
    return i;
}

static size_t cp_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            c++;
    return c;
}

typedef struct line { const char *s; size_t n; } line;

/* Append ErrorCollector's snippet for the token at absolute index `index`. */
static void append_snippet(cql__parser *p, int index, char *out, size_t outn)
{
    int size = p->fetched + 1;
    int fi = index - 10 < 0 ? 0 : index - 10;
    int ti = index + 2 < size - 1 ? index + 2 : size - 1;
    int oi = index < size - 1 ? index : size - 1;
    const cql__tok *from = &p->lx.toks[fi], *to = &p->lx.toks[ti], *off = &p->lx.toks[oi];
    if (from->type == TK_EOF || to->type == TK_EOF || off->type == TK_EOF)
        return;
    /* Java's split("\n") drops trailing empty strings. */
    int nl = 0;
    for (size_t i = 0; i < p->len; i++)
        if (p->src[i] == '\n')
            nl++;
    line *lines = cql__alloc(p, sizeof(line) * (size_t)(nl + 1));
    int n = 0;
    const char *s = p->src, *end = p->src + p->len;
    while (s <= end) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e)
            e = end;
        lines[n].s = s;
        lines[n].n = (size_t)(e - s);
        n++;
        s = e + 1;
    }
    while (n > 0 && lines[n - 1].n == 0)
        n--;
    if (to->line - 1 >= n || from->line - 1 >= n || off->line - 1 >= n)
        return;
    size_t to_last = (size_t)to->col + to->text_chars;
    size_t off_last = (size_t)off->col + off->text_chars;
    bool inc_start = from->line == 1 && from->col == 0;
    bool inc_end = to->line == n && to_last == cp_len(lines[n - 1].s, lines[n - 1].n);
    size_t len = strlen(out);
    char *w = out + len;
    size_t room = outn - len;
#define PUT(str, k) do { size_t k_ = (k); if (k_ >= room) k_ = room - 1; memcpy(w, (str), k_); w += k_; room -= k_; *w = 0; } while (0)
    PUT(" (", 2);
    if (!inc_start)
        PUT("...", 3);
    for (int li = from->line - 1; li <= to->line - 1; li++) {
        const char *ls = lines[li].s;
        size_t ln = lines[li].n;
        if (li == to->line - 1 && to_last < cp_len(ls, ln))
            ln = cp_off(ls, ln, to_last);
        char buf[2048];
        size_t bn = ln < sizeof(buf) - 3 ? ln : sizeof(buf) - 3;
        memcpy(buf, ls, bn);
        if (li == off->line - 1) {
            size_t b1 = cp_off(buf, bn, (size_t)off->col);
            size_t b2 = cp_off(buf, bn, off_last);
            memmove(buf + b2 + 1, buf + b2, bn - b2);
            buf[b2] = ']';
            bn++;
            memmove(buf + b1 + 1, buf + b1, bn - b1);
            buf[b1] = '[';
            bn++;
        }
        size_t skip = 0;
        if (li == from->line - 1)
            skip = cp_off(buf, bn, (size_t)from->col);
        PUT(buf + skip, bn - skip);
    }
    if (!inc_end)
        PUT("...", 3);
    PUT(")", 1);
#undef PUT
}

/* 'text' as ANTLR's getTokenErrorDisplay (newlines etc. escaped). */
static void token_display(cql__parser *p, const cql__tok *t, char *buf, size_t bn)
{
    if (t->type == TK_EOF) {
        snprintf(buf, bn, "'<EOF>'");
        return;
    }
    char *txt = antlr_text(p, t);
    size_t o = 0;
    buf[o++] = '\'';
    for (const char *c = txt; *c && o + 4 < bn; c++) {
        if (*c == '\n') { buf[o++] = '\\'; buf[o++] = 'n'; }
        else if (*c == '\r') { buf[o++] = '\\'; buf[o++] = 'r'; }
        else if (*c == '\t') { buf[o++] = '\\'; buf[o++] = 't'; }
        else buf[o++] = *c;
    }
    buf[o++] = '\'';
    buf[o] = 0;
}

static int header(const cql__tok *t, char *buf, size_t bn)
{
    if (t->type == TK_EOF)
        return snprintf(buf, bn, "line 0:-1 ");
    return snprintf(buf, bn, "line %d:%d ", t->line, t->col);
}

_Noreturn void cql__fail_noviable(cql__parser *p, int k, int snippet_k)
{
    cql__tok *t = cql__peek(p, k);
    int sidx = cql__peek_index(p, snippet_k);
    char msg[1024], disp[512];
    int n = header(t, msg, sizeof(msg));
    token_display(p, t, disp, sizeof(disp));
    snprintf(msg + n, sizeof(msg) - (size_t)n, "no viable alternative at input %s", disp);
    append_snippet(p, sidx, msg, sizeof(msg));
    cs_error_set(p->e, CS_ERR_SYNTAX, "%s", msg);
    longjmp(p->jb, 1);
}

_Noreturn void cql__fail_mismatch(cql__parser *p, const char *expecting)
{
    cql__tok *t = cql__peek(p, 1);
    char msg[1024], disp[512];
    int n = header(t, msg, sizeof(msg));
    token_display(p, t, disp, sizeof(disp));
    snprintf(msg + n, sizeof(msg) - (size_t)n, "mismatched input %s expecting %s", disp, expecting);
    append_snippet(p, cql__peek_index(p, 1), msg, sizeof(msg));
    cs_error_set(p->e, CS_ERR_SYNTAX, "%s", msg);
    longjmp(p->jb, 1);
}

/* Refuse pathological nesting, as Cassandra fails such statements (its
 * parser runs out of stack) rather than crash. */
void cql__enter(cql__parser *p)
{
    if (++p->depth > CQL__MAX_DEPTH) {
        cql__tok *t = cql__peek(p, 1);
        cql__fail_msg(p, "line %d:%d statement is too deeply nested (more than %d levels)",
                      t->line, t->col, CQL__MAX_DEPTH);
    }
}

_Noreturn void cql__fail_msg(cql__parser *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cs_error_set(p->e, CS_ERR_SYNTAX, "%s", msg);
    longjmp(p->jb, 1);
}

/* ---------------------------------------------------------------- token values */

/* Unescaped content of a 'string', $$string$$ or "quoted name". */
static char *unquote(cql__parser *p, const cql__tok *t, size_t *outlen)
{
    const char *s = t->start;
    size_t n = t->len;
    if (t->type == TK_STRING && n >= 2 && s[0] == '$') {
        size_t cn = n >= 4 ? n - 4 : 0;
        if (outlen)
            *outlen = cn;
        return cql__strndup(p, s + 2, cn);
    }
    char q = s[0];
    char *r = cql__alloc(p, n + 1);
    size_t o = 0;
    size_t end = (n >= 2 && s[n - 1] == q) ? n - 1 : n;
    for (size_t i = 1; i < end; i++) {
        r[o++] = s[i];
        if (s[i] == q && i + 1 < end && s[i + 1] == q)
            i++;
    }
    r[o] = 0;
    if (outlen)
        *outlen = o;
    return r;
}

static char *antlr_text(cql__parser *p, const cql__tok *t)
{
    if (t->type == TK_STRING || t->type == TK_QUOTED_NAME)
        return unquote(p, t, NULL);
    return cql__tok_text(p, t);
}

static char *lower(cql__parser *p, const cql__tok *t)
{
    char *r = cql__tok_text(p, t);
    for (char *c = r; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return r;
}

/* ---------------------------------------------------------------- identifiers */

bool cql__is_ident_tok(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    if (t->type == TK_IDENT || t->type == TK_QUOTED_NAME)
        return true;
    return t->type == TK_KEYWORD && !cql__kw_reserved(t->kw);
}

char *cql__ident(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    if (!cql__is_ident_tok(p, 1))
        cql__fail_noviable(p, 1, 1);
    char *r;
    if (t->type == TK_QUOTED_NAME) {
        r = unquote(p, t, NULL);
        if (!r[0])
            cql__fail_noviable(p, 1, 1);
    } else {
        r = lower(p, t);
    }
    cql__next(p);
    return r;
}

char *cql__ks_name(cql__parser *p)
{
    if (cql__is(p, TK_QMARK))
        cql__fail_msg(p, "Bind variables cannot be used for keyspace names");
    return cql__ident(p);
}

ast_qname cql__qname(cql__parser *p)
{
    ast_qname q = { NULL, NULL };
    if (cql__is_ident_tok(p, 1) && cql__peek(p, 2)->type == TK_DOT) {
        q.ks = cql__ks_name(p);
        cql__next(p);
    }
    if (cql__is(p, TK_QMARK))
        cql__fail_msg(p, "Bind variables cannot be used for table names");
    q.name = cql__ident(p);
    return q;
}

/* ---------------------------------------------------------------- types */

static bool is_native_type_kw(int kw)
{
    switch (kw) {
    case KW_ASCII: case KW_BIGINT: case KW_BLOB: case KW_BOOLEAN: case KW_COUNTER:
    case KW_DECIMAL: case KW_DOUBLE: case KW_DURATION: case KW_FLOAT: case KW_INET:
    case KW_INT: case KW_SMALLINT: case KW_TEXT: case KW_TIMESTAMP: case KW_TINYINT:
    case KW_UUID: case KW_VARCHAR: case KW_VARINT: case KW_TIMEUUID: case KW_DATE:
    case KW_TIME:
        return true;
    default:
        return false;
    }
}

bool cql__at_type_start(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    if (t->type == TK_STRING)
        return true;
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw))
        return true;
    if ((t->type == TK_KEYWORD && (t->kw == KW_FROZEN || t->kw == KW_LIST || t->kw == KW_MAP ||
                                   t->kw == KW_SET || t->kw == KW_TUPLE)) ||
        (t->type == TK_IDENT && t->len == 6 && strncasecmp(t->start, "vector", 6) == 0))
        return cql__peek(p, k + 1)->type == TK_LT;
    return false;
}

/* A name as CQL type text: quoted when needed so ctype_parse reads it back. */
static char *quoted_name(cql__parser *p, const char *name)
{
    cs_buf b;
    cs_buf_init(&b);
    cql_quote_ident(name, &b);
    char *r = b.err ? NULL : cs_arena_strndup(p->a, (const char *)b.p, b.len);
    cs_buf_destroy(&b);
    if (!r)
        cql__fail_oom(p);
    return r;
}

/* comparatorType: native | list<T> | set<T> | map<K, V> | tuple<...> |
 * frozen<T> | vector<T, n> | [ks.]udt | 'custom.Class'.  Returns normalized
 * text ("map<text, frozen<list<int>>>"). */
static char *type_inner(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 1);
    if (t->type == TK_STRING) {
        char *c = unquote(p, t, NULL);
        cql__next(p);
        return arena_printf(p, "'%s'", c);
    }
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw)) {
        char *r = lower(p, t);
        cql__next(p);
        return r;
    }
    bool is_vector = t->type == TK_IDENT && t->len == 6 && strncasecmp(t->start, "vector", 6) == 0 &&
                     cql__peek(p, 2)->type == TK_LT;
    if (t->type == TK_KEYWORD && (t->kw == KW_LIST || t->kw == KW_SET || t->kw == KW_FROZEN)) {
        const char *nm = t->kw == KW_LIST ? "list" : t->kw == KW_SET ? "set" : "frozen";
        cql__next(p);
        cql__expect(p, TK_LT);
        char *inner = cql__type(p);
        cql__expect(p, TK_GT);
        return arena_printf(p, "%s<%s>", nm, inner);
    }
    if (t->type == TK_KEYWORD && t->kw == KW_MAP) {
        cql__next(p);
        cql__expect(p, TK_LT);
        char *k = cql__type(p);
        cql__expect(p, TK_COMMA);
        char *v = cql__type(p);
        cql__expect(p, TK_GT);
        return arena_printf(p, "map<%s, %s>", k, v);
    }
    if ((t->type == TK_KEYWORD && t->kw == KW_TUPLE) || is_vector) {
        cql__next(p);
        cql__expect(p, TK_LT);
        char *acc = cql__type(p);
        if (is_vector) {
            cql__expect(p, TK_COMMA);
            cql__tok *d = cql__peek(p, 1);
            if (d->type != TK_INTEGER)
                cql__fail_mismatch(p, "INTEGER");
            acc = arena_printf(p, "%s, %.*s", acc, (int)d->len, d->start);
            cql__next(p);
        } else {
            while (cql__accept(p, TK_COMMA))
                acc = arena_printf(p, "%s, %s", acc, cql__type(p));
        }
        cql__expect(p, TK_GT);
        return arena_printf(p, "%s<%s>", is_vector ? "vector" : "tuple", acc);
    }
    if (cql__is_ident_tok(p, 1)) {
        ast_qname q = cql__qname(p);
        if (q.ks)
            return arena_printf(p, "%s.%s", quoted_name(p, q.ks), quoted_name(p, q.name));
        return quoted_name(p, q.name);
    }
    cql__fail_noviable(p, 1, 1);
}

/* ---------------------------------------------------------------- terms */

static ast_term *new_term(cql__parser *p, ast_term_kind k)
{
    ast_term *t = cql__alloc(p, sizeof(*t));
    t->kind = k;
    t->pos = cql__pos(p);
    return t;
}

static void push_term(cql__parser *p, ast_term *t, ast_term *e)
{
    cql__push(p, &t->elems, &t->n_elems, sizeof(ast_term *), &e);
}

ast_term *cql__bind(cql__parser *p)
{
    ast_term *t = new_term(p, TERM_BIND);
    if (cql__accept(p, TK_QMARK)) {
        t->bind.name = NULL;
    } else {
        cql__expect(p, TK_COLON);
        t->bind.name = cql__ident(p);
    }
    t->bind.index = p->n_binds;
    cql__push(p, &p->bind_names, &p->n_binds, sizeof(char *), &t->bind.name);
    return t;
}

bool cql__at_bind(cql__parser *p) { return cql__is(p, TK_QMARK) || cql__is(p, TK_COLON); }

/* intValue: INTEGER | ? | :name (USING TTL, LIMIT, ...). */
ast_term *cql__int_value(cql__parser *p)
{
    if (cql__at_bind(p))
        return cql__bind(p);
    cql__tok *k = cql__peek(p, 1);
    if (k->type != TK_INTEGER)
        cql__fail_noviable(p, 1, 1);
    ast_term *t = new_term(p, TERM_LITERAL);
    t->lit.kind = LIT_INTEGER;
    t->lit.text = cql__tok_text(p, k);
    t->lit.len = k->len;
    cql__next(p);
    return t;
}

static bool literal_kind(cql__tok *k, lit_kind *out)
{
    switch (k->type) {
    case TK_STRING: *out = LIT_STRING; return true;
    case TK_INTEGER: *out = LIT_INTEGER; return true;
    case TK_FLOAT: *out = LIT_FLOAT; return true;
    case TK_BOOLEAN: *out = LIT_BOOLEAN; return true;
    case TK_DURATION: *out = LIT_DURATION; return true;
    case TK_UUID: *out = LIT_UUID; return true;
    case TK_HEX: *out = LIT_HEX; return true;
    case TK_KEYWORD:
        if (k->kw == KW_NAN || k->kw == KW_INFINITY) {
            *out = LIT_FLOAT;
            return true;
        }
        return false;
    default: return false;
    }
}

/* A constant literal at the current token (consumed), or NULL. */
ast_term *cql__literal(cql__parser *p)
{
    cql__tok *k = cql__peek(p, 1);
    lit_kind lk;
    if (!literal_kind(k, &lk))
        return NULL;
    ast_term *t = new_term(p, TERM_LITERAL);
    t->lit.kind = lk;
    if (k->type == TK_STRING) {
        t->lit.text = unquote(p, k, &t->lit.len);
    } else if (k->type == TK_KEYWORD) {
        /* -NaN is NaN; -Infinity keeps its sign (Parser.g constant) */
        const char *s = k->kw == KW_NAN ? "NaN" : k->start[0] == '-' ? "-Infinity" : "Infinity";
        t->lit.text = cql__strndup(p, s, strlen(s));
        t->lit.len = strlen(s);
    } else {
        t->lit.text = k->type == TK_BOOLEAN ? lower(p, k) : cql__tok_text(p, k);
        t->lit.len = k->len;
    }
    cql__next(p);
    return t;
}

/* Is token k the start of a function call: name '(' or ks '.' name '('? */
bool cql__at_function(cql__parser *p, int k)
{
    bool name_ok = cql__is_ident_tok(p, k) || cql__is_kw_at(p, k, KW_TOKEN) || cql__is_kw_at(p, k, KW_COUNT);
    if (!name_ok)
        return false;
    if (cql__peek(p, k + 1)->type == TK_LPAREN)
        return true;
    return cql__peek(p, k + 1)->type == TK_DOT &&
           (cql__is_ident_tok(p, k + 2) || cql__is_kw_at(p, k + 2, KW_TOKEN)) &&
           cql__peek(p, k + 3)->type == TK_LPAREN;
}

/* functionName: [ks.]name, where name may also be TOKEN or COUNT. */
ast_qname cql__func_name(cql__parser *p)
{
    ast_qname q = { NULL, NULL };
    if (cql__peek(p, 2)->type == TK_DOT) {
        q.ks = cql__ident(p);
        cql__next(p);
    }
    if (cql__is_kw(p, KW_TOKEN) || cql__is_kw(p, KW_COUNT)) {
        q.name = lower(p, cql__peek(p, 1));
        cql__next(p);
    } else {
        q.name = cql__ident(p);
    }
    return q;
}

static ast_term *collection(cql__parser *p)
{
    if (cql__accept(p, TK_LBRACKET)) {
        ast_term *t = new_term(p, TERM_LIST);
        if (!cql__accept(p, TK_RBRACKET)) {
            do
                push_term(p, t, cql__term(p));
            while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RBRACKET);
        }
        return t;
    }
    cql__expect(p, TK_LBRACE);
    if (cql__accept(p, TK_RBRACE))
        return new_term(p, TERM_SET);
    if (cql__is_ident_tok(p, 1) && cql__peek(p, 2)->type == TK_COLON) {
        ast_term *t = new_term(p, TERM_UDT);
        int nf = 0;
        do {
            char *f = cql__ident(p);
            cql__push(p, &t->field_names, &nf, sizeof(char *), &f);
            cql__expect(p, TK_COLON);
            push_term(p, t, cql__term(p));
        } while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RBRACE);
        return t;
    }
    ast_term *first = cql__term(p);
    if (cql__accept(p, TK_COLON)) {
        ast_term *t = new_term(p, TERM_MAP);
        push_term(p, t, first);
        push_term(p, t, cql__term(p));
        while (cql__accept(p, TK_COMMA)) {
            push_term(p, t, cql__term(p));
            cql__expect(p, TK_COLON);
            push_term(p, t, cql__term(p));
        }
        cql__expect(p, TK_RBRACE);
        return t;
    }
    ast_term *t = new_term(p, TERM_SET);
    push_term(p, t, first);
    while (cql__accept(p, TK_COMMA))
        push_term(p, t, cql__term(p));
    cql__expect(p, TK_RBRACE);
    return t;
}

/* '(' starts a cast when a type follows and is closed by ')'. */
static bool at_cast(cql__parser *p)
{
    cql__tok *t = cql__peek(p, 2);
    if (t->type == TK_KEYWORD && is_native_type_kw(t->kw))
        return cql__peek(p, 3)->type == TK_RPAREN;
    if (cql__at_type_start(p, 2) && t->type != TK_STRING)
        return true;
    if (t->type == TK_IDENT || t->type == TK_QUOTED_NAME) {
        if (cql__peek(p, 3)->type == TK_RPAREN)
            return true;
        return cql__peek(p, 3)->type == TK_DOT && cql__is_ident_tok(p, 4) &&
               cql__peek(p, 5)->type == TK_RPAREN;
    }
    return false;
}

/* term: constant | collection | UDT literal | tuple | null | bind marker |
 * function call | (type) term | -term. */
static ast_term *simple_inner(cql__parser *p)
{
    cql__tok *k = cql__peek(p, 1);
    ast_term *t = cql__literal(p);
    if (t)
        return t;
    switch (k->type) {
    case TK_QMARK:
    case TK_COLON:
        return cql__bind(p);
    case TK_LBRACKET:
    case TK_LBRACE:
        return collection(p);
    case TK_LPAREN:
        if (at_cast(p)) {
            t = new_term(p, TERM_CAST);
            cql__next(p);
            t->cast_type = cql__type(p);
            cql__expect(p, TK_RPAREN);
            push_term(p, t, cql__simple_term(p));
            return t;
        }
        t = new_term(p, TERM_TUPLE);
        cql__next(p);
        do
            push_term(p, t, cql__term(p));
        while (cql__accept(p, TK_COMMA));
        cql__expect(p, TK_RPAREN);
        return t;
    case TK_KEYWORD:
        if (k->kw == KW_NULL) {
            t = new_term(p, TERM_NULL);
            cql__next(p);
            return t;
        }
        break;
    default:
        break;
    }
    if (k->type == TK_KEYWORD && k->kw == KW_CAST && cql__peek(p, 2)->type == TK_LPAREN) {
        /* CAST(term AS native_type): Cassandra's cast functions, system.castas<type> */
        t = new_term(p, TERM_FUNC);
        cql__next(p);
        cql__next(p);
        push_term(p, t, cql__simple_term(p));
        cql__expect_kw(p, KW_AS);
        cql__tok *ty = cql__peek(p, 1);
        if (ty->type != TK_KEYWORD || !is_native_type_kw(ty->kw))
            cql__fail_noviable(p, 1, 1);
        t->func.ks = cql__strndup(p, "system", 6);
        t->func.name = arena_printf(p, "castas%s", lower(p, ty));
        cql__next(p);
        cql__expect(p, TK_RPAREN);
        return t;
    }
    if (cql__at_function(p, 1)) {
        t = new_term(p, TERM_FUNC);
        t->func = cql__func_name(p);
        cql__expect(p, TK_LPAREN);
        if (!cql__accept(p, TK_RPAREN)) {
            do
                push_term(p, t, cql__term(p));
            while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RPAREN);
        }
        return t;
    }
    cql__fail_noviable(p, 1, 1);
}

char *cql__type(cql__parser *p)
{
    cql__enter(p);
    char *r = type_inner(p);
    cql__leave(p);
    return r;
}

ast_term *cql__simple_term(cql__parser *p)
{
    cql__enter(p);
    ast_term *t = simple_inner(p);
    cql__leave(p);
    return t;
}

/* Can a simpleTerm start at token k?  (Decides whether an operator after a
 * term continues an arithmetic expression, as ANTLR's lookahead does: in
 * `SET l = [1] + l` the '+' is the prepend form, not an addition.) */
bool cql__at_simple_term(cql__parser *p, int k)
{
    cql__tok *t = cql__peek(p, k);
    lit_kind lk;
    if (literal_kind(t, &lk))
        return true;
    switch (t->type) {
    case TK_QMARK: case TK_COLON: case TK_LBRACKET: case TK_LBRACE: case TK_LPAREN:
        return true;
    case TK_KEYWORD:
        if (t->kw == KW_NULL)
            return true;
        if (t->kw == KW_CAST && cql__peek(p, k + 1)->type == TK_LPAREN)
            return true;
        break;
    default:
        break;
    }
    return cql__at_function(p, k);
}

/* An operator function call, as Cassandra represents arithmetic
 * (OperationFcts: system._add, _substract, _multiply, _divide, _modulo). */
static ast_term *operation(cql__parser *p, cql__tok_type op, ast_term *l, ast_term *r)
{
    ast_term *t = cql__alloc(p, sizeof(*t));
    t->kind = TERM_FUNC;
    t->pos = l->pos;
    t->func.ks = cql__strndup(p, "system", 6);
    const char *n = cql__operator_function(op);
    t->func.name = cql__strndup(p, n, strlen(n));
    push_term(p, t, l);
    push_term(p, t, r);
    return t;
}

const char *cql__operator_function(cql__tok_type op)
{
    switch (op) {
    case TK_PLUS: return "_add";
    case TK_MINUS: return "_substract";
    case TK_STAR: return "_multiply";
    case TK_SLASH: return "_divide";
    default: return "_modulo";
    }
}

/* termGroup: '-' simpleTerm (TERM_NEG) | simpleTerm */
static ast_term *term_group(cql__parser *p)
{
    if (cql__is(p, TK_MINUS)) {
        ast_term *t = new_term(p, TERM_NEG);
        cql__next(p);
        push_term(p, t, cql__simple_term(p));
        return t;
    }
    return cql__simple_term(p);
}

/* Does an operator at token 1 continue the expression? */
static bool continues(cql__parser *p)
{
    return cql__at_simple_term(p, 2) || (cql__peek(p, 2)->type == TK_MINUS && cql__at_simple_term(p, 3));
}

static ast_term *term_mult(cql__parser *p)
{
    ast_term *l = term_group(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if ((op != TK_STAR && op != TK_SLASH && op != TK_PERCENT) || !continues(p))
            return l;
        cql__next(p);
        l = operation(p, op, l, term_group(p));
    }
}

/* term: termMultiplication (('+' | '-') termMultiplication)* */
ast_term *cql__term(cql__parser *p)
{
    cql__enter(p);
    ast_term *l = term_mult(p);
    for (;;) {
        cql__tok_type op = cql__peek(p, 1)->type;
        if ((op != TK_PLUS && op != TK_MINUS) || !continues(p))
            break;
        cql__next(p);
        l = operation(p, op, l, term_mult(p));
    }
    cql__leave(p);
    return l;
}

/* ---------------------------------------------------------------- properties */

/* propertyValue: a constant (raw text) or an unreserved keyword. */
static void prop_value_text(cql__parser *p, ast_prop *pr, bool *ok)
{
    cql__tok *k = cql__peek(p, 1);
    ast_term *t = cql__literal(p);
    *ok = true;
    if (t) {
        pr->kind = t->lit.kind == LIT_STRING ? PROP_STRING
                 : (t->lit.kind == LIT_INTEGER || t->lit.kind == LIT_FLOAT) ? PROP_NUMBER
                 : t->lit.kind == LIT_BOOLEAN ? PROP_BOOL : PROP_STRING;
        pr->value = t->lit.text;
        return;
    }
    if (k->type == TK_KEYWORD && !cql__kw_reserved(k->kw)) {
        pr->kind = PROP_IDENT;
        pr->value = lower(p, k);
        cql__next(p);
        return;
    }
    *ok = false;
}

/* A term inside a property map and its source text; constants only
 * (Parser.g convertPropertyMap). */
static ast_term *prop_term(cql__parser *p, char **src)
{
    int start = cql__peek_index(p, 1);
    ast_term *t = cql__term(p);
    *src = cql__src_text(p, start, cql__last_index(p));
    return t;
}

void cql__prop(cql__parser *p, ast_props *props)
{
    ast_prop pr;
    memset(&pr, 0, sizeof(pr));
    pr.pos = cql__pos(p);
    pr.name = cql__ident(p);
    cql__expect(p, TK_EQ);
    if (cql__is(p, TK_LBRACE)) {
        cql__next(p);
        pr.kind = PROP_MAP;
        int nv = 0;
        if (!cql__accept(p, TK_RBRACE)) {
            do {
                char *ks, *vs;
                ast_term *kt = prop_term(p, &ks);
                cql__expect(p, TK_COLON);
                ast_term *vt = prop_term(p, &vs);
                if (kt->kind != TERM_LITERAL)
                    cql__fail_msg(p, "Invalid property name: %s%s", ks,
                                  kt->kind == TERM_BIND ? " (bind variables are not supported in DDL queries)" : "");
                if (vt->kind != TERM_LITERAL)
                    cql__fail_msg(p, "Invalid property value: %s for property: %s%s", vs, ks,
                                  vt->kind == TERM_BIND ? " (bind variables are not supported in DDL queries)" : "");
                char *k = kt->lit.text, *v = vt->lit.text;
                for (int i = 0; i < pr.n_map; i++)
                    if (strcmp(pr.map_keys[i], k) == 0)
                        cql__fail_msg(p, "Multiple definition for property %s", k);
                cql__push(p, &pr.map_keys, &pr.n_map, sizeof(char *), &k);
                cql__push(p, &pr.map_values, &nv, sizeof(char *), &v);
            } while (cql__accept(p, TK_COMMA));
            cql__expect(p, TK_RBRACE);
        }
    } else {
        bool ok;
        prop_value_text(p, &pr, &ok);
        if (!ok)
            cql__fail_noviable(p, 1, 1);
    }
    for (int i = 0; i < props->n; i++)
        if (strcmp(props->items[i].name, pr.name) == 0)
            cql__fail_msg(p, "Multiple definition for property %s", pr.name);
    cql__push(p, &props->items, &props->n, sizeof(ast_prop), &pr);
}

void cql__props(cql__parser *p, ast_props *props)
{
    do
        cql__prop(p, props);
    while (cql__accept_kw(p, KW_AND));
}

/* ---------------------------------------------------------------- statements */

/* One statement at the current token into st. */
static void statement(cql__parser *p, cql_stmt *st)
{
    cql__tok *t = cql__peek(p, 1);
    if (t->type != TK_KEYWORD) {
        cql__fail_noviable(p, 1, 1);
    }
    switch (t->kw) {
    case KW_SELECT:
        st->kind = STMT_SELECT;
        cql__parse_select(p, &st->u.select, false);
        return;
    case KW_INSERT: cql__parse_insert(p, st); return;
    case KW_UPDATE: cql__parse_update(p, st); return;
    case KW_DELETE: cql__parse_delete(p, st); return;
    case KW_BEGIN: cql__parse_batch(p, st); return;
    case KW_USE:
        cql__next(p);
        st->kind = STMT_USE;
        st->u.use_keyspace = cql__ks_name(p);
        return;
    case KW_TRUNCATE:
        cql__next(p);
        st->kind = STMT_TRUNCATE;
        if (!cql__accept_kw(p, KW_TABLE))
            cql__accept_kw(p, KW_COLUMNFAMILY);
        st->u.drop.name = cql__qname(p);
        return;
    case KW_CREATE: cql__parse_create(p, st); return;
    case KW_ALTER: cql__parse_alter(p, st); return;
    case KW_DROP: cql__parse_drop(p, st); return;
    case KW_DESCRIBE:
    case KW_DESC:
        cql__parse_describe(p, st);
        return;
    case KW_GRANT:
    case KW_REVOKE:
    case KW_LIST:
        cql__parse_auth(p, st);
        return;
    default:
        cql__fail_noviable(p, 1, 1);
    }
}

/* Point each batch child's bind_names at its slice of the final array. */
static void fix_batch_binds(cql__parser *p, cql_stmt *st)
{
    if (st->kind != STMT_BATCH)
        return;
    for (int i = 0; i < st->u.batch.n_stmts; i++) {
        cql_stmt *c = st->u.batch.stmts[i];
        int first = (int)(intptr_t)c->bind_names;   /* stashed by the batch parser */
        c->bind_names = c->n_binds ? p->bind_names + first : NULL;
    }
}

cql_stmt *cql_parse(const char *text, size_t len, cs_error *e)
{
    cs_error dummy;
    if (!e) {
        cs_error_init(&dummy);
        e = &dummy;
    }
    cql_stmt *st = cs_calloc(1, sizeof(*st));
    if (!st) {
        cs_error_set(e, CS_ERR_SERVER, "java.lang.OutOfMemoryError: parser out of memory");
        return NULL;
    }
    cs_arena_init(&st->arena);
    cql__parser P;
    memset(&P, 0, sizeof(P));
    cql__parser *p = &P;
    p->src = text ? text : "";
    p->len = text ? len : 0;
    p->a = &st->arena;
    p->e = e;
    p->st = st;
    p->fetched = 0;
    if (setjmp(p->jb)) {
        cql_stmt_free(st);
        return NULL;
    }
    if (cql__lex(p->src, p->len, p->a, &p->lx) != 0)
        cql__fail_oom(p);
    p->on = cql__alloc(p, sizeof(int) * (size_t)p->lx.n);
    for (int i = 0; i < p->lx.n; i++)
        if (p->lx.toks[i].type != TK_WS && p->lx.toks[i].type != TK_COMMENT)
            p->on[p->n_on++] = i;
    (void)cql__peek(p, 1);
    statement(p, st);
    while (cql__accept(p, TK_SEMI))
        ;
    if (!cql__is(p, TK_EOF))
        cql__fail_mismatch(p, "EOF");
    st->text = cql__strndup(p, p->src, p->len);
    st->text_len = p->len;
    st->n_binds = p->n_binds;
    st->bind_names = p->bind_names;
    fix_batch_binds(p, st);
    return st;
}

void cql_stmt_free(cql_stmt *s)
{
    if (!s)
        return;
    cs_arena_destroy(&s->arena);
    cs_free(s);
}

/* Source text from the start of token from_tok to the end of token to_tok
 * (absolute indexes), e.g. a selector or a view's WHERE clause. */
char *cql__src_text(cql__parser *p, int from_tok, int to_tok)
{
    if (to_tok < from_tok)
        return cql__strndup(p, "", 0);
    const cql__tok *a = &p->lx.toks[from_tok], *b = &p->lx.toks[to_tok];
    return cql__strndup(p, a->start, (size_t)(b->start + b->len - a->start));
}
