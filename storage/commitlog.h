/*
 * commitlog.h: offline commit log access for tools (cassette-tool commitlog
 * dump) and tests.  Owner: storage engineer.  Format: docs/format/commitlog.md.
 */
#ifndef CS_COMMITLOG_H
#define CS_COMMITLOG_H

#include <stdio.h>

/* Print every record of one segment file (position, size, and each op:
 * table id, keys in hex, deletions, cells) and a final line with the record
 * count and any torn/corrupt tail.  Returns 0 if the whole file is sound,
 * CS_ECORRUPT if a bad header or record was found (the good records before
 * it are printed), CS_EIO / CS_ENOTFOUND if it cannot be read. */
/* A directory path dumps every segment in it, in id order (first error wins). */
int clog_dump(const char *segment_path, FILE *out);

#endif
