/* evidence.h -- what limited each test (issue 12): counters sampled just before a test's clock
 * starts and just after it stops -- block-device deltas from /proc/diskstats for the device behind
 * the target (through dm, md, partitions and loop devices), CPU steal (/proc/stat), pressure
 * (/proc/pressure/cpu, io) and the process's getrusage -- and the verdict drawn from them.
 * The /proc files are opened once and re-read with pread(), so a sample is four system calls.
 * The parsers take text and the sysfs walkers a root directory, so tests use fixtures. */
#ifndef EVIDENCE_H
#define EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "results.h"

#define EVIDENCE_MAX_DISKS 16
#define EVIDENCE_NAME_LEN 64

struct disk_counters {
    uint64_t reads, read_sectors, writes, write_sectors, io_ticks_ms;
};

struct cpu_counters {
    uint64_t total, steal;        /* jiffies over all CPUs */
};

/* Open once per run; fds -1 when a file is missing (no PSI on this kernel, ...). */
struct evidence_source {
    int diskstats_fd, stat_fd, psi_cpu_fd, psi_io_fd;
    char device[EVIDENCE_NAME_LEN];                     /* the filesystem's device: sda1, dm-0, md0, loop0 */
    int disk_count;
    char disks[EVIDENCE_MAX_DISKS][EVIDENCE_NAME_LEN];  /* the whole disks behind it: sda, nvme0n1 */
};

struct evidence_sample {
    double wall_s;
    int have_device, have_cpu, have_psi_cpu, have_psi_io;
    struct disk_counters device;
    uint64_t disk_ticks_ms[EVIDENCE_MAX_DISKS];
    struct cpu_counters cpu;
    uint64_t psi_cpu_us, psi_io_us;
    int64_t block_in, block_out, nvcsw, nivcsw;
};

/* ---- parsers (pure) ---- */

/* The counters of device `name` in /proc/diskstats text. Returns 0, or -1 when absent. */
int evidence_parse_diskstats(const char *text, const char *name, struct disk_counters *out);
/* The first "cpu " line of /proc/stat text. Returns 0 or -1. */
int evidence_parse_stat(const char *text, struct cpu_counters *out);
/* total= of the "some" line of /proc/pressure/{cpu,io} text, in microseconds. Returns 0 or -1. */
int evidence_parse_pressure(const char *text, uint64_t *some_total_us);

/* ---- sysfs ---- */

/* The whole disks behind block device `name` under sysfs_root ("/sys"): a partition's disk, the
 * members of dm and md devices (recursively), and for a loop device the disks behind its backing
 * file (found through stat(); backing_file gets its path). Returns the number of disks found. */
int evidence_find_disks(const char *sysfs_root, const char *name, char disks[][EVIDENCE_NAME_LEN], int max,
                        char *backing_file, size_t backing_len);

/* ---- sampling ---- */

/* Opens the /proc files and resolves device's disks (device NULL or "": no block device). */
void evidence_open(struct evidence_source *src, const char *device);
void evidence_close(struct evidence_source *src);
void evidence_sample(const struct evidence_source *src, struct evidence_sample *s);
/* The evidence between samples a and b into ev. */
void evidence_delta(const struct evidence_source *src, const struct evidence_sample *a,
                    const struct evidence_sample *b, struct test_evidence *ev);

/* ---- verdicts ---- */

enum limiter_code { LIMIT_NONE = 0, LIMIT_CPU, LIMIT_DEVICE, LIMIT_CACHED, LIMIT_TOO_SHORT, LIMIT_NOISY, LIMIT_UNKNOWN };

/* Thresholds, documented in runner/README.md. */
#define LIMIT_CPU_OF_WALL 0.90      /* CPU time >= 90 % of wall time on one core: cpu_bound */
#define LIMIT_DEVICE_UTIL 0.90      /* the busiest disk busy >= 90 % of the time: device_bound */
#define LIMIT_NOISY_STEAL_PCT 10.0  /* CPU steal: the hypervisor ran someone else */
#define LIMIT_NOISY_CPU_PSI_PCT 25.0/* tasks waiting for a CPU (other load) */

/* What the verdict knows about the run besides the test's own result. */
struct limiter_context {
    const struct bench_params *bp;
    int64_t ram_mib;                /* detected RAM, 0 unknown */
    int memory_fs;                  /* tmpfs/ramfs: no device under the files */
    int block_device;               /* a block device was found for the target */
    long cpus;                      /* online CPUs */
};

struct limiter {
    enum limiter_code code;
    char text[320];                 /* one sentence with the numbers */
    double cpu_of_wall;             /* (user+sys)/wall, per process for seeks (summed over seekers) */
    double device_util;             /* busiest disk busy / interval, -1 unknown */
    double file_vs_ram;             /* file size / RAM, -1 unknown or not an I/O test */
    char suggestion[64];            /* too_short: the option that would make it take >= 0.5 s */
};

/* Judges test t. Precedence: cpu_bound for the per-char tests (CPU time, plus time waiting for a
 * CPU, >= 90 % of wall); cached (a memory filesystem, reads the device never saw, a file under
 * twice the RAM); too_short; device_bound; cpu_bound; noisy; unknown. A cached result stays
 * cached however long the test runs, so it wins over too_short (whose suggestion is still given).
 * Stable codes: see evidence_code_name. */
void evidence_judge(enum test_id t, const struct test_result *r, const struct limiter_context *ctx,
                    struct limiter *out);
/* "cpu_bound", "device_bound", "cached", "too_short", "noisy", "unknown" (NULL for LIMIT_NONE). */
const char *evidence_code_name(enum limiter_code code);

#endif
