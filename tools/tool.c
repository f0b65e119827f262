/*
 * tool.c: cassette-tool, nodetool's verbs and argument style.
 *
 *   cassette-tool [-h HOST] [-p PORT] VERB [args...]
 *
 * Online verbs go to the server's admin endpoint (HTTP on 127.0.0.1:7199 by
 * default, nodetool's JMX port, so `-h 127.0.0.1 flush ks table` works as
 * test suites call it).  Offline verbs read files directly:
 *   cassette-tool sstable dump|metadata|verify FILE
 *   cassette-tool commitlog dump DIR
 */
#include "tools/tool.h"
#include "common/alloc.h"
#include "common/buf.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: cassette-tool [-h HOST] [-p PORT] COMMAND [args...]\n"
        "  (-p is the admin port, default 7199 like nodetool's JMX port)\n"
        "commands:\n"
        "  status | info | version | describecluster | describering keyspace\n"
        "  gossipinfo | compactionstats | truncatehints\n"
        "  flush [keyspace [tables...]]        compact [keyspace [tables...]]\n"
        "  tablestats [keyspace[.table]...]    tablehistograms keyspace table\n"
        "  getendpoints keyspace table key     toppartitions keyspace table duration_ms\n"
        "  repair [options] [keyspace [tables...]]     cleanup [keyspace [tables...]]\n"
        "  disableautocompaction | enableautocompaction [keyspace [tables...]]\n"
        "  getcompactionthroughput [-d]        setcompactionthroughput MiB_per_s (0: unthrottled)\n"
        "  drain | disablebinary | enablebinary | statusbinary | tpstats | ring\n"
        "  snapshot [-t tag] [-sf] [-cf table | -kt ks.t,...] [--ttl duration] [keyspaces...]\n"
        "  listsnapshots [-nt]\n"
        "  clearsnapshot -t tag | --all [keyspaces...]\n"
        "  metrics                             (Prometheus text)\n"
        "  sstable dump|metadata|verify FILE   commitlog dump DIR   (offline)\n");
}

/* Percent-encode one argument for a query string. */
static void put_arg(char *q, size_t cap, const char *a)
{
    size_t n = strlen(q);
    for (; *a && n + 4 < cap; a++) {
        unsigned char c = (unsigned char)*a;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
            c == '-')
            q[n++] = (char)c;
        else
            n += (size_t)snprintf(q + n, cap - n, "%%%02X", c);
    }
    q[n] = 0;
}

/* One HTTP/1.0 request; prints the body; returns 0 for 2xx. */
static int http(const char *host, int port, const char *method, const char *target)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &ai)) {
        fprintf(stderr, "cassette-tool: cannot resolve %s\n", host);
        return 1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
        fprintf(stderr, "cassette-tool: Failed to connect to '%s:%d' - %s.\n", host, port, strerror(errno));
        freeaddrinfo(ai);
        if (fd >= 0) close(fd);
        return 1;
    }
    freeaddrinfo(ai);
    char req[8192];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: %s\r\n\r\n", method, target, host);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return 1;
    }
    cs_buf resp;
    cs_buf_init(&resp);
    char tmp[65536];
    ssize_t r;
    while ((r = read(fd, tmp, sizeof(tmp))) > 0)
        cs_buf_put(&resp, tmp, (size_t)r);
    close(fd);
    cs_buf_put_u8(&resp, 0);
    const char *body = resp.p ? strstr((const char *)resp.p, "\r\n\r\n") : NULL;
    int code = 0;
    if (!resp.p || sscanf((const char *)resp.p, "HTTP/%*s %d", &code) != 1 || !body) {
        fprintf(stderr, "cassette-tool: bad response from %s:%d\n", host, port);
        cs_buf_destroy(&resp);
        return 1;
    }
    body += 4;
    fputs(body, code / 100 == 2 ? stdout : stderr);
    cs_buf_destroy(&resp);
    /* nodetool exits 1 when it rejects the command line (badUse: unknown
     * command, missing or malformed arguments; the server answers 404 or
     * 400) and 2 when the command fails (err). */
    return code / 100 == 2 ? 0 : (code == 404 || code == 400 ? 1 : 2);
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1";
    int port = 7199, i = 1;
    for (; i < argc; i++) {
        if ((!strcmp(argv[i], "-h") || !strcmp(argv[i], "--host")) && i + 1 < argc)
            host = argv[++i];
        else if ((!strcmp(argv[i], "-p") || !strcmp(argv[i], "--port")) && i + 1 < argc)
            port = atoi(argv[++i]);
        else if ((!strcmp(argv[i], "-u") || !strcmp(argv[i], "-pw") || !strcmp(argv[i], "--username") ||
                  !strcmp(argv[i], "--password")) && i + 1 < argc)
            i++; /* accepted for nodetool compatibility; the admin endpoint is loopback-only */
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) {
            usage(stdout);
            return 0;
        } else
            break;
    }
    if (i >= argc) {
        usage(stderr);
        return 1;
    }
    const char *verb = argv[i++];
    int nargs = argc - i;
    char **args = argv + i;
    if (!strcmp(verb, "sstable"))
        return tool_sstable(nargs, args);
    if (!strcmp(verb, "commitlog"))
        return tool_commitlog(nargs, args);
    char target[8192];
    if (!strcmp(verb, "flush") || !strcmp(verb, "compact")) {
        snprintf(target, sizeof(target), "/%s?", verb);
        if (nargs > 0) {
            strcat(target, "ks=");
            put_arg(target, sizeof(target), args[0]);
        }
        if (nargs > 1) {
            strcat(target, "&table=");
            for (int k = 1; k < nargs; k++) {
                if (k > 1) strcat(target, ",");
                put_arg(target, sizeof(target), args[k]);
            }
        }
        int rc = http(host, port, "POST", target);
        return rc;
    }
    if (!strcmp(verb, "drain"))
        return http(host, port, "POST", "/drain");
    if (!strcmp(verb, "metrics"))
        return http(host, port, "GET", "/metrics");
    snprintf(target, sizeof(target), "/nodetool/");
    put_arg(target, sizeof(target), verb);
    strcat(target, "?args=");
    for (int k = 0; k < nargs; k++) {
        if (k) strcat(target, ",");
        put_arg(target, sizeof(target), args[k]);
    }
    return http(host, port, "GET", target);
}
