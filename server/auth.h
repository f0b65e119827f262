/*
 * auth.h: native protocol authentication (spec v4 §4.2.3, SASL).  Owner:
 * server/auth.c.  Caller: server/conn.c on the request loop thread.
 *
 * With `authenticator: PasswordAuthenticator` the server answers STARTUP
 * with AUTHENTICATE naming Cassandra's class, the client sends one
 * AUTH_RESPONSE carrying a SASL PLAIN token, and the server answers
 * AUTH_SUCCESS (null token) or ERROR 0x0100.  This file decodes the token;
 * the credentials are checked against the role store (cql_login,
 * cql/roles.h).
 */
#ifndef CS_SERVER_AUTH_H
#define CS_SERVER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define AUTH_PASSWORD_AUTHENTICATOR "org.apache.cassandra.auth.PasswordAuthenticator"

/* A decoded SASL PLAIN token: user and password point into the token. */
typedef struct auth_plain {
    const char *user; size_t ulen;
    const char *pass; size_t plen;
} auth_plain;

/* Decode a SASL PLAIN token ([authzid] NUL authcid NUL passwd; tok may be
 * NULL with len -1).  Returns 0, or CS_EUSER with e filled (0x0100 and
 * Cassandra's wording). */
int auth_plain_decode(const uint8_t *tok, int32_t len, auth_plain *out, cs_error *e);

#endif
