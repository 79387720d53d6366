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
    uint64_t sync_ns;   /* time spent in sync() (the create and delete tests end with one) */
};

/* What else happened while one test ran (issue 12), from samples taken just before its clock
 * starts and just after it stops -- never inside the timed loop. *_known = 0: not available. */
struct test_evidence {
    int sampled;
    double interval_s;              /* between the two samples */
    int disk_known;                 /* the target's block device was found in /proc/diskstats */
    uint64_t dev_reads, dev_writes; /* requests completed by the filesystem's device */
    uint64_t dev_read_bytes, dev_write_bytes;
    double busy_s;                  /* io_ticks of the busiest backing disk */
    int cpu_known;
    double steal_pct;               /* of all CPU time on the machine (/proc/stat) */
    int psi_cpu_known, psi_io_known;
    double cpu_pressure_pct;        /* /proc/pressure/cpu "some": share of time a task waited for a CPU */
    double io_pressure_pct;         /* /proc/pressure/io "some" */
    int64_t block_in, block_out;    /* getrusage ru_inblock/ru_oublock (512-byte units) */
    int64_t voluntary_switches, involuntary_switches;
};

/* One test's measurement. elapsed_s == 0 means "not run". */
struct test_result {
    double elapsed_s;   /* wall time of the test (seeks: first start..last stop) */
    double user_s;      /* CPU seconds in user mode (seeks: summed over seekers) */
    double sys_s;       /* CPU seconds in the kernel */
    double latency_s;   /* longest single operation */
    uint64_t ops;       /* units of work: bytes, seeks or files */
    struct sys_counts calls;
    struct test_evidence ev;
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
