/*
 * test_server_auth.c: SASL PLAIN token decoding (server/auth.h), with
 * Cassandra 4.1's PlainTextSaslAuthenticator rules and messages.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "server/auth.h"

static int decode(const char *tok, int32_t len, auth_plain *a, cs_error *e)
{
    cs_error_init(e);
    memset(a, 0, sizeof *a);
    return auth_plain_decode((const uint8_t *)tok, len, a, e);
}

Test(server_auth, plain_tokens)
{
    cs_error e;
    auth_plain a;
    cr_assert_eq(decode("\0cassandra\0secret", 17, &a, &e), 0);
    cr_assert_eq(a.ulen, 9);
    cr_assert_eq(memcmp(a.user, "cassandra", 9), 0);
    cr_assert_eq(a.plen, 6);
    cr_assert_eq(memcmp(a.pass, "secret", 6), 0);
    cr_assert_eq(decode("admin\0bob\0pw", 12, &a, &e), 0);            /* authzid ignored */
    cr_assert_eq(a.ulen, 3);
    cr_assert_eq(memcmp(a.user, "bob", 3), 0);
    /* without the leading NUL there is no authentication id */
    cr_assert_eq(decode("cassandra\0cassandra", 19, &a, &e), CS_EUSER);
    cr_assert_eq(e.code, CS_ERR_BAD_CREDENTIALS);
    cr_assert_str_eq(e.msg, "Authentication ID must not be null");
    cr_assert_eq(decode("\0cassandra\0", 11, &a, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Password must not be null");
    cr_assert_eq(decode("\0\0cassandra", 11, &a, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Authentication ID must not be null");
    cr_assert_eq(decode("a\0b\0c\0d", 7, &a, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Credential format error: username or password is empty or contains NUL(\\0) character");
    cr_assert_eq(decode("cassandra", 9, &a, &e), CS_EUSER);            /* no NUL at all */
    cr_assert_str_eq(e.msg, "Password must not be null");
    cr_assert_eq(decode(NULL, -1, &a, &e), CS_EUSER);                  /* null token */
    cr_assert_eq(decode("", 0, &a, &e), CS_EUSER);
}
