/*
 * roles.c: the role store (see roles.h).  Owner: catalog.
 *
 * Invariants:
 *  1. The file on disk always equals the store as of the last change that
 *     returned 0 (save() runs before a change is kept in memory; a failed
 *     save leaves memory as it was).
 *  2. member_of holds only existing roles: dropping a role takes it out of
 *     every member_of (CassandraRoleManager.removeAllMembers).
 *  3. roles[] is sorted by name (strcmp), so listings need no sort.
 *  4. pv[] (CassandraAuthorizer's role_permissions) is sorted by (role,
 *     resource), each pair once, perms never 0; dropping a role removes its
 *     entries and those on it.
 */
#include "cql/roles.h"

#include <crypt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/hash.h"
#include "common/util.h"
#include "common/vfs.h"
#include "cql/ast.h"

/* bcrypt of "cassandra", made once with cql_roles_hashpw: the default
 * superuser's password is public, so a fixed salt costs nothing, and the
 * first start need not spend ~70 ms on bcrypt. */
#define DEFAULT_ROLE "cassandra"
#define DEFAULT_HASH "$2a$10$wBlxANf4tR1ump1/ZB8WWuVum9HiuiS8K5S0fV8VvFfFQjVBB8YsW"
#define FILE_MAGIC "cassette-roles 2"
#define FILE_MAGIC_V1 "cassette-roles 1"    /* read: a store from before permissions */
#define PERMS_LINE "%permissions"          /* no role line starts so: '%' is escaped in names */
#define LOGIN_MEMO 64

typedef struct role {
    char *name;
    bool super, login;
    char *hash;                        /* NULL: none */
    char **member_of; int n_member_of; /* sorted */
} role;

typedef struct perm_ent {
    char *role, *resource;             /* resource: IResource.getName ("data/ks/t") */
    unsigned perms;                    /* PERM_*, never 0 */
} perm_ent;

struct cql_roles {
    pthread_mutex_t mu;
    char *path;
    role *v; int n, cap;
    perm_ent *pv; int pn, pcap;        /* sorted by (role, resource) */
    uint8_t memo[LOGIN_MEMO][16];      /* md5(hash NUL password) of recent good logins */
    char memo_role[LOGIN_MEMO][256];   /* the role each logged in as ("" unused) */
    uint8_t memo_hash[LOGIN_MEMO][16]; /* md5 of the role's hash then */
    int memo_next;
};

/* ---------------------------------------------------------------- helpers */

static int find(const cql_roles *r, const char *name, int *at)
{
    int lo = 0, hi = r->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(r->v[mid].name, name);
        if (c == 0) {
            if (at) *at = mid;
            return 1;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (at) *at = lo;
    return 0;
}

static role *get(cql_roles *r, const char *name)
{
    int at;
    return find(r, name, &at) ? &r->v[at] : NULL;
}

static void role_clear(role *o)
{
    cs_free(o->name);
    cs_free(o->hash);
    for (int i = 0; i < o->n_member_of; i++) cs_free(o->member_of[i]);
    cs_free(o->member_of);
    memset(o, 0, sizeof *o);
}

static bool has_member_of(const role *o, const char *name)
{
    for (int i = 0; i < o->n_member_of; i++)
        if (!strcmp(o->member_of[i], name)) return true;
    return false;
}

/* Insert name into o->member_of, kept sorted. */
static int add_member_of(role *o, const char *name)
{
    char *s = cs_strdup(name);
    char **nv = s ? cs_realloc(o->member_of, sizeof *nv * (size_t)(o->n_member_of + 1)) : NULL;
    if (!nv) {
        cs_free(s);
        return CS_ENOMEM;
    }
    o->member_of = nv;
    int i = o->n_member_of;
    while (i > 0 && strcmp(nv[i - 1], name) > 0) {
        nv[i] = nv[i - 1];
        i--;
    }
    nv[i] = s;
    o->n_member_of++;
    return 0;
}

static void del_member_of(role *o, const char *name)
{
    for (int i = 0; i < o->n_member_of; i++) {
        if (strcmp(o->member_of[i], name)) continue;
        cs_free(o->member_of[i]);
        memmove(o->member_of + i, o->member_of + i + 1, sizeof *o->member_of * (size_t)(o->n_member_of - i - 1));
        o->n_member_of--;
        return;
    }
}

/* Insert a new role at its place; takes ownership of o's fields. */
static int insert(cql_roles *r, role *o)
{
    int at;
    if (find(r, o->name, &at)) return CS_EINVAL;
    if (r->n == r->cap) {
        int nc = r->cap ? r->cap * 2 : 8;
        role *nv = cs_realloc(r->v, sizeof *nv * (size_t)nc);
        if (!nv) return CS_ENOMEM;
        r->v = nv;
        r->cap = nc;
    }
    memmove(r->v + at + 1, r->v + at, sizeof *r->v * (size_t)(r->n - at));
    r->v[at] = *o;
    r->n++;
    return 0;
}

/* ---------------------------------------------------------------- permission entries */

/* Permission's names, bit i = 1 << i (its declaration order). */
static const char *const perm_names[] = { "CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE", "EXECUTE" };

const char *cql_perm_name(unsigned bit)
{
    for (int i = 0; i < 8; i++)
        if (bit == 1u << i) return perm_names[i];
    return "?";
}

static int perm_cmp(const perm_ent *p, const char *role_name, const char *resource)
{
    int c = strcmp(p->role, role_name);
    return c ? c : strcmp(p->resource, resource);
}

static int perm_find(const cql_roles *r, const char *role_name, const char *resource, int *at)
{
    int lo = 0, hi = r->pn;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = perm_cmp(&r->pv[mid], role_name, resource);
        if (c == 0) {
            *at = mid;
            return 1;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return 0;
}

/* Insert (role, resource) with perms at its place (not there yet). */
static int perm_insert(cql_roles *r, int at, const char *role_name, const char *resource, unsigned perms)
{
    if (r->pn == r->pcap) {
        int nc = r->pcap ? r->pcap * 2 : 8;
        perm_ent *nv = cs_realloc(r->pv, sizeof *nv * (size_t)nc);
        if (!nv) return CS_ENOMEM;
        r->pv = nv;
        r->pcap = nc;
    }
    perm_ent p = { cs_strdup(role_name), cs_strdup(resource), perms };
    if (!p.role || !p.resource) {
        cs_free(p.role);
        cs_free(p.resource);
        return CS_ENOMEM;
    }
    memmove(r->pv + at + 1, r->pv + at, sizeof *r->pv * (size_t)(r->pn - at));
    r->pv[at] = p;
    r->pn++;
    return 0;
}

static void perm_remove(cql_roles *r, int at)
{
    cs_free(r->pv[at].role);
    cs_free(r->pv[at].resource);
    memmove(r->pv + at, r->pv + at + 1, sizeof *r->pv * (size_t)(r->pn - at - 1));
    r->pn--;
}

/* A copy of the entries, to put back when a save fails. */
typedef struct perm_undo { perm_ent *v; int n; bool ok; } perm_undo;

static perm_undo perm_keep(const cql_roles *r)
{
    perm_undo u = { cs_malloc(sizeof(perm_ent) * (size_t)(r->pn ? r->pn : 1)), r->pn, false };
    if (!u.v) return u;
    int i;
    for (i = 0; i < r->pn; i++) {
        u.v[i].perms = r->pv[i].perms;
        u.v[i].role = cs_strdup(r->pv[i].role);
        u.v[i].resource = cs_strdup(r->pv[i].resource);
        if (!u.v[i].role || !u.v[i].resource) {
            cs_free(u.v[i].role);
            cs_free(u.v[i].resource);
            break;
        }
    }
    if (i < r->pn) {
        for (int j = 0; j < i; j++) {
            cs_free(u.v[j].role);
            cs_free(u.v[j].resource);
        }
        cs_free(u.v);
        u.v = NULL;
        return u;
    }
    u.ok = true;
    return u;
}

static void perms_clear(perm_ent *v, int n)
{
    for (int i = 0; i < n; i++) {
        cs_free(v[i].role);
        cs_free(v[i].resource);
    }
    cs_free(v);
}

/* restore: put u back as the entries; else just free it. */
static void perm_undo_end(cql_roles *r, perm_undo *u, bool restore)
{
    if (!u->ok) return;
    if (restore) {
        perms_clear(r->pv, r->pn);
        r->pv = u->v;
        r->pn = r->pcap = u->n;
        if (!r->pcap) {
            cs_free(r->pv);
            r->pv = NULL;
        }
    } else {
        perms_clear(u->v, u->n);
    }
    u->ok = false;
}

/* ---------------------------------------------------------------- file */

/* Field escaping: bytes < 0x21, '%', ',' and 0x7f as %XX. */
static void put_field(cs_buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x21 || *p == '%' || *p == ',' || *p == 0x7f) {
            char h[4];
            snprintf(h, sizeof h, "%%%02X", *p);
            cs_buf_put(b, h, 3);
        } else {
            cs_buf_put(b, p, 1);
        }
    }
}

static int serialize(const cql_roles *r, cs_buf *b)
{
    cs_buf_put(b, FILE_MAGIC "\n", sizeof FILE_MAGIC);
    for (int i = 0; i < r->n; i++) {
        const role *o = &r->v[i];
        put_field(b, o->name);
        cs_buf_put(b, o->super ? " 1" : " 0", 2);
        cs_buf_put(b, o->login ? " 1 " : " 0 ", 3);
        if (o->hash) put_field(b, o->hash);
        else cs_buf_put(b, "-", 1);
        cs_buf_put(b, " ", 1);
        if (!o->n_member_of) cs_buf_put(b, "-", 1);
        for (int j = 0; j < o->n_member_of; j++) {
            if (j) cs_buf_put(b, ",", 1);
            put_field(b, o->member_of[j]);
        }
        cs_buf_put(b, "\n", 1);
    }
    if (r->pn) cs_buf_put(b, PERMS_LINE "\n", sizeof PERMS_LINE);
    for (int i = 0; i < r->pn; i++) {
        const perm_ent *p = &r->pv[i];
        put_field(b, p->role);
        cs_buf_put(b, " ", 1);
        put_field(b, p->resource);
        cs_buf_put(b, " ", 1);
        bool first = true;
        for (int k = 0; k < 8; k++) {
            if (!(p->perms & (1u << k))) continue;
            if (!first) cs_buf_put(b, ",", 1);
            cs_buf_put(b, perm_names[k], strlen(perm_names[k]));
            first = false;
        }
        cs_buf_put(b, "\n", 1);
    }
    return b->err;
}

static int save(cql_roles *r, cs_error *e)
{
    cs_buf b;
    cs_buf_init(&b);
    int rc = serialize(r, &b);
    if (!rc) rc = vfs_write_atomic(r->path, b.p, b.len);
    cs_buf_destroy(&b);
    if (rc) return cs_error_set(e, CS_ERR_SERVER, "cannot write %s: %s", r->path, cs_strerror(rc));
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Unescape [s, s+n) into a cs_malloc'd string; NULL if malformed. */
static char *get_field(const char *s, size_t n)
{
    char *out = cs_malloc(n + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            out[o++] = s[i];
            continue;
        }
        int h = i + 2 < n ? hexval(s[i + 1]) : -1, l = i + 2 < n ? hexval(s[i + 2]) : -1;
        if (h < 0 || l < 0 || (h == 0 && l == 0)) {
            cs_free(out);
            return NULL;
        }
        out[o++] = (char)(h * 16 + l);
        i += 2;
    }
    out[o] = 0;
    return out;
}

/* One line: name super login hash|- member,member|- */
static int parse_line(const char *s, size_t n, role *o)
{
    const char *f[5];
    size_t fl[5];
    int nf = 0;
    size_t i = 0;
    while (i <= n && nf < 5) {
        size_t j = i;
        while (j < n && s[j] != ' ') j++;
        f[nf] = s + i;
        fl[nf++] = j - i;
        i = j + 1;
    }
    if (nf != 5 || i <= n || fl[0] == 0) return CS_ECORRUPT;
    if (fl[1] != 1 || fl[2] != 1 || (f[1][0] != '0' && f[1][0] != '1') || (f[2][0] != '0' && f[2][0] != '1'))
        return CS_ECORRUPT;
    memset(o, 0, sizeof *o);
    o->name = get_field(f[0], fl[0]);
    o->super = f[1][0] == '1';
    o->login = f[2][0] == '1';
    if (!o->name) return CS_ECORRUPT;
    if (!(fl[3] == 1 && f[3][0] == '-') && !(o->hash = get_field(f[3], fl[3]))) goto bad;
    if (!(fl[4] == 1 && f[4][0] == '-')) {
        const char *p = f[4], *end = f[4] + fl[4];
        while (p <= end) {
            const char *q = p;
            while (q < end && *q != ',') q++;
            char *m = get_field(p, (size_t)(q - p));
            if (!m || !*m || add_member_of(o, m)) {
                cs_free(m);
                goto bad;
            }
            cs_free(m);
            p = q + 1;
        }
    }
    return 0;
bad:
    role_clear(o);
    return CS_ECORRUPT;
}

/* One permission line: role resource PERM,PERM (at least one, each once). */
static int parse_perm_line(cql_roles *r, const char *s, size_t n)
{
    const char *sp1 = memchr(s, ' ', n);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(s + n - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 == s || sp2 == sp1 + 1 || sp2 + 1 >= s + n || memchr(sp2 + 1, ' ', (size_t)(s + n - sp2 - 1)))
        return CS_ECORRUPT;
    unsigned perms = 0;
    for (const char *q = sp2 + 1, *end = s + n; q <= end;) {
        const char *c = q;
        while (c < end && *c != ',') c++;
        unsigned bit = 0;
        for (int k = 0; k < 8 && !bit; k++)
            if ((size_t)(c - q) == strlen(perm_names[k]) && !memcmp(q, perm_names[k], (size_t)(c - q))) bit = 1u << k;
        if (!bit || (perms & bit)) return CS_ECORRUPT;
        perms |= bit;
        q = c + 1;
    }
    char *role_name = get_field(s, (size_t)(sp1 - s));
    char *resource = get_field(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    int at, rc = CS_ECORRUPT;
    if (role_name && resource && !perm_find(r, role_name, resource, &at))
        rc = perm_insert(r, at, role_name, resource, perms);
    cs_free(role_name);
    cs_free(resource);
    return rc;
}

static int load(cql_roles *r, const uint8_t *p, size_t len, cs_error *e)
{
    const char *s = (const char *)p, *end = s + len;
    const char *nl = memchr(s, '\n', len);
    size_t ml = nl ? (size_t)(nl - s) : 0;
    if (!nl || !((ml == strlen(FILE_MAGIC) && !memcmp(s, FILE_MAGIC, ml)) ||
                 (ml == strlen(FILE_MAGIC_V1) && !memcmp(s, FILE_MAGIC_V1, ml))))
        return cs_error_set(e, CS_ERR_SERVER, "%s: not a cassette role file (first line is not \"%s\")", r->path,
                            FILE_MAGIC);
    bool v1 = ml == strlen(FILE_MAGIC_V1) && !memcmp(s, FILE_MAGIC_V1, ml), perms = false;
    int line = 1;
    for (s = nl + 1; s < end; s = nl + 1) {
        line++;
        nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            return cs_error_set(e, CS_ERR_SERVER, "%s: line %d is cut short (no newline)", r->path, line);
        size_t n = (size_t)(nl - s);
        if (!v1 && !perms && n == strlen(PERMS_LINE) && !memcmp(s, PERMS_LINE, n)) {
            perms = true;
            continue;
        }
        if (perms) {
            int rc = parse_perm_line(r, s, n);
            if (rc)
                return cs_error_set(e, CS_ERR_SERVER, "%s: line %d %s", r->path, line,
                                    rc == CS_ECORRUPT ? "is malformed (or repeats a permission entry)" : cs_strerror(rc));
            continue;
        }
        role o;
        if (parse_line(s, n, &o))
            return cs_error_set(e, CS_ERR_SERVER, "%s: line %d is malformed", r->path, line);
        int rc = insert(r, &o);
        if (rc) {
            role_clear(&o);
            return cs_error_set(e, CS_ERR_SERVER, "%s: line %d: %s", r->path, line,
                                rc == CS_EINVAL ? "the role appears twice" : cs_strerror(rc));
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- open */

int cql_roles_open(const char *path, cql_roles **out, cs_error *e)
{
    *out = NULL;
    cql_roles *r = cs_calloc(1, sizeof *r);
    if (!r) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    pthread_mutex_init(&r->mu, NULL);
    r->path = cs_strdup(path);
    if (!r->path) {
        cql_roles_free(r);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    uint8_t *p = NULL;
    size_t len = 0;
    int rc = vfs_read_all(path, &p, &len);
    if (rc == 0) {
        rc = load(r, p, len, e);
        cs_free(p);
        if (rc) {
            cql_roles_free(r);
            return CS_EUSER;
        }
    } else if (vfs_file_size(path) >= 0) {
        cql_roles_free(r);
        return cs_error_set(e, CS_ERR_SERVER, "cannot read %s: %s", path, cs_strerror(rc));
    } else {
        role o = { .name = cs_strdup(DEFAULT_ROLE), .super = true, .login = true, .hash = cs_strdup(DEFAULT_HASH) };
        if (!o.name || !o.hash || insert(r, &o)) {
            role_clear(&o);
            cql_roles_free(r);
            return cs_error_set(e, CS_ERR_SERVER, "out of memory");
        }
    }
    *out = r;
    return 0;
}

void cql_roles_free(cql_roles *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) role_clear(&r->v[i]);
    cs_free(r->v);
    perms_clear(r->pv, r->pn);
    cs_free(r->path);
    pthread_mutex_destroy(&r->mu);
    cs_free(r);
}

/* ---------------------------------------------------------------- reads */

cql_role_info cql_roles_get(cql_roles *r, const char *name)
{
    cql_role_info info = { 0 };
    pthread_mutex_lock(&r->mu);
    const role *o = get(r, name);
    if (o) {
        info.exists = true;
        info.super = o->super;
        info.login = o->login;
        info.has_hash = o->hash != NULL;
    }
    pthread_mutex_unlock(&r->mu);
    return info;
}

typedef struct nameset { char **v; int n, cap; int err; } nameset;

static bool ns_has(const nameset *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return true;
    return false;
}

static void push_copy(nameset *s, const char *name);

static void ns_add(nameset *s, const char *name)
{
    if (!ns_has(s, name)) push_copy(s, name);
}

/* CassandraRoleManager.collectRoles: the role, then those it is a member
 * of, recursively if asked (each role once). */
static void collect(cql_roles *r, const char *name, bool recursive, nameset *s, int depth)
{
    const role *o = get(r, name);
    if (!o || ns_has(s, name)) return;
    ns_add(s, name);
    for (int i = 0; i < o->n_member_of; i++) {
        if (recursive && depth < 1000) collect(r, o->member_of[i], true, s, depth + 1);
        else if (get(r, o->member_of[i])) ns_add(s, o->member_of[i]);
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ns_out(nameset *s, char ***names, int *n)
{
    if (s->err) {
        cql_roles_names_free(s->v, s->n);
        *names = NULL;
        *n = 0;
        return s->err;
    }
    if (s->n) qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_str);
    *names = s->v;
    *n = s->n;
    return 0;
}

bool cql_roles_has_super(cql_roles *r, const char *name)
{
    nameset s = { 0 };
    pthread_mutex_lock(&r->mu);
    collect(r, name, true, &s, 0);
    bool super = false;
    for (int i = 0; i < s.n && !super; i++) {
        const role *o = get(r, s.v[i]);
        super = o && o->super;
    }
    pthread_mutex_unlock(&r->mu);
    cql_roles_names_free(s.v, s.n);
    return super;
}

int cql_roles_all(cql_roles *r, char ***names, int *n)
{
    nameset s = { 0 };
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++) ns_add(&s, r->v[i].name);
    pthread_mutex_unlock(&r->mu);
    return ns_out(&s, names, n);
}

int cql_roles_of(cql_roles *r, const char *name, bool recursive, char ***names, int *n)
{
    nameset s = { 0 };
    pthread_mutex_lock(&r->mu);
    collect(r, name, recursive, &s, 0);
    pthread_mutex_unlock(&r->mu);
    return ns_out(&s, names, n);
}

void cql_roles_names_free(char **names, int n)
{
    for (int i = 0; i < n; i++) cs_free(names[i]);
    cs_free(names);
}

bool cql_roles_granted(cql_roles *r, const char *grantee, const char *role_name)
{
    nameset s = { 0 };
    pthread_mutex_lock(&r->mu);
    collect(r, grantee, true, &s, 0);
    pthread_mutex_unlock(&r->mu);
    bool yes = ns_has(&s, role_name);
    cql_roles_names_free(s.v, s.n);
    return yes;
}

/* Append a copy of name (repeats allowed). */
static void push_copy(nameset *s, const char *name)
{
    if (s->err) return;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 8;
        char **nv = cs_realloc(s->v, sizeof *nv * (size_t)nc);
        if (!nv) {
            s->err = CS_ENOMEM;
            return;
        }
        s->v = nv;
        s->cap = nc;
    }
    if (!(s->v[s->n] = cs_strdup(name))) s->err = CS_ENOMEM;
    else s->n++;
}

int cql_roles_members(cql_roles *r, char ***roles, char ***members, int *n)
{
    nameset a = { 0 }, b = { 0 };
    pthread_mutex_lock(&r->mu);
    /* role-sorted: for each role in order, its members in name order */
    for (int i = 0; i < r->n; i++) {
        for (int j = 0; j < r->n; j++) {
            if (!has_member_of(&r->v[j], r->v[i].name)) continue;
            push_copy(&a, r->v[i].name);
            push_copy(&b, r->v[j].name);
        }
    }
    pthread_mutex_unlock(&r->mu);
    if (a.err || b.err || a.n != b.n) {
        cql_roles_names_free(a.v, a.n);
        cql_roles_names_free(b.v, b.n);
        *roles = *members = NULL;
        *n = 0;
        return CS_ENOMEM;
    }
    *roles = a.v;
    *members = b.v;
    *n = a.n;
    return 0;
}

char *cql_roles_hash_of(cql_roles *r, const char *name)
{
    pthread_mutex_lock(&r->mu);
    const role *o = get(r, name);
    char *h = o && o->hash ? cs_strdup(o->hash) : NULL;
    pthread_mutex_unlock(&r->mu);
    return h;
}

int cql_roles_member_of(cql_roles *r, const char *name, char ***names, int *n)
{
    nameset s = { 0 };
    pthread_mutex_lock(&r->mu);
    const role *o = get(r, name);
    for (int i = 0; o && i < o->n_member_of; i++) ns_add(&s, o->member_of[i]);
    pthread_mutex_unlock(&r->mu);
    return ns_out(&s, names, n);
}

/* ---------------------------------------------------------------- changes */

int cql_roles_create(cql_roles *r, const char *name, bool super, bool login, const char *hash, cs_error *e)
{
    role o = { .name = cs_strdup(name), .super = super, .login = login, .hash = hash ? cs_strdup(hash) : NULL };
    if (!o.name || (hash && !o.hash)) {
        role_clear(&o);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    pthread_mutex_lock(&r->mu);
    int rc = insert(r, &o);
    if (rc) {
        pthread_mutex_unlock(&r->mu);
        role_clear(&o);
        return rc == CS_EINVAL ? cs_error_set(e, CS_ERR_INVALID, "%s already exists", name)
                               : cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    rc = save(r, e);
    if (rc) {
        int at;
        find(r, name, &at);
        role_clear(&r->v[at]);
        memmove(r->v + at, r->v + at + 1, sizeof *r->v * (size_t)(r->n - at - 1));
        r->n--;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cql_roles_alter(cql_roles *r, const char *name, unsigned set, bool super, bool login, const char *hash,
                    cs_error *e)
{
    pthread_mutex_lock(&r->mu);
    role *o = get(r, name);
    if (!o) {
        pthread_mutex_unlock(&r->mu);
        return cs_error_set(e, CS_ERR_INVALID, "Role %s doesn't exist", name);
    }
    role old = *o;
    char *nh = NULL;
    if ((set & (ROLEOPT_PASSWORD | ROLEOPT_HASHED)) && !(nh = cs_strdup(hash))) {
        pthread_mutex_unlock(&r->mu);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    if (set & ROLEOPT_SUPERUSER) o->super = super;
    if (set & ROLEOPT_LOGIN) o->login = login;
    if (nh) o->hash = nh;
    int rc = save(r, e);
    if (rc) {
        o->super = old.super;
        o->login = old.login;
        o->hash = old.hash;
        cs_free(nh);
    } else if (nh) {
        cs_free(old.hash);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cql_roles_drop(cql_roles *r, const char *name, cs_error *e)
{
    pthread_mutex_lock(&r->mu);
    int at;
    if (!find(r, name, &at)) {
        pthread_mutex_unlock(&r->mu);
        return cs_error_set(e, CS_ERR_INVALID, "%s doesn't exist", name);
    }
    /* write the store without it first: memory changes only once saved */
    role gone = r->v[at];
    memmove(r->v + at, r->v + at + 1, sizeof *r->v * (size_t)(r->n - at - 1));
    r->n--;
    bool *had = cs_calloc((size_t)r->n + 1, sizeof *had);
    if (!had) {
        memmove(r->v + at + 1, r->v + at, sizeof *r->v * (size_t)(r->n - at));
        r->v[at] = gone;
        r->n++;
        pthread_mutex_unlock(&r->mu);
        return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    }
    /* out of every member_of too, and its permissions and those on it
     * (CassandraAuthorizer.revokeAllFrom and revokeAllOn); all put back if
     * the save fails */
    for (int i = 0; i < r->n; i++) {
        if ((had[i] = has_member_of(&r->v[i], name))) del_member_of(&r->v[i], name);
    }
    perm_undo pu = perm_keep(r);
    char *on_role = cs_malloc(strlen(name) + 7);
    if (on_role) snprintf(on_role, strlen(name) + 7, "roles/%s", name);
    int rc = !pu.ok || !on_role ? cs_error_set(e, CS_ERR_SERVER, "out of memory") : 0;
    for (int i = r->pn - 1; !rc && i >= 0; i--)
        if (!strcmp(r->pv[i].role, name) || !strcmp(r->pv[i].resource, on_role)) perm_remove(r, i);
    if (!rc) rc = save(r, e);
    perm_undo_end(r, &pu, rc != 0);
    cs_free(on_role);
    if (rc) {
        for (int i = 0; i < r->n; i++)
            if (had[i]) (void)add_member_of(&r->v[i], name);
        memmove(r->v + at + 1, r->v + at, sizeof *r->v * (size_t)(r->n - at));
        r->v[at] = gone;
        r->n++;
    } else {
        role_clear(&gone);
    }
    cs_free(had);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cql_roles_grant(cql_roles *r, const char *role_name, const char *grantee, cs_error *e)
{
    pthread_mutex_lock(&r->mu);
    role *g = get(r, grantee);
    int rc = !g || !get(r, role_name) ? cs_error_set(e, CS_ERR_INVALID, "%s doesn't exist", !g ? grantee : role_name)
             : add_member_of(g, role_name) ? cs_error_set(e, CS_ERR_SERVER, "out of memory")
                                           : 0;
    if (!rc && (rc = save(r, e)) != 0) del_member_of(g, role_name);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cql_roles_revoke(cql_roles *r, const char *role_name, const char *revokee, cs_error *e)
{
    pthread_mutex_lock(&r->mu);
    role *g = get(r, revokee);
    if (!g || !has_member_of(g, role_name)) {
        pthread_mutex_unlock(&r->mu);
        return cs_error_set(e, CS_ERR_INVALID, "%s is not a member of %s", revokee, role_name);
    }
    del_member_of(g, role_name);
    int rc = save(r, e);
    if (rc) (void)add_member_of(g, role_name);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

/* ---------------------------------------------------------------- permissions */

int cql_perms_modify(cql_roles *r, const char *role_name, const char *resource, unsigned perms, bool grant,
                     unsigned *changed, cs_error *e)
{
    *changed = 0;
    pthread_mutex_lock(&r->mu);
    perm_undo pu = perm_keep(r);
    int at, rc = pu.ok ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
    bool found = !rc && perm_find(r, role_name, resource, &at);
    unsigned had = found ? r->pv[at].perms : 0;
    unsigned now = grant ? had | perms : had & ~perms;
    if (!rc && now != had) {
        if (!found) rc = perm_insert(r, at, role_name, resource, now) ? cs_error_set(e, CS_ERR_SERVER, "out of memory") : 0;
        else if (now) r->pv[at].perms = now;
        else perm_remove(r, at);
        if (!rc) rc = save(r, e);
    }
    perm_undo_end(r, &pu, rc != 0);
    if (!rc) *changed = grant ? now & ~had : had & ~now;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cql_perms_revoke_on(cql_roles *r, const char *resource, bool below, cs_error *e)
{
    size_t n = strlen(resource);
    pthread_mutex_lock(&r->mu);
    perm_undo pu = perm_keep(r);
    int rc = pu.ok ? 0 : cs_error_set(e, CS_ERR_SERVER, "out of memory");
    bool any = false;
    for (int i = r->pn - 1; !rc && i >= 0; i--) {
        const char *res = r->pv[i].resource;
        if (!strcmp(res, resource) || (below && !strncmp(res, resource, n) && res[n] == '/')) {
            perm_remove(r, i);
            any = true;
        }
    }
    if (!rc && any) rc = save(r, e);
    perm_undo_end(r, &pu, rc != 0);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

unsigned cql_perms_authorize(cql_roles *r, const char *user, const char *resource)
{
    nameset s = { 0 };
    unsigned perms = 0;
    pthread_mutex_lock(&r->mu);
    collect(r, user, true, &s, 0);
    for (int i = 0; i < s.n; i++) {
        int at;
        if (perm_find(r, s.v[i], resource, &at)) perms |= r->pv[at].perms;
    }
    pthread_mutex_unlock(&r->mu);
    cql_roles_names_free(s.v, s.n);
    return perms;
}

int cql_perms_list(cql_roles *r, cql_perm_row **rows, int *n)
{
    pthread_mutex_lock(&r->mu);
    int count = r->pn;
    cql_perm_row *v = cs_calloc((size_t)(count ? count : 1), sizeof *v);
    int rc = v ? 0 : CS_ENOMEM;
    for (int i = 0; !rc && i < count; i++) {
        v[i].perms = r->pv[i].perms;
        v[i].role = cs_strdup(r->pv[i].role);
        v[i].resource = cs_strdup(r->pv[i].resource);
        if (!v[i].role || !v[i].resource) rc = CS_ENOMEM;
    }
    pthread_mutex_unlock(&r->mu);
    if (rc) {
        cql_perms_rows_free(v, count);
        *rows = NULL;
        *n = 0;
        return rc;
    }
    *rows = v;
    *n = count;
    return 0;
}

void cql_perms_rows_free(cql_perm_row *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        cs_free(rows[i].role);
        cs_free(rows[i].resource);
    }
    cs_free(rows);
}

/* ---------------------------------------------------------------- passwords */

int cql_roles_hashpw(const char *password, size_t len, char *out, size_t cap)
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$2a$", 10, NULL, 0, salt, sizeof salt)) return CS_EIO;
    char *pw = cs_strndup(password, len);
    struct crypt_data *d = cs_calloc(1, sizeof *d);
    int rc = CS_ENOMEM;
    if (pw && d) {
        const char *h = crypt_rn(pw, salt, d, sizeof *d);
        rc = h && h[0] == '$' && strlen(h) < cap ? 0 : CS_EIO;
        if (!rc) memcpy(out, h, strlen(h) + 1);
    }
    if (pw) memset(pw, 0, len);
    cs_free(pw);
    cs_free(d);
    return rc;
}

bool cql_roles_valid_hash(const char *h)
{
    /* jBCrypt: "$2$" or "$2a$", two-digit rounds (4..31 for libxcrypt), "$", 53 chars */
    size_t off = h[0] == '$' && h[1] == '2' ? (h[2] == '$' ? 3 : h[2] == 'a' && h[3] == '$' ? 4 : 0) : 0;
    if (!off || h[off] < '0' || h[off] > '9' || h[off + 1] < '0' || h[off + 1] > '9' || h[off + 2] != '$')
        return false;
    const char *rest = h + off + 3;
    if (strlen(rest) != 53) return false;
    for (const char *p = rest; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '/'))
            return false;
    int rounds = (h[off] - '0') * 10 + (h[off + 1] - '0');
    return rounds >= 4 && rounds <= 31;
}

/* Does password match hash (bcrypt)?  A "$2$" hash is checked as "$2a$"
 * (the same algorithm for passwords without 8-bit bytes). */
static bool checkpw(const char *pw, size_t plen, const char *hash)
{
    char h2[128];
    if (!strncmp(hash, "$2$", 3) && strlen(hash) + 2 < sizeof h2) {
        snprintf(h2, sizeof h2, "$2a$%s", hash + 3);
        hash = h2;
    }
    char *p = cs_strndup(pw, plen);
    struct crypt_data *d = cs_calloc(1, sizeof *d);
    bool ok = false;
    if (p && d) {
        const char *out = crypt_rn(p, hash, d, sizeof *d);
        ok = out && out[0] == '$' && strcmp(out, hash) == 0;
    }
    if (p) memset(p, 0, plen);
    cs_free(p);
    cs_free(d);
    return ok;
}

static void login_digest(const char *hash, const char *pass, size_t plen, uint8_t out[16])
{
    cs_buf b;
    cs_buf_init(&b);
    cs_buf_put(&b, hash, strlen(hash) + 1);
    cs_buf_put(&b, pass, plen);
    cs_md5(b.p, b.len, out);
    memset(b.p, 0, b.len);
    cs_buf_destroy(&b);
}

int cql_roles_login(cql_roles *r, const char *user, size_t ulen, const char *pass, size_t plen, cs_error *e)
{
    char *name = cs_strndup(user, ulen);
    if (!name) return cs_error_set(e, CS_ERR_SERVER, "out of memory");
    pthread_mutex_lock(&r->mu);
    const role *o = memchr(user, 0, ulen) ? NULL : get(r, name);
    char *hash = o && o->hash ? cs_strdup(o->hash) : NULL;
    bool login = o && o->login;
    uint8_t dg[16];
    bool memo = false;
    if (hash) {
        login_digest(hash, pass, plen, dg);
        for (int i = 0; i < LOGIN_MEMO && !memo; i++) memo = !memcmp(r->memo[i], dg, 16);
    }
    pthread_mutex_unlock(&r->mu);
    int rc = 0;
    if (!hash || (!memo && !checkpw(pass, plen, hash))) {
        rc = cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Provided username %.*s and/or password are incorrect",
                          (int)CS_MIN(ulen, 128), user);
    } else {
        if (!memo) {
            pthread_mutex_lock(&r->mu);
            memcpy(r->memo[r->memo_next], dg, 16);
            snprintf(r->memo_role[r->memo_next], sizeof r->memo_role[0], "%s", strlen(name) < 256 ? name : "");
            cs_md5(hash, strlen(hash), r->memo_hash[r->memo_next]);
            r->memo_next = (r->memo_next + 1) % LOGIN_MEMO;
            pthread_mutex_unlock(&r->mu);
        }
        if (!login)
            rc = cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "%s is not permitted to log in", name);
    }
    cs_free(hash);
    cs_free(name);
    return rc;
}

int cql_roles_cached_logins(cql_roles *r, char ***names, int *n)
{
    *names = NULL;
    *n = 0;
    char **v = cs_calloc(LOGIN_MEMO, sizeof *v);
    if (!v) return CS_ENOMEM;
    int k = 0, rc = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < LOGIN_MEMO && !rc; i++) {
        const char *name = r->memo_role[i];
        const role *o = name[0] ? get(r, name) : NULL;
        uint8_t h[16];
        if (!o || !o->hash) continue;
        cs_md5(o->hash, strlen(o->hash), h);
        if (memcmp(h, r->memo_hash[i], 16)) continue;   /* the password changed since */
        bool seen = false;
        for (int j = 0; j < k && !seen; j++) seen = !strcmp(v[j], name);
        if (seen) continue;
        if (!(v[k] = cs_strdup(name))) rc = CS_ENOMEM;
        else k++;
    }
    pthread_mutex_unlock(&r->mu);
    if (rc) { cql_roles_names_free(v, k); return rc; }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
        }
    *names = v;
    *n = k;
    return 0;
}
