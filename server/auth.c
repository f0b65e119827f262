/*
 * auth.c: SASL PLAIN for PasswordAuthenticator (see auth.h), following
 * Cassandra 4.1's PlainTextSaslAuthenticator.decodeCredentials: the token
 * is split at its NUL bytes from the end (password, then authentication
 * id); an authorization id in front is allowed and ignored; a third NUL is
 * a format error.
 */
#include "server/auth.h"

int auth_plain_decode(const uint8_t *tok, int32_t len, auth_plain *out, cs_error *e)
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
        } else if (!user) {
            user = t + i + 1;
            ulen = end - i - 1;
        } else {
            return cs_error_set(e, CS_ERR_BAD_CREDENTIALS,
                                "Credential format error: username or password is empty or contains NUL(\\0) character");
        }
        end = i;
    }
    if (!pass || plen == 0)
        return cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Password must not be null");
    if (!user || ulen == 0)
        return cs_error_set(e, CS_ERR_BAD_CREDENTIALS, "Authentication ID must not be null");
    out->user = user;
    out->ulen = (size_t)ulen;
    out->pass = pass;
    out->plen = (size_t)plen;
    return 0;
}
