/*
 * err.h: cassette's internal error codes and the user-facing error record.
 *
 * Internal functions return int: 0 is success, a negative CS_E* value is an
 * error.  I/O errors keep the OS errno in the thread-local cs_last_errno.
 *
 * A user-facing error (one that becomes an ERROR frame) is a cs_error: the
 * native protocol error code (spec v4 §9), Cassandra's wording, and the extra
 * fields some codes carry.  Fill it once with cs_error_set(); the first error
 * recorded wins (sticky), so callers deep in the stack can record and return.
 */
#ifndef CS_ERR_H
#define CS_ERR_H

#include <stdint.h>
#include <stddef.h>

enum {
    CS_OK = 0,
    CS_ENOMEM = -1,     /* allocation failed */
    CS_EIO = -2,        /* I/O error; see cs_last_errno */
    CS_ECORRUPT = -3,   /* bad checksum, bad magic, impossible length */
    CS_ENOTFOUND = -4,  /* no such key/file/object */
    CS_EINVAL = -5,     /* invalid argument or input */
    CS_EEXIST = -6,     /* already exists */
    CS_ETOOBIG = -7,    /* value or frame over a configured limit */
    CS_EAGAIN = -8,     /* try again (back-pressure) */
    CS_EUSER = -9,      /* a cs_error was recorded; see it */
    CS_ECANCELED = -10, /* stopped on request (nodetool stop) */
};

const char *cs_strerror(int rc);
extern _Thread_local int cs_last_errno;

/* Native protocol error codes, spec v4 §9 (Cassandra ExceptionCode.java). */
enum {
    CS_ERR_SERVER = 0x0000,
    CS_ERR_PROTOCOL = 0x000A,
    CS_ERR_BAD_CREDENTIALS = 0x0100,
    CS_ERR_UNAVAILABLE = 0x1000,
    CS_ERR_OVERLOADED = 0x1001,
    CS_ERR_IS_BOOTSTRAPPING = 0x1002,
    CS_ERR_TRUNCATE = 0x1003,
    CS_ERR_WRITE_TIMEOUT = 0x1100,
    CS_ERR_READ_TIMEOUT = 0x1200,
    CS_ERR_READ_FAILURE = 0x1300,
    CS_ERR_FUNCTION_FAILURE = 0x1400,
    CS_ERR_WRITE_FAILURE = 0x1500,
    CS_ERR_SYNTAX = 0x2000,
    CS_ERR_UNAUTHORIZED = 0x2100,
    CS_ERR_INVALID = 0x2200,
    CS_ERR_CONFIG = 0x2300,
    CS_ERR_ALREADY_EXISTS = 0x2400,
    CS_ERR_UNPREPARED = 0x2500,
};

/*
 * A user-facing error.  Extra fields by code (spec v4 §9):
 *   UNAVAILABLE: cl, required, alive
 *   WRITE_TIMEOUT: cl, received, blockfor, write_type
 *   READ_TIMEOUT: cl, received, blockfor, data_present
 *   READ_FAILURE: cl, received, blockfor, numfailures, data_present
 *   WRITE_FAILURE: cl, received, blockfor, numfailures, write_type
 *   FUNCTION_FAILURE: keyspace, function, arg_types (strings)
 *   ALREADY_EXISTS: keyspace, table
 *   UNPREPARED: id (unprepared_id, id_len bytes)
 */
typedef struct cs_error {
    int code;                 /* CS_ERR_*; -1 = no error recorded */
    char msg[1024];           /* Cassandra's wording */
    uint16_t cl;              /* consistency level for timeout/failure/unavailable */
    int32_t received, blockfor, alive, numfailures;
    uint8_t data_present;     /* READ_TIMEOUT / READ_FAILURE */
    char write_type[24];      /* "SIMPLE", "BATCH", "CAS", ... */
    char keyspace[256];       /* ALREADY_EXISTS, FUNCTION_FAILURE */
    char table[256];          /* ALREADY_EXISTS (empty for a keyspace); function name */
    char arg_types[256];      /* FUNCTION_FAILURE: comma separated */
    uint8_t unprepared_id[16];/* UNPREPARED */
    int unprepared_id_len;
    char failure_endpoint[48];/* READ_/WRITE_FAILURE: the failed replica's address (v5 <reasonmap>) */
    uint16_t failure_reason;  /* ... and its RequestFailureReason code */
} cs_error;

void cs_error_init(cs_error *e);
/* Record code+printf message unless an error is already recorded.  Returns CS_EUSER. */
int cs_error_set(cs_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int cs_error_isset(const cs_error *e) { return e->code >= 0; }

/* Corruption: log file/line/what/offset once, return CS_ECORRUPT. */
int cs__corrupt(const char *file, int line, const char *what, const char *path, uint64_t off);
#define CS_CORRUPT(what, path, off) cs__corrupt(__FILE__, __LINE__, (what), (path), (off))

#endif
