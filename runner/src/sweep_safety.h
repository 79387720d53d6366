/* sweep_safety.h -- what `sweep` checks before it erases a device: that --yes-destroy repeats the
 * plan's device exactly; that the device is not mounted, holds no mounted partition, is not part of
 * an active md array, LVM or other device-mapper device (its sysfs holders), is not swap and does
 * not hold the root filesystem; and which filesystem or partition table signature it holds.
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
 * device-mapper/LVM), itself or any partition. mountpoint, when not NULL, must have nothing mounted
 * on it. Returns 0 when the device is free to erase. */
int sweep_check_in_use(const char *root, const struct sweep_device *dev, const char *mountpoint, char *err,
                       size_t errlen);

/* The signature at the start of the open device or file fd: "ext2/3/4 filesystem", "xfs filesystem",
 * "btrfs filesystem", "swap area", "LUKS volume", "LVM physical volume", "md RAID member (1.2
 * superblock)", "GPT partition table", "DOS (MBR) partition table", ... Returns 1 with the name in
 * out, 0 when none of those is found, -1 when the device can't be read (errno set). */
int sweep_probe_signature(int fd, char *out, size_t len);

/* The sysfs name of device MAJ:MIN under root (root/sys/dev/block/MAJ:MIN's link). Returns 0 or -1. */
int sweep_device_name(const char *root, unsigned major, unsigned minor, char *out, size_t len);

#endif
