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

/* What else happened while one test ran, from samples taken just before its clock starts and just
 * after it stops -- never inside the timed loop. *_known = 0: not available. */
struct test_evidence {
    int sampled;
    double interval_s;              /* between the two samples */
    int disk_known;                 /* the target's block device was found in /proc/diskstats */
    uint64_t dev_reads, dev_writes; /* requests completed by the filesystem's device */
    uint64_t dev_read_bytes, dev_write_bytes;
    double busy_s;                  /* io_ticks of the busiest of the filesystem's device and the disks below */
    char busiest[64];               /* its name */
    int cpu_known;
    double steal_pct;               /* of all CPU time on the machine (/proc/stat) */
    int psi_cpu_known, psi_io_known;
    double cpu_pressure_pct;        /* /proc/pressure/cpu "some": the whole machine's, not the runner's */
    double io_pressure_pct;         /* /proc/pressure/io "some" */
    int64_t block_in, block_out;    /* getrusage ru_inblock/ru_oublock (512-byte units) */
    int64_t voluntary_switches, involuntary_switches;
    int sched_known;
    double run_delay_s;             /* the runner's own wait for a CPU (/proc/self/schedstat) */
    int cg_cpu_known;               /* cpu.stat of the cgroup holding a CPU quota */
    uint64_t cg_nr_throttled;
    double cg_throttled_s;
    int cg_psi_cpu_known, cg_psi_io_known;
    double cg_cpu_pressure_pct, cg_io_pressure_pct; /* the runner's own v2 cgroup's pressure */
    int throttle_known;             /* a throttled device's counters in the cgroup that throttles it */
    int throttle_index;             /* which of cgroup_info.io_limits */
    uint64_t cg_read_bytes, cg_write_bytes, cg_reads, cg_writes;
    double throttle_s;              /* the time those bytes and requests take at the limit's rates: the slower
                                     * direction's, as each direction has its own limit and queue */
    double throttle_read_s, throttle_write_s; /* each direction's */
    /* the two devices outside the test's that wrote the most ("" none): two, because a loop device's
     * writes reach the disk under its backing file too */
    char other_writer[2][64];
    uint64_t other_write_bytes[2];
};

/* One seeker process of the seek test, measured by itself around its seeks. */
struct seeker_facts {
    double wall_s, user_s, sys_s;
    int run_delay_known;
    double run_delay_s;             /* its wait for a CPU (/proc/self/schedstat) */
    int64_t block_in, block_out;    /* its getrusage ru_inblock/ru_oublock */
    uint64_t seeks;
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
    struct seeker_facts *seekers;   /* seeks: one per seeker (heap; results_free); else NULL */
    int seeker_count;
};

/* 1 when the test ran, 0 when it did not; "too fast" is a separate question. */
static inline int results_ran(const struct test_result *r) { return r->elapsed_s != 0.0; }
static inline int results_too_fast(const struct test_result *r)
{
    return r->elapsed_s != 0.0 && r->elapsed_s < RESULTS_MIN_TIME_S;
}

/* Adds every count of more to sum (the seek test sums its seekers' counts this way). */
void results_add_calls(struct sys_counts *sum, const struct sys_counts *more);

/* Frees what the results of one run hold on the heap (the seekers' facts). */
void results_free(struct test_result res[TEST_COUNT]);

/* "putc" ... "ran_del": the names the CSV header, the document and the board use. */
extern const char *const results_test_names[TEST_COUNT];

#endif
