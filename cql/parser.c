/*
 * parser.c: entry point of the hand-written recursive-descent CQL parser
 * (owner: parser): cql_parse(), token access, Cassandra-style syntax
 * errors, identifiers and qualified names, statement dispatch.
 *
 * Grammar: Cassandra 4.1's Parser.g (CQL 3.4.6) plus the 5.0 additions
 * ast.h names.  Types, terms and properties live in parser_term.c;
 * statements in parser_dml.c, parser_ddl.c and parser_auth.c.
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

char *cql__printf(cql__parser *p, const char *fmt, ...)
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
    if (i < 0)
        i = 0;
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

/* Java chars (UTF-16 units) a UTF-8 byte starts (see lexer.c). */
static int units(unsigned char c) { return (c & 0xC0) == 0x80 ? 0 : c >= 0xF0 ? 2 : 1; }

/* Byte offset of Java char position cp within s[0..n) (clamped to n). */
static size_t cp_off(const char *s, size_t n, size_t cp)
{
    size_t i = 0;
    while (i < n && cp > 0) {
        size_t u = (size_t)units((unsigned char)s[i]);
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        cp = cp > u ? cp - u : 0;
    }
    return i;
}

static size_t cp_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (size_t)units((unsigned char)s[i]);
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
        char *buf = cql__alloc(p, ln + 3);
        size_t bn = ln;
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
/* Drop a UTF-8 sequence cut short at the end of s (messages are bounded;
 * a driver must still be able to decode them). */
static void utf8_trim(char *s)
{
    size_t n = strlen(s);
    size_t i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (n - (i - 1) < need)
        s[i - 1] = 0;
}

static void token_display(cql__parser *p, const cql__tok *t, char *buf, size_t bn)
{
    if (t->type == TK_EOF) {
        snprintf(buf, bn, "'<EOF>'");
        return;
    }
    char *txt = antlr_text(p, t);
    size_t o = 0;
    buf[o++] = '\'';
    for (const char *c = txt; *c && o + 6 < bn; c++) {
        if (*c == '\n') { buf[o++] = '\\'; buf[o++] = 'n'; }
        else if (*c == '\r') { buf[o++] = '\\'; buf[o++] = 'r'; }
        else if (*c == '\t') { buf[o++] = '\\'; buf[o++] = 't'; }
        else buf[o++] = *c;
    }
    buf[o] = 0;
    utf8_trim(buf + 1);
    o = strlen(buf);
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
    utf8_trim(msg);
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
    utf8_trim(msg);
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
    utf8_trim(msg);
    cs_error_set(p->e, CS_ERR_SYNTAX, "%s", msg);
    longjmp(p->jb, 1);
}

/* ---------------------------------------------------------------- token values */

/* Unescaped content of a 'string', $$string$$ or "quoted name". */
char *cql__unquote(cql__parser *p, const cql__tok *t, size_t *outlen)
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
        return cql__unquote(p, t, NULL);
    return cql__tok_text(p, t);
}

char *cql__lower(cql__parser *p, const cql__tok *t)
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
        r = cql__unquote(p, t, NULL);
        if (!r[0])
            cql__fail_noviable(p, 1, 1);
    } else {
        r = cql__lower(p, t);
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

/* Lex and parse into p->st.  The only function that calls setjmp: the
 * parser state lives in the caller's frame, so it is well defined after a
 * longjmp (C11 7.13.2.1).  Returns 0, or -1 with p->e set. */
static int run(cql__parser *p)
{
    if (setjmp(p->jb))
        return -1;
    if (cql__lex(p->src, p->len, &p->lx) != 0)
        cql__fail_oom(p);
    p->on = cs_malloc(sizeof(int) * (size_t)p->lx.n);
    if (!p->on)
        cql__fail_oom(p);
    for (int i = 0; i < p->lx.n; i++)
        if (p->lx.toks[i].type != TK_WS && p->lx.toks[i].type != TK_COMMENT)
            p->on[p->n_on++] = i;
    (void)cql__peek(p, 1);
    cql_stmt *st = p->st;
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
    return 0;
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
    P.src = text ? text : "";
    P.len = text ? len : 0;
    P.a = &st->arena;
    P.e = e;
    P.st = st;
    int rc = run(&P);
    /* tokens only live while parsing */
    cql__lexed_free(&P.lx);
    cs_free(P.on);
    if (rc != 0) {
        cql_stmt_free(st);
        return NULL;
    }
    return st;
}

void cql_stmt_free(cql_stmt *s)
{
    if (!s)
        return;
    if (s->kind == STMT_BATCH)   /* the children live in s->arena; their memos do not */
        for (int i = 0; i < s->u.batch.n_stmts; i++)
            cs_free(s->u.batch.stmts[i]->exec_memo);
    cs_free(s->exec_memo);
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
