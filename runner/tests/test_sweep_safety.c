/* test_sweep_safety.c -- what sweep refuses to erase, on /proc and /sys trees made here: a mounted
 * device, a mounted partition, the root filesystem, swap, an md or device-mapper member, an occupied
 * mountpoint; --yes-destroy's exact naming; the signatures found at the start of a device. */
#include "testhelp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep_safety.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[1024], dir[1024];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    /* make the parents */
    for (char *p = strchr(path + strlen(root) + 1, '/'); p; p = strchr(p + 1, '/')) {
        snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
        mkdir(dir, 0755);
    }
    FILE *fp = fopen(path, "w");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
}

static void fresh_root(const char *name)
{
    snprintf(root, sizeof(root), "/tmp/test_sweep_safety.%d.%s", (int)getpid(), name);
    mkdir(root, 0755);
    put("proc/self/mountinfo",
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "30 22 0:26 / /tmp rw shared:5 - tmpfs tmpfs rw\n");
    put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
    put("sys/class/block/sdb/dev", "8:16\n");
    put("sys/class/block/sdb/sdb1/partition", "1\n");
    put("sys/class/block/sdb/sdb1/dev", "8:17\n");
    put("sys/class/block/sdb/sdb2/partition", "2\n");
    put("sys/class/block/sdb/sdb2/dev", "8:18\n");
    put("sys/class/block/loop0/dev", "7:0\n");
}

static int contains(const char *s, const char *part)
{
    int ok = strstr(s, part) != NULL;
    if (!ok)
        printf("    [%s] lacks [%s]\n", s, part);
    return ok;
}

static const struct sweep_device sdb = {"sdb", 8, 16}, loop0 = {"loop0", 7, 0};

/* Two loop devices on one image file, the other one mounted: the named one is refused through it, and a loop
 * device whose file lies on the named one's filesystem is refused as its user. */
static void test_loop_aliases(void)
{
    char err[1024] = "";
    fresh_root("aliases");
    put("img/disk.img", "x");
    put("sys/block/loop0/dev", "7:0\n");
    put("sys/block/loop0/size", "819200\n");
    put("sys/block/loop0/loop/backing_file", "/img/disk.img\n");
    put("sys/block/loop0/loop/offset", "0\n");
    put("sys/block/loop1/dev", "7:1\n");
    put("sys/block/loop1/size", "819200\n");
    put("sys/block/loop1/loop/backing_file", "/img/disk.img\n");
    put("sys/block/loop1/loop/offset", "0\n");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n"
                               "40 22 7:1 / /pool rw - ext4 /dev/loop1 rw\n");
    test_cond("a loop device on the same file, mounted, refuses the named one",
              sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) < 0 &&
              contains(err, "loop1 (attached to the same file /img/disk.img) is mounted on /pool"));
    /* at offsets that do not overlap, the same file is other blocks */
    put("sys/block/loop1/loop/offset", "419430400\n");
    test_cond("the same file at another offset is not an alias",
              sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) == 0);
    put("sys/block/loop1/loop/offset", "0\n");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n");
    test_cond("unmounted, the alias lets it be", sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) == 0);
    put("sys/class/block/loop1/holders/md0/dev", "9:0\n");
    test_cond("an alias in an md array refuses it", sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) < 0 &&
              contains(err, "loop1 (attached to the same file /img/disk.img) is in use by md0 (an md array)"));
}

static void test_mounted_device(void)
{
    unsigned ma = 0, mi = 0;
    fresh_root("mounted");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n"
                               "40 22 7:1 / /mnt/my\\040study rw - ext4 /dev/loop1 rw\n");
    test_cond("a mountpoint with a space is found by its decoded path",
              sweep_mounted_device(root, "/mnt/my study", &ma, &mi) == 1 && ma == 7 && mi == 1);
    test_cond("nothing is mounted on another path", sweep_mounted_device(root, "/mnt/other", &ma, &mi) == 0);
}

static void test_in_use(void)
{
    char err[1024] = "";
    fresh_root("free");
    test_cond("a device nobody uses is free", sweep_check_in_use(root, &sdb, NULL, "/mnt/bench", 0, err, sizeof(err)) == 0);
    if (err[0])
        printf("    %s\n", err);

    fresh_root("mounted");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n40 22 7:0 / /srv/data rw - ext4 /dev/loop0 rw\n");
    test_cond("a mounted device is refused", sweep_check_in_use(root, &loop0, NULL, "/mnt/bench", 0, err, sizeof(err)) < 0 &&
                                                 contains(err, "loop0 is mounted on /srv/data"));

    fresh_root("part");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n41 22 8:18 / /my\\040data rw - xfs /dev/sdb2 rw\n");
    test_cond("a device with a mounted partition is refused (the path unescaped)",
              sweep_check_in_use(root, &sdb, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                  contains(err, "its partition sdb2 is mounted on /my data"));

    fresh_root("rootfs");
    put("proc/self/mountinfo", "22 1 8:17 / / rw - ext4 /dev/sdb1 rw\n");
    test_cond("the root filesystem's device is refused", sweep_check_in_use(root, &sdb, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                                                             contains(err, "sdb1 holds the root filesystem"));

    fresh_root("bysource");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n50 22 0:45 / /pool rw - btrfs /dev/loop0 rw\n");
    test_cond("a mount whose MAJ:MIN is virtual (btrfs) is found by its source",
              sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) < 0 && contains(err, "loop0 is mounted on /pool"));

    fresh_root("swap");
    put("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/sdb2                               partition\t1048572\t0\t-2\n");
    test_cond("a swap partition is refused", sweep_check_in_use(root, &sdb, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                                                 contains(err, "its partition sdb2 is in use as swap"));

    fresh_root("md");
    put("sys/class/block/sdb/holders/md127/.keep", "");
    test_cond("an md member is refused", sweep_check_in_use(root, &sdb, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                                             contains(err, "sdb is in use by md127 (an md array)"));

    fresh_root("lvm");
    put("sys/class/block/sdb/sdb1/holders/dm-0/.keep", "");
    put("sys/class/block/dm-0/dm/name", "vg0-data\n");
    test_cond("an LVM physical volume's partition is refused", sweep_check_in_use(root, &sdb, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                                                                   contains(err, "its partition sdb1 is in use by dm-0 (vg0-data, device-mapper"));

    fresh_root("mountpoint");
    put("proc/self/mountinfo", "22 1 254:0 / / rw - ext4 /dev/vda rw\n60 22 0:50 / /mnt/bench rw - tmpfs tmpfs rw\n");
    test_cond("an occupied mountpoint is refused", sweep_check_in_use(root, &loop0, NULL, "/mnt/bench", 0, err, sizeof(err)) < 0 &&
                                                       contains(err, "the mountpoint /mnt/bench has tmpfs mounted on it"));

    fresh_root("noproc");
    char gone[512];
    snprintf(gone, sizeof(gone), "%s/proc/self/mountinfo", root);
    unlink(gone);
    test_cond("without mountinfo nothing can be checked: refused", sweep_check_in_use(root, &loop0, NULL, NULL, 0, err, sizeof(err)) < 0 &&
                                                                       contains(err, "can't read"));

    fresh_root("name");
    char link[512];
    snprintf(link, sizeof(link), "%s/sys/dev", root);
    mkdir(link, 0755);
    snprintf(link, sizeof(link), "%s/sys/dev/block", root);
    mkdir(link, 0755);
    snprintf(link, sizeof(link), "%s/sys/dev/block/7:3", root);
    test_cond("the fixture's link", symlink("../../devices/virtual/block/loop3", link) == 0);
    char name[64] = "";
    test_cond("the sysfs name of 7:3", sweep_device_name(root, 7, 3, name, sizeof(name)) == 0 && strcmp(name, "loop3") == 0);
    test_cond("an unknown MAJ:MIN", sweep_device_name(root, 7, 99, name, sizeof(name)) < 0);
}

static void test_naming(void)
{
    char err[1024];
    test_cond("the same string is consent", sweep_check_naming("/dev/loop0", "/dev/loop0", 1, "xfs filesystem", err, sizeof(err)) == 0);
    test_cond("no --yes-destroy: refused, saying what the device holds",
              sweep_check_naming("/dev/loop0", NULL, 0, "ext2/3/4 filesystem", err, sizeof(err)) < 0 &&
                  contains(err, "holds a signature (ext2/3/4 filesystem): confirm with --yes-destroy /dev/loop0"));
    test_cond("the same device under another name is refused when it holds ext4",
              sweep_check_naming("/dev/loop0", "/dev/block/7:0", 1, "ext2/3/4 filesystem", err, sizeof(err)) < 0 &&
                  contains(err, "is /dev/loop0 under another name; it holds a signature (ext2/3/4 filesystem): name it exactly"));
    test_cond("another device is refused",
              sweep_check_naming("/dev/loop0", "/dev/loop1", 0, "", err, sizeof(err)) < 0 &&
                  contains(err, "is not the plan's device /dev/loop0"));
}

static int probe_with(long offset, const char *bytes, size_t len, char *out, size_t outlen)
{
    char path[256];
    snprintf(path, sizeof(path), "/tmp/test_sweep_safety.%d.img", (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 1 << 20))
        return -2;
    if (len && pwrite(fd, bytes, len, offset) != (ssize_t)len)
        return -2;
    int found = sweep_probe_signature(fd, out, outlen);
    close(fd);
    unlink(path);
    return found;
}

static void test_probe(void)
{
    char sig[128] = "";
    test_cond("zeros: no signature", probe_with(0, "", 0, sig, sizeof(sig)) == 0);
    test_cond("ext2/3/4 magic at 1080", probe_with(1080, "\x53\xef", 2, sig, sizeof(sig)) == 1 &&
                                            strcmp(sig, "ext2/3/4 filesystem") == 0);
    test_cond("xfs", probe_with(0, "XFSB", 4, sig, sizeof(sig)) == 1 && strcmp(sig, "xfs filesystem") == 0);
    test_cond("btrfs", probe_with(65600, "_BHRfS_M", 8, sig, sizeof(sig)) == 1 && strcmp(sig, "btrfs filesystem") == 0);
    test_cond("GPT", probe_with(512, "EFI PART", 8, sig, sizeof(sig)) == 1 && strcmp(sig, "GPT partition table") == 0);
    test_cond("MBR", probe_with(510, "\x55\xaa", 2, sig, sizeof(sig)) == 1 && strcmp(sig, "DOS (MBR) partition table") == 0);
    test_cond("swap (4 KiB pages)", probe_with(4086, "SWAPSPACE2", 10, sig, sizeof(sig)) == 1 && strcmp(sig, "swap area") == 0);
    test_cond("LVM", probe_with(512, "LABELONE", 8, sig, sizeof(sig)) == 1 && strcmp(sig, "LVM physical volume") == 0);
    test_cond("md 1.2", probe_with(4096, "\xfc\x4e\x2b\xa9", 4, sig, sizeof(sig)) == 1 && contains(sig, "md RAID member"));
    test_cond("an unreadable fd", sweep_probe_signature(-1, sig, sizeof(sig)) < 0);
}

int main(void)
{
    test_loop_aliases();
    test_mounted_device();
    test_in_use();
    test_naming();
    test_probe();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf /tmp/test_sweep_safety.%d.*", (int)getpid());
    if (system(cmd) != 0)
        printf("    (could not remove the fixture trees)\n");
    test_report();
}
