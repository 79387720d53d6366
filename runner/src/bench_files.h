/* bench_files.h -- bonnie++ 2.00a's file-creation tests (bon_file
 * analogue): create, stat and delete num*1024 files in sequential and in
 * random order, optionally with data and spread over directories. */
#ifndef BENCH_FILES_H
#define BENCH_FILES_H

#include <signal.h>
#include <stdint.h>

#include "params.h"
#include "evidence.h"
#include "sync.h"
#include "rng.h"
#include "timer.h"

struct files_config {
    int dirfd;                      /* scratch directory */
    const char *name;               /* test directory name inside it */
    const struct bench_params *p;   /* -n's number, sizes, directories and chunk; -b */
    int quiet;
    const struct bench_sync *sync;  /* -y: wait for the other processes before each test; NULL none */
    const struct evidence_source *ev; /* what to sample around each test; NULL: nothing */
    const volatile sig_atomic_t *stop;
};

/* Runs the six tests in bonnie++'s order, filling res[TEST_SEQ_CREATE..].
 * Returns BENCH_OK, BENCH_ERROR (message printed) or BENCH_STOPPED; the
 * caller removes leftovers with workdir_cleanup(). */
int bench_files_run(const struct files_config *c, struct rng *rng, struct test_result res[]);

/* Writes file i's name as bonnie++ makes it: 10 hex digits of i and 0..12
 * random alphanumerics, the random part after the number for sequential
 * order and before it for random order. buf must hold 23 bytes. */
void bench_files_make_name(char *buf, struct rng *rng, int64_t i, int random_order);

#endif
