/*
 * auth.h: native protocol authentication (spec v4 §4.2.3, SASL).  Owner:
 * server/auth.c.  Caller: server/conn.c on the request loop thread.
 *
 * With `authenticator: PasswordAuthenticator` the server answers STARTUP
 * with AUTHENTICATE naming Cassandra's class, the client sends one
 * AUTH_RESPONSE carrying a SASL PLAIN token, and the server answers
 * AUTH_SUCCESS (null token) or ERROR 0x0100.  Only the default superuser
 * cassandra/cassandra exists (no system_auth.roles yet).
 */
#ifndef CS_SERVER_AUTH_H
#define CS_SERVER_AUTH_H

#include <stdint.h>

#include "common/err.h"

#define AUTH_PASSWORD_AUTHENTICATOR "org.apache.cassandra.auth.PasswordAuthenticator"

/* Check a SASL PLAIN token ([authzid] NUL authcid NUL passwd; tok may be
 * NULL with len -1).  Returns 0, or CS_EUSER with e filled (0x0100 and
 * Cassandra's wording). */
int auth_plain_check(const uint8_t *tok, int32_t len, cs_error *e);

#endif
