/* bench_io.c -- see bench_io.h. Follows bonnie++ 2.00a's TestFileOps()
 * (bonnie++.cpp) and CFileOp (bon_io.cpp) call for call, so strace shows the
 * same reads, writes and lseeks. */
#include "bench_io.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sysio.h"

#define END_SEEK_PROCESS INT_MIN
#define UPDATE_SEEK 10      /* one seek in ten dirties and writes its chunk back */
#define SEEK_START_DELAY_S 3 /* bonnie++ sleeps 3 s for its seekers to start */

/* ==== The big file ==== */

struct bigfile {
    const struct bench_config *cfg;
    int fd;
};

/* Opens the file; create = unlink, then create it exclusively (bonnie++
 * CFileOp::m_open). Counts into calls. Returns 0 or -1 (message printed). */
static int file_open(struct bigfile *f, int create, struct sys_counts *calls)
{
    const struct bench_config *c = f->cfg;
    int flags = O_RDWR;
    if (create) {
        if (sysio_unlinkat(calls, c->dirfd, c->name, 0) && errno != ENOENT) {
            fprintf(stderr, "Can't remove old file %s: %s\n", c->name, strerror(errno));
            return -1;
        }
        flags |= O_CREAT | O_EXCL;
        if (c->p->direct_io)
            flags |= O_DIRECT;
    }
    f->fd = sysio_openat(calls, c->dirfd, c->name, flags, S_IRUSR | S_IWUSR);
    if (f->fd < 0) {
        fprintf(stderr, "Can't open file %s: %s\n", c->name, strerror(errno));
        return -1;
    }
    return 0;
}

/* bonnie++ CFileOp::Close(): fsync, then close. */
static void file_close(struct bigfile *f, struct sys_counts *calls)
{
    if (f->fd < 0)
        return;
    if (sysio_fsync(calls, f->fd))
        fprintf(stderr, "Can't sync file.\n");
    sysio_close(calls, f->fd);
    f->fd = -1;
}

/* Reads one whole chunk, retrying short reads. Returns 0 or -1. */
static int read_block(int fd, char *buf, int chunk, struct sys_counts *calls)
{
    int total = 0;
    while (total != chunk) {
        ssize_t rc = sysio_read(calls, fd, buf + total, (size_t)(chunk - total));
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            perror("Bonnie: drastic I/O error (read(2))");
            return -1;
        }
        if (rc == 0) {
            fprintf(stderr, "Can't read a full block, only got %d bytes.\n", total);
            return -1;
        }
        total += (int)rc;
    }
    return 0;
}

static int write_block(int fd, const char *buf, int chunk, struct sys_counts *calls)
{
    ssize_t rc = sysio_write(calls, fd, buf, (size_t)chunk);
    if (rc != chunk) {
        perror("Can't write block.");
        return -1;
    }
    return 0;
}

/* ==== Per-character tests through stdio (bonnie++ 1.03's putc/getc) ==== */

struct counted_fd {
    int fd;
    struct sys_counts *calls;
    char *buf;      /* the stdio buffer: glibc ignores setvbuf's size without one */
};

static ssize_t cookie_read(void *cookie, char *buf, size_t size)
{
    struct counted_fd *cf = cookie;
    return sysio_read(cf->calls, cf->fd, buf, size);
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
    struct counted_fd *cf = cookie;
    ssize_t rc = sysio_write(cf->calls, cf->fd, buf, size);
    return rc < 0 ? 0 : rc;
}

static int cookie_close(void *cookie)
{
    (void)cookie; /* the fd is closed by file_close(), after its fsync */
    return 0;
}

/* Wraps fd in a FILE whose reads and writes are counted, with the buffer
 * size stdio would pick (st_blksize) unless --stdio-buffer sets one, as a
 * program calling setbuffer() would. Returns the FILE or NULL; the
 * caller fcloses it, then frees cf->buf. */
static FILE *stdio_open(const struct bench_config *c, struct counted_fd *cf, const char *mode)
{
    cookie_io_functions_t fns = {cookie_read, cookie_write, NULL, cookie_close};
    size_t bufsize = c->p->stdio_buffer_bytes;
    if (!bufsize) {
        struct stat st;
        cf->calls->stat++;
        bufsize = (fstat(cf->fd, &st) == 0 && st.st_blksize > 0) ? (size_t)st.st_blksize : BUFSIZ;
    }
    cf->buf = malloc(bufsize);
    FILE *fp = cf->buf ? fopencookie(cf, mode, fns) : NULL;
    if (fp && setvbuf(fp, cf->buf, _IOFBF, bufsize)) {
        fclose(fp);
        fp = NULL;
    }
    if (!fp) {
        free(cf->buf);
        cf->buf = NULL;
    }
    return fp;
}

/* ==== The tests ==== */

/* Ends one of the sequential tests: closes the test file, stops the clock and records the longest
 * single operation and the bytes moved. Returns BENCH_OK, for the test to return. */
static enum bench_status test_finish(const struct bench_config *c, struct bigfile *f, struct timer *t,
                                     const struct op_timer *op, int64_t chunks, struct test_result *r)
{
    file_close(f, &r->calls);
    timer_stop(t, r);
    r->latency_s = op->max_s;
    r->ops = (uint64_t)chunks * (uint64_t)c->p->io_chunk_bytes;
    bench_progress(c, "done\n");
    return BENCH_OK;
}

static enum bench_status test_putc(const struct bench_config *c, struct bigfile *f, int64_t chunks,
                                   struct test_result *r, struct timer *t)
{
    struct op_timer op = {0, 0};
    bench_progress(c, "Writing a byte at a time...");
    int chunk = c->p->io_chunk_bytes;
    if (c->p->char_mode == CHAR_MODE_STDIO) {
        struct counted_fd cf = {f->fd, &r->calls, NULL};
        FILE *fp = stdio_open(c, &cf, "w");
        if (!fp) {
            fprintf(stderr, "Can't set up stdio on the test file.\n");
            return BENCH_ERROR;
        }
        for (int64_t w = 0; w < chunks; w++) {
            op_timer_start(&op);
            for (int i = 0; i < chunk; i++) {
                if (putc(i & 0x7f, fp) == EOF) {
                    fprintf(stderr, "Can't putc() - disk full?\n");
                    fclose(fp);
                    free(cf.buf);
                    return BENCH_ERROR;
                }
            }
            op_timer_stop(&op);
            if (*c->stop) {
                fclose(fp);
                free(cf.buf);
                return BENCH_STOPPED;
            }
        }
        int closed = fclose(fp);
        free(cf.buf);
        if (closed) {
            fprintf(stderr, "Can't flush the stdio buffer - disk full?\n");
            return BENCH_ERROR;
        }
    } else {
        /* bonnie++'s loop exactly: a bare write(2) per byte, the calls counted once per chunk
         * (counting each call cost four more instructions per byte than bonnie++ spends) */
        for (int64_t w = 0; w < chunks; w++) {
            op_timer_start(&op);
            for (int i = 0; i < chunk; i++) {
                char ch = (char)(i & 0x7f);
                if (write(f->fd, &ch, 1) != 1) {
                    r->calls.write += (uint64_t)i + 1;
                    r->calls.bytes_written += (uint64_t)i;
                    fprintf(stderr, "Can't write() - disk full?\n");
                    return BENCH_ERROR;
                }
            }
            r->calls.write += (uint64_t)chunk;
            r->calls.bytes_written += (uint64_t)chunk;
            op_timer_stop(&op);
            if (*c->stop)
                return BENCH_STOPPED;
        }
    }
    return test_finish(c, f, t, &op, chunks, r);
}

static enum bench_status test_getc(const struct bench_config *c, struct bigfile *f, int64_t chunks,
                                   char *buf, struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    int chunk = c->p->io_chunk_bytes;
    if (file_open(f, 0, &r->calls))
        return BENCH_ERROR;
    if (sync_wait(c->sync, TEST_GETC))
        return BENCH_ERROR;
    bench_progress(c, "Reading a byte at a time...");
    timer_start(&t, c->ev);
    if (c->p->char_mode == CHAR_MODE_STDIO) {
        struct counted_fd cf = {f->fd, &r->calls, NULL};
        FILE *fp = stdio_open(c, &cf, "r");
        if (!fp) {
            fprintf(stderr, "Can't set up stdio on the test file.\n");
            return BENCH_ERROR;
        }
        for (int64_t w = 0; w < chunks; w++) {
            op_timer_start(&op);
            for (int i = 0; i < chunk; i++) {
                int ch = getc(fp);
                if (ch == EOF) {
                    fprintf(stderr, "Can't getc()\n");
                    fclose(fp);
                    free(cf.buf);
                    return BENCH_ERROR;
                }
                buf[ch]++; /* just to fool optimizers */
            }
            op_timer_stop(&op);
            if (*c->stop) {
                fclose(fp);
                free(cf.buf);
                return BENCH_STOPPED;
            }
        }
        fclose(fp);
        free(cf.buf);
    } else {
        /* as in test_putc: bonnie++'s loop, the calls counted once per chunk */
        for (int64_t w = 0; w < chunks; w++) {
            op_timer_start(&op);
            for (int i = 0; i < chunk; i++) {
                unsigned char next;
                if (read(f->fd, &next, 1) != 1) {
                    r->calls.read += (uint64_t)i + 1;
                    r->calls.bytes_read += (uint64_t)i;
                    fprintf(stderr, "Can't read a byte\n");
                    return BENCH_ERROR;
                }
                buf[next]++; /* just to fool optimizers */
            }
            r->calls.read += (uint64_t)chunk;
            r->calls.bytes_read += (uint64_t)chunk;
            op_timer_stop(&op);
            if (*c->stop)
                return BENCH_STOPPED;
        }
    }
    return test_finish(c, f, &t, &op, chunks, r);
}

static enum bench_status test_put_block(const struct bench_config *c, struct bigfile *f, int64_t chunks,
                                        char *buf, struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    int chunk = c->p->io_chunk_bytes;
    if (file_open(f, 1, &r->calls))
        return BENCH_ERROR;
    if (sync_wait(c->sync, TEST_PUT_BLOCK))
        return BENCH_ERROR;
    bench_progress(c, "Writing intelligently...");
    memset(buf, 0, (size_t)chunk);
    timer_start(&t, c->ev);
    int bufindex = 0;
    for (int64_t i = 0; i < chunks; i++) {
        if (*c->stop)
            return BENCH_STOPPED;
        buf[bufindex]++;
        bufindex = (bufindex + 1) % chunk;
        op_timer_start(&op);
        if (write_block(f->fd, buf, chunk, &r->calls)) {
            fprintf(stderr, "Can't write block %lld.\n", (long long)i);
            return BENCH_ERROR;
        }
        op_timer_stop(&op);
    }
    return test_finish(c, f, &t, &op, chunks, r);
}

static enum bench_status test_rewrite(const struct bench_config *c, struct bigfile *f, int64_t chunks,
                                      char *buf, struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    int chunk = c->p->io_chunk_bytes;
    if (file_open(f, 0, &r->calls))
        return BENCH_ERROR;
    if (sysio_lseek(&r->calls, f->fd, 0, SEEK_SET) == -1) {
        fprintf(stderr, "error in lseek(2) before rewrite\n");
        return BENCH_ERROR;
    }
    if (sync_wait(c->sync, TEST_REWRITE))
        return BENCH_ERROR;
    bench_progress(c, "Rewriting...");
    timer_start(&t, c->ev);
    int bufindex = 0;
    for (int64_t w = 0; w < chunks; w++) {
        op_timer_start(&op);
        if (read_block(f->fd, buf, chunk, &r->calls))
            return BENCH_ERROR;
        bufindex = bufindex % chunk;
        buf[bufindex]++;
        bufindex++;
        if (sysio_lseek(&r->calls, f->fd, -(off_t)chunk, SEEK_CUR) == -1) {
            perror("Error in lseek back one chunk");
            return BENCH_ERROR;
        }
        if (write_block(f->fd, buf, chunk, &r->calls)) {
            perror("Bonnie: drastic I/O error (re write(2))");
            return BENCH_ERROR;
        }
        op_timer_stop(&op);
        if (*c->stop)
            return BENCH_STOPPED;
    }
    return test_finish(c, f, &t, &op, chunks, r);
}

static enum bench_status test_get_block(const struct bench_config *c, struct bigfile *f, int64_t chunks,
                                        char *buf, struct test_result *r)
{
    struct op_timer op = {0, 0};
    struct timer t;
    int chunk = c->p->io_chunk_bytes;
    if (file_open(f, 0, &r->calls))
        return BENCH_ERROR;
    if (sysio_lseek(&r->calls, f->fd, 0, SEEK_SET) == -1) {
        perror("Bonnie: drastic I/O error (lseek before read)");
        return BENCH_ERROR;
    }
    if (sync_wait(c->sync, TEST_GET_BLOCK))
        return BENCH_ERROR;
    bench_progress(c, "Reading intelligently...");
    timer_start(&t, c->ev);
    for (int64_t i = 0; i < chunks; i++) {
        op_timer_start(&op);
        if (read_block(f->fd, buf, chunk, &r->calls))
            return BENCH_ERROR;
        op_timer_stop(&op);
        if (*c->stop)
            return BENCH_STOPPED;
    }
    return test_finish(c, f, &t, &op, chunks, r);
}

/* ==== Random seeks ==== */

/* What each seeker sends back through the feedback pipe. */
struct seek_report {
    double start_s, end_s;     /* CLOCK_MONOTONIC: comparable across processes */
    double user_s, sys_s;      /* the seeker's own getrusage(RUSAGE_SELF) */
    double latency_s;
    int status;                /* BENCH_* */
    struct sys_counts calls;
    struct seeker_facts facts; /* its wait for a CPU and its block I/O, around its seeks */
};

/* The seeker's own run-queue delay and block I/O so far, from its /proc/self/schedstat (fd) and
 * getrusage. run_delay_known stays 0 without schedstat. */
static void seeker_counters(int schedstat_fd, struct seeker_facts *f)
{
    uint64_t delay_ns;
    f->run_delay_known = evidence_run_delay_ns(schedstat_fd, &delay_ns) == 0;
    f->run_delay_s = f->run_delay_known ? (double)delay_ns / 1e9 : 0;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        f->block_in = ru.ru_inblock;
        f->block_out = ru.ru_oublock;
    }
}

/* Reads exactly n bytes from a pipe, counting each read(2). Returns 0, or
 * -1 on EOF/error, or 1 when interrupted with the stop flag set. */
static int pipe_read_full(int fd, void *buf, size_t n, struct sys_counts *calls,
                          const volatile sig_atomic_t *stop)
{
    size_t got = 0;
    while (got < n) {
        ssize_t rc = read(fd, (char *)buf + got, n - got);
        calls->ipc_read++;
        if (rc < 0 && errno == EINTR) {
            if (*stop)
                return 1;
            continue;
        }
        if (rc <= 0)
            return -1;
        got += (size_t)rc;
    }
    return 0;
}

static int pipe_write_full(int fd, const void *buf, size_t n, struct sys_counts *calls)
{
    size_t done = 0;
    while (done < n) {
        ssize_t rc = write(fd, (const char *)buf + done, n - done);
        calls->ipc_write++;
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        done += (size_t)rc;
    }
    return 0;
}

/* bonnie++ CFileOp::doseek(): read the chunk at `where`, and when update is
 * set dirty one byte, seek back and write it (fsync with -b). */
static int doseek(const struct bench_config *c, int fd, char *buf, unsigned int where, int update,
                  struct sys_counts *calls)
{
    off_t off = (off_t)where * c->p->io_chunk_bytes;
    if (sysio_lseek(calls, fd, off, SEEK_SET) == -1) {
        perror("Error in lseek");
        return -1;
    }
    if (read_block(fd, buf, c->p->io_chunk_bytes, calls))
        return -1;
    if (update) {
        buf[where % (unsigned int)c->p->io_chunk_bytes]--;
        if (sysio_lseek(calls, fd, off, SEEK_SET) == -1) {
            perror("Bonnie: drastic I/O error (lseek in doseek update)");
            return -1;
        }
        if (write_block(fd, buf, c->p->io_chunk_bytes, calls))
            return -1;
        if (c->p->fsync_each && sysio_fsync(calls, fd)) {
            fprintf(stderr, "Can't sync file.\n");
            return -1;
        }
    }
    return 0;
}

/* One seeker process: opens the file itself, takes tickets from the control
 * pipe until END_SEEK_PROCESS, reports to the feedback pipe. Never returns. */
static void seeker_main(const struct bench_config *c, int64_t total_chunks, int ctl_fd, int fb_fd)
{
    struct seek_report rep;
    memset(&rep, 0, sizeof(rep));
    struct bigfile f = {c, -1};
    struct op_timer op = {0, 0};
    char *buf = aligned_alloc(4096, c->p->io_chunk_bytes < 4096 ? 4096 : (size_t)c->p->io_chunk_bytes);
    int ticket;
    rep.status = BENCH_ERROR;
    /* its own /proc/self: the parent's open file describes the parent */
    int schedstat_fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
    struct seeker_facts before = {0};
    if (!buf || file_open(&f, 0, &rep.calls))
        goto report;
    int rc = pipe_read_full(ctl_fd, &ticket, sizeof(ticket), &rep.calls, c->stop);
    double u0, s0;
    seeker_counters(schedstat_fd, &before);
    rep.start_s = timer_now_s();
    timer_cpu_now(&u0, &s0);
    while (rc == 0 && ticket != END_SEEK_PROCESS) {
        int update = 0;
        if (ticket < 0) {
            ticket = -ticket;
            update = 1;
        }
        op_timer_start(&op);
        if (doseek(c, f.fd, buf, (unsigned int)((int64_t)ticket % total_chunks), update, &rep.calls))
            goto report;
        op_timer_stop(&op);
        rep.facts.seeks++;
        if (*c->stop) {
            rep.status = BENCH_STOPPED;
            goto report;
        }
        rc = pipe_read_full(ctl_fd, &ticket, sizeof(ticket), &rep.calls, c->stop);
    }
    if (rc != 0) {
        if (rc == 1)
            rep.status = BENCH_STOPPED;
        else
            fprintf(stderr, "Can't read ticket.\n");
        goto report;
    }
    file_close(&f, &rep.calls);
    rep.end_s = timer_now_s();
    timer_cpu_now(&rep.user_s, &rep.sys_s);
    uint64_t seeks = rep.facts.seeks;
    seeker_counters(schedstat_fd, &rep.facts);
    rep.facts.seeks = seeks;
    rep.user_s -= u0;
    rep.sys_s -= s0;
    rep.latency_s = op.max_s;
    rep.facts.wall_s = rep.end_s - rep.start_s;
    rep.facts.user_s = rep.user_s;
    rep.facts.sys_s = rep.sys_s;
    rep.facts.run_delay_known &= before.run_delay_known;
    rep.facts.run_delay_s -= before.run_delay_s;
    rep.facts.block_in -= before.block_in;
    rep.facts.block_out -= before.block_out;
    rep.status = BENCH_OK;
report:
    if (schedstat_fd >= 0)
        close(schedstat_fd);
    if (pipe_write_full(fb_fd, &rep, sizeof(rep), &rep.calls))
        fprintf(stderr, "Can't write report.\n");
    _exit(rep.status == BENCH_OK ? 0 : 1);
}

static void stop_children(pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGTERM);
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR) {}
}

/* bonnie++ CFileOp::seek_test(): seeks tickets (one in ten negative = update)
 * plus one END per seeker, written down a pipe the seekers share. Elapsed is
 * first seeker start .. last seeker stop; CPU is the seekers' own. */
static enum bench_status test_seeks(const struct bench_config *c, struct bigfile *f, int64_t total_chunks,
                                    struct rng *rng, struct test_result *r)
{
    int procs = c->p->seek_procs;
    size_t count = (size_t)c->p->seeks + (size_t)procs;
    int *tickets = malloc(sizeof(int) * count);
    pid_t *pids = calloc((size_t)procs, sizeof(pid_t));
    r->seekers = calloc((size_t)procs, sizeof(*r->seekers));
    int ctl[2] = {-1, -1}, fb[2] = {-1, -1};
    enum bench_status status = BENCH_ERROR;
    if (!tickets || !pids || !r->seekers) {
        fprintf(stderr, "Out of memory for seek tickets.\n");
        goto out;
    }
    size_t next;
    for (next = 0; next < (size_t)c->p->seeks; next++) {
        int v = rng_next(rng);
        if (v < 0)
            v = -v;
        if (v % UPDATE_SEEK == 0)
            v = -v;
        tickets[next] = v;
    }
    for (; next < count; next++)
        tickets[next] = END_SEEK_PROCESS;
    if (pipe(fb) || pipe(ctl)) {
        perror("Can't open pipes");
        goto out;
    }
    fflush(NULL);
    for (int i = 0; i < procs; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("Can't fork a seeker");
            stop_children(pids, i);
            goto out;
        }
        if (pids[i] == 0) {
            close(ctl[1]);
            close(fb[0]);
            seeker_main(c, total_chunks, ctl[0], fb[1]);
        }
    }
    close(ctl[0]);
    close(fb[1]);
    ctl[0] = fb[1] = -1;
    if (file_open(f, 0, &r->calls)) {
        stop_children(pids, procs);
        goto out;
    }
    struct timespec ts = {SEEK_START_DELAY_S, 0};
    while (nanosleep(&ts, &ts) && errno == EINTR && !*c->stop) {}
    if (*c->stop) {
        stop_children(pids, procs);
        status = BENCH_STOPPED;
        goto out;
    }
    if (sync_wait(c->sync, TEST_SEEKS)) {
        stop_children(pids, procs);
        goto out;
    }
    struct evidence_sample ev_start;
    if (c->ev)
        evidence_sample(c->ev, &ev_start);
    bench_progress(c, "start 'em...");
    if (pipe_write_full(ctl[1], tickets, sizeof(int) * count, &r->calls)) {
        fprintf(stderr, "Can't write tickets.\n");
        stop_children(pids, procs);
        goto out;
    }
    file_close(f, &r->calls);
    double first = 0, last = 0;
    for (int i = 0; i < procs; i++) {
        struct seek_report rep;
        int rc = pipe_read_full(fb[0], &rep, sizeof(rep), &r->calls, c->stop);
        if (rc != 0 || rep.status != BENCH_OK) {
            if (rc == 1 || *c->stop || (rc == 0 && rep.status == BENCH_STOPPED))
                status = BENCH_STOPPED;
            else
                fprintf(stderr, "A seeker failed.\n");
            stop_children(pids, procs);
            goto out;
        }
        if (i == 0 || rep.start_s < first)
            first = rep.start_s;
        if (i == 0 || rep.end_s > last)
            last = rep.end_s;
        r->user_s += rep.user_s;
        r->sys_s += rep.sys_s;
        r->seekers[r->seeker_count++] = rep.facts;
        if (rep.latency_s > r->latency_s)
            r->latency_s = rep.latency_s;
        results_add_calls(&r->calls, &rep.calls);
        bench_progress(c, "done...");
    }
    if (c->ev) {
        struct evidence_sample ev_end;
        evidence_sample(c->ev, &ev_end);
        evidence_delta(c->ev, &ev_start, &ev_end, &r->ev);
    }
    for (int i = 0; i < procs; i++)
        while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR) {}
    bench_progress(c, "\n");
    r->elapsed_s = last - first;
    if (r->elapsed_s <= 0.0)
        r->elapsed_s = 1e-9;
    r->ops = (uint64_t)c->p->seeks;
    status = BENCH_OK;
out:
    for (int i = 0; i < 2; i++) {
        if (ctl[i] >= 0)
            close(ctl[i]);
        if (fb[i] >= 0)
            close(fb[i]);
    }
    free(tickets);
    free(pids);
    return status;
}

/* ==== The sequence ==== */

enum bench_status bench_io_run(const struct bench_config *c, struct rng *rng, struct test_result res[])
{
    struct bigfile f = {c, -1};
    int64_t chunks = (int64_t)(1 << 20) / c->p->io_chunk_bytes * c->p->file_size_mib;
    int64_t char_chunks = (int64_t)(1 << 20) / c->p->io_chunk_bytes * c->p->byte_io_mib;
    char *buf = aligned_alloc(4096, (size_t)c->p->io_chunk_bytes < 4096 ? 4096 : (size_t)c->p->io_chunk_bytes);
    enum bench_status rc;
    if (!buf) {
        fprintf(stderr, "Out of memory.\n");
        return BENCH_ERROR;
    }
    struct test_result *first = char_chunks ? &res[TEST_PUTC] : &res[TEST_PUT_BLOCK];
    if (file_open(&f, 1, &first->calls)) {
        rc = BENCH_ERROR;
        goto out;
    }
    struct timer t;
    if (char_chunks && sync_wait(c->sync, TEST_PUTC)) {
        rc = BENCH_ERROR;
        goto out;
    }
    timer_start(&t, c->ev);
    if (char_chunks) {
        rc = test_putc(c, &f, char_chunks, &res[TEST_PUTC], &t);
        if (rc)
            goto out;
    }
    file_close(&f, &res[TEST_PUT_BLOCK].calls); /* bonnie++ reopen(true) */
    if ((rc = test_put_block(c, &f, chunks, buf, &res[TEST_PUT_BLOCK])))
        goto out;
    if ((rc = test_rewrite(c, &f, chunks, buf, &res[TEST_REWRITE])))
        goto out;
    if (char_chunks && (rc = test_getc(c, &f, char_chunks, buf, &res[TEST_GETC])))
        goto out;
    if ((rc = test_get_block(c, &f, chunks, buf, &res[TEST_GET_BLOCK])))
        goto out;
    rc = test_seeks(c, &f, chunks, rng, &res[TEST_SEEKS]);
out:
    if (f.fd >= 0)
        close(f.fd);
    if (rc == BENCH_OK)
        sysio_unlinkat(&res[TEST_SEEKS].calls, c->dirfd, c->name, 0);
    free(buf);
    return rc;
}
