/*
 * log.h: leveled logging to stderr with a timestamp, thread-safe.
 * Level from the CASSETTE_LOG environment variable (debug|info|warn|error),
 * default info.
 */
#ifndef CS_LOG_H
#define CS_LOG_H

enum { CS_LOG_DEBUG = 0, CS_LOG_INFO, CS_LOG_WARN, CS_LOG_ERROR };
void cs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_log_set_level(int level);
int cs_log_level(void);   /* CS_LOG_*: the level in use */
#define CS_DEBUG(...) cs_log(CS_LOG_DEBUG, __VA_ARGS__)
#define CS_INFO(...) cs_log(CS_LOG_INFO, __VA_ARGS__)
#define CS_WARN(...) cs_log(CS_LOG_WARN, __VA_ARGS__)
#define CS_ERROR(...) cs_log(CS_LOG_ERROR, __VA_ARGS__)

#endif
