/*
 * nodetool.h: nodetool's verbs computed inside the server, answered in
 * nodetool's own output layout, for cassette-tool through the admin endpoint
 * (GET /nodetool/<verb>?args=a,b,c).  Owner: server/nodetool.c.  Runs on the
 * request loop thread (it reads the catalog).
 */
#ifndef CS_SERVER_NODETOOL_H
#define CS_SERVER_NODETOOL_H

#include "common/buf.h"
#include "server/conn.h"

/* Run verb with positional args; the text goes to out.  Returns an HTTP
 * status: 200, 400 (bad arguments: nodetool's badUse, stdout, exit 1),
 * 404 (unknown verb, also a badUse), 409 (a refusal nodetool prints on
 * stderr with exit 1), 500 (the command failed: err, stderr, exit 2), or
 * NODETOOL_ASYNC with *job set: verbs that
 * read or rewrite sstables (garbagecollect, scrub, verify,
 * upgradesstables) leave the loop: the caller runs nodetool_job_work on
 * another thread, then nodetool_job_finish back on the loop. */
/* The most arguments a verb takes: every one a character and a comma in
 * the admin endpoint's 8 KiB request (admin.c refuses more, never drops). */
#define NODETOOL_MAX_ARGS 4096
#define NODETOOL_ASYNC 202
/* ... or NODETOOL_POLL with *job set: the verb waits for work that runs
 * on the loop itself (rebuild_index's index builds, between requests):
 * the caller calls nodetool_job_poll on the loop now and then, under the
 * execution lock, until it returns true, then nodetool_job_finish. */
#define NODETOOL_POLL 203
typedef struct nodetool_job nodetool_job;
int nodetool_run(srv *s, const char *verb, char **args, int n_args, cs_buf *out, nodetool_job **job);
/* The job's work, on any thread (the storage tables it names are pinned;
 * no catalog access). */
void nodetool_job_work(nodetool_job *j);
/* After nodetool_job_work, on the loop under the execution lock: does the
 * job go on with work on the loop (import's index builds)?  Then the
 * caller polls it as a NODETOOL_POLL job. */
bool nodetool_job_continue(nodetool_job *j, srv *s);
/* NODETOOL_POLL: is the job's work done? */
bool nodetool_job_poll(nodetool_job *j, srv *s);
/* On the loop: the job's answer into out and its HTTP status (as
 * nodetool_run's); cancelled: the work never ran (the server is shutting
 * down).  Frees j. */
int nodetool_job_finish(nodetool_job *j, bool cancelled, cs_buf *out);

/* toppartitions: the admin endpoint validates the table, starts sampling
 * (cql_toppartitions_start), waits duration_ms on its loop, then calls this
 * to stop sampling and print nodetool's WRITES/READS sampler blocks. */
struct sch_table;
void nodetool_toppartitions_report(srv *s, const struct sch_table *t, int top, cs_buf *out);

#endif
