/*
 * trace.h: request tracing (protocol flag 0x02, cqlsh's TRACING ON).
 * Owner: cql/trace.c.  Thread: the request loop.
 *
 * A traced request becomes one session in system_traces.sessions and a few
 * events in system_traces.events, as Cassandra's coordinator writes them.
 * cassette keeps the last CQL_TRACE_KEEP sessions in memory (Cassandra keeps
 * them for a day with a TTL) and serves both tables as virtual tables, so
 * tracing costs nothing when unused and never touches the commit log.
 */
#ifndef CS_CQL_TRACE_H
#define CS_CQL_TRACE_H

#include <stdint.h>
#include "common/util.h"
#include "cql/exec.h"

#define CQL_TRACE_KEEP 256

/* What the server knows of a traced request. */
typedef struct cql_trace_req {
    const char *request;          /* "Execute CQL3 query", "Execute CQL3 prepared query", ... */
    const char *query; size_t query_len;   /* statement text, if any */
    const char *client;           /* client address text */
    int64_t started_us;           /* wall clock at arrival */
    uint64_t duration_us;
    int consistency;              /* protocol consistency code */
    const char *outcome;          /* NULL on success, else the error message */
} cql_trace_req;

/* nodetool settraceprobability / gettraceprobability: the share of the
 * requests a client did not ask to trace that are traced anyway
 * (StorageService.shouldTraceProbablistically), 0 (the default) to 1.
 * cql_trace_sampled draws for one such request; any thread, no lock. */
void cql_trace_set_probability(cql_ctx *ctx, double p);
double cql_trace_probability(cql_ctx *ctx);
bool cql_trace_sampled(cql_ctx *ctx);

/* A traced request starts on this thread (before its cql_query /
 * cql_execute / cql_batch call): the events cql/ traces while it runs are
 * kept for its cql_trace_record, with their times since start_ns
 * (cs_mono_ns) and started_us (wall clock). */
void cql_trace_begin(cql_ctx *ctx, int64_t started_us, uint64_t start_ns);

/* Record a finished traced request (with the events since cql_trace_begin);
 * *session receives its id (a timeuuid). */
void cql_trace_record(cql_ctx *ctx, const cql_trace_req *t, cs_uuid *session);
void cql_trace_free(cql_ctx *ctx);

#endif
