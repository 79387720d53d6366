/* test_sysinfo.c -- the mountinfo, mdstat and sysfs readers on fixture
 * files (CI has no md device). Run from runner/ or pass the fixtures dir. */
#include "testhelp.h"

#include "sysinfo.h"

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    char path[4096];
    struct mount_info m;
    struct md_info md;
    struct block_info b;

    /* mountinfo */
    snprintf(path, sizeof(path), "%s/mountinfo", fx);
    test_cond("md0 mount found", sysinfo_read_mountinfo(path, 9, 0, "/mnt/raid/bench", &m) == 0);
    test_str_eq("fs type", m.fs_type, "xfs");
    test_str_eq("mount point", m.mount_point, "/mnt/raid");
    test_str_eq("source", m.source, "/dev/md0");
    test_str_eq("mount options", m.options, "rw,noatime");
    test_str_eq("super options", m.super_options, "rw,attr2,inode64,logbufs=8,sunit=1024,swidth=2048,noquota");
    test_cond("escaped mount point (\\040) preferred when it is the longer prefix",
              sysinfo_read_mountinfo(path, 9, 0, "/mnt/raid bind/x", &m) == 0 &&
              strcmp(m.mount_point, "/mnt/raid bind") == 0 && strcmp(m.root, "/sub") == 0);
    test_cond("optional fields skipped", sysinfo_read_mountinfo(path, 8, 1, "/data", &m) == 0 &&
              strcmp(m.fs_type, "ext3") == 0 && strcmp(m.source, "/dev/sda1") == 0 &&
              strcmp(m.super_options, "rw,data=ordered") == 0);
    test_cond("root fs", sysinfo_read_mountinfo(path, 254, 0, "/tmp/x", &m) == 0 &&
              strcmp(m.mount_point, "/") == 0 && strcmp(m.fs_type, "ext4") == 0);
    test_cond("unknown device not found", sysinfo_read_mountinfo(path, 1, 2, "/", &m) == -1 && !m.found);
    test_cond("dir outside the mount not matched", sysinfo_read_mountinfo(path, 9, 0, "/mnt/raidX", &m) == -1);
    test_cond("btrfs: a subvolume's st_dev is on no line", sysinfo_read_mountinfo(path, 0, 52, "/mnt/btrfs/home/u", &m) == -1);
    test_cond("btrfs: found by path instead",
              sysinfo_read_mountinfo(path, SYSINFO_ANY_DEVICE, 0, "/mnt/btrfs/home/u", &m) == 0 &&
              strcmp(m.fs_type, "btrfs") == 0 && strcmp(m.mount_point, "/mnt/btrfs/home") == 0 &&
              strcmp(m.source, "/dev/sdb1") == 0 && strstr(m.super_options, "subvol=/home") != NULL);
    test_cond("by path: the longest mount point wins over /", sysinfo_read_mountinfo(path, SYSINFO_ANY_DEVICE, 0,
              "/mnt/btrfs/x", &m) == 0 && strcmp(m.mount_point, "/mnt/btrfs") == 0);
    test_cond("missing file", sysinfo_read_mountinfo("/nonexistent/mountinfo", 9, 0, "/", &m) == -1);

    /* mdstat */
    snprintf(path, sizeof(path), "%s/mdstat", fx);
    test_cond("md0 in mdstat", sysinfo_read_mdstat(path, "md0", &md) == 0);
    test_str_eq("md0 level", md.level, "raid5");
    test_cond("md0 chunk 512k (not the bitmap's 65536KB)", md.chunk_bytes == 524288);
    test_cond("md0 raid disks 3", md.raid_disks == 3);
    test_cond("md0 members", md.member_count == 3 && strcmp(md.members[0], "sdd1") == 0 &&
              strcmp(md.members[2], "sdb1") == 0);
    test_str_eq("md0 state", md.state, "active");
    test_cond("md1 raid1 without chunk", sysinfo_read_mdstat(path, "md1", &md) == 0 &&
              strcmp(md.level, "raid1") == 0 && md.chunk_bytes == -1 && md.raid_disks == 2);
    test_cond("md1: the faulty disk (F) is no member, and the array is degraded by one",
              md.member_count == 1 && strcmp(md.members[0], "sdb2") == 0 && md.degraded == 1 &&
              md.device_count == 2 && strcmp(md.devices[1].name, "sdc2") == 0 && strcmp(md.devices[1].role, "faulty") == 0);
    test_cond("md3: recovering, with a spare (S) that is no member", sysinfo_read_mdstat(path, "md3", &md) == 0 &&
              md.member_count == 3 && md.degraded == 1 && strcmp(md.sync_action, "recover") == 0 &&
              strcmp(md.sync_completed, "7.5%") == 0 && strcmp(md.devices[1].role, "spare") == 0);
    test_cond("md4: resync delayed", sysinfo_read_mdstat(path, "md4", &md) == 0 && strcmp(md.sync_action, "resync") == 0 &&
              strcmp(md.sync_completed, "DELAYED") == 0 && md.degraded == 0);
    test_cond("md0: clean, no sync", sysinfo_read_mdstat(path, "md0", &md) == 0 && md.degraded == 0 && !md.sync_action[0]);
    test_cond("md2 raid10 64K chunks", sysinfo_read_mdstat(path, "md2", &md) == 0 &&
              strcmp(md.level, "raid10") == 0 && md.chunk_bytes == 65536 && md.raid_disks == 4 &&
              md.member_count == 4);
    test_cond("md9 absent", sysinfo_read_mdstat(path, "md9", &md) == -1);

    /* sysfs */
    snprintf(path, sizeof(path), "%s/sysfs", fx);
    test_cond("md0 block device", sysinfo_read_block(path, 9, 0, &b) == 0);
    test_str_eq("name md0", b.name, "md0");
    test_str_eq("md scheduler none", b.scheduler, "none");
    test_cond("md not rotational", b.rotational == 0);
    test_cond("md size", b.size_bytes == 3906518016LL * 512);
    test_cond("md info from sysfs", b.md.found && strcmp(b.md.level, "raid5") == 0 &&
              b.md.chunk_bytes == 524288 && b.md.raid_disks == 3);
    test_cond("md members from slaves/", b.md.member_count == 3 && strcmp(b.md.members[0], "sdb1") == 0 &&
              strcmp(b.md.members[2], "sdd1") == 0);
    test_str_eq("md array state", b.md.state, "clean");
    test_cond("partition sda1", sysinfo_read_block(path, 8, 1, &b) == 0);
    test_str_eq("partition name", b.name, "sda1");
    test_str_eq("its disk", b.disk, "sda");
    test_str_eq("active scheduler in brackets", b.scheduler, "bfq");
    test_cond("disk rotational", b.rotational == 1);
    test_cond("not md", !b.md.found);
    test_cond("absent device", sysinfo_read_block(path, 7, 7, &b) == -1 && !b.found);

    /* md from sysfs: a degraded raid5 recovering onto sdl1, with a spare and a faulty disk (made after
     * the kernel's md sysfs layout, Documentation/admin-guide/md.rst: this machine has no md) */
    test_cond("md7", sysinfo_read_block(path, 9, 7, &b) == 0 && b.md.found && strcmp(b.md.name, "md7") == 0);
    test_cond("md7: degraded 1, recovering, how far", b.md.degraded == 1 && strcmp(b.md.sync_action, "recover") == 0 &&
              strcmp(b.md.sync_completed, "146686464 / 1953257472") == 0);
    test_cond("md7: five devices with their roles", b.md.device_count == 5 &&
              strcmp(b.md.devices[0].name, "sdi1") == 0 && strcmp(b.md.devices[0].role, "member") == 0 &&
              strcmp(b.md.devices[1].name, "sdj1") == 0 && strcmp(b.md.devices[2].name, "sdk1") == 0 &&
              strcmp(b.md.devices[2].role, "spare") == 0 && strcmp(b.md.devices[3].name, "sdl1") == 0 &&
              strcmp(b.md.devices[3].role, "member") == 0 && b.md.devices[3].slot == 2 &&
              strcmp(b.md.devices[4].name, "sdm1") == 0 && strcmp(b.md.devices[4].role, "faulty") == 0);
    test_cond("md7: members are the three slots, not the spare or the faulty disk", b.md.member_count == 3 &&
              strcmp(b.md.members[0], "sdi1") == 0 && strcmp(b.md.members[2], "sdl1") == 0);
    test_cond("a partition of md (md7p1) is recognised", sysinfo_read_block(path, 259, 1, &b) == 0 &&
              strcmp(b.name, "md7p1") == 0 && b.md.found && strcmp(b.md.name, "md7") == 0 && b.md.degraded == 1);
    test_cond("LVM/dm on md (dm-3) is recognised", sysinfo_read_block(path, 253, 3, &b) == 0 &&
              strcmp(b.name, "dm-3") == 0 && b.md.found && strcmp(b.md.name, "md7") == 0 && b.md.member_count == 3);

    test_report();
    return 0;
}
