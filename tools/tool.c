/*
 * tool.c: cassette-tool, nodetool's verbs and argument style.
 *
 *   cassette-tool [-h HOST] [-p PORT] VERB [args...]
 *
 * Online verbs go to the server's admin endpoint (HTTP on 127.0.0.1:7199 by
 * default, nodetool's JMX port, so `-h 127.0.0.1 flush ks table` works as
 * test suites call it); `help` lists them (verbs[] below).  Offline verbs
 * read files directly:
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
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Every verb: name, arguments, what it does (for usage and help). */
typedef struct verb { const char *name, *args, *what; } verb;
static const verb verbs[] = {
    { "cleanup", "[keyspace [tables...]]", "Drop data the node does not own (none on one node)" },
    { "clearsnapshot", "[-t tag | --all] [keyspaces...]", "Remove snapshots" },
    { "commitlog", "dump DIR|SEGMENT", "Print commit log records (offline)" },
    { "compact", "[keyspace [tables...]]", "Major compaction of the tables" },
    { "compactionstats", "", "Pending and running compactions" },
    { "describecluster", "", "Cluster name, snitch, partitioner, schema versions" },
    { "describering", "keyspace", "The token ranges of a keyspace" },
    { "disableautocompaction", "[keyspace [tables...]]", "Stop background compactions" },
    { "disablebinary", "", "Stop the native transport" },
    { "drain", "", "Stop the native transport and flush every table" },
    { "enableautocompaction", "[keyspace [tables...]]", "Resume background compactions" },
    { "enablebinary", "", "Start the native transport again" },
    { "flush", "[keyspace [tables...]]", "Write memtables to sstables" },
    { "garbagecollect", "[-g ROW|CELL] [-j jobs] [keyspace [tables...]]",
      "Rewrite each sstable without the data deletions elsewhere shadow" },
    { "gcstats", "", "Garbage collection figures (cassette collects none)" },
    { "getcompactionthreshold", "keyspace table", "The table's min and max compaction thresholds" },
    { "getcompactionthroughput", "[-d]", "The compaction throughput cap" },
    { "getconcurrentcompactors", "", "How many compactions may run at once" },
    { "getendpoints", "keyspace table key", "The replicas of a partition key" },
    { "getlogginglevels", "", "The logging levels" },
    { "getsstables", "[-hf] keyspace table key", "The sstables whose index holds a partition key" },
    { "gettimeout", "read|range|write|counterwrite|cascontention|truncate|misc|internode...",
      "A request timeout in ms" },
    { "gettraceprobability", "", "The share of requests traced unasked" },
    { "gossipinfo", "", "This node's gossip state" },
    { "help", "[command]", "This list, or one command's arguments" },
    { "import", "[-l] [-v] [-q] [-p] ... keyspace table directory...", "Import new SSTables to the system" },
    { "info", "", "Node figures: load, uptime, memory, caches" },
    { "listsnapshots", "[-nt]", "Snapshots on disk" },
    { "metrics", "", "Prometheus text" },
    { "netstats", "[-H]", "Operation mode, streams, read repair, internode messages" },
    { "proxyhistograms", "", "Coordinator latency percentiles" },
    { "rebuild_index", "keyspace table index...", "Empty secondary indexes and build them again" },
    { "refresh", "keyspace table", "Load newly placed SSTables to the system without restart" },
    { "repair", "[options] [keyspace [tables...]]", "Repair (nothing to repair on one node)" },
    { "ring", "", "The node's tokens" },
    { "scrub", "[-ns] [-s] [-n] [-r] [-j jobs] [keyspace [tables...]]",
      "Rewrite each sstable, leaving out what cannot be read" },
    { "setcompactionthreshold", "keyspace table min max", "Set the table's compaction thresholds (not the schema)" },
    { "setcompactionthroughput", "MiB_per_s", "Cap compaction throughput (0: unthrottled)" },
    { "setconcurrentcompactors", "n", "Let n compactions run at once" },
    { "settimeout", "type ms", "Set a request timeout" },
    { "settraceprobability", "p", "Trace this share of requests (0 to 1)" },
    { "snapshot", "[-t tag] [-sf] [-cf table | -kt ks.t,...] [--ttl duration] [keyspaces...]",
      "Hard-link the tables' sstables into a snapshot" },
    { "sstable", "dump|metadata|verify FILE", "Print or check one sstable (offline)" },
    { "status", "", "The node's state, load, tokens, host id" },
    { "statusbinary", "", "Whether the native transport runs" },
    { "statusgossip", "", "Whether gossip runs" },
    { "statushandoff", "", "Whether hinted handoff is enabled" },
    { "stop", "[-id id] COMPACTION|GARBAGE_COLLECT|SCRUB|UPGRADE_SSTABLES|...", "Stop running compactions" },
    { "tablehistograms", "[keyspace table | keyspace.table]", "Latency, partition size and cell count percentiles" },
    { "tablestats", "[keyspace[.table]...]", "Table figures" },
    { "toppartitions", "keyspace table duration_ms", "The partitions most read and written for a while" },
    { "tpstats", "", "Thread pools" },
    { "truncatehints", "", "Drop hints (a single node keeps none)" },
    { "upgradesstables", "[-a] [-t max_timestamp] [-j jobs] [keyspace [tables...]]",
      "Rewrite sstables not at the current format version" },
    { "verify", "-f [-e] [-c] [-q] [-t] [keyspace [tables...]]", "Check every sstable's checksums" },
    { "version", "", "The Cassandra release this node speaks as" },
};

/* nodetool's help layout: the global options, then one line a command. */
static void usage(FILE *f)
{
    fprintf(f,
        "usage: cassette-tool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)]\n"
        "        [(-u <username> | --username <username>)] [(-pw <password> | --password <password>)]\n"
        "        <command> [<args>]\n"
        "  (-p is the admin port, default 7199 like nodetool's JMX port; -u and -pw are accepted and unused)\n\n"
        "The most commonly used nodetool commands are:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(f, "    %-28s %s\n", verbs[i].name, verbs[i].what);
    fprintf(f, "\nSee 'cassette-tool help <command>' for more information on a specific command.\n\n");
}

/* help COMMAND: its synopsis; exit 1 for an unknown one, as nodetool. */
static int help_verb(const char *name)
{
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (!strcmp(verbs[i].name, name)) {
            printf("NAME\n        cassette-tool %s - %s\n\nSYNOPSIS\n        cassette-tool [-h HOST] [-p PORT] %s %s\n\n",
                   verbs[i].name, verbs[i].what, verbs[i].name, verbs[i].args);
            return 0;
        }
    printf("nodetool: Unknown command %s\nSee 'nodetool help'.\n", name);
    return 1;
}

/* Percent-encode one argument onto a query string; args_fit goes false
 * when q's cap is reached (q keeps what fitted). */
static bool args_fit = true;
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
    if (*a || n + 8 >= cap)   /* what is left must still take a separator */
        args_fit = false;
}

/* The longest request target: the admin endpoint takes requests of up to
 * 64 KiB (server/admin.c ADMIN_MAX_REQUEST), the request line and the
 * Host header included. */
#define TOOL_MAX_TARGET (64 * 1024 - 512)

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
    static char req[TOOL_MAX_TARGET + 512];
    int n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: %s\r\n\r\n", method, target, host);
    if (n < 0 || (size_t)n >= sizeof(req)) {
        fprintf(stderr, "cassette-tool: the request does not fit in one admin request (%zu bytes)\n", sizeof req);
        close(fd);
        return 1;
    }
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
    /* nodetool prints a rejected command line (badUse: unknown command,
     * missing or malformed arguments; the server answers 404 or 400) on
     * stdout and exits 1, a failed command (err, "error: ...") on stderr
     * and exits 2; a few commands print on stderr and exit 1 themselves
     * (NodeProbe.getCfsProxy: 409). */
    bool bad_use = code == 404 || code == 400;
    fputs(body, code / 100 == 2 || bad_use ? stdout : stderr);
    cs_buf_destroy(&resp);
    return code / 100 == 2 ? 0 : (bad_use || code == 409 ? 1 : 2);
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
            if (i + 1 < argc)
                return help_verb(argv[i + 1]);
            usage(stdout);
            return 0;
        } else
            break;
    }
    if (i >= argc) {                 /* nodetool's default command is help */
        usage(stdout);
        return 0;
    }
    const char *verb = argv[i++];
    int nargs = argc - i;
    char **args = argv + i;
    if (!strcmp(verb, "sstable"))
        return tool_sstable(nargs, args);
    if (!strcmp(verb, "commitlog"))
        return tool_commitlog(nargs, args);
    static char target[TOOL_MAX_TARGET];
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
        if (!args_fit) {
            fprintf(stderr, "cassette-tool: the arguments do not fit in one admin request (%zu bytes)\n", sizeof target);
            return 1;
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
    if (!args_fit) {
        fprintf(stderr, "cassette-tool: the arguments do not fit in one admin request (%zu bytes)\n", sizeof target);
        return 1;
    }
    return http(host, port, "GET", target);
}
