/*
 * fuzz_common.h: helpers shared by the libFuzzer harnesses in tests/fuzz/
 * (docs/fuzzing.md): a scratch directory per process on tmpfs, quiet logs,
 * a byte reader over the fuzzer's input, the seed-writing mode, and the
 * RESULT body check of the harnesses that run CQL (fuzz_cql, fuzz_conn).
 *
 * Seeds: a harness run with CASSETTE_FUZZ_SEEDS=<dir> writes its seed
 * corpus (small valid inputs it builds with the project's own encoders and
 * writers) into <dir> from LLVMFuzzerInitialize and exits, so seeds always
 * match the current formats (tests/fuzz/seeds.sh).
 */
#ifndef CS_TESTS_FUZZ_COMMON_H
#define CS_TESTS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Logs off (CASSETTE_LOG=... in the environment keeps them). */
void fz_quiet(void);
/* A fresh directory /dev/shm/cassette-fuzz-<tag>-<pid> (or under /tmp),
 * removed at exit; the returned string is static. */
const char *fz_scratch_dir(const char *tag);
/* Remove every file in dir and its subdirectories (dir itself stays). */
void fz_empty_dir(const char *dir);
/* Write a whole file (0 or -1). */
int fz_write_file(const char *path, const void *p, size_t n);

/* The seed directory (CASSETTE_FUZZ_SEEDS), or NULL when fuzzing. */
const char *fz_seed_dir(void);
/* Write seed <dir>/<name> (aborts on failure: seeds are for a script). */
void fz_seed(const char *name, const void *p, size_t n);

/* A cursor over the fuzzer's bytes: reads past the end give zeros/empty. */
typedef struct fz_in { const uint8_t *p; size_t n, pos; } fz_in;
static inline uint8_t fz_u8(fz_in *in) { return in->pos < in->n ? in->p[in->pos++] : 0; }
static inline uint16_t fz_u16(fz_in *in) { uint16_t a = fz_u8(in); return (uint16_t)(a << 8 | fz_u8(in)); }
static inline size_t fz_left(const fz_in *in) { return in->n - in->pos; }
/* The next [u16 length][bytes] chunk (clipped to what is left). */
const uint8_t *fz_chunk(fz_in *in, size_t *len);

/* What fz_check_result read in a RESULT body. */
typedef struct fz_result {
    int32_t kind;                    /* RESULT_* (server/frame.h) */
    bool have_id;                    /* kind 4: id holds the prepared statement id */
    uint8_t id[16];
    int32_t ps_len;                  /* kind 2: the paging state's length (-1: none, or too long) */
    uint8_t ps[4096];
} fz_result;
/* Check a RESULT body as a client at protocol `version` reads it (spec v4
 * §4.2.5, v3's PREPARED without partition key indexes): kinds 1 to 5, the
 * metadata and its types, every row value valid for its column type
 * (ctype_validate) and formattable, nothing after.  abort()s with `what`
 * in the message on the first violation. */
void fz_check_result(const char *what, int version, const uint8_t *body, size_t len, fz_result *out);

#endif
