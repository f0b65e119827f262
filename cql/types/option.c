/*
 * option.c: the native protocol [option] encoding of a type, used in result
 * and bind metadata (spec v4 §4.2.5.2), and its decoder (for the C client in
 * bench/ and tools/).
 *
 * Protocol versions below a type's introduction get the type as CUSTOM with
 * Cassandra's marshal class name (transport/DataType.java): duration is
 * CUSTOM before v5; date/time/smallint/tinyint are CUSTOM before v4.
 */
#include <string.h>

#include "cql/types/types_int.h"

#define MARSHAL "org.apache.cassandra.db.marshal."

/* The marshal class name of a type (AbstractType.toString()), used for CUSTOM
 * fallbacks; nested types print recursively. */
void ctype_marshal_class(const ctype *t, cs_buf *out)
{
    static const struct { ctype_kind k; const char *cls; } m[] = {
        { CT_ASCII, "AsciiType" }, { CT_BIGINT, "LongType" }, { CT_BLOB, "BytesType" },
        { CT_BOOLEAN, "BooleanType" }, { CT_COUNTER, "CounterColumnType" },
        { CT_DECIMAL, "DecimalType" }, { CT_DOUBLE, "DoubleType" }, { CT_FLOAT, "FloatType" },
        { CT_INT, "Int32Type" }, { CT_TIMESTAMP, "TimestampType" }, { CT_UUID, "UUIDType" },
        { CT_VARCHAR, "UTF8Type" }, { CT_VARINT, "IntegerType" }, { CT_TIMEUUID, "TimeUUIDType" },
        { CT_INET, "InetAddressType" }, { CT_DATE, "SimpleDateType" }, { CT_TIME, "TimeType" },
        { CT_SMALLINT, "ShortType" }, { CT_TINYINT, "ByteType" }, { CT_DURATION, "DurationType" },
        { CT_EMPTY, "EmptyType" },
    };
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        if (m[i].k == t->kind) {
            ctype__puts(out, MARSHAL);
            ctype__puts(out, m[i].cls);
            return;
        }
    }
    switch (t->kind) {
    case CT_CUSTOM:
        ctype__puts(out, t->custom_class ? t->custom_class : "");
        return;
    case CT_LIST: case CT_SET: case CT_MAP: {
        bool fz = t->frozen;
        if (fz)
            ctype__puts(out, MARSHAL "FrozenType(");
        ctype__puts(out, t->kind == CT_LIST ? MARSHAL "ListType(" : t->kind == CT_SET ? MARSHAL "SetType(" : MARSHAL "MapType(");
        ctype_marshal_class(t->sub[0], out);
        if (t->kind == CT_MAP) {
            cs_buf_put_u8(out, ',');
            ctype_marshal_class(t->sub[1], out);
        }
        cs_buf_put_u8(out, ')');
        if (fz)
            cs_buf_put_u8(out, ')');
        return;
    }
    case CT_TUPLE:
        ctype__puts(out, MARSHAL "TupleType(");
        for (int i = 0; i < t->n_sub; i++) {
            if (i)
                cs_buf_put_u8(out, ',');
            ctype_marshal_class(t->sub[i], out);
        }
        cs_buf_put_u8(out, ')');
        return;
    case CT_UDT:
        if (t->frozen)
            ctype__puts(out, MARSHAL "FrozenType(");
        ctype__puts(out, MARSHAL "UserType(");
        ctype__puts(out, t->udt_ks);
        cs_buf_put_u8(out, ',');
        ctype__put_hex(out, (const uint8_t *)t->udt_name, strlen(t->udt_name));
        for (int i = 0; i < t->n_sub; i++) {
            cs_buf_put_u8(out, ',');
            ctype__put_hex(out, (const uint8_t *)t->field_names[i], strlen(t->field_names[i]));
            cs_buf_put_u8(out, ':');
            ctype_marshal_class(t->sub[i], out);
        }
        cs_buf_put_u8(out, ')');
        if (t->frozen)
            cs_buf_put_u8(out, ')');
        return;
    default:
        return;
    }
}

static void put_custom(const ctype *t, cs_buf *out)
{
    cs_buf cls;
    cs_buf_init(&cls);
    ctype_marshal_class(t, &cls);
    cs_buf_put_u16(out, CT_CUSTOM);
    cs_buf_put_stringn(out, (const char *)cls.p, cls.len);
    if (cls.err)
        out->err = cls.err;
    cs_buf_destroy(&cls);
}

void ctype_encode_option_v(const ctype *t, int version, cs_buf *out)
{
    switch (t->kind) {
    case CT_CUSTOM:
        cs_buf_put_u16(out, CT_CUSTOM);
        cs_buf_put_string(out, t->custom_class ? t->custom_class : "");
        return;
    case CT_EMPTY:
        put_custom(t, out);
        return;
    case CT_DURATION:
        if (version < 5) {
            put_custom(t, out);
            return;
        }
        break;
    case CT_DATE: case CT_TIME: case CT_SMALLINT: case CT_TINYINT:
        if (version < 4) {
            put_custom(t, out);
            return;
        }
        break;
    case CT_LIST: case CT_SET:
        cs_buf_put_u16(out, (uint16_t)t->kind);
        ctype_encode_option_v(t->sub[0], version, out);
        return;
    case CT_MAP:
        cs_buf_put_u16(out, CT_MAP);
        ctype_encode_option_v(t->sub[0], version, out);
        ctype_encode_option_v(t->sub[1], version, out);
        return;
    case CT_UDT:
        cs_buf_put_u16(out, CT_UDT);
        cs_buf_put_string(out, t->udt_ks);
        cs_buf_put_string(out, t->udt_name);
        cs_buf_put_u16(out, (uint16_t)t->n_sub);
        for (int i = 0; i < t->n_sub; i++) {
            cs_buf_put_string(out, t->field_names[i]);
            ctype_encode_option_v(t->sub[i], version, out);
        }
        return;
    case CT_TUPLE:
        cs_buf_put_u16(out, CT_TUPLE);
        cs_buf_put_u16(out, (uint16_t)t->n_sub);
        for (int i = 0; i < t->n_sub; i++)
            ctype_encode_option_v(t->sub[i], version, out);
        return;
    default:
        break;
    }
    cs_buf_put_u16(out, (uint16_t)t->kind);
}

void ctype_encode_option(const ctype *t, cs_buf *out)
{
    ctype_encode_option_v(t, 4, out);
}

static ctype *decode_option(cs_rd *r, int depth)
{
    if (depth > 64)
        return NULL;
    uint16_t id = cs_rd_u16(r);
    if (r->err)
        return NULL;
    size_t n;
    const char *s;
    switch (id) {
    case CT_CUSTOM: {
        s = cs_rd_string(r, &n);
        if (!s)
            return NULL;
        char *cls = cs_strndup(s, n);
        if (!cls)
            return NULL;
        ctype *t = ctype_parse_custom_class(cls);
        cs_free(cls);
        return t;
    }
    case CT_LIST: case CT_SET: {
        ctype *e = decode_option(r, depth + 1);
        if (!e)
            return NULL;
        /* Inside result metadata the elements of a collection are frozen. */
        return ctype_new_collection((ctype_kind)id, e, NULL, false);
    }
    case CT_MAP: {
        ctype *k = decode_option(r, depth + 1);
        if (!k)
            return NULL;
        ctype *v = decode_option(r, depth + 1);
        if (!v) {
            ctype_unref(k);
            return NULL;
        }
        return ctype_new_collection(CT_MAP, k, v, false);
    }
    case CT_UDT: {
        size_t kn, nn;
        const char *ks = cs_rd_string(r, &kn);
        const char *nm = cs_rd_string(r, &nn);
        uint16_t cnt = cs_rd_u16(r);
        if (!ks || !nm || r->err)
            return NULL;
        char *ksd = cs_strndup(ks, kn), *nmd = cs_strndup(nm, nn);
        char **names = cs_calloc(cnt ? cnt : 1, sizeof(char *));
        ctype **types = cs_calloc(cnt ? cnt : 1, sizeof(ctype *));
        ctype *t = NULL;
        int i = 0;
        if (ksd && nmd && names && types) {
            for (; i < cnt; i++) {
                size_t fn;
                const char *f = cs_rd_string(r, &fn);
                if (!f || !(names[i] = cs_strndup(f, fn)))
                    break;
                if (!(types[i] = decode_option(r, depth + 1))) {
                    cs_free(names[i]);
                    names[i] = NULL;
                    break;
                }
            }
            if (i == cnt)
                t = ctype_new_udt(ksd, nmd, names, types, cnt, true);
            else
                for (int j = 0; j < i; j++)
                    ctype_unref(types[j]);
        }
        for (int j = 0; j < i && names; j++)
            cs_free(names[j]);
        cs_free(names);
        cs_free(types);
        cs_free(ksd);
        cs_free(nmd);
        return t;
    }
    case CT_TUPLE: {
        uint16_t cnt = cs_rd_u16(r);
        if (r->err)
            return NULL;
        ctype **types = cs_calloc(cnt ? cnt : 1, sizeof(ctype *));
        if (!types)
            return NULL;
        int i = 0;
        for (; i < cnt; i++)
            if (!(types[i] = decode_option(r, depth + 1)))
                break;
        ctype *t = NULL;
        if (i == cnt)
            t = ctype_new_tuple(types, cnt);
        else
            for (int j = 0; j < i; j++)
                ctype_unref(types[j]);
        cs_free(types);
        return t;
    }
    default: {
        const ctype *t = ctype_scalar((ctype_kind)id);
        if (!t || id == CT_EMPTY)
            return NULL;
        return (ctype *)t;
    }
    }
}

/* Decode an [option]; NULL on malformed input or out of memory (r->err set
 * for truncated input). */
ctype *ctype_decode_option(cs_rd *r)
{
    return decode_option(r, 0);
}
