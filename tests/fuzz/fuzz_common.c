/* fuzz_common.c: see fuzz_common.h. */
#include "tests/fuzz/fuzz_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

void fz_quiet(void)
{
    if (!getenv("CASSETTE_LOG"))
        cs_log_set_level(CS_LOG_ERROR + 1);
}

static char g_scratch[256];

static void rm_rf(const char *path, bool keep_top)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", path, de->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                rm_rf(p, false);
            else
                unlink(p);
        }
        closedir(d);
    }
    if (!keep_top)
        rmdir(path);
}

static void scratch_cleanup(void)
{
    if (g_scratch[0])
        rm_rf(g_scratch, false);
}

const char *fz_scratch_dir(const char *tag)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_scratch, sizeof g_scratch, "%s/cassette-fuzz-%s-%d", base, tag, (int)getpid());
    rm_rf(g_scratch, false);
    if (mkdir(g_scratch, 0700) != 0) {
        perror(g_scratch);
        abort();
    }
    atexit(scratch_cleanup);
    return g_scratch;
}

void fz_empty_dir(const char *dir)
{
    rm_rf(dir, true);
}

int fz_write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = n ? write(fd, p, n) : 0;
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

const char *fz_seed_dir(void)
{
    const char *d = getenv("CASSETTE_FUZZ_SEEDS");
    return d && *d ? d : NULL;
}

void fz_seed(const char *name, const void *p, size_t n)
{
    char path[1024];
    mkdir(fz_seed_dir(), 0755);
    snprintf(path, sizeof path, "%s/%s", fz_seed_dir(), name);
    if (fz_write_file(path, p, n) != 0) {
        perror(path);
        abort();
    }
}

const uint8_t *fz_chunk(fz_in *in, size_t *len)
{
    size_t n = fz_u16(in);
    if (n > fz_left(in))
        n = fz_left(in);
    const uint8_t *p = in->p + in->pos;
    in->pos += n;
    *len = n;
    return p;
}

/* Sanitizer defaults for every harness (the environment's *_OPTIONS still
 * override them): UBSan reports with a stack, as ASan's do. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "print_stacktrace=1";
}
