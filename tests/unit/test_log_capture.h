/*
 * test_log_capture.h: capture what the code under test logs (stderr) into
 * a buffer, for tests that check a warning is (or is not) given.
 *
 *   test_log_capture cap;
 *   log_capture_begin(&cap, "/tmp/some.log");
 *   ... calls that log ...
 *   log_capture_end(&cap, buf, sizeof buf);   // buf: NUL-terminated log text
 */
#ifndef TEST_LOG_CAPTURE_H
#define TEST_LOG_CAPTURE_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct test_log_capture { int saved, fd; char path[512]; } test_log_capture;

static inline void log_capture_begin(test_log_capture *c, const char *path)
{
    snprintf(c->path, sizeof c->path, "%s", path);
    fflush(stderr);
    c->saved = dup(2);
    c->fd = open(c->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    cr_assert(c->saved >= 0 && c->fd >= 0, "cannot capture the log into %s", c->path);
    dup2(c->fd, 2);
}

static inline void log_capture_end(test_log_capture *c, char *log, size_t cap)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    ssize_t n = pread(c->fd, log, cap - 1, 0);
    log[n > 0 ? n : 0] = 0;
    close(c->fd);
    unlink(c->path);
}

#endif
