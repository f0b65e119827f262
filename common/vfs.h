/*
 * vfs.h: the file-I/O seam.  Owner: storage engineer.  Callers: storage/
 * (commit log, sstables) and tools.
 *
 * Every file operation of the storage engine goes through these wrappers so
 * tests can inject faults (EIO, ENOSPC, torn writes) without touching the
 * engine.  Functions return 0 (or a byte count) on success and a negative
 * CS_E* code on failure, with the OS errno kept in cs_last_errno.
 * Thread-safe: plain syscalls; the fault hook is a global set by tests only.
 */
#ifndef CS_VFS_H
#define CS_VFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum { VFS_OP_OPEN = 1, VFS_OP_READ, VFS_OP_WRITE, VFS_OP_SYNC, VFS_OP_RENAME, VFS_OP_UNLINK, VFS_OP_SYNC_DIR };

/* Fault hook: called before each operation with the op and path (NULL if
 * unknown).  Return 0 to proceed, or an errno (EIO, ENOSPC) to fail it. */
typedef int (*vfs_fault_cb)(int op, const char *path, void *arg);
void vfs_set_fault(vfs_fault_cb cb, void *arg);

int vfs_open(const char *path, int flags, int mode);           /* fd >= 0 or CS_EIO/CS_ENOTFOUND */
int vfs_close(int fd);
ssize_t vfs_pread(int fd, void *p, size_t n, uint64_t off);    /* reads fully unless EOF */
ssize_t vfs_pwrite(int fd, const void *p, size_t n, uint64_t off);
ssize_t vfs_write(int fd, const void *p, size_t n);            /* append at the fd's offset */
int vfs_fsync(int fd);                                         /* fdatasync */
int vfs_truncate(int fd, uint64_t len);                        /* ftruncate (a write, for faults) */
int vfs_fsync_dir(const char *dir);                            /* fsync of a directory (VFS_OP_SYNC_DIR) */
int vfs_rename(const char *from, const char *to);
int vfs_link(const char *from, const char *to);                /* hard link (faults as a rename) */
int vfs_unlink(const char *path);
int vfs_mkdirs(const char *path);                              /* mkdir -p */
int vfs_rmtree(const char *path);                              /* rm -rf (one level of files + dir) */
int64_t vfs_file_size(const char *path);                       /* bytes or <0 */
int64_t vfs_file_mtime_ms(const char *path);                   /* last modification, ms since the epoch, or <0 */
/* Replace path's contents durably: path.tmp is written, fsynced and
 * renamed over path, then path's directory is fsynced.  After a crash path
 * holds its old contents (or is absent) or all len bytes, never a torn
 * prefix.  0 or CS_E*; on failure path.tmp is removed (path is untouched
 * unless only the directory fsync failed, which leaves the new contents). */
int vfs_write_atomic(const char *path, const void *p, size_t len);
/* Read a whole file into a cs_malloc'd buffer (*out, *len); caller frees. */
int vfs_read_all(const char *path, uint8_t **out, size_t *len);
/* List names in a directory (excluding . and ..): cs_malloc'd array of
 * cs_malloc'd strings; free with vfs_list_free. */
int vfs_list(const char *dir, char ***names, int *n);
void vfs_list_free(char **names, int n);

#endif
