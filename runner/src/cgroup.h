/* cgroup.h -- the limits the kernel enforces on the runner through its control groups, v1 and v2:
 * the memory limit (how much page cache the runner may keep), the CPU quota, and block-I/O throttles
 * on the devices under the test directory; and the per-cgroup counters a test's evidence samples
 * (the quota's cpu.stat, the throttled cgroup's I/O bytes, the cgroup's own pressure).
 *
 * Found from /proc/self/cgroup and the cgroup mounts in /proc/self/mountinfo. Every reader takes a
 * root prefix ("" on a real system) so the tests run on fixture trees; a missing file leaves its
 * fact unknown, never an error. */
#ifndef CGROUP_H
#define CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define CGROUP_NONE UINT64_MAX      /* no limit (or none found) */
#define CGROUP_MAX_DEVICES 16
#define CGROUP_MAX_IO_LIMITS 4

/* A block device under the test directory: the filesystem's own, or one below it. */
struct cgroup_device {
    char name[64];                  /* loop0, dm-1, vda */
    unsigned major, minor;
};

/* A throttle on one device, from v1 blkio.throttle.{read,write}_{bps,iops}_device or v2 io.max. */
struct cgroup_io_limit {
    struct cgroup_device dev;
    uint64_t read_bps, write_bps, read_iops, write_iops;   /* CGROUP_NONE when that one is not set */
    int v2;                         /* io.max (1) or blkio.throttle.* (0) */
    char dir[PATH_MAX];             /* the cgroup directory that sets it; its I/O counters are sampled */
};

struct cgroup_info {
    int v1, v2;                     /* the runner is in a v1 hierarchy / the v2 one */
    char memory_path[PATH_MAX];     /* the runner's memory cgroup as /proc/self/cgroup names it, "" unknown */
    uint64_t memory_limit_bytes;    /* the smallest memory limit on the way to the root; CGROUP_NONE */
    char memory_limit_from[PATH_MAX];  /* the file that sets it */
    int64_t cpu_quota_us, cpu_period_us;   /* the tightest quota (quota/period); -1 none */
    char cpu_quota_from[PATH_MAX];  /* the file that sets it */
    char cpu_stat_path[PATH_MAX];   /* cpu.stat of the cgroup holding the quota: its throttling counts */
    int io_limit_count;
    struct cgroup_io_limit io_limits[CGROUP_MAX_IO_LIMITS];
    char pressure_dir[PATH_MAX];    /* the runner's own v2 cgroup, for cpu.pressure/io.pressure; "" when it
                                     * is the root, whose pressure is the whole machine's */
};

/* Fills cg for the calling process. root prefixes every path ("" for the real system); devs are the
 * devices whose throttles matter (the test directory's device and the ones below it). v1 throttles
 * apply to the runner's own cgroup only (the kernel's flat v1 behaviour); v2 io.max, the memory
 * limits (v1 memory.limit_in_bytes, v2 memory.max and memory.high) and the CPU quotas (v1
 * cpu.cfs_quota_us/cpu.cfs_period_us, v2 cpu.max) apply from every ancestor too. */
void cgroup_read(struct cgroup_info *cg, const char *root, const struct cgroup_device *devs, int ndevs);

/* Parsers for the sampled counters (text in, numbers out). Each returns 0, or -1 when the text
 * lacks what is asked. */
/* cpu.stat: nr_throttled and the throttled time (v1 throttled_time in ns, v2 throttled_usec). */
int cgroup_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_us);
/* v1 blkio.throttle.io_service_bytes or io_serviced: the "MAJ:MIN Read N" and "MAJ:MIN Write N" lines. */
int cgroup_parse_blkio_v1(const char *text, unsigned major, unsigned minor, uint64_t *read, uint64_t *write);
/* v2 io.stat: rbytes, wbytes, rios, wios of device MAJ:MIN; zeros when the device has no line yet
 * (the cgroup has not used it). Returns 0. */
int cgroup_parse_io_stat(const char *text, unsigned major, unsigned minor, uint64_t *rbytes, uint64_t *wbytes,
                         uint64_t *rios, uint64_t *wios);

/* A throttle in words, e.g. "20 MiB/s read, 20 MiB/s write on loop0 (7:0) by the cgroup
 * /sys/fs/cgroup/blkio/test (blkio.throttle.*_device)". Returns out. */
char *cgroup_describe_io_limit(const struct cgroup_io_limit *l, char *out, size_t len);

#endif
