/* sweep_safety.c -- the checks before a sweep erases a device. */
#include "sweep_safety.h"

#include "sbuf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int sweep_check_naming(const char *plan_device, const char *yes_destroy, int same_device, const char *signature,
                       char *err, size_t errlen)
{
    char held[160] = "";
    if (signature && *signature)
        snprintf(held, sizeof(held), "; it holds a signature (%s)", signature);
    if (!yes_destroy)
        return set_error(err, errlen, "this erases %s%s: confirm with --yes-destroy %s", plan_device, held, plan_device);
    if (strcmp(yes_destroy, plan_device) == 0)
        return 0;
    if (same_device)
        return set_error(err, errlen, "--yes-destroy %s is %s under another name%s: name it exactly as the plan does "
                    "(--yes-destroy %s)", yes_destroy, plan_device, held, plan_device);
    return set_error(err, errlen, "--yes-destroy %s is not the plan's device %s%s: repeat the plan's device exactly",
                yes_destroy, plan_device, held);
}

/* A partition of the device: its sysfs name and MAJ:MIN. */
struct part {
    char name[64];
    unsigned major, minor;
};

#define MAX_PARTS 128

static int read_small(const char *path, char *buf, size_t len)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    size_t n = fread(buf, 1, len - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return 0;
}

/* The device itself (parts[0]) and its partitions: the subdirectories of its sysfs directory that hold
 * a "partition" file. */
static int device_and_partitions(const char *root, const struct sweep_device *dev, struct part *parts)
{
    int n = 0;
    snprintf(parts[n].name, sizeof(parts[n].name), "%s", dev->name);
    parts[n].major = dev->major;
    parts[n].minor = dev->minor;
    n++;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/sys/class/block/%s", root, dev->name);
    DIR *d = opendir(dir);
    if (!d)
        return n;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_PARTS) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 300], text[64];
        snprintf(path, sizeof(path), "%s/%s/partition", dir, e->d_name);
        if (access(path, F_OK))
            continue;
        snprintf(path, sizeof(path), "%s/%s/dev", dir, e->d_name);
        unsigned ma, mi;
        if (read_small(path, text, sizeof(text)) || sscanf(text, "%u:%u", &ma, &mi) != 2)
            continue;
        snprintf(parts[n].name, sizeof(parts[n].name), "%.63s", e->d_name);
        parts[n].major = ma;
        parts[n].minor = mi;
        n++;
    }
    closedir(d);
    return n;
}

/* "the device loop0" or "its partition loop0p1". */
static const char *which(const struct part *parts, int i, char *buf, size_t len)
{
    if (i == 0)
        snprintf(buf, len, "%.63s", parts[0].name);
    else
        snprintf(buf, len, "its partition %.63s", parts[i].name);
    return buf;
}

/* mountinfo's escaped octal (\040 for a space) decoded in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int check_mounts(const char *root, const struct part *parts, int nparts, const char *mountpoint, char *err,
                        size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return set_error(err, errlen, "can't read %s to check the device is not mounted: %s", path, strerror(errno));
    char line[8192], who[128];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), fp)) {
        unsigned ma, mi;
        char target[4096], source[4096] = "";
        if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &ma, &mi, target) != 3)
            continue;
        unescape(target);
        const char *dash = strstr(line, " - ");
        if (dash)
            sscanf(dash + 3, "%*s %4095s", source);
        unescape(source);
        for (int i = 0; i < nparts && rc == 0; i++) {
            int same = (ma == parts[i].major && mi == parts[i].minor) ||
                       (source[0] == '/' && strcmp(base_name(source), parts[i].name) == 0);
            if (!same)
                continue;
            if (strcmp(target, "/") == 0)
                rc = set_error(err, errlen, "%s holds the root filesystem: never a scratch device",
                          which(parts, i, who, sizeof(who)));
            else
                rc = set_error(err, errlen, "%s is mounted on %s: unmount it first if it is really scratch",
                          which(parts, i, who, sizeof(who)), target);
        }
        if (rc == 0 && mountpoint && strcmp(target, mountpoint) == 0)
            rc = set_error(err, errlen, "the mountpoint %s has %s mounted on it already", mountpoint,
                      source[0] ? source : "a filesystem");
    }
    fclose(fp);
    return rc;
}

static int check_swaps(const char *root, const struct part *parts, int nparts, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/proc/swaps", root);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0; /* no swap support: nothing can be swap */
    char line[4096], who[128];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), fp)) {
        char name[4096];
        if (sscanf(line, "%4095s", name) != 1 || name[0] != '/')
            continue;
        unescape(name);
        struct stat st;
        int by_rdev = root[0] == '\0' && stat(name, &st) == 0 && S_ISBLK(st.st_mode);
        for (int i = 0; i < nparts && rc == 0; i++) {
            int same = by_rdev ? major(st.st_rdev) == parts[i].major && minor(st.st_rdev) == parts[i].minor
                               : strcmp(base_name(name), parts[i].name) == 0;
            if (same)
                rc = set_error(err, errlen, "%s is in use as swap (%s in /proc/swaps)", which(parts, i, who, sizeof(who)),
                          name);
        }
    }
    fclose(fp);
    return rc;
}

/* What holds a device, in words: "md127 (an md array)", "dm-0 (vg-data, device-mapper: LVM or dm-crypt)". */
static void describe_holder(const char *root, const char *holder, char *out, size_t len)
{
    if (strncmp(holder, "md", 2) == 0) {
        snprintf(out, len, "%.255s (an md array)", holder);
        return;
    }
    if (strncmp(holder, "dm-", 3) == 0) {
        char path[PATH_MAX], name[256] = "";
        snprintf(path, sizeof(path), "%s/sys/class/block/%s/dm/name", root, holder);
        if (read_small(path, name, sizeof(name)) == 0)
            name[strcspn(name, "\n")] = '\0';
        snprintf(out, len, "%.64s (%.128s%sdevice-mapper: LVM, dm-crypt or multipath)", holder, name, name[0] ? ", " : "");
        return;
    }
    snprintf(out, len, "%.255s", holder);
}

static int check_holders(const char *root, const struct part *parts, int nparts, char *err, size_t errlen)
{
    char who[128];
    for (int i = 0; i < nparts; i++) {
        char dir[PATH_MAX];
        if (i == 0)
            snprintf(dir, sizeof(dir), "%s/sys/class/block/%s/holders", root, parts[0].name);
        else
            snprintf(dir, sizeof(dir), "%s/sys/class/block/%s/%s/holders", root, parts[0].name, parts[i].name);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char holder[512];
            describe_holder(root, e->d_name, holder, sizeof(holder));
            closedir(d);
            return set_error(err, errlen, "%s is in use by %s: stop that first if it is really scratch",
                        which(parts, i, who, sizeof(who)), holder);
        }
        closedir(d);
    }
    return 0;
}

int sweep_check_in_use(const char *root, const struct sweep_device *dev, const char *mountpoint, char *err,
                       size_t errlen)
{
    static struct part parts[MAX_PARTS];
    int n = device_and_partitions(root, dev, parts);
    if (check_mounts(root, parts, n, mountpoint, err, errlen) || check_swaps(root, parts, n, err, errlen) ||
        check_holders(root, parts, n, err, errlen))
        return -1;
    return 0;
}

int sweep_device_name(const char *root, unsigned major, unsigned minor, char *out, size_t len)
{
    char path[PATH_MAX], target[PATH_MAX];
    snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", root, major, minor);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return -1;
    target[n] = '\0';
    snprintf(out, len, "%s", base_name(target));
    return 0;
}

/* Where signatures live, as blkid's probes look for them. */
struct magic {
    long offset;
    const char *bytes;
    size_t len;
    const char *name;
};

static const struct magic magics[] = {
    {1080, "\x53\xef", 2, "ext2/3/4 filesystem"},
    {0, "XFSB", 4, "xfs filesystem"},
    {65600, "_BHRfS_M", 8, "btrfs filesystem"},
    {0, "LUKS\xba\xbe", 6, "LUKS volume"},
    {512, "LABELONE", 8, "LVM physical volume"},
    {4096, "\xfc\x4e\x2b\xa9", 4, "md RAID member (1.2 superblock)"},
    {4086, "SWAPSPACE2", 10, "swap area"},
    {65526, "SWAPSPACE2", 10, "swap area"},
    {0, "\x46\x53\x48\x52\x4d", 5, "f2fs filesystem"},
    {1024, "\x10\x20\xf5\xf2", 4, "f2fs filesystem"},
    {32769, "CD001", 5, "ISO 9660 filesystem"},
    {3, "NTFS    ", 8, "NTFS filesystem"},
    {82, "FAT32   ", 8, "FAT filesystem"},
    {54, "FAT1", 4, "FAT filesystem"},
    {512, "EFI PART", 8, "GPT partition table"},
    {510, "\x55\xaa", 2, "DOS (MBR) partition table"},
};

int sweep_probe_signature(int fd, char *out, size_t len)
{
    enum { SPAN = 65536 + 4096 };
    unsigned char *buf = calloc(1, SPAN);
    if (!buf)
        return -1;
    size_t have = 0;
    while (have < SPAN) {
        ssize_t n = pread(fd, buf + have, SPAN - have, (off_t)have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            free(buf);
            errno = saved;
            return -1;
        }
        if (n == 0)
            break;
        have += (size_t)n;
    }
    int found = 0;
    for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]) && !found; i++) {
        const struct magic *m = &magics[i];
        if ((size_t)m->offset + m->len <= have && memcmp(buf + m->offset, m->bytes, m->len) == 0) {
            snprintf(out, len, "%s", m->name);
            found = 1;
        }
    }
    free(buf);
    return found;
}
