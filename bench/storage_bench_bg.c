/*
 * storage_bench_bg.c: flush and compaction throughput of cassette's engine,
 * and the foreground write stalls they cause (project issue 3: "flush and
 * compaction >= 100 MB/s, never stalling foreground writes for more than a
 * few milliseconds").  Run with `--only bg` (bench/storage_bench.c); cassette
 * only, LevelDB/RocksDB have no comparable knobs.  Doc: docs/storage-bench.md,
 * "Flush and compaction".
 *
 * Two data sets, each on a fresh engine (memtable space 4 GiB so only the
 * benchmark flushes; the bench table has background compaction off so only
 * the benchmark compacts):
 *   kv    N keys of 16 B + 100 B values in random order, flushed in 4 equal
 *         parts (4 sstables with interleaved tokens), then a major
 *         compaction of the 4 into 1
 *   wide  one partition of W rows (8 B clustering, 100 B values) and W/100
 *         partitions of 100 rows, interleaved in writes of 1000 rows,
 *         flushed in 4 parts (the wide partition is in all 4), then a major
 *         compaction
 * Per flush/compaction: wall time, CPU time of the operation (process CPU
 * minus the writer thread's: a major compaction runs on the calling thread,
 * a flush on the flush thread while the caller waits), and
 *   flush:      user bytes (key + clustering + value), memtable bytes (as the
 *               engine accounts them) and sstable bytes written, per second
 *   compaction: sstable bytes read + written per second
 *   CPU s/GB:   background CPU seconds per GB of sstable bytes written
 *               (flush) or read + written (compaction)
 * Meanwhile a writer thread writes one small row every 100 us into another
 * table of the same engine; its write latencies (p50, p99, p99.9, max) are
 * the foreground stall figures, next to the same writer alone (no flush or
 * compaction) as the machine's floor.  "Blocked" is a write's wall time
 * minus its thread's CPU time and run-queue wait (/proc/thread-self/
 * schedstat): the time the engine made it sleep (locks, I/O, page faults
 * waiting on others), apart from the machine's scheduling.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "bench/storage_bench.h"
#include "common/alloc.h"
#include "storage/storage.h"

static const uint8_t BG_TID[16] = { 0x5b, 0xe8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
static const uint8_t FG_TID[16] = { 0x5b, 0xe9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

#define WR_INTERVAL_NS 100000L      /* writer: one write every 100 us */
#define WR_MAX 4000000

typedef struct writer {
    st_engine *e;
    st_table *t;
    pthread_t th;
    atomic_bool stop;
    uint32_t *lat_ns;               /* per write */
    uint32_t *at_us;                /* its start, us after the writer started */
    uint32_t *blk_ns;               /* its time off CPU and not runnable (blocked) */
    double t0;
    long n;
    double cpu_s;                   /* writer thread CPU */
    int64_t ts;
    long seq;
} writer;

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_of(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* This thread's CPU time and run-queue wait (ns, /proc/thread-self/schedstat). */
static bool sched_read(int fd, uint64_t *cpu, uint64_t *wait)
{
    char b[128];
    ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
    if (n <= 0) return false;
    b[n] = 0;
    unsigned long long c, wq;
    if (sscanf(b, "%llu %llu", &c, &wq) != 2) return false;
    *cpu = c; *wait = wq;
    return true;
}

static void *writer_main(void *arg)
{
    writer *w = arg;
    int sfd = open("/proc/thread-self/schedstat", O_RDONLY);
    double c0 = cpu_of(CLOCK_THREAD_CPUTIME_ID);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    uint8_t val[100];
    memset(val, 'v', sizeof val);
    while (!atomic_load(&w->stop) && w->n < WR_MAX) {
        next.tv_nsec += WR_INTERVAL_NS;
        if (next.tv_nsec >= 1000000000L) { next.tv_sec++; next.tv_nsec -= 1000000000L; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1) next = now;   /* far behind: do not burst to catch up */
        char k[32];
        snprintf(k, sizeof k, "fg%014ld", w->seq++ % 100000);
        uint64_t c0 = 0, q0 = 0, c1 = 0, q1 = 0;
        bool sok = sched_read(sfd, &c0, &q0);
        double t0 = mono();
        st_mutation *m = st_mutation_new();
        if (!m) break;
        int64_t ts = ++w->ts;
        st_mut_partition(m, w->t, (const uint8_t *)k, 16);
        st_mut_row(m, NULL, 0, 0);
        st_mut_row_liveness(m, (st_liveness){ .ts_us = ts });
        st_cell c = { .col = 1, .ts_us = ts, .val = val, .val_len = sizeof val };
        st_mut_cell(m, &c);
        int rc = st_write(w->e, m, NULL);
        st_mutation_free(m);
        if (rc) { fprintf(stderr, "writer: st_write failed\n"); break; }
        double d = (mono() - t0) * 1e9;
        /* blocked = wall - on CPU - waiting for a CPU: what the engine made
         * it wait (locks, I/O), apart from the machine's scheduling */
        double blk = 0;
        if (sok && sched_read(sfd, &c1, &q1)) blk = d - (double)(c1 - c0) - (double)(q1 - q0);
        w->blk_ns[w->n] = blk < 0 ? 0 : blk > 4e9 ? 4000000000u : (uint32_t)blk;
        w->at_us[w->n] = (uint32_t)((t0 - w->t0) * 1e6);
        w->lat_ns[w->n++] = d > 4e9 ? 4000000000u : (uint32_t)d;
    }
    w->cpu_s = cpu_of(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (sfd >= 0) close(sfd);
    return NULL;
}

static int writer_start(writer *w, st_engine *e, st_table *t)
{
    w->e = e; w->t = t; w->n = 0;
    atomic_store(&w->stop, false);
    if (!w->lat_ns && !(w->lat_ns = cs_malloc(sizeof(uint32_t) * WR_MAX))) return -1;
    if (!w->at_us && !(w->at_us = cs_malloc(sizeof(uint32_t) * WR_MAX))) return -1;
    if (!w->blk_ns && !(w->blk_ns = cs_malloc(sizeof(uint32_t) * WR_MAX))) return -1;
    w->t0 = mono();
    return pthread_create(&w->th, NULL, writer_main, w) ? -1 : 0;
}

static void writer_stop(writer *w)
{
    atomic_store(&w->stop, true);
    pthread_join(w->th, NULL);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct lat_sum { long n; double p50, p99, p999, max, bp999, bmax; } lat_sum;

/* SBENCH_STALLS=1: when each write slower than 1 ms started, from the
 * writer's start (the operation starts right after it). */
static void print_stalls(writer *w, double op_s)
{
    if (!getenv("SBENCH_STALLS")) return;
    printf("  op %.3f s; writes > 1 ms at (s, ms, ms blocked):", op_s);
    for (long i = 0; i < w->n; i++)
        if (w->lat_ns[i] > 1000000) printf(" %.3f/%.1f/%.1f", w->at_us[i] / 1e6, w->lat_ns[i] / 1e6, w->blk_ns[i] / 1e6);
    printf("\n");
}

static lat_sum lat_summary(writer *w)
{
    lat_sum s = { w->n, 0, 0, 0, 0, 0, 0 };
    if (!w->n) return s;
    qsort(w->blk_ns, (size_t)w->n, sizeof *w->blk_ns, cmp_u32);
    s.bp999 = w->blk_ns[(w->n - 1) * 999 / 1000] / 1e3;
    s.bmax = w->blk_ns[w->n - 1] / 1e3;
    qsort(w->lat_ns, (size_t)w->n, sizeof *w->lat_ns, cmp_u32);
    s.p50 = w->lat_ns[(w->n - 1) * 50 / 100] / 1e3;
    s.p99 = w->lat_ns[(w->n - 1) * 99 / 100] / 1e3;
    s.p999 = w->lat_ns[(w->n - 1) * 999 / 1000] / 1e3;
    s.max = w->lat_ns[w->n - 1] / 1e3;
    return s;
}

/* Accumulated figures of one kind of background operation. */
typedef struct bg_acc {
    int ops;
    double wall, cpu;               /* seconds */
    double user, mem, rd, wr;       /* bytes */
    long wn; double p99, p999, max; /* writer: worst across ops */
    double p50, bp999, bmax;        /* blocked: wall minus CPU minus run-queue wait */
} bg_acc;

typedef struct bg_run {
    st_engine *e;
    st_table *t, *fg;
    writer w;
    bool stall;
} bg_run;

/* Run op (flush or compaction of r->t) with the writer going; account it. */
static int timed(bg_run *r, bool compact, bg_acc *acc, double user)
{
    st_table_stats s0, s1;
    st_table_stats_get(r->t, &s0);
    if (r->stall && writer_start(&r->w, r->e, r->fg)) return -1;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = mono();
    int rc = compact ? st_table_compact(r->t) : st_table_flush(r->t);
    double wall = mono() - t0;
    if (getenv("SBENCH_TIMES"))   /* for perf report --time (perf record -k CLOCK_MONOTONIC) */
        printf("  %s: monotonic %.6f-%.6f\n", compact ? "compaction" : "flush", t0, t0 + wall);
    getrusage(RUSAGE_SELF, &ru1);
    if (r->stall) writer_stop(&r->w);
    if (rc) return -1;
    st_table_stats_get(r->t, &s1);
    double pcpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                  (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    /* st_table_compact runs on this thread, st_table_flush waits for the
     * flush thread: everything but the writer is the operation's. */
    double cpu = pcpu - (r->stall ? r->w.cpu_s : 0);
    if (cpu < 0) cpu = 0;
    acc->ops++;
    acc->wall += wall;
    acc->cpu += cpu;
    acc->user += user;
    if (compact) {
        acc->rd += (double)s0.sstable_bytes;
        acc->wr += (double)s1.sstable_bytes;
    } else {
        acc->mem += (double)s0.memtable_bytes;
        acc->wr += (double)(s1.sstable_bytes - s0.sstable_bytes);
    }
    if (r->stall) {
        print_stalls(&r->w, wall);
        lat_sum l = lat_summary(&r->w);
        acc->wn += l.n;
        if (l.p50 > acc->p50) acc->p50 = l.p50;
        if (l.p99 > acc->p99) acc->p99 = l.p99;
        if (l.p999 > acc->p999) acc->p999 = l.p999;
        if (l.max > acc->max) acc->max = l.max;
        if (l.bp999 > acc->bp999) acc->bp999 = l.bp999;
        if (l.bmax > acc->bmax) acc->bmax = l.bmax;
    }
    return 0;
}

static void report(const char *what, const bg_acc *a, bool compact)
{
    double io = compact ? a->rd + a->wr : a->wr;
    printf("cassette  %-22s %d op(s) %6.2f s wall %6.2f s bg cpu", what, a->ops, a->wall, a->cpu);
    if (compact)
        printf(" | read %.1f MB + written %.1f MB: %.1f MB/s, %.2f cpu s/GB\n",
               a->rd / 1e6, a->wr / 1e6, io / 1e6 / a->wall, a->cpu / (io / 1e9));
    else
        printf(" | user %.1f MB: %.1f MB/s, memtable %.1f MB: %.1f MB/s, sstable %.1f MB: %.1f MB/s, %.2f cpu s/GB\n",
               a->user / 1e6, a->user / 1e6 / a->wall, a->mem / 1e6, a->mem / 1e6 / a->wall, a->wr / 1e6,
               a->wr / 1e6 / a->wall, a->cpu / (a->wr / 1e9));
    if (a->wn)
        printf("cassette  %-22s writer during it: %ld writes, latency p50 %.0f us, p99 %.0f us, p99.9 %.0f us, max %.0f us; "
               "blocked p99.9 %.0f us, max %.0f us\n", what, a->wn, a->p50, a->p99, a->p999, a->max, a->bp999, a->bmax);
    fflush(stdout);
}

static int bg_open(bg_run *r, const char *dir)
{
    char data[600], clog[600];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(clog, sizeof clog, "%s/commitlog", dir);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = data;
    cfg.commitlog_dir = clog;
    cfg.sync_mode = ST_SYNC_PERIODIC;
    cfg.memtable_space = (size_t)4 << 30;      /* only the benchmark flushes */
    if (st_engine_open(&cfg, &r->e)) return -1;
    st_table_opts o;
    st_table_opts_defaults(&o);
    o.compaction_enabled = false;               /* only the benchmark compacts */
    st_table_opts f;
    st_table_opts_defaults(&f);
    if (st_table_open(r->e, BG_TID, "bench", "bg", &o, &r->t) || st_table_open(r->e, FG_TID, "bench", "fg", &f, &r->fg) ||
        st_engine_replay(r->e, NULL, NULL) || st_engine_replay_done(r->e)) {
        st_engine_close(r->e, false);
        return -1;
    }
    r->w.ts = (int64_t)time(NULL) * 1000000;
    return 0;
}

static void floor_latency(bg_run *r)
{
    if (!r->stall) return;
    if (writer_start(&r->w, r->e, r->fg)) return;
    struct timespec ts = { 1, 0 };
    nanosleep(&ts, NULL);
    writer_stop(&r->w);
    lat_sum l = lat_summary(&r->w);
    printf("cassette  %-22s writer alone (1 s, no flush/compaction): %ld writes, latency p50 %.0f us, p99 %.0f us, "
           "p99.9 %.0f us, max %.0f us; blocked p99.9 %.0f us, max %.0f us\n", "floor", l.n, l.p50, l.p99, l.p999, l.max,
           l.bp999, l.bmax);
}

static void put_row(st_mutation *m, st_table *t, const uint8_t *pk, const uint8_t *ck, uint32_t cklen,
                    const uint8_t *v, uint32_t vlen, int64_t ts, bool np)
{
    if (np) st_mut_partition(m, t, pk, 16);
    st_mut_row(m, ck, cklen, 0);
    st_mut_row_liveness(m, (st_liveness){ .ts_us = ts });
    st_cell c = { .col = 1, .ts_us = ts, .val = v, .val_len = vlen };
    st_mut_cell(m, &c);
}

int sb_run_bg(const char *root, long keys, long wide_rows, int vsize, const uint8_t *(*val_of)(long),
              uint64_t (*rnd)(void), bool kv, bool wide, bool stall)
{
    char dir[600];
    int64_t ts = (int64_t)time(NULL) * 1000000;
    if (kv) {
        bg_run r = { 0 };
        r.stall = stall;
        snprintf(dir, sizeof dir, "%s/cassette-bg-kv", root);
        mkdir(dir, 0755);
        if (bg_open(&r, dir)) { fprintf(stderr, "bg: open failed\n"); return -1; }
        floor_latency(&r);
        long *perm = cs_malloc(sizeof(long) * (size_t)keys);
        if (!perm) return -1;
        for (long i = 0; i < keys; i++) perm[i] = i;
        for (long i = keys - 1; i > 0; i--) { long j = (long)(rnd() % (uint64_t)(i + 1)), x = perm[i]; perm[i] = perm[j]; perm[j] = x; }
        bg_acc fa = { 0 }, ca = { 0 };
        for (int q = 0; q < 4; q++) {
            long lo = keys * q / 4, hi = keys * (q + 1) / 4;
            for (long i = lo; i < hi; i++) {
                char k[32];
                snprintf(k, sizeof k, "%016ld", perm[i]);
                st_mutation *m = st_mutation_new();
                if (!m) return -1;
                put_row(m, r.t, (const uint8_t *)k, NULL, 0, val_of(perm[i]), (uint32_t)vsize, ++ts, true);
                if (st_write(r.e, m, NULL)) { st_mutation_free(m); fprintf(stderr, "bg: write failed\n"); return -1; }
                st_mutation_free(m);
            }
            if (timed(&r, false, &fa, (double)(hi - lo) * (16 + vsize))) { fprintf(stderr, "bg: flush failed\n"); return -1; }
        }
        cs_free(perm);
        char what[64];
        snprintf(what, sizeof what, "flush kv %ldk", keys / 1000);
        report(what, &fa, false);
        if (timed(&r, true, &ca, (double)keys * (16 + vsize))) { fprintf(stderr, "bg: compaction failed\n"); return -1; }
        snprintf(what, sizeof what, "compact kv 4->1");
        report(what, &ca, true);
        st_engine_close(r.e, false);
        cs_free(r.w.lat_ns);
        cs_free(r.w.at_us);
        cs_free(r.w.blk_ns);
    }
    if (wide) {
        bg_run r = { 0 };
        r.stall = stall;
        snprintf(dir, sizeof dir, "%s/cassette-bg-wide", root);
        mkdir(dir, 0755);
        if (bg_open(&r, dir)) { fprintf(stderr, "bg: open failed\n"); return -1; }
        floor_latency(&r);
        const uint8_t *wide_pk = (const uint8_t *)"wide-partition-0";
        long nn = wide_rows / 100, nbatch = wide_rows / 1000, done = 0;
        bg_acc fa = { 0 }, ca = { 0 };
        long since = 0;
        int q = 0;
        for (long b = 0; b < nbatch; b++) {
            uint8_t ck[8];
            st_mutation *m = st_mutation_new();
            if (!m) return -1;
            for (long j = b * 1000; j < (b + 1) * 1000; j++) {
                for (int x = 0; x < 8; x++) ck[x] = (uint8_t)((uint64_t)j >> (56 - 8 * x));
                put_row(m, r.t, wide_pk, ck, 8, val_of(j), (uint32_t)vsize, ++ts, j == b * 1000);
            }
            if (st_write(r.e, m, NULL)) { st_mutation_free(m); return -1; }
            st_mutation_free(m);
            /* 10 narrow partitions of 100 rows per wide batch */
            for (long p = b * nn / nbatch; p < (b + 1) * nn / nbatch; p++) {
                char pk[32];
                snprintf(pk, sizeof pk, "narrow%010ld", p);
                m = st_mutation_new();
                if (!m) return -1;
                for (int j = 0; j < 100; j++) {
                    for (int x = 0; x < 8; x++) ck[x] = (uint8_t)((uint64_t)j >> (56 - 8 * x));
                    put_row(m, r.t, (const uint8_t *)pk, ck, 8, val_of(p * 100 + j), (uint32_t)vsize, ++ts, j == 0);
                }
                if (st_write(r.e, m, NULL)) { st_mutation_free(m); return -1; }
                st_mutation_free(m);
                since += 100;
            }
            since += 1000;
            if ((b + 1) * 4 / nbatch > q || b == nbatch - 1) {
                q++;
                if (timed(&r, false, &fa, (double)since * (16 + 8 + vsize))) { fprintf(stderr, "bg: flush failed\n"); return -1; }
                done += since;
                since = 0;
            }
        }
        char what[64];
        snprintf(what, sizeof what, "flush wide %ldk+%ldx100", wide_rows / 1000, nn);
        report(what, &fa, false);
        if (timed(&r, true, &ca, (double)done * (16 + 8 + vsize))) { fprintf(stderr, "bg: compaction failed\n"); return -1; }
        snprintf(what, sizeof what, "compact wide %d->1", fa.ops);
        report(what, &ca, true);
        st_engine_close(r.e, false);
        cs_free(r.w.lat_ns);
        cs_free(r.w.at_us);
        cs_free(r.w.blk_ns);
    }
    return 0;
}
