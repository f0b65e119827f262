/*
 * btree.c: an in-memory B+tree of item pointers, used by memtables for
 * partitions (ordered by token, key) and, inside partitions with many rows,
 * rows (ordered by clustering bytes).  Items live in leaves; inner nodes
 * hold the first item of each child but the first as separators.  Leaves are
 * linked both ways for forward and reversed scans.  No deletion: a memtable
 * only grows until it is flushed and freed whole.  Not thread-safe (the
 * memtable lock covers it).
 *
 * Node layout: a header and keys[BT_MAX], then (hinted trees) hk[BT_MAX],
 * then (inner nodes only) child[BT_MAX].  Leaves carry no child array, so a
 * leaf is 288 bytes (544 hinted) instead of the inner node's 544 (800).
 *
 * Optional order hints (st__btree_init_hint): a 64-bit key per item whose
 * unsigned order agrees with cmp (hint(a) < hint(b) implies a < b) is kept
 * next to each item pointer, so a descent compares inline integers and only
 * dereferences items on equal hints.  For memtable partitions the hint is
 * the token, which removes a cache miss per comparison.
 *
 * Get-or-insert in one descent: st__btree_find returns the item or, when
 * absent, the leaf position where it belongs; st__btree_insert_at inserts
 * there directly when the leaf has room (no second descent, no node
 * reservation) and falls back to a full insert when the leaf must split.
 */
#include "storage/storage_int.h"
#include "common/alloc.h"
#include "common/err.h"

#include <stdint.h>
#include <string.h>

#define BT_MAX 32

struct st__bnode {
    bool leaf;
    int n;                              /* items (leaf) or children (inner) */
    uint32_t splits;                    /* leaf: times it split (its key range shrank) */
    st__bnode *prev, *next;             /* leaf links */
    void *keys[BT_MAX];                 /* leaf: items; inner: keys[i] = first item of child i (i>0) */
    /* then uint64_t hk[BT_MAX] (hinted trees), then st__bnode *child[BT_MAX] (inner nodes) */
};

#define HK(t, n) ((uint64_t *)((n) + 1))
#define CHILD(t, n) ((st__bnode **)((char *)((n) + 1) + ((t)->hint ? BT_MAX * sizeof(uint64_t) : 0)))

void st__btree_init(st__btree *t, st__btree_cmp cmp)
{
    memset(t, 0, sizeof *t);
    t->cmp = cmp;
}

void st__btree_init_hint(st__btree *t, st__btree_cmp cmp, st__btree_hint hint)
{
    st__btree_init(t, cmp);
    t->hint = hint;
}

static size_t node_size(const st__btree *t, bool leaf)
{
    return sizeof(st__bnode) + (t->hint ? BT_MAX * sizeof(uint64_t) : 0) + (leaf ? 0 : BT_MAX * sizeof(void *));
}

static uint64_t key_hint(const st__btree *t, const void *key)
{
    return t->hint ? t->hint(key) : 0;
}

/* Compare item i of node n with key (whose hint is kh). */
static inline int kcmp(const st__btree *t, const st__bnode *n, int i, const void *key, uint64_t kh)
{
    if (t->hint && HK(t, n)[i] != kh) return HK(t, n)[i] < kh ? -1 : 1;
    return t->cmp(n->keys[i], key);
}

/* Move count key slots (and their hints) inside or between nodes. */
static inline void kmove(const st__btree *t, st__bnode *dn, int di, const st__bnode *sn, int si, int count)
{
    if (count <= 0) return;
    memmove(&dn->keys[di], &sn->keys[si], (size_t)count * sizeof(void *));
    if (t->hint) memmove(&HK(t, dn)[di], &HK(t, sn)[si], (size_t)count * sizeof(uint64_t));
}

static void node_free(const st__btree *t, st__bnode *n, void (*free_item)(void *))
{
    if (!n) return;
    if (n->leaf) {
        if (free_item) for (int i = 0; i < n->n; i++) free_item(n->keys[i]);
    } else {
        for (int i = 0; i < n->n; i++) node_free(t, CHILD(t, n)[i], free_item);
    }
    cs_free(n);
}

/* Arena trees: visit the items only (the nodes die with the arena). */
static void node_visit(const st__btree *t, st__bnode *n, void (*free_item)(void *))
{
    if (!n || !free_item) return;
    if (n->leaf) {
        for (int i = 0; i < n->n; i++) free_item(n->keys[i]);
    } else {
        for (int i = 0; i < n->n; i++) node_visit(t, CHILD(t, n)[i], free_item);
    }
}

void st__btree_destroy(st__btree *t, void (*free_item)(void *))
{
    if (t->arena) {
        node_visit(t, t->root, free_item);
    } else {
        for (int i = 0; i < t->n_spare; i++) cs_free(t->spare[i]);
        node_free(t, t->root, free_item);
    }
    t->n_spare = 0;
    t->root = NULL;
    t->count = 0;
    t->mem = 0;
}

/* First i in [lo, hi) with h[i] >= kh (hi if none): a branchless binary
 * search (conditional moves), since the outcome of each step is a coin toss
 * that a branch predictor cannot learn. */
static inline int hint_lower(const uint64_t *h, int lo, int hi, uint64_t kh)
{
    if (lo >= hi) return lo;
    const uint64_t *b = h + lo;
    int len = hi - lo;
    while (len > 1) {
        int half = len >> 1;
        b = b[half] < kh ? b + half : b;
        len -= half;
    }
    return (int)(b - h) + (*b < kh);
}

/* Index of the child of inner node n to descend into for key. */
static int inner_slot(const st__btree *t, const st__bnode *n, const void *key, uint64_t kh)
{
    if (t->hint) {
        /* last i >= 1 with keys[i] <= key: those with a smaller hint, then
         * any with an equal hint that compare <= key */
        const uint64_t *h = HK(t, n);
        int i = hint_lower(h, 1, n->n, kh);
        while (i < n->n && h[i] == kh && t->cmp(n->keys[i], key) <= 0) i++;
        return i - 1;
    }
    int lo = 1, hi = n->n;          /* find last i with keys[i] <= key */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (kcmp(t, n, mid, key, kh) <= 0) lo = mid + 1; else hi = mid;
    }
    return lo - 1;
}

/* First index in leaf with item >= key (> if strict). */
static int leaf_lower(const st__btree *t, const st__bnode *n, const void *key, uint64_t kh, bool strict)
{
    if (t->hint) {
        const uint64_t *h = HK(t, n);
        int i = hint_lower(h, 0, n->n, kh);
        while (i < n->n && h[i] == kh) {
            int c = t->cmp(n->keys[i], key);
            if (c > 0 || (!strict && c == 0)) break;
            i++;
        }
        return i;
    }
    int lo = 0, hi = n->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = kcmp(t, n, mid, key, kh);
        if (c < 0 || (strict && c == 0)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Ask for every cache line a node's search will read (header and the
 * hints, or the item pointers), so they load in parallel instead of one
 * dependent miss per binary search step: a big memtable's lower levels are
 * not in cache. */
static inline void node_prefetch(const st__btree *t, const st__bnode *n)
{
    uintptr_t q = (uintptr_t)(t->hint ? (const void *)HK(t, n) : (const void *)n->keys) & ~(uintptr_t)63;
    uintptr_t e = (uintptr_t)(t->hint ? (const void *)(HK(t, n) + BT_MAX) : (const void *)(n->keys + BT_MAX));
    __builtin_prefetch(n);
    for (; q < e; q += 64) __builtin_prefetch((const void *)q);
}

static st__bnode *find_leaf(const st__btree *t, const void *key, uint64_t kh)
{
    st__bnode *n = t->root;
    while (n && !n->leaf) {
        n = CHILD(t, n)[inner_slot(t, n, key, kh)];
        node_prefetch(t, n);
    }
    return n;
}

/* A hint for up to ST__BTREE_PREFETCH_MAX keys about to be looked up or
 * inserted: descends to their leaves together, one level at a time, each
 * node prefetched one step before it is searched, so the misses of the
 * keys' paths overlap instead of following one another (one descent's
 * misses are a chain: each node's address is in its parent).  Then the
 * leaves' item pointers (an insertion shifts them) and, where a key's
 * hint matches an item, that item (an overwrite compares it).  Changes
 * nothing. */
void st__btree_prefetch_many(const st__btree *t, const void *const *keys, int n, st__bleaf *leaves)
{
    if (!t->root || n <= 0) return;
    if (n > ST__BTREE_PREFETCH_MAX) n = ST__BTREE_PREFETCH_MAX;
    const st__bnode *nd[ST__BTREE_PREFETCH_MAX];
    uint64_t kh[ST__BTREE_PREFETCH_MAX];
    for (int i = 0; i < n; i++) {
        nd[i] = t->root;
        kh[i] = key_hint(t, keys[i]);
    }
    while (!nd[0]->leaf) {                /* balanced: every path is as deep */
        for (int i = 0; i < n; i++) {
            nd[i] = CHILD(t, nd[i])[inner_slot(t, nd[i], keys[i], kh[i])];
            node_prefetch(t, nd[i]);
        }
    }
    for (int i = 0; i < n; i++) {
        for (uintptr_t q = (uintptr_t)nd[i]->keys & ~(uintptr_t)63; q < (uintptr_t)(nd[i]->keys + BT_MAX); q += 64)
            __builtin_prefetch((const void *)q, 1);
        if (leaves) leaves[i] = (st__bleaf){ nd[i], nd[i]->splits };
    }
    if (!t->hint) return;
    for (int i = 0; i < n; i++) {
        int j = hint_lower(HK(t, nd[i]), 0, nd[i]->n, kh[i]);
        if (j < nd[i]->n && HK(t, nd[i])[j] == kh[i]) __builtin_prefetch(nd[i]->keys[j]);
    }
}

void *st__btree_get(const st__btree *t, const void *key)
{
    uint64_t kh = key_hint(t, key);
    st__bnode *n = find_leaf(t, key, kh);
    if (!n) return NULL;
    int i = leaf_lower(t, n, key, kh, false);
    return i < n->n && kcmp(t, n, i, key, kh) == 0 ? n->keys[i] : NULL;
}

void *st__btree_find(const st__btree *t, const void *key, st__bpos *pos)
{
    return st__btree_find_from(t, key, NULL, pos);
}

/* A leaf's key range only shrinks, when it splits (items are never
 * removed, and a separator is the first item its leaf had when made), so
 * a leaf that has not split since a descent chose it for key still is the
 * one a descent would choose. */
bool st__bleaf_fresh(const st__bleaf *hint)
{
    return hint && hint->leaf && hint->leaf->splits == hint->splits;
}

void *st__btree_find_from(const st__btree *t, const void *key, const st__bleaf *hint, st__bpos *pos)
{
    uint64_t kh = key_hint(t, key);
    st__bnode *n = st__bleaf_fresh(hint) ? (st__bnode *)hint->leaf : find_leaf(t, key, kh);
    pos->leaf = n; pos->idx = 0; pos->kh = kh;
    if (!n) return NULL;
    if (t->hint) {
        /* an insert at pos will shift the item pointers too */
        for (uintptr_t q = (uintptr_t)n->keys & ~(uintptr_t)63; q < (uintptr_t)(n->keys + BT_MAX); q += 64)
            __builtin_prefetch((const void *)q, 1);
    }
    int i = leaf_lower(t, n, key, kh, false);
    pos->idx = i;
    return i < n->n && kcmp(t, n, i, key, kh) == 0 ? n->keys[i] : NULL;
}

/* Nodes come from the spare pool filled before each insert, so a split
 * can never fail after the tree has started to change.  A spare's `leaf`
 * field tells its size (leaves are smaller) until it is handed out. */
static st__bnode *node_new(st__btree *t, bool leaf)
{
    for (int i = t->n_spare - 1; i >= 0; i--) {
        st__bnode *n = t->spare[i];
        if (n->leaf != leaf) continue;
        t->spare[i] = t->spare[--t->n_spare];
        size_t sz = node_size(t, leaf);
        memset(n, 0, sz);
        n->leaf = leaf;
        t->mem += sz;
        return n;
    }
    return NULL;
}

/* An insert splits at most one leaf and one node per inner level, plus a
 * new root: one spare leaf and height + 1 inner nodes. */
static int reserve(st__btree *t)
{
    int need_leaf = 1, need_inner = t->height + 1;
    for (int i = 0; i < t->n_spare; i++) {
        if (t->spare[i]->leaf) need_leaf--; else need_inner--;
    }
    if (t->n_spare + (need_leaf > 0 ? need_leaf : 0) + (need_inner > 0 ? need_inner : 0) >
        (int)(sizeof t->spare / sizeof t->spare[0]))
        return CS_ENOMEM;
    for (int k = 0; k < 2; k++) {
        bool leaf = k == 0;
        for (int left = leaf ? need_leaf : need_inner; left > 0; left--) {
            size_t sz = node_size(t, leaf);
            st__bnode *n = t->arena ? cs_arena_alloc(t->arena, sz) : cs_malloc(sz);
            if (!n) return CS_ENOMEM;
            n->leaf = leaf;
            t->spare[t->n_spare++] = n;
        }
    }
    return 0;
}

/* Recursive insert (kh: the item's hint); on split returns the new right
 * sibling in *split. */
static int ins(st__btree *t, st__bnode *n, void *item, uint64_t kh, st__bnode **split)
{
    *split = NULL;
    if (n->leaf) {
        int i = leaf_lower(t, n, item, kh, false);
        if (n->n < BT_MAX) {
            kmove(t, n, i + 1, n, i, n->n - i);
            n->keys[i] = item;
            if (t->hint) HK(t, n)[i] = kh;
            n->n++;
            return 0;
        }
        st__bnode *r = node_new(t, true);
        if (!r) return CS_ENOMEM;
        n->splits++;
        void *tmp[BT_MAX + 1];
        uint64_t th[BT_MAX + 1];
        memcpy(tmp, n->keys, (size_t)i * sizeof(void *));
        tmp[i] = item;
        memcpy(&tmp[i + 1], &n->keys[i], (size_t)(BT_MAX - i) * sizeof(void *));
        if (t->hint) {
            memcpy(th, HK(t, n), (size_t)i * sizeof(uint64_t));
            th[i] = kh;
            memcpy(&th[i + 1], &HK(t, n)[i], (size_t)(BT_MAX - i) * sizeof(uint64_t));
        }
        int left = (BT_MAX + 1) / 2;
        /* Appending at the right end (sequential inserts): keep the left full. */
        if (i == BT_MAX && !n->next) left = BT_MAX;
        memcpy(n->keys, tmp, (size_t)left * sizeof(void *));
        n->n = left;
        memcpy(r->keys, &tmp[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
        if (t->hint) {
            memcpy(HK(t, n), th, (size_t)left * sizeof(uint64_t));
            memcpy(HK(t, r), &th[left], (size_t)(BT_MAX + 1 - left) * sizeof(uint64_t));
        }
        r->n = BT_MAX + 1 - left;
        r->next = n->next;
        r->prev = n;
        if (n->next) n->next->prev = r;
        n->next = r;
        *split = r;
        return 0;
    }
    int ci = inner_slot(t, n, item, kh);
    st__bnode *cs;
    int rc = ins(t, CHILD(t, n)[ci], item, kh, &cs);
    if (rc || !cs) return rc;
    /* First item of the new child. */
    st__bnode *f = cs;
    while (!f->leaf) f = CHILD(t, f)[0];
    void *sep = f->keys[0];
    uint64_t sh = t->hint ? HK(t, f)[0] : 0;
    if (n->n < BT_MAX) {
        kmove(t, n, ci + 2, n, ci + 1, n->n - ci - 1);
        memmove(&CHILD(t, n)[ci + 2], &CHILD(t, n)[ci + 1], (size_t)(n->n - ci - 1) * sizeof(void *));
        n->keys[ci + 1] = sep;
        if (t->hint) HK(t, n)[ci + 1] = sh;
        CHILD(t, n)[ci + 1] = cs;
        n->n++;
        return 0;
    }
    st__bnode *r = node_new(t, false);
    if (!r) return CS_ENOMEM;   /* cannot happen: reserve() ran first */
    void *tk[BT_MAX + 1];
    uint64_t th[BT_MAX + 1];
    st__bnode *tc[BT_MAX + 1];
    memcpy(tk, n->keys, (size_t)(ci + 1) * sizeof(void *));
    memcpy(tc, CHILD(t, n), (size_t)(ci + 1) * sizeof(void *));
    tk[ci + 1] = sep; tc[ci + 1] = cs;
    memcpy(&tk[ci + 2], &n->keys[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(void *));
    memcpy(&tc[ci + 2], &CHILD(t, n)[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(void *));
    if (t->hint) {
        memcpy(th, HK(t, n), (size_t)(ci + 1) * sizeof(uint64_t));
        th[ci + 1] = sh;
        memcpy(&th[ci + 2], &HK(t, n)[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(uint64_t));
    }
    int left = (BT_MAX + 1) / 2;
    if (ci + 1 == BT_MAX) left = BT_MAX;
    memcpy(n->keys, tk, (size_t)left * sizeof(void *));
    memcpy(CHILD(t, n), tc, (size_t)left * sizeof(void *));
    n->n = left;
    memcpy(r->keys, &tk[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
    memcpy(CHILD(t, r), &tc[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
    if (t->hint) {
        memcpy(HK(t, n), th, (size_t)left * sizeof(uint64_t));
        memcpy(HK(t, r), &th[left], (size_t)(BT_MAX + 1 - left) * sizeof(uint64_t));
    }
    r->n = BT_MAX + 1 - left;
    *split = r;
    return 0;
}

int st__btree_insert(st__btree *t, void *item)
{
    if (reserve(t)) return CS_ENOMEM;
    if (!t->root) {
        t->root = node_new(t, true);
        t->height = 1;
    }
    st__bnode *split;
    int rc = ins(t, t->root, item, key_hint(t, item), &split);
    if (rc) return rc;
    if (split) {
        st__bnode *nr = node_new(t, false);
        if (!nr) return CS_ENOMEM;
        st__bnode *f = split;
        while (!f->leaf) f = CHILD(t, f)[0];
        CHILD(t, nr)[0] = t->root;
        CHILD(t, nr)[1] = split;
        nr->keys[1] = f->keys[0];
        if (t->hint) HK(t, nr)[1] = HK(t, f)[0];
        nr->n = 2;
        t->root = nr;
        t->height++;
    }
    t->count++;
    return 0;
}

int st__btree_insert_at(st__btree *t, const st__bpos *pos, void *item)
{
    st__bnode *n = pos->leaf;
    if (!n || n->n >= BT_MAX) return st__btree_insert(t, item);
    /* The descent that found pos chose this leaf for the item, so no
     * separator above changes (pos->idx is 0 only in the leftmost leaf). */
    int i = pos->idx;
    kmove(t, n, i + 1, n, i, n->n - i);
    n->keys[i] = item;
    if (t->hint) HK(t, n)[i] = pos->kh;
    n->n++;
    t->count++;
    return 0;
}

void st__btree_seek(const st__btree *t, const void *key, bool strict, st__biter *it)
{
    it->leaf = NULL; it->idx = 0;
    st__bnode *n = t->root;
    if (!n) return;
    if (!key) {
        while (!n->leaf) n = CHILD(t, n)[0];
        it->leaf = n; it->idx = 0;
    } else {
        uint64_t kh = key_hint(t, key);
        n = find_leaf(t, key, kh);
        it->leaf = n;
        it->idx = leaf_lower(t, n, key, kh, strict);
    }
    while (it->leaf && it->idx >= it->leaf->n) { it->leaf = it->leaf->next; it->idx = 0; }
}

void st__btree_seek_rev(const st__btree *t, const void *key, bool strict, st__biter *it)
{
    it->leaf = NULL; it->idx = 0;
    st__bnode *n = t->root;
    if (!n) return;
    if (!key) {
        while (!n->leaf) n = CHILD(t, n)[n->n - 1];
        it->leaf = n; it->idx = n->n - 1;
    } else {
        uint64_t kh = key_hint(t, key);
        n = find_leaf(t, key, kh);
        /* last item <= key: first item > key, minus one (strict: first >= key, minus one). */
        it->leaf = n;
        it->idx = leaf_lower(t, n, key, kh, !strict) - 1;
    }
    while (it->leaf && it->idx < 0) {
        it->leaf = it->leaf->prev;
        it->idx = it->leaf ? it->leaf->n - 1 : 0;
    }
    /* A later leaf may hold nothing <= key, but find_leaf picks the leaf whose
     * range contains key, so items after it are all greater. */
}

void *st__biter_get(const st__biter *it)
{
    return it->leaf ? it->leaf->keys[it->idx] : NULL;
}

void st__biter_next(st__biter *it)
{
    if (!it->leaf) return;
    if (++it->idx >= it->leaf->n) { it->leaf = it->leaf->next; it->idx = 0; }
}

void st__biter_prev(st__biter *it)
{
    if (!it->leaf) return;
    if (--it->idx < 0) {
        it->leaf = it->leaf->prev;
        it->idx = it->leaf ? it->leaf->n - 1 : 0;
    }
}

/* Check order across the leaf chain and equal leaf depth. */
static int depth_check(const st__btree *t, const st__bnode *n, int d, int *leaf_d)
{
    if (n->leaf) {
        if (*leaf_d < 0) *leaf_d = d;
        return *leaf_d == d ? 0 : -1;
    }
    for (int i = 0; i < n->n; i++)
        if (depth_check(t, CHILD(t, n)[i], d + 1, leaf_d)) return -1;
    return 0;
}

int st__btree_check(const st__btree *t)
{
    if (!t->root) return t->count == 0 ? 0 : -1;
    int ld = -1;
    if (depth_check(t, t->root, 0, &ld)) return -1;
    st__biter it;
    st__btree_seek(t, NULL, false, &it);
    void *prev = NULL;
    size_t n = 0;
    for (void *x; (x = st__biter_get(&it)) != NULL; st__biter_next(&it)) {
        if (prev && t->cmp(prev, x) >= 0) return -1;
        prev = x;
        n++;
    }
    return n == t->count ? 0 : -1;
}
