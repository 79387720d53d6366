/* bench_files.c -- see bench_files.h. Follows bonnie++ 2.00a's COpenTest
 * (bon_file.cpp): the same names, order, sizes and system calls, but every
 * call goes through a directory fd (openat/unlinkat/fstatat, O_NOFOLLOW). */
#include "bench_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysio.h"

#define NAME_LEN 23               /* 10 digits + 12 random + NUL */
#define RAND_EXTRA_LEN 12
#define DENTS_BUF_BYTES 32768     /* what glibc's readdir() asks getdents64 for */

static const char rand_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

struct file_set {
    int64_t count;
    char *names;      /* count * NAME_LEN bytes */
    int *dir_index;   /* which directory each name lives in */
    int *dir_fds;     /* num_dirs fds, open only with -b (to fsync them) or for one directory (the
                       * test dir itself); else -1 and files are reached as "NNNNN/name" from
                       * test_fd, as bonnie++ does: no handle per directory (30,000 would run out) */
    int test_fd;      /* the test directory */
    char *buf;        /* chunk buffer for file data */
};

#define PATH_LEN (6 + NAME_LEN)  /* "NNNNN/" + name */

/* The fd and relative path that reach name in directory dir: its own fd when open, else
 * "NNNNN/name" from the test directory (path holds PATH_LEN bytes). */
static int at_dir(const struct file_set *s, int dir, const char *name, char *path, const char **rel)
{
    if (s->dir_fds[dir] >= 0) {
        *rel = name;
        return s->dir_fds[dir];
    }
    snprintf(path, PATH_LEN, "%05d/%s", dir, name);
    *rel = path;
    return s->test_fd;
}

void bench_files_make_name(char *buf, struct rng *rng, int64_t i, int random_order)
{
    char rand_buf[RAND_EXTRA_LEN + 1];
    int len = rng_next(rng) % (RAND_EXTRA_LEN + 1);
    int j;
    for (j = 0; j < len; j++)
        rand_buf[j] = rand_chars[rng_next(rng) % (int)(sizeof(rand_chars) - 1)];
    rand_buf[j] = '\0';
    if (random_order)
        snprintf(buf, NAME_LEN, "%s%010llx", rand_buf, (unsigned long long)i);
    else
        snprintf(buf, NAME_LEN, "%010llx%s", (unsigned long long)i, rand_buf);
}

static char *name_at(struct file_set *s, int64_t i)
{
    return s->names + i * NAME_LEN;
}

/* bonnie++ make_names(), including how it fills directories: each gets
 * count/dirs + 1 names in turn. */
static void make_names(const struct bench_config *c, struct file_set *s, struct rng *rng,
                       int random_order)
{
    int64_t per_dir = s->count / c->p->num_dirs;
    int64_t in_dir = 0;
    int dir = 0;
    for (int64_t i = 0; i < s->count; i++) {
        s->dir_index[i] = dir;
        if (++in_dir > per_dir) {
            in_dir = 0;
            dir++;
        }
        bench_files_make_name(name_at(s, i), rng, i, random_order);
    }
}

/* bonnie++ random_sort(): one pass of swaps with random partners. */
static void random_sort(struct file_set *s, struct rng *rng, const volatile sig_atomic_t *stop)
{
    char tmp[NAME_LEN];
    for (int64_t i = 0; i < s->count; i++) {
        int64_t j = rng_next(rng) % s->count;
        memcpy(tmp, name_at(s, i), NAME_LEN);
        memcpy(name_at(s, i), name_at(s, j), NAME_LEN);
        memcpy(name_at(s, j), tmp, NAME_LEN);
        int d = s->dir_index[i];
        s->dir_index[i] = s->dir_index[j];
        s->dir_index[j] = d;
        if (*stop)
            return;
    }
}

static void close_dirs(const struct bench_config *c, struct file_set *s, struct sys_counts *calls)
{
    if (s->dir_fds) {
        for (int i = 0; i < c->p->num_dirs; i++) {
            if (s->dir_fds[i] >= 0 && s->dir_fds[i] != s->test_fd)
                sysio_close(calls, s->dir_fds[i]);
            s->dir_fds[i] = -1;
        }
    }
    if (s->test_fd >= 0)
        sysio_close(calls, s->test_fd);
    s->test_fd = -1;
}

/* mkdir the test directory and its NNNNN subdirectories; open fds to them. */
static int make_dirs(const struct bench_config *c, struct file_set *s, struct sys_counts *calls)
{
    if (sysio_mkdirat(calls, c->dirfd, c->name)) {
        fprintf(stderr, "Can't make directory %s: %s\n", c->name, strerror(errno));
        return -1;
    }
    s->test_fd = sysio_openat(calls, c->dirfd, c->name, O_RDONLY | O_DIRECTORY, 0);
    if (s->test_fd < 0) {
        fprintf(stderr, "Can't open directory %s: %s\n", c->name, strerror(errno));
        return -1;
    }
    if (c->p->num_dirs == 1) {
        s->dir_fds[0] = s->test_fd;
        return 0;
    }
    for (int i = 0; i < c->p->num_dirs; i++) {
        char sub[16];
        snprintf(sub, sizeof(sub), "%05d", i);
        if (sysio_mkdirat(calls, s->test_fd, sub)) {
            fprintf(stderr, "Can't make directory %s\n", sub);
            return -1;
        }
        if (!c->p->fsync_each)
            continue;
        s->dir_fds[i] = sysio_openat(calls, s->test_fd, sub, O_RDONLY | O_DIRECTORY, 0);
        if (s->dir_fds[i] < 0) {
            fprintf(stderr, "Can't get directory handle.\n");
            return -1;
        }
    }
    return 0;
}

/* rmdir the subdirectories and the test directory (after deleting). */
static int remove_dirs(const struct bench_config *c, struct file_set *s, struct sys_counts *calls)
{
    int test_fd = s->test_fd;
    s->test_fd = -1; /* closed below, after the subdirectories are gone */
    for (int i = 0; c->p->num_dirs > 1 && i < c->p->num_dirs; i++) {
        char sub[16];
        snprintf(sub, sizeof(sub), "%05d", i);
        if (s->dir_fds[i] >= 0)
            sysio_close(calls, s->dir_fds[i]);
        s->dir_fds[i] = -1;
        if (sysio_unlinkat(calls, test_fd, sub, AT_REMOVEDIR)) {
            perror("Bonnie: drastic I/O error (rmdir)");
            sysio_close(calls, test_fd);
            return -1;
        }
    }
    s->dir_fds[0] = -1;
    sysio_close(calls, test_fd);
    if (sysio_unlinkat(calls, c->dirfd, c->name, AT_REMOVEDIR)) {
        perror("Bonnie: drastic I/O error (rmdir)");
        return -1;
    }
    return 0;
}

static int create_a_file(const struct bench_config *c, struct file_set *s, int dir,
                         const char *name, int64_t size, struct sys_counts *calls)
{
    char path[PATH_LEN];
    const char *rel;
    int dfd = at_dir(s, dir, name, path, &rel);
    int fd = sysio_openat(calls, dfd, rel, O_CREAT | O_EXCL | O_WRONLY, S_IRUSR | S_IWUSR);
    if (fd < 0) {
        fprintf(stderr, "Can't create file %s: %s\n", name, strerror(errno));
        return -1;
    }
    if (c->p->max_size) {
        for (int64_t i = 0; i < size; i += c->p->file_chunk_bytes) {
            int64_t to_write = size - i;
            if (to_write > c->p->file_chunk_bytes)
                to_write = c->p->file_chunk_bytes;
            if (sysio_write(calls, fd, s->buf, (size_t)to_write) != to_write) {
                fprintf(stderr, "Can't write data.\n");
                sysio_close(calls, fd);
                return -1;
            }
        }
    }
    if (c->p->fsync_each) {
        if (sysio_fsync(calls, fd)) {
            fprintf(stderr, "Can't sync file.\n");
            sysio_close(calls, fd);
            return -1;
        }
        if (sysio_fsync(calls, s->dir_fds[dir]))
            fprintf(stderr, "Can't sync directory.\n");
    }
    sysio_close(calls, fd);
    return 0;
}

static int create_a_link(const struct bench_config *c, struct file_set *s, int64_t i,
                         struct sys_counts *calls)
{
    int dir = s->dir_index[i];
    int rc;
    if (c->p->max_size == -1) {
        calls->link++;
        char from_path[PATH_LEN], to_path[PATH_LEN];
        const char *from, *to;
        int from_fd = at_dir(s, s->dir_index[0], name_at(s, 0), from_path, &from);
        int to_fd = at_dir(s, dir, name_at(s, i), to_path, &to);
        rc = linkat(from_fd, from, to_fd, to, 0);
    } else {
        calls->symlink++; /* like bonnie++: the target is the bare name of file 0 */
        char to_path[PATH_LEN];
        const char *to;
        int to_fd = at_dir(s, dir, name_at(s, i), to_path, &to);
        rc = symlinkat(name_at(s, 0), to_fd, to);
    }
    if (rc) {
        fprintf(stderr, "Can't create link %s: %s\n", name_at(s, i), strerror(errno));
        return -1;
    }
    if (c->p->fsync_each && sysio_fsync(calls, s->dir_fds[dir])) {
        fprintf(stderr, "Can't sync file.\n");
        return -1;
    }
    return 0;
}

static enum bench_status test_create(const struct bench_config *c, struct file_set *s, struct rng *rng,
                                     int random_order, struct test_result *r)
{
    make_names(c, s, rng, random_order);
    if (*c->stop)
        return BENCH_STOPPED;
    if (make_dirs(c, s, &r->calls))
        return BENCH_ERROR;
    struct op_timer op = {0, 0};
    struct timer t;
    int64_t range = c->p->max_size - c->p->min_size;
    timer_start(&t, c->ev);
    for (int64_t i = 0; i < s->count; i++) {
        if (*c->stop)
            return BENCH_STOPPED;
        op_timer_start(&op);
        if (c->p->max_size < 0) {
            if (i == 0) {
                if (create_a_file(c, s, s->dir_index[0], name_at(s, 0), 0, &r->calls))
                    return BENCH_ERROR;
            } else if (create_a_link(c, s, i, &r->calls)) {
                return BENCH_ERROR;
            }
        } else {
            int64_t size = range ? c->p->min_size + rng_next(rng) % (range + 1) : c->p->max_size;
            if (create_a_file(c, s, s->dir_index[i], name_at(s, i), size, &r->calls))
                return BENCH_ERROR;
        }
        op_timer_stop(&op);
    }
    sysio_sync(&r->calls);
    timer_stop(&t, r);
    r->latency_s = op.max_s;
    r->ops = (uint64_t)s->count;
    return BENCH_OK;
}

/* bonnie++ stat_file(): stat, and read the data if the file has any. */
static int stat_file(const struct bench_config *c, struct file_set *s, int dirfd, const char *name,
                     struct sys_counts *calls)
{
    struct stat st;
    if (sysio_fstatat(calls, dirfd, name, &st)) {
        fprintf(stderr, "Can't stat file %s\n", name);
        return -1;
    }
    if (st.st_size && S_ISREG(st.st_mode)) {
        int fd = sysio_openat(calls, dirfd, name, O_RDONLY, 0);
        if (fd < 0) {
            fprintf(stderr, "Can't open file %s\n", name);
            return -1;
        }
        for (off_t i = 0; i < st.st_size; i += c->p->file_chunk_bytes) {
            off_t to_read = st.st_size - i;
            if (to_read > c->p->file_chunk_bytes)
                to_read = c->p->file_chunk_bytes;
            if (sysio_read(calls, fd, s->buf, (size_t)to_read) != to_read) {
                fprintf(stderr, "Can't read data.\n");
                sysio_close(calls, fd);
                return -1;
            }
        }
        sysio_close(calls, fd);
    }
    return 0;
}

struct dents {
    int fd;
    _Alignas(struct dirent64) char buf[DENTS_BUF_BYTES];
    long len, pos;
};

/* Next directory entry name, or NULL at the end (or on error: *err set). */
static const char *dents_next(struct dents *d, struct sys_counts *calls, int *err)
{
    for (;;) {
        if (d->pos >= d->len) {
            calls->getdents++;
            ssize_t n = getdents64(d->fd, d->buf, sizeof(d->buf));
            if (n < 0)
                *err = 1;
            if (n <= 0)
                return NULL;
            d->len = n;
            d->pos = 0;
        }
        struct dirent64 *e = (struct dirent64 *)(d->buf + d->pos);
        d->pos += e->d_reclen;
        return e->d_name;
    }
}

/* Sequential stat (do_delete=0) or delete (1): walk each directory in
 * readdir order, as bonnie++ does with opendir(".")/readdir(). */
static enum bench_status test_walk(const struct bench_config *c, struct file_set *s, int do_delete,
                                   struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    struct dents *d = malloc(sizeof(*d));
    int64_t count = 0;
    enum bench_status rc = BENCH_ERROR;
    if (!d) {
        fprintf(stderr, "Out of memory.\n");
        return BENCH_ERROR;
    }
    timer_start(&t, c->ev);
    for (int i = 0; i < c->p->num_dirs; i++) {
        char sub[16];
        snprintf(sub, sizeof(sub), "%05d", i);
        d->fd = s->dir_fds[i] >= 0 ? sysio_openat(&r->calls, s->dir_fds[i], ".", O_RDONLY | O_DIRECTORY, 0)
                                   : sysio_openat(&r->calls, s->test_fd, sub, O_RDONLY | O_DIRECTORY, 0);
        int dfd = d->fd; /* the directory being read: its entries are stat'ed or unlinked through it */
        d->len = d->pos = 0;
        if (d->fd < 0) {
            fprintf(stderr, "Can't open directory.\n");
            goto out;
        }
        int err = 0;
        for (;;) {
            op_timer_start(&op);
            const char *name = dents_next(d, &r->calls, &err);
            if (!name)
                break;
            if (*c->stop) {
                sysio_close(&r->calls, d->fd);
                rc = BENCH_STOPPED;
                goto out;
            }
            if (name[0] == '.') { /* our files never start with a dot */
                /* bonnie++ times every readdir(), "." and ".." too, so the directory's first read
                 * (getdents of a cold directory) belongs to the latency, as in bonnie++'s figures */
                op_timer_stop(&op);
                continue;
            }
            if (do_delete) {
                if (sysio_unlinkat(&r->calls, dfd, name, 0)) {
                    fprintf(stderr, "Can't delete file %s\n", name);
                    sysio_close(&r->calls, d->fd);
                    goto out;
                }
                if (c->p->fsync_each && sysio_fsync(&r->calls, dfd))
                    fprintf(stderr, "Can't sync directory.\n");
            } else if (stat_file(c, s, dfd, name, &r->calls)) {
                sysio_close(&r->calls, d->fd);
                goto out;
            }
            count++;
            op_timer_stop(&op);
        }
        sysio_close(&r->calls, d->fd);
        if (err) {
            fprintf(stderr, "Can't read directory.\n");
            goto out;
        }
    }
    if (do_delete && remove_dirs(c, s, &r->calls))
        goto out;
    if (count != s->count) {
        fprintf(stderr, "Expected %lld files but only got %lld\n", (long long)s->count, (long long)count);
        goto out;
    }
    if (do_delete)
        sysio_sync(&r->calls);
    timer_stop(&t, r);
    r->latency_s = op.max_s;
    r->ops = (uint64_t)count;
    rc = BENCH_OK;
out:
    free(d);
    return rc;
}

static enum bench_status test_stat_random(const struct bench_config *c, struct file_set *s, struct rng *rng,
                                          struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    random_sort(s, rng, c->stop);
    timer_start(&t, c->ev);
    for (int64_t i = 0; i < s->count; i++) {
        if (*c->stop)
            return BENCH_STOPPED;
        op_timer_start(&op);
        char path[PATH_LEN];
        const char *rel;
        int dfd = at_dir(s, s->dir_index[i], name_at(s, i), path, &rel);
        if (stat_file(c, s, dfd, rel, &r->calls))
            return BENCH_ERROR;
        op_timer_stop(&op);
    }
    timer_stop(&t, r);
    r->latency_s = op.max_s;
    r->ops = (uint64_t)s->count;
    return BENCH_OK;
}

static enum bench_status test_delete_random(const struct bench_config *c, struct file_set *s, struct rng *rng,
                                            struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    random_sort(s, rng, c->stop);
    timer_start(&t, c->ev);
    for (int64_t i = 0; i < s->count; i++) {
        if (*c->stop)
            return BENCH_STOPPED;
        int dir = s->dir_index[i];
        char path[PATH_LEN];
        const char *rel;
        int dfd = at_dir(s, dir, name_at(s, i), path, &rel);
        op_timer_start(&op);
        if (sysio_unlinkat(&r->calls, dfd, rel, 0)) {
            fprintf(stderr, "Can't delete file %s\n", name_at(s, i));
            return BENCH_ERROR;
        }
        if (c->p->fsync_each && sysio_fsync(&r->calls, dfd))
            fprintf(stderr, "Can't sync directory.\n");
        op_timer_stop(&op);
    }
    if (remove_dirs(c, s, &r->calls))
        return BENCH_ERROR;
    sysio_sync(&r->calls);
    timer_stop(&t, r);
    r->latency_s = op.max_s;
    r->ops = (uint64_t)s->count;
    return BENCH_OK;
}

enum bench_status bench_files_run(const struct bench_config *c, struct rng *rng, struct test_result res[])
{
    struct file_set s;
    enum bench_status rc = BENCH_ERROR;
    memset(&s, 0, sizeof(s));
    s.test_fd = -1;
    s.count = c->p->num_files * 1024;
    s.names = malloc((size_t)s.count * NAME_LEN);
    s.dir_index = malloc((size_t)s.count * sizeof(int));
    s.dir_fds = malloc((size_t)c->p->num_dirs * sizeof(int));
    s.buf = calloc(1, (size_t)c->p->file_chunk_bytes);
    if (!s.names || !s.dir_index || !s.dir_fds || !s.buf) {
        fprintf(stderr, "Out of memory for %lld file names.\n", (long long)s.count);
        goto out;
    }
    for (int i = 0; i < c->p->num_dirs; i++)
        s.dir_fds[i] = -1;
    if (sync_wait(c->sync, TEST_SEQ_CREATE)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "Create files in sequential order...");
    if ((rc = test_create(c, &s, rng, 0, &res[TEST_SEQ_CREATE])))
        goto out;
    if (sync_wait(c->sync, TEST_SEQ_STAT)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "done.\nStat files in sequential order...");
    if ((rc = test_walk(c, &s, 0, &res[TEST_SEQ_STAT])))
        goto out;
    if (sync_wait(c->sync, TEST_SEQ_DEL)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "done.\nDelete files in sequential order...");
    if ((rc = test_walk(c, &s, 1, &res[TEST_SEQ_DEL])))
        goto out;
    bench_progress(c, "done.\n");
    if (sync_wait(c->sync, TEST_RAN_CREATE)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "Create files in random order...");
    if ((rc = test_create(c, &s, rng, 1, &res[TEST_RAN_CREATE])))
        goto out;
    if (sync_wait(c->sync, TEST_RAN_STAT)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "done.\nStat files in random order...");
    if ((rc = test_stat_random(c, &s, rng, &res[TEST_RAN_STAT])))
        goto out;
    if (sync_wait(c->sync, TEST_RAN_DEL)) {
        rc = BENCH_ERROR;
        goto out;
    }
    bench_progress(c, "done.\nDelete files in random order...");
    if ((rc = test_delete_random(c, &s, rng, &res[TEST_RAN_DEL])))
        goto out;
    bench_progress(c, "done.\n");
out:
    if (rc != BENCH_OK) {
        struct sys_counts ignored;
        memset(&ignored, 0, sizeof(ignored));
        close_dirs(c, &s, &ignored);
    }
    free(s.names);
    free(s.dir_index);
    free(s.dir_fds);
    free(s.buf);
    return rc;
}
