/*
 * loop.c: the native protocol listener: bind, accept, shutdown, and the
 * schema-change fan-out to registered connections.  Runs on the request loop
 * thread (see conn.h).
 */
#include "server/conn.h"

#include <netdb.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"

void srv_init(srv *s, uv_loop_t *loop, const config *cfg, st_engine *eng, cql_ctx *cql)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->cfg = cfg;
    s->eng = eng;
    s->cql = cql;
}

static void on_connection(uv_stream_t *server, int status)
{
    srv *s = server->data;
    if (status < 0) {
        CS_WARN("accept failed: %s", uv_strerror(status));
        return;
    }
    if (s->stopping)
        return;
    conn__accept(s);
}

/*
 * Resolve addr (numeric IPv4/IPv6, or a host name such as cassandra.yaml's
 * usual "localhost", resolved once at startup, IPv4 first) into ss.
 */
static int resolve(const char *addr, int port, struct sockaddr_storage *ss)
{
    if (uv_ip4_addr(addr, port, (struct sockaddr_in *)ss) == 0)
        return 0;
    if (uv_ip6_addr(addr, port, (struct sockaddr_in6 *)ss) == 0)
        return 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res)
        return UV_EINVAL;
    const struct addrinfo *pick = res;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
    memset(ss, 0, sizeof *ss);
    memcpy(ss, pick->ai_addr, pick->ai_addrlen);
    if (pick->ai_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return 0;
}

int srv_listen(srv *s, const char *addr, int port)
{
    struct sockaddr_storage ss;
    int rc = resolve(addr, port, &ss);
    if (rc != 0)
        return rc;
    uv_tcp_init(s->loop, &s->tcp);
    s->tcp.data = s;
    s->listening = true;
    rc = uv_tcp_bind(&s->tcp, (const struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->tcp, 511, on_connection);
    if (rc != 0)
        return rc;
    struct sockaddr_storage bound;
    int len = sizeof bound;
    if (uv_tcp_getsockname(&s->tcp, (struct sockaddr *)&bound, &len) == 0) {
        if (bound.ss_family == AF_INET6) {
            s->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
            uv_ip6_name((struct sockaddr_in6 *)&bound, s->addr, sizeof s->addr);
        } else {
            s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
            uv_ip4_name((struct sockaddr_in *)&bound, s->addr, sizeof s->addr);
        }
    }
    return 0;
}

void srv_close(srv *s)
{
    s->stopping = true;
    if (s->listening) {
        s->listening = false;
        uv_close((uv_handle_t *)&s->tcp, NULL);
    }
    conn__srv_close(s);
    for (conn *c = s->conns; c; c = conn__next(c))
        conn__close(c, false);
}

void srv_push_schema_change(srv *s, const cql_schema_change *ch)
{
    for (conn *c = s->conns; c; c = conn__next(c))
        conn__push_schema_change(c, ch);
}
