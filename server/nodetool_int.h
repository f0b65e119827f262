/*
 * nodetool_int.h: shared by the nodetool verb files only (server/nodetool.c,
 * nodetool_sstables.c, nodetool_node.c, nodetool_snapshot.c): output
 * helpers in nodetool's formats and each file's verbs.  Everything runs on the request loop
 * thread under the execution lock, as nodetool_run (nodetool.h), except
 * nodetool_job_work.
 */
#ifndef CS_SERVER_NODETOOL_INT_H
#define CS_SERVER_NODETOOL_INT_H

#include "server/nodetool.h"

/* ---- nodetool.c: formats */

/* printf onto o (one call writes at most 4 KiB). */
void nodetool__printf(cs_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* nodetool's badUse (an IllegalArgumentException): "nodetool: msg" and
 * the help hint; returns 400 (cassette-tool exits 1). */
int nodetool__bad_use(cs_buf *o, const char *msg);
/* FileUtils.stringifyFileSize ("3.2 MiB"). */
void nodetool__human(uint64_t b, char *out, size_t n);
/* Java's Double.toString. */
void nodetool__java_double(double v, char *out, size_t n);
/* Java's String.format("%<width>.<decimals>f"). */
void nodetool__java_f(cs_buf *o, int width, double v, int decimals);
/* nodetool's TableBuilder over rows x cols cells of cell_size bytes. */
void nodetool__table_print(cs_buf *o, const char *cells, size_t cell_size, int rows, int cols);
/* The node's listen address ("127.0.0.1" by default). */
const char *nodetool__listen_addr(srv *s);

/* ---- the verbs of the other files: each returns an HTTP status as
 * nodetool_run, or 0 when verb is not one of its verbs. */
int nodetool__run_sstables(srv *s, const char *verb, char **args, int n, cs_buf *o, nodetool_job **job);
int nodetool__run_node(srv *s, const char *verb, char **args, int n, cs_buf *o);
int nodetool__run_snapshot(srv *s, const char *verb, char **args, int n, cs_buf *o);

#endif
