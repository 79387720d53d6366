/* evidence.h -- counters sampled just before a test's clock starts and just after it stops, and
 * their differences: block-device deltas from /proc/diskstats for the filesystem's device, the
 * devices below it (dm, md, partitions, a loop device's backing disk) and every other whole device
 * (what a sync() waited for); CPU steal (/proc/stat); the machine's pressure (/proc/pressure); the
 * runner's own wait for a CPU (/proc/self/schedstat) and getrusage; and its cgroups' counters (the
 * CPU quota's throttling, a throttled device's bytes, the cgroup's own pressure; see cgroup.h).
 * The files are opened once and re-read with pread(). The verdicts drawn from them are limiter.h's.
 * The parsers take text and the sysfs walkers a root directory, so tests use fixtures. */
#ifndef EVIDENCE_H
#define EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "results.h"

#define EVIDENCE_MAX_DISKS 16
#define EVIDENCE_MAX_WHOLE 64
#define EVIDENCE_NAME_LEN 64

struct disk_counters {
    uint64_t reads, read_sectors, writes, write_sectors, io_ticks_ms;
};

struct cpu_counters {
    uint64_t total, steal;        /* jiffies over all CPUs */
};

/* Open once per run; fds -1 when a file is missing (no PSI on this kernel, no cgroup quota, ...). */
struct evidence_source {
    int diskstats_fd, stat_fd, psi_cpu_fd, psi_io_fd, schedstat_fd;
    int cg_cpu_stat_fd, cg_psi_cpu_fd, cg_psi_io_fd;
    int cg_io_fd[CGROUP_MAX_IO_LIMITS][2];              /* v1: io_service_bytes, io_serviced; v2: io.stat, -1 */
    const struct cgroup_info *cg;                       /* NULL: none */
    char device[EVIDENCE_NAME_LEN];                     /* the filesystem's device: sda1, dm-0, md0, loop0 */
    int disk_count;
    char disks[EVIDENCE_MAX_DISKS][EVIDENCE_NAME_LEN];  /* the whole disks behind it: sda, nvme0n1 */
    int chain_count;
    struct cgroup_device chain[EVIDENCE_MAX_DISKS];     /* the device, the ones between, the disks */
    int whole_count;
    char whole[EVIDENCE_MAX_WHOLE][EVIDENCE_NAME_LEN];  /* every whole device outside the chain (/sys/block) */
};

struct evidence_sample {
    double wall_s;
    int have_device, have_cpu, have_psi_cpu, have_psi_io, have_sched, have_cg_cpu, have_cg_psi_cpu, have_cg_psi_io;
    struct disk_counters device;
    uint64_t disk_ticks_ms[EVIDENCE_MAX_DISKS];
    uint64_t whole_write_sectors[EVIDENCE_MAX_WHOLE];
    struct cpu_counters cpu;
    uint64_t psi_cpu_us, psi_io_us;
    uint64_t run_delay_ns;
    uint64_t cg_nr_throttled, cg_throttled_us, cg_psi_cpu_us, cg_psi_io_us;
    int have_cg_io[CGROUP_MAX_IO_LIMITS];
    uint64_t cg_io[CGROUP_MAX_IO_LIMITS][4];            /* read bytes, write bytes, reads, writes */
    int64_t block_in, block_out, nvcsw, nivcsw;
};

/* ---- parsers (pure) ---- */

/* The counters of device `name` in /proc/diskstats text. Returns 0, or -1 when absent. */
int evidence_parse_diskstats(const char *text, const char *name, struct disk_counters *out);
/* The first "cpu " line of /proc/stat text. Returns 0 or -1. */
int evidence_parse_stat(const char *text, struct cpu_counters *out);
/* total= of the "some" line of /proc/pressure/{cpu,io} text, in microseconds. Returns 0 or -1. */
int evidence_parse_pressure(const char *text, uint64_t *some_total_us);
/* /proc/<pid>/schedstat: time on a CPU and time waiting for one (run_delay), in ns. Returns 0 or -1. */
int evidence_parse_schedstat(const char *text, uint64_t *on_cpu_ns, uint64_t *run_delay_ns);

/* ---- sysfs ---- */

/* The whole disks behind block device `name` under sysfs_root ("/sys"): a partition's disk, the
 * members of dm and md devices (recursively), and for a loop device the disks behind its backing
 * file (found through stat(); backing_file gets its path). Returns the number of disks found. */
int evidence_find_disks(const char *sysfs_root, const char *name, char disks[][EVIDENCE_NAME_LEN], int max,
                        char *backing_file, size_t backing_len);
/* Every device from `name` down to those disks (name first, then the partitions' disks, dm and md
 * members, loop backing devices), with its MAJ:MIN from sysfs. Returns the number found. */
int evidence_find_chain(const char *sysfs_root, const char *name, struct cgroup_device *chain, int max);

/* ---- sampling ---- */

/* Opens the /proc and cgroup files and resolves device's disks (device NULL or "": no block device;
 * cg NULL: no cgroup counters). cg must outlive src. */
void evidence_open(struct evidence_source *src, const char *device, const struct cgroup_info *cg);
void evidence_close(struct evidence_source *src);
void evidence_sample(const struct evidence_source *src, struct evidence_sample *s);
/* The evidence between samples a and b into ev. */
void evidence_delta(const struct evidence_source *src, const struct evidence_sample *a,
                    const struct evidence_sample *b, struct test_evidence *ev);

/* The calling process's run_delay (ns) from an open /proc/self/schedstat. Returns 0 or -1. */
int evidence_run_delay_ns(int schedstat_fd, uint64_t *run_delay_ns);

#endif
