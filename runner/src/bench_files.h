/* bench_files.h -- bonnie++ 2.00a's file-creation tests (bon_file
 * analogue): create, stat and delete num*1024 files in sequential and in
 * random order, optionally with data and spread over directories. */
#ifndef BENCH_FILES_H
#define BENCH_FILES_H

#include <stdint.h>

#include "bench.h"
#include "results.h"
#include "rng.h"

/* Runs the six tests in bonnie++'s order in the directory c->name, filling res[TEST_SEQ_CREATE..].
 * Returns BENCH_OK, BENCH_ERROR (message printed) or BENCH_STOPPED; the
 * caller removes leftovers with workdir_cleanup(). */
enum bench_status bench_files_run(const struct bench_config *c, struct rng *rng, struct test_result res[]);

/* Writes file i's name as bonnie++ makes it: 10 hex digits of i and 0..12
 * random alphanumerics, the random part after the number for sequential
 * order and before it for random order. buf must hold 23 bytes. */
void bench_files_make_name(char *buf, struct rng *rng, int64_t i, int random_order);

#endif
