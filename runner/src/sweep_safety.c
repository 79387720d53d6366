/* sweep_safety.c -- the checks before a sweep erases a device. */
#include "sweep_safety.h"

#include "sbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* A name that reaches the device's blocks: the device itself (parts[0]), a partition, its whole disk, or an
 * alias (a loop device on the same file or on the device). why says which, for the messages. */
struct part {
    char name[64];
    unsigned major, minor;
    char why[PATH_MAX + 64];        /* "" for the device, "its partition", or "attached to the same file X" */
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
    parts[n].why[0] = '\0';
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
        snprintf(parts[n].why, sizeof(parts[n].why), "its partition");
        n++;
    }
    closedir(d);
    return n;
}

/* "loop0", "its partition loop0p1" or "loop1 (attached to the same file /x/disk.img)". */
static const char *which(const struct part *parts, int i, char *buf, size_t len)
{
    if (parts[i].why[0] == '\0')
        snprintf(buf, len, "%.63s", parts[i].name);
    else if (strcmp(parts[i].why, "its partition") == 0)
        snprintf(buf, len, "its partition %.63s", parts[i].name);
    else
        snprintf(buf, len, "%.63s (%s)", parts[i].name, parts[i].why);
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
    char line[8192], who[PATH_MAX + 160];
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
    char line[4096], who[PATH_MAX + 160];
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
    char who[PATH_MAX + 160];
    for (int i = 0; i < nparts; i++) {
        char dir[PATH_MAX];
        if (strcmp(parts[i].why, "its partition") == 0)
            snprintf(dir, sizeof(dir), "%s/sys/class/block/%s/%s/holders", root, parts[0].name, parts[i].name);
        else
            snprintf(dir, sizeof(dir), "%s/sys/class/block/%s/holders", root, parts[i].name);
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

/* ==== Aliases: other names of the same blocks ==== */

/* A bound loop device: what it reads (its backing file or device) and which bytes of it. */
struct bound_loop {
    char name[64];
    unsigned major, minor;
    char backing[PATH_MAX];
    struct stat st;                 /* of backing; st_mode 0 when it can't be stat'ed (deleted, another namespace) */
    unsigned long long offset, bytes;
};

/* The backing file's identity from the loop driver itself, where its path no longer leads to it (deleted, or on a
 * filesystem unmounted lazily that the loop device keeps alive): st_dev and st_ino, as a regular file. */
static void loop_status(struct bound_loop *l)
{
    char node[128];
    snprintf(node, sizeof(node), "/dev/%.63s", l->name);
    int fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    struct loop_info64 info;
    if (ioctl(fd, LOOP_GET_STATUS64, &info) == 0) {
        l->st.st_dev = (dev_t)info.lo_device;
        l->st.st_ino = (ino_t)info.lo_inode;
        l->st.st_mode = S_IFREG;
    }
    close(fd);
}

static unsigned long long read_ull(const char *path)
{
    char text[64];
    return read_small(path, text, sizeof(text)) == 0 ? strtoull(text, NULL, 10) : 0;
}

/* Every bound loop device (one with a backing file) under root's /sys/block. Returns the count. */
static int bound_loops(const char *root, struct bound_loop *loops, int max)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/sys/block", root);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (strncmp(e->d_name, "loop", 4) != 0)
            continue;
        struct bound_loop *l = &loops[n];
        memset(l, 0, sizeof(*l));
        char path[PATH_MAX + 300], text[64];
        snprintf(path, sizeof(path), "%s/%s/loop/backing_file", dir, e->d_name);
        if (read_small(path, l->backing, sizeof(l->backing)))
            continue;
        l->backing[strcspn(l->backing, "\n")] = '\0';
        snprintf(path, sizeof(path), "%s/%s/dev", dir, e->d_name);
        if (!l->backing[0] || read_small(path, text, sizeof(text)) || sscanf(text, "%u:%u", &l->major, &l->minor) != 2)
            continue;
        snprintf(l->name, sizeof(l->name), "%.63s", e->d_name);
        snprintf(path, sizeof(path), "%s/%s/loop/offset", dir, e->d_name);
        l->offset = read_ull(path);
        snprintf(path, sizeof(path), "%s/%s/size", dir, e->d_name);
        l->bytes = read_ull(path) * 512;
        snprintf(path, sizeof(path), "%s%s", root, l->backing);
        if (stat(path, &l->st))
            memset(&l->st, 0, sizeof(l->st));
        if (!l->st.st_mode && root[0] == '\0')
            loop_status(l);
        n++;
    }
    closedir(d);
    return n;
}

static int in_parts(const struct part *parts, int n, unsigned ma, unsigned mi)
{
    for (int i = 0; i < n; i++)
        if (parts[i].major == ma && parts[i].minor == mi)
            return i;
    return -1;
}

static const struct bound_loop *loop_of(const struct bound_loop *loops, int nloops, const struct part *p)
{
    for (int i = 0; i < nloops; i++)
        if (loops[i].major == p->major && loops[i].minor == p->minor)
            return &loops[i];
    return NULL;
}

/* Whether two loop devices read overlapping bytes of one file (or a size 0, unknown, counts as overlapping). */
static int same_file_overlapping(const struct bound_loop *a, const struct bound_loop *b)
{
    int same = a->st.st_mode && b->st.st_mode ? a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino
                                              : strcmp(a->backing, b->backing) == 0;
    if (!same)
        return 0;
    if (!a->bytes || !b->bytes)
        return 1;
    return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* Adds a name of the device's blocks (unless known), why it is one in fmt. Returns the new count. */
static int add_part(struct part *parts, int n, const char *name, unsigned ma, unsigned mi, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int add_part(struct part *parts, int n, const char *name, unsigned ma, unsigned mi, const char *fmt, ...)
{
    if (n >= MAX_PARTS || in_parts(parts, n, ma, mi) >= 0)
        return n;
    snprintf(parts[n].name, sizeof(parts[n].name), "%.63s", name);
    parts[n].major = ma;
    parts[n].minor = mi;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(parts[n].why, sizeof(parts[n].why), fmt, ap);
    va_end(ap);
    return n + 1;
}

/* The device's whole disk when it is a partition ("sdb" for "sdb1"): 0 with its name and MAJ:MIN, else -1. */
static int whole_disk(const char *root, const struct sweep_device *dev, char *name, size_t len, unsigned *ma,
                      unsigned *mi)
{
    char path[PATH_MAX], real[PATH_MAX], text[64];
    snprintf(path, sizeof(path), "%s/sys/class/block/%s/partition", root, dev->name);
    if (access(path, F_OK))
        return -1;
    snprintf(path, sizeof(path), "%s/sys/class/block/%s", root, dev->name);
    if (!realpath(path, real))
        return -1;
    char *slash = strrchr(real, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(path, sizeof(path), "%.4000s/dev", real);
    if (read_small(path, text, sizeof(text)) || sscanf(text, "%u:%u", ma, mi) != 2)
        return -1;
    snprintf(name, len, "%.63s", base_name(real));
    return 0;
}

/* The device, its partitions, its whole disk and every loop device that reads the same blocks (on the same file
 * at overlapping offsets, or on one of these devices), to a fixed point: a loop on a loop alias is one too.
 * A loop device whose backing file lies on a filesystem of one of them uses the device: refused (-1, err). */
static int device_and_aliases(const char *root, const struct sweep_device *dev, struct part *parts, int *count,
                              char *err, size_t errlen)
{
    static struct bound_loop loops[256];
    int n = device_and_partitions(root, dev, parts);
    char name[64];
    unsigned ma, mi;
    if (whole_disk(root, dev, name, sizeof(name), &ma, &mi) == 0)
        n = add_part(parts, n, name, ma, mi, "the whole disk of %s", dev->name);
    int nloops = bound_loops(root, loops, 256);
    for (int grew = 1; grew;) {
        grew = 0;
        for (int l = 0; l < nloops; l++) {
            const struct bound_loop *lo = &loops[l];
            if (in_parts(parts, n, lo->major, lo->minor) >= 0)
                continue;
            int on = S_ISBLK(lo->st.st_mode) ? in_parts(parts, n, major(lo->st.st_rdev), minor(lo->st.st_rdev)) : -1;
            if (on >= 0) {
                n = add_part(parts, n, lo->name, lo->major, lo->minor, "a loop device on %s", parts[on].name);
                grew = 1;
                continue;
            }
            int file_on = S_ISREG(lo->st.st_mode) ? in_parts(parts, n, major(lo->st.st_dev), minor(lo->st.st_dev)) : -1;
            if (file_on >= 0) {
                char who[PATH_MAX + 160];
                return set_error(err, errlen, "%s's backing file %s lies on the filesystem of %s: detach it (losetup -d "
                                 "/dev/%s) if it is really scratch", lo->name, lo->backing,
                                 which(parts, file_on, who, sizeof(who)), lo->name);
            }
            for (int p = 0; p < n; p++) {
                const struct bound_loop *alias = loop_of(loops, nloops, &parts[p]);
                if (alias && same_file_overlapping(lo, alias)) {
                    n = add_part(parts, n, lo->name, lo->major, lo->minor, "attached to the same file %s",
                                 alias->backing);
                    grew = 1;
                    break;
                }
            }
        }
    }
    *count = n;
    return 0;
}

/* ==== Who holds a device ==== */

/* The first process other than this one (and its children) with MAJ:MIN open: 1 with "pid 123 (mkfs.ext4)" in
 * out, else 0. */
static int opened_by(unsigned ma, unsigned mi, char *out, size_t len)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    pid_t self = getpid();
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        char stat_text[512] = "";
        long ppid = 0;
        if (read_small(path, stat_text, sizeof(stat_text)) == 0) {
            const char *paren = strrchr(stat_text, ')');
            if (paren)
                sscanf(paren + 2, "%*c %ld", &ppid);
        }
        if (ppid == self)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        if (!fds)
            continue;
        struct dirent *f;
        while (!found && (f = readdir(fds))) {
            if (f->d_name[0] == '.')
                continue;
            char fd_path[PATH_MAX + 300];
            struct stat st;
            snprintf(fd_path, sizeof(fd_path), "%s/%s", path, f->d_name);
            if (stat(fd_path, &st) == 0 && S_ISBLK(st.st_mode) && major(st.st_rdev) == ma && minor(st.st_rdev) == mi) {
                char comm[64] = "?";
                snprintf(fd_path, sizeof(fd_path), "/proc/%ld/comm", pid);
                if (read_small(fd_path, comm, sizeof(comm)) == 0)
                    comm[strcspn(comm, "\n")] = '\0';
                snprintf(out, len, "pid %ld (%s)", pid, comm);
                found = 1;
            }
        }
        closedir(fds);
    }
    closedir(proc);
    return found;
}

/* A btrfs filesystem that has `name` among its devices, while mounted: 1 with where, else 0. */
static int btrfs_member(const char *name, char *out, size_t len)
{
    DIR *d = opendir("/sys/fs/btrfs");
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "features") == 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/sys/fs/btrfs/%.64s/devices/%.63s", e->d_name, name);
        if (access(path, F_OK))
            continue;
        snprintf(out, len, "a device of the btrfs filesystem %.64s", e->d_name);
        found = 1;
        /* where it is mounted: a mount whose source is one of its devices */
        FILE *fp = fopen("/proc/self/mountinfo", "r");
        char line[8192], target[4096], fstype[64], source[4096];
        while (fp && fgets(line, sizeof(line), fp)) {
            const char *dash = strstr(line, " - ");
            if (!dash || sscanf(line, "%*d %*d %*s %*s %4095s", target) != 1 ||
                sscanf(dash + 3, "%63s %4095s", fstype, source) != 2 || strcmp(fstype, "btrfs") != 0)
                continue;
            unescape(target);
            snprintf(path, sizeof(path), "/sys/fs/btrfs/%.64s/devices/%.63s", e->d_name, base_name(source));
            if (access(path, F_OK) == 0) {
                snprintf(out, len, "a device of the btrfs filesystem mounted on %.2048s (through %.1024s)", target, source);
                break;
            }
        }
        if (fp)
            fclose(fp);
    }
    closedir(d);
    return found;
}

/* /dev/NAME, or the path the caller opened for parts[0]. */
static void node_of(const struct part *p, int i, const char *device_path, char *out, size_t len)
{
    if (i == 0 && device_path)
        snprintf(out, len, "%s", device_path);
    else
        snprintf(out, len, "/dev/%.63s", p->name);
}

/* Every name must open exclusively (nothing mounted, swapped on, assembled or claimed holds it) and no other
 * process may have it open. Only on the real system (root ""): fixture trees have no devices. */
static int check_open(const struct part *parts, int n, const char *device_path, int probes, char *err,
                      size_t errlen)
{
    char who[PATH_MAX + 160], node[PATH_MAX], holder[PATH_MAX + 200];
    for (int i = 0; i < n; i++) {
        node_of(&parts[i], i, device_path, node, sizeof(node));
        struct stat st;
        if (stat(node, &st) || !S_ISBLK(st.st_mode) || major(st.st_rdev) != parts[i].major ||
            minor(st.st_rdev) != parts[i].minor)
            continue; /* no such node here: the other checks are all there is */
        int fd = (probes & (i == 0 ? SWEEP_PROBE_DEVICE : SWEEP_PROBE_ALIASES))
                     ? open(node, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK)
                     : -2;
        if (fd >= 0) {
            close(fd);
        } else if (fd == -1 && errno == EBUSY) {
            if (btrfs_member(parts[i].name, holder, sizeof(holder)))
                return set_error(err, errlen, "%s is %s: unmount it first if it is really scratch",
                                 which(parts, i, who, sizeof(who)), holder);
            if (opened_by(parts[i].major, parts[i].minor, holder, sizeof(holder)))
                return set_error(err, errlen, "%s is held open exclusively, by %s among others: stop it first if it "
                                 "is really scratch", which(parts, i, who, sizeof(who)), holder);
            return set_error(err, errlen, "%s is held open exclusively (mounted in another mount namespace, "
                             "assembled or claimed by the kernel): free it first if it is really scratch",
                             which(parts, i, who, sizeof(who)));
        }
        if ((probes & SWEEP_PROBE_PROCESSES) && opened_by(parts[i].major, parts[i].minor, holder, sizeof(holder)))
            return set_error(err, errlen, "%s is open by %s: stop it first if it is really scratch",
                             which(parts, i, who, sizeof(who)), holder);
    }
    return 0;
}

int sweep_check_in_use(const char *root, const struct sweep_device *dev, const char *device_path,
                       const char *mountpoint, int probes, char *err, size_t errlen)
{
    static struct part parts[MAX_PARTS];
    int n = 0;
    if (device_and_aliases(root, dev, parts, &n, err, errlen) ||
        check_mounts(root, parts, n, mountpoint, err, errlen) || check_swaps(root, parts, n, err, errlen) ||
        check_holders(root, parts, n, err, errlen))
        return -1;
    if (root[0] == '\0' && probes && check_open(parts, n, device_path, probes, err, errlen))
        return -1;
    return 0;
}

int sweep_claim_aliases(const struct sweep_device *dev, int *fds, int max, char *err, size_t errlen)
{
    static struct part parts[MAX_PARTS];
    int n = 0, claimed = 0;
    if (device_and_aliases("", dev, parts, &n, err, errlen))
        return -1;
    char node[PATH_MAX], who[PATH_MAX + 160];
    for (int i = 0; i < n && claimed < max; i++) {
        /* the device and its partitions are the sweep's to mkfs and mount; a whole disk claimed would stop its
         * partition's mount */
        if (i == 0 || strcmp(parts[i].why, "its partition") == 0 || strncmp(parts[i].why, "the whole disk", 14) == 0)
            continue;
        node_of(&parts[i], i, NULL, node, sizeof(node));
        struct stat st;
        if (stat(node, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(parts[i].major, parts[i].minor))
            continue;
        int fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            for (int k = 0; k < claimed; k++)
                close(fds[k]);
            return set_error(err, errlen, "can't hold %s for the study: %s", which(parts, i, who, sizeof(who)),
                             strerror(errno));
        }
        fds[claimed++] = fd;
    }
    return claimed;
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

int sweep_mounted_device(const char *root, const char *path, unsigned *major_out, unsigned *minor_out)
{
    char file[PATH_MAX];
    snprintf(file, sizeof(file), "%s/proc/self/mountinfo", root);
    FILE *fp = fopen(file, "r");
    if (!fp)
        return 0;
    char line[8192], target[4096];
    unsigned ma, mi;
    int found = 0;
    while (fgets(line, sizeof(line), fp)) {
        if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &ma, &mi, target) != 3)
            continue;
        unescape(target);
        if (strcmp(target, path) == 0) {
            *major_out = ma;
            *minor_out = mi;
            found = 1;
        }
    }
    fclose(fp);
    return found;
}
