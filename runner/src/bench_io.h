/* bench_io.h -- bonnie++ 2.00a's I/O tests on one big file (bon_io
 * analogue): per-char write, block write, rewrite, per-char read, block
 * read, and random seeks by forked seeker processes. */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include "bench.h"
#include "results.h"
#include "rng.h"

/* Runs the I/O tests in bonnie++'s order on the file c->name, filling res[TEST_PUTC..TEST_SEEKS].
 * Progress goes to stderr unless quiet. The file is removed at the end.
 * Returns BENCH_OK, BENCH_ERROR (message printed) or BENCH_STOPPED. */
enum bench_status bench_io_run(const struct bench_config *c, struct rng *rng, struct test_result res[]);

#endif
