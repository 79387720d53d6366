/* bench.h -- what the I/O tests (bench_io) and the file tests (bench_files) share: the status
 * every test returns, the configuration both run under, and their progress lines. */
#ifndef BENCH_H
#define BENCH_H

#include <signal.h>
#include <stdio.h>

#include "evidence.h"
#include "params.h"
#include "sync.h"

/* What a test, and a whole bench_*_run, returns. The seekers send it through their report pipe. */
enum bench_status {
    BENCH_ERROR = -1,   /* failed; the message is printed */
    BENCH_OK = 0,
    BENCH_STOPPED = 1,  /* the stop flag was set (a signal) */
};

/* Where and how the tests run; main fills one and both bench_*_run read it. */
struct bench_config {
    int dirfd;                      /* scratch directory */
    const char *name;               /* "Bonnie.<pid>" inside it: the I/O tests' file, the file tests' directory */
    const struct bench_params *p;   /* sizes, chunks, seeks, -n's numbers, -b, -D, char mode */
    int quiet;                      /* -q: no progress lines */
    const struct bench_sync *sync;  /* -y: wait for the other processes before each test; NULL none */
    const struct evidence_source *ev; /* what to sample around each test; NULL: nothing */
    const volatile sig_atomic_t *stop;
};

/* Prints text, a piece of bonnie++'s progress lines, on stderr unless quiet. */
static inline void bench_progress(const struct bench_config *c, const char *text)
{
    if (!c->quiet)
        fputs(text, stderr);
}

#endif
