/* sync.h -- bonnie++'s -p/-y: several runner (or bonnie++) processes start each test together.
 * `-p N` creates System V semaphore set 4711 (one semaphore per test, each N); `-p -1` removes it;
 * `-y s` makes a run take one from the test's semaphore and wait until it reaches 0 before the test;
 * `-y p` prompts on stdout ("\n<test number>:\n") and waits for a line on stdin instead.
 * The same key and layout as bonnie++ 2.00a, so runners and bonnie++ processes can be mixed. */
#ifndef SYNC_H
#define SYNC_H

#include <stddef.h>

#include "results.h"

#define SYNC_SEM_KEY 4711   /* bonnie++ SemKey */

enum sync_mode { SYNC_NONE = 0, SYNC_SEM, SYNC_PROMPT };

struct bench_sync {
    enum sync_mode mode;
    int semid;
};

/* -p N: creates (or resets) the set with every semaphore at procs. Returns 0 or -1 (err). */
int sync_create(int procs, char *err, size_t errlen);
/* -p -1: removes the set. Returns 0 or -1 (err). */
int sync_remove(char *err, size_t errlen);
/* -y: prepares s for mode; SYNC_SEM attaches to the existing set. Returns 0 or -1 (err). */
int sync_open(struct bench_sync *s, enum sync_mode mode, char *err, size_t errlen);
/* Before test t: waits for the other processes (no-op for SYNC_NONE or s NULL). Returns 0 or -1. */
int sync_wait(const struct bench_sync *s, enum test_id t);

#endif
