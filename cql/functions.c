/*
 * functions.c: native scalar functions and CAST.  Owner: exec-read.
 * Callers: bind.c (functions in terms: INSERT ... VALUES (now()) ...) and the
 * SELECT selection (select_sel.c).
 *
 * Time conversions follow Cassandra's TimeFcts / UUIDGen:
 *   timeuuid time field = 100 ns units since 1582-10-15 (offset
 *   0x01B21DD213814000 to the Unix epoch); min/maxTimeuuid use the lowest /
 *   highest clock-seq-and-node bytes (0x80.. / 0x7f..) as Cassandra does;
 *   date = days since epoch + 2^31; time = ns since midnight.
 */
#include <stdio.h>
#include <ctype.h>
#include <math.h>
#include <string.h>
#include "cql/exec_int.h"
#include "common/alloc.h"
#include "common/util.h"

#define UUID_EPOCH_OFFSET 0x01B21DD213814000LL

static int put_val(cql_eval *ev, const void *p, size_t n, cql_value *out, cs_error *e)
{
    out->len = (int32_t)n;
    out->p = cs_arena_memdup(ev->arena, n ? p : "", n ? n : 1);
    return out->p ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
}

static int put_i64(cql_eval *ev, int64_t v, cql_value *out, cs_error *e)
{
    uint8_t b[8];
    cs_st64(b, (uint64_t)v);
    return put_val(ev, b, 8, out, e);
}

static int put_date(cql_eval *ev, int64_t ms, cql_value *out, cs_error *e)
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    uint8_t b[4];
    cs_st32(b, (uint32_t)(days + (1LL << 31)));
    return put_val(ev, b, 4, out, e);
}

/* Unix ms of a version-1 uuid. */
static int64_t timeuuid_ms(const uint8_t *u)
{
    uint64_t lo = cs_be32(u), mid = cs_be16(u + 4), hi = cs_be16(u + 6) & 0x0fff;
    int64_t t100 = (int64_t)((hi << 48) | (mid << 32) | lo);
    int64_t d = t100 - UUID_EPOCH_OFFSET;
    return d >= 0 ? d / 10000 : -((-d + 9999) / 10000);
}

static void make_timeuuid(int64_t ms, bool max, uint8_t out[16])
{
    int64_t t100 = ms * 10000 + UUID_EPOCH_OFFSET + (max ? 9999 : 0);
    uint64_t t = (uint64_t)t100;
    cs_st32(out, (uint32_t)t);
    cs_st16(out + 4, (uint16_t)(t >> 32));
    cs_st16(out + 6, (uint16_t)(((t >> 48) & 0x0fff) | 0x1000));
    memset(out + 8, max ? 0x7f : 0x80, 8);
}

/* ms value of a timestamp/date/timeuuid argument; false if not convertible. */
static bool time_ms(const ctype *t, const cql_value *v, int64_t *ms)
{
    if (!t || v->len < 0)
        return false;
    switch (t->kind) {
    case CT_TIMEUUID:
        if (v->len != 16)
            return false;
        *ms = timeuuid_ms(v->p);
        return true;
    case CT_TIMESTAMP:
        if (v->len != 8)
            return false;
        *ms = (int64_t)cs_be64(v->p);
        return true;
    case CT_DATE:
        if (v->len != 4)
            return false;
        *ms = ((int64_t)cs_be32(v->p) - (1LL << 31)) * 86400000LL;
        return true;
    default:
        return false;
    }
}

/* Scalar type named by the suffix/prefix of blobAsX / XAsBlob. */
static const ctype *named_scalar(const char *s, size_t n)
{
    static const struct { const char *name; ctype_kind k; } m[] = {
        {"ascii", CT_ASCII}, {"bigint", CT_BIGINT}, {"blob", CT_BLOB}, {"boolean", CT_BOOLEAN},
        {"counter", CT_COUNTER}, {"decimal", CT_DECIMAL}, {"double", CT_DOUBLE},
        {"float", CT_FLOAT}, {"int", CT_INT}, {"timestamp", CT_TIMESTAMP}, {"uuid", CT_UUID},
        {"varchar", CT_VARCHAR}, {"text", CT_VARCHAR}, {"varint", CT_VARINT},
        {"timeuuid", CT_TIMEUUID}, {"inet", CT_INET}, {"date", CT_DATE}, {"time", CT_TIME},
        {"smallint", CT_SMALLINT}, {"tinyint", CT_TINYINT}, {"duration", CT_DURATION},
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(m); i++)
        if (strlen(m[i].name) == n && !memcmp(m[i].name, s, n))
            return ctype_scalar(m[i].k);
    return NULL;
}

static bool starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }
static bool ends(const char *s, const char *p)
{
    size_t a = strlen(s), b = strlen(p);
    return a > b && !strcmp(s + a - b, p);
}

static const char *base_name(const char *name)
{
    if (starts(name, "system."))
        return name + 7;
    return name;
}

const ctype *cql__fn_param_type(const char *name, int i, int n_args, const ctype *recv)
{
    name = base_name(name);
    if (!strcmp(name, "dateof") || !strcmp(name, "unixtimestampof"))
        return ctype_scalar(CT_TIMEUUID);
    if (!strcmp(name, "mintimeuuid") || !strcmp(name, "maxtimeuuid"))
        return ctype_scalar(CT_TIMESTAMP);
    if (!strcmp(name, "fromjson"))
        return ctype_scalar(CT_VARCHAR);
    if (starts(name, "blobas"))
        return ctype_scalar(CT_BLOB);
    if (ends(name, "asblob"))
        return named_scalar(name, strlen(name) - 6);
    if (!strcmp(name, "floor") && (n_args == 2 || n_args == 3)) {
        /* floor(time, duration[, start]): the time and the start of the
         * receiver's kind (a date floor gives a date, the others a timestamp) */
        if (i == 1)
            return ctype_scalar(CT_DURATION);
        return recv && (recv->kind == CT_TIMESTAMP || recv->kind == CT_DATE || recv->kind == CT_TIME) ? recv : NULL;
    }
    /* a timestamp or date receiver: the temporal operation (OperationFcts'
     * only +/- functions returning one), so `'2024-01-02' - 1d` reads its
     * operands as a timestamp and a duration */
    if (n_args == 2 && recv && (recv->kind == CT_TIMESTAMP || recv->kind == CT_DATE) &&
        (!strcmp(name, "_add") || !strcmp(name, "_substract")))
        return i == 0 ? recv : ctype_scalar(CT_DURATION);
    return NULL;
}

/* ---------------------------------------------------------------- arithmetic operators */

/* Rank of a numeric kind for operator result types (OperationFcts). */
static int num_rank(ctype_kind k)
{
    switch (k) {
    case CT_TINYINT: return 1;
    case CT_SMALLINT: return 2;
    case CT_INT: return 3;
    case CT_BIGINT: case CT_COUNTER: return 4;
    case CT_VARINT: return 5;
    case CT_FLOAT: return 6;
    case CT_DOUBLE: return 7;
    case CT_DECIMAL: return 8;
    default: return 0;
    }
}

static bool is_operator(const char *n)
{
    return !strcmp(n, "_add") || !strcmp(n, "_substract") || !strcmp(n, "_multiply") ||
           !strcmp(n, "_divide") || !strcmp(n, "_modulo") || !strcmp(n, "_negate");
}

const char *cql__fn_operator(const char *name)
{
    name = base_name(name);
    static const char *const ops[][2] = {
        { "_add", "+" }, { "_substract", "-" }, { "_multiply", "*" }, { "_divide", "/" }, { "_modulo", "%" },
    };
    for (size_t i = 0; i < CS_ARRAY_LEN(ops); i++)
        if (!strcmp(name, ops[i][0]))
            return ops[i][1];
    return NULL;
}

/* Result type of a binary numeric operator: the wider operand type, with
 * integer/floating mixes widened (varint with floating -> decimal). */
static const ctype *op_type(const ctype *a, const ctype *b)
{
    if (!a || !b)
        return NULL;
    int ra = num_rank(a->kind), rb = num_rank(b->kind);
    if (!ra || !rb)
        return NULL;
    int hi = ra > rb ? ra : rb, lo = ra > rb ? rb : ra;
    if (hi == 8 || (lo == 5 && hi >= 6))
        return ctype_scalar(CT_DECIMAL);
    if (hi == 6 && lo == 4)
        return ctype_scalar(CT_DOUBLE);
    const ctype *w = ra >= rb ? a : b;
    return w->kind == CT_COUNTER ? ctype_scalar(CT_BIGINT) : ctype_scalar(w->kind);
}

static int64_t as_i64(const cql_value *v)
{
    switch (v->len) {
    case 1: return (int8_t)v->p[0];
    case 2: return (int16_t)cs_be16(v->p);
    case 4: return (int32_t)cs_be32(v->p);
    case 8: return (int64_t)cs_be64(v->p);
    default: return 0;
    }
}

/* OperationExecutionException: a FunctionExecutionException (0x1400) of
 * the operator's function, "the operation 'int / int' failed: / by zero". */
static int op_failed(cs_error *e, const char *name, const char *ta, const char *sym, const char *tb,
                     const char *why)
{
    int rc = cs_error_set(e, CS_ERR_FUNCTION_FAILURE, "the operation '%s %s %s' failed: %s", ta, sym, tb, why);
    snprintf(e->keyspace, sizeof e->keyspace, "system");
    snprintf(e->table, sizeof e->table, "%s", name);
    snprintf(e->arg_types, sizeof e->arg_types, tb[0] ? "%s, %s" : "%s", ta, tb);
    return rc;
}

static int arith(cql_eval *ev, const char *name, const ctype *const *at, const cql_value *args, int n,
                 const ctype *rt, cql_value *out, cs_error *e)
{
    char ta[64] = "", tb[64] = "";
    const char *sym = !strcmp(name, "_add") ? "+" : !strcmp(name, "_substract") ? "-"
                    : !strcmp(name, "_multiply") ? "*" : !strcmp(name, "_divide") ? "/"
                    : !strcmp(name, "_modulo") ? "%" : "-";
    for (int i = 0; i < n; i++)
        if (args[i].len <= 0)
            return 0;                       /* null (or empty) operand: null */
    if (at[0] && ctype_kind_name(at[0]->kind))
        snprintf(ta, sizeof(ta), "%s", ctype_kind_name(at[0]->kind));
    if (n > 1 && at[1] && ctype_kind_name(at[1]->kind))
        snprintf(tb, sizeof(tb), "%s", ctype_kind_name(at[1]->kind));
    cs_buf b;
    cs_buf_init(&b);
    int rc = 0;
    ctype_kind k = rt->kind;
    if (k == CT_TIMESTAMP || k == CT_DATE) {
        rc = ctype_temporal_add_duration(k, args[0].p, (size_t)args[0].len, args[1].p, (size_t)args[1].len,
                                         sym[0] == '-', &b, e);
        if (rc == 0)
            rc = put_val(ev, b.p, b.len, out, e);
        else if (rc != CS_EUSER)
            rc = cs_error_set(e, CS_ERR_INVALID, "the operation '%s %s %s' failed", ta, sym, tb);
        cs_buf_destroy(&b);
        return rc;
    }
    if (k == CT_FLOAT || k == CT_DOUBLE) {
        /* FloatType / DoubleType: both operands toFloat() / toDouble() first,
         * the operation in that precision; % is Java's (fmod) */
        double x = ctype_num_to_double(at[0], args[0].p, (size_t)args[0].len);
        double y = n > 1 ? ctype_num_to_double(at[1], args[1].p, (size_t)args[1].len) : 0;
        double r;
        if (k == CT_FLOAT) {
            float fx = (float)x, fy = (float)y;
            r = n == 1 ? -fx : sym[0] == '+' ? fx + fy : sym[0] == '-' ? fx - fy : sym[0] == '*' ? fx * fy
              : sym[0] == '/' ? fx / fy : fmodf(fx, fy);
        } else {
            r = n == 1 ? -x : sym[0] == '+' ? x + y : sym[0] == '-' ? x - y : sym[0] == '*' ? x * y
              : sym[0] == '/' ? x / y : fmod(x, y);
        }
        uint8_t buf[8];
        if (k == CT_FLOAT) {
            float f = (float)r;
            uint32_t u;
            memcpy(&u, &f, 4);
            cs_st32(buf, u);
            rc = put_val(ev, buf, 4, out, e);
        } else {
            uint64_t u;
            memcpy(&u, &r, 8);
            cs_st64(buf, u);
            rc = put_val(ev, buf, 8, out, e);
        }
        cs_buf_destroy(&b);
        return rc;
    }
    if (k == CT_VARINT || k == CT_DECIMAL) {
        /* IntegerType's BigInteger and DecimalType's BigDecimal operations */
        const char *why = NULL;
        rc = ctype_num_big_op(n == 1 ? 'n' : sym[0], rt, at[0], args[0].p, (size_t)args[0].len,
                              n > 1 ? at[1] : NULL, n > 1 ? args[1].p : NULL, n > 1 ? (size_t)args[1].len : 0,
                              &b, &why);
        if (rc == 0)
            rc = put_val(ev, b.p, b.len, out, e);
        else if (rc == CS_EUSER)
            rc = op_failed(e, name, ta, sym, tb, why);
        else if (rc != CS_ENOMEM)
            rc = cs_error_set(e, CS_ERR_INVALID, "the operation '%s %s %s' is not supported", ta, sym, tb);
        cs_buf_destroy(&b);
        return rc;
    }
    int64_t x = as_i64(&args[0]), y = n > 1 ? as_i64(&args[1]) : 0, r;
    if ((sym[0] == '/' || sym[0] == '%') && n > 1 && y == 0) {
        cs_buf_destroy(&b);
        return op_failed(e, name, ta, sym, tb, "/ by zero");
    }
    if (n == 1)
        r = (int64_t)(0 - (uint64_t)x);
    else if (sym[0] == '+')
        r = (int64_t)((uint64_t)x + (uint64_t)y);
    else if (sym[0] == '-')
        r = (int64_t)((uint64_t)x - (uint64_t)y);
    else if (sym[0] == '*')
        r = (int64_t)((uint64_t)x * (uint64_t)y);
    else if (x == INT64_MIN && y == -1)
        r = sym[0] == '/' ? x : 0;
    else
        r = sym[0] == '/' ? x / y : x % y;
    rc = ctype_num_from_int64(rt, r, &b);      /* narrower types wrap like Java */
    if (rc == 0)
        rc = put_val(ev, b.p, b.len, out, e);
    else
        rc = cs_error_set(e, CS_ERR_INVALID, "the operation '%s %s %s' failed", ta, sym, tb);
    cs_buf_destroy(&b);
    return rc;
}

/* The overloads of floor(): (timestamp|timeuuid, duration[, timestamp])
 * -> timestamp, (date, duration[, date]) -> date, (time, duration) -> time. */
static const ctype *floor_type(const ctype *const *at, int n)
{
    if ((n != 2 && n != 3) || !at[0] || !at[1] || at[1]->kind != CT_DURATION)
        return NULL;
    ctype_kind k = at[0]->kind, start = k == CT_DATE ? CT_DATE : CT_TIMESTAMP;
    if (k != CT_TIMESTAMP && k != CT_TIMEUUID && k != CT_DATE && (k != CT_TIME || n != 2))
        return NULL;
    if (n == 3 && (!at[2] || at[2]->kind != start))
        return NULL;
    return ctype_scalar(k == CT_TIMEUUID ? CT_TIMESTAMP : k);
}

const ctype *cql__fn_sel_param_type(const char *name, int i, int n_args, const ctype *arg0)
{
    const char *b = base_name(name);
    if (!strcmp(b, "floor") && (n_args == 2 || n_args == 3) && i > 0)
        return ctype_scalar(i == 1 ? CT_DURATION : arg0 && arg0->kind == CT_DATE ? CT_DATE : CT_TIMESTAMP);
    return cql__fn_param_type(name, i, n_args, NULL);
}

/* ---------------------------------------------------------------- argument resolution (FunctionResolver) */

int cql__fn_accepts(ctype_kind param, ctype_kind arg)
{
    if (param == arg)
        return 2;
    switch (param) {   /* AbstractType.isValueCompatibleWith, native types */
    case CT_BLOB: return 1;                                         /* BytesType reads anything */
    case CT_BIGINT: return arg == CT_TIMESTAMP;
    case CT_VARINT: return arg == CT_INT || arg == CT_BIGINT || arg == CT_TIMESTAMP;
    case CT_TIMESTAMP: return arg == CT_BIGINT;
    case CT_DATE: return arg == CT_INT;
    case CT_TIME: return arg == CT_BIGINT;
    case CT_UUID: return arg == CT_TIMEUUID;
    case CT_VARCHAR: return arg == CT_ASCII;
    default: return 0;
    }
}

/* The native scalar functions with fixed signatures, in TimeFcts.all()'s
 * order (FunctionResolver lists candidates so). */
static const struct { const char *name; ctype_kind ret, arg; } fixed_sigs[] = {
    { "mintimeuuid", CT_TIMEUUID, CT_TIMESTAMP }, { "maxtimeuuid", CT_TIMEUUID, CT_TIMESTAMP },
    { "dateof", CT_TIMESTAMP, CT_TIMEUUID }, { "unixtimestampof", CT_BIGINT, CT_TIMEUUID },
    { "todate", CT_DATE, CT_TIMEUUID }, { "totimestamp", CT_TIMESTAMP, CT_TIMEUUID },
    { "tounixtimestamp", CT_BIGINT, CT_TIMEUUID }, { "tounixtimestamp", CT_BIGINT, CT_TIMESTAMP },
    { "todate", CT_DATE, CT_TIMESTAMP }, { "tounixtimestamp", CT_BIGINT, CT_DATE },
    { "totimestamp", CT_TIMESTAMP, CT_DATE },
};

static int arg_match(const cql_fn_arg *a, ctype_kind param)
{
    if (a->marker || a->null)
        return 1;                                  /* WEAKLY_ASSIGNABLE */
    if (a->lit >= 0) {
        ctype *pt = (ctype *)ctype_scalar(param);
        return ctype_literal_assignable(pt, (lit_kind)a->lit) ? 1 : 0;
    }
    if (!a->type)
        return 1;
    if (a->type->kind == CT_LIST || a->type->kind == CT_SET || a->type->kind == CT_MAP ||
        a->type->kind == CT_TUPLE || a->type->kind == CT_UDT)
        return param == CT_BLOB ? 1 : 0;
    return cql__fn_accepts(param, a->type->kind);
}

void cql__fn_sig_list(const char *fn, const ctype_kind *in, const ctype_kind *ret, const int *pick, int n, char *out,
                      size_t cap)
{
    size_t off = 0;
    out[0] = 0;
    for (int i = 0, j = 0; i < n; i++)
        if (!pick || pick[i])
            off += (size_t)snprintf(out + off, off < cap ? cap - off : 0, "%ssystem.%s : (%s) -> %s", j++ ? ", " : "",
                                    fn, ctype_kind_name(in[i]), ctype_kind_name(ret[i]));
}

int cql__fn_resolve(const char *ks, const char *name, const cql_fn_arg *args, int n, ctype_kind *params,
                    ctype_kind *ret, cs_error *e)
{
    const char *b = base_name(name);
    ctype_kind cand_arg[8], cand_ret[8];
    int nc = 0;
    for (size_t i = 0; i < CS_ARRAY_LEN(fixed_sigs) && nc < 8; i++)
        if (!strcmp(fixed_sigs[i].name, b)) {
            cand_arg[nc] = fixed_sigs[i].arg;
            cand_ret[nc++] = fixed_sigs[i].ret;
        }
    const ctype *blob_t = NULL;
    if (nc == 0 && starts(b, "blobas") && (blob_t = named_scalar(b + 6, strlen(b) - 6))) {
        cand_arg[0] = CT_BLOB;
        cand_ret[0] = blob_t->kind;
        nc = 1;
    } else if (nc == 0 && ends(b, "asblob") && (blob_t = named_scalar(b, strlen(b) - 6))) {
        cand_arg[0] = blob_t->kind;
        cand_ret[0] = CT_BLOB;
        nc = 1;
    }
    if (nc == 0)
        return 1;                                  /* not table-driven */
    if (nc == 1) {                                 /* FunctionResolver.get's fast path: validateTypes */
        if (n != 1)
            return cs_error_set(e, CS_ERR_INVALID,
                                "Invalid number of arguments in call to function system.%s: 1 required but %d provided",
                                b, n);
        if (!arg_match(&args[0], cand_arg[0]))
            return cs_error_set(e, CS_ERR_INVALID, "Type error: %s cannot be passed as argument 0 of function system.%s of type %s",
                                args[0].text ? args[0].text : "?", b, ctype_kind_name(cand_arg[0]));
        params[0] = cand_arg[0];
        *ret = cand_ret[0];
        return 0;
    }
    int m[8], weak = -1, n_weak = 0;
    for (int i = 0; i < nc; i++) {
        m[i] = n == 1 ? arg_match(&args[0], cand_arg[i]) : 0;
        if (m[i] == 2) {                           /* EXACT_MATCH wins */
            params[0] = cand_arg[i];
            *ret = cand_ret[i];
            return 0;
        }
        if (m[i] == 1 && n_weak++ == 0)
            weak = i;
        m[i] = m[i] == 1;                          /* the WEAKLY_ASSIGNABLE ones, for the ambiguity's message */
    }
    if (n_weak == 1) {
        params[0] = cand_arg[weak];
        *ret = cand_ret[weak];
        return 0;
    }
    /* the name as written: "todate", "system.todate" */
    char written[300], sigs[1024];
    snprintf(written, sizeof written, "%s%s%s", ks ? ks : "", ks ? "." : "", name);
    for (char *c = written; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    cql__fn_sig_list(b, cand_arg, cand_ret, n_weak ? m : NULL, nc, sigs, sizeof sigs);
    if (n_weak == 0)
        return cs_error_set(e, CS_ERR_INVALID,
                            "Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
                            written, sigs);
    return cs_error_set(e, CS_ERR_INVALID,
                        "Ambiguous call to function %s (can be matched by following signatures: %s): use type casts to disambiguate",
                        written, sigs);
}

const char *cql__fn_signatures(const char *name)
{
    name = base_name(name);
    if (!strcmp(name, "floor"))
        return "system.floor : (timestamp, duration) -> timestamp, "
               "system.floor : (timestamp, duration, timestamp) -> timestamp, "
               "system.floor : (timeuuid, duration) -> timestamp, "
               "system.floor : (timeuuid, duration, timestamp) -> timestamp, "
               "system.floor : (date, duration) -> date, "
               "system.floor : (date, duration, date) -> date, "
               "system.floor : (time, duration) -> time";
    return NULL;
}

const ctype *cql__fn_return_type(const char *name, const ctype *const *at, int n, const ctype *recv)
{
    name = base_name(name);
    if (is_operator(name)) {
        if (n == 2 && at[0] && at[1] && (at[0]->kind == CT_TIMESTAMP || at[0]->kind == CT_DATE) &&
            at[1]->kind == CT_DURATION && (!strcmp(name, "_add") || !strcmp(name, "_substract")))
            return ctype_scalar(at[0]->kind);   /* TemporalOperationFunction: temporal +/- duration */
        if (!strcmp(name, "_negate"))
            return n == 1 && at[0] && num_rank(at[0]->kind) ? op_type(at[0], at[0]) : NULL;
        return n == 2 ? op_type(at[0], at[1]) : NULL;
    }
    if (!strcmp(name, "now") || !strcmp(name, "currenttimeuuid") || !strcmp(name, "mintimeuuid") ||
        !strcmp(name, "maxtimeuuid"))
        return ctype_scalar(CT_TIMEUUID);
    if (!strcmp(name, "uuid"))
        return ctype_scalar(CT_UUID);
    if (!strcmp(name, "currenttimestamp") || !strcmp(name, "totimestamp") || !strcmp(name, "dateof"))
        return ctype_scalar(CT_TIMESTAMP);
    if (!strcmp(name, "currentdate") || !strcmp(name, "todate"))
        return ctype_scalar(CT_DATE);
    if (!strcmp(name, "currenttime"))
        return ctype_scalar(CT_TIME);
    if (!strcmp(name, "tounixtimestamp") || !strcmp(name, "unixtimestampof"))
        return ctype_scalar(CT_BIGINT);
    if (!strcmp(name, "floor"))   /* TimeFcts' floor overloads */
        return floor_type(at, n);
    if (!strcmp(name, "tojson"))
        return ctype_scalar(CT_VARCHAR);
    if (!strcmp(name, "fromjson"))
        return recv;
    if (starts(name, "blobas"))
        return named_scalar(name + 6, strlen(name) - 6);
    if (ends(name, "asblob") && named_scalar(name, strlen(name) - 6))
        return ctype_scalar(CT_BLOB);
    return NULL;
}

static int arity(const char *name, int want, int got, cs_error *e)
{
    if (want == got)
        return 0;
    return cs_error_set(e, CS_ERR_INVALID,
                        "Invalid number of arguments in call to function %s: %d required but %d provided",
                        name, want, got);
}

/*
 * Call a native scalar function.  Null arguments give null for the
 * conversion functions, as in Cassandra.
 */
int cql__fn_call(cql_eval *ev, const char *fullname, const ctype *const *at, const cql_value *args,
                 int n, const ctype *recv, const ctype **ret, cql_value *out, cs_error *e)
{
    const char *name = base_name(fullname);
    char shown[300];
    snprintf(shown, sizeof(shown), "system.%s", name);
    out->p = NULL;
    out->len = CQL_NULL;
    const ctype *rt = cql__fn_return_type(name, at, n, recv);
    if (!rt && cql__fn_signatures(name))
        return cs_error_set(e, CS_ERR_INVALID,
                            "Invalid call to function %s, none of its type signatures match (known type signatures: %s)",
                            name, cql__fn_signatures(name));
    if (!rt)   /* FunctionCall.Raw.prepare (a selection is refused earlier, in its own words) */
        return cs_error_set(e, CS_ERR_INVALID, "Unknown function %s called", fullname);
    *ret = rt;
    int rc;
    if (is_operator(name)) {
        if ((rc = arity(shown, !strcmp(name, "_negate") ? 1 : 2, n, e)))
            return rc;
        return arith(ev, name, at, args, n, rt, out, e);
    }
    if (!strcmp(name, "now") || !strcmp(name, "currenttimeuuid")) {
        if ((rc = arity(shown, 0, n, e)))
            return rc;
        cs_uuid u;
        cs_uuid_timeuuid(&u, cs_now_us());
        return put_val(ev, u.b, 16, out, e);
    }
    if (!strcmp(name, "uuid")) {
        if ((rc = arity(shown, 0, n, e)))
            return rc;
        cs_uuid u;
        cs_uuid_random(&u);
        return put_val(ev, u.b, 16, out, e);
    }
    if (!strcmp(name, "currenttimestamp")) {
        if ((rc = arity(shown, 0, n, e)))
            return rc;
        return put_i64(ev, cql__eval_now_us(ev) / 1000, out, e);
    }
    if (!strcmp(name, "currentdate")) {
        if ((rc = arity(shown, 0, n, e)))
            return rc;
        return put_date(ev, cql__eval_now_us(ev) / 1000, out, e);
    }
    if (!strcmp(name, "currenttime")) {
        if ((rc = arity(shown, 0, n, e)))
            return rc;
        int64_t ns = (cql__eval_now_us(ev) % 86400000000LL) * 1000;
        return put_i64(ev, ns, out, e);
    }
    if (!strcmp(name, "totimestamp") || !strcmp(name, "todate") || !strcmp(name, "tounixtimestamp") ||
        !strcmp(name, "dateof") || !strcmp(name, "unixtimestampof")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        if (args[0].len < 0)
            return 0;
        int64_t ms;
        if (!time_ms(at[0], &args[0], &ms)) {
            if (args[0].len == 0)
                return 0;
            return cs_error_set(e, CS_ERR_INVALID, "Type error: cannot convert argument of function %s", shown);
        }
        if (!strcmp(name, "todate"))
            return put_date(ev, ms, out, e);
        return put_i64(ev, ms, out, e);
    }
    if (!strcmp(name, "floor")) {
        for (int i = 0; i < n; i++)
            if (args[i].len <= 0)
                return 0;                   /* a null (or empty) argument: null */
        if (rt->kind == CT_TIME) {
            if (args[0].len != 8)
                return 0;
            int64_t ns;
            if ((rc = ctype_floor_time((int64_t)cs_be64(args[0].p), args[1].p, (size_t)args[1].len, &ns, e)))
                return rc == CS_EUSER ? rc : cs_error_set(e, CS_ERR_INVALID, "Invalid duration in %s", shown);
            return put_i64(ev, ns, out, e);
        }
        int64_t t, start = 0, ms;
        if (!time_ms(at[0], &args[0], &t) || (n == 3 && !time_ms(at[2], &args[2], &start)))
            return 0;
        if ((rc = ctype_floor_timestamp(t, args[1].p, (size_t)args[1].len, start, rt->kind == CT_DATE, &ms, e)))
            return rc == CS_EUSER ? rc : cs_error_set(e, CS_ERR_INVALID, "Invalid duration in %s", shown);
        return rt->kind == CT_DATE ? put_date(ev, ms, out, e) : put_i64(ev, ms, out, e);
    }
    if (!strcmp(name, "mintimeuuid") || !strcmp(name, "maxtimeuuid")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        if (args[0].len < 0)
            return 0;
        int64_t ms;
        if (!time_ms(at[0] ? at[0] : ctype_scalar(CT_TIMESTAMP), &args[0], &ms))
            return 0;
        uint8_t u[16];
        make_timeuuid(ms, name[1] == 'a', u);
        return put_val(ev, u, 16, out, e);
    }
    if (!strcmp(name, "tojson")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        cs_buf b;
        cs_buf_init(&b);
        if (args[0].len < 0)
            cs_buf_put(&b, "null", 4);
        else if (ctype_format_json(at[0] ? at[0] : ctype_scalar(CT_BLOB), args[0].p, (size_t)args[0].len, &b)) {
            cs_buf_destroy(&b);
            return cs_error_set(e, CS_ERR_INVALID, "Cannot format value as JSON");
        }
        rc = put_val(ev, b.p, b.len, out, e);
        cs_buf_destroy(&b);
        return rc;
    }
    if (!strcmp(name, "fromjson")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        if (!recv)
            return cs_error_set(e, CS_ERR_INVALID, "fromJson() cannot be used in the selection clause of a SELECT statement");
        if (args[0].len < 0)
            return 0;
        cs_buf b;
        cs_buf_init(&b);
        rc = ctype_from_json(recv, (const char *)args[0].p, (size_t)args[0].len, &b, e);
        if (rc == 0)
            rc = put_val(ev, b.p, b.len, out, e);
        cs_buf_destroy(&b);
        return rc;
    }
    if (starts(name, "blobas")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        if (args[0].len < 0)
            return 0;
        if (ctype_validate(rt, args[0].p, (size_t)args[0].len, e))
            return CS_EUSER;
        *out = args[0];
        return 0;
    }
    if (ends(name, "asblob")) {
        if ((rc = arity(shown, 1, n, e)))
            return rc;
        *out = args[0];
        return 0;
    }
    return cs_error_set(e, CS_ERR_INVALID, "Unknown function %s called", fullname);
}
