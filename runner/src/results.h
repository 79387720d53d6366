/* results.h -- the twelve tests (bonnie++'s list and order) and what one test measured. */
#ifndef RESULTS_H
#define RESULTS_H

#include <stdint.h>

/* The twelve tests, in bonnie++'s order (tests_t in bonnie.h). */
enum test_id {
    TEST_PUTC = 0, TEST_PUT_BLOCK, TEST_REWRITE, TEST_GETC, TEST_GET_BLOCK,
    TEST_SEEKS, TEST_SEQ_CREATE, TEST_SEQ_STAT, TEST_SEQ_DEL,
    TEST_RAN_CREATE, TEST_RAN_STAT, TEST_RAN_DEL, TEST_COUNT
};

/* A test that took less than this is reported as +++++ (bonnie++ MinTime). */
#define RESULTS_MIN_TIME_S 0.5

/* System calls issued by the runner itself during one test, and bytes moved.
 * "ipc_*" are the seek test's ticket/report pipe transfers, kept apart from
 * file I/O so the average I/O size stays honest. */
struct sys_counts {
    uint64_t read, write, lseek, open, creat, close, fsync, stat, unlink,
             mkdir, rmdir, getdents, link, symlink, sync, ipc_read, ipc_write;
    uint64_t bytes_read, bytes_written;
};

/* One test's measurement. elapsed_s == 0 means "not run". */
struct test_result {
    double elapsed_s;   /* wall time of the test (seeks: first start..last stop) */
    double user_s;      /* CPU seconds in user mode (seeks: summed over seekers) */
    double sys_s;       /* CPU seconds in the kernel */
    double latency_s;   /* longest single operation */
    uint64_t ops;       /* units of work: bytes, seeks or files */
    struct sys_counts calls;
};

/* 1 when the test ran, 0 when it did not; "too fast" is a separate question. */
static inline int results_ran(const struct test_result *r) { return r->elapsed_s != 0.0; }
static inline int results_too_fast(const struct test_result *r)
{
    return r->elapsed_s != 0.0 && r->elapsed_s < RESULTS_MIN_TIME_S;
}

/* "putc" ... "ran_del": the names the CSV header, the document and the board use. */
extern const char *const results_test_names[TEST_COUNT];

#endif
