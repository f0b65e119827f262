/*
 * admin.c: the HTTP/1.0 admin endpoint (see admin.h).  One request per
 * connection: read until the blank line (at most 8 KiB), answer, close.
 * Everything runs on the loop thread except the flushes and compactions of
 * POST /flush and /compact (see "flush/compact" below).
 */
#include "server/admin.h"
#include "server/msg.h"
#include "server/nodetool.h"
#include "cql/metrics.h"
#include "cql/schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/log.h"
#include "common/util.h"

#define ADMIN_MAX_REQUEST 65536   /* an import of a hundred snapshot directories fits (tools/tool.c: TOOL_MAX_TARGET) */

typedef struct admin_conn {
    uv_tcp_t tcp;                    /* first member */
    admin *a;
    char buf[ADMIN_MAX_REQUEST];
    size_t len;
    bool answered;
    uv_write_t wr;
    cs_buf resp;
} admin_conn;

static void on_conn_close(uv_handle_t *h)
{
    admin_conn *ac = (admin_conn *)h;
    cs_buf_destroy(&ac->resp);
    cs_free(ac);
}

static void on_written(uv_write_t *req, int status)
{
    admin_conn *ac = req->data;
    (void)status;
    uv_close((uv_handle_t *)&ac->tcp, on_conn_close);
}

static void respond(admin_conn *ac, int code, const char *ctype, const char *body, size_t len)
{
    const char *reason = code == 200 ? "OK" : code == 404 ? "Not Found"
                       : code == 400 ? "Bad Request" : code == 409 ? "Conflict" : "Internal Server Error";
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr,
                     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n", code, reason, ctype, len);
    cs_buf_put(&ac->resp, hdr, (size_t)n);
    cs_buf_put(&ac->resp, body, len);
    ac->answered = true;
    uv_read_stop((uv_stream_t *)&ac->tcp);
    if (ac->resp.err) {
        uv_close((uv_handle_t *)&ac->tcp, on_conn_close);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)ac->resp.p, (unsigned)ac->resp.len);
    ac->wr.data = ac;
    if (uv_write(&ac->wr, (uv_stream_t *)&ac->tcp, &b, 1, on_written) != 0)
        uv_close((uv_handle_t *)&ac->tcp, on_conn_close);
}

static void respond_text(admin_conn *ac, int code, const char *text)
{
    respond(ac, code, "text/plain; charset=utf-8", text, strlen(text));
}

/* A failed request: the error's message if it has one, else rc's. */
static void respond_failure(admin_conn *ac, int code, int rc, const cs_error *e)
{
    char msg[1100];
    snprintf(msg, sizeof msg, "%s\n", cs_error_isset(e) ? e->msg : cs_strerror(rc));
    respond_text(ac, code, msg);
}

/* Copy query parameter `name` from "a=1&b=2" into out (no %-decoding needed
 * for CQL identifiers).  Returns true if present. */
static bool query_param(const char *q, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = q; p && *p;) {
        if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
            const char *v = p + nl + 1;
            size_t n = strcspn(v, "&");
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
        p = strchr(p, '&');
        if (p)
            p++;
    }
    out[0] = '\0';
    return false;
}

/* ---------------------------------------------------------------- flush/compact
 *
 * POST /flush and /compact: the names are resolved and the storage tables
 * pinned here on the loop (cql_admin_resolve reads the catalog), the flush
 * or major compaction runs on libuv's thread pool (uv_queue_work), and the
 * reply is sent from the after-work callback back on the loop once the work
 * is done, so `nodetool flush ks t` still returns with the sstables on disk
 * while the loop keeps serving CQL.  The pins keep a table dropped meanwhile
 * valid (storage.h st_table_pin; flushing a dropped table is a no-op);
 * a->jobs lists the jobs in flight for admin_close and admin_busy. */
typedef struct admin_job {
    uv_work_t req;                   /* first member */
    admin_conn *ac;
    admin *a;
    bool compact;
    nodetool_job *nt;                /* a nodetool verb's work (GET /nodetool/...), or NULL: flush/compact */
    cql_admin_target *targets;
    int n_targets;
    int rc;
    cs_error e;
    struct admin_job *prev, *next;   /* a->jobs */
} admin_job;

/* Test hook (CASSETTE_TEST_ADMIN_HOLD=PATH): the worker creates PATH.held,
 * then waits until PATH exists (or the endpoint closes, or 120 s), so tests
 * can act while a flush/compact is in progress, by order of events. */
static void test_hold(admin *a)
{
    if (!a->test_hold[0])
        return;
    char held[sizeof a->test_hold + 8];
    snprintf(held, sizeof held, "%s.held", a->test_hold);
    FILE *f = fopen(held, "w");
    if (f)
        fclose(f);
    for (int i = 0; i < 24000 && !atomic_load(&a->closing) && access(a->test_hold, F_OK) != 0; i++) {
        struct timespec ts = { 0, 5 * 1000000L };
        nanosleep(&ts, NULL);
    }
}

static void job_work(uv_work_t *req)
{
    admin_job *j = (admin_job *)req;
    test_hold(j->a);
    if (j->nt)
        nodetool_job_work(j->nt);
    else
        j->rc = cql_admin_run(j->targets, j->n_targets, j->compact, &j->e);
}

static void poll_nodetool(admin_conn *ac, nodetool_job *nt);

static void job_done(uv_work_t *req, int status)
{
    admin_job *j = (admin_job *)req;
    admin *a = j->a;
    if (j->prev)
        j->prev->next = j->next;
    else
        a->jobs = j->next;
    if (j->next)
        j->next->prev = j->prev;
    a->n_jobs--;
    if (j->nt && status != UV_ECANCELED && !atomic_load(&a->closing)) {
        srv_exec_lock(a->server);
        bool more = nodetool_job_continue(j->nt, a->server);
        srv_exec_unlock(a->server);
        if (more) {   /* work on the loop follows (import: index builds) */
            poll_nodetool(j->ac, j->nt);
            cs_free(j);
            return;
        }
    }
    if (j->nt) {
        cs_buf out;
        cs_buf_init(&out);
        int code = nodetool_job_finish(j->nt, status == UV_ECANCELED, &out);
        respond(j->ac, code, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
        cs_buf_destroy(&out);
        cs_free(j);
        return;
    }
    cql_admin_release(j->targets, j->n_targets);
    if (status == UV_ECANCELED) {
        respond_text(j->ac, 500, "nodetool: the server is shutting down\n");
    } else if (j->rc == 0) {
        respond_text(j->ac, 200, "");   /* nodetool flush/compact print nothing */
    } else {
        respond_failure(j->ac, 500, j->rc, &j->e);
    }
    cs_free(j);
}

/* POST /drain: nodetool drain as Cassandra's StorageService.drain: stop
 * the native transport first (no new writes), then flush every table, and
 * reply once the memtables are on disk.  The node stays up for nodetool
 * but never listens for clients again (enablebinary is refused); a second
 * drain is a no-op, as Cassandra's "Cannot drain node (did it already
 * happen?)". */
static void do_flush_compact(admin_conn *ac, bool compact, const char *query);

static void do_drain(admin_conn *ac)
{
    srv *s = ac->a->server;
    if (s->drained) {
        CS_WARN("Cannot drain node (did it already happen?)");
        respond_text(ac, 200, "");
        return;
    }
    srv_native_stop(s, true);
    do_flush_compact(ac, false, NULL);
}

/* A job queued: listed in a->jobs until job_done; the connection waits. */
static void job_track(admin_conn *ac, admin_job *j)
{
    admin *a = ac->a;
    j->next = a->jobs;
    if (a->jobs)
        a->jobs->prev = j;
    a->jobs = j;
    a->n_jobs++;
    ac->answered = true;               /* on_read ignores the connection until the reply */
    uv_read_stop((uv_stream_t *)&ac->tcp);
}

static void do_flush_compact(admin_conn *ac, bool compact, const char *query)
{
    static char ks[256], tables[ADMIN_MAX_REQUEST];   /* the admin loop's own */
    static const char *names[NODETOOL_MAX_ARGS];
    query_param(query, "ks", ks, sizeof ks);
    query_param(query, "table", tables, sizeof tables);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(tables, ",", &save); t && n < NODETOOL_MAX_ARGS; t = strtok_r(NULL, ",", &save))
        names[n++] = t;
    admin *a = ac->a;
    if (atomic_load(&a->closing)) {
        respond_text(ac, 500, "nodetool: the server is shutting down\n");
        return;
    }
    admin_job *j = cs_calloc(1, sizeof *j);
    if (!j) {
        respond_text(ac, 500, "out of memory\n");
        return;
    }
    cs_error_init(&j->e);
    int rc = cql_admin_resolve(a->server->cql, ks[0] ? ks : NULL, names, n, &j->targets, &j->n_targets, &j->e);
    if (rc == 0) {
        j->ac = ac;
        j->a = a;
        j->compact = compact;
        rc = uv_queue_work(a->loop, &j->req, job_work, job_done);
        if (rc != 0)
            cql_admin_release(j->targets, j->n_targets);
    }
    if (rc != 0) {
        respond_failure(ac, cs_error_isset(&j->e) && j->e.code == CS_ERR_INVALID ? 400 : 500, rc, &j->e);
        cs_free(j);
        return;
    }
    job_track(ac, j);
}

/* Run a nodetool verb's work (nodetool.h NODETOOL_ASYNC) on the thread
 * pool as a flush/compact job: the reply follows from job_done. */
static void queue_nodetool(admin_conn *ac, nodetool_job *nt)
{
    admin *a = ac->a;
    admin_job *j = atomic_load(&a->closing) ? NULL : cs_calloc(1, sizeof *j);
    if (j) {
        j->ac = ac;
        j->a = a;
        j->nt = nt;
        if (uv_queue_work(a->loop, &j->req, job_work, job_done) == 0) {
            job_track(ac, j);
            return;
        }
        cs_free(j);
    }
    cs_buf out;
    cs_buf_init(&out);
    int code = nodetool_job_finish(nt, true, &out);
    respond(ac, code, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
    cs_buf_destroy(&out);
}

static void metric(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void metric(cs_buf *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        cs_buf_put(b, line, (size_t)CS_MIN(n, (int)sizeof line - 1));
}

/* Prometheus text exposition format 0.0.4. */
/* Per-table series: request counts and latency histograms by operation
 * (cql/metrics.c), memtable and sstable figures, pending work (storage). */
static void table_metrics(cs_buf *b, srv *s)
{
    static const char *ops[] = { "read", "write", "scan" };
    int n_off;
    const uint64_t *off = cql_hist_offsets(CQL_HIST_TIMER, &n_off);
    sch_catalog *c = cql_ctx_catalog(s->cql);
    metric(b, "# TYPE cassette_table_requests_total counter\n");
    metric(b, "# TYPE cassette_table_latency_seconds histogram\n");
    metric(b, "# TYPE cassette_table_memtable_bytes gauge\n# TYPE cassette_table_sstables gauge\n");
    metric(b, "# TYPE cassette_table_sstable_bytes gauge\n# TYPE cassette_table_pending_flushes gauge\n");
    metric(b, "# TYPE cassette_table_pending_compactions gauge\n# TYPE cassette_table_compactions_total counter\n");
    for (int i = 0; i < sch_keyspace_count(c); i++) {
        sch_keyspace *k = sch_keyspace_at(c, i);
        if (k->is_virtual)
            continue;
        for (int j = 0; j < k->n_tables; j++) {
            sch_table *t = k->tables[j];
            if (!t->st)
                continue;
            const char *ks = k->name, *tb = t->name;
            st_table_stats st;
            if (st_table_stats_get(t->st, &st) == 0) {
                metric(b, "cassette_table_memtable_bytes{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.memtable_bytes);
                metric(b, "cassette_table_sstables{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.sstable_count);
                metric(b, "cassette_table_sstable_bytes{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.sstable_bytes);
                metric(b, "cassette_table_pending_flushes{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.pending_flushes);
                metric(b, "cassette_table_pending_compactions{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.pending_compactions);
                metric(b, "cassette_table_compactions_total{keyspace=\"%s\",table=\"%s\"} %llu\n", ks, tb,
                       (unsigned long long)st.compactions_done);
            }
            const cql_table_metrics *tm = cql_metrics_get(s->cql, t->id);
            if (!tm)
                continue;
            const cql_timer *lat[] = { &tm->reads, &tm->writes, &tm->scans };
            for (int o = 0; o < 3; o++) {
                const cql_timer *l = lat[o];
                metric(b, "cassette_table_requests_total{keyspace=\"%s\",table=\"%s\",op=\"%s\"} %llu\n", ks, tb,
                       ops[o], (unsigned long long)l->h.count);
                if (!l->h.count)
                    continue;
                /* every 6th bound of the Timer's buckets (µs, ~3x apart),
                 * cumulative plain counts (not decayed) */
                uint64_t cum = 0;
                for (int x = 0; x < n_off; x++) {
                    cum += l->h.plain[x];
                    if (x % 6 == 5)
                        metric(b, "cassette_table_latency_seconds_bucket{keyspace=\"%s\",table=\"%s\",op=\"%s\","
                                  "le=\"%g\"} %llu\n", ks, tb, ops[o], (double)off[x] / 1e6, (unsigned long long)cum);
                }
                metric(b, "cassette_table_latency_seconds_bucket{keyspace=\"%s\",table=\"%s\",op=\"%s\",le=\"+Inf\"} %llu\n",
                       ks, tb, ops[o], (unsigned long long)l->h.count);
                metric(b, "cassette_table_latency_seconds_sum{keyspace=\"%s\",table=\"%s\",op=\"%s\"} %.6f\n", ks, tb,
                       ops[o], (double)l->total_us / 1e6);
                metric(b, "cassette_table_latency_seconds_count{keyspace=\"%s\",table=\"%s\",op=\"%s\"} %llu\n", ks, tb,
                       ops[o], (unsigned long long)l->h.count);
            }
        }
    }
    st_compaction_info info[32];
    int n = st_compactions_list(s->eng, info, 32);
    metric(b, "# TYPE cassette_compaction_progress_bytes gauge\n");
    for (int i = 0; i < n; i++) {
        metric(b, "cassette_compaction_progress_bytes{keyspace=\"%s\",table=\"%s\",kind=\"%s\",of=\"done\"} %llu\n",
               info[i].ks, info[i].table, info[i].kind, (unsigned long long)info[i].done_bytes);
        metric(b, "cassette_compaction_progress_bytes{keyspace=\"%s\",table=\"%s\",kind=\"%s\",of=\"total\"} %llu\n",
               info[i].ks, info[i].table, info[i].kind, (unsigned long long)info[i].total_bytes);
    }
}

static void do_metrics(admin_conn *ac)
{
    const srv *s = ac->a->server;
    srv_stats sum;
    srv_stats_sum(s, &sum);
    const srv_stats *st = &sum;
    cs_buf b;
    cs_buf_init(&b);
    metric(&b, "# TYPE cassette_connections gauge\ncassette_connections %d\n", s->n_conns);
    metric(&b, "# TYPE cassette_loop_connections gauge\n");
    for (int i = 0; i < s->n_loops; i++)
        metric(&b, "cassette_loop_connections{loop=\"%d\"} %d\n", i,
               __atomic_load_n(&s->loops[i].n_conns, __ATOMIC_RELAXED));
    metric(&b, "# TYPE cassette_loop_requests_total counter\n");
    for (int i = 0; i < s->n_loops; i++)
        metric(&b, "cassette_loop_requests_total{loop=\"%d\"} %llu\n", i,
               (unsigned long long)__atomic_load_n(&s->loops[i].stats.requests, __ATOMIC_RELAXED));
    metric(&b, "# TYPE cassette_connections_total counter\ncassette_connections_total %llu\n",
           (unsigned long long)st->connections_total);
    metric(&b, "# TYPE cassette_connections_rejected_total counter\n"
           "cassette_connections_rejected_total %llu\n", (unsigned long long)st->connections_rejected);
    metric(&b, "# TYPE cassette_requests_total counter\ncassette_requests_total %llu\n",
           (unsigned long long)st->requests);
    metric(&b, "# TYPE cassette_requests_by_opcode_total counter\n");
    for (size_t i = 0; i < CS_ARRAY_LEN(st->by_opcode); i++)
        if (st->by_opcode[i])
            metric(&b, "cassette_requests_by_opcode_total{opcode=\"%s\"} %llu\n",
                   msg_opcode_name((uint8_t)i), (unsigned long long)st->by_opcode[i]);
    metric(&b, "# TYPE cassette_errors_total counter\ncassette_errors_total %llu\n",
           (unsigned long long)st->errors);
    metric(&b, "# TYPE cassette_protocol_errors_total counter\ncassette_protocol_errors_total %llu\n",
           (unsigned long long)st->protocol_errors);
    {   /* ClientRequest Timeouts (Read, RangeSlice, Write): requests ended at their timeout */
        const cql_node_metrics *nm = cql_node_metrics_get(s->cql);
        metric(&b, "# TYPE cassette_request_timeouts_total counter\n"
               "cassette_request_timeouts_total{request=\"read\"} %llu\n"
               "cassette_request_timeouts_total{request=\"range\"} %llu\n"
               "cassette_request_timeouts_total{request=\"write\"} %llu\n",
               (unsigned long long)(nm ? nm->read_timeouts : 0), (unsigned long long)(nm ? nm->range_timeouts : 0),
               (unsigned long long)st->write_timeouts);
    }
    metric(&b, "# TYPE cassette_request_latency_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < SRV_LAT_BUCKETS; i++) {
        cum += st->lat_buckets[i];
        if (i < SRV_LAT_BUCKETS - 1)
            metric(&b, "cassette_request_latency_seconds_bucket{le=\"%g\"} %llu\n",
                   srv_lat_bounds_us[i] / 1e6, (unsigned long long)cum);
        else
            metric(&b, "cassette_request_latency_seconds_bucket{le=\"+Inf\"} %llu\n",
                   (unsigned long long)cum);
    }
    metric(&b, "cassette_request_latency_seconds_sum %.6f\n", st->lat_sum_us / 1e6);
    metric(&b, "cassette_request_latency_seconds_count %llu\n", (unsigned long long)st->lat_count);
    metric(&b, "# TYPE cassette_bytes_in_total counter\ncassette_bytes_in_total %llu\n",
           (unsigned long long)st->bytes_in);
    metric(&b, "# TYPE cassette_bytes_out_total counter\ncassette_bytes_out_total %llu\n",
           (unsigned long long)st->bytes_out);
    metric(&b, "# TYPE cassette_memory_allocated_bytes gauge\ncassette_memory_allocated_bytes %zu\n",
           cs_alloc_used());
    metric(&b, "# TYPE cassette_uptime_seconds gauge\ncassette_uptime_seconds %.3f\n",
           (double)((uint64_t)cs_now_ms() - ac->a->started_ms) / 1000.0);
    table_metrics(&b, ac->a->server);
    if (b.err)
        respond_text(ac, 500, "out of memory\n");
    else
        respond(ac, 200, "text/plain; version=0.0.4", (const char *)b.p, b.len);
    cs_buf_destroy(&b);
}

static void do_status(admin_conn *ac)
{
    const srv *s = ac->a->server;
    srv_stats sum;
    srv_stats_sum(s, &sum);
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"status\":\"UN\",\"native_port\":%d,\"connections\":%d,"
                     "\"requests\":%llu,\"memory_bytes\":%zu,\"uptime_ms\":%llu}\n",
                     s->port, s->n_conns, (unsigned long long)sum.requests, cs_alloc_used(),
                     (unsigned long long)((uint64_t)cs_now_ms() - ac->a->started_ms));
    respond(ac, 200, "application/json", body, (size_t)n);
}

/* Decode %XX escapes in place. */
static void pct_decode(char *s)
{
    char *d = s;
    for (; *s; s++) {
        unsigned hi, lo;
        if (*s == '%' && sscanf(s + 1, "%1x%1x", &hi, &lo) == 2) {
            *d++ = (char)(hi << 4 | lo);
            s += 2;
        } else {
            *d++ = *s;
        }
    }
    *d = 0;
}

/* toppartitions ks table duration_ms: sample for the duration on this loop,
 * then answer.  The connection stops reading meanwhile, so it stays alive
 * until the reply is written (a vanished client only fails that write). */
typedef struct top_wait {
    uv_timer_t timer;                /* first member */
    admin_conn *ac;
    uint8_t table_id[16];
} top_wait;

static void on_top_timer_closed(uv_handle_t *h) { cs_free(h); }

static void on_top_done(uv_timer_t *t)
{
    top_wait *w = (top_wait *)t;
    admin_conn *ac = w->ac;
    cs_buf out;
    cs_buf_init(&out);
    srv_exec_lock(ac->a->server);   /* server/conn.h */
    sch_table *tb = sch_table_by_id(cql_ctx_catalog(ac->a->server->cql), w->table_id);
    if (tb) {
        nodetool_toppartitions_report(ac->a->server, tb, 10, &out);
        respond(ac, 200, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
    } else {
        respond_text(ac, 400, "nodetool: the table was dropped while sampling\n");
    }
    srv_exec_unlock(ac->a->server);
    cs_buf_destroy(&out);
    uv_close((uv_handle_t *)&w->timer, on_top_timer_closed);
}

static void do_toppartitions(admin_conn *ac, char **args, int n)
{
    long ms = n == 3 ? strtol(args[2], NULL, 10) : -1;
    if (n != 3 || ms <= 0 || ms > 3600000) {
        respond_text(ac, 400, "nodetool: toppartitions requires keyspace, table and duration in milliseconds\n");
        return;
    }
    sch_table *t = sch_table_find(cql_ctx_catalog(ac->a->server->cql), args[0], args[1]);
    if (!t || !t->st) {
        char msg[600];
        snprintf(msg, sizeof msg, "nodetool: Table %.200s.%.200s does not exist\n", args[0], args[1]);
        respond_text(ac, 400, msg);
        return;
    }
    top_wait *w = cs_calloc(1, sizeof *w);
    if (!w || cql_toppartitions_start(ac->a->server->cql, t)) {
        cs_free(w);
        respond_text(ac, 500, "out of memory\n");
        return;
    }
    w->ac = ac;
    memcpy(w->table_id, t->id, 16);
    ac->answered = true;               /* on_read ignores the connection until the reply */
    uv_read_stop((uv_stream_t *)&ac->tcp);
    uv_timer_init(ac->a->loop, &w->timer);
    uv_timer_start(&w->timer, on_top_done, (uint64_t)ms, 0);
}

/* NODETOOL_POLL (nodetool.h): the connection waits while a timer asks
 * the job, every 20 ms under the execution lock, whether its work (done
 * on this loop, between requests) is over; closing ends the wait. */
typedef struct poll_wait {
    uv_timer_t timer;                /* first member */
    admin_conn *ac;
    nodetool_job *job;
} poll_wait;

static void on_poll_closed(uv_handle_t *h) { cs_free(h); }

static void on_poll(uv_timer_t *t)
{
    poll_wait *w = (poll_wait *)t;
    admin *a = w->ac->a;
    bool closing = atomic_load(&a->closing);
    srv_exec_lock(a->server);
    bool done = closing || nodetool_job_poll(w->job, a->server);
    srv_exec_unlock(a->server);
    if (!done)
        return;
    cs_buf out;
    cs_buf_init(&out);
    int code = nodetool_job_finish(w->job, closing, &out);
    respond(w->ac, code, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
    cs_buf_destroy(&out);
    a->n_polls--;
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, on_poll_closed);
}

static void poll_nodetool(admin_conn *ac, nodetool_job *nt)
{
    poll_wait *w = cs_calloc(1, sizeof *w);
    if (!w) {
        cs_buf out;
        cs_buf_init(&out);
        int code = nodetool_job_finish(nt, true, &out);
        respond(ac, code, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
        cs_buf_destroy(&out);
        return;
    }
    w->ac = ac;
    w->job = nt;
    ac->a->n_polls++;
    ac->answered = true;               /* on_read ignores the connection until the reply */
    uv_read_stop((uv_stream_t *)&ac->tcp);
    uv_timer_init(ac->a->loop, &w->timer);
    uv_timer_start(&w->timer, on_poll, 20, 20);
}

/* GET /nodetool/<verb>?args=a,b,c (each argument %-encoded): see nodetool.h. */
static void do_nodetool(admin_conn *ac, const char *verb, const char *query)
{
    static char argbuf[ADMIN_MAX_REQUEST];   /* the admin loop's own: one request at a time */
    static char *args[NODETOOL_MAX_ARGS];
    query_param(query, "args", argbuf, sizeof argbuf);
    int n = 0;
    /* Every comma separates, so an empty argument (snapshot -t "") stays one;
     * an empty list is no argument. */
    for (char *t = argbuf; argbuf[0] && t;) {
        if (n == NODETOOL_MAX_ARGS) {
            respond_text(ac, 400, "nodetool: too many arguments\n");
            return;
        }
        char *comma = strchr(t, ',');
        if (comma) *comma = '\0';
        pct_decode(t);
        args[n++] = t;
        t = comma ? comma + 1 : NULL;
    }
    if (strcmp(verb, "toppartitions") == 0) {
        do_toppartitions(ac, args, n);
        return;
    }
    cs_buf out;
    cs_buf_init(&out);
    nodetool_job *job;
    int code = nodetool_run(ac->a->server, verb, args, n, &out, &job);
    if (code == NODETOOL_ASYNC || code == NODETOOL_POLL) {
        cs_buf_destroy(&out);
        if (code == NODETOOL_ASYNC)
            queue_nodetool(ac, job);
        else
            poll_nodetool(ac, job);
        return;
    }
    respond(ac, code, "text/plain; charset=utf-8", out.p ? (const char *)out.p : "", out.len);
    cs_buf_destroy(&out);
}

/* Route "METHOD /path?query HTTP/1.x". */
static void handle(admin_conn *ac)
{
    /* the target as long as the request (the loop's own buffer: one
     * request at a time); it was a 1 KiB array, which cut a long nodetool
     * argument list short without a word */
    static char target[ADMIN_MAX_REQUEST];
    char method[8];
    const char *sp = strchr(ac->buf, ' ');
    size_t ml = sp ? (size_t)(sp - ac->buf) : 0;
    const char *t0 = sp ? sp + 1 : NULL;
    size_t tl = t0 ? strcspn(t0, " \r\n") : 0;
    if (!sp || ml == 0 || ml >= sizeof method || tl == 0) {
        respond_text(ac, 400, "bad request\n");
        return;
    }
    memcpy(method, ac->buf, ml);
    method[ml] = '\0';
    memcpy(target, t0, tl);   /* tl < ADMIN_MAX_REQUEST: it lies inside ac->buf */
    target[tl] = '\0';
    char *query = strchr(target, '?');
    if (query)
        *query++ = '\0';
    bool post = strcmp(method, "POST") == 0, get = strcmp(method, "GET") == 0;
    if (post && strcmp(target, "/flush") == 0)
        do_flush_compact(ac, false, query);
    else if (post && strcmp(target, "/drain") == 0)
        do_drain(ac);
    else if (post && strcmp(target, "/compact") == 0)
        do_flush_compact(ac, true, query);
    else if (get && strcmp(target, "/metrics") == 0)
        do_metrics(ac);
    else if (get && strcmp(target, "/status") == 0)
        do_status(ac);
    else if (get && strncmp(target, "/nodetool/", 10) == 0)
        do_nodetool(ac, target + 10, query);
    else
        respond_text(ac, 404, "not found\n");
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    admin_conn *ac = (admin_conn *)h;
    (void)suggested;
    *buf = uv_buf_init(ac->buf + ac->len, (unsigned)(sizeof ac->buf - 1 - ac->len));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    admin_conn *ac = (admin_conn *)st;
    (void)buf;
    if (ac->answered)
        return;
    if (nread < 0) {
        uv_close((uv_handle_t *)&ac->tcp, on_conn_close);
        return;
    }
    ac->len += (size_t)nread;
    ac->buf[ac->len] = '\0';
    if (strstr(ac->buf, "\r\n\r\n") || strstr(ac->buf, "\n\n")) {
        /* cql/ is called only under the execution lock (server/conn.h) */
        srv_exec_lock(ac->a->server);
        handle(ac);
        srv_exec_unlock(ac->a->server);
    }
    else if (ac->len >= sizeof ac->buf - 1)
        respond_text(ac, 400, "request too large\n");
}

static void on_connection(uv_stream_t *server, int status)
{
    admin *a = server->data;
    if (status < 0)
        return;
    admin_conn *ac = cs_calloc(1, sizeof *ac);
    if (!ac)
        return;
    ac->a = a;
    cs_buf_init(&ac->resp);
    uv_tcp_init(a->loop, &ac->tcp);
    if (uv_accept(server, (uv_stream_t *)&ac->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&ac->tcp, on_alloc, on_read) != 0)
        uv_close((uv_handle_t *)&ac->tcp, on_conn_close);
}

void admin_init(admin *a, uv_loop_t *loop, srv *server)
{
    memset(a, 0, sizeof *a);
    a->loop = loop;
    a->server = server;
    a->started_ms = (uint64_t)cs_now_ms();
    atomic_init(&a->closing, false);
    const char *hold = getenv("CASSETTE_TEST_ADMIN_HOLD");
    if (hold)
        snprintf(a->test_hold, sizeof a->test_hold, "%s", hold);
}

bool admin_busy(const admin *a)
{
    return a->n_jobs > 0 || a->n_polls > 0;
}

int admin_listen(admin *a, const char *addr, int port)
{
    struct sockaddr_in sa;
    int rc = uv_ip4_addr(addr, port, &sa);
    if (rc != 0)
        return rc;
    uv_tcp_init(a->loop, &a->tcp);
    a->tcp.data = a;
    a->listening = true;
    rc = uv_tcp_bind(&a->tcp, (const struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&a->tcp, 64, on_connection);
    if (rc != 0) {
        admin_close(a);
        return rc;
    }
    struct sockaddr_in bound;
    int len = sizeof bound;
    if (uv_tcp_getsockname(&a->tcp, (struct sockaddr *)&bound, &len) == 0)
        a->port = ntohs(bound.sin_port);
    return 0;
}

void admin_close(admin *a)
{
    /* Jobs not started yet are cancelled (their reply says so); running
     * ones finish (a test hold lets go) and reply: admin_busy until then. */
    atomic_store(&a->closing, true);
    for (admin_job *j = a->jobs; j; j = j->next)
        uv_cancel((uv_req_t *)&j->req);
    if (a->listening) {
        a->listening = false;
        uv_close((uv_handle_t *)&a->tcp, NULL);
    }
}
