/*
 * authz.c: Cassandra's authorize step, run before a statement is
 * validated and executed (QueryProcessor.processStatement: authorize,
 * validate, execute), and CassandraAuthorizer's schema hooks.
 * Owner: catalog.  Callers: cql/exec.c (every statement but the role and
 * permission ones, which exec_auth.c authorizes in their own order),
 * cql/exec_auth.c (resources and permission checks).
 *
 * Two parts, as in ClientState:
 *  - the data-resource checks every configuration runs: schema changes
 *    (CREATE, ALTER, DROP) on the local system keyspaces are refused with
 *    "<ks> keyspace is not user-modifiable.", on the replicated ones
 *    (system_auth, system_distributed, system_traces) with "Cannot <PERM>
 *    <resource>" except ALTER of the keyspace itself (its replication);
 *  - with CassandraAuthorizer only, the permission check: a superuser has
 *    every permission; anyone else needs the permission on the resource or
 *    one of its parents (table, all tables in ks, keyspace, all keyspaces),
 *    granted to them or a role they have.  SELECT on system.local, peers,
 *    peers_v2 and the system_schema and system_virtual_schema tables needs
 *    none (drivers read them on connect).
 * Resources are Cassandra's IResource, named as getName ("data/ks/t",
 * stored in the role store, cql/roles.h) and shown as toString
 * ("<table ks.t>").
 */
#include <stdio.h>
#include <string.h>

#include "cql/cql_int.h"
#include "cql/roles.h"
#include "cql/schema.h"

/* ---------------------------------------------------------------- resources */

void cql__res_name(const ast_resource *r, char *out, size_t cap)
{
    switch (r->kind) {
    case RES_ALL_KEYSPACES: snprintf(out, cap, "data"); break;
    case RES_KEYSPACE: snprintf(out, cap, "data/%s", r->ks); break;
    case RES_ALL_TABLES: snprintf(out, cap, "data/%s/*", r->ks); break;
    case RES_TABLE: snprintf(out, cap, "data/%s/%s", r->ks, r->name); break;
    case RES_ALL_ROLES: snprintf(out, cap, "roles"); break;
    case RES_ROLE: snprintf(out, cap, "roles/%s", r->name); break;
    case RES_ALL_FUNCTIONS: snprintf(out, cap, "functions"); break;
    case RES_FUNCTIONS_IN_KS: snprintf(out, cap, "functions/%s", r->ks); break;
    case RES_FUNCTION: snprintf(out, cap, "functions/%s/%s[]", r->ks ? r->ks : "", r->name); break;
    case RES_ALL_MBEANS: snprintf(out, cap, "mbean"); break;
    case RES_MBEAN: snprintf(out, cap, "mbean/%s", r->name); break;
    default: snprintf(out, cap, "?"); break;
    }
}

void cql__res_text(const ast_resource *r, char *out, size_t cap)
{
    switch (r->kind) {
    case RES_ALL_KEYSPACES: snprintf(out, cap, "<all keyspaces>"); break;
    case RES_KEYSPACE: snprintf(out, cap, "<keyspace %s>", r->ks); break;
    case RES_TABLE: snprintf(out, cap, "<table %s.%s>", r->ks, r->name); break;
    case RES_ALL_TABLES: snprintf(out, cap, "<all tables in %s>", r->ks); break;
    case RES_ALL_ROLES: snprintf(out, cap, "<all roles>"); break;
    case RES_ROLE: snprintf(out, cap, "<role %s>", r->name); break;
    case RES_ALL_FUNCTIONS: snprintf(out, cap, "<all functions>"); break;
    case RES_FUNCTIONS_IN_KS: snprintf(out, cap, "<all functions in %s>", r->ks); break;
    case RES_FUNCTION: snprintf(out, cap, "<function %s.%s()>", r->ks ? r->ks : "null", r->name); break;
    case RES_ALL_MBEANS: snprintf(out, cap, "<all mbeans>"); break;
    case RES_MBEAN: snprintf(out, cap, "<mbean %s>", r->name); break;
    default: snprintf(out, cap, "<none>"); break;
    }
}

/* Resources.fromName: name ("data/ks/t") back to a resource; its strings
 * point into buf.  false if the name is none of Cassandra's forms. */
bool cql__res_from_name(const char *name, ast_resource *r, char *buf, size_t cap)
{
    memset(r, 0, sizeof *r);
    snprintf(buf, cap, "%s", name);
    char *slash = strchr(buf, '/'), *rest = slash ? slash + 1 : NULL;
    if (slash) *slash = 0;
    char *slash2 = rest ? strchr(rest, '/') : NULL, *last = slash2 ? slash2 + 1 : NULL;
    if (slash2) *slash2 = 0;
    if (!strcmp(buf, "data")) {
        r->kind = !rest ? RES_ALL_KEYSPACES : !last ? RES_KEYSPACE : !strcmp(last, "*") ? RES_ALL_TABLES : RES_TABLE;
        r->ks = rest;
        r->name = last;
        return !last || !strchr(last, '/');
    }
    if (!strcmp(buf, "roles")) {
        if (slash2) *slash2 = '/';   /* a role name may hold '/' */
        r->kind = rest ? RES_ROLE : RES_ALL_ROLES;
        r->name = rest;
        return true;
    }
    if (!strcmp(buf, "functions")) {
        r->kind = !rest ? RES_ALL_FUNCTIONS : !last ? RES_FUNCTIONS_IN_KS : RES_FUNCTION;
        r->ks = rest;
        r->name = last;
        return true;
    }
    if (!strcmp(buf, "mbean")) {
        if (slash2) *slash2 = '/';
        r->kind = rest ? RES_MBEAN : RES_ALL_MBEANS;
        r->name = rest;
        return true;
    }
    return false;
}

/* IResource.getParent; false for a root. */
static bool res_parent(const ast_resource *r, ast_resource *p)
{
    memset(p, 0, sizeof *p);
    p->ks = r->ks;
    switch (r->kind) {
    case RES_TABLE: p->kind = RES_ALL_TABLES; return true;
    case RES_ALL_TABLES: p->kind = RES_KEYSPACE; return true;
    case RES_KEYSPACE: p->kind = RES_ALL_KEYSPACES; return true;
    case RES_ROLE: p->kind = RES_ALL_ROLES; return true;
    case RES_FUNCTION: p->kind = RES_FUNCTIONS_IN_KS; return true;
    case RES_FUNCTIONS_IN_KS: p->kind = RES_ALL_FUNCTIONS; return true;
    case RES_MBEAN: p->kind = RES_ALL_MBEANS; return true;
    default: return false;
    }
}

int cql__res_chain(const ast_resource *r, ast_resource out[4])
{
    int n = 0;
    out[n++] = *r;
    while (n < 4 && res_parent(&out[n - 1], &out[n]))
        n++;
    return n;
}

/* ---------------------------------------------------------------- checks */

bool cql__authz_enabled(const cql_ctx *ctx) { return ctx->cfg.cassandra_authorizer; }

const char *cql__authz_user(const cql_ctx *ctx, const cql_session *s)
{
    return ctx->cfg.password_authenticator && s->user[0] ? s->user : NULL;
}

bool cql__authz_is_super(cql_ctx *ctx, const cql_session *s)
{
    const char *u = cql__authz_user(ctx, s);
    return !ctx->cfg.password_authenticator || (u && cql_roles_has_super(ctx->roles, u));
}

unsigned cql__authz_perms_on(cql_ctx *ctx, const cql_session *s, const ast_resource *r)
{
    if (cql__authz_is_super(ctx, s))
        return cql_resource_permissions(r->kind);
    const char *u = cql__authz_user(ctx, s);
    if (!u)
        return 0;
    char name[700];
    cql__res_name(r, name, sizeof name);
    return cql_perms_authorize(ctx->roles, u, name);
}

int cql__authz_ensure(cql_ctx *ctx, const cql_session *s, unsigned perm, const ast_resource *r, cs_error *e)
{
    if (!cql__authz_enabled(ctx))
        return 0;
    if (r->kind == RES_FUNCTION && r->ks && !strcmp(r->ks, "system"))
        return 0;   /* native functions are open to all */
    if (cql__authz_is_super(ctx, s))
        return 0;
    ast_resource chain[4];
    int n = cql__res_chain(r, chain);
    for (int i = 0; i < n; i++)
        if (cql__authz_perms_on(ctx, s, &chain[i]) & perm)
            return 0;
    char text[700];
    cql__res_text(r, text, sizeof text);
    const char *u = cql__authz_user(ctx, s);
    return cs_error_set(e, CS_ERR_UNAUTHORIZED, "User %s has no %s permission on %s or any of its parents",
                        u ? u : "anonymous", cql_perm_name(perm), text);
}

static bool local_system_ks(const char *ks)
{
    return !strcmp(ks, "system") || !strcmp(ks, "system_schema") || !strcmp(ks, "system_views") ||
           !strcmp(ks, "system_virtual_schema");
}

static bool replicated_system_ks(const char *ks)
{
    return !strcmp(ks, "system_auth") || !strcmp(ks, "system_distributed") || !strcmp(ks, "system_traces");
}

/* READABLE_SYSTEM_RESOURCES. */
static bool readable_system(const ast_resource *r)
{
    if (r->kind != RES_TABLE)
        return false;
    if (!strcmp(r->ks, "system_schema") || !strcmp(r->ks, "system_virtual_schema"))
        return true;
    return !strcmp(r->ks, "system") &&
           (!strcmp(r->name, "local") || !strcmp(r->name, "peers") || !strcmp(r->name, "peers_v2"));
}

/* ClientState.ensurePermission(keyspace, perm, DataResource). */
static int ensure_data(cql_ctx *ctx, const cql_session *s, unsigned perm, const ast_resource *r, cs_error *e)
{
    if (perm == PERM_CREATE || perm == PERM_ALTER || perm == PERM_DROP) {
        if (local_system_ks(r->ks))
            return cs_error_set(e, CS_ERR_UNAUTHORIZED, "%s keyspace is not user-modifiable.", r->ks);
        if (replicated_system_ks(r->ks) && !(perm == PERM_ALTER && r->kind == RES_KEYSPACE)) {
            char text[700];
            cql__res_text(r, text, sizeof text);
            return cs_error_set(e, CS_ERR_UNAUTHORIZED, "Cannot %s %s", cql_perm_name(perm), text);
        }
    }
    if (perm == PERM_SELECT && readable_system(r))
        return 0;
    return cql__authz_ensure(ctx, s, perm, r, e);
}

static int ensure_table(cql_ctx *ctx, const cql_session *s, unsigned perm, const char *ks, const char *table,
                        cs_error *e)
{
    ast_resource r = { .kind = RES_TABLE, .ks = (char *)ks, .name = (char *)table };
    return ensure_data(ctx, s, perm, &r, e);
}

static int ensure_ks_level(cql_ctx *ctx, const cql_session *s, unsigned perm, ast_resource_kind kind, const char *ks,
                           cs_error *e)
{
    ast_resource r = { .kind = kind, .ks = (char *)ks };
    return ensure_data(ctx, s, perm, &r, e);
}

static const char *ks_of(const ast_qname *q, const cql_session *s)
{
    return q->ks ? q->ks : s->keyspace[0] ? s->keyspace : NULL;
}

/* ModificationStatement.authorize (t exists, not a view). */
static int authorize_modification(cql_ctx *ctx, const cql_session *s, const cql_stmt *st, cs_error *e)
{
    const ast_qname *q = st->kind == STMT_INSERT ? &st->u.insert.table
                         : st->kind == STMT_UPDATE ? &st->u.update.table : &st->u.del.table;
    const char *ks = ks_of(q, s);
    sch_table *t = ks ? sch_table_find(ctx->cat, ks, q->name) : NULL;
    if (!t || t->is_view)
        return 0;   /* refused when it runs, as Cassandra's prepare refuses it first */
    int rc = ensure_table(ctx, s, PERM_MODIFY, ks, t->name, e);
    bool conditions = (st->kind == STMT_INSERT && st->u.insert.if_not_exists) ||
                      (st->kind == STMT_UPDATE && (st->u.update.if_exists || st->u.update.n_conds > 0)) ||
                      (st->kind == STMT_DELETE && (st->u.del.if_exists || st->u.del.n_conds > 0));
    if (!rc && conditions)
        rc = ensure_table(ctx, s, PERM_SELECT, ks, t->name, e);
    if (!rc && t->n_views > 0) {
        rc = ensure_table(ctx, s, PERM_SELECT, ks, t->name, e);
        for (int i = 0; !rc && i < t->n_views; i++)
            rc = ensure_table(ctx, s, PERM_MODIFY, ks, t->views[i]->name, e);
    }
    return rc;
}

/* The table an index of keyspace ks named name is on, or NULL. */
static sch_table *indexed_table(cql_ctx *ctx, const char *ks, const char *name)
{
    sch_keyspace *k = sch_keyspace_find(ctx->cat, ks);
    for (int i = 0; k && i < k->n_tables; i++)
        for (int j = 0; j < k->tables[i]->n_indexes; j++)
            if (!strcmp(k->tables[i]->indexes[j]->name, name))
                return k->tables[i];
    return NULL;
}

int cql__authorize(cql_ctx *ctx, const cql_session *s, const cql_stmt *st, cs_error *e)
{
    const char *ks;
    switch (st->kind) {
    case STMT_SELECT: {
        if (!cql__authz_enabled(ctx))
            return 0;
        const ast_qname *q = &st->u.select.table;
        ks = ks_of(q, s);
        sch_table *t = ks ? sch_table_find(ctx->cat, ks, q->name) : NULL;
        if (!t)
            return 0;
        if (t->is_view)
            return t->view_base ? ensure_table(ctx, s, PERM_SELECT, ks, t->view_base->name, e) : 0;
        return ensure_table(ctx, s, PERM_SELECT, ks, t->name, e);
    }
    case STMT_INSERT: case STMT_UPDATE: case STMT_DELETE:
        return cql__authz_enabled(ctx) ? authorize_modification(ctx, s, st, e) : 0;
    case STMT_BATCH:
        for (int i = 0; i < st->u.batch.n_stmts; i++) {
            int rc = cql__authorize(ctx, s, st->u.batch.stmts[i], e);
            if (rc)
                return rc;
        }
        return 0;
    case STMT_TRUNCATE:
        if (!cql__authz_enabled(ctx) || !(ks = ks_of(&st->u.drop.name, s)))
            return 0;
        return ensure_table(ctx, s, PERM_MODIFY, ks, st->u.drop.name.name, e);
    case STMT_CREATE_KEYSPACE: {
        ast_resource root = { .kind = RES_ALL_KEYSPACES };
        return cql__authz_ensure(ctx, s, PERM_CREATE, &root, e);
    }
    case STMT_ALTER_KEYSPACE:
        return ensure_ks_level(ctx, s, PERM_ALTER, RES_KEYSPACE, st->u.keyspace.name, e);
    case STMT_DROP_KEYSPACE:
        return ensure_ks_level(ctx, s, PERM_DROP, RES_KEYSPACE, st->u.keyspace.name, e);
    case STMT_CREATE_TABLE:
        if (!(ks = ks_of(&st->u.create_table.table, s)))
            return 0;
        return ensure_ks_level(ctx, s, PERM_CREATE, RES_ALL_TABLES, ks, e);
    case STMT_ALTER_TABLE:
        if (!(ks = ks_of(&st->u.alter_table.table, s)))
            return 0;
        return ensure_table(ctx, s, PERM_ALTER, ks, st->u.alter_table.table.name, e);
    case STMT_DROP_TABLE:
        if (!(ks = ks_of(&st->u.drop.name, s)))
            return 0;
        return ensure_table(ctx, s, PERM_DROP, ks, st->u.drop.name.name, e);
    case STMT_CREATE_TYPE: case STMT_ALTER_TYPE: case STMT_DROP_TYPE: {
        const ast_qname *q = st->kind == STMT_DROP_TYPE ? &st->u.drop.name : &st->u.type_def.name;
        if (!(ks = ks_of(q, s)))
            return 0;
        unsigned perm = st->kind == STMT_CREATE_TYPE ? PERM_CREATE : st->kind == STMT_ALTER_TYPE ? PERM_ALTER : PERM_DROP;
        return ensure_ks_level(ctx, s, perm, RES_ALL_TABLES, ks, e);
    }
    case STMT_CREATE_INDEX:
        if (!(ks = ks_of(&st->u.create_index.table, s)))
            return 0;
        return ensure_table(ctx, s, PERM_ALTER, ks, st->u.create_index.table.name, e);
    case STMT_DROP_INDEX: {
        if (!(ks = ks_of(&st->u.drop.name, s)))
            return 0;
        sch_table *t = indexed_table(ctx, ks, st->u.drop.name.name);
        return t ? ensure_table(ctx, s, PERM_ALTER, ks, t->name, e) : 0;
    }
    case STMT_CREATE_VIEW:
        if (!(ks = ks_of(&st->u.create_view.view, s)))
            return 0;
        return ensure_table(ctx, s, PERM_ALTER, ks, st->u.create_view.base.name, e);
    case STMT_ALTER_VIEW: case STMT_DROP_VIEW: {
        const ast_qname *q = st->kind == STMT_ALTER_VIEW ? &st->u.alter_view.table : &st->u.drop.name;
        if (!(ks = ks_of(q, s)))
            return 0;
        sch_table *v = sch_table_find(ctx->cat, ks, q->name);
        if (!v || !v->is_view || !v->view_base)
            return 0;
        return ensure_table(ctx, s, PERM_ALTER, ks, v->view_base->name, e);
    }
    case STMT_CREATE_FUNCTION: case STMT_CREATE_AGGREGATE: {
        if (!(ks = ks_of(&st->u.drop.name, s)))
            return 0;
        ast_resource r = { .kind = RES_FUNCTIONS_IN_KS, .ks = (char *)ks };
        return cql__authz_ensure(ctx, s, PERM_CREATE, &r, e);
    }
    default:
        return 0;   /* USE, DESCRIBE: a login is all they need; DROP FUNCTION: no user function exists */
    }
}

/* ---------------------------------------------------------------- schema hooks */

void cql__authz_schema_changed(cql_ctx *ctx, const cql_session *s, const cql_schema_change *c)
{
    if (!cql__authz_enabled(ctx))
        return;
    cs_error e;
    cs_error_init(&e);
    char name[700];
    bool ks = !strcmp(c->target, "KEYSPACE"), table = !strcmp(c->target, "TABLE");
    if (!strcmp(c->change_type, "DROPPED")) {
        /* AuthSchemaChangeListener: a keyspace's data and function
         * resources (and so its tables'), a table's own */
        if (ks) {
            snprintf(name, sizeof name, "data/%s", c->keyspace);
            (void)cql_perms_revoke_on(ctx->roles, name, true, &e);
            snprintf(name, sizeof name, "functions/%s", c->keyspace);
            (void)cql_perms_revoke_on(ctx->roles, name, true, &e);
        } else if (table) {
            snprintf(name, sizeof name, "data/%s/%s", c->keyspace, c->name);
            (void)cql_perms_revoke_on(ctx->roles, name, false, &e);
        }
        return;
    }
    /* AlterSchemaStatement.grantPermissionsOnResource: the creator (not
     * anonymous) gets every permission applicable to what it created */
    const char *u = cql__authz_user(ctx, s);
    if (!u || strcmp(c->change_type, "CREATED"))
        return;
    unsigned changed;
    if (ks) {
        snprintf(name, sizeof name, "data/%s", c->keyspace);
        (void)cql_perms_modify(ctx->roles, u, name, cql_resource_permissions(RES_KEYSPACE), true, &changed, &e);
        snprintf(name, sizeof name, "functions/%s", c->keyspace);
        (void)cql_perms_modify(ctx->roles, u, name, cql_resource_permissions(RES_FUNCTIONS_IN_KS), true, &changed, &e);
    } else if (table) {
        sch_table *t = sch_table_find(ctx->cat, c->keyspace, c->name);
        if (!t || t->is_view)
            return;   /* CreateViewStatement creates no resource */
        snprintf(name, sizeof name, "data/%s/%s", c->keyspace, c->name);
        (void)cql_perms_modify(ctx->roles, u, name, cql_resource_permissions(RES_TABLE), true, &changed, &e);
    }
}
