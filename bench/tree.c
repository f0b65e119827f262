/*
 * tree.c: the rows of a partition, laid out as cassandra-stress lays them
 * out (PartitionIterator.MultiRowIterator).  The clustering columns form a
 * tree: under each node of level d-1 (the partition itself for level 0),
 * level d has as many values as column d's cluster distribution draws,
 * seeded by that parent, so each parent gets its own count.  A partition's
 * rows are the tree's leaves: with cluster fixed(a) then fixed(b), a * b
 * rows; with uniform(20..40) then uniform(1..4), the sum over 20..40 dates
 * of 1..4 each (at most 160).
 *
 * Leaves are numbered 0..rows-1 in clustering order, so a caller picks rows
 * by number.  When every level below 0 is fixed the number splits as mixed
 * radix; otherwise the nodes of the deepest varying level (the "groups")
 * are listed once per partition with their first leaf's number, and a
 * number is found by binary search.  Only the last partition's groups are
 * kept: an insert op asks for many rows of one partition in a row.
 *
 * Called by bench/gen.c; single-threaded (the runner's loop).
 */
#include "bench/work.h"
#include "common/alloc.h"
#include <string.h>

#define TREE_MAX_GROUPS (1u << 20)   /* deeper trees are cut (their later rows are never written) */
#define TREE_MAX_ROWS (1LL << 62)
#define GOLD 0x9E3779B97F4A7C15ULL

static int64_t sat_mul(int64_t a, int64_t b)
{
    return a > TREE_MAX_ROWS / b ? TREE_MAX_ROWS : a * b;
}

/* The seed of child `digit` of the node seeded `seed`. */
static uint64_t child_seed(uint64_t seed, int64_t digit)
{
    return bench_mix64(seed + (uint64_t)(digit + 1) * GOLD);
}

/* Values level d takes under the node seeded `seed` (at least 1). */
static int64_t level_count(const bench_tree *t, int d, uint64_t seed)
{
    const bench_dist *c = t->cluster[d];
    if (!c)
        return 1;
    int64_t n = bench_dist_sample_seeded(c, seed ^ ((uint64_t)(d + 1) * 0xC2B2AE3D27D4EB4FULL));
    return n < 1 ? 1 : n;
}

static bool level_fixed(const bench_tree *t, int d)
{
    return !t->cluster[d] || t->cluster[d]->kind == DIST_FIXED;
}

int bench_tree_init(bench_tree *t, bench_dist *const *cluster, int levels)
{
    memset(t, 0, sizeof(*t));
    if (levels > 64)
        return -1;
    t->levels = levels;
    t->cluster = cs_calloc((size_t)levels + 1, sizeof(bench_dist *));
    t->fixed_below = cs_calloc((size_t)levels + 1, sizeof(int64_t));
    if (!t->cluster || !t->fixed_below)
        return -1;
    for (int d = 0; d < levels; d++)
        t->cluster[d] = cluster[d];
    t->var_depth = levels;
    while (t->var_depth > 0 && level_fixed(t, t->var_depth - 1))
        t->var_depth--;
    t->fixed_below[levels] = 1;
    for (int d = levels - 1; d >= t->var_depth; d--)
        t->fixed_below[d] = sat_mul(t->fixed_below[d + 1], level_count(t, d, 0));
    return 0;
}

void bench_tree_destroy(bench_tree *t)
{
    cs_free(t->cluster);
    cs_free(t->fixed_below);
    cs_free(t->start);
    cs_free(t->path);
    cs_free(t->gseed);
    cs_free(t->gcount);
    memset(t, 0, sizeof(*t));
}

static uint64_t root_seed(uint64_t pk_hash)
{
    return bench_mix64(pk_hash ^ 0x7EE5EEDULL);
}

/* List the nodes of level var_depth - 1 under the node seeded `seed` at
 * level d, path[0..d) being the digits above it. */
static void list_groups(bench_tree *t, int d, uint64_t seed, int32_t *path)
{
    int last = t->var_depth - 1, plen = last;
    if (t->n_groups >= TREE_MAX_GROUPS)
        return;
    if (d == last) {
        if (t->n_groups == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 64;
            t->start = cs_realloc(t->start, (nc + 1) * sizeof(int64_t));
            t->path = cs_realloc(t->path, nc * (size_t)(plen ? plen : 1) * sizeof(int32_t));
            t->gseed = cs_realloc(t->gseed, nc * sizeof(uint64_t));
            t->gcount = cs_realloc(t->gcount, nc * sizeof(int64_t));
            t->cap = nc;
        }
        size_t g = t->n_groups++;
        memcpy(t->path + g * (size_t)plen, path, (size_t)plen * sizeof(int32_t));
        t->gseed[g] = seed;
        t->gcount[g] = level_count(t, d, seed);
        t->start[g] = t->rows;
        int64_t leaves = sat_mul(t->gcount[g], t->fixed_below[last + 1]);
        t->rows = t->rows > TREE_MAX_ROWS - leaves ? TREE_MAX_ROWS : t->rows + leaves;
        t->start[g + 1] = t->rows;
        return;
    }
    int64_t c = level_count(t, d, seed);
    for (int64_t i = 0; i < c && t->n_groups < TREE_MAX_GROUPS; i++) {
        path[d] = (int32_t)i;
        list_groups(t, d + 1, child_seed(seed, i), path);
    }
}

/* Make t's cached layout the one of partition pk_hash. */
static void tree_load(bench_tree *t, uint64_t pk_hash)
{
    if (t->valid && t->pk_hash == pk_hash)
        return;
    t->pk_hash = pk_hash;
    t->valid = true;
    t->n_groups = 0;
    t->rows = 0;
    uint64_t root = root_seed(pk_hash);
    if (t->var_depth <= 1) {
        t->c0 = t->levels ? level_count(t, 0, root) : 1;
        t->rows = t->levels ? sat_mul(t->c0, t->fixed_below[1]) : 1;
        return;
    }
    int32_t path[64];
    list_groups(t, 0, root, path);
}

int64_t bench_tree_rows(bench_tree *t, uint64_t pk_hash)
{
    tree_load(t, pk_hash);
    return t->rows;
}

void bench_tree_leaf(bench_tree *t, uint64_t pk_hash, int64_t leaf, uint64_t *node_seed, int64_t *digit)
{
    tree_load(t, pk_hash);
    if (t->levels == 0)
        return;
    if (leaf < 0 || leaf >= t->rows)
        leaf = 0;
    uint64_t seed = root_seed(pk_hash);
    int d = 0;
    int64_t rest = leaf;
    if (t->var_depth >= 2) {
        /* the group holding the leaf: the last start <= leaf */
        size_t lo = 0, hi = t->n_groups;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (t->start[mid] <= leaf) lo = mid; else hi = mid;
        }
        int plen = t->var_depth - 1;
        for (; d < plen; d++) {
            digit[d] = t->path[lo * (size_t)plen + (size_t)d];
            node_seed[d] = seed = child_seed(seed, digit[d]);
        }
        rest = leaf - t->start[lo];
    }
    /* the rest in mixed radix: level d's digit counts fixed_below[d + 1] leaves */
    for (; d < t->levels; d++) {
        int64_t below = t->fixed_below[d + 1];
        digit[d] = rest / below;
        rest %= below;
        node_seed[d] = seed = child_seed(seed, digit[d]);
    }
}
