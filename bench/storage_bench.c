/*
 * storage_bench.c: storage micro-benchmark, cassette's engine vs LevelDB vs
 * RocksDB in one process, one run (project issue 3).  Owner: sbench.
 * Build: `make storage-bench` (needs libleveldb-dev, librocksdb-dev; not part
 * of `make all`).  Run: `sh bench/storage_bench.sh`.  Doc:
 * docs/storage-bench.md.
 *
 * Workloads, per engine, each on a fresh directory:
 *   fillseq      N keys (16 B) in ascending order, 100 B values, one write each
 *   fillrandom   the same N keys in a random permutation
 *                -> write amplification (bytes written / user bytes) after
 *                   fill + flush (+ background compactions settled), and after
 *                   a full compaction; space amplification after it
 *   readrandom   point reads of existing keys after the full compaction and a
 *                reopen ("cold": engine caches empty, OS page cache warm),
 *                then the same count again ("warm")
 *   scan         short scans of 100 entries from a random start
 *   wide         one partition of W rows plus W/100 partitions of 100 rows;
 *                100-row slices from random positions of the wide partition
 *                vs whole 100-row partitions (target: wide <= 1.5x narrow)
 *   bg           (--only bg|bg-kv|bg-wide, cassette only) flush and
 *                compaction MB/s, CPU s/GB and foreground write stalls
 *                (storage_bench_bg.c)
 * Output: one line per measurement, then a markdown table with the ratios
 * cassette/LevelDB and cassette/RocksDB.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bench/storage_bench.h"
#include "common/alloc.h"
#include "common/hash.h"

#define NENG 3
#define KEYLEN 16

enum {
    M_FILLSEQ, M_FILLRAND, M_WA_FILL, M_WA_FULL, M_WA_FILL_DISK, M_WA_FULL_DISK, M_SPACE,
    M_READ_COLD, M_READ_WARM, M_SCAN, M_WIDE_LOAD, M_WIDE_SLICE, M_NARROW_SLICE, M_WIDE_RATIO,
    M_COUNT
};

static const struct { const char *name; const char *unit; bool higher_better; } METRIC[M_COUNT] = {
    [M_FILLSEQ]      = { "fillseq", "ops/s", true },
    [M_FILLRAND]     = { "fillrandom", "ops/s", true },
    [M_WA_FILL]      = { "write amp, fill+flush (write syscalls)", "x", false },
    [M_WA_FULL]      = { "write amp, + full compaction (write syscalls)", "x", false },
    [M_WA_FILL_DISK] = { "write amp, fill+flush (write_bytes)", "x", false },
    [M_WA_FULL_DISK] = { "write amp, + full compaction (write_bytes)", "x", false },
    [M_SPACE]        = { "space amp after full compaction", "x", false },
    [M_READ_COLD]    = { "readrandom, sstables, cold caches", "ops/s", true },
    [M_READ_WARM]    = { "readrandom, sstables, warm", "ops/s", true },
    [M_SCAN]         = { "scan 100 entries", "scans/s", true },
    [M_WIDE_LOAD]    = { "wide load (batches of 1000 rows)", "rows/s", true },
    [M_WIDE_SLICE]   = { "100-row slice of the wide partition", "slices/s", true },
    [M_NARROW_SLICE] = { "100-row partition, all rows", "slices/s", true },
    [M_WIDE_RATIO]   = { "wide/narrow slice time (target <= 1.5)", "x", false },
};

static struct {
    long keys, reads, scans, scan_len, wide_rows, slices;
    int vsize;
    const char *dir;
    bool run_kv, run_wide, run_bg_kv, run_bg_wide;
} opt = { 1000000, 0, 20000, 100, 1000000, 20000, 100, "/tmp/cassette-storage-bench", true, true, false, false };

static double res[NENG][M_COUNT];
static bool have[NENG][M_COUNT];
static uint8_t *vbuf;                 /* value source: half random, half repeated */
#define VBUF 1048576

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void set(int e, int m, double v, const sb_engine *eng)
{
    res[e][m] = v;
    have[e][m] = true;
    printf("%-9s %-48s %14.2f %s\n", eng->name, METRIC[m].name, v, METRIC[m].unit);
    fflush(stdout);
}

static void key_of(uint8_t *k, long i) { char b[32]; snprintf(b, sizeof b, "%016ld", i); memcpy(k, b, KEYLEN); }
static const uint8_t *val_of(long i) { return vbuf + (uint64_t)(i * 7919) % (VBUF - (uint64_t)opt.vsize); }

/* /proc/self/io counters (all threads of the process). */
static void io_read(uint64_t *wchar, uint64_t *wbytes)
{
    *wchar = *wbytes = 0;
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return;
    char line[128];
    unsigned long long v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "wchar: %llu", &v) == 1) *wchar = v;
        else if (sscanf(line, "write_bytes: %llu", &v) == 1) *wbytes = v;
    }
    fclose(f);
}

static uint64_t g_du, g_du_data;
static int du_cb(const char *p, const struct stat *st, int fl, struct FTW *f)
{
    (void)f;
    if (fl != FTW_F) return 0;
    g_du += (uint64_t)st->st_size;
    size_t n = strlen(p);
    /* data files only: not the commit log / WAL, not manifests */
    bool log = strstr(p, "/commitlog/") || (n > 4 && !strcmp(p + n - 4, ".log"));
    bool data = !log && ((n > 4 && (!strcmp(p + n - 4, ".sst") || !strcmp(p + n - 4, ".ldb"))) || strstr(p, "/data/"));
    if (data) g_du_data += (uint64_t)st->st_size;
    if (getenv("SBENCH_LS")) printf("  %12lld %s\n", (long long)st->st_size, p);   /* per-file breakdown */
    return 0;
}
static void du(const char *dir, uint64_t *all, uint64_t *data)
{
    g_du = g_du_data = 0;
    nftw(dir, du_cb, 16, FTW_PHYS);
    *all = g_du; *data = g_du_data;
}

static int rm_cb(const char *p, const struct stat *st, int fl, struct FTW *f)
{
    (void)st; (void)fl; (void)f;
    remove(p);
    return 0;
}
static void rmtree(const char *dir) { nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static void die(const char *what, const sb_engine *eng)
{
    fprintf(stderr, "%s: %s failed\n", eng->name, what);
    exit(1);
}

/* Key/value workloads on one engine. */
static void run_kv(int ei, const sb_engine *eng)
{
    char dir[512];
    void *h;
    uint8_t k[KEYLEN];
    long n = opt.keys;
    double t;

    /* fillseq */
    snprintf(dir, sizeof dir, "%s/%s-seq", opt.dir, eng->name);
    rmtree(dir); mkdir(dir, 0755);
    if (eng->open(dir, &h)) die("open", eng);
    t = now_s();
    for (long i = 0; i < n; i++) {
        key_of(k, i);
        if (eng->put(h, k, KEYLEN, NULL, 0, val_of(i), (uint32_t)opt.vsize)) die("put", eng);
    }
    set(ei, M_FILLSEQ, n / (now_s() - t), eng);
    eng->close(h);
    rmtree(dir);

    /* fillrandom: every key once, in a random permutation */
    long *perm = cs_malloc(sizeof(long) * (size_t)n);
    if (!perm) die("alloc", eng);
    for (long i = 0; i < n; i++) perm[i] = i;
    for (long i = n - 1; i > 0; i--) { long j = (long)(rnd() % (uint64_t)(i + 1)), x = perm[i]; perm[i] = perm[j]; perm[j] = x; }
    snprintf(dir, sizeof dir, "%s/%s-rand", opt.dir, eng->name);
    rmtree(dir); mkdir(dir, 0755);
    if (eng->open(dir, &h)) die("open", eng);
    double user = (double)n * (KEYLEN + opt.vsize);
    uint64_t wc0, wb0, wc1, wb1;
    io_read(&wc0, &wb0);
    t = now_s();
    for (long i = 0; i < n; i++) {
        key_of(k, perm[i]);
        if (eng->put(h, k, KEYLEN, NULL, 0, val_of(perm[i]), (uint32_t)opt.vsize)) die("put", eng);
    }
    set(ei, M_FILLRAND, n / (now_s() - t), eng);
    cs_free(perm);
    if (eng->flush(h)) die("flush", eng);
    eng->settle(h);
    io_read(&wc1, &wb1);
    set(ei, M_WA_FILL, (double)(wc1 - wc0) / user, eng);
    if (wb1 > wb0) set(ei, M_WA_FILL_DISK, (double)(wb1 - wb0) / user, eng);
    t = now_s();
    if (eng->compact(h)) die("compact", eng);
    printf("%-9s full compaction took %.2f s\n", eng->name, now_s() - t);
    io_read(&wc1, &wb1);
    set(ei, M_WA_FULL, (double)(wc1 - wc0) / user, eng);
    if (wb1 > wb0) set(ei, M_WA_FULL_DISK, (double)(wb1 - wb0) / user, eng);
    uint64_t all, data;
    du(dir, &all, &data);
    set(ei, M_SPACE, (double)data / user, eng);
    printf("%-9s on disk: %.1f MB data files, %.1f MB with logs (user data %.1f MB)\n",
           eng->name, data / 1e6, all / 1e6, user / 1e6);
    eng->close(h);

    /* reads after reopen: everything in sstables */
    if (eng->open(dir, &h)) die("reopen", eng);
    long reads = opt.reads ? opt.reads : n / 5;
    for (int pass = 0; pass < 2; pass++) {
        long found = 0;
        t = now_s();
        for (long i = 0; i < reads; i++) {
            key_of(k, (long)(rnd() % (uint64_t)n));
            int rc = eng->get(h, k, KEYLEN);
            if (rc < 0) die("get", eng);
            found += rc;
        }
        set(ei, pass ? M_READ_WARM : M_READ_COLD, reads / (now_s() - t), eng);
        if (found != reads) printf("%-9s WARNING: %ld of %ld keys not found\n", eng->name, reads - found, reads);
    }

    /* short scans */
    long rows = 0;
    t = now_s();
    for (long i = 0; i < opt.scans; i++) {
        key_of(k, (long)(rnd() % (uint64_t)n));
        int rc = eng->scan(h, k, KEYLEN, (int64_t)rnd(), (int)opt.scan_len);
        if (rc < 0) die("scan", eng);
        rows += rc;
    }
    set(ei, M_SCAN, opt.scans / (now_s() - t), eng);
    if (rows < opt.scans * opt.scan_len * 9 / 10)
        printf("%-9s note: scans returned %ld entries (ring end reached)\n", eng->name, rows);
    eng->close(h);
    rmtree(dir);
}

static void ck_of(uint8_t *c, uint64_t i) { for (int b = 0; b < 8; b++) c[b] = (uint8_t)(i >> (56 - 8 * b)); }

/* Wide partition vs 100-row partitions on one engine. */
static void run_wide(int ei, const sb_engine *eng)
{
    char dir[512];
    void *h;
    uint8_t lo[8], hi[8];
    long w = opt.wide_rows, nn = w / 100;
    const uint8_t *wide_pk = (const uint8_t *)"wide-partition-0";

    snprintf(dir, sizeof dir, "%s/%s-wide", opt.dir, eng->name);
    rmtree(dir); mkdir(dir, 0755);
    if (eng->open(dir, &h)) die("open", eng);
    double t = now_s();
    for (long i = 0; i < w; i += 1000) {
        if (eng->batch_begin(h)) die("batch", eng);
        for (long j = i; j < i + 1000 && j < w; j++) {
            ck_of(lo, (uint64_t)j);
            if (eng->put(h, wide_pk, KEYLEN, lo, 8, val_of(j), (uint32_t)opt.vsize)) die("put", eng);
        }
        if (eng->batch_end(h)) die("batch write", eng);
    }
    for (long p = 0; p < nn; p++) {
        char b[32];
        snprintf(b, sizeof b, "narrow%010ld", p);
        if (eng->batch_begin(h)) die("batch", eng);
        for (int j = 0; j < 100; j++) {
            ck_of(lo, (uint64_t)j);
            if (eng->put(h, (const uint8_t *)b, KEYLEN, lo, 8, val_of(p * 100 + j), (uint32_t)opt.vsize)) die("put", eng);
        }
        if (eng->batch_end(h)) die("batch write", eng);
    }
    set(ei, M_WIDE_LOAD, 2.0 * w / (now_s() - t), eng);
    t = now_s();
    if (eng->compact(h)) die("compact", eng);
    printf("%-9s wide: flush + full compaction took %.2f s\n", eng->name, now_s() - t);

    double tw = 0, tn = 0;
    for (int pass = 0; pass < 2; pass++) {     /* pass 0 warms up, pass 1 is measured */
        long short_ = 0;
        t = now_s();
        for (long i = 0; i < opt.slices; i++) {
            uint64_t s = rnd() % (uint64_t)(w - 100);
            ck_of(lo, s); ck_of(hi, s + 99);
            int rc = eng->slice(h, wide_pk, KEYLEN, lo, hi, 8, 100);
            if (rc < 0) die("slice", eng);
            if (rc != 100) short_++;
        }
        tw = now_s() - t;
        t = now_s();
        ck_of(lo, 0); ck_of(hi, 99);
        for (long i = 0; i < opt.slices; i++) {
            char b[32];
            snprintf(b, sizeof b, "narrow%010ld", (long)(rnd() % (uint64_t)nn));
            int rc = eng->slice(h, (const uint8_t *)b, KEYLEN, lo, hi, 8, 100);
            if (rc < 0) die("slice", eng);
            if (rc != 100) short_++;
        }
        tn = now_s() - t;
        if (short_) printf("%-9s WARNING: %ld slices returned fewer than 100 rows\n", eng->name, short_);
    }
    set(ei, M_WIDE_SLICE, opt.slices / tw, eng);
    set(ei, M_NARROW_SLICE, opt.slices / tn, eng);
    set(ei, M_WIDE_RATIO, tw / tn, eng);
    eng->close(h);
    rmtree(dir);
}

static void usage(void)
{
    fprintf(stderr,
        "usage: cassette-storage-bench [--keys N] [--reads N] [--scans N] [--scan-len N]\n"
        "         [--wide-rows N] [--slices N] [--value-size B] [--dir D]\n"
        "         [--engines cassette,leveldb,rocksdb] [--only kv|wide|bg|bg-kv|bg-wide]\n");
    exit(2);
}

static void fmt(char *b, size_t n, int m, double v)
{
    if (!strcmp(METRIC[m].unit, "x")) snprintf(b, n, "%.2f", v);
    else snprintf(b, n, "%.0f", v);
}

int main(int argc, char **argv)
{
    const sb_engine *all[NENG] = { &sb_cassette, &sb_leveldb, &sb_rocksdb };
    bool use[NENG] = { true, true, true };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        i++;
        if (!strcmp(a, "--keys")) opt.keys = atol(v);
        else if (!strcmp(a, "--reads")) opt.reads = atol(v);
        else if (!strcmp(a, "--scans")) opt.scans = atol(v);
        else if (!strcmp(a, "--scan-len")) opt.scan_len = atol(v);
        else if (!strcmp(a, "--wide-rows")) opt.wide_rows = atol(v);
        else if (!strcmp(a, "--slices")) opt.slices = atol(v);
        else if (!strcmp(a, "--value-size")) opt.vsize = atoi(v);
        else if (!strcmp(a, "--dir")) opt.dir = v;
        else if (!strcmp(a, "--only")) {
            opt.run_kv = !strcmp(v, "kv"); opt.run_wide = !strcmp(v, "wide");
            opt.run_bg_kv = !strcmp(v, "bg") || !strcmp(v, "bg-kv");
            opt.run_bg_wide = !strcmp(v, "bg") || !strcmp(v, "bg-wide");
        }
        else if (!strcmp(a, "--engines")) {
            for (int e = 0; e < NENG; e++) use[e] = strstr(v, all[e]->name) != NULL;
        } else usage();
    }
    if (opt.keys < 1000 || opt.wide_rows < 1000 || opt.vsize < 1 || opt.vsize > 65536) usage();

    vbuf = cs_malloc(VBUF);
    if (!vbuf) return 1;
    for (size_t i = 0; i < VBUF; i += 100) {          /* ~50% compressible, like db_bench */
        for (size_t j = 0; j < 50 && i + j < VBUF; j++) vbuf[i + j] = (uint8_t)rnd();
        for (size_t j = 50; j < 100 && i + j < VBUF; j++) vbuf[i + j] = vbuf[i + j - 50];
    }
    mkdir(opt.dir, 0755);
    printf("keys %ld x (%d B key + %d B value), reads %ld, scans %ld x %ld, wide %ld rows\n",
           opt.keys, KEYLEN, opt.vsize, opt.reads ? opt.reads : opt.keys / 5, opt.scans, opt.scan_len,
           opt.wide_rows);
    if (opt.run_bg_kv || opt.run_bg_wide) {
        /* flush and compaction throughput (cassette only, storage_bench_bg.c) */
        char d[512];
        snprintf(d, sizeof d, "%s/bg", opt.dir);
        rmtree(d); mkdir(d, 0755);
        int rc = sb_run_bg(d, opt.keys, opt.wide_rows, opt.vsize, val_of, rnd, opt.run_bg_kv, opt.run_bg_wide,
                        !getenv("SBENCH_NO_WRITER"));
        rmtree(d);
        cs_free(vbuf);
        return rc ? 1 : 0;
    }
    for (int e = 0; e < NENG; e++) {
        if (!use[e]) continue;
        printf("%-9s compression: %s\n", all[e]->name, all[e]->compression);
        if (opt.run_kv) run_kv(e, all[e]);
        if (opt.run_wide) run_wide(e, all[e]);
    }

    printf("\n| workload | unit | cassette | leveldb | rocksdb | cassette/leveldb | cassette/rocksdb |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < M_COUNT; m++) {
        if (!have[0][m] && !have[1][m] && !have[2][m]) continue;
        char c[NENG][32], r1[32] = "-", r2[32] = "-";
        for (int e = 0; e < NENG; e++) {
            if (have[e][m]) fmt(c[e], sizeof c[e], m, res[e][m]);
            else snprintf(c[e], sizeof c[e], "-");
        }
        if (have[0][m] && have[1][m] && res[1][m] > 0) snprintf(r1, sizeof r1, "%.2f", res[0][m] / res[1][m]);
        if (have[0][m] && have[2][m] && res[2][m] > 0) snprintf(r2, sizeof r2, "%.2f", res[0][m] / res[2][m]);
        printf("| %s | %s | %s | %s | %s | %s | %s |\n", METRIC[m].name, METRIC[m].unit, c[0], c[1], c[2], r1, r2);
    }
    cs_free(vbuf);
    return 0;
}
