/*
 * ring_discover.c: the cluster's token ring as the drivers learn it, for
 * token-aware routing: system.local (this node's tokens) and system.peers
 * (the others' rpc_address and tokens).  On a single node every token maps
 * to the contact host.
 */
#include "bench/route.h"
#include "common/alloc.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static int cmp_tok(const void *a, const void *b)
{
    int64_t x = ((const bench_ring_tok *)a)->token, y = ((const bench_ring_tok *)b)->token;
    return x < y ? -1 : x > y;
}

/* Append every token of a set<text> value to the ring for host h. */
static void add_tokens(bench_route *rt, const uint8_t *v, int32_t len, int h)
{
    if (len < 4)
        return;
    cs_rd r;
    cs_rd_init(&r, v, (size_t)len);
    int32_t n = (int32_t)cs_rd_u32(&r);
    for (int32_t i = 0; i < n && !r.err; i++) {
        uint32_t l = cs_rd_u32(&r);
        const uint8_t *p = cs_rd_take(&r, l);
        if (!p || l > 30)
            return;
        char tmp[32];
        memcpy(tmp, p, l);
        tmp[l] = 0;
        rt->ring = cs_realloc(rt->ring, sizeof(bench_ring_tok) * (size_t)(rt->n_ring + 1));
        rt->ring[rt->n_ring].token = strtoll(tmp, NULL, 10);
        rt->ring[rt->n_ring].host = h;
        rt->n_ring++;
    }
}

static int add_host(bench_route *rt, const char *addr)
{
    for (int i = 0; i < rt->n_hosts; i++)
        if (!strcmp(rt->hosts[i], addr))
            return i;
    rt->hosts = cs_realloc(rt->hosts, sizeof(char *) * (size_t)(rt->n_hosts + 1));
    rt->hosts[rt->n_hosts] = cs_strdup(addr);
    return rt->n_hosts++;
}

int bench_route_discover(bench_route *rt, bc_sync *conn, const char *contact)
{
    memset(rt, 0, sizeof(*rt));
    add_host(rt, contact);
    bc_result r;
    if (bc_sync_query(conn, "SELECT tokens FROM system.local WHERE key = 'local'", 0, NULL, -1, &r) == 0 &&
        r.n_rows == 1 && r.n_cols == 1)
        add_tokens(rt, r.vals[0], r.lens[0], 0);
    bc_result_destroy(&r);
    if (bc_sync_query(conn, "SELECT peer, rpc_address, tokens FROM system.peers", 0, NULL, -1, &r) == 0) {
        for (int i = 0; i < r.n_rows; i++) {
            size_t b = (size_t)i * (size_t)r.n_cols;
            const uint8_t *a = r.lens[b + 1] == 4 || r.lens[b + 1] == 16 ? r.vals[b + 1] : r.vals[b];
            int32_t al = r.lens[b + 1] == 4 || r.lens[b + 1] == 16 ? r.lens[b + 1] : r.lens[b];
            char addr[64];
            if (!a || !inet_ntop(al == 4 ? AF_INET : AF_INET6, a, addr, sizeof(addr)))
                continue;
            add_tokens(rt, r.vals[b + 2], r.lens[b + 2], add_host(rt, addr));
        }
    }
    bc_result_destroy(&r);
    if (rt->n_ring)
        qsort(rt->ring, (size_t)rt->n_ring, sizeof(bench_ring_tok), cmp_tok);
    return 0;
}

int bench_route_owner(const bench_route *rt, int64_t token)
{
    if (!rt->n_ring)
        return 0;
    /* the first ring token >= the partition's token owns it, wrapping */
    int lo = 0, hi = rt->n_ring;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (rt->ring[mid].token < token) lo = mid + 1; else hi = mid;
    }
    return rt->ring[lo == rt->n_ring ? 0 : lo].host;
}

void bench_route_destroy(bench_route *rt)
{
    for (int i = 0; i < rt->n_hosts; i++)
        cs_free(rt->hosts[i]);
    cs_free(rt->hosts);
    cs_free(rt->ring);
    memset(rt, 0, sizeof(*rt));
}
