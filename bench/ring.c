/*
 * ring.c: a simulated cluster.  Each of N nodes takes `vnodes` random tokens
 * (seeded, so runs compare); a partition's replicas are the owners of the
 * first rf distinct nodes walking the ring clockwise from its token
 * (SimpleStrategy).  The load of a node is the sum of the weights (rows,
 * bytes or operations) of the partitions it replicates.
 */
#include "bench/bench.h"
#include "common/alloc.h"
#include <stdlib.h>
#include <string.h>

typedef struct { int64_t tok; int node; } vtok;

static int cmp_vtok(const void *a, const void *b)
{
    int64_t x = ((const vtok *)a)->tok, y = ((const vtok *)b)->tok;
    return x < y ? -1 : x > y;
}

static void finish(bench_ring_result *out, int nodes, int vnodes, int rf)
{
    out->nodes = nodes;
    out->vnodes = vnodes;
    out->rf = rf;
    double sum = 0, mx = 0, mn = -1;
    for (int i = 0; i < nodes; i++) {
        double l = out->node_load[i];
        sum += l;
        if (l > mx) mx = l;
        if (mn < 0 || l < mn) mn = l;
    }
    out->mean_load = sum / nodes;
    out->max_load = mx;
    out->min_load = mn < 0 ? 0 : mn;
    out->max_over_mean = out->mean_load > 0 ? mx / out->mean_load : 0;
}

int bench_ring_simulate(const int64_t *tokens, const double *weights, size_t n, int nodes, int vnodes,
                        int rf, uint64_t seed, bench_ring_result *out)
{
    return bench_ring_simulate2(tokens, weights, NULL, n, nodes, vnodes, rf, seed, out, NULL);
}

int bench_ring_simulate2(const int64_t *tokens, const double *weights, const double *weights2, size_t n,
                         int nodes, int vnodes, int rf, uint64_t seed, bench_ring_result *out,
                         bench_ring_result *out2)
{
    memset(out, 0, sizeof(*out));
    if (out2)
        memset(out2, 0, sizeof(*out2));
    if (nodes < 1 || vnodes < 1 || rf < 1)
        return -1;
    if (rf > nodes)
        rf = nodes;
    size_t nt = (size_t)nodes * (size_t)vnodes;
    vtok *ring = cs_malloc(nt * sizeof(*ring));
    out->node_load = cs_calloc((size_t)nodes, sizeof(double));
    if (out2)
        out2->node_load = cs_calloc((size_t)nodes, sizeof(double));
    if (!ring || !out->node_load || (out2 && !out2->node_load)) {
        cs_free(ring);
        cs_free(out->node_load);
        out->node_load = NULL;
        if (out2) {
            cs_free(out2->node_load);
            out2->node_load = NULL;
        }
        return -1;
    }
    bench_rng r;
    bench_rng_seed(&r, seed);
    for (size_t i = 0; i < nt; i++) {
        ring[i].tok = (int64_t)bench_rng_next(&r);
        ring[i].node = (int)(i % (size_t)nodes);
    }
    qsort(ring, nt, sizeof(*ring), cmp_vtok);
    int *seen = cs_calloc((size_t)nodes, sizeof(int));
    int stamp = 0;
    for (size_t i = 0; i < n; i++) {
        /* first vnode with token >= partition token (wrapping) owns it */
        size_t lo = 0, hi = nt;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (ring[mid].tok < tokens[i]) lo = mid + 1; else hi = mid;
        }
        stamp++;
        int placed = 0;
        for (size_t k = 0; k < nt && placed < rf; k++) {
            int node = ring[(lo + k) % nt].node;
            if (seen && seen[node] == stamp)
                continue;
            if (seen) seen[node] = stamp;
            out->node_load[node] += weights ? weights[i] : 1.0;
            if (out2)
                out2->node_load[node] += weights2 ? weights2[i] : 1.0;
            placed++;
        }
    }
    cs_free(seen);
    cs_free(ring);
    finish(out, nodes, vnodes, rf);
    if (out2)
        finish(out2, nodes, vnodes, rf);
    return 0;
}

void bench_ring_result_destroy(bench_ring_result *r)
{
    cs_free(r->node_load);
    r->node_load = NULL;
}
