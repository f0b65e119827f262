/*
 * types.h: every CQL type.  Owner: cql/types/ (all .c files).  Callers: cql/ (executor,
 * schema), server/ (result metadata [option] encoding).
 *
 * A value is always held in its native-protocol serialization (Cassandra's
 * internal form for protocol v3+): e.g. int = 4 bytes big-endian, text =
 * UTF-8 bytes, list = i32 count then ([i32 len][bytes])*.  "null" is a
 * separate flag at the caller (len -1), never a value here.  An empty value
 * (0 bytes) is legal for most non-collection types, as in Cassandra.
 *
 * Types are immutable and reference counted (ctype_ref/ctype_unref); the
 * built-in scalar singletons ignore refcounts.
 */
#ifndef CS_CQL_TYPES_H
#define CS_CQL_TYPES_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "common/buf.h"
#include "common/err.h"

/* Kinds use the protocol's [option] ids (spec v4 §4.2.5.2). */
typedef enum ctype_kind {
    CT_CUSTOM = 0x0000, CT_ASCII = 0x0001, CT_BIGINT = 0x0002, CT_BLOB = 0x0003,
    CT_BOOLEAN = 0x0004, CT_COUNTER = 0x0005, CT_DECIMAL = 0x0006, CT_DOUBLE = 0x0007,
    CT_FLOAT = 0x0008, CT_INT = 0x0009, CT_TIMESTAMP = 0x000B, CT_UUID = 0x000C,
    CT_VARCHAR = 0x000D, CT_VARINT = 0x000E, CT_TIMEUUID = 0x000F, CT_INET = 0x0010,
    CT_DATE = 0x0011, CT_TIME = 0x0012, CT_SMALLINT = 0x0013, CT_TINYINT = 0x0014,
    CT_DURATION = 0x0015, CT_LIST = 0x0020, CT_MAP = 0x0021, CT_SET = 0x0022,
    CT_UDT = 0x0030, CT_TUPLE = 0x0031,
    CT_EMPTY = 0x0100,   /* internal: EmptyType (no values), never on the wire */
} ctype_kind;

typedef struct ctype ctype;
struct ctype {
    ctype_kind kind;
    bool frozen;                /* frozen<...> (collections, UDTs; tuples are always frozen) */
    int refcnt;                 /* -1 for static singletons */
    int n_sub;                  /* list/set: 1 (element); map: 2 (key, value); tuple: n; udt: n fields */
    ctype **sub;
    char *udt_ks, *udt_name;    /* UDT only */
    char **field_names;         /* UDT only, n_sub entries */
    char *custom_class;         /* CUSTOM only */
};

/* Static singletons for scalars: ctype_scalar(CT_INT) etc.  CT_VARCHAR prints "text". */
const ctype *ctype_scalar(ctype_kind k);
ctype *ctype_ref(const ctype *t);
void ctype_unref(ctype *t);
ctype *ctype_new_collection(ctype_kind k, ctype *elem_or_key, ctype *value, bool frozen); /* takes refs */
ctype *ctype_new_tuple(ctype **elems, int n);                                              /* takes refs */
ctype *ctype_new_udt(const char *ks, const char *name, char **field_names, ctype **field_types, int n, bool frozen);
ctype *ctype_freeze(const ctype *t);          /* new ref of the frozen variant */
bool ctype_equal(const ctype *a, const ctype *b);
bool ctype_is_collection(const ctype *t);     /* list/set/map */
bool ctype_is_multicell(const ctype *t);      /* non-frozen collection or non-frozen UDT */
bool ctype_refs_duration(const ctype *t);    /* a duration, or one nested inside (Cassandra's referencesDuration) */
/* For a type that holds a duration inside: the words Cassandra's slice
 * refusals name it by ("collections", "tuples", "UDTs"); NULL for a
 * duration itself or anything else. */
const char *ctype_duration_holder(const ctype *t);
bool ctype_is_numeric(const ctype *t);
/* Cassandra's isValueCompatibleWith / isCompatibleWith, for ALTER and casts. */
bool ctype_value_compatible(const ctype *to, const ctype *from);

/* Look up a user type by keyspace+name while parsing type text; NULL if none. */
typedef const ctype *(*ctype_udt_lookup_cb)(void *arg, const char *ks, const char *name);
/* Parse CQL type text: "int", "frozen<map<text, list<int>>>", "tuple<int,text>",
 * "my_udt" (via lookup in default keyspace ks), "'org.apache...CustomType'".
 * Returns a new ref, or NULL with e set (InvalidRequest/Syntax, Cassandra wording). */
ctype *ctype_parse(const char *text, const char *ks, ctype_udt_lookup_cb lookup, void *arg, cs_error *e);
/* CQL text of the type, as system_schema.columns.type shows it
 * ("text", "frozen<list<int>>", UDT name quoted if needed). */
void ctype_to_cql(const ctype *t, cs_buf *out);
/* Protocol [option] encoding for result/bind metadata (spec v4 §4.2.5.2). */
void ctype_encode_option(const ctype *t, cs_buf *out);
/* Decode an [option] (used by the C client in bench/tools). */
ctype *ctype_decode_option(cs_rd *r);

/* Validate a serialized value of type t (as from the wire).  0 or CS_EUSER with
 * e = InvalidRequest, Cassandra's wording (e.g. "Expected 4 or 0 byte int (3)"). */
int ctype_validate(const ctype *t, const uint8_t *v, size_t n, cs_error *e);

/* Total order, Cassandra's comparator for the type (timeuuid by time then bytes,
 * uuid by version then time/bytes, inet by unsigned bytes, decimal/varint
 * numerically, text by bytes ...).  Empty values sort first. */
int ctype_compare(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* Byte-comparable encoding: memcmp of encodings == ctype_compare of values.
 * Self-delimiting (so components can be concatenated) and decodable.  desc
 * inverts every byte of the encoding.  Duration cannot be encoded (it is not
 * allowed in keys) -> CS_EINVAL.  Counter encodes like bigint. */
int ctype_bc_encode(const ctype *t, const uint8_t *v, size_t n, bool desc, cs_buf *out);
/* Decode one component from r (advancing it), appending the serialized value to out. */
int ctype_bc_decode(const ctype *t, cs_rd *r, bool desc, cs_buf *out);

/* Clustering key composition, used by executor and schema:
 * a full or prefix clustering key is a sequence of components, each = byte
 * 0x40 followed by the component's bc encoding.  Bounds (storage st_bound):
 *   start inclusive P = P;          start exclusive P = P ++ 0xFF
 *   end inclusive P   = P ++ 0xFF;  end exclusive P   = P             */
#define CK_COMPONENT 0x40
#define CK_AFTER 0xFF

/* Literal text of a value as CQL source (for DESCRIBE, INSERT JSON round
 * trips, cqlsh-like formatting): 'it''s', 42, 0xcafe, 2021-01-01 ... quoted
 * where CQL needs quotes. */
int ctype_format_cql(const ctype *t, const uint8_t *v, size_t n, cs_buf *out);
/* JSON text of a value, as Cassandra's toJson / SELECT JSON. */
int ctype_format_json(const ctype *t, const uint8_t *v, size_t n, cs_buf *out);
/* Parse a JSON value (fromJson / INSERT JSON) into serialized bytes.  Errors
 * are InvalidRequest with the MarshalException text of Cassandra's
 * fromJSONObject (INSERT JSON prefixes "Error decoding JSON value for <col>: ").
 * Sets and maps come out sorted and deduplicated. */
int ctype_from_json(const ctype *t, const char *json, size_t n, cs_buf *out, cs_error *e);

/* Literal kinds the parser produces (ast.h uses these). */
typedef enum {
    LIT_STRING,     /* 'text' or $$text$$ */
    LIT_INTEGER,    /* -?[0-9]+ */
    LIT_FLOAT,      /* decimal/exponent, NaN, Infinity, -Infinity */
    LIT_BOOLEAN,    /* true/false */
    LIT_UUID,       /* 01234567-89ab-... */
    LIT_HEX,        /* 0xcafe */
    LIT_DURATION,   /* 1h30m, P1D, ... */
} lit_kind;
/* Convert a literal to a serialized value of type t, with Cassandra's rules
 * for which literal fits which type (a string for timestamp/date/time/inet/
 * uuid/ascii/text/decimal?..., an integer for any int type with range checks,
 * ...).  Error: InvalidRequest "Invalid INTEGER constant (x) for "col" of type int"
 * style; `what` names the receiver in messages. */
int ctype_from_literal(const ctype *t, lit_kind k, const char *text, size_t n,
                       const char *what, cs_buf *out, cs_error *e);

/* Helpers for collection serialization (protocol v3+ form). */
int32_t ctype_coll_count(const uint8_t *v, size_t n);   /* -1 if malformed */

/* ------------------------------------------------ additions (types engineer) */
/* ctype_new_udt copies ks/name/field names and takes the refs in field_types. */
/* A custom type with a marshal class name (new ref; blob-like values). */
ctype *ctype_new_custom(const char *class_name);
/* A quoted custom class from type text or an [option]: Cassandra's own
 * marshal classes ('org.apache.cassandra.db.marshal.Int32Type') map to the
 * native type; others become CT_CUSTOM.  New ref or NULL (ENOMEM). */
ctype *ctype_parse_custom_class(const char *cls);
/* CQL name of a scalar kind ("int", "text" for varchar); NULL for others. */
const char *ctype_kind_name(ctype_kind k);
/* Cassandra marshal class text of a type ("org.apache.cassandra.db.marshal.Int32Type",
 * "...ListType(...)"), as AbstractType.toString(). */
void ctype_marshal_class(const ctype *t, cs_buf *out);
/* [option] for a given protocol version: types newer than the version are sent
 * as CUSTOM with their marshal class (duration before v5; date, time,
 * smallint, tinyint before v4), as Cassandra's DataType does. */
void ctype_encode_option_v(const ctype *t, int version, cs_buf *out);

/* The type a literal takes when nothing else types it
 * (Constants.Type.getPreferedTypeFor): int, bigint or varint for an integer
 * by its size; double, or decimal when no double holds it exactly, for a
 * floating one; text, boolean, uuid, blob (hex) or duration for the
 * others. */
const ctype *ctype_literal_preferred(lit_kind k, const char *text, size_t n);
/* Whether a literal kind can be assigned to type t (Constants.Literal.testAssignment). */
bool ctype_literal_assignable(const ctype *t, lit_kind k);
/* AbstractType.fromString for scalar types: text form -> serialized value
 * (no quotes; "" gives an empty value for most types).  0 or CS_EUSER with e. */
int ctype_from_string(const ctype *t, const char *s, size_t n, cs_buf *out, cs_error *e);
/* Hex digits (no 0x) -> bytes; CS_EINVAL on odd length or a non-hex digit. */
int ctype_hex_decode(const char *s, size_t n, cs_buf *out);

/* Normalize a serialized set or map (frozen or not): sort elements/keys by the
 * element/key comparator and drop duplicates (for maps the last value of a
 * duplicated key wins).  Lists and other types are copied unchanged.
 * 0, CS_EINVAL (malformed) or CS_ENOMEM. */
int ctype_coll_normalize(const ctype *t, const uint8_t *v, size_t n, cs_buf *out);

/* Numeric helpers for aggregates (sum/avg) and arithmetic.  Values are
 * serialized non-empty values of numeric type t (both operands of type t).
 * Integer types wrap on overflow (Java arithmetic), float/double are IEEE,
 * varint/decimal exact.  0 or CS_EINVAL/CS_ENOMEM; result appended to out. */
int ctype_num_add(const ctype *t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn, cs_buf *out);
/* v / count (count > 0), for avg: integers truncate, decimal keeps the
 * dividend's scale rounding HALF_EVEN, varint truncates. */
int ctype_num_div_int(const ctype *t, const uint8_t *v, size_t n, int64_t count, cs_buf *out);
/* The integer x as a value of numeric type t (e.g. zero for sum of no rows). */
int ctype_num_from_int64(const ctype *t, int64_t x, cs_buf *out);
/* OperationFcts with a varint or decimal result type rt (the wider of the
 * operands' types): op '+', '-', '*', '/', '%' on a (type ta) and b (type
 * tb), or 'n' (negate a; b unused), with IntegerType's BigInteger and
 * DecimalType's BigDecimal semantics (operands other than varint and
 * decimal enter a decimal operation as BigDecimal.valueOf(double)).
 * Appends the serialized result.  0; CS_EUSER with *why set to Java's
 * exception message ("BigInteger divide by zero", "Division by zero", "A
 * NaN cannot be converted into a decimal", ...); CS_EINVAL; CS_ENOMEM. */
int ctype_num_big_op(char op, const ctype *rt, const ctype *ta, const uint8_t *a, size_t an, const ctype *tb,
                     const uint8_t *b, size_t bn, cs_buf *out, const char **why);
double ctype_num_to_double(const ctype *t, const uint8_t *v, size_t n);
/* Timestamp and date arithmetic with a duration (OperationFcts'
 * TemporalOperationFunction, Cassandra 4.0+): `ts + 1h`, `d - 2d`.
 * ctype_temporal_add_duration adds (sub: subtracts) duration value dur
 * (serialized) to the timestamp or date value v of kind `kind`
 * (CT_TIMESTAMP, CT_DATE) into out, as Duration.addTo / substractFrom do:
 * without months the milliseconds of days and nanoseconds are added; with
 * months, a UTC calendar adds the months (the day of month clamped to the
 * new month's length), then the days, then nanoseconds' milliseconds as a
 * Java int.  A date takes only whole days, a timestamp whole milliseconds:
 * otherwise CS_EUSER with Cassandra's message ("The duration must have a
 * day precision. Was: 1h"); CS_EINVAL for a malformed value. */
int ctype_temporal_add_duration(ctype_kind kind, const uint8_t *v, size_t n, const uint8_t *dur, size_t dn,
                                bool sub, cs_buf *out, cs_error *e);

/* floor() (TimeFcts' FloorFunction, Duration.floorTimestamp): t_ms rounded
 * down to start_ms plus a whole number of the duration value dur; months
 * stepped through a UTC calendar.  is_date: the date flavour (the
 * duration in whole days).  0 with *out_ms, CS_EUSER with Cassandra's
 * message (precision, negative duration, a start after the time), or
 * CS_EINVAL for a malformed duration. */
int ctype_floor_timestamp(int64_t t_ms, const uint8_t *dur, size_t dn, int64_t start_ms, bool is_date,
                          int64_t *out_ms, cs_error *e);
/* floor(time, duration) (Duration.floorTime), nanoseconds of the day. */
int ctype_floor_time(int64_t t_ns, const uint8_t *dur, size_t dn, int64_t *out_ns, cs_error *e);

/* CAST between numeric types with Cassandra's CastFcts semantics (Java
 * Number.xxxValue(): integers wrap, float/double -> integer saturates, decimal
 * -> integer truncates then keeps the low bits, float -> decimal via
 * Float.toString, anything -> varint via longValue()).  Empty in, empty out.
 * 0, CS_EINVAL (non-numeric, NaN/Infinity to decimal) or CS_ENOMEM. */
int ctype_num_cast(const ctype *from, const ctype *to, const uint8_t *v, size_t n, cs_buf *out);

/* sum() / avg() state, computing exactly what Cassandra's AggregateFcts does
 * for numeric type t (see cql/types/agg.c): integer sums wrap in the type's
 * width, integer avg sums in 64 bits (BigInteger past overflow) and
 * truncates, float/double use Kahan summation, varint/decimal are exact and
 * decimal avg is Cassandra's running HALF_EVEN average.  Usage:
 *   ctype_agg a; ctype_agg_init(&a, t, is_avg);
 *   ctype_agg_add(&a, v, n) per non-null value (empty values are skipped);
 *   ctype_agg_result(&a, out) (0 of type t when no values); ctype_agg_destroy(&a).
 * add/result return 0, CS_EINVAL (not numeric) or CS_ENOMEM. */
typedef struct ctype_agg {
    const ctype *t;        /* borrowed; counter works like bigint */
    bool avg;
    int64_t count;         /* values added */
    int64_t isum;          /* integer kinds */
    bool ioverflow;        /* avg: integer sum moved to `big` (varint) */
    double fsum, fcomp, fsimple;   /* float/double: Kahan sum, compensation, plain sum */
    bool foverflow;        /* avg: float sum moved to `big` (decimal) */
    cs_buf big;            /* varint/decimal accumulator, serialized */
} ctype_agg;
void ctype_agg_init(ctype_agg *a, const ctype *t, bool avg);
int ctype_agg_add(ctype_agg *a, const uint8_t *v, size_t n);
int ctype_agg_result(const ctype_agg *a, cs_buf *out);
void ctype_agg_destroy(ctype_agg *a);

/* Java's Double.toString / Float.toString text of d ("1.0", "1.0E-4", "NaN"). */
void ctype_format_java_double(double d, bool is_float, cs_buf *out);
/* The digits Java's Double.toString picks for d (finite, non-zero): the
 * shortest that read back as d, without trailing zeros, into digs (NUL
 * ended, at most 17), *ndig of them; d = 0.d1d2... x 10^*exp10. */
void ctype_java_digits(double d, char digs[32], int *ndig, int *exp10);
/* A JSON string literal of UTF-8 bytes (Cassandra's Json.quoteAsJsonString). */
void ctype_json_quote(const uint8_t *v, size_t n, cs_buf *out);
/* True if the JSON text is the literal null.  ctype_from_json maps JSON null
 * to 0 with nothing appended (an empty value), so callers that need a CQL
 * null test this first. */
bool ctype_json_is_null(const char *json, size_t n);

#endif
