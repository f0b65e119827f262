/*
 * btree.c: an in-memory B+tree of item pointers, used by memtables for
 * partitions (ordered by token, key) and, inside each partition, rows
 * (ordered by clustering bytes).  Items live in leaves; inner nodes hold the
 * first item of each child but the first as separators.  Leaves are linked
 * both ways for forward and reversed scans.  No deletion: a memtable only
 * grows until it is flushed and freed whole.  Not thread-safe (the memtable
 * lock covers it).
 *
 * Optional order hints (st__btree_init_hint): a 64-bit key per item whose
 * unsigned order agrees with cmp (hint(a) < hint(b) implies a < b) is kept
 * next to each item pointer, so a descent compares inline integers and only
 * dereferences items on equal hints.  For memtable partitions the hint is
 * the token, which removes a cache miss per comparison.
 */
#include "storage/storage_int.h"
#include "common/alloc.h"
#include "common/err.h"

#include <string.h>

#define BT_MAX 32

struct st__bnode {
    bool leaf;
    int n;                              /* items (leaf) or children (inner) */
    void *keys[BT_MAX];                 /* leaf: items; inner: keys[i] = first item of child i (i>0) */
    st__bnode *child[BT_MAX];           /* inner only */
    st__bnode *prev, *next;             /* leaf links */
    uint64_t hk[];                      /* hints of keys[] (only in hinted trees) */
};

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

static size_t node_size(const st__btree *t)
{
    return sizeof(st__bnode) + (t->hint ? BT_MAX * sizeof(uint64_t) : 0);
}

static uint64_t key_hint(const st__btree *t, const void *key)
{
    return t->hint ? t->hint(key) : 0;
}

/* Compare item i of node n with key (whose hint is kh). */
static inline int kcmp(const st__btree *t, const st__bnode *n, int i, const void *key, uint64_t kh)
{
    if (t->hint && n->hk[i] != kh) return n->hk[i] < kh ? -1 : 1;
    return t->cmp(n->keys[i], key);
}

/* Move count key slots (and their hints) inside or between nodes. */
static inline void kmove(const st__btree *t, st__bnode *dn, int di, const st__bnode *sn, int si, int count)
{
    if (count <= 0) return;
    memmove(&dn->keys[di], &sn->keys[si], (size_t)count * sizeof(void *));
    if (t->hint) memmove(&dn->hk[di], &sn->hk[si], (size_t)count * sizeof(uint64_t));
}

static void node_free(st__bnode *n, void (*free_item)(void *))
{
    if (!n) return;
    if (n->leaf) {
        if (free_item) for (int i = 0; i < n->n; i++) free_item(n->keys[i]);
    } else {
        for (int i = 0; i < n->n; i++) node_free(n->child[i], free_item);
    }
    cs_free(n);
}

/* Arena trees: visit the items only (the nodes die with the arena). */
static void node_visit(st__bnode *n, void (*free_item)(void *))
{
    if (!n || !free_item) return;
    if (n->leaf) {
        for (int i = 0; i < n->n; i++) free_item(n->keys[i]);
    } else {
        for (int i = 0; i < n->n; i++) node_visit(n->child[i], free_item);
    }
}

void st__btree_destroy(st__btree *t, void (*free_item)(void *))
{
    if (t->arena) {
        node_visit(t->root, free_item);
    } else {
        for (int i = 0; i < t->n_spare; i++) cs_free(t->spare[i]);
        node_free(t->root, free_item);
    }
    t->n_spare = 0;
    t->root = NULL;
    t->count = 0;
    t->mem = 0;
}

/* Index of the child of inner node n to descend into for key. */
static int inner_slot(const st__btree *t, const st__bnode *n, const void *key, uint64_t kh)
{
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
    int lo = 0, hi = n->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = kcmp(t, n, mid, key, kh);
        if (c < 0 || (strict && c == 0)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static st__bnode *find_leaf(const st__btree *t, const void *key, uint64_t kh)
{
    st__bnode *n = t->root;
    while (n && !n->leaf) n = n->child[inner_slot(t, n, key, kh)];
    return n;
}

void *st__btree_get(const st__btree *t, const void *key)
{
    uint64_t kh = key_hint(t, key);
    st__bnode *n = find_leaf(t, key, kh);
    if (!n) return NULL;
    int i = leaf_lower(t, n, key, kh, false);
    return i < n->n && kcmp(t, n, i, key, kh) == 0 ? n->keys[i] : NULL;
}

/* Nodes come from the spare pool filled before each insert, so a split
 * can never fail after the tree has started to change. */
static st__bnode *node_new(st__btree *t, bool leaf)
{
    if (t->n_spare == 0) return NULL;
    st__bnode *n = t->spare[--t->n_spare];
    memset(n, 0, node_size(t));
    n->leaf = leaf;
    t->mem += node_size(t);
    return n;
}

/* An insert splits at most one node per level plus a new root. */
static int reserve(st__btree *t)
{
    int need = t->height + 2;
    if (need > (int)(sizeof t->spare / sizeof t->spare[0])) return CS_ENOMEM;
    while (t->n_spare < need) {
        st__bnode *n = t->arena ? cs_arena_alloc(t->arena, node_size(t)) : cs_malloc(node_size(t));
        if (!n) return CS_ENOMEM;
        t->spare[t->n_spare++] = n;
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
            if (t->hint) n->hk[i] = kh;
            n->n++;
            return 0;
        }
        st__bnode *r = node_new(t, true);
        if (!r) return CS_ENOMEM;
        void *tmp[BT_MAX + 1];
        uint64_t th[BT_MAX + 1];
        memcpy(tmp, n->keys, (size_t)i * sizeof(void *));
        tmp[i] = item;
        memcpy(&tmp[i + 1], &n->keys[i], (size_t)(BT_MAX - i) * sizeof(void *));
        if (t->hint) {
            memcpy(th, n->hk, (size_t)i * sizeof(uint64_t));
            th[i] = kh;
            memcpy(&th[i + 1], &n->hk[i], (size_t)(BT_MAX - i) * sizeof(uint64_t));
        }
        int left = (BT_MAX + 1) / 2;
        /* Appending at the right end (sequential inserts): keep the left full. */
        if (i == BT_MAX && !n->next) left = BT_MAX;
        memcpy(n->keys, tmp, (size_t)left * sizeof(void *));
        n->n = left;
        memcpy(r->keys, &tmp[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
        if (t->hint) {
            memcpy(n->hk, th, (size_t)left * sizeof(uint64_t));
            memcpy(r->hk, &th[left], (size_t)(BT_MAX + 1 - left) * sizeof(uint64_t));
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
    int rc = ins(t, n->child[ci], item, kh, &cs);
    if (rc || !cs) return rc;
    /* First item of the new child. */
    st__bnode *f = cs;
    while (!f->leaf) f = f->child[0];
    void *sep = f->keys[0];
    uint64_t sh = t->hint ? f->hk[0] : 0;
    if (n->n < BT_MAX) {
        kmove(t, n, ci + 2, n, ci + 1, n->n - ci - 1);
        memmove(&n->child[ci + 2], &n->child[ci + 1], (size_t)(n->n - ci - 1) * sizeof(void *));
        n->keys[ci + 1] = sep;
        if (t->hint) n->hk[ci + 1] = sh;
        n->child[ci + 1] = cs;
        n->n++;
        return 0;
    }
    st__bnode *r = node_new(t, false);
    if (!r) return CS_ENOMEM;   /* cannot happen: reserve() ran first */
    void *tk[BT_MAX + 1];
    uint64_t th[BT_MAX + 1];
    st__bnode *tc[BT_MAX + 1];
    memcpy(tk, n->keys, (size_t)(ci + 1) * sizeof(void *));
    memcpy(tc, n->child, (size_t)(ci + 1) * sizeof(void *));
    tk[ci + 1] = sep; tc[ci + 1] = cs;
    memcpy(&tk[ci + 2], &n->keys[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(void *));
    memcpy(&tc[ci + 2], &n->child[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(void *));
    if (t->hint) {
        memcpy(th, n->hk, (size_t)(ci + 1) * sizeof(uint64_t));
        th[ci + 1] = sh;
        memcpy(&th[ci + 2], &n->hk[ci + 1], (size_t)(BT_MAX - ci - 1) * sizeof(uint64_t));
    }
    int left = (BT_MAX + 1) / 2;
    if (ci + 1 == BT_MAX) left = BT_MAX;
    memcpy(n->keys, tk, (size_t)left * sizeof(void *));
    memcpy(n->child, tc, (size_t)left * sizeof(void *));
    n->n = left;
    memcpy(r->keys, &tk[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
    memcpy(r->child, &tc[left], (size_t)(BT_MAX + 1 - left) * sizeof(void *));
    if (t->hint) {
        memcpy(n->hk, th, (size_t)left * sizeof(uint64_t));
        memcpy(r->hk, &th[left], (size_t)(BT_MAX + 1 - left) * sizeof(uint64_t));
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
        while (!f->leaf) f = f->child[0];
        nr->child[0] = t->root;
        nr->child[1] = split;
        nr->keys[1] = f->keys[0];
        if (t->hint) nr->hk[1] = f->hk[0];
        nr->n = 2;
        t->root = nr;
        t->height++;
    }
    t->count++;
    return 0;
}

void st__btree_seek(const st__btree *t, const void *key, bool strict, st__biter *it)
{
    it->leaf = NULL; it->idx = 0;
    st__bnode *n = t->root;
    if (!n) return;
    if (!key) {
        while (!n->leaf) n = n->child[0];
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
        while (!n->leaf) n = n->child[n->n - 1];
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
static int depth_check(const st__bnode *n, int d, int *leaf_d)
{
    if (n->leaf) {
        if (*leaf_d < 0) *leaf_d = d;
        return *leaf_d == d ? 0 : -1;
    }
    for (int i = 0; i < n->n; i++)
        if (depth_check(n->child[i], d + 1, leaf_d)) return -1;
    return 0;
}

int st__btree_check(const st__btree *t)
{
    if (!t->root) return t->count == 0 ? 0 : -1;
    int ld = -1;
    if (depth_check(t->root, 0, &ld)) return -1;
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
