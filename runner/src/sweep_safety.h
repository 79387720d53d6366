/* sweep_safety.h -- what `sweep` checks before it erases a device: that --yes-destroy repeats the
 * plan's device exactly; that neither the device nor any other name of its blocks (partitions, whole
 * disk, loop devices on the same file) is mounted, part of an active md array, LVM or other
 * device-mapper device (sysfs holders), swap, the root filesystem, or held open; and which
 * filesystem or partition table signature it holds.
 *
 * Every reader takes a root prefix ("" on a real system) for /proc and /sys, so the unit tests run
 * on fixture trees, as cgroup.c's do. */
#ifndef SWEEP_SAFETY_H
#define SWEEP_SAFETY_H

#include <stddef.h>

/* The device as the kernel names it: sysfs name (loop0, md0, sdb) and MAJ:MIN. */
struct sweep_device {
    char name[64];
    unsigned major, minor;
};

/* --yes-destroy: must be the plan's device string exactly. same_device says whether the two paths
 * reach the same block device, signature (NULL or "") what it holds: both make the message say
 * more. Returns 0, or -1 with the message in err. */
int sweep_check_naming(const char *plan_device, const char *yes_destroy, int same_device, const char *signature,
                       char *err, size_t errlen);

/* The device's use by the system, under root: refuses (-1, message in err) a device that is mounted
 * or has a mounted partition (mountinfo's MAJ:MIN, or its source path's basename), that holds the
 * root filesystem, that is swap (/proc/swaps) or held by another block device (sysfs holders: md,
 * device-mapper/LVM), itself or any partition -- and the same for every alias: its whole disk when it
 * is a partition, each loop device attached to the same file at overlapping offsets or to one of
 * these devices (to a fixed point). A loop device whose backing file lies on one of their
 * filesystems is refused as their user. On the real system (root "") the probes (SWEEP_PROBE_*) open
 * them with O_EXCL (a btrfs member mounted through another device, a lazily unmounted filesystem, any
 * exclusive holder is named) and look for another process that has one open.
 * device_path is the path the device was named by (its node when /dev/NAME is absent).
 * mountpoint, when not NULL, must have nothing mounted on it. Returns 0 when the device is free to
 * erase. */
#define SWEEP_PROBE_DEVICE 1      /* the device must open with O_EXCL */
#define SWEEP_PROBE_ALIASES 2     /* every other name too (not while the sweep holds them itself) */
#define SWEEP_PROBE_PROCESSES 4   /* and no other process may have any of them open */
int sweep_check_in_use(const char *root, const struct sweep_device *dev, const char *device_path,
                       const char *mountpoint, int probes, char *err, size_t errlen);

/* The MAJ:MIN of the filesystem mounted on path (the topmost mount there; mountinfo's octal escapes
 * decoded, so a path with a space matches), under root. Returns 1, or 0 when nothing is mounted there. */
int sweep_mounted_device(const char *root, const char *path, unsigned *major, unsigned *minor);

/* Opens every loop alias of the device (not the device, its partitions or its whole disk) with
 * O_EXCL, so that nothing can mount or claim them while the study runs: the fds go to fds (closed
 * by the caller, or at exit). Returns the count, or -1 with the message in err. */
int sweep_claim_aliases(const struct sweep_device *dev, int *fds, int max, char *err, size_t errlen);

/* The signature at the start of the open device or file fd: "ext2/3/4 filesystem", "xfs filesystem",
 * "btrfs filesystem", "swap area", "LUKS volume", "LVM physical volume", "md RAID member (1.2
 * superblock)", "GPT partition table", "DOS (MBR) partition table", ... Returns 1 with the name in
 * out, 0 when none of those is found, -1 when the device can't be read (errno set). */
int sweep_probe_signature(int fd, char *out, size_t len);

/* The sysfs name of device MAJ:MIN under root (root/sys/dev/block/MAJ:MIN's link). Returns 0 or -1. */
int sweep_device_name(const char *root, unsigned major, unsigned minor, char *out, size_t len);

#endif
