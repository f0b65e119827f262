/* log.c: leveled logging to stderr (see log.h). */
#include "common/log.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int level = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int current_level(void)
{
    if (level < 0) {
        const char *e = getenv("CASSETTE_LOG");
        level = CS_LOG_INFO;
        if (e) {
            if (!strcmp(e, "debug")) level = CS_LOG_DEBUG;
            else if (!strcmp(e, "warn")) level = CS_LOG_WARN;
            else if (!strcmp(e, "error")) level = CS_LOG_ERROR;
        }
    }
    return level;
}

void cs_log_set_level(int l) { level = l; }

int cs_log_level(void) { return current_level(); }

void cs_log(int lvl, const char *fmt, ...)
{
    if (lvl < current_level())
        return;
    static const char *names[] = { "DEBUG", "INFO", "WARN", "ERROR" };
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&mu);
    fprintf(stderr, "%04d-%02d-%02d %02d:%02d:%02d.%03ld %-5s %s\n", tm.tm_year + 1900, tm.tm_mon + 1,
            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
            names[lvl < 0 ? 0 : lvl > 3 ? 3 : lvl], msg);
    pthread_mutex_unlock(&mu);
}
