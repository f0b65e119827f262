/*
 * auth.c: SASL PLAIN for PasswordAuthenticator (see auth.h), following
 * Cassandra's PlainTextSaslAuthenticator: the token is split at its NUL bytes
 * from the end, so an authorization id in front is allowed and ignored.
 */
#include "server/auth.h"

#include <string.h>

#include "common/util.h"

int auth_plain_check(const uint8_t *tok, int32_t len, cs_error *e)
{
    const char *t = (const char *)tok;
    int32_t n = (len < 0 || !tok) ? 0 : len;
    int32_t end = n;
    const char *user = NULL, *pass = NULL;
    int32_t ulen = 0, plen = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        if (t[i] != '\0')
            continue;
        if (!pass) {
            pass = t + i + 1;
            plen = end - i - 1;
        } else {
            user = t + i + 1;
            ulen = end - i - 1;
            break;
        }
        end = i;
    }
    if (pass && !user) {            /* "user NUL pass" without an authzid */
        user = t;
        ulen = end;
    }
    if (!user || ulen == 0)
        return cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Authentication ID must not be null");
    if (!pass || plen == 0)
        return cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Password must not be null");
    if (ulen != 9 || memcmp(user, "cassandra", 9) != 0 || plen != 9 ||
        memcmp(pass, "cassandra", 9) != 0)
        return cs_error_set(e, CS_ERR_BAD_CREDENTIALS,
                            "Provided username %.*s and/or password are incorrect",
                            (int)CS_MIN(ulen, 128), user);
    return 0;
}
