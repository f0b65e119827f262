/*
 * offline.c: cassette-tool's offline commands, on files of a stopped (or
 * running) server: they only read.
 */
#include "tools/tool.h"
#include "common/err.h"
#include "storage/commitlog.h"
#include "storage/sstable.h"
#include <stdio.h>
#include <string.h>

int tool_sstable(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cassette-tool sstable dump|metadata|verify FILE\n");
        return 1;
    }
    const char *sub = argv[0], *path = argv[1];
    int rc;
    if (!strcmp(sub, "dump"))
        rc = sst_dump(path, stdout);
    else if (!strcmp(sub, "metadata"))
        rc = sst_metadata(path, stdout);
    else if (!strcmp(sub, "verify"))
        rc = sst_verify(path, stdout);
    else {
        fprintf(stderr, "cassette-tool: unknown sstable command '%s'\n", sub);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "cassette-tool: %s %s: %s\n", sub, path, cs_strerror(rc));
        return 2;
    }
    return 0;
}

int tool_commitlog(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[0], "dump")) {
        fprintf(stderr, "usage: cassette-tool commitlog dump DIR|SEGMENT\n");
        return 1;
    }
    int rc = clog_dump(argv[1], stdout);
    if (rc) {
        fprintf(stderr, "cassette-tool: commitlog dump %s: %s\n", argv[1], cs_strerror(rc));
        return 2;
    }
    return 0;
}
