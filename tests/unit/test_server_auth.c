/*
 * test_server_auth.c: SASL PLAIN token parsing and checking (server/auth.h),
 * with Cassandra's PlainTextSaslAuthenticator messages.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "server/auth.h"

static int check(const char *tok, int32_t len, cs_error *e)
{
    cs_error_init(e);
    return auth_plain_check((const uint8_t *)tok, len, e);
}

Test(server_auth, plain_tokens)
{
    cs_error e;
    cr_assert_eq(check("\0cassandra\0cassandra", 20, &e), 0);
    cr_assert_eq(check("cassandra\0cassandra", 19, &e), 0);            /* no authzid */
    cr_assert_eq(check("admin\0cassandra\0cassandra", 25, &e), 0);     /* authzid ignored */
    cr_assert_eq(check("\0cassandra\0wrong", 16, &e), CS_EUSER);
    cr_assert_eq(e.code, CS_ERR_BAD_CREDENTIALS);
    cr_assert_str_eq(e.msg, "Provided username cassandra and/or password are incorrect");
    cr_assert_eq(check("\0Cassandra\0cassandra", 20, &e), CS_EUSER);   /* case-sensitive */
    cr_assert_eq(check("\0cassandra\0", 11, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Password must not be null");
    cr_assert_eq(check("\0\0cassandra", 11, &e), CS_EUSER);
    cr_assert_str_eq(e.msg, "Authentication ID must not be null");
    cr_assert_eq(check("cassandra", 9, &e), CS_EUSER);                 /* no NUL at all */
    cr_assert_eq(check(NULL, -1, &e), CS_EUSER);                       /* null token */
    cr_assert_eq(check("", 0, &e), CS_EUSER);
}
