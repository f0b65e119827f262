/*
 * trace.c: request tracing (see trace.h): the events of the traced request
 * that is running, then the recent sessions in memory, read through the
 * virtual tables system_traces.sessions and system_traces.events.
 *
 * Events are recorded where Cassandra's code traces them (parsing,
 * preparing, the single-partition or range read with its sstables and
 * cells, the commit log append and memtable adds of a write), each with
 * its real time since the request arrived and the thread pool Cassandra
 * would run it on (Native-Transport-Requests, ReadStage, MutationStage).
 */
#include "cql/trace.h"
#include "common/alloc.h"
#include "cql/cql_int.h"
#include "cql/schema_int.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_EVENTS 48             /* per session; later ones are dropped */

typedef struct trace_event {
    cs_uuid id;                   /* timeuuid at the event's time */
    const char *activity;         /* in the run's pool, then in the session's block */
    const char *thread;           /* static string */
    int32_t elapsed_us;
} trace_event;

/* The traced request running on this thread (cql_trace_begin ..
 * cql_trace_record), or NULL: cql__trace is a no-op then. */
#define POOL_BYTES 32768          /* the events' text, per session; a line is cut at what is left */
#define MAX_ACTIVITY 4096         /* one line's text (a CAS proposal prints the update) */

typedef struct trace_run {
    int64_t started_us;
    uint64_t start_ns;
    trace_event ev[MAX_EVENTS];
    int n_ev;
    char pool[POOL_BYTES];
    size_t pool_used;
} trace_run;
static _Thread_local trace_run *tl_run;

typedef struct trace_session {
    cs_uuid id;
    char client[64];
    char request[64];
    char *query;
    int64_t started_us;
    int32_t duration_us;
    int consistency;
    trace_event *ev; int n_ev;    /* cs_malloc'd, with the events' text after them */
} trace_session;

typedef struct trace_store {
    trace_session s[CQL_TRACE_KEEP];
    int next, n;
} trace_store;

static trace_store *store(cql_ctx *ctx, bool create)
{
    if (!ctx->traces && create)
        ctx->traces = cs_calloc(1, sizeof(trace_store));
    return ctx->traces;
}

const char *cql__consistency_name(int cl)
{
    const char *n = cl >= 0 && cl <= 10 ? cql_consistency_level_name((unsigned)cl) : NULL;   /* up to LOCAL_ONE */
    return n ? n : "ONE";
}

void cql_trace_begin(cql_ctx *ctx, int64_t started_us, uint64_t start_ns)
{
    /* one buffer: requests run one at a time under the execution lock */
    if (!ctx->trace_run)
        ctx->trace_run = cs_malloc(sizeof(trace_run));
    tl_run = ctx->trace_run;              /* NULL when out of memory: no events */
    if (tl_run) {
        tl_run->started_us = started_us;
        tl_run->start_ns = start_ns;
        tl_run->n_ev = 0;
        tl_run->pool_used = 0;
    }
}

bool cql__tracing(void)
{
    return tl_run != NULL;
}

static void add_event_at(trace_run *run, int64_t elapsed_us, const char *thread, const char *activity)
{
    if (run->n_ev >= MAX_EVENTS)
        return;
    trace_event *e = &run->ev[run->n_ev++];
    if (elapsed_us < 0)
        elapsed_us = 0;
    cs_uuid_timeuuid(&e->id, run->started_us + elapsed_us);
    size_t left = POOL_BYTES - run->pool_used, n = strlen(activity);
    if (n + 1 > left)
        n = left > 0 ? left - 1 : 0;
    char *d = run->pool + run->pool_used;
    if (left > 0) {
        memcpy(d, activity, n);
        d[n] = 0;
        run->pool_used += n + 1;
    } else {
        d = (char *)"";
    }
    e->activity = d;
    e->thread = thread;
    e->elapsed_us = (int32_t)(elapsed_us > INT32_MAX ? INT32_MAX : elapsed_us);
}

void cql__trace(const char *thread, const char *fmt, ...)
{
    trace_run *run = tl_run;
    if (!run)
        return;
    char a[MAX_ACTIVITY];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a, sizeof a, fmt, ap);
    va_end(ap);
    add_event_at(run, (int64_t)((cs_mono_ns() - run->start_ns) / 1000), thread, a);
}

void cql_trace_record(cql_ctx *ctx, const cql_trace_req *r, cs_uuid *session)
{
    trace_run *run = tl_run;
    tl_run = NULL;
    trace_store *st = store(ctx, true);
    if (!st) {
        cs_uuid_timeuuid(session, r->started_us);
        return;
    }
    trace_session *t = &st->s[st->next];
    cs_free(t->query);
    cs_free(t->ev);
    memset(t, 0, sizeof(*t));
    st->next = (st->next + 1) % CQL_TRACE_KEEP;
    if (st->n < CQL_TRACE_KEEP)
        st->n++;
    cs_uuid_timeuuid(&t->id, r->started_us);
    snprintf(t->client, sizeof(t->client), "%s", r->client ? r->client : "127.0.0.1");
    snprintf(t->request, sizeof(t->request), "%s", r->request);
    t->query = r->query ? cs_strndup(r->query, r->query_len) : NULL;
    t->started_us = r->started_us;
    t->duration_us = (int32_t)(r->duration_us > 0 ? r->duration_us : 1);
    t->consistency = r->consistency;
    /* cqlsh adds "Execute CQL3 query" and "Request complete" itself from
     * the session's start and duration */
    if (run && r->outcome) {
        char a[256];
        snprintf(a, sizeof a, "Request failed: %s", r->outcome);
        add_event_at(run, t->duration_us, CQL_TRACE_NTR, a);
    }
    size_t evb = run ? sizeof *t->ev * (size_t)run->n_ev : 0;
    if (run && run->n_ev > 0 && (t->ev = cs_malloc(evb + run->pool_used))) {
        memcpy(t->ev, run->ev, evb);
        char *text = (char *)t->ev + evb;
        memcpy(text, run->pool, run->pool_used);
        for (int i = 0; i < run->n_ev; i++)   /* the texts move with the events */
            if (run->ev[i].activity >= run->pool && run->ev[i].activity < run->pool + run->pool_used)
                t->ev[i].activity = text + (run->ev[i].activity - run->pool);
            else
                t->ev[i].activity = "";
        t->n_ev = run->n_ev;
    }
    *session = t->id;
}

void cql_trace_set_probability(cql_ctx *ctx, double p)
{
    atomic_store(&ctx->trace_probability, p);
}

double cql_trace_probability(cql_ctx *ctx)
{
    return atomic_load(&ctx->trace_probability);
}

/* ThreadLocalRandom.nextDouble() < p: a per-thread xorshift64*, seeded
 * from the clock and the thread's address on first use (no context: no). */
bool cql_trace_sampled(cql_ctx *ctx)
{
    double p = ctx ? atomic_load_explicit(&ctx->trace_probability, memory_order_relaxed) : 0;
    if (p <= 0)
        return false;
    static _Thread_local uint64_t x;
    if (!x)
        x = (cs_mono_ns() ^ (uint64_t)(uintptr_t)&x) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    double u = (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
    return u < p;
}

void cql_trace_free(cql_ctx *ctx)
{
    cs_free(ctx->trace_run);
    ctx->trace_run = NULL;
    trace_store *st = store(ctx, false);
    if (!st)
        return;
    for (int i = 0; i < CQL_TRACE_KEEP; i++) {
        cs_free(st->s[i].query);
        cs_free(st->s[i].ev);
    }
    cs_free(st);
    ctx->traces = NULL;
}

/* ---------------------------------------------------------------- virtual tables */

typedef int (*emit_fn)(void *arg, const uint8_t **vals, const int32_t *lens);

static int col_index(const sch_table *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++)
        if (!strcmp(t->cols[i].name, name))
            return i;
    return -1;
}

static void put(const sch_table *t, const uint8_t **vals, int32_t *lens, const char *col, const void *p, int32_t n)
{
    int i = col_index(t, col);
    if (i >= 0) {
        vals[i] = p;
        lens[i] = n;
    }
}

int cql__trace_sessions_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    trace_store *st = store(ctx, false);
    if (!st || t->n_cols > 16)
        return 0;
    for (int k = 0; k < st->n; k++) {
        trace_session *s = &st->s[k];
        const uint8_t *vals[16] = { 0 };
        int32_t lens[16];
        for (int i = 0; i < 16; i++) lens[i] = -1;
        uint8_t client[4] = { 127, 0, 0, 1 }, started[8], duration[4], port[4];
        cs_st64(started, (uint64_t)(s->started_us / 1000));
        cs_st32(duration, (uint32_t)s->duration_us);
        cs_st32(port, 7000);
        /* parameters map<text, text>: consistency_level and query */
        cs_buf params;
        cs_buf_init(&params);
        const char *cl = cql__consistency_name(s->consistency);
        cs_buf_put_u32(&params, s->query ? 2 : 1);
        cs_buf_put_u32(&params, 17);
        cs_buf_put(&params, "consistency_level", 17);
        cs_buf_put_u32(&params, (uint32_t)strlen(cl));
        cs_buf_put(&params, cl, strlen(cl));
        if (s->query) {
            cs_buf_put_u32(&params, 5);
            cs_buf_put(&params, "query", 5);
            cs_buf_put_u32(&params, (uint32_t)strlen(s->query));
            cs_buf_put(&params, s->query, strlen(s->query));
        }
        put(t, vals, lens, "session_id", s->id.b, 16);
        put(t, vals, lens, "client", client, 4);
        put(t, vals, lens, "command", "QUERY", 5);
        put(t, vals, lens, "coordinator", client, 4);
        put(t, vals, lens, "coordinator_port", port, 4);
        put(t, vals, lens, "duration", duration, 4);
        put(t, vals, lens, "parameters", params.p, (int32_t)params.len);
        put(t, vals, lens, "request", s->request, (int32_t)strlen(s->request));
        put(t, vals, lens, "started_at", started, 8);
        int rc = params.err ? params.err : emit(arg, vals, lens);
        cs_buf_destroy(&params);
        if (rc)
            return rc;
    }
    return 0;
}

int cql__trace_events_rows(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    trace_store *st = store(ctx, false);
    if (!st || t->n_cols > 16)
        return 0;
    for (int k = 0; k < st->n; k++) {
        trace_session *s = &st->s[k];
        for (int e = 0; e < s->n_ev; e++) {
            const uint8_t *vals[16] = { 0 };
            int32_t lens[16];
            for (int i = 0; i < 16; i++) lens[i] = -1;
            uint8_t src[4] = { 127, 0, 0, 1 }, elapsed[4], port[4];
            cs_st32(elapsed, (uint32_t)s->ev[e].elapsed_us);
            cs_st32(port, 7000);
            put(t, vals, lens, "session_id", s->id.b, 16);
            put(t, vals, lens, "event_id", s->ev[e].id.b, 16);
            put(t, vals, lens, "activity", s->ev[e].activity, (int32_t)strlen(s->ev[e].activity));
            put(t, vals, lens, "source", src, 4);
            put(t, vals, lens, "source_elapsed", elapsed, 4);
            put(t, vals, lens, "source_port", port, 4);
            const char *th = s->ev[e].thread ? s->ev[e].thread : CQL_TRACE_NTR;
            put(t, vals, lens, "thread", th, (int32_t)strlen(th));
            int rc = emit(arg, vals, lens);
            if (rc)
                return rc;
        }
    }
    return 0;
}
