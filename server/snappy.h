/*
 * snappy.h: Snappy for the native protocol's body compression (v3/v4),
 * loaded on first use.  Owner: protocol.
 *
 * libsnappy is C++: linking it would map libstdc++ into every server (about
 * 1 MiB of idle RSS, 4.5 -> 5.4 MiB measured) for a compression few
 * clients ask for.  So the first STARTUP naming snappy loads
 * libsnappy.so.1 (Debian's libsnappy1v5, which libsnappy-dev brings), as
 * Cassandra loads snappy-java's native library; if it cannot be loaded the
 * STARTUP gets Cassandra's own answer for that case, "This instance does
 * not support Snappy compression".  Thread-safe (pthread_once).
 */
#ifndef CS_SERVER_SNAPPY_H
#define CS_SERVER_SNAPPY_H

#include <stdbool.h>
#include <stddef.h>

/* Load the library if not yet tried; whether it is usable. */
bool srv_snappy_available(void);
/* A load was tried and failed (without loading anything).  SUPPORTED lists
 * snappy unless this is true: Cassandra lists it when snappy-java's native
 * library loaded at class initialization, and cassette, loading on demand
 * to keep libstdc++ out of an idle server, knows only after a try. */
bool srv_snappy_known_missing(void);
/* snappy-c.h's functions (0 = SNAPPY_OK); only after srv_snappy_available(). */
int srv_snappy_compress(const char *in, size_t n, char *out, size_t *out_n);
int srv_snappy_uncompress(const char *in, size_t n, char *out, size_t *out_n);
int srv_snappy_uncompressed_length(const char *in, size_t n, size_t *len);
size_t srv_snappy_max_compressed_length(size_t n);

#endif
