/*
 * loop.c: the native protocol listener and the request loops: bind, accept
 * and hand out connections, the loop threads, shutdown, and the
 * schema-change fan-out to registered connections (see conn.h).
 *
 * Loop 0 listens.  With one loop it adopts every connection; with n loops
 * connection k goes to loop k mod n: loop 0 accepts it, and for another
 * loop passes a duplicate of its socket through that loop's inbox (libuv
 * 1.44 has no UV_TCP_REUSEPORT, and the kernel's SO_REUSEPORT hashing would
 * not spread a few connections evenly).  The inbox is a FIFO under the
 * loop's mutex with a uv_async_t to wake it; it also carries schema change
 * events (so each connection is written only by its own loop) and the stop
 * request.
 */
#include "server/conn.h"

#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/arena.h"
#include "common/util.h"
#include "common/err.h"
#include "common/log.h"

enum { MSG_FD, MSG_SCHEMA, MSG_CLOSE_CONNS };

struct srv_msg {
    srv_msg *next;
    int kind;                        /* MSG_* */
    int fd;                          /* MSG_FD: an accepted socket, owned */
    cql_schema_change ch;            /* MSG_SCHEMA */
};

/* The loop whose thread is running (NULL on other threads). */
static _Thread_local srv_loop *tl_loop;

void srv_exec_lock(srv *s)
{
    uv_mutex_lock(&s->exec);
}

void srv_exec_unlock(srv *s)
{
    uv_mutex_unlock(&s->exec);
}

void srv_stats_sum(const srv *s, srv_stats *out)
{
    memset(out, 0, sizeof *out);
    const size_t n = sizeof *out / sizeof(uint64_t);
    _Static_assert(sizeof(srv_stats) % sizeof(uint64_t) == 0, "srv_stats is all uint64_t");
    uint64_t *dst = (uint64_t *)out;
    for (int i = 0; i < s->n_loops; i++) {
        const uint64_t *src = (const uint64_t *)&s->loops[i].stats;
        for (size_t k = 0; k < n; k++)
            dst[k] += __atomic_load_n(&src[k], __ATOMIC_RELAXED);
    }
}

int srv_init(srv *s, uv_loop_t *loop, int n_loops, const config *cfg, st_engine *eng, cql_ctx *cql)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->cfg = cfg;
    s->eng = eng;
    s->cql = cql;
    atomic_init(&s->n_conns, 0);
    if (n_loops < 1)
        n_loops = 1;
    s->loops = cs_calloc((size_t)n_loops, sizeof *s->loops);
    if (!s->loops)
        return CS_ENOMEM;
    s->n_loops = n_loops;
    /* Adaptive: a loop waiting for the other's read batch spins briefly
     * before sleeping (the batches are short). */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->exec, &ma);
    pthread_mutexattr_destroy(&ma);
    for (int i = 0; i < n_loops; i++) {
        srv_loop *l = &s->loops[i];
        l->server = s;
        l->index = i;
        l->loop = i == 0 ? loop : &l->own;
        l->cfg = cfg;
        l->eng = eng;
        l->cql = cql;
        l->poll_ns = cfg && cfg->commitlog_sync_wait_poll_us > 0 ? (uint64_t)cfg->commitlog_sync_wait_poll_us * 1000u : 0;
        uv_mutex_init(&l->mu);
    }
    tl_loop = &s->loops[0];
    return 0;
}

int srv_loop_run(srv_loop *l)
{
    if (l->sync_waits > 0 && l->poll_ns && cs_mono_ns() - l->active_ns < l->poll_ns)
        return uv_run(l->loop, UV_RUN_NOWAIT);
    return uv_run(l->loop, UV_RUN_ONCE);
}

void srv_loop_thread_begin(srv_loop *l)
{
    cs_arena_cache_enable(true);
    st_defer_log_writes(true);
    st_foreground_thread(true);
    l->log_deferred = true;
}

void srv_loop_thread_end(st_engine *eng, uv_loop_t *loop)
{
    st_log_flush(eng);
    st_defer_log_writes(false);
    st_foreground_thread(false);
    st_engine_detach_loop(eng, loop);
}

/* Close every client connection of l (on l's thread). */
static void close_conns(srv_loop *l)
{
    for (conn *c = l->conns; c; c = conn__next(c))
        conn__close(c, false);
}

/* Close every connection of l and refuse new ones (on l's thread). */
static void loop_stop(srv_loop *l)
{
    if (l->stopping)
        return;
    l->stopping = true;
    conn__srv_close(l);
    close_conns(l);
}

static void push_local(srv_loop *l, const cql_schema_change *ch)
{
    for (conn *c = l->conns; c; c = conn__next(c))
        conn__push_schema_change(c, ch);
}

/* Post m to l's inbox; false if l no longer takes messages (m not taken). */
static bool post(srv_loop *l, srv_msg *m)
{
    bool ok = false;
    m->next = NULL;
    uv_mutex_lock(&l->mu);
    if (l->wake_open && !l->stop_requested) {
        if (l->inbox_tail)
            l->inbox_tail->next = m;
        else
            l->inbox = m;
        l->inbox_tail = m;
        uv_async_send(&l->wake);
        ok = true;
    }
    uv_mutex_unlock(&l->mu);
    return ok;
}

static void free_msgs(srv_msg *m)
{
    while (m) {
        srv_msg *next = m->next;
        if (m->kind == MSG_FD && m->fd >= 0)
            close(m->fd);
        cs_free(m);
        m = next;
    }
}

static void on_wake(uv_async_t *h)
{
    srv_loop *l = h->data;
    uv_mutex_lock(&l->mu);
    srv_msg *m = l->inbox;
    l->inbox = l->inbox_tail = NULL;
    bool stop = l->stop_requested;
    uv_mutex_unlock(&l->mu);
    while (m && !l->stopping) {
        srv_msg *next = m->next;
        if (m->kind == MSG_FD) {
            if (atomic_load(&l->server->native_off))
                close(m->fd);    /* accepted before the transport stopped */
            else
                conn__accept(l, m->fd);
        } else if (m->kind == MSG_CLOSE_CONNS) {
            close_conns(l);
        } else {
            push_local(l, &m->ch);
        }
        cs_free(m);
        m = next;
    }
    free_msgs(m);
    if (stop)
        loop_stop(l);
}

static int wake_open(srv_loop *l)
{
    int rc = uv_async_init(l->loop, &l->wake, on_wake);
    if (rc != 0)
        return rc;
    l->wake.data = l;
    uv_mutex_lock(&l->mu);
    l->wake_open = true;
    uv_mutex_unlock(&l->mu);
    return 0;
}

static void wake_close(srv_loop *l)
{
    uv_mutex_lock(&l->mu);
    bool was = l->wake_open;
    l->wake_open = false;
    srv_msg *m = l->inbox;
    l->inbox = l->inbox_tail = NULL;
    uv_mutex_unlock(&l->mu);
    free_msgs(m);
    if (was)
        uv_close((uv_handle_t *)&l->wake, NULL);
}

/* Body of loops 1..n-1. */
static void loop_main(void *arg)
{
    srv_loop *l = arg;
    tl_loop = l;
    char name[16];
    snprintf(name, sizeof name, "cs-loop%d", l->index);
    pthread_setname_np(pthread_self(), name);   /* for top -H and perf */
    srv_loop_thread_begin(l);        /* as main.c does for loop 0 */
    while (srv_loop_run(l) != 0) {
        if (l->stopping && l->n_conns == 0 && l->lookups == 0)
            break;
    }
    /* As main.c: write the log tail and release the engine's notifier of
     * this loop, then let the close callbacks run. */
    srv_loop_thread_end(l->eng, l->loop);
    l->log_deferred = false;
    wake_close(l);
    for (int i = 0; i < 4; i++)
        uv_run(l->loop, UV_RUN_NOWAIT);
    int rc = uv_loop_close(l->loop);
    if (rc != 0)
        CS_WARN("request loop %d: handles left at exit: %s", l->index, uv_strerror(rc));
    cs_arena_cache_enable(false);
}

int srv_start(srv *s)
{
    if (s->n_loops > 1) {
        /* Loop 0 receives schema events from the others; its handle must not
         * keep the main loop alive at shutdown. */
        int rc = wake_open(&s->loops[0]);
        if (rc != 0)
            return rc;
        uv_unref((uv_handle_t *)&s->loops[0].wake);
    }
    for (int i = 1; i < s->n_loops; i++) {
        srv_loop *l = &s->loops[i];
        int rc = uv_loop_init(&l->own);
        if (rc != 0)
            return rc;
        rc = wake_open(l);
        if (rc != 0) {
            uv_loop_close(&l->own);
            return rc;
        }
        uv_thread_options_t opt = { .flags = UV_THREAD_HAS_STACK_SIZE, .stack_size = 8u << 20 };
        rc = uv_thread_create_ex(&l->thread, &opt, loop_main, l);
        if (rc != 0) {
            wake_close(l);
            uv_run(&l->own, UV_RUN_NOWAIT);
            uv_loop_close(&l->own);
            return rc;
        }
        l->thread_started = true;
    }
    return 0;
}

static void on_tmp_closed(uv_handle_t *h)
{
    cs_free(h);
}

/* Accept the pending connection on loop 0 and pass a duplicate of its
 * socket to loop l (closing loop 0's handle leaves the duplicate open). */
static void hand_off(srv *s, srv_loop *l)
{
    uv_tcp_t *t = cs_malloc(sizeof *t);
    srv_msg *m = cs_calloc(1, sizeof *m);
    if (!t || !m) {
        cs_free(t);
        cs_free(m);
        conn__accept(&s->loops[0], -1);   /* at least take it off the backlog */
        return;
    }
    uv_tcp_init(s->loop, t);
    int rc = uv_accept((uv_stream_t *)&s->tcp, (uv_stream_t *)t);
    uv_os_fd_t fd = -1;
    if (rc == 0 && uv_fileno((uv_handle_t *)t, &fd) == 0)
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    uv_close((uv_handle_t *)t, on_tmp_closed);
    if (rc != 0 || fd < 0) {
        CS_WARN("accept failed: %s", rc ? uv_strerror(rc) : "dup");
        cs_free(m);
        return;
    }
    m->kind = MSG_FD;
    m->fd = fd;
    if (!post(l, m))
        free_msgs(m);
}

static void on_connection(uv_stream_t *server, int status)
{
    srv *s = server->data;
    if (status < 0) {
        CS_WARN("accept failed: %s", uv_strerror(status));
        return;
    }
    if (s->stopping)
        return;
    srv_loop *l = &s->loops[s->next_loop++ % (unsigned)s->n_loops];
    if (l->index == 0)
        conn__accept(l, -1);
    else
        hand_off(s, l);
}

/*
 * Resolve addr (numeric IPv4/IPv6, or a host name such as cassandra.yaml's
 * usual "localhost", resolved once at startup, IPv4 first) into ss.
 */
static int resolve(const char *addr, int port, struct sockaddr_storage *ss)
{
    if (uv_ip4_addr(addr, port, (struct sockaddr_in *)ss) == 0)
        return 0;
    if (uv_ip6_addr(addr, port, (struct sockaddr_in6 *)ss) == 0)
        return 0;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(addr, NULL, &hints, &res) != 0 || !res)
        return UV_EINVAL;
    const struct addrinfo *pick = res;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
    memset(ss, 0, sizeof *ss);
    memcpy(ss, pick->ai_addr, pick->ai_addrlen);
    if (pick->ai_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    freeaddrinfo(res);
    return 0;
}

int srv_listen(srv *s, const char *addr, int port)
{
    struct sockaddr_storage ss;
    int rc = resolve(addr, port, &ss);
    if (rc != 0)
        return rc;
    uv_tcp_init(s->loop, &s->tcp);
    s->tcp.data = s;
    s->listening = true;
    rc = uv_tcp_bind(&s->tcp, (const struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->tcp, 511, on_connection);
    if (rc != 0)
        return rc;
    struct sockaddr_storage bound;
    int len = sizeof bound;
    if (uv_tcp_getsockname(&s->tcp, (struct sockaddr *)&bound, &len) == 0) {
        if (bound.ss_family == AF_INET6) {
            s->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
            uv_ip6_name((struct sockaddr_in6 *)&bound, s->addr, sizeof s->addr);
        } else {
            s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
            uv_ip4_name((struct sockaddr_in *)&bound, s->addr, sizeof s->addr);
        }
    }
    return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
    ((srv *)h->data)->listener_closing = false;
}

/* Close the listening socket if open (loop 0); listener_closing until the
 * close has called back, so srv_native_start does not reuse s->tcp early. */
static void close_listener(srv *s)
{
    if (!s->listening)
        return;
    s->listening = false;
    s->listener_closing = true;
    uv_close((uv_handle_t *)&s->tcp, on_listener_closed);
}

void srv_native_stop(srv *s, bool drained)
{
    if (drained)
        s->drained = true;
    atomic_store(&s->native_off, true);
    close_listener(s);
    close_conns(&s->loops[0]);
    for (int i = 1; i < s->n_loops; i++) {
        srv_msg *m = cs_calloc(1, sizeof *m);
        if (!m)
            continue;
        m->kind = MSG_CLOSE_CONNS;
        m->fd = -1;
        if (!post(&s->loops[i], m))
            free_msgs(m);
    }
    CS_INFO("native transport stopped%s", drained ? " (drained)" : "");
}

int srv_native_start(srv *s)
{
    if (s->drained || s->stopping)
        return CS_EINVAL;
    if (s->listening)
        return 0;
    if (s->listener_closing)
        return CS_EAGAIN;
    atomic_store(&s->native_off, false);
    char addr[64];
    snprintf(addr, sizeof addr, "%s", s->addr);
    int rc = srv_listen(s, addr, s->port);
    if (rc != 0) {
        atomic_store(&s->native_off, true);
        close_listener(s);             /* bound, then listen failed */
        return rc;
    }
    CS_INFO("native transport listening again on %s:%d", s->addr, s->port);
    return 0;
}

bool srv_native_running(const srv *s)
{
    return s->listening;
}

void srv_close(srv *s)
{
    s->stopping = true;
    close_listener(s);
    for (int i = 1; i < s->n_loops; i++) {
        srv_loop *l = &s->loops[i];
        uv_mutex_lock(&l->mu);
        l->stop_requested = true;
        if (l->wake_open)
            uv_async_send(&l->wake);
        uv_mutex_unlock(&l->mu);
    }
    if (s->n_loops > 1)
        wake_close(&s->loops[0]);
    loop_stop(&s->loops[0]);
}

void srv_join(srv *s)
{
    for (int i = 1; i < s->n_loops; i++) {
        srv_loop *l = &s->loops[i];
        if (l->thread_started) {
            uv_thread_join(&l->thread);
            l->thread_started = false;
        }
    }
    for (int i = 0; i < s->n_loops; i++) {
        cs_buf_destroy(&s->loops[i].spare_body);
        uv_mutex_destroy(&s->loops[i].mu);
    }
    uv_mutex_destroy(&s->exec);
    cs_free(s->loops);
    s->loops = NULL;
    s->n_loops = 0;
}

void srv_push_schema_change(srv *s, const cql_schema_change *ch)
{
    for (int i = 0; i < s->n_loops; i++) {
        srv_loop *l = &s->loops[i];
        if (l == tl_loop || s->n_loops == 1) {
            push_local(l, ch);
            continue;
        }
        srv_msg *m = cs_malloc(sizeof *m);
        if (!m) {
            CS_WARN("schema change event lost for request loop %d: out of memory", i);
            continue;
        }
        m->kind = MSG_SCHEMA;
        m->fd = -1;
        m->ch = *ch;
        if (!post(l, m))
            cs_free(m);
    }
}
