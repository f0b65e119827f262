/*
 * runner.c: drives one profile against a server (see run.h).
 *
 * Scheduling: in max-throughput mode every connection keeps `concurrency`
 * requests in flight, a completion issuing the next op.  In fixed-rate mode
 * op i is due at t0 + i/rate and latency is measured from the due time, not
 * the send time, so a stalled server shows up in the percentiles
 * (coordinated omission corrected).  An op is issued as soon as its time has
 * come and a slot is free: by a completion (onto the connection just freed)
 * or by a periodic timerfd ticking at the ops' times, which runs only while
 * a slot is free (see "Fixed-rate pacing" below); a 1 ms timer is the
 * backstop.  Ops issued together fill one connection's free slots
 * before the next, and a connection writes everything queued in one loop
 * iteration at once (client_async.c), so a burst is one write.
 * A reply's completion time is when the bytes holding it were read (one
 * clock read per read, bc_result.recv_ns).
 *
 * Cost: the client shares the machine with the server, so the per-request
 * path allocates nothing: request slots (with their message buffers) come
 * from a pool sized to the connections' in-flight limits, and the model
 * builds into reused scratch (bench/gen.c) and, against one host, straight
 * into the connection's output buffer (multi-host routing needs the
 * partition's token first, so it builds into the request and copies).
 */
#include "bench/run.h"
#include "bench/route.h"
#include "common/alloc.h"
#include "common/err.h"
#include "common/util.h"
#include "server/frame.h"
#include <math.h>
#include <stdio.h>
#include <ctype.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

typedef struct runner runner;

typedef struct req {
    runner *R;
    struct req *next_free;
    int op, conn, pages_left;
    int cursor;                 /* token range cursor of the op, -1 if none */
    uint64_t rows;              /* rows its pages returned so far */
    uint64_t start_ns;
    uint8_t opcode;
    size_t flags_off;
    size_t base_len;            /* message length without a paging state */
    cs_buf msg;
    bench_pending pend;         /* what it adds to the partition picture if acknowledged */
} req;

struct runner {
    uv_loop_t loop;
    uv_timer_t timer;
    uv_poll_t pacer;                  /* fixed rate: periodic timerfd ticking at the ops' intended times */
    int pacer_fd;                     /* -1: none (1 ms timer and completions only) */
    uint64_t pace_next_ns;            /* the pacer's next tick; 0 = stopped */
    uint64_t pace_period_ns, pace_tol_ns;
    double ns_per_op;                 /* fixed rate: 1e9 / rate */
    bench_model model;
    bench_profile *p;
    const bench_opts *o;
    bench_result *res;
    bc_async **conns; int n_conns, n_ready, n_failed;
    int *conn_host;                   /* host index of each connection */
    bench_route route;                /* token ring (token-aware routing) */
    double *cum_ratio;
    int *op_pages;                    /* pages to fetch per op */
    req *reqs; req *free_reqs;        /* pool: one per possible in-flight request */
    uint64_t inflight;                /* requests sent, not yet completed */
    uint64_t t0_ns, warm_end_ns, end_ns, last_tick_ns;
    uint64_t issued, completed, max_ops;
    bool stopping, started;
    bench_hist tick_hist; uint64_t tick_ops;
    int ticks_cap;
    char err[512];
    int next_conn;                    /* fixed rate: where the search for a free slot goes on */
    int fill_conn;                    /* fixed rate: the connection being filled */
};

/* Do two messages differ only in their numbers ("Key length of 70012 is
 * longer..." and "Key length of 70020 ...")?  Those are one kind. */
static bool same_kind(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (isdigit((unsigned char)*a)) a++;
            while (isdigit((unsigned char)*b)) b++;
        } else if (*a++ != *b++) {
            return false;
        }
    }
    return *a == *b;
}

#define MAX_KINDS 64
#define OTHER_KINDS "(other kinds)"

/* Count one error or warning under its kind: the first message of the
 * kind stands for it.  Past MAX_KINDS kinds the rest go to one last entry,
 * so the counts still add up to the total. */
static void add_kind(bench_kind_count **arr, int *n, const char *kind)
{
    for (int i = 0; i < *n; i++)
        if (i == MAX_KINDS || same_kind((*arr)[i].kind, kind)) {   /* entry MAX_KINDS: the other kinds */
            (*arr)[i].count++;
            return;
        }
    bench_kind_count *na = cs_realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));
    if (!na)
        return;
    *arr = na;
    (*arr)[*n].kind = cs_strdup(*n == MAX_KINDS ? OTHER_KINDS : kind);
    (*arr)[*n].count = 1;
    (*n)++;
}

static int pick_op(runner *R)
{
    double x = bench_rng_double(&R->model.rng) * R->cum_ratio[R->p->n_ops - 1];
    for (int i = 0; i < R->p->n_ops; i++)
        if (x < R->cum_ratio[i])
            return i;
    return R->p->n_ops - 1;
}

static void on_done(void *arg, const bc_result *resp);

static int send_req(runner *R, req *q)
{
    bc_async *c = R->conns[q->conn];
    return bc_async_send(c, q->opcode, q->msg.p, q->msg.len, on_done, q);
}

static void tick(runner *R, uint64_t now)
{
    if (now < R->warm_end_ns || now - R->last_tick_ns < 1000000000ull)
        return;
    double dt = (double)(now - R->last_tick_ns) / 1e9;
    bench_result *res = R->res;
    if (res->n_ticks == R->ticks_cap) {
        R->ticks_cap = R->ticks_cap ? R->ticks_cap * 2 : 64;
        res->ticks = cs_realloc(res->ticks, sizeof(bench_tick) * (size_t)R->ticks_cap);
    }
    bench_tick *t = &res->ticks[res->n_ticks++];
    t->t_s = (double)(now - R->warm_end_ns) / 1e9;
    t->ops_per_s = (double)R->tick_ops / dt;
    t->p50_ns = bench_hist_pct(&R->tick_hist, 50);
    t->p99_ns = bench_hist_pct(&R->tick_hist, 99);
    t->max_ns = R->tick_hist.max_ns;
    if (!R->o->quiet)
        fprintf(stderr, "  %-14s %6.0fs %10.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  errors %llu\n", R->p->name,
                t->t_s, t->ops_per_s, t->p50_ns / 1e6, t->p99_ns / 1e6, (unsigned long long)res->total_errors);
    bench_hist_init(&R->tick_hist);
    R->tick_ops = 0;
    R->last_tick_ns = now;
}

static bool may_issue(runner *R, uint64_t now)
{
    if (R->stopping)
        return false;
    if (R->max_ops && R->issued >= R->max_ops)
        return false;
    if (!R->max_ops && now >= R->end_ns)
        return false;
    return true;
}

/* Build and send one op on connection ci with the given intended start. */
static void req_put(runner *R, req *q)
{
    q->next_free = R->free_reqs;
    R->free_reqs = q;
}

static bool issue(runner *R, int ci, uint64_t start_ns)
{
    req *q = R->free_reqs;
    if (!q)
        return false;     /* cannot happen: the pool covers every slot */
    R->free_reqs = q->next_free;
    q->op = pick_op(R);
    q->conn = ci;
    q->start_ns = start_ns;
    cs_buf_reset(&q->msg);
    q->pages_left = R->op_pages[q->op];
    q->rows = 0;
    if (R->route.n_hosts <= 1) {
        /* one host: build straight into the connection's output */
        bc_async *c = R->conns[ci];
        size_t body;
        cs_buf *b = bc_async_begin(c, &body);
        if (!b) {
            req_put(R, q);
            return false;
        }
        if (bench_model_build(&R->model, q->op, b, &q->opcode, &q->flags_off, &q->pend)) {
            bc_async_abort(c);
            req_put(R, q);
            return false;
        }
        q->cursor = R->model.last_cursor;
        if (q->pages_left > 1) {   /* kept to ask for the next pages */
            cs_buf_put(&q->msg, b->p + body, b->len - body);
            q->flags_off -= body;
            q->base_len = q->msg.len;
        }
        if (bc_async_commit(c, q->opcode, on_done, q)) {
            req_put(R, q);
            return false;
        }
        R->issued++;
        R->inflight++;
        return true;
    }
    if (bench_model_build(&R->model, q->op, &q->msg, &q->opcode, &q->flags_off, &q->pend)) {
        req_put(R, q);
        return false;
    }
    q->cursor = R->model.last_cursor;
    int64_t tok;
    if (R->route.n_hosts > 1 && bench_model_last_token(&R->model, &tok)) {
        /* token-aware: the least busy connection to the partition's owner */
        int h = bench_route_owner(&R->route, tok), best = -1;
        for (int i = 0; i < R->n_conns; i++)
            if (R->conn_host[i] == h && !bc_async_broken(R->conns[i]) &&
                (best < 0 || bc_async_inflight(R->conns[i]) < bc_async_inflight(R->conns[best])))
                best = i;
        if (best >= 0) {
            q->conn = best;
            R->res->routed_ops++;
        }
    }
    q->base_len = q->msg.len;
    if (send_req(R, q)) {
        req_put(R, q);
        return false;
    }
    R->issued++;
    R->inflight++;
    return true;
}

static bool issue_due(runner *R, uint64_t now, int prefer);

/*
 * Fixed-rate pacing.  libuv timers have millisecond resolution, so with only
 * the 1 ms timer an op due between two ticks (and no completion to pick it
 * up) left up to a millisecond late, and that delay was counted as the
 * server's latency (latencies are measured from the intended time).  A
 * periodic timerfd (nanosecond resolution, in the same loop through
 * uv_poll) ticks at the ops' intended times: period 1/rate rounded up, or
 * PACE_MIN_NS at higher rates (then each tick issues every op due by then),
 * phased on the next op.  A tick costs one read (the expiration count),
 * where re-arming a one-shot timer for every op cost a timerfd_settime,
 * which reprograms the hrtimer (a VM exit here).  The pacer runs only while
 * a slot is free: with every slot busy the completions issue the due ops and
 * a tick could send nothing, so it is stopped, and started again, phased on
 * the next op, when a completion leaves a slot free and nothing due.  It is
 * also re-phased when its ticks drift more than PACE_TOL_NS after the ops'
 * times (the period is rounded up to whole ns) or when completions issued
 * ops ahead of it, so that ticks would come with nothing to send.
 *
 * PACE_MIN_NS is 100 us: every wake-up of the client costs it several
 * microseconds of kernel time here (a 2-vCPU VM whose idle vCPUs halt), so
 * at 60k/s a tick per op (every 17 us) kept the client ~95% busy (7.8-8.2 s
 * of system time in a 10 s run) and its own queueing showed as latency;
 * ticks every 100 us, each issuing the ~6 ops due, took 5.2-6.1 s and the
 * p50 went from 0.15-0.38 ms to 0.12 ms, although an op may now leave up
 * to 100 us after its time (counted in its latency, as before).
 */
#define PACE_MIN_NS 100000u
#define PACE_TOL_NS 2000u

static uint64_t intended_ns(const runner *R, uint64_t i)
{
    return R->t0_ns + (uint64_t)((double)i * R->ns_per_op);
}

static void pacer_set(runner *R, uint64_t first_ns)
{
    struct itimerspec its = { { 0, 0 }, { 0, 0 } };
    if (first_ns) {
        its.it_value.tv_sec = (time_t)(first_ns / 1000000000u);
        its.it_value.tv_nsec = (long)(first_ns % 1000000000u);
        its.it_interval.tv_sec = (time_t)(R->pace_period_ns / 1000000000u);
        its.it_interval.tv_nsec = (long)(R->pace_period_ns % 1000000000u);
    }
    timerfd_settime(R->pacer_fd, TFD_TIMER_ABSTIME, &its, NULL);
    R->pace_next_ns = first_ns;
}

/* After issue_due: keep the pacer ticking on the next op while a slot is
 * free and the run goes on, else stop it. */
static void pacer_arm(runner *R, uint64_t now, bool slot_free)
{
    if (R->pacer_fd < 0)
        return;
    if (!slot_free || R->stopping || !may_issue(R, now)) {
        if (R->pace_next_ns)
            pacer_set(R, 0);
        return;
    }
    uint64_t t = intended_ns(R, R->issued), e = R->pace_next_ns, p = R->pace_period_ns;
    if (!e) {
        pacer_set(R, t);
        return;
    }
    /* the first tick at or after t, and the ticks before it (sending nothing) */
    uint64_t early = e < t ? (t - e + p - 1) / p : 0;
    uint64_t late = e + early * p - t;
    if (early > 1 || late > R->pace_tol_ns)
        pacer_set(R, t);
}

static void pacer_close(runner *R)
{
    if (R->pacer_fd < 0)
        return;
    uv_poll_stop(&R->pacer);
    uv_close((uv_handle_t *)&R->pacer, NULL);
    close(R->pacer_fd);
    R->pacer_fd = -1;
}

static void maybe_finish(runner *R, uint64_t now)
{
    if (R->inflight == 0 && (R->stopping || !may_issue(R, now))) {
        R->stopping = true;
        uv_timer_stop(&R->timer);
        for (int i = 0; i < R->n_conns; i++)
            bc_async_close(R->conns[i]);
        uv_close((uv_handle_t *)&R->timer, NULL);
        pacer_close(R);
    }
}

static void on_done(void *arg, const bc_result *resp)
{
    req *q = arg;
    runner *R = q->R;
    uint64_t now = resp->recv_ns;
    bench_result *res = R->res;
    bool ok = resp->opcode == OP_RESULT;
    if (q->cursor >= 0)
        bench_model_cursor_done(&R->model, q->cursor, ok, resp->paging_state, resp->ps_len);
    if (ok)
        q->rows += (uint64_t)resp->n_rows;
    if (ok && q->pages_left > 1 && resp->paging_state && resp->ps_len >= 0 && !R->stopping) {
        /* next page, same op: flags |= PAGING_STATE, append the state */
        q->pages_left--;
        q->msg.p[q->flags_off] |= 0x08;
        q->msg.len = q->base_len;
        cs_buf_put_bytes(&q->msg, resp->paging_state, resp->ps_len);
        if (!send_req(R, q))
            return;
        ok = false;
    }
    /* the partition picture counts what the server acknowledged, warm-up
     * included (the server holds those writes too); a refused batch adds
     * none of its rows */
    if (ok)
        bench_picture_ack(&R->model.pic, &q->pend);
    bool measured = q->start_ns >= R->warm_end_ns;
    bench_op_result *op = &res->ops[q->op];
    if (measured) {
        if (ok) {
            op->ok++;
            op->rows += q->rows;
            res->total_ok++;
            bench_hist_record(&op->hist, now - q->start_ns);
            bench_hist_record(&R->tick_hist, now - q->start_ns);
            R->tick_ops++;
        } else {
            op->errors++;
            res->total_errors++;
            char kind[160];
            snprintf(kind, sizeof(kind), "%s: 0x%04x %.100s", R->p->op_names[q->op], resp->err_code & 0xFFFF,
                     resp->err_msg);
            add_kind(&res->errors, &res->n_errors, kind);
        }
        for (int i = 0; i < resp->n_warnings; i++) {
            char kind[160];
            snprintf(kind, sizeof(kind), "%s: %.120s", R->p->op_names[q->op], resp->warnings[i]);
            add_kind(&res->warnings, &res->n_warnings, kind);
        }
    }
    R->completed++;
    R->inflight--;
    int ci = q->conn;
    req_put(R, q);
    tick(R, now);
    if (R->o->rate <= 0 && may_issue(R, now) && !bc_async_broken(R->conns[ci]))
        issue(R, ci, now);
    else if (R->o->rate > 0 && !R->stopping)
        pacer_arm(R, now, issue_due(R, now, ci));
    maybe_finish(R, now);
}

static bool slot_free(runner *R, int ci, int cap)
{
    return !bc_async_broken(R->conns[ci]) && bc_async_inflight(R->conns[ci]) < cap;
}

/* Fixed-rate mode: issue every op that is due and has a free slot; returns
 * whether a slot is still free (false: the ops left due wait for
 * completions).  Called from each completion (prefer: its connection, so a
 * connection freed between two pacer wake-ups takes the next due op at
 * once), from the pacer and from the 1 ms timer.  Several due ops fill one
 * connection's free slots before moving on, so they leave in one write. */
static bool issue_due(runner *R, uint64_t now, int prefer)
{
    int cap = R->o->concurrency;
    while (may_issue(R, now)) {
        uint64_t intended = intended_ns(R, R->issued);
        if (intended > now)
            return true;
        int ci = -1;
        if (prefer >= 0 && slot_free(R, prefer, cap)) {
            ci = prefer;
        } else if (slot_free(R, R->fill_conn, cap)) {
            ci = R->fill_conn;
        } else {
            for (int tried = 0; tried < R->n_conns; tried++) {
                int c = R->next_conn++ % R->n_conns;
                if (slot_free(R, c, cap)) {
                    ci = R->fill_conn = c;
                    break;
                }
            }
        }
        if (ci < 0)
            return false; /* all slots busy: the op stays due, its latency keeps growing */
        if (!issue(R, ci, intended))
            return false;
    }
    return true;
}

static void on_pacer(uv_poll_t *h, int status, int events)
{
    (void)status; (void)events;
    runner *R = h->data;
    uint64_t ticks;
    if (read(R->pacer_fd, &ticks, sizeof ticks) == (ssize_t)sizeof ticks && R->pace_next_ns)
        R->pace_next_ns += ticks * R->pace_period_ns;
    uint64_t now = cs_mono_ns();
    bool free_slot = R->stopping ? false : issue_due(R, now, -1);
    pacer_arm(R, now, free_slot);
}

static void on_timer(uv_timer_t *t)
{
    runner *R = t->data;
    uint64_t now = cs_mono_ns();
    tick(R, now);
    if (R->o->rate > 0 && !R->stopping)
        pacer_arm(R, now, issue_due(R, now, -1));
    maybe_finish(R, now);
}

static void start_load(runner *R)
{
    R->t0_ns = cs_mono_ns();
    R->warm_end_ns = R->t0_ns + (uint64_t)(R->o->warmup_s * 1e9);
    R->last_tick_ns = R->warm_end_ns;
    R->end_ns = R->warm_end_ns + (uint64_t)(R->o->duration_s * 1e9);
    R->started = true;
    R->ns_per_op = R->o->rate > 0 ? 1e9 / R->o->rate : 0;
    R->pace_period_ns = (uint64_t)ceil(R->ns_per_op);
    R->pace_tol_ns = PACE_TOL_NS;
    if (R->pace_period_ns < PACE_MIN_NS) {
        R->pace_period_ns = PACE_MIN_NS;   /* ticks between ops: any lateness below a period is expected */
        R->pace_tol_ns = PACE_MIN_NS;
    }
    uv_timer_start(&R->timer, on_timer, 1, 1);
    if (R->o->rate > 0) {
        R->pacer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (R->pacer_fd >= 0 && uv_poll_init(&R->loop, &R->pacer, R->pacer_fd) == 0) {
            R->pacer.data = R;
            uv_poll_start(&R->pacer, UV_READABLE, on_pacer);
        } else if (R->pacer_fd >= 0) {
            close(R->pacer_fd);
            R->pacer_fd = -1;
        }
    }
    if (R->o->rate > 0)
        pacer_arm(R, R->t0_ns, issue_due(R, R->t0_ns, -1));
    else
        for (int i = 0; i < R->n_conns; i++)
            for (int k = 0; k < R->o->concurrency && may_issue(R, R->t0_ns); k++)
                issue(R, i, cs_mono_ns());
}

static void on_ready(bc_async *c, int status, void *arg)
{
    runner *R = arg;
    if (status) {
        R->n_failed++;
        snprintf(R->err, sizeof(R->err), "connection to %s:%d failed", R->o->host, R->o->port);
    } else {
        R->n_ready++;
    }
    if (R->n_ready + R->n_failed == R->n_conns) {
        if (R->n_failed) {
            R->stopping = true;
            for (int i = 0; i < R->n_conns; i++)
                bc_async_close(R->conns[i]);
            uv_close((uv_handle_t *)&R->timer, NULL);
        } else {
            start_load(R);
        }
    }
}

int bench_run(bench_profile *p, const bench_opts *o, bench_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (o->ops && bench_profile_set_ops(p, o->ops, err, errlen))
        return -1;
    bc_sync sc;
    if (bc_sync_connect(&sc, o->host, o->port, o->user, o->pass)) {
        snprintf(err, errlen, "%s", sc.err);
        return -1;
    }
    runner *R = cs_calloc(1, sizeof(*R));
    R->pacer_fd = -1;
    R->p = p;
    R->o = o;
    R->res = out;
    int rc = bench_model_init(&R->model, p, &sc, err, errlen);
    if (rc == 0) {
        bench_route_discover(&R->route, &sc, o->host);
        int64_t *toks = cs_calloc((size_t)R->route.n_ring + 1, sizeof(int64_t));
        for (int i = 0; i < R->route.n_ring; i++)
            toks[i] = R->route.ring[i].token;
        bench_model_set_ring(&R->model, toks, R->route.n_ring);
        cs_free(toks);
        bool insert_only = p->n_ops == 1 && !strcmp(p->op_names[0], "insert");
        rc = bench_model_set_seeds(&R->model, o->pop ? o->pop : p->pop, insert_only, o->n_ops, err, errlen);
    }
    bc_sync_close(&sc);
    if (rc) {
        bench_model_destroy(&R->model);
        cs_free(R);
        return -1;
    }
    if (o->seed)
        bench_rng_seed(&R->model.rng, o->seed);
    R->model.pic.top_n = o->top;
    R->cum_ratio = cs_calloc((size_t)p->n_ops, sizeof(double));
    double acc = 0;
    for (int i = 0; i < p->n_ops; i++)
        R->cum_ratio[i] = (acc += p->op_ratios[i] > 0 ? p->op_ratios[i] : 0);
    R->op_pages = cs_calloc((size_t)p->n_ops, sizeof(int));
    for (int i = 0; i < p->n_ops; i++) {
        R->op_pages[i] = 1;
        for (int k = 0; k < p->n_queries; k++)
            if (!strcmp(p->queries[k].name, p->op_names[i]))
                R->op_pages[i] = p->queries[k].pages;
    }
    out->scheme = cs_strdup(p->name);
    out->description = cs_strdup(p->description ? p->description : "");
    out->table = cs_strdup(R->model.table_q);
    out->target_rate = o->rate;
    out->n_ops = p->n_ops;
    out->ops = cs_calloc((size_t)p->n_ops, sizeof(bench_op_result));
    for (int i = 0; i < p->n_ops; i++) {
        out->ops[i].name = cs_strdup(p->op_names[i]);
        bench_hist_init(&out->ops[i].hist);
    }
    bench_hist_init(&R->tick_hist);
    R->max_ops = (uint64_t)o->n_ops;
    uv_loop_init(&R->loop);
    uv_timer_init(&R->loop, &R->timer);
    R->timer.data = R;
    /* --connections per host; a connection may carry twice its share so
     * routing can favour the owner's connections without stalling */
    int n_hosts = R->route.n_hosts ? R->route.n_hosts : 1;
    R->n_conns = o->connections * n_hosts;
    R->conns = cs_calloc((size_t)R->n_conns, sizeof(bc_async *));
    R->conn_host = cs_calloc((size_t)R->n_conns, sizeof(int));
    out->hosts = n_hosts;
    int per_conn = o->concurrency * (n_hosts > 1 ? 2 : 1);
    size_t n_reqs = (size_t)R->n_conns * (size_t)(per_conn > 32767 ? 32767 : per_conn < 1 ? 1 : per_conn);
    R->reqs = cs_calloc(n_reqs, sizeof(req));
    for (size_t i = n_reqs; i-- > 0;) {
        R->reqs[i].R = R;
        cs_buf_init(&R->reqs[i].msg);
        bench_pending_init(&R->reqs[i].pend);
        req_put(R, &R->reqs[i]);
    }
    for (int i = 0; i < R->n_conns; i++) {
        R->conn_host[i] = i / o->connections;
        const char *host = R->route.n_hosts ? R->route.hosts[R->conn_host[i]] : o->host;
        bc_async_open(&R->loop, host, o->port, per_conn, o->user, o->pass, on_ready, R, &R->conns[i]);
    }
    uv_run(&R->loop, UV_RUN_DEFAULT);
    uv_loop_close(&R->loop);
    uint64_t end = cs_mono_ns();
    for (size_t i = 0; i < n_reqs; i++) {
        cs_buf_destroy(&R->reqs[i].msg);
        bench_pending_destroy(&R->reqs[i].pend);
    }
    cs_free(R->reqs);
    rc = 0;
    if (R->n_failed) {
        snprintf(err, errlen, "%s", R->err);
        rc = -1;
    }
    out->elapsed_s = R->started && end > R->warm_end_ns ? (double)(end - R->warm_end_ns) / 1e9 : 0;
    if (out->elapsed_s > 0) {
        out->throughput = (double)out->total_ok / out->elapsed_s;
        for (int i = 0; i < p->n_ops; i++)
            out->ops[i].throughput = (double)out->ops[i].ok / out->elapsed_s;
    }
    /* partition picture and ring */
    bench_picture *pic = &R->model.pic;
    bench_picture_summary(pic, o->top, &out->parts);
    out->top_keys = cs_calloc((size_t)out->parts.n_top + 1, sizeof(char *));
    for (int i = 0; i < out->parts.n_top; i++) {
        uint32_t kl = out->parts.top_key_len[i];
        char *s = cs_malloc(kl * 2 + 3);
        strcpy(s, "0x");
        for (uint32_t k = 0; k < kl; k++)
            sprintf(s + 2 + k * 2, "%02x", out->parts.top_key[i][k]);
        out->top_keys[i] = s;
    }
    out->size_hist_rows = cs_calloc(40, sizeof(uint64_t));
    out->size_hist_bytes = cs_calloc(40, sizeof(uint64_t));
    size_t np = 0;
    int64_t *tokens = cs_calloc(pic->n_parts + 1, sizeof(int64_t));
    double *w_ops = cs_calloc(pic->n_parts + 1, sizeof(double));
    double *w_rows = cs_calloc(pic->n_parts + 1, sizeof(double));
    for (size_t i = 0; i < pic->parts_cap; i++) {
        part_stat *ps = &pic->parts[i];
        if (!ps->hash) continue;
        tokens[np] = ps->token;
        w_ops[np] = (double)ps->ops;
        w_rows[np] = (double)ps->rows;
        np++;
        if (ps->rows) {
            int b = 63 - __builtin_clzll(ps->rows);
            out->size_hist_rows[b < 40 ? b : 39]++;
            b = ps->bytes ? 63 - __builtin_clzll(ps->bytes) : 0;
            out->size_hist_bytes[b < 40 ? b : 39]++;
        }
    }
    bench_ring_simulate2(tokens, w_ops, w_rows, np, o->nodes, o->vnodes, o->rf, 7, &out->ring_ops, &out->ring_rows);
    cs_free(tokens);
    cs_free(w_ops);
    cs_free(w_rows);
    bench_model_destroy(&R->model);
    cs_free(R->cum_ratio);
    cs_free(R->op_pages);
    cs_free(R->conns);
    cs_free(R->conn_host);
    bench_route_destroy(&R->route);
    cs_free(R);
    return rc;
}

void bench_result_destroy(bench_result *r)
{
    cs_free(r->scheme);
    cs_free(r->description);
    cs_free(r->table);
    for (int i = 0; i < r->n_ops; i++)
        cs_free(r->ops[i].name);
    cs_free(r->ops);
    for (int i = 0; i < r->n_errors; i++)
        cs_free(r->errors[i].kind);
    cs_free(r->errors);
    for (int i = 0; i < r->n_warnings; i++)
        cs_free(r->warnings[i].kind);
    cs_free(r->warnings);
    cs_free(r->ticks);
    for (int i = 0; r->top_keys && i < r->parts.n_top; i++)
        cs_free(r->top_keys[i]);
    cs_free(r->top_keys);
    bench_part_summary_destroy(&r->parts);
    cs_free(r->size_hist_rows);
    cs_free(r->size_hist_bytes);
    bench_ring_result_destroy(&r->ring_ops);
    bench_ring_result_destroy(&r->ring_rows);
    memset(r, 0, sizeof(*r));
}
