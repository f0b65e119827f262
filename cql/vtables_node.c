/*
 * vtables_node.c: system_views tables about this node rather than its
 * tables, computed on read as Cassandra 4.1 fills them:
 *   gossip_info              one row: this node's gossip state (GossipInfoTable;
 *                            cql_gossip_get, the states nodetool gossipinfo prints);
 *   queries                  the requests running (QueriesTable): under the
 *                            execution lock one runs at a time, the one
 *                            reading the table;
 *   credentials_cache_keys   the roles whose login is remembered (the role
 *                            store's memo of good bcrypt checks, cassette's
 *                            credentials cache).
 * The other cache keys tables (roles, permissions, network permissions,
 * JMX permissions) have no cache behind them here, and internode_*,
 * pending_hints, streaming and the repair tables nothing on one node: they
 * read empty (vtables.c attaches no rows to them).
 */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util.h"
#include "cql/roles.h"
#include "cql/vtables_int.h"

/* ---------------------------------------------------------------- gossip_info */

/* InetAddress.getHostName: the address's name (a reverse lookup, as
 * Cassandra's), else the address; looked up once per address. */
static const char *host_name(const char *addr)
{
    static char for_addr[64], name[256];
    if (strcmp(for_addr, addr) != 0) {
        snprintf(for_addr, sizeof for_addr, "%s", addr);
        snprintf(name, sizeof name, "%s", addr);
        struct addrinfo hints, *ai = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_flags = AI_NUMERICHOST;
        if (getaddrinfo(addr, NULL, &hints, &ai) == 0 && ai) {
            char h[256];
            if (getnameinfo(ai->ai_addr, ai->ai_addrlen, h, sizeof h, NULL, 0, NI_NAMEREQD) == 0)
                snprintf(name, sizeof name, "%s", h);
            freeaddrinfo(ai);
        }
    }
    return name;
}

/* GossipInfoTable: address, port (the storage port), hostname, generation,
 * heartbeat, then per ApplicationState its value (TOKENS left out) and
 * its version, lowercased names, null where the state is not published. */
int cql__vt_gossip_info(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    cql_gossip g;
    cql_gossip_get(ctx, &g);
    vrow r;
    cs_buf_init(&r.store);
    vrow_begin(&r, t);
    vset_inet(&r, "address", g.address);
    vset_int(&r, "port", g.port);
    vset_text(&r, "hostname", host_name(g.address));
    vset_int(&r, "generation", g.generation);
    vset_int(&r, "heartbeat", g.heartbeat);
    for (int i = 0; i < CQL_GOSSIP_STATES; i++) {
        if (!g.version[i])
            continue;
        char col[64];
        const char *n = cql_gossip_state_name(i);
        size_t k = 0;
        for (; n[k] && k < sizeof col - 9; k++)
            col[k] = (char)(n[k] >= 'A' && n[k] <= 'Z' ? n[k] - 'A' + 'a' : n[k]);
        col[k] = 0;
        if (i != CQL_GOSSIP_TOKENS)
            vset_text(&r, col, g.value[i]);
        snprintf(col + k, sizeof col - k, "_version");
        vset_int(&r, col, g.version[i]);
    }
    int rc = vemit(&r, emit, arg);
    cs_buf_destroy(&r.store);
    return rc;
}

/* ---------------------------------------------------------------- queries */

/* The request's description as its message's toString: QueryMessage,
 * ExecuteMessage (the id in hex), BatchMessage. */
static void describe_request(const cql_running *run, cs_buf *b)
{
    const cql_params *p = run->params;
    const char *cl = cql__consistency_name(p ? p->consistency : 1);
    char hex[40];
    switch (run->kind) {
    case CQL_RUN_QUERY: {
        /* QueryOptions.getPageSize: -1 unless the client set one */
        int page = p && (p->flags & 0x04) ? p->page_size : -1;
        cs_buf_put(b, "QUERY ", 6);
        cs_buf_put(b, run->query, run->query_len);
        char tail[96];
        snprintf(tail, sizeof tail, " [pageSize = %d] at consistency %s", page, cl);
        cs_buf_put(b, tail, strlen(tail));
        break;
    }
    case CQL_RUN_EXECUTE: {
        for (size_t i = 0; i < run->id_len && i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", run->id[i]);
        hex[2 * (run->id_len < 16 ? run->id_len : 16)] = 0;
        char s[160];
        snprintf(s, sizeof s, "EXECUTE %s with %d values at consistency %s", hex, p ? p->n_values : 0, cl);
        cs_buf_put(b, s, strlen(s));
        break;
    }
    default: {
        cs_buf_put(b, "BATCH of [", 10);
        for (int i = 0; i < run->n_items; i++) {
            const cql_batch_item *it = &run->items[i];
            if (i)
                cs_buf_put(b, ", ", 2);
            if (it->prepared) {
                for (size_t k = 0; k < it->id_len && k < 16; k++)
                    snprintf(hex + 2 * k, 3, "%02x", it->id[k]);
                hex[2 * (it->id_len < 16 ? it->id_len : 16)] = 0;
                cs_buf_put(b, hex, strlen(hex));
            } else {
                cs_buf_put(b, it->query, it->query_len);
            }
            char s[48];
            snprintf(s, sizeof s, " with %d values", it->n_values);
            cs_buf_put(b, s, strlen(s));
        }
        char tail[64];
        snprintf(tail, sizeof tail, "] at consistency %s", cl);
        cs_buf_put(b, tail, strlen(tail));
        break;
    }
    }
}

/* QueriesTable: thread_id (the request loop as a Native-Transport-Requests
 * worker), queued_micros (arrival to execution), running_micros, task. */
int cql__vt_queries(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    const cql_running *run = &ctx->running;
    if (run->kind == CQL_RUN_NONE)
        return 0;
    uint64_t now = cs_mono_ns();
    char thread[64];
    snprintf(thread, sizeof thread, "Native-Transport-Requests-%d", (run->session ? run->session->loop_index : 0) + 1);
    cs_buf task;
    cs_buf_init(&task);
    describe_request(run, &task);
    vrow r;
    cs_buf_init(&r.store);
    vrow_begin(&r, t);
    vset_text(&r, "thread_id", thread);
    vset_bigint(&r, "queued_micros", (int64_t)((run->started_ns - run->created_ns) / 1000));
    vset_bigint(&r, "running_micros", (int64_t)((now > run->started_ns ? now - run->started_ns : 0) / 1000));
    vset(&r, "task", task.p ? (const char *)task.p : "", task.len);
    int rc = task.err ? task.err : vemit(&r, emit, arg);
    cs_buf_destroy(&r.store);
    cs_buf_destroy(&task);
    return rc;
}

/* ---------------------------------------------------------------- cache keys */

/* credentials_cache_keys: empty unless PasswordAuthenticator is on (the
 * table reads Cassandra's authenticator's cache only then). */
int cql__vt_credentials_cache_keys(cql_ctx *ctx, sch_table *t, emit_fn emit, void *arg)
{
    if (!ctx->cfg.password_authenticator || !ctx->roles)
        return 0;
    char **names;
    int n;
    if (cql_roles_cached_logins(ctx->roles, &names, &n))
        return CS_ENOMEM;
    vrow r;
    cs_buf_init(&r.store);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        vrow_begin(&r, t);
        vset_text(&r, "role", names[i]);
        rc = vemit(&r, emit, arg);
    }
    cs_buf_destroy(&r.store);
    cql_roles_names_free(names, n);
    return rc;
}
