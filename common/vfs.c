/*
 * vfs.c: thin wrappers over POSIX file calls with a fault-injection hook.
 * See vfs.h.
 */
#include "common/vfs.h"
#include "common/alloc.h"
#include "common/err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static vfs_fault_cb g_fault;
static void *g_fault_arg;

void vfs_set_fault(vfs_fault_cb cb, void *arg) { g_fault_arg = arg; g_fault = cb; }

/* Ask the fault hook; returns 0 or the injected errno. */
static int fault(int op, const char *path)
{
    if (!g_fault) return 0;
    return g_fault(op, path, g_fault_arg);
}

static int io_err(int err)
{
    cs_last_errno = err;
    return err == ENOENT ? CS_ENOTFOUND : CS_EIO;
}

int vfs_open(const char *path, int flags, int mode)
{
    int f = fault(VFS_OP_OPEN, path);
    if (f) return io_err(f);
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0) return io_err(errno);
    return fd;
}

int vfs_close(int fd) { return fd >= 0 && close(fd) != 0 ? io_err(errno) : 0; }

ssize_t vfs_pread(int fd, void *p, size_t n, uint64_t off)
{
    int f = fault(VFS_OP_READ, NULL);
    if (f) return io_err(f);
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)p + got, n - got, (off_t)(off + got));
        if (r < 0) { if (errno == EINTR) continue; return io_err(errno); }
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int vfs_truncate(int fd, uint64_t len)
{
    int f = fault(VFS_OP_WRITE, NULL);
    if (f) return io_err(f);
    return ftruncate(fd, (off_t)len) != 0 ? io_err(errno) : 0;
}

ssize_t vfs_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
    int f = fault(VFS_OP_WRITE, NULL);
    if (f) return io_err(f);
    size_t put = 0;
    while (put < n) {
        ssize_t r = pwrite(fd, (const uint8_t *)p + put, n - put, (off_t)(off + put));
        if (r < 0) { if (errno == EINTR) continue; return io_err(errno); }
        put += (size_t)r;
    }
    return (ssize_t)put;
}

ssize_t vfs_write(int fd, const void *p, size_t n)
{
    int f = fault(VFS_OP_WRITE, NULL);
    if (f) return io_err(f);
    size_t put = 0;
    while (put < n) {
        ssize_t r = write(fd, (const uint8_t *)p + put, n - put);
        if (r < 0) { if (errno == EINTR) continue; return io_err(errno); }
        put += (size_t)r;
    }
    return (ssize_t)put;
}

int vfs_fsync(int fd)
{
    int f = fault(VFS_OP_SYNC, NULL);
    if (f) return io_err(f);
    return fdatasync(fd) != 0 ? io_err(errno) : 0;
}

int vfs_fsync_dir(const char *dir)
{
    int f = fault(VFS_OP_SYNC_DIR, dir);
    if (f) return io_err(f);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return io_err(errno);
    int rc = fsync(fd) != 0 ? io_err(errno) : 0;
    close(fd);
    return rc;
}

int vfs_rename(const char *from, const char *to)
{
    int f = fault(VFS_OP_RENAME, from);
    if (f) return io_err(f);
    return rename(from, to) != 0 ? io_err(errno) : 0;
}

int vfs_link(const char *from, const char *to)
{
    int f = fault(VFS_OP_RENAME, from);
    if (f) return io_err(f);
    return link(from, to) != 0 ? io_err(errno) : 0;
}

int vfs_unlink(const char *path)
{
    int f = fault(VFS_OP_UNLINK, path);
    if (f) return io_err(f);
    return unlink(path) != 0 ? io_err(errno) : 0;
}

int vfs_write_atomic(const char *path, const void *p, size_t len)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) return CS_EINVAL;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = vfs_open(tmp, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) return fd;
    ssize_t w = vfs_write(fd, p, len);
    int rc = w < 0 ? (int)w : (size_t)w != len ? CS_EIO : vfs_fsync(fd);
    int crc = vfs_close(fd);
    if (!rc) rc = crc;
    if (!rc) rc = vfs_rename(tmp, path);
    if (rc) {
        int keep = cs_last_errno;   /* the failure's errno, not the clean-up's */
        unlink(tmp);
        cs_last_errno = keep;
        return rc;
    }
    return vfs_fsync_dir(dir);
}

int vfs_mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp) return CS_EINVAL;
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return io_err(errno);
            tmp[i] = c;
        }
    }
    return 0;
}

int vfs_rmtree(const char *path)
{
    char **names; int n;
    int rc = vfs_list(path, &names, &n);
    if (rc == CS_ENOTFOUND) return 0;
    if (rc) return rc;
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) vfs_rmtree(p);
        else unlink(p);
    }
    vfs_list_free(names, n);
    return rmdir(path) != 0 ? io_err(errno) : 0;
}

int64_t vfs_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return io_err(errno);
    return (int64_t)st.st_size;
}

int64_t vfs_file_mtime_ms(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return io_err(errno);
    return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

int vfs_read_all(const char *path, uint8_t **out, size_t *len)
{
    *out = NULL; *len = 0;
    int fd = vfs_open(path, O_RDONLY, 0);
    if (fd < 0) return fd;
    struct stat st;
    if (fstat(fd, &st) != 0) { int rc = io_err(errno); close(fd); return rc; }
    size_t n = (size_t)st.st_size;
    uint8_t *p = cs_malloc(n ? n : 1);
    if (!p) { close(fd); return CS_ENOMEM; }
    ssize_t r = vfs_pread(fd, p, n, 0);
    close(fd);
    if (r < 0) { cs_free(p); return (int)r; }
    *out = p; *len = (size_t)r;
    return 0;
}

int vfs_list(const char *dir, char ***names, int *n)
{
    *names = NULL; *n = 0;
    DIR *d = opendir(dir);
    if (!d) return io_err(errno);
    int cap = 0, cnt = 0;
    char **v = NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = cs_realloc(v, (size_t)cap * sizeof *v);
            if (!nv) { vfs_list_free(v, cnt); closedir(d); return CS_ENOMEM; }
            v = nv;
        }
        v[cnt] = cs_strdup(de->d_name);
        if (!v[cnt]) { vfs_list_free(v, cnt); closedir(d); return CS_ENOMEM; }
        cnt++;
    }
    closedir(d);
    *names = v; *n = cnt;
    return 0;
}

void vfs_list_free(char **names, int n)
{
    for (int i = 0; i < n; i++) cs_free(names[i]);
    cs_free(names);
}
