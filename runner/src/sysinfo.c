/* sysinfo.c -- see sysinfo.h. */
#include "sysinfo.h"

#include "evidence.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ==== Small file helpers ==== */

/* Reads the first line of path into buf without its newline. 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
    FILE *fp = fopen(path, "re");
    if (!fp)
        return -1;
    int rc = fgets(buf, (int)len, fp) ? 0 : -1;
    fclose(fp);
    if (rc == 0)
        buf[strcspn(buf, "\n")] = '\0';
    return rc;
}

static int64_t read_int(const char *path)
{
    char buf[64];
    if (read_line(path, buf, sizeof(buf)))
        return -1;
    char *end;
    long long v = strtoll(buf, &end, 10);
    return end == buf ? -1 : v;
}

/* Copies src into dst (len bytes), truncating. */
static void copy(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        n = len - 1;
    memmove(dst, src, n);
    dst[n] = '\0';
}

/* Decodes mountinfo's octal escapes (\040 for space etc.) in place. */
static void unescape_octal(char *s)
{
    char *out = s;
    for (char *in = s; *in; in++) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' &&
            in[3] >= '0' && in[3] <= '7') {
            *out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
            in += 3;
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
}

/* 1 if mount point mp contains dir (path-component prefix). */
static int path_under(const char *dir, const char *mp)
{
    size_t n = strlen(mp);
    if (strcmp(mp, "/") == 0)
        return dir[0] == '/';
    return strncmp(dir, mp, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/* ==== /proc/self/mountinfo ==== */

int sysinfo_read_mountinfo(const char *mountinfo_path, unsigned major, unsigned minor,
                           const char *dir, struct mount_info *out)
{
    FILE *fp = fopen(mountinfo_path, "re");
    char line[8192];
    size_t best_len = 0;
    memset(out, 0, sizeof(*out));
    if (!fp)
        return -1;
    while (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, "\n")] = '\0';
        /* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
        char *field[8] = {0};
        char *save = NULL;
        int n = 0;
        char *tok;
        for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
            field[n++] = tok;
        if (n < 6)
            continue;
        while (tok && strcmp(tok, "-") != 0)
            tok = strtok_r(NULL, " ", &save);
        if (!tok)
            continue;
        char *fstype = strtok_r(NULL, " ", &save);
        char *source = strtok_r(NULL, " ", &save);
        char *super = strtok_r(NULL, " ", &save);
        unsigned ma, mi;
        if (!fstype || sscanf(field[2], "%u:%u", &ma, &mi) != 2)
            continue;
        if (major != SYSINFO_ANY_DEVICE && (ma != major || mi != minor))
            continue;
        unescape_octal(field[4]);
        if (dir && !path_under(dir, field[4]))
            continue;
        size_t len = strlen(field[4]);
        if (out->found && len < best_len)
            continue;
        best_len = len;
        out->found = 1;
        out->major = ma;
        out->minor = mi;
        unescape_octal(field[3]);
        copy(out->root, sizeof(out->root), field[3]);
        copy(out->mount_point, sizeof(out->mount_point), field[4]);
        copy(out->options, sizeof(out->options), field[5]);
        copy(out->fs_type, sizeof(out->fs_type), fstype);
        if (source) {
            unescape_octal(source);
            copy(out->source, sizeof(out->source), source);
        }
        copy(out->super_options, sizeof(out->super_options), super ? super : "");
    }
    fclose(fp);
    return out->found ? 0 : -1;
}

/* ==== /proc/mdstat ==== */

int sysinfo_read_mdstat(const char *path, const char *md_name, struct md_info *out)
{
    FILE *fp = fopen(path, "re");
    char line[4096];
    int in_entry = 0;
    memset(out, 0, sizeof(*out));
    out->chunk_bytes = -1;
    out->raid_disks = -1;
    out->degraded = -1;
    if (!fp)
        return -1;
    while (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (!isspace((unsigned char)line[0])) {
            if (in_entry)
                break; /* the next entry starts */
            /* "md0 : active raid5 sdd1[3] sdc1[1] sdb1[0]" */
            char *save = NULL;
            char *name = strtok_r(line, " ", &save);
            char *colon = strtok_r(NULL, " ", &save);
            if (!name || !colon || strcmp(colon, ":") != 0 || strcmp(name, md_name) != 0)
                continue;
            in_entry = 1;
            out->found = 1;
            copy(out->name, sizeof(out->name), name);
            char *state = strtok_r(NULL, " ", &save);
            if (state)
                copy(out->state, sizeof(out->state), state);
            for (char *tok = strtok_r(NULL, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                if (*tok == '(')
                    continue; /* "(auto-read-only)" */
                char *br = strchr(tok, '[');
                if (!br) {
                    if (!out->level[0])
                        copy(out->level, sizeof(out->level), tok);
                    continue;
                }
                /* "sdb1[0]", "sdc1[2](F)" faulty, "sdd1[3](S)" spare, "(W)" write-mostly */
                if (out->device_count < SYSINFO_MAX_MEMBERS) {
                    struct md_device *dev = &out->devices[out->device_count++];
                    size_t n = (size_t)(br - tok);
                    if (n >= sizeof(dev->name))
                        n = sizeof(dev->name) - 1;
                    memcpy(dev->name, tok, n);
                    dev->name[n] = '\0';
                    dev->slot = -1;
                    int faulty = strstr(br, "(F)") != NULL, spare = strstr(br, "(S)") != NULL;
                    copy(dev->role, sizeof(dev->role), faulty ? "faulty" : spare ? "spare" : "member");
                    copy(dev->state, sizeof(dev->state), faulty ? "faulty" : spare ? "spare" : "");
                    if (!faulty && !spare && out->member_count < SYSINFO_MAX_MEMBERS)
                        copy(out->members[out->member_count++], sizeof(out->members[0]), dev->name);
                }
            }
            continue;
        }
        if (!in_entry)
            continue;
        /* the status line: "... 512k chunk, algorithm 2 [3/3] [UUU]"; the
         * bitmap line ("bitmap: 0/8 pages [0KB], 65536KB chunk") is not it */
        if (strstr(line, "bitmap:"))
            continue;
        char *ch = strstr(line, " chunk");
        if (ch && out->chunk_bytes < 0) {
            char *p = ch;
            while (p > line && !isspace((unsigned char)p[-1]))
                p--;
            char unit = 0;
            long long v;
            if (sscanf(p, "%lld%c", &v, &unit) == 2) {
                unit = (char)tolower((unsigned char)unit);
                out->chunk_bytes = v * (unit == 'k' ? 1024LL : unit == 'm' ? 1048576LL : 1LL);
            }
        }
        char *sq = strchr(line, '[');
        while (sq && out->raid_disks < 0) {
            int total, active;
            if (sscanf(sq, "[%d/%d]", &total, &active) == 2) {
                out->raid_disks = total;
                out->degraded = total - active;
            }
            sq = strchr(sq + 1, '[');
        }
        /* "[=>....]  recovery =  7.5% (...)", "resync=DELAYED": the running sync and how far it is */
        static const char *const actions[][2] = {
            {"recovery", "recover"}, {"resync", "resync"}, {"check", "check"}, {"repair", "repair"}, {"reshape", "reshape"},
        };
        for (size_t k = 0; k < sizeof(actions) / sizeof(actions[0]) && !out->sync_action[0]; k++) {
            char *at = strstr(line, actions[k][0]);
            if (!at)
                continue;
            char *eq = at + strlen(actions[k][0]);
            while (*eq == ' ')
                eq++;
            if (*eq != '=')
                continue;
            eq++;
            while (*eq == ' ')
                eq++;
            copy(out->sync_action, sizeof(out->sync_action), actions[k][1]);
            size_t n = strcspn(eq, " ");
            char done[64];
            snprintf(done, sizeof(done), "%.*s", (int)(n < 63 ? n : 63), eq);
            copy(out->sync_completed, sizeof(out->sync_completed), done);
        }
    }
    fclose(fp);
    if (!out->found)
        return -1;
    if (!out->level[0])
        copy(out->level, sizeof(out->level), "unknown");
    return 0;
}

/* ==== sysfs ==== */

/* The sysfs directory of the md array that is `real`, its disk (real is a partition of md) or under it
 * (real is a dm device, e.g. LVM, whose slaves lead to md). Returns 0 with it in md_dir, or -1. */
static int find_md(const char *real, char *md_dir, size_t len, int depth)
{
    char file[PATH_MAX + 64], parent[PATH_MAX];
    if (depth > 6)
        return -1;
    snprintf(file, sizeof(file), "%s/md/level", real);
    if (access(file, F_OK) == 0) {
        copy(md_dir, len, real);
        return 0;
    }
    snprintf(file, sizeof(file), "%s/partition", real);
    if (access(file, F_OK) == 0) {
        copy(parent, sizeof(parent), real);
        char *slash = strrchr(parent, '/');
        if (slash) {
            *slash = '\0';
            return find_md(parent, md_dir, len, depth + 1);
        }
        return -1;
    }
    snprintf(file, sizeof(file), "%s/slaves", real);
    DIR *d = opendir(file);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = -1;
    while (rc && (e = readdir(d)) != NULL) {
        char link[PATH_MAX + 400], target[PATH_MAX];
        if (e->d_name[0] == '.')
            continue;
        snprintf(link, sizeof(link), "%s/%s", file, e->d_name);
        if (realpath(link, target))
            rc = find_md(target, md_dir, len, depth + 1);
    }
    closedir(d);
    return rc;
}

/* qsort comparators: each takes pointers to two elements and compares them through their own type. */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct md_device *)a)->name, ((const struct md_device *)b)->name);
}

/* For an array of char[N] names: each element is the name itself. */
static int by_member_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The slot whose md/rdN link points at dev_entry ("dev-sdb1") in the md array at dir, or -1. The kernel
 * makes rdN for every slot that holds a device, so this answers when a dev-* has no slot file. */
static int slot_from_links(const char *dir, const char *dev_entry)
{
    char link[PATH_MAX + 64], target[256];
    for (int n = 0; n < SYSINFO_MAX_MEMBERS; n++) {
        snprintf(link, sizeof(link), "%s/md/rd%d", dir, n);
        ssize_t len = readlink(link, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        const char *base = strrchr(target, '/');
        if (strcmp(base ? base + 1 : target, dev_entry) == 0)
            return n;
    }
    return -1;
}

/* An md array's facts from its sysfs directory. */
static void read_md(const char *dir, struct md_info *md)
{
    char file[PATH_MAX + 400], line[256];
    const char *base = strrchr(dir, '/');
    memset(md, 0, sizeof(*md));
    md->chunk_bytes = -1;
    md->raid_disks = -1;
    md->degraded = -1;
    md->found = 1;
    copy(md->name, sizeof(md->name), base ? base + 1 : dir);
    snprintf(file, sizeof(file), "%s/md/level", dir);
    if (read_line(file, line, sizeof(line)) == 0)
        copy(md->level, sizeof(md->level), line);
    snprintf(file, sizeof(file), "%s/md/chunk_size", dir);
    int64_t chunk = read_int(file);
    md->chunk_bytes = chunk > 0 ? chunk : -1;
    snprintf(file, sizeof(file), "%s/md/raid_disks", dir);
    md->raid_disks = (int)read_int(file);
    snprintf(file, sizeof(file), "%s/md/degraded", dir);
    md->degraded = (int)read_int(file);
    snprintf(file, sizeof(file), "%s/md/array_state", dir);
    if (read_line(file, line, sizeof(line)) == 0)
        copy(md->state, sizeof(md->state), line);
    snprintf(file, sizeof(file), "%s/md/sync_action", dir);
    if (read_line(file, line, sizeof(line)) == 0)
        copy(md->sync_action, sizeof(md->sync_action), line);
    snprintf(file, sizeof(file), "%s/md/sync_completed", dir);
    if (read_line(file, line, sizeof(line)) == 0 && strcmp(line, "none") != 0) /* "none": no sync running */
        copy(md->sync_completed, sizeof(md->sync_completed), line);
    /* md/dev-<name>/: every device of the array with its state and slot ("none" for a spare) */
    snprintf(file, sizeof(file), "%s/md", dir);
    DIR *d = opendir(file);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && md->device_count < SYSINFO_MAX_MEMBERS) {
        if (strncmp(e->d_name, "dev-", 4) != 0)
            continue;
        struct md_device *dev = &md->devices[md->device_count++];
        copy(dev->name, sizeof(dev->name), e->d_name + 4);
        snprintf(file, sizeof(file), "%s/md/%s/state", dir, e->d_name);
        if (read_line(file, line, sizeof(line)) == 0)
            copy(dev->state, sizeof(dev->state), line);
        snprintf(file, sizeof(file), "%s/md/%s/slot", dir, e->d_name);
        int slot_known = read_line(file, line, sizeof(line)) == 0;
        dev->slot = (int)read_int(file); /* "none" does not parse: -1 */
        if (!slot_known) { /* no slot file: the kernel's md/rdN link names the device in slot N */
            dev->slot = slot_from_links(dir, e->d_name);
            slot_known = dev->slot >= 0;
        }
        /* Holding a slot makes a member even while it is rebuilt (state "spare", sync_action recover),
         * as mdadm's "spare rebuilding" keeps its RaidDevice number; without slot facts, in_sync decides. */
        const char *role = "spare";
        if (strstr(dev->state, "faulty"))
            role = "faulty";
        else if (dev->slot >= 0 || (!slot_known && strstr(dev->state, "in_sync")))
            role = "member";
        copy(dev->role, sizeof(dev->role), role);
    }
    if (d)
        closedir(d);
    if (md->device_count) { /* readdir order is arbitrary: sort for stable output */
        qsort(md->devices, (size_t)md->device_count, sizeof(md->devices[0]), by_name);
        for (int i = 0; i < md->device_count; i++)
            if (strcmp(md->devices[i].role, "member") == 0)
                copy(md->members[md->member_count++], sizeof(md->members[0]), md->devices[i].name);
        return;
    }
    snprintf(file, sizeof(file), "%s/slaves", dir);
    d = opendir(file);
    if (!d)
        return;
    char names[SYSINFO_MAX_MEMBERS][32];
    int n = 0;
    while ((e = readdir(d)) != NULL && n < SYSINFO_MAX_MEMBERS) {
        if (e->d_name[0] == '.')
            continue;
        copy(names[n++], sizeof(names[0]), e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), by_member_name);
    for (int i = 0; i < n; i++)
        copy(md->members[i], sizeof(md->members[i]), names[i]);
    md->member_count = n;
}

int sysinfo_read_block(const char *sysfs_root, unsigned major, unsigned minor, struct block_info *out)
{
    char path[PATH_MAX], real[PATH_MAX], disk[PATH_MAX], file[PATH_MAX + 64];
    memset(out, 0, sizeof(*out));
    out->rotational = -1;
    out->size_bytes = -1;
    out->md.chunk_bytes = -1;
    out->md.raid_disks = -1;
    snprintf(path, sizeof(path), "%s/dev/block/%u:%u", sysfs_root, major, minor);
    if (!realpath(path, real))
        return -1;
    out->found = 1;
    const char *base = strrchr(real, '/');
    copy(out->name, sizeof(out->name), base ? base + 1 : real);
    copy(disk, sizeof(disk), real);
    snprintf(file, sizeof(file), "%s/partition", real);
    if (access(file, F_OK) == 0) {
        char *slash = strrchr(disk, '/');
        if (slash)
            *slash = '\0';
    }
    base = strrchr(disk, '/');
    copy(out->disk, sizeof(out->disk), base ? base + 1 : disk);
    snprintf(file, sizeof(file), "%s/size", real);
    int64_t sectors = read_int(file);
    if (sectors >= 0)
        out->size_bytes = sectors * 512;
    struct disk_settings q;
    sysinfo_read_queue(disk, &q);
    copy(out->write_cache, sizeof(out->write_cache), q.write_cache);
    out->nr_requests = q.nr_requests;
    out->read_ahead_kb = q.read_ahead_kb;
    snprintf(file, sizeof(file), "%s/queue/scheduler", disk);
    char line[256];
    if (read_line(file, line, sizeof(line)) == 0) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) {
            *close = '\0';
            copy(out->scheduler, sizeof(out->scheduler), open + 1);
        } else {
            copy(out->scheduler, sizeof(out->scheduler), line); /* "none" alone */
        }
    }
    snprintf(file, sizeof(file), "%s/queue/rotational", disk);
    int64_t rot = read_int(file);
    out->rotational = rot < 0 ? -1 : (int)rot;

    char md_dir[PATH_MAX];
    if (find_md(real, md_dir, sizeof(md_dir), 0) == 0)
        read_md(md_dir, &out->md);
    return 0;
}

void sysinfo_read_queue(const char *disk_dir, struct disk_settings *out)
{
    char file[PATH_MAX + 64], line[256];
    const char *base = strrchr(disk_dir, '/');
    memset(out, 0, sizeof(*out));
    copy(out->name, sizeof(out->name), base ? base + 1 : disk_dir);
    snprintf(file, sizeof(file), "%s/queue/scheduler", disk_dir);
    if (read_line(file, line, sizeof(line)) == 0) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) {
            *close = '\0';
            copy(out->scheduler, sizeof(out->scheduler), open + 1);
        } else {
            copy(out->scheduler, sizeof(out->scheduler), line);
        }
    }
    snprintf(file, sizeof(file), "%s/queue/rotational", disk_dir);
    int64_t rot = read_int(file);
    out->rotational = rot < 0 ? -1 : (int)rot;
    snprintf(file, sizeof(file), "%s/queue/write_cache", disk_dir);
    if (read_line(file, line, sizeof(line)) == 0)
        copy(out->write_cache, sizeof(out->write_cache), line);
    snprintf(file, sizeof(file), "%s/queue/nr_requests", disk_dir);
    out->nr_requests = read_int(file);
    snprintf(file, sizeof(file), "%s/queue/read_ahead_kb", disk_dir);
    out->read_ahead_kb = read_int(file);
}

/* ==== Everything ==== */

static void read_os_name(char *out, size_t len)
{
    FILE *fp = fopen("/etc/os-release", "re");
    char line[512];
    out[0] = '\0';
    if (!fp)
        return;
    while (fgets(line, sizeof(line), fp)) {
        if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"') {
                v++;
                char *q = strrchr(v, '"');
                if (q)
                    *q = '\0';
            }
            copy(out, len, v);
            break;
        }
    }
    fclose(fp);
}

static void read_cpu_model(char *out, size_t len)
{
    FILE *fp = fopen("/proc/cpuinfo", "re");
    char line[512];
    out[0] = '\0';
    if (!fp)
        return;
    while (fgets(line, sizeof(line), fp)) {
        /* x86 "model name", arm64 often only "CPU part"; take the first we know */
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0 ||
            strncmp(line, "cpu model", 9) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ' || *v == '\t')
                    v++;
                v[strcspn(v, "\n")] = '\0';
                copy(out, len, v);
                break;
            }
        }
    }
    fclose(fp);
}

void sysinfo_collect(struct system_info *si, const char *dir, int dirfd)
{
    struct utsname u;
    memset(si, 0, sizeof(*si));
    si->fs_total_bytes = si->fs_free_bytes = -1;
    if (uname(&u) == 0) {
        copy(si->hostname, sizeof(si->hostname), u.nodename);
        copy(si->kernel_name, sizeof(si->kernel_name), u.sysname);
        copy(si->kernel_release, sizeof(si->kernel_release), u.release);
        copy(si->kernel_version, sizeof(si->kernel_version), u.version);
        copy(si->machine, sizeof(si->machine), u.machine);
    }
    read_os_name(si->os_name, sizeof(si->os_name));
    read_cpu_model(si->cpu_model, sizeof(si->cpu_model));
    si->cpu_count_online = sysconf(_SC_NPROCESSORS_ONLN);
    si->cpu_count_configured = sysconf(_SC_NPROCESSORS_CONF);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    si->ram_bytes = (pages > 0 && page > 0) ? (int64_t)pages * page : -1;
    if (!realpath(dir, si->dir))
        copy(si->dir, sizeof(si->dir), dir);
    struct statvfs sv;
    if (fstatvfs(dirfd, &sv) == 0) {
        si->fs_total_bytes = (int64_t)sv.f_blocks * (int64_t)sv.f_frsize;
        si->fs_free_bytes = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
    }
    struct stat st;
    if (fstat(dirfd, &st) == 0) {
        unsigned ma = major(st.st_dev), mi = minor(st.st_dev);
        if (sysinfo_read_mountinfo("/proc/self/mountinfo", ma, mi, si->dir, &si->mount))
            sysinfo_read_mountinfo("/proc/self/mountinfo", SYSINFO_ANY_DEVICE, 0, si->dir, &si->mount);
        /* the device: the file's own, or (btrfs, whose st_dev is anonymous) the mount source's */
        struct stat src;
        if (access("/sys/dev/block", F_OK) == 0 && si->mount.found && si->mount.source[0] == '/' &&
            stat(si->mount.source, &src) == 0 && S_ISBLK(src.st_mode)) {
            char probe[64];
            snprintf(probe, sizeof(probe), "/sys/dev/block/%u:%u", ma, mi);
            if (access(probe, F_OK) != 0) {
                ma = major(src.st_rdev);
                mi = minor(src.st_rdev);
            }
        }
        if (sysinfo_read_block("/sys", ma, mi, &si->block) == 0) {
            char names[16][EVIDENCE_NAME_LEN];
            int n = evidence_find_disks("/sys", si->block.name, names, 16, si->block.loop_backing_file,
                                        sizeof(si->block.loop_backing_file));
            for (int i = 0; i < n; i++) {
                char dir[PATH_MAX];
                snprintf(dir, sizeof(dir), "/sys/class/block/%s", names[i]);
                sysinfo_read_queue(dir, &si->block.disks[i]);
                copy(si->block.disks[i].name, sizeof(si->block.disks[i].name), names[i]);
            }
            si->block.disk_count = n;
        }
        if (si->block.found && si->block.md.found) {
            struct md_info fromstat;
            if (sysinfo_read_mdstat("/proc/mdstat", si->block.md.name, &fromstat) == 0) {
                struct md_info *md = &si->block.md;
                if (md->chunk_bytes < 0)
                    md->chunk_bytes = fromstat.chunk_bytes;
                if (md->raid_disks < 0)
                    md->raid_disks = fromstat.raid_disks;
                if (md->degraded < 0)
                    md->degraded = fromstat.degraded;
                if (!md->sync_action[0])
                    copy(md->sync_action, sizeof(md->sync_action), fromstat.sync_action);
                if (!md->sync_completed[0])
                    copy(md->sync_completed, sizeof(md->sync_completed), fromstat.sync_completed);
                if (!md->member_count && !md->device_count)
                    *md = fromstat, md->found = 1;
            }
        }
    }
    /* the throttles that matter are on the filesystem's device and the ones below it */
    struct cgroup_device chain[EVIDENCE_MAX_DISKS];
    int chain_count = si->block.found ? evidence_find_chain("/sys", si->block.name, chain, EVIDENCE_MAX_DISKS) : 0;
    cgroup_read(&si->cgroup, "", chain, chain_count);
}
