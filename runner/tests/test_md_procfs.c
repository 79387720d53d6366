/* test_md_procfs.c -- the md, dm and mdstat readers on prometheus/procfs's fixtures
 * (tests/fixtures/procfs, see its NOTICE): md arrays laid out as the kernel writes them, which this
 * machine (no md in its kernel) cannot make. Run from runner/ or pass the fixtures dir. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "evidence.h"
#include "sysinfo.h"
#include "testhelp.h"

/* The md_device named name in md, or NULL. */
static const struct md_device *device(const struct md_info *md, const char *name)
{
    for (int i = 0; i < md->device_count; i++)
        if (strcmp(md->devices[i].name, name) == 0)
            return &md->devices[i];
    return NULL;
}

static int has_role(const struct md_info *md, const char *name, const char *role, int slot)
{
    const struct md_device *d = device(md, name);
    return d && strcmp(d->role, role) == 0 && d->slot == slot;
}

static void mdstat_tests(const char *fx)
{
    char path[PATH_MAX];
    struct md_info md;
    snprintf(path, sizeof(path), "%s/proc/mdstat", fx);

    test_cond("md3 raid6: 64k chunk, 8 slots, the two (S) are spares, not members",
              sysinfo_read_mdstat(path, "md3", &md) == 0 && strcmp(md.level, "raid6") == 0 &&
                  md.chunk_bytes == 65536 && md.raid_disks == 8 && md.degraded == 0 && md.device_count == 10 &&
                  md.member_count == 8 && strcmp(md.state, "active") == 0 && !md.sync_action[0]);
    test_cond("md127 is not md1 (exact names)", sysinfo_read_mdstat(path, "md127", &md) == 0 &&
              strcmp(md.name, "md127") == 0 && md.member_count == 2 && md.chunk_bytes == -1);
    test_cond("md4 inactive: a faulty and a spare, no members", sysinfo_read_mdstat(path, "md4", &md) == 0 &&
              strcmp(md.state, "inactive") == 0 && strcmp(md.level, "raid1") == 0 && md.member_count == 0 &&
              has_role(&md, "sda3", "faulty", -1) && has_role(&md, "sdb3", "spare", -1));
    test_cond("md6 raid1 [2/1]: degraded 1, recovering 8.5%, one member", sysinfo_read_mdstat(path, "md6", &md) == 0 &&
              md.degraded == 1 && strcmp(md.sync_action, "recover") == 0 && strcmp(md.sync_completed, "8.5%") == 0 &&
              md.member_count == 1 && strcmp(md.members[0], "sda2") == 0 && has_role(&md, "sdb2", "faulty", -1) &&
              has_role(&md, "sdc", "spare", -1));
    test_cond("md8: resync 8.5%, two spares", sysinfo_read_mdstat(path, "md8", &md) == 0 &&
              strcmp(md.sync_action, "resync") == 0 && strcmp(md.sync_completed, "8.5%") == 0 &&
              md.member_count == 2 && has_role(&md, "sdc", "spare", -1) && has_role(&md, "sde", "spare", -1));
    test_cond("md201: check 5.7%", sysinfo_read_mdstat(path, "md201", &md) == 0 &&
              strcmp(md.sync_action, "check") == 0 && strcmp(md.sync_completed, "5.7%") == 0);
    test_cond("md7 raid6 [4/3]: 512k chunk (not the bitmap's 65536KB), degraded 1, sdc1 faulty",
              sysinfo_read_mdstat(path, "md7", &md) == 0 && md.chunk_bytes == 524288 && md.raid_disks == 4 &&
                  md.degraded == 1 && md.member_count == 3 && has_role(&md, "sdc1", "faulty", -1) &&
                  !md.sync_action[0]);
    test_cond("md9: resync=DELAYED, two faulty, one spare, four members", sysinfo_read_mdstat(path, "md9", &md) == 0 &&
              strcmp(md.sync_action, "resync") == 0 && strcmp(md.sync_completed, "DELAYED") == 0 &&
              md.member_count == 4 && has_role(&md, "sde", "faulty", -1) && has_role(&md, "sdf", "faulty", -1) &&
              has_role(&md, "sdg", "spare", -1));
    test_cond("md10 raid0 \"64k chunks\", no [n/m]: slots and degraded unknown",
              sysinfo_read_mdstat(path, "md10", &md) == 0 && strcmp(md.level, "raid0") == 0 &&
                  md.chunk_bytes == 65536 && md.raid_disks == -1 && md.degraded == -1 && md.member_count == 2);
    test_cond("md11 (auto-read-only): level raid1, resync=PENDING, 2 members, 1 faulty, 2 spares",
              sysinfo_read_mdstat(path, "md11", &md) == 0 && strcmp(md.level, "raid1") == 0 &&
                  strcmp(md.sync_action, "resync") == 0 && strcmp(md.sync_completed, "PENDING") == 0 &&
                  md.member_count == 2 && has_role(&md, "sdc3", "faulty", -1) && has_role(&md, "hda", "spare", -1) &&
                  has_role(&md, "ssdc2", "spare", -1));
    test_cond("md126 external metadata: 128k chunks", sysinfo_read_mdstat(path, "md126", &md) == 0 &&
              md.chunk_bytes == 131072 && md.member_count == 2);
    test_cond("md219 inactive container without a level: unknown, three spares",
              sysinfo_read_mdstat(path, "md219", &md) == 0 && strcmp(md.level, "unknown") == 0 &&
                  md.member_count == 0 && md.device_count == 3);
    test_cond("md120 linear: \"0k rounding\" is no chunk", sysinfo_read_mdstat(path, "md120", &md) == 0 &&
              strcmp(md.level, "linear") == 0 && md.chunk_bytes == -1);
    test_cond("md101 (read-only) raid0 512k", sysinfo_read_mdstat(path, "md101", &md) == 0 &&
              strcmp(md.level, "raid0") == 0 && md.chunk_bytes == 524288 && md.member_count == 3);
    test_cond("md42 raid5 reshape 56.1%, [3/2] degraded 1, a spare", sysinfo_read_mdstat(path, "md42", &md) == 0 &&
              strcmp(md.sync_action, "reshape") == 0 && strcmp(md.sync_completed, "56.1%") == 0 &&
              md.degraded == 1 && md.member_count == 2 && has_role(&md, "sda1", "spare", -1));
    test_cond("md2 absent", sysinfo_read_mdstat(path, "md2", &md) == -1);
}

static void sysfs_tests(const char *fx)
{
    char sys[PATH_MAX];
    struct block_info b;
    const struct md_info *md = &b.md; /* b is re-read by every check */
    snprintf(sys, sizeof(sys), "%s/sys", fx);

    test_cond("md0 raid0: 512 KiB chunk, two in_sync members in slots 0 and 1 (from the rdN links)",
              sysinfo_read_block(sys, 9, 0, &b) == 0 && md->found && strcmp(md->level, "raid0") == 0 &&
                  md->chunk_bytes == 524288 && md->raid_disks == 2 && strcmp(md->state, "clean") == 0 &&
                  md->member_count == 2 && has_role(md, "sdg", "member", 0) &&
                  has_role(md, "sdh", "member", 1));
    test_cond("md0 has no degraded or sync_action file (raid0): unknown", md->degraded == -1 &&
              !md->sync_action[0] && !md->sync_completed[0]);
    test_cond("md1 raid1: chunk_size 0 is no chunk, idle, sync_completed \"none\" is nothing",
              sysinfo_read_block(sys, 9, 1, &b) == 0 && strcmp(md->level, "raid1") == 0 && md->chunk_bytes == -1 &&
                  md->degraded == 0 && strcmp(md->sync_action, "idle") == 0 && !md->sync_completed[0] &&
                  md->member_count == 2);
    test_str_eq("md1's device state", device(md, "sdi") ? device(md, "sdi")->state : NULL, "in_sync");
    test_cond("md4 raid4, md10 raid10: all members", sysinfo_read_block(sys, 9, 4, &b) == 0 &&
              strcmp(md->level, "raid4") == 0 && md->member_count == 3 && sysinfo_read_block(sys, 9, 10, &b) == 0 &&
              strcmp(md->level, "raid10") == 0 && md->member_count == 4 && md->raid_disks == 4);
    test_cond("md5 raid5 degraded 1: sdp faulty (still linked as rd2), sdaa spare, two members",
              sysinfo_read_block(sys, 9, 5, &b) == 0 && md->degraded == 1 && md->device_count == 4 &&
                  has_role(md, "sdp", "faulty", 2) && has_role(md, "sdaa", "spare", -1) &&
                  md->member_count == 2 && strcmp(md->members[0], "sdn") == 0 &&
                  strcmp(md->members[1], "sdo") == 0);
    test_cond("md6 raid6 recovering onto sdt: state spare but slot 3, so a member being rebuilt",
              sysinfo_read_block(sys, 9, 6, &b) == 0 && md->degraded == 1 && strcmp(md->state, "active") == 0 &&
                  strcmp(md->sync_action, "recover") == 0 &&
                  strcmp(md->sync_completed, "1569888 / 2093056") == 0 && has_role(md, "sdt", "member", 3) &&
                  strcmp(device(md, "sdt")->state, "spare") == 0 && md->member_count == 4);
    test_cond("md7: an inactive container, no devices, raid_disks empty is unknown",
              sysinfo_read_block(sys, 9, 7, &b) == 0 && strcmp(md->level, "container") == 0 &&
                  strcmp(md->state, "inactive") == 0 && md->raid_disks == -1 && md->device_count == 0 &&
                  md->member_count == 0);
    test_cond("md8 growing: raid_disks \"11 (10)\" is the new 11, reshape, sync_completed \"none\" is nothing",
              sysinfo_read_block(sys, 9, 8, &b) == 0 && md->raid_disks == 11 &&
                  strcmp(md->sync_action, "reshape") == 0 && !md->sync_completed[0] && md->member_count == 2);
    test_cond("dm-0 (LVM vg0-lv_root on sda) is no md", sysinfo_read_block(sys, 253, 0, &b) == 0 &&
              strcmp(b.name, "dm-0") == 0 && !md->found);
    test_cond("sda: its queue settings", sysinfo_read_block(sys, 8, 0, &b) == 0 && strcmp(b.name, "sda") == 0 &&
              b.rotational == 1 && strcmp(b.scheduler, "bfq") == 0 && strcmp(b.write_cache, "write back") == 0 &&
              b.nr_requests == 64 && b.read_ahead_kb == 128);

    char disks[16][EVIDENCE_NAME_LEN], backing[PATH_MAX];
    test_cond("dm-0: its disk sda", evidence_find_disks(sys, "dm-0", disks, 16, backing, sizeof(backing)) == 1 &&
              strcmp(disks[0], "sda") == 0);
    int n = evidence_find_disks(sys, "dm-1", disks, 16, backing, sizeof(backing));
    test_cond("dm-1 (multipath mpathA): both paths' disks", n == 2 &&
              ((strcmp(disks[0], "sdb") == 0 && strcmp(disks[1], "sdc") == 0) ||
               (strcmp(disks[0], "sdc") == 0 && strcmp(disks[1], "sdb") == 0)));
}

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures/procfs";
    mdstat_tests(fx);
    sysfs_tests(fx);
    test_report();
    return 0;
}
