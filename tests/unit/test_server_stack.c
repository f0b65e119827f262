/*
 * test_server_stack.c: the server over the real CQL layer and storage engine
 * (no stubs): a durable write mode (commitlog_sync: batch) where every reply
 * waits for st_sync_wait, schema-change events from real DDL, and the admin
 * endpoint flushing a real table to an sstable.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <uv.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/admin.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/frame.h"
#include "server/msg.h"

static config cfg;
static char dir[64];
static st_engine *eng;
static cql_ctx *cql;
static uv_loop_t loop;
static srv server;
static admin adm;
static uv_async_t stop_async;
static pthread_t thread;

static void on_stop(uv_async_t *a)
{
    srv_close(&server);
    admin_close(&adm);
    uv_close((uv_handle_t *)a, NULL);
}

static void *run(void *arg)
{
    /* The engine may keep handles on the loop: stop once ours are closed. */
    while (uv_run(&loop, UV_RUN_ONCE) != 0)
        if (server.stopping && server.n_conns == 0 && !adm.listening)
            break;
    for (int i = 0; i < 4; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    return NULL;
}

static void setup(void)
{
    strcpy(dir, "/tmp/cassette-srvstack-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    config_defaults(&cfg);
    cr_assert_eq(config_set(&cfg, "commitlog_sync", "batch"), 0);
    config_finish(&cfg, dir);
    cr_assert_eq(st_engine_open(&cfg.st, &eng), 0);
    cr_assert_eq(cql_ctx_new(eng, &cfg.cql, &cql), 0);
    uv_loop_init(&loop);
    /* Two request loops: connections alternate between this loop and a
     * thread of its own (server/conn.h). */
    cr_assert_eq(srv_init(&server, &loop, 2, &cfg, eng, cql), 0);
    cr_assert_eq(srv_listen(&server, "127.0.0.1", 0), 0);
    cr_assert_eq(srv_start(&server), 0);
    admin_init(&adm, &loop, &server);
    cr_assert_eq(admin_listen(&adm, "127.0.0.1", 0), 0);
    uv_async_init(&loop, &stop_async, on_stop);
    pthread_create(&thread, NULL, run, NULL);
}

static void teardown(void)
{
    uv_async_send(&stop_async);
    pthread_join(thread, NULL);
    srv_join(&server);
    cql_ctx_free(cql);
    st_engine_close(eng, true);
    uv_loop_close(&loop);
    config_destroy(&cfg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(server_stack, .init = setup, .fini = teardown, .timeout = 30);

/* ------------------------------------------------------------ client */

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct timeval tv = { 10, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        cr_assert_gt(w, 0);
        b += w;
        n -= (size_t)w;
    }
}

static void recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        cr_assert_gt(r, 0, "connection closed or timed out");
        b += r;
        n -= (size_t)r;
    }
}

/* Send a request, read one response: returns its opcode, body in *body. */
static int roundtrip(int fd, uint8_t op, int16_t stream, const cs_buf *req, cs_buf *body,
                     int16_t *got_stream)
{
    cs_buf b;
    cs_buf_init(&b);
    frame_writer w;
    frame_begin(&w, &b, 4, false, stream, op, 0, false, NULL, NULL, 0);
    if (req)
        cs_buf_put(&b, req->p, req->len);
    frame_end(&w);
    send_all(fd, b.p, b.len);
    cs_buf_destroy(&b);
    uint8_t hdr[FRAME_HEADER_LEN];
    recv_all(fd, hdr, sizeof hdr);
    frame_header h;
    cr_assert_eq(frame_header_parse(hdr, &h), 0);
    cs_buf_reset(body);
    uint8_t *p = cs_buf_extend(body, h.length);
    if (h.length)
        recv_all(fd, p, h.length);
    if (got_stream)
        *got_stream = h.stream;
    return h.opcode;
}

static int query(int fd, int16_t stream, const char *q, cs_buf *body)
{
    cql_params p;
    msg_params_init(&p);
    cs_buf req;
    cs_buf_init(&req);
    msg_put_query(&req, 4, q, strlen(q), &p);
    int16_t s;
    int op = roundtrip(fd, OP_QUERY, stream, &req, body, &s);
    cs_buf_destroy(&req);
    if (op != OP_EVENT)
        cr_assert_eq(s, stream);
    return op;
}

static int ready(void)
{
    int fd = dial(server.port);
    msg_kv kv = { "CQL_VERSION", 11, "3.4.6", 5 };
    cs_buf req, body;
    cs_buf_init(&req);
    cs_buf_init(&body);
    msg_put_startup(&req, &kv, 1);
    cr_assert_eq(roundtrip(fd, OP_STARTUP, 0, &req, &body, NULL), OP_READY);
    cs_buf_destroy(&req);
    cs_buf_destroy(&body);
    return fd;
}

static void expect_result(int fd, int16_t stream, const char *q)
{
    cs_buf body;
    cs_buf_init(&body);
    int op = query(fd, stream, q, &body);
    if (op == OP_ERROR) {
        cs_error e;
        msg_error_decode(4, body.p, body.len, &e);
        cr_assert_fail("%s: error 0x%04x %s", q, e.code, e.msg);
    }
    cr_assert_eq(op, OP_RESULT, "%s", q);
    cs_buf_destroy(&body);
}

/* ------------------------------------------------------------ tests */

Test(server_stack, durable_writes_and_schema_events)
{
    int ev = ready(), fd = ready();
    static const char *const types[] = { "SCHEMA_CHANGE" };
    cs_buf req, body;
    cs_buf_init(&req);
    cs_buf_init(&body);
    msg_put_register(&req, types, 1);
    cr_assert_eq(roundtrip(ev, OP_REGISTER, 1, &req, &body, NULL), OP_READY);

    expect_result(fd, 2, "CREATE KEYSPACE ks WITH replication = "
                         "{'class': 'SimpleStrategy', 'replication_factor': 1}");
    /* The registered connection sees the pushed event on stream -1. */
    uint8_t hdr[FRAME_HEADER_LEN];
    recv_all(ev, hdr, sizeof hdr);
    frame_header h;
    frame_header_parse(hdr, &h);
    cr_assert_eq(h.opcode, OP_EVENT);
    cr_assert_eq(h.stream, -1);
    uint8_t evb[1024];
    cr_assert_leq(h.length, sizeof evb);
    recv_all(ev, evb, h.length);
    cql_schema_change ch;
    cr_assert_eq(msg_event_decode(evb, h.length, &ch), 0);
    cr_assert_str_eq(ch.change_type, "CREATED");
    cr_assert_str_eq(ch.target, "KEYSPACE");
    cr_assert_str_eq(ch.keyspace, "ks");

    expect_result(fd, 3, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)");
    /* commitlog_sync: batch — each INSERT's reply waits for the fsync. */
    for (int i = 0; i < 20; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO ks.t (k, v) VALUES (%d, 'v%d')", i, i);
        expect_result(fd, (int16_t)(10 + i), q);
    }
    cs_buf_reset(&body);
    cr_assert_eq(query(fd, 40, "SELECT v FROM ks.t WHERE k = 7", &body), OP_RESULT);
    cr_assert(memmem(body.p, body.len, "v7", 2) != NULL);
    cs_buf_destroy(&req);
    cs_buf_destroy(&body);
    close(ev);
    close(fd);
}

/* Pipelined durable writes: all replies arrive, each on its own stream. */
Test(server_stack, pipelined_durable_writes)
{
    int fd = ready();
    expect_result(fd, 1, "CREATE KEYSPACE ks WITH replication = "
                         "{'class': 'SimpleStrategy', 'replication_factor': 1}");
    expect_result(fd, 2, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)");
    cs_buf all;
    cs_buf_init(&all);
    for (int i = 0; i < 50; i++) {
        char q[128];
        snprintf(q, sizeof q, "INSERT INTO ks.t (k, v) VALUES (%d, 'x')", i);
        cql_params p;
        msg_params_init(&p);
        frame_writer w;
        frame_begin(&w, &all, 4, false, (int16_t)(100 + i), OP_QUERY, 0, false, NULL, NULL, 0);
        msg_put_query(&all, 4, q, strlen(q), &p);
        frame_end(&w);
    }
    send_all(fd, all.p, all.len);
    cs_buf_destroy(&all);
    bool seen[50] = { false };
    for (int i = 0; i < 50; i++) {
        uint8_t hdr[FRAME_HEADER_LEN];
        recv_all(fd, hdr, sizeof hdr);
        frame_header h;
        frame_header_parse(hdr, &h);
        cr_assert_eq(h.opcode, OP_RESULT);
        cr_assert(h.stream >= 100 && h.stream < 150 && !seen[h.stream - 100]);
        seen[h.stream - 100] = true;
        uint8_t b[256];
        cr_assert_leq(h.length, sizeof b);
        recv_all(fd, b, h.length);
    }
    close(fd);
}

static void http(const char *req, char *out, size_t cap)
{
    int fd = dial(adm.port);
    send_all(fd, req, strlen(req));
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fd, out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd);
}

static int count_data_files(const char *ks)
{
    char path[256];
    snprintf(path, sizeof path, "%s/data/%s", dir, ks);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
        DIR *t = opendir(sub);
        if (!t)
            continue;
        struct dirent *f;
        while ((f = readdir(t)))
            if (strstr(f->d_name, "Data.db"))
                n++;
        closedir(t);
    }
    closedir(d);
    return n;
}

Test(server_stack, admin_flush_compact_metrics)
{
    int fd = ready();
    expect_result(fd, 1, "CREATE KEYSPACE ks WITH replication = "
                         "{'class': 'SimpleStrategy', 'replication_factor': 1}");
    expect_result(fd, 2, "CREATE TABLE ks.t (k int PRIMARY KEY, v text)");
    expect_result(fd, 3, "INSERT INTO ks.t (k, v) VALUES (1, 'a')");
    cr_assert_eq(count_data_files("ks"), 0);
    char buf[8192];
    http("POST /flush?ks=ks&table=t HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strncmp(buf, "HTTP/1.0 200", 12) == 0, "%s", buf);
    cr_assert_eq(count_data_files("ks"), 1);
    expect_result(fd, 4, "INSERT INTO ks.t (k, v) VALUES (2, 'b')");
    http("POST /flush?ks=ks HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strncmp(buf, "HTTP/1.0 200", 12) == 0, "%s", buf);
    cr_assert_eq(count_data_files("ks"), 2);
    http("POST /compact?ks=ks&table=t HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strncmp(buf, "HTTP/1.0 200", 12) == 0, "%s", buf);
    cr_assert_eq(count_data_files("ks"), 1);
    http("POST /flush?ks=nope HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strncmp(buf, "HTTP/1.0 4", 10) == 0, "%s", buf);
    http("GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strstr(buf, "\ncassette_connections 1\n") != NULL, "%s", buf);
    cr_assert(strstr(buf, "cassette_requests_total") != NULL);
    cr_assert(strstr(buf, "cassette_requests_by_opcode_total{opcode=\"QUERY\"}") != NULL, "%s", buf);
    cr_assert(strstr(buf, "cassette_request_latency_seconds_bucket{le=\"+Inf\"}") != NULL, "%s", buf);
    http("GET /status HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strstr(buf, "\"status\":\"UN\"") != NULL, "%s", buf);
    http("GET /nothing HTTP/1.0\r\n\r\n", buf, sizeof buf);
    cr_assert(strncmp(buf, "HTTP/1.0 404", 12) == 0, "%s", buf);
    /* This connection is listed in system_views.clients with its port. */
    cs_buf cl;
    cs_buf_init(&cl);
    cr_assert_eq(query(fd, 6, "SELECT address, port, protocol_version FROM system_views.clients", &cl),
                 OP_RESULT);
    struct sockaddr_in me;
    socklen_t ml = sizeof me;
    getsockname(fd, (struct sockaddr *)&me, &ml);
    uint8_t port_be[4];
    cs_st32(port_be, ntohs(me.sin_port));
    cr_assert(memmem(cl.p, cl.len, port_be, 4) != NULL, "own port not in system_views.clients");
    cs_buf_destroy(&cl);
    /* Data still readable after flush + compaction. */
    cs_buf body;
    cs_buf_init(&body);
    cr_assert_eq(query(fd, 5, "SELECT v FROM ks.t WHERE k = 2", &body), OP_RESULT);
    cr_assert(memmem(body.p, body.len, "b", 1) != NULL);
    cs_buf_destroy(&body);
    close(fd);
}
