/*
 * validate.c: validation of serialized values as they arrive from the wire
 * (bind values, literals built by the executor), with the messages of
 * Cassandra 4.1's serializers (serializers/XSerializer.java validate()).
 */
#include <string.h>

#include "cql/types/types_int.h"

/* ------------------------------------------------ shared readers */

int ctype__rd_elem(const uint8_t *v, size_t n, size_t *pos, const uint8_t **p, int32_t *len)
{
    if (n - *pos < 4)
        return -1;
    int32_t l = (int32_t)cs_be32(v + *pos);
    *pos += 4;
    if (l < 0) {
        *len = -1;
        *p = NULL;
        return 0;
    }
    if ((size_t)l > n - *pos)
        return -1;
    *p = v + *pos;
    *len = l;
    *pos += (size_t)l;
    return 0;
}

int32_t ctype_coll_count(const uint8_t *v, size_t n)
{
    if (n < 4)
        return -1;
    int32_t c = (int32_t)cs_be32(v);
    return c < 0 ? -1 : c;
}

/* UTF-8 as Cassandra's UTF8Serializer.UTF8Validator accepts it (1 if valid).
 * Deliberately the same state machine, quirks included: the modified-UTF-8
 * null C0 80 and encoded surrogates pass, lead bytes F0-F7 are accepted, and
 * after E0 / F0 only the second byte's range is checked. */
int ctype__utf8_valid(const uint8_t *p, size_t n)
{
    enum { START, TWO, TWO_80, THREE_A0BF, THREE_1, THREE_2, FOUR_90BF, FOUR_3 } st = START;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = p[i];
        switch (st) {
        case START:
            if (b < 0x80)
                break;
            if ((b & 0xE0) == 0xC0) {
                if (b == 0xC0)
                    st = TWO_80;
                else if ((b & 0x1E) == 0)
                    return 0;
                else
                    st = TWO;
            } else if ((b & 0xF0) == 0xE0) {
                st = b == 0xE0 ? THREE_A0BF : THREE_2;
            } else if ((b & 0xF8) == 0xF0) {
                st = b == 0xF0 ? FOUR_90BF : FOUR_3;
            } else {
                return 0;
            }
            break;
        case TWO:
            if ((b & 0xC0) != 0x80)
                return 0;
            st = START;
            break;
        case TWO_80:
            if (b != 0x80)
                return 0;
            st = START;
            break;
        case THREE_A0BF:
            if ((b & 0xE0) == 0x80)
                return 0;
            st = THREE_1;
            break;
        case THREE_1:
            if ((b & 0xC0) != 0x80)
                return 0;
            st = START;
            break;
        case THREE_2:
            if ((b & 0xC0) != 0x80)
                return 0;
            st = THREE_1;
            break;
        case FOUR_90BF:
            if ((b & 0x30) == 0)
                return 0;
            st = THREE_2;
            break;
        case FOUR_3:
            if ((b & 0xC0) != 0x80)
                return 0;
            st = THREE_2;
            break;
        }
    }
    return st == START;
}

/* ------------------------------------------------ per type */

static int v_fixed(cs_error *e, size_t n, size_t want, bool empty_ok, const char *fmt)
{
    if (n == want || (empty_ok && n == 0))
        return 0;
    return cs_error_set(e, CS_ERR_INVALID, fmt, (int)n);
}

static int v_duration(const uint8_t *v, size_t n, cs_error *e)
{
    if (n == 0)
        return 0;
    if (n < 3)
        return cs_error_set(e, CS_ERR_INVALID, "Expected at least 3 bytes for a duration (%d)", (int)n);
    int64_t mo, d, ns;
    if (ctype__get_duration(v, n, &mo, &d, &ns) != 0)
        return cs_error_set(e, CS_ERR_INVALID, "Invalid duration value");
    if (mo < INT32_MIN || mo > INT32_MAX)
        return cs_error_set(e, CS_ERR_INVALID, "The duration months must be a 32 bits integer but was: %lld",
                            (long long)mo);
    if (d < INT32_MIN || d > INT32_MAX)
        return cs_error_set(e, CS_ERR_INVALID, "The duration days must be a 32 bits integer but was: %lld",
                            (long long)d);
    if (!((mo >= 0 && d >= 0 && ns >= 0) || (mo <= 0 && d <= 0 && ns <= 0)))
        return cs_error_set(e, CS_ERR_INVALID,
                            "The duration months, days and nanoseconds must be all of the same sign (%lld, %lld, %lld)",
                            (long long)mo, (long long)d, (long long)ns);
    return 0;
}

static int v_collection(const ctype *t, const uint8_t *v, size_t n, cs_error *e)
{
    const char *what = t->kind == CT_LIST ? "list" : t->kind == CT_SET ? "set" : "map";
    if (n < 4)
        return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read a %s", what);
    int32_t cnt = (int32_t)cs_be32(v);
    if (cnt < 0)
        return cs_error_set(e, CS_ERR_INVALID, "The data cannot be deserialized as a %s", what);
    size_t pos = 4;
    int per = t->kind == CT_MAP ? 2 : 1;
    for (int32_t i = 0; i < cnt; i++) {
        for (int j = 0; j < per; j++) {
            const uint8_t *p;
            int32_t len;
            if (ctype__rd_elem(v, n, &pos, &p, &len) != 0)
                return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read a %s", what);
            if (len < 0)
                return cs_error_set(e, CS_ERR_INVALID, "Null value read when not allowed");
            int rc = ctype_validate(t->sub[j], p, (size_t)len, e);
            if (rc)
                return rc;
        }
    }
    if (pos != n)
        return cs_error_set(e, CS_ERR_INVALID, "Unexpected extraneous bytes after %s value", what);
    return 0;
}

static int v_tuple(const ctype *t, const uint8_t *v, size_t n, cs_error *e)
{
    size_t pos = 0;
    bool udt = t->kind == CT_UDT;
    for (int i = 0; i < t->n_sub && pos < n; i++) {
        if (n - pos < 4) {
            if (udt)
                return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read size of %dth field %s", i,
                                    t->field_names[i]);
            return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read size of %dth component", i);
        }
        const uint8_t *p;
        int32_t len;
        if (ctype__rd_elem(v, n, &pos, &p, &len) != 0) {
            if (udt)
                return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read %dth field %s", i, t->field_names[i]);
            return cs_error_set(e, CS_ERR_INVALID, "Not enough bytes to read %dth component", i);
        }
        if (len < 0)
            continue;
        if (udt) {
            cs_error sub;
            cs_error_init(&sub);
            if (ctype_validate(t->sub[i], p, (size_t)len, &sub) != 0)
                return cs_error_set(e, CS_ERR_INVALID, "Failure validating the %dth field %s; %s", i,
                                    t->field_names[i], sub.msg);
        } else {
            int rc = ctype_validate(t->sub[i], p, (size_t)len, e);
            if (rc)
                return rc;
        }
    }
    if (pos != n)
        return cs_error_set(e, CS_ERR_INVALID, udt ? "Invalid remaining data after end of UDT value"
                                                   : "Invalid remaining data after end of tuple value");
    return 0;
}

int ctype_validate(const ctype *t, const uint8_t *v, size_t n, cs_error *e)
{
    switch (t->kind) {
    case CT_ASCII:
        for (size_t i = 0; i < n; i++)
            if (v[i] & 0x80)
                return cs_error_set(e, CS_ERR_INVALID, "Invalid byte for ascii: %d", (int)(int8_t)v[i]);
        return 0;
    case CT_VARCHAR:
        if (!ctype__utf8_valid(v, n))
            return cs_error_set(e, CS_ERR_INVALID, "String didn't validate.");
        return 0;
    case CT_BLOB: case CT_CUSTOM: case CT_VARINT:
        return 0;
    case CT_BIGINT: case CT_COUNTER:
        return v_fixed(e, n, 8, true, "Expected 8 or 0 byte long (%d)");
    case CT_BOOLEAN:
        return v_fixed(e, n, 1, true, "Expected 1 or 0 byte value (%d)");
    case CT_DECIMAL:
        if (n != 0 && n < 4)
            return cs_error_set(e, CS_ERR_INVALID, "Expected 0 or at least 4 bytes (%d)", (int)n);
        return 0;
    case CT_DOUBLE:
        return v_fixed(e, n, 8, true, "Expected 8 or 0 byte value for a double (%d)");
    case CT_FLOAT:
        return v_fixed(e, n, 4, true, "Expected 4 or 0 byte value for a float (%d)");
    case CT_INT:
        return v_fixed(e, n, 4, true, "Expected 4 or 0 byte int (%d)");
    case CT_TIMESTAMP:
        return v_fixed(e, n, 8, true, "Expected 8 or 0 byte long for date (%d)");
    case CT_UUID:
        return v_fixed(e, n, 16, true, "UUID should be 16 or 0 bytes (%d)");
    case CT_TIMEUUID:
        if (n != 0 && n != 16)
            return cs_error_set(e, CS_ERR_INVALID, "UUID should be 16 or 0 bytes (%d)", (int)n);
        if (n == 16 && (v[6] & 0xF0) != 0x10)
            /* TimeUUID.AbstractSerializer quirk: reports byte 0's nibble */
            return cs_error_set(e, CS_ERR_INVALID, "Invalid version for TimeUUID type: 0x%x", (v[0] >> 4) & 0xf);
        return 0;
    case CT_INET:
        if (n != 0 && n != 4 && n != 16) {
            cs_buf hx;
            cs_buf_init(&hx);
            ctype__put_hex(&hx, v, n);
            cs_buf_put_u8(&hx, 0);
            int rc = cs_error_set(e, CS_ERR_INVALID, "Expected 4 or 16 byte inetaddress; got %s",
                                  hx.err ? "" : (const char *)hx.p);
            cs_buf_destroy(&hx);
            return rc;
        }
        return 0;
    case CT_DATE:
        return v_fixed(e, n, 4, false, "Expected 4 byte long for date (%d)");
    case CT_TIME:
        return v_fixed(e, n, 8, false, "Expected 8 byte long for time (%d)");
    case CT_SMALLINT:
        return v_fixed(e, n, 2, false, "Expected 2 bytes for a smallint (%d)");
    case CT_TINYINT:
        return v_fixed(e, n, 1, false, "Expected 1 byte for a tinyint (%d)");
    case CT_DURATION:
        return v_duration(v, n, e);
    case CT_LIST: case CT_SET: case CT_MAP:
        return v_collection(t, v, n, e);
    case CT_TUPLE: case CT_UDT:
        return v_tuple(t, v, n, e);
    case CT_EMPTY:
        if (n)
            return cs_error_set(e, CS_ERR_INVALID, "EmptyType only accept empty values");
        return 0;
    }
    return cs_error_set(e, CS_ERR_INVALID, "Unknown type");
}
