/* sysio.h -- system-call wrappers that count what each test issues.
 * Every file-system call the benchmarks make goes through these, so the
 * per-test counts in the JSON document are the calls actually made. The one
 * exception is the per-byte read/write loop of getc/putc, which calls read(2)/
 * write(2) bare, as bonnie++ does, and adds the counts once per chunk. */
#ifndef SYSIO_H
#define SYSIO_H

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "timer.h"

static inline ssize_t sysio_read(struct sys_counts *c, int fd, void *buf, size_t n)
{
    ssize_t rc = read(fd, buf, n);
    c->read++;
    if (rc > 0)
        c->bytes_read += (uint64_t)rc;
    return rc;
}

static inline ssize_t sysio_write(struct sys_counts *c, int fd, const void *buf, size_t n)
{
    ssize_t rc = write(fd, buf, n);
    c->write++;
    if (rc > 0)
        c->bytes_written += (uint64_t)rc;
    return rc;
}

static inline off_t sysio_lseek(struct sys_counts *c, int fd, off_t off, int whence)
{
    c->lseek++;
    return lseek(fd, off, whence);
}

/* openat() that never follows a symlink in its last component. */
static inline int sysio_openat(struct sys_counts *c, int dirfd, const char *name, int flags, mode_t mode)
{
    if (flags & O_CREAT)
        c->creat++;
    else
        c->open++;
    return openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

static inline int sysio_close(struct sys_counts *c, int fd)
{
    c->close++;
    return close(fd);
}

static inline int sysio_fsync(struct sys_counts *c, int fd)
{
    c->fsync++;
    return fsync(fd);
}

static inline int sysio_fstatat(struct sys_counts *c, int dirfd, const char *name, struct stat *st)
{
    c->stat++;
    return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
}

static inline int sysio_unlinkat(struct sys_counts *c, int dirfd, const char *name, int flags)
{
    if (flags & AT_REMOVEDIR)
        c->rmdir++;
    else
        c->unlink++;
    return unlinkat(dirfd, name, flags);
}

static inline int sysio_mkdirat(struct sys_counts *c, int dirfd, const char *name)
{
    c->mkdir++;
    return mkdirat(dirfd, name, S_IRWXU);
}

static inline void sysio_sync(struct sys_counts *c)
{
    struct timespec a, b; /* clock_gettime is a vDSO call: no system call added */
    clock_gettime(CLOCK_MONOTONIC, &a);
    c->sync++;
    sync();
    clock_gettime(CLOCK_MONOTONIC, &b);
    c->sync_ns += (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
}

#endif
