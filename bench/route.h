/*
 * route.h: token-aware routing for cassette-bench (ring_discover.c).
 */
#ifndef CS_BENCH_ROUTE_H
#define CS_BENCH_ROUTE_H

#include "bench/client.h"

typedef struct bench_ring_tok { int64_t token; int host; } bench_ring_tok;

typedef struct bench_route {
    char **hosts; int n_hosts;            /* hosts[0] is the contact point */
    bench_ring_tok *ring; int n_ring;     /* sorted by token */
} bench_route;

/* Read the ring through conn (connected to contact).  Always succeeds: with
 * no token information every op goes to the contact host. */
int bench_route_discover(bench_route *rt, bc_sync *conn, const char *contact);
/* Index into hosts of the primary replica for token. */
int bench_route_owner(const bench_route *rt, int64_t token);
void bench_route_destroy(bench_route *rt);

#endif
