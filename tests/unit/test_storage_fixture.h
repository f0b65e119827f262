/*
 * test_storage_fixture.h: an engine in a per-process temp dir and one table,
 * shared by test_storage_engine.c and test_storage_pin.c.  The including
 * file sets STORAGE_FIXTURE_TAG (the temp dir name) and STORAGE_FIXTURE_TID
 * (the table id) before including this, and registers setup/teardown.
 */
#ifndef CS_TEST_STORAGE_FIXTURE_H
#define CS_TEST_STORAGE_FIXTURE_H
#pragma GCC diagnostic ignored "-Wunused-function"

#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "storage/storage.h"
#include "common/vfs.h"

static char g_dir[256];
static const uint8_t TID[16] = STORAGE_FIXTURE_TID;

static void setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/cs_%s_%d", STORAGE_FIXTURE_TAG, (int)getpid());
    vfs_rmtree(g_dir);
}
static void teardown(void) { vfs_rmtree(g_dir); }

/* The engine over g_dir/data and g_dir/commitlog (kept across reopens), in
 * sync mode `mode`, with commit log segments of `seg` bytes (0: default). */
static st_engine *open_engine(int mode, size_t seg)
{
    static char d[300], c[300];
    snprintf(d, sizeof d, "%s/data", g_dir);
    snprintf(c, sizeof c, "%s/commitlog", g_dir);
    st_config cfg;
    st_config_defaults(&cfg);
    cfg.data_dir = d;
    cfg.commitlog_dir = c;
    cfg.sync_mode = mode;
    if (seg) cfg.segment_size = seg;
    st_engine *e;
    cr_assert_eq(st_engine_open(&cfg, &e), 0);
    return e;
}

static st_table *open_table(st_engine *e)
{
    st_table *t;
    cr_assert_eq(st_table_open(e, TID, "ks", "t", NULL, &t), 0);
    return t;
}

#endif
