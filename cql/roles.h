/*
 * roles.h: the role store (Cassandra's CassandraRoleManager and the
 * credentials PasswordAuthenticator checks).  Owner: catalog (cql/roles.c).
 * Callers: cql/exec_auth.c (role statements, on a request loop under the
 * execution lock), cql/vtables.c (system_auth.roles and role_members),
 * server/auth.c through cql_login (a request loop, outside the lock).
 *
 * Each role has Cassandra's system_auth.roles fields: name, is_superuser,
 * can_login, salted_hash (bcrypt "$2a$", NULL if none) and member_of (the
 * roles granted to it).  The store lives in memory and in one file,
 * <data_dir>/roles.cassette, rewritten whole (temp file, fsync, rename) by
 * every change before the statement is acknowledged, so a change survives
 * kill -9 and a torn write never leaves half a file.  The file is text, a
 * line per role (format in docs/format/roles.md).  When it does not exist
 * the store holds Cassandra's default superuser cassandra/cassandra (login,
 * superuser), as CassandraRoleManager.setupDefaultRole creates it.
 *
 * Every function takes the store's own lock, so logins on any loop may run
 * beside a statement.  Names are compared byte for byte (role names are
 * case-sensitive once parsed).
 */
#ifndef CS_CQL_ROLES_H
#define CS_CQL_ROLES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

typedef struct cql_roles cql_roles;

/* Load path (absent: the default role only).  A corrupt file is an error
 * naming the file and line (the server does not start on it). */
int cql_roles_open(const char *path, cql_roles **out, cs_error *e);
void cql_roles_free(cql_roles *r);

typedef struct cql_role_info {
    bool exists, super, login, has_hash;
} cql_role_info;
cql_role_info cql_roles_get(cql_roles *r, const char *name);

/* Cassandra's Roles.hasSuperuserStatus: the role or one it inherits is a
 * superuser. */
bool cql_roles_has_super(cql_roles *r, const char *name);

/* Names as a cs_malloc'd array of cs_malloc'd strings (free with
 * cql_roles_names_free), sorted as Cassandra sorts RoleResources.
 *   all:   every role;
 *   of:    the role itself and those granted to it, with those inherited
 *          through them if recursive (IRoleManager.getRoles);
 * A missing role yields none. */
int cql_roles_all(cql_roles *r, char ***names, int *n);
int cql_roles_of(cql_roles *r, const char *name, bool recursive, char ***names, int *n);
void cql_roles_names_free(char **names, int n);
/* Is `role` among the roles of `grantee` (recursive)? */
bool cql_roles_granted(cql_roles *r, const char *grantee, const char *role);

/* Changes (persisted before they return 0).  hash: a bcrypt string or NULL. */
int cql_roles_create(cql_roles *r, const char *name, bool super, bool login, const char *hash, cs_error *e);
/* set: ROLEOPT_* bits of cql/ast.h for the fields to change. */
int cql_roles_alter(cql_roles *r, const char *name, unsigned set, bool super, bool login, const char *hash,
                    cs_error *e);
/* Drops the role and takes it away from every role it was granted to. */
int cql_roles_drop(cql_roles *r, const char *name, cs_error *e);
int cql_roles_grant(cql_roles *r, const char *role, const char *grantee, cs_error *e);
int cql_roles_revoke(cql_roles *r, const char *role, const char *revokee, cs_error *e);

/* Rows of system_auth.role_members: for each role, each member granted it
 * (role, member), role-sorted; free both arrays with cql_roles_names_free. */
int cql_roles_members(cql_roles *r, char ***roles, char ***members, int *n);
/* The salted hash of a role (cs_malloc'd) or NULL. */
char *cql_roles_hash_of(cql_roles *r, const char *name);
/* member_of of a role, sorted (set order). */
int cql_roles_member_of(cql_roles *r, const char *name, char ***names, int *n);

/* bcrypt ("$2a$", 2^10 rounds as Cassandra's default gensalt) of a
 * password into out (>= 61 bytes).  0 or CS_EIO. */
int cql_roles_hashpw(const char *password, size_t len, char *out, size_t cap);
/* Is hash a bcrypt hash jBCrypt would take ("$2a$" or "$2$", two-digit
 * rounds, 53 characters of salt and digest)? */
bool cql_roles_valid_hash(const char *hash);

/* PasswordAuthenticator: 0 when user exists, has a hash, the password
 * matches and the role may log in; else CS_EUSER with e filled (0x0100,
 * Cassandra's wording).  A match is remembered (a digest of the hash and
 * the password, in memory) so that a client reconnecting does not pay for
 * bcrypt again. */
int cql_roles_login(cql_roles *r, const char *user, size_t ulen, const char *pass, size_t plen, cs_error *e);
/* The roles with a remembered login whose password is unchanged since
 * (system_views.credentials_cache_keys), sorted; free with
 * cql_roles_names_free. */
int cql_roles_cached_logins(cql_roles *r, char ***names, int *n);

/* ---------------------------------------------------------------- permissions
 * CassandraAuthorizer's system_auth.role_permissions: per (role, resource)
 * a set of permissions (PERM_* bits of cql/ast.h), resource named as
 * IResource.getName ("data", "data/ks", "data/ks/t", "roles", "roles/r",
 * "functions", "functions/ks", "mbean", "mbean/n"; all tables in ks is
 * "data/ks/" followed by a star).  Kept in
 * the same file and persisted the same way as the roles. */

/* Permission's name for one PERM_* bit ("CREATE", ...). */
const char *cql_perm_name(unsigned bit);
/* GRANT (grant) or REVOKE perms on resource to/from role; *changed: the
 * permissions actually added or removed (0: nothing written). */
int cql_perms_modify(cql_roles *r, const char *role, const char *resource, unsigned perms, bool grant,
                     unsigned *changed, cs_error *e);
/* revokeAllOn: every role's permissions on resource, and with below on
 * every resource under it ("data/ks" below: its tables and all-tables). */
int cql_perms_revoke_on(cql_roles *r, const char *resource, bool below, cs_error *e);
/* CassandraAuthorizer.authorize for a non-superuser: the permissions on
 * exactly this resource granted to user or any role it has (recursive). */
unsigned cql_perms_authorize(cql_roles *r, const char *user, const char *resource);

typedef struct cql_perm_row { char *role, *resource; unsigned perms; } cql_perm_row;
/* Every entry, sorted by (role, resource). */
int cql_perms_list(cql_roles *r, cql_perm_row **rows, int *n);
void cql_perms_rows_free(cql_perm_row *rows, int n);

#endif
