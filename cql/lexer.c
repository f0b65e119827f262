/*
 * lexer.c: CQL tokens, keywords and identifier quoting (owner: parser).
 *
 * Follows the token rules of Cassandra 4.1's Lexer.g: case-insensitive
 * keywords, IDENT = letter (letter|digit|_)*, "quoted names" with ""
 * escapes, 'strings' with '' escapes and $$pg-style$$ strings, INTEGER /
 * FLOAT (exponent), HEXNUMBER 0x.., UUID, DURATION (1h30m, P1Y2M, PT1H,
 * P2W), BOOLEAN true/false, QMARK, comments (-- and // up to a newline,
 * slash-star blocks) as hidden tokens.  Lexer errors use ANTLR 3's wording
 * ("mismatched character '<EOF>' expecting '''", "no viable alternative at
 * character '@'"); after one, lexing skips a character and goes on, and the
 * parser reports the error when it reaches that point (ErrorCollector keeps
 * the first error).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "cql/lexer_int.h"
#include "common/alloc.h"
#include "common/arena.h"
#include "common/buf.h"

/* ---------------------------------------------------------------- keywords */

/* Sorted; same order as cql__kw.  Lower case. */
static const char *const kw_names[KW__COUNT] = {
    "access", "add", "aggregate", "aggregates", "all", "allow", "alter", "and", "apply",
    "as", "asc", "ascii", "authorize", "batch", "begin", "bigint", "blob", "boolean",
    "by", "called", "cast", "cluster", "clustering", "columnfamily", "compact",
    "contains", "count", "counter", "create", "custom", "datacenters", "date",
    "decimal", "default", "delete", "desc", "describe", "distinct", "double",
    "drop", "duration", "entries", "execute", "exists", "filtering", "finalfunc",
    "float", "from", "frozen", "full", "function", "functions", "grant", "group",
    "hashed", "if", "in", "index", "inet", "infinity", "initcond", "input",
    "insert", "int", "internals", "into", "is", "json", "key", "keys", "keyspace",
    "keyspaces", "language", "like", "limit", "list", "login", "map",
    "materialized", "maxwritetime", "mbean", "mbeans", "modify", "nan", "nologin",
    "norecursive", "nosuperuser", "not", "null", "of", "on", "only", "options",
    "or", "order", "partition", "password", "per", "permission", "permissions",
    "primary", "rename", "replace", "returns", "revoke", "role", "roles", "schema",
    "select", "set", "sfunc", "smallint", "static", "storage", "stype", "superuser",
    "table", "tables", "text", "time", "timestamp", "timeuuid", "tinyint", "to",
    "token", "trigger", "truncate", "ttl", "tuple", "type", "types", "unlogged",
    "unset", "update", "use", "user", "users", "using", "uuid", "values", "varchar",
    "varint", "view", "where", "with", "writetime",
};

/* Cassandra's reserved keywords (ReservedKeywords.java, 4.0/4.1): these
 * cannot be used as unquoted identifiers.  Sorted (binary search). */
static const char *const reserved[] = {
    "add", "allow", "alter", "and", "apply", "asc", "authorize", "batch", "begin", "by",
    "columnfamily", "create", "delete", "desc", "describe", "drop", "entries", "execute",
    "from", "full", "grant", "if", "in", "index", "infinity", "insert", "into", "is",
    "keyspace", "limit", "materialized", "modify", "nan", "norecursive", "not", "null",
    "of", "on", "or", "order", "primary", "rename", "revoke", "schema", "select", "set",
    "table", "to", "token", "truncate", "unlogged", "update", "use", "using", "view",
    "where", "with",
};


int cql__kw_lookup(const char *s, size_t n)
{
    char buf[32];
    if (n == 0 || n >= sizeof(buf))
        return KW_NONE;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    buf[n] = 0;
    if (strcmp(buf, "columnfamilies") == 0)   /* Lexer.g: K_TABLES also matches this */
        return KW_TABLES;
    int lo = 0, hi = KW__COUNT - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(buf, kw_names[mid]);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return KW_NONE;
}

const char *cql__kw_name(int kw)
{
    static _Thread_local char names[KW__COUNT][24];
    if (kw < 0 || kw >= KW__COUNT)
        return "?";
    if (!names[kw][0]) {
        size_t i;
        for (i = 0; kw_names[kw][i] && i < sizeof(names[kw]) - 1; i++)
            names[kw][i] = (char)toupper((unsigned char)kw_names[kw][i]);
        names[kw][i] = 0;
    }
    return names[kw];
}

bool cql_is_reserved_keyword(const char *lowercased)
{
    int lo = 0, hi = (int)(sizeof(reserved) / sizeof(reserved[0])) - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(lowercased, reserved[mid]);
        if (c == 0)
            return true;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return false;
}

bool cql__kw_reserved(int kw)
{
    return kw >= 0 && kw < KW__COUNT && cql_is_reserved_keyword(kw_names[kw]);
}

/* Append name, double-quoted (with " doubled) unless it is a plain
 * lower-case identifier that is not a reserved keyword (as Cassandra's
 * ColumnIdentifier.maybeQuote). */
void cql_quote_ident(const char *name, cs_buf *out)
{
    bool plain = (name[0] >= 'a' && name[0] <= 'z');
    for (const char *c = name; plain && *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
            plain = false;
    if (plain && !cql_is_reserved_keyword(name)) {
        cs_buf_put(out, name, strlen(name));
        return;
    }
    cs_buf_put_u8(out, '"');
    for (const char *c = name; *c; c++) {
        if (*c == '"')
            cs_buf_put_u8(out, '"');
        cs_buf_put_u8(out, (uint8_t)*c);
    }
    cs_buf_put_u8(out, '"');
}

const char *cql__tok_name(cql__tok_type t, int kw)
{
    static _Thread_local char buf[40];
    switch (t) {
    case TK_EOF: return "EOF";
    case TK_WS: return "WS";
    case TK_COMMENT: return "COMMENT";
    case TK_IDENT: return "IDENT";
    case TK_QUOTED_NAME: return "QUOTED_NAME";
    case TK_STRING: return "STRING_LITERAL";
    case TK_INTEGER: return "INTEGER";
    case TK_FLOAT: return "FLOAT";
    case TK_BOOLEAN: return "BOOLEAN";
    case TK_DURATION: return "DURATION";
    case TK_UUID: return "UUID";
    case TK_HEX: return "HEXNUMBER";
    case TK_QMARK: return "QMARK";
    case TK_SEMI: return "';'";
    case TK_COMMA: return "','";
    case TK_DOT: return "'.'";
    case TK_RANGE: return "RANGE";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_LBRACKET: return "'['";
    case TK_RBRACKET: return "']'";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_EQ: return "'='";
    case TK_LT: return "'<'";
    case TK_LTE: return "'<='";
    case TK_GT: return "'>'";
    case TK_GTE: return "'>='";
    case TK_NEQ: return "'!='";
    case TK_PLUS: return "'+'";
    case TK_MINUS: return "'-'";
    case TK_STAR: return "'*'";
    case TK_SLASH: return "'/'";
    case TK_PERCENT: return "'%'";
    case TK_COLON: return "':'";
    case TK_PLUS_EQ: return "'+='";
    case TK_MINUS_EQ: return "'-='";
    case TK_KEYWORD:
        /* Lexer.g: TABLE is K_COLUMNFAMILY, TABLES is K_TABLES */
        snprintf(buf, sizeof(buf), "K_%s", kw == KW_TABLE ? "COLUMNFAMILY" : cql__kw_name(kw));
        return buf;
    default: return "?";
    }
}

/* ---------------------------------------------------------------- scanner */

typedef struct lexer {
    const char *s; size_t n, i;
    int line, col;
    cql__lexed *out;
    int cap;
    int err;                            /* CS_ENOMEM */
} lexer;

static int ch(const lexer *L, size_t k) { return L->i + k < L->n ? (unsigned char)L->s[L->i + k] : -1; }
static bool is_letter(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_word(int c) { return is_letter(c) || is_digit(c) || c == '_'; }

/* Java chars (UTF-16 units) a UTF-8 byte starts: 0 for continuation bytes,
 * 2 for a 4-byte sequence (a surrogate pair in Java), else 1.  ANTLR's
 * columns and token lengths count Java chars. */
static int units(unsigned char c) { return (c & 0xC0) == 0x80 ? 0 : c >= 0xF0 ? 2 : 1; }

/* Advance one byte, keeping ANTLR's line/column. */
static void adv(lexer *L)
{
    if (L->i >= L->n)
        return;
    unsigned char c = (unsigned char)L->s[L->i++];
    if (c == '\n') {
        L->line++;
        L->col = 0;
    } else {
        L->col += units(c);
    }
}

static void advn(lexer *L, size_t k) { while (k--) adv(L); }

static size_t cp_count(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (size_t)units((unsigned char)s[i]);
    return c;
}

static void emit(lexer *L, cql__tok_type t, int kw, size_t start, int line, int col, size_t text_chars)
{
    cql__lexed *o = L->out;
    if (L->err)
        return;
    if (o->n == L->cap) {
        int nc = L->cap ? L->cap * 2 : 64;
        cql__tok *nt = cs_realloc(o->toks, sizeof(*nt) * (size_t)nc);
        if (!nt) {
            L->err = CS_ENOMEM;
            return;
        }
        o->toks = nt;
        L->cap = nc;
    }
    cql__tok *k = &o->toks[o->n++];
    k->type = t;
    k->kw = kw;
    k->start = L->s + start;
    k->len = L->i - start;
    k->line = line;
    k->col = col;
    k->text_chars = text_chars;
}

/* Character display as ANTLR's getCharErrorDisplay: '<EOF>', '\n', 'x'. */
static void char_display(const lexer *L, char *buf, size_t bn)
{
    int c = ch(L, 0);
    if (c < 0)
        snprintf(buf, bn, "'<EOF>'");
    else if (c == '\n')
        snprintf(buf, bn, "'\\n'");
    else if (c == '\r')
        snprintf(buf, bn, "'\\r'");
    else if (c == '\t')
        snprintf(buf, bn, "'\\t'");
    else if (c >= 0xF0)
        /* Java sees half a surrogate pair, which goes out on the wire as '?' */
        snprintf(buf, bn, "'?'");
    else {
        size_t k = 1;
        while (k < 4 && L->i + k < L->n && ((unsigned char)L->s[L->i + k] & 0xC0) == 0x80)
            k++;
        snprintf(buf, bn, "'%.*s'", (int)k, L->s + L->i);
    }
}

/* Record a lexer error at the current character (first one wins). */
static void lex_error(lexer *L, const char *fmt_after)
{
    cql__lexed *o = L->out;
    if (o->err_tok >= 0)
        return;
    char cd[16];
    char_display(L, cd, sizeof(cd));
    o->err_tok = o->n;
    if (strncmp(fmt_after, "novia", 5) == 0)
        snprintf(o->err_msg, sizeof(o->err_msg), "line %d:%d no viable alternative at character %s",
                 L->line, L->col, cd);
    else
        snprintf(o->err_msg, sizeof(o->err_msg), "line %d:%d mismatched character %s expecting %s",
                 L->line, L->col, cd, fmt_after);
}

/* Length of a duration unit at offset k, or 0. */
static size_t duration_unit(const lexer *L, size_t k)
{
    int c0 = ch(L, k), c1 = ch(L, k + 1);
    c0 = (c0 >= 0 && c0 < 128) ? tolower(c0) : c0;
    c1 = (c1 >= 0 && c1 < 128) ? tolower(c1) : c1;
    if ((c0 == 'm' && (c1 == 'o' || c1 == 's')) || ((c0 == 'u' || c0 == 'n') && c1 == 's'))
        return 2;
    if (c0 == 0xC2 && c1 == 0xB5 && (ch(L, k + 2) == 's' || ch(L, k + 2) == 'S'))
        return 3;   /* µs */
    if (c0 == 'y' || c0 == 'w' || c0 == 'd' || c0 == 'h' || c0 == 'm' || c0 == 's')
        return 1;
    return 0;
}

/* Digits+unit sequence starting at offset k (after an optional '-');
 * returns its length, or 0 if it is not a duration. */
static size_t scan_duration(const lexer *L, size_t k)
{
    size_t start = k;
    int groups = 0;
    for (;;) {
        size_t d = k;
        while (is_digit(ch(L, d)))
            d++;
        if (d == k)
            break;
        size_t u = duration_unit(L, d);
        if (!u)
            break;
        k = d + u;
        groups++;
    }
    return groups ? k - start : 0;
}

/* Digits at w[i..): returns the index after them (== i if none). */
static size_t digits(const char *w, size_t n, size_t i)
{
    while (i < n && is_digit((unsigned char)w[i]))
        i++;
    return i;
}

/* Designator sequence like "1Y2M3D" over the letters in `order` (each at
 * most once, in order, at least one).  Case-sensitive as Lexer.g. */
static bool designators(const char *w, size_t n, size_t i, const char *order, size_t *end)
{
    bool any = false;
    size_t oi = 0;
    while (i < n) {
        size_t d = digits(w, n, i);
        if (d == i || d == n)
            break;
        const char *pos = strchr(order + oi, w[d]);
        if (!pos || !w[d])
            break;
        oi = (size_t)(pos - order) + 1;
        any = true;
        i = d + 1;
    }
    *end = i;
    return any;
}

/* ISO 8601 duration starting with 'P' at w (after an optional '-'):
 * P1Y2M3D, PT1H2M3S, P1DT2H, P2W, P0001-02-03T04:05:06.  Returns its
 * length, or 0. */
static size_t iso_duration(const char *w, size_t n)
{
    if (n < 3 || w[0] != 'P')
        return 0;
    size_t i = 1, e;
    /* alternative format */
    static const char alt[] = "dddd-dd-ddTdd:dd:dd";
    if (n >= 20) {
        size_t k;
        for (k = 0; alt[k]; k++)
            if (alt[k] == 'd' ? !is_digit((unsigned char)w[1 + k]) : w[1 + k] != alt[k])
                break;
        if (!alt[k])
            return 20;
    }
    size_t d = digits(w, n, i);
    if (d > i && d < n && w[d] == 'W')
        return d + 1;
    if (w[i] == 'T')
        return designators(w, n, i + 1, "HMS", &e) ? e : 0;
    if (!designators(w, n, i, "YMD", &e))
        return 0;
    if (e < n && w[e] == 'T') {
        size_t e2;
        if (designators(w, n, e + 1, "HMS", &e2))
            return e2;
    }
    return e;
}

/* Length of an ISO 8601 duration token ([-]P...) at the current char, or 0
 * (a longer identifier wins, as with ANTLR's longest match). */
static size_t iso_at(const lexer *L)
{
    size_t off = ch(L, 0) == '-' ? 1 : 0;
    if (L->i + off >= L->n)
        return 0;
    size_t len = iso_duration(L->s + L->i + off, L->n - L->i - off);
    if (!len || is_word(ch(L, off + len)))
        return 0;
    return off + len;
}

/* "-NaN" or "-Infinity" (any case) as a whole word at the current char. */
static bool neg_special(const lexer *L)
{
    size_t k = 1;
    while (is_word(ch(L, k)))
        k++;
    int kw = cql__kw_lookup(L->s + L->i + 1, k - 1);
    return kw == KW_NAN || kw == KW_INFINITY;
}

static bool uuid_at(const lexer *L)
{
    static const int groups[] = { 8, 4, 4, 4, 12 };
    size_t k = 0;
    for (int g = 0; g < 5; g++) {
        for (int j = 0; j < groups[g]; j++, k++)
            if (!is_hex(ch(L, k)))
                return false;
        if (g < 4) {
            if (ch(L, k) != '-')
                return false;
            k++;
        }
    }
    return !is_word(ch(L, k));
}

/* Number, duration, float starting at the current char ('-' or digit). */
static void lex_number(lexer *L, size_t start, int line, int col)
{
    size_t k = ch(L, 0) == '-' ? 1 : 0;
    size_t dl = scan_duration(L, k);
    if (dl) {
        advn(L, k + dl);
        emit(L, TK_DURATION, KW_NONE, start, line, col, k + dl);
        return;
    }
    while (is_digit(ch(L, k)))
        k++;
    bool flt = false;
    if (ch(L, k) == '.' && ch(L, k + 1) == '.' && ch(L, k + 2) == '.') {
        /* Lexer.g's FLOAT: (INTEGER '.' RANGE) => INTEGER '.', so m[0...3.]
         * is 0. .. 3. (and 0..3 stays INTEGER RANGE INTEGER) */
        advn(L, k + 1);
        emit(L, TK_FLOAT, KW_NONE, start, line, col, k + 1);
        return;
    }
    if (ch(L, k) == '.' && ch(L, k + 1) != '.') {
        flt = true;
        k++;
        while (is_digit(ch(L, k)))
            k++;
    }
    if (ch(L, k) == 'e' || ch(L, k) == 'E') {
        size_t e = k + 1;
        if (ch(L, e) == '+' || ch(L, e) == '-')
            e++;
        if (is_digit(ch(L, e))) {
            while (is_digit(ch(L, e)))
                e++;
            k = e;
            flt = true;
        }
    }
    advn(L, k);
    emit(L, flt ? TK_FLOAT : TK_INTEGER, KW_NONE, start, line, col, k);
}

/* 'string' with '' escapes: returns false on EOF (error recorded). */
static void lex_string(lexer *L, size_t start, int line, int col)
{
    size_t chars = 0;
    adv(L);
    for (;;) {
        int c = ch(L, 0);
        if (c < 0) {
            lex_error(L, "'''");
            emit(L, TK_STRING, KW_NONE, start, line, col, chars);
            return;
        }
        if (c == '\'') {
            if (ch(L, 1) == '\'') {
                advn(L, 2);
                chars++;
                continue;
            }
            adv(L);
            break;
        }
        chars += (size_t)units((unsigned char)c);
        adv(L);
    }
    emit(L, TK_STRING, KW_NONE, start, line, col, chars);
}

static void lex_dollar_string(lexer *L, size_t start, int line, int col)
{
    advn(L, 2);
    size_t cstart = L->i;
    for (;;) {
        if (ch(L, 0) < 0) {
            lex_error(L, "'$'");
            break;
        }
        if (ch(L, 0) == '$' && ch(L, 1) == '$') {
            size_t cend = L->i;
            advn(L, 2);
            emit(L, TK_STRING, KW_NONE, start, line, col, cp_count(L->s + cstart, cend - cstart));
            return;
        }
        adv(L);
    }
    emit(L, TK_STRING, KW_NONE, start, line, col, cp_count(L->s + cstart, L->i - cstart));
}

static void lex_quoted(lexer *L, size_t start, int line, int col)
{
    size_t chars = 0;
    adv(L);
    for (;;) {
        int c = ch(L, 0);
        if (c < 0) {
            lex_error(L, "'\"'");
            break;
        }
        if (c == '"') {
            if (ch(L, 1) == '"') {
                advn(L, 2);
                chars++;
                continue;
            }
            adv(L);
            break;
        }
        chars += (size_t)units((unsigned char)c);
        adv(L);
    }
    emit(L, TK_QUOTED_NAME, KW_NONE, start, line, col, chars);
}

static void lex_word(lexer *L, size_t start, int line, int col)
{
    size_t k = 0;
    while (is_word(ch(L, k)))
        k++;
    const char *w = L->s + L->i;
    advn(L, k);
    if ((k == 4 && strncasecmp(w, "true", 4) == 0) || (k == 5 && strncasecmp(w, "false", 5) == 0)) {
        emit(L, TK_BOOLEAN, KW_NONE, start, line, col, k);
        return;
    }
    int kw = cql__kw_lookup(w, k);
    emit(L, kw >= 0 ? TK_KEYWORD : TK_IDENT, kw, start, line, col, k);
}

/* One punctuation token, or a lexer error for an unknown character. */
static void lex_punct(lexer *L, size_t start, int line, int col)
{
    int c = ch(L, 0), c1 = ch(L, 1);
    cql__tok_type t;
    size_t n = 1;
    switch (c) {
    case ';': t = TK_SEMI; break;
    case ',': t = TK_COMMA; break;
    case '.': if (c1 == '.') { t = TK_RANGE; n = 2; } else t = TK_DOT; break;
    case '(': t = TK_LPAREN; break;
    case ')': t = TK_RPAREN; break;
    case '[': t = TK_LBRACKET; break;
    case ']': t = TK_RBRACKET; break;
    case '{': t = TK_LBRACE; break;
    case '}': t = TK_RBRACE; break;
    case '=': t = TK_EQ; break;
    case '<': if (c1 == '=') { t = TK_LTE; n = 2; } else t = TK_LT; break;
    case '>': if (c1 == '=') { t = TK_GTE; n = 2; } else t = TK_GT; break;
    case '+': if (c1 == '=') { t = TK_PLUS_EQ; n = 2; } else t = TK_PLUS; break;
    case '-': if (c1 == '=') { t = TK_MINUS_EQ; n = 2; } else t = TK_MINUS; break;
    case '*': t = TK_STAR; break;
    case '/': t = TK_SLASH; break;
    case '%': t = TK_PERCENT; break;
    case ':': t = TK_COLON; break;
    case '?': t = TK_QMARK; break;
    case '!':
        if (c1 == '=') {
            t = TK_NEQ;
            n = 2;
            break;
        }
        adv(L);
        lex_error(L, "'='");
        return;
    default:
        lex_error(L, "noviable");
        adv(L);
        while (L->i < L->n && ((unsigned char)L->s[L->i] & 0xC0) == 0x80)
            adv(L);
        return;
    }
    advn(L, n);
    emit(L, t, KW_NONE, start, line, col, n);
}

static void lex_comment(lexer *L, size_t start, int line, int col)
{
    if (ch(L, 0) == '/' && ch(L, 1) == '*') {
        advn(L, 2);
        for (;;) {
            if (ch(L, 0) < 0) {
                lex_error(L, "'*'");
                break;
            }
            if (ch(L, 0) == '*' && ch(L, 1) == '/') {
                advn(L, 2);
                break;
            }
            adv(L);
        }
    } else {
        advn(L, 2);
        for (;;) {
            int c = ch(L, 0);
            if (c < 0) {
                /* ANTLR 3's rule needs the newline: .* ('\n'|'\r') */
                lex_error(L, "set null");
                break;
            }
            adv(L);
            if (c == '\n' || c == '\r')
                break;
        }
    }
    emit(L, TK_COMMENT, KW_NONE, start, line, col, cp_count(L->s + start, L->i - start));
}

void cql__lexed_free(cql__lexed *l)
{
    cs_free(l->toks);
    l->toks = NULL;
    l->n = 0;
}

int cql__lex(const char *text, size_t len, cql__lexed *out)
{
    lexer L = { .s = text, .n = len, .i = 0, .line = 1, .col = 0, .out = out };
    out->toks = NULL;
    out->n = 0;
    out->err_tok = -1;
    out->err_msg[0] = 0;
    while (L.i < L.n && !L.err) {
        size_t start = L.i;
        int line = L.line, col = L.col;
        int c = ch(&L, 0), c1 = ch(&L, 1);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            while (ch(&L, 0) == ' ' || ch(&L, 0) == '\t' || ch(&L, 0) == '\n' || ch(&L, 0) == '\r')
                adv(&L);
            emit(&L, TK_WS, KW_NONE, start, line, col, cp_count(text + start, L.i - start));
        } else if ((c == '-' && c1 == '-') || (c == '/' && (c1 == '/' || c1 == '*'))) {
            lex_comment(&L, start, line, col);
        } else if (c == '\'') {
            lex_string(&L, start, line, col);
        } else if (c == '$' && c1 == '$') {
            lex_dollar_string(&L, start, line, col);
        } else if (c == '"') {
            lex_quoted(&L, start, line, col);
        } else if (is_hex(c) && uuid_at(&L)) {
            advn(&L, 36);
            emit(&L, TK_UUID, KW_NONE, start, line, col, 36);
        } else if (c == '0' && (c1 == 'x' || c1 == 'X')) {
            size_t k = 2;
            while (is_hex(ch(&L, k)))
                k++;
            advn(&L, k);
            emit(&L, TK_HEX, KW_NONE, start, line, col, k);
        } else if ((c == 'P' || (c == '-' && c1 == 'P')) && iso_at(&L)) {
            size_t k = iso_at(&L);
            advn(&L, k);
            emit(&L, TK_DURATION, KW_NONE, start, line, col, k);
        } else if (c == '-' && is_letter(c1) && neg_special(&L)) {
            /* Lexer.g: K_NEGATIVE_NAN / K_NEGATIVE_INFINITY are single tokens */
            size_t k = 1;
            while (is_word(ch(&L, k)))
                k++;
            int kw = cql__kw_lookup(text + L.i + 1, k - 1);
            advn(&L, k);
            emit(&L, TK_KEYWORD, kw, start, line, col, k);
        } else if (is_digit(c) || (c == '-' && is_digit(c1))) {
            lex_number(&L, start, line, col);
        } else if (is_letter(c)) {
            lex_word(&L, start, line, col);
        } else {
            lex_punct(&L, start, line, col);
        }
    }
    size_t end = L.i;
    emit(&L, TK_EOF, KW_NONE, end, L.line, L.col, 5);
    return L.err;
}
