/* sysinfo.h -- facts about the system under test: host, kernel, OS, CPU,
 * RAM, and for the -d directory its mount (/proc/self/mountinfo), block
 * device (sysfs: scheduler, rotational) and md RAID (sysfs, /proc/mdstat).
 * The readers take their file or root path so tests can use fixtures. */
#ifndef SYSINFO_H
#define SYSINFO_H

#include <limits.h>
#include <stdint.h>

#include "cgroup.h"

#define SYSINFO_MAX_MEMBERS 64

struct mount_info {
    int found;
    unsigned major, minor;
    char mount_point[PATH_MAX];
    char root[PATH_MAX];           /* the mounted subtree (bind mounts) */
    char fs_type[64];
    char source[PATH_MAX];
    char options[1024];            /* per-mount options */
    char super_options[1024];      /* filesystem (superblock) options */
};

struct md_info {
    int found;
    char name[32];                 /* md0 */
    char level[32];                /* raid5 */
    int64_t chunk_bytes;           /* -1 unknown (raid1 has none) */
    int raid_disks;                /* configured, -1 unknown */
    int member_count;              /* devices holding a slot of the array (not spares, not faulty) */
    char members[SYSINFO_MAX_MEMBERS][32];
    char state[32];                /* mdstat: active/inactive; sysfs: array_state */
    int degraded;                  /* slots without a working device; -1 unknown */
    char sync_action[32];          /* idle, resync, recover, check, repair, reshape; "" unknown */
    char sync_completed[64];       /* sysfs "done / total" sectors, or mdstat's "7.5%"; "" unknown */
    int device_count;              /* every device of the array, with its role */
    struct md_device {
        char name[32];
        char role[8];              /* "member", "spare" or "faulty" */
        char state[64];            /* sysfs md/dev-NAME/state (in_sync, spare, faulty, ...); "" unknown */
        int slot;                  /* -1 none/unknown */
    } devices[SYSINFO_MAX_MEMBERS];
};

/* A whole disk's queue settings (sysfs queue/), the device side of a test's evidence. */
struct disk_settings {
    char name[64];
    char scheduler[64];            /* the active one; "" unknown */
    int rotational;                /* 1, 0, -1 unknown */
    char write_cache[32];          /* "write back" / "write through"; "" unknown */
    int64_t nr_requests;           /* queue depth, -1 unknown */
    int64_t read_ahead_kb;         /* -1 unknown */
};

struct block_info {
    int found;
    char name[64];                 /* the device of the fs: sda1, md0, vda */
    char disk[64];                 /* the whole disk holding its queue: sda */
    char scheduler[64];            /* the active one, from queue/scheduler [..] */
    int rotational;                /* 1, 0, or -1 unknown */
    int64_t size_bytes;            /* -1 unknown */
    struct md_info md;             /* found = 0 when not an md device */
    char write_cache[32];          /* of disk's queue, as in disk_settings */
    int64_t nr_requests, read_ahead_kb;
    int disk_count;                /* the whole disks behind name, through dm/md/partitions/loop */
    struct disk_settings disks[16];
    char loop_backing_file[PATH_MAX]; /* for a loop device (or one under it), its backing file; "" none */
};

struct system_info {
    char hostname[256];
    char kernel_name[64], kernel_release[128], kernel_version[256], machine[64];
    char os_name[256];             /* os-release PRETTY_NAME */
    char cpu_model[256];
    long cpu_count_online, cpu_count_configured;
    int64_t ram_bytes;
    char dir[PATH_MAX];            /* realpath of -d */
    int64_t fs_total_bytes, fs_free_bytes;
    struct mount_info mount;
    struct block_info block;
    struct cgroup_info cgroup;     /* the limits the kernel enforces on the runner */
};

/* Finds the mount holding dev major:minor whose mount point is the longest
 * prefix of dir (real path); with major SYSINFO_ANY_DEVICE, the longest prefix whatever its device
 * (btrfs: a subvolume's files have an st_dev of their own that no mountinfo line shows).
 * Returns 0 when found, -1 otherwise. */
#define SYSINFO_ANY_DEVICE UINT_MAX
int sysinfo_read_mountinfo(const char *mountinfo_path, unsigned major, unsigned minor,
                           const char *dir, struct mount_info *out);

/* Reads md_name's level, chunk, disk count and members from /proc/mdstat
 * text at path. Returns 0 when found, -1 otherwise. */
int sysinfo_read_mdstat(const char *path, const char *md_name, struct md_info *out);

/* Reads /sys/dev/block/MAJ:MIN under sysfs_root: name, parent disk,
 * scheduler, rotational, size and, when an md array is the device, its disk (a partition of md) or
 * under it (LVM/dm on md): md/level, chunk_size, raid_disks, array_state, degraded, sync_action,
 * sync_completed and every md/dev-* with its state and slot (slaves/ when there are none).
 * Returns 0 when found, -1 otherwise. */
int sysinfo_read_block(const char *sysfs_root, unsigned major, unsigned minor, struct block_info *out);

/* Reads the queue settings of whole disk `disk_dir` (a sysfs directory). */
void sysinfo_read_queue(const char *disk_dir, struct disk_settings *out);

/* Collects everything for the directory dir (open as dirfd), the runner's cgroup limits included.
 * Never fails: what cannot be read stays empty/-1. */
void sysinfo_collect(struct system_info *si, const char *dir, int dirfd);

#endif
