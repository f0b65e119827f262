/*
 * sstable.h: offline sstable access for tools (cassette-tool sstable
 * dump|verify) and tests.  Owner: storage engineer.  Thread-safe (stateless).
 */
#ifndef CS_SSTABLE_H
#define CS_SSTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Verify every component of the sstable whose Data.db path (or any component
 * path, or the "<dir>/<gen>-" prefix) is given: magic numbers, versions,
 * checksums of every block and file, partition order, bloom filter hits for
 * every key, and each wide partition's row index run by run against its rows.  Returns 0 if sound; CS_ECORRUPT (problem logged, naming file
 * and offset), CS_EIO or CS_ENOTFOUND.  Prints a summary to out if non-NULL. */
int sst_verify(const char *path, FILE *out);
/* Is the sstable (path as for sst_verify) at the format version this
 * build writes (Statistics.db's)?  0 with *current set, or as sst_verify
 * when it cannot be opened.  For nodetool verify -c. */
int sst_format_current(const char *path, bool *current);
/* Print the sstable's statistics (Statistics.db: timestamps, clustering
 * bounds, counts, level, commit log position, histograms, ancestors). */
int sst_metadata(const char *path, FILE *out);
/* Print every partition, row and cell of the sstable in a readable form. */
int sst_dump(const char *path, FILE *out);

#endif
