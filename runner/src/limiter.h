/* limiter.h -- what limited each test: one verdict (a stable code and a sentence with the numbers)
 * drawn from the test's result and its evidence (evidence.h) against the limits the kernel enforces
 * on the runner (cgroup.h). The rules and thresholds are documented in runner/README.md, "What
 * limited each test". */
#ifndef LIMITER_H
#define LIMITER_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "params.h"
#include "results.h"

enum limiter_code { LIMIT_NONE = 0, LIMIT_CPU, LIMIT_DEVICE, LIMIT_CACHED, LIMIT_TOO_SHORT, LIMIT_NOISY, LIMIT_UNKNOWN };

/* Thresholds, documented in runner/README.md. */
#define LIMIT_CPU_OF_WALL 0.90        /* CPU time >= 90 % of the wall time on the usable cores: cpu_bound */
#define LIMIT_QUOTA_THROTTLED 0.75    /* ... or >= 75 % of a CPU quota the kernel throttled the runner at */
#define LIMIT_DEVICE_UTIL 0.90        /* the device or a disk below busy >= 90 % of the time: device_bound */
#define LIMIT_THROTTLE_SHARE 0.50     /* a cgroup's throttle needs >= 50 % of the test's time: device_bound */
#define LIMIT_IO_PRESSURE_PCT 50.0    /* the runner's own cgroup waited for I/O >= 50 %: device_bound */
#define LIMIT_CACHED_SHARE 0.50       /* the device moved under half the test's bytes: cached */
#define LIMIT_SYNC_SHARE 0.50         /* sync() took >= half the test */
#define LIMIT_NOISY_RUN_DELAY 0.25    /* the runner waited for a CPU >= 25 % of the time: noisy */
#define LIMIT_NOISY_CPU_PSI_PCT 25.0  /* its own cgroup's tasks waited for a CPU >= 25 %: noisy */
#define LIMIT_NOISY_STEAL_PCT 10.0    /* CPU steal, while the runner wanted a CPU >= 25 % of the time */
#define LIMIT_NOISY_BLOCKED 0.50      /* off the CPU >= 50 % while the device moved far more than the test */

/* What the verdict knows about the run besides the test's own result. */
struct limiter_context {
    const struct bench_params *bp;
    int64_t ram_mib;                  /* physical RAM, 0 unknown */
    const struct cgroup_info *cg;     /* the runner's cgroup limits; NULL unknown */
    int memory_fs;                    /* tmpfs/ramfs: no device under the files */
    const char *device;               /* the filesystem's block device ("loop0"), "" none */
    long cpus;                        /* online CPUs */
};

struct limiter {
    enum limiter_code code;
    char text[480];                   /* one sentence with the numbers */
    double cpu_of_wall;               /* (user+sys)/wall, per usable core for seeks */
    double device_util;               /* busiest of the device and the disks below / interval, -1 unknown */
    double device_share;              /* device bytes / test bytes in the judged direction, -1 n/a */
    const char *judged_on;            /* "read", "write" or NULL: the direction device_share compares */
    double file_vs_ram;               /* file size / the RAM for the page cache, -1 unknown or not an I/O test */
    double run_delay_s;               /* the runner's own wait for a CPU (seekers: summed), -1 unknown */
    double run_delay_share;           /* the same / wall (seekers: / their summed wall time), -1 unknown */
    double blocked_share;             /* off the CPU and not waiting for one / wall, -1 unknown */
    double cpu_quota_cores;           /* the CPU quota in cores, -1 none */
    double throttle_share;            /* the time a cgroup throttle needs / wall, -1 none */
    char throttle[320];               /* the throttle, described (cgroup_describe_io_limit), "" none */
    double sync_share;                /* time in sync() / wall */
    char sync_waited_for[360];        /* what the sync() wrote, where known; "" none */
    char suggestion[64];              /* too_short: the option that would make it take >= 0.5 s */
};

/* The RAM the page cache can use: the smaller of the physical RAM and the memory-cgroup limit, in
 * bytes (0 unknown); *from says which ("physical" or "memory_cgroup"). */
uint64_t limiter_cache_ram_bytes(const struct limiter_context *ctx, const char **from);

/* Judges test t. Rules, first match wins: cpu_bound for the per-char tests (CPU time, plus its own
 * wait for a CPU, >= 90 % of wall; noisy when the wait was other load's doing); a test that spent
 * most of its time in sync() (device_bound when the test's own device wrote, else noisy); cached (a
 * memory filesystem; the device moved under half the bytes the test moved; without device counters,
 * a file under twice the cache RAM); too_short; device_bound (a cgroup throttle that explains the
 * time, the cgroup's I/O pressure, or a busy device); cpu_bound (on the usable cores or the CPU
 * quota); noisy (the runner itself waited for a CPU, or for a device others kept busy); unknown. */
void limiter_judge(enum test_id t, const struct test_result *r, const struct limiter_context *ctx,
                   struct limiter *out);
/* "cpu_bound", "device_bound", "cached", "too_short", "noisy", "unknown" (NULL for LIMIT_NONE). */
const char *limiter_code_name(enum limiter_code code);

#endif
