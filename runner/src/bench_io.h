/* bench_io.h -- bonnie++ 2.00a's I/O tests on one big file (bon_io
 * analogue): per-char write, block write, rewrite, per-char read, block
 * read, and random seeks by forked seeker processes. */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "evidence.h"
#include "sync.h"
#include "rng.h"
#include "timer.h"

/* Results of the bench_* functions. */
#define BENCH_OK 0
#define BENCH_ERROR (-1)
#define BENCH_STOPPED 1

struct io_config {
    int dirfd;                      /* scratch directory */
    const char *name;               /* file name inside it */
    const struct bench_params *p;   /* sizes, chunk, seeks, -b, -D, char mode */
    int quiet;
    const struct bench_sync *sync;  /* -y: wait for the other processes before each test; NULL none */
    const struct evidence_source *ev; /* what to sample around each test; NULL: nothing */
    const volatile sig_atomic_t *stop;
};

/* Runs the I/O tests in bonnie++'s order, filling res[TEST_PUTC..TEST_SEEKS].
 * Progress goes to stderr unless quiet. The file is removed at the end.
 * Returns BENCH_OK, BENCH_ERROR (message printed) or BENCH_STOPPED. */
int bench_io_run(const struct io_config *c, struct rng *rng, struct test_result res[]);

#endif
