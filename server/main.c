/*
 * main.c: the cassette server binary.
 *
 *   cassette [--config FILE] [--listen ADDR] [--port PORT] [--data-dir DIR]
 *            [--request-loops N]
 *
 * Startup: read the config, open the storage engine, open the CQL layer
 * (schema load and commit log replay), listen, print
 * "cassette listening on ADDR:PORT" on stdout (tests parse it), start the
 * other request loops' threads (request_loops, server/conn.h).  SIGINT or
 * SIGTERM: stop accepting, close connections on every loop, join the loop
 * threads, free the CQL layer, flush and close the engine, exit 0.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <fcntl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/log.h"
#include "cql/exec.h"
#include "server/admin.h"
#include "server/config.h"
#include "server/conn.h"
#include "storage/storage.h"

typedef struct app {
    srv server;
    admin adm;
    uv_signal_t sigint, sigterm;
    uv_timer_t background;   /* CQL background work: index/view builds */
    bool stopping;
} app;

/* Index and view builds run in slices between requests (cql/index_build.c):
 * every millisecond while a build is in progress, every 100 ms when idle. */
static void on_background(uv_timer_t *t)
{
    app *a = t->data;
    if (a->stopping)
        return;
    srv_exec_lock(&a->server);
    int more = cql_background_step(a->server.cql);
    srv_exec_unlock(&a->server);
    uint64_t ms = more ? 1 : 100;
    if (uv_timer_get_repeat(t) != ms)
        uv_timer_start(t, on_background, ms, ms);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cassette [--config FILE] [--listen ADDR] [--port PORT] [--data-dir DIR]\n"
               "                [--request-loops N]\n"
               "  --config FILE    cassandra.yaml-style configuration\n"
               "  --listen ADDR    native transport address (rpc_address; default 127.0.0.1)\n"
               "  --port PORT      native transport port (9042); 0 picks a free port\n"
               "  --data-dir DIR   data under DIR/data, commit log under DIR/commitlog\n"
               "  --request-loops N  request loop threads (request_loops; 0: one per CPU)\n");
}

/* True if 127.0.0.1:port can be bound now (probe with a plain socket, so a
 * failed libuv handle never has to be reused). */
static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

static void on_signal(uv_signal_t *h, int signum)
{
    app *a = h->data;
    if (a->stopping)
        return;
    a->stopping = true;
    CS_INFO("signal %d: shutting down", signum);
    srv_close(&a->server);
    admin_close(&a->adm);
    uv_close((uv_handle_t *)&a->sigint, NULL);
    uv_close((uv_handle_t *)&a->sigterm, NULL);
}

/* Two servers over one commit log would corrupt each other: hold an
 * exclusive flock on <commitlog_dir>/cassette.lock for the process's life
 * (released by the kernel on any exit, kill -9 included).  Returns the fd,
 * or -1 after printing why. */
static int lock_commitlog_dir(const char *dir)
{
    char path[4096];
    /* mkdir -p: the engine creates the directory too, but the lock comes first */
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/cassette.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "cassette: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "cassette: %s is in use by another cassette process (%s)\n", dir,
                errno == EWOULDBLOCK ? "locked" : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* For the CQL layer (gossip_info's RPC_READY): is the listener open? */
static bool native_running(void *arg) { return srv_native_running(arg); }

int main(int argc, char **argv)
{
    const char *config_path = NULL, *listen = NULL, *data_dir = NULL;
    int port = -1, loops = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (!val) {
            fprintf(stderr, "cassette: missing value for %s\n", arg);
            usage(stderr);
            return 2;
        }
        if (strcmp(arg, "--config") == 0) {
            config_path = val;
        } else if (strcmp(arg, "--listen") == 0) {
            listen = val;
        } else if (strcmp(arg, "--port") == 0) {
            char *end;
            long p = strtol(val, &end, 10);
            if (*end || p < 0 || p > 65535) {
                fprintf(stderr, "cassette: bad port %s\n", val);
                return 2;
            }
            port = (int)p;
        } else if (strcmp(arg, "--data-dir") == 0) {
            data_dir = val;
        } else if (strcmp(arg, "--request-loops") == 0) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 0 || n > CONFIG_MAX_REQUEST_LOOPS) {
                fprintf(stderr, "cassette: bad request loop count %s (0-%d)\n", val,
                        CONFIG_MAX_REQUEST_LOOPS);
                return 2;
            }
            loops = (int)n;
        } else {
            fprintf(stderr, "cassette: unknown option %s\n", arg);
            usage(stderr);
            return 2;
        }
        i++;
    }

    static config cfg;
    config_defaults(&cfg);
    char err[512] = "";
    if (config_path && config_load(&cfg, config_path, err, sizeof err) != 0) {
        fprintf(stderr, "cassette: %s\n", err);
        return 1;
    }
    if (listen) {
        snprintf(cfg.rpc_address, sizeof cfg.rpc_address, "%s", listen);
        snprintf(cfg.listen_address, sizeof cfg.listen_address, "%s", listen);
    }
    if (port >= 0)
        cfg.native_port = port;
    if (loops >= 0)
        cfg.request_loops = loops;
    config_finish(&cfg, data_dir);
    /* Cassandra's system property cassandra.snapshot.ttl_cleanup_period_seconds
     * (how often expired snapshots are looked for; 60), spelt as cassette's
     * environment variables are. */
    const char *sweep = getenv("CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS");
    if (sweep && *sweep) {
        char *end;
        long v = strtol(sweep, &end, 10);
        if (*end || v <= 0 || v > 86400 * 365)
            CS_WARN("CASSETTE_SNAPSHOT_TTL_CLEANUP_PERIOD_SECONDS=%s is not a number of seconds; using 60", sweep);
        else
            cfg.st.snapshot_cleanup_period_ms = (int)v * 1000;
    }

    int lock_fd = lock_commitlog_dir(cfg.st.commitlog_dir);
    if (lock_fd < 0)
        return 1;

    st_engine *eng = NULL;
    int rc = st_engine_open(&cfg.st, &eng);
    if (rc != 0) {
        fprintf(stderr, "cassette: cannot open storage in %s / %s: %s\n", cfg.st.data_dir,
                cfg.st.commitlog_dir, cs_strerror(rc));
        return 1;
    }
    cql_ctx *cql = NULL;
    cfg.cql.password_authenticator = cfg.authenticator == CONFIG_AUTH_PASSWORD;
    rc = cql_ctx_new(eng, &cfg.cql, &cql);
    if (rc != 0) {
        fprintf(stderr, "cassette: cannot open the CQL layer: %s\n", cs_strerror(rc));
        st_engine_close(eng, false);
        return 1;
    }

    uv_loop_t *loop = uv_default_loop();
    static app a;
    rc = srv_init(&a.server, loop, cfg.request_loops_effective, &cfg, eng, cql);
    if (rc == 0)
        rc = srv_listen(&a.server, cfg.rpc_address, cfg.native_port);
    else
        rc = UV_ENOMEM;
    if (rc != 0) {
        fprintf(stderr, "cassette: cannot listen on %s:%d: %s\n", cfg.rpc_address, cfg.native_port,
                uv_strerror(rc));
        cql_ctx_free(cql);
        st_engine_close(eng, true);
        return 1;
    }
    cql_native_set(cql, a.server.addr, a.server.port, native_running, &a.server);
    admin_init(&a.adm, loop, &a.server);
    if (cfg.admin_port > 0) {
        /* The default 7199 is for a server on the default native port; any
         * other native port (tests, several servers on one host) gets a free
         * admin port unless admin_port was configured, and so does a busy
         * 7199.  The "cassette admin on" line tells which. */
        bool fixed = cfg.admin_port_set || a.server.port == 9042;
        int aport = fixed ? cfg.admin_port : 0;
        if (aport != 0 && !cfg.admin_port_set && !port_free(aport)) {
            CS_WARN("admin endpoint: 127.0.0.1:%d is in use; using a free port", aport);
            aport = 0;
        }
        rc = admin_listen(&a.adm, "127.0.0.1", aport);
        if (rc != 0)
            CS_WARN("admin endpoint: cannot listen on 127.0.0.1:%d: %s", aport, uv_strerror(rc));
    }
    signal(SIGPIPE, SIG_IGN);
    uv_signal_init(loop, &a.sigint);
    uv_signal_init(loop, &a.sigterm);
    a.sigint.data = a.sigterm.data = &a;
    uv_signal_start(&a.sigint, on_signal, SIGINT);
    uv_signal_start(&a.sigterm, on_signal, SIGTERM);
    uv_timer_init(loop, &a.background);
    a.background.data = &a;
    uv_timer_start(&a.background, on_background, 1, 1);
    uv_unref((uv_handle_t *)&a.background);

    bool v6 = strchr(a.server.addr, ':') != NULL;   /* [::1]:9042 */
    printf("cassette listening on %s%s%s:%d\n", v6 ? "[" : "", a.server.addr, v6 ? "]" : "",
           a.server.port);
    if (a.adm.listening)
        printf("cassette admin on 127.0.0.1:%d\n", a.adm.port);
    fflush(stdout);
    CS_INFO("cassette listening on %s:%d (data %s, commit log %s, %d request loop%s)", a.server.addr,
            a.server.port, cfg.st.data_dir, cfg.st.commitlog_dir, a.server.n_loops,
            a.server.n_loops == 1 ? "" : "s");

    /* Run until a signal has closed our handles.  The engine may keep its
     * own handles (commit log sync notifications) on this loop, so "no more
     * handles" is not the stop condition. */
    /* Fixed mmap threshold: big blocks (memtable slab chunks, up to 1 MiB)
     * are always mmapped, so the flush thread freeing a flushed memtable
     * unmaps them instead of taking the request loop's malloc arena lock
     * (glibc otherwise raises the threshold after the first such free). */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    srv_loop_thread_begin(&a.server.loops[0]);   /* request duty of loop 0 on this thread (conn.h) */
    rc = srv_start(&a.server);
    if (rc != 0) {
        CS_ERROR("cannot start the request loops: %s", uv_strerror(rc));
        a.stopping = true;
        srv_close(&a.server);
        admin_close(&a.adm);
        uv_close((uv_handle_t *)&a.sigint, NULL);
        uv_close((uv_handle_t *)&a.sigterm, NULL);
    }
    while (srv_loop_run(&a.server.loops[0]) != 0) {
        srv_loop *l0 = &a.server.loops[0];
        if (a.stopping && l0->n_conns == 0 && l0->lookups == 0 && !admin_busy(&a.adm))   /* admin: flush/compact in flight */
            break;
    }
    srv_join(&a.server);             /* the other loops have closed their connections */
    /* Release the engine's sync notifier on this thread (storage.h), then
     * let the close callbacks run so uv_loop_close finds no handle left. */
    srv_loop_thread_end(eng, loop);
    uv_timer_stop(&a.background);
    uv_close((uv_handle_t *)&a.background, NULL);
    for (int i = 0; i < 4; i++)
        uv_run(loop, UV_RUN_NOWAIT);   /* finish close callbacks */

    cql_ctx_free(cql);
    cs_arena_cache_enable(false);
    st_engine_close(eng, true);
    uv_loop_close(loop);
    config_destroy(&cfg);
    CS_INFO("cassette stopped");
    return 0;
}
