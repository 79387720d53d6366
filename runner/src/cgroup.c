/* cgroup.c -- see cgroup.h. */
#include "cgroup.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_FILE_BYTES 65536
/* v1 writes "no limit" as the largest page-aligned counter (9223372036854771712); anything this big is none */
#define CGROUP_V1_UNLIMITED (UINT64_C(1) << 62)

/* ==== Small helpers ==== */

/* Reads path (at most len - 1 bytes) into buf. Returns 0, or -1 when it cannot be read. With open and
 * read, not stdio: fopen's fstat would add a stat call per file to the runner's start, which the strace
 * comparison with bonnie++ counts. */
static int slurp(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    ssize_t n;
    while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    buf[got] = '\0';
    return 0;
}

/* Copies a then b into dst (len bytes), truncating. */
static void join(char *dst, size_t len, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na >= len)
        na = len - 1;
    if (nb >= len - na)
        nb = len - na - 1;
    memmove(dst, a, na);
    memmove(dst + na, b, nb);
    dst[na + nb] = '\0';
}

static void copy(char *dst, size_t len, const char *src)
{
    join(dst, len, src, "");
}

/* 1 when the comma-separated list holds token. */
static int has_token(const char *list, const char *token)
{
    size_t n = strlen(token);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, token, n) == 0)
            return 1;
        p = p[len] ? p + len + 1 : NULL;
    }
    return 0;
}

/* Decodes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_octal(char *s)
{
    char *out = s;
    for (char *in = s; *in; in++) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
            in[3] <= '7') {
            *out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
            in += 3;
        } else {
            *out++ = *in;
        }
    }
    *out = '\0';
}

/* A number, or "max" (v2's no limit). Returns 0 with *out set (CGROUP_NONE for max), or -1. */
static int parse_limit(const char *text, uint64_t *out)
{
    while (*text == ' ')
        text++;
    if (strncmp(text, "max", 3) == 0) {
        *out = CGROUP_NONE;
        return 0;
    }
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text)
        return -1;
    *out = v;
    return 0;
}

/* ==== Where the runner's cgroups are ==== */

/* The directory of the runner's cgroup in one hierarchy, and the hierarchy's mount point (the
 * highest directory an ancestor walk may reach). controller NULL: the v2 hierarchy. */
struct hierarchy {
    int found;
    char path[PATH_MAX];            /* as /proc/self/cgroup names it */
    char dir[PATH_MAX];             /* root prefix + mount point + path below the mount's root */
    char top[PATH_MAX];             /* root prefix + mount point */
};

/* The /proc/self/cgroup line for controller (v1), or the "0::" line (controller NULL), into path. */
static int self_path(const char *text, const char *controller, char *path, size_t len)
{
    for (const char *line = text; line && *line;) {
        const char *next = strchr(line, '\n');
        size_t n = next ? (size_t)(next - line) : strlen(line);
        char buf[PATH_MAX + 256];
        if (n < sizeof(buf)) {
            memcpy(buf, line, n);
            buf[n] = '\0';
            char *c1 = strchr(buf, ':');
            char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (c2) {
                *c1 = *c2 = '\0';
                int match = controller ? has_token(c1 + 1, controller) : (strcmp(buf, "0") == 0 && !c1[1]);
                if (match) {
                    copy(path, len, c2 + 1);
                    return 0;
                }
            }
        }
        line = next ? next + 1 : NULL;
    }
    return -1;
}

/* The mount of controller's v1 hierarchy (or of cgroup2 when controller is NULL) in mountinfo text:
 * its root (the subtree mounted) and mount point. */
static int cgroup_mount(const char *text, const char *controller, char *root, char *point)
{
    for (const char *line = text; line && *line;) {
        const char *next = strchr(line, '\n');
        size_t n = next ? (size_t)(next - line) : strlen(line);
        char buf[3 * PATH_MAX];
        if (n < sizeof(buf)) {
            memcpy(buf, line, n);
            buf[n] = '\0';
            char r[PATH_MAX], p[PATH_MAX], type[64], source[PATH_MAX], super[1024];
            const char *sep = strstr(buf, " - ");
            if (sep && sscanf(buf, "%*s %*s %*s %4095s %4095s", r, p) == 2 &&
                sscanf(sep + 3, "%63s %4095s %1023s", type, source, super) == 3) {
                int match = controller ? strcmp(type, "cgroup") == 0 && has_token(super, controller)
                                       : strcmp(type, "cgroup2") == 0;
                if (match) {
                    unescape_octal(r);
                    unescape_octal(p);
                    strcpy(root, r);
                    strcpy(point, p);
                    return 0;
                }
            }
        }
        line = next ? next + 1 : NULL;
    }
    return -1;
}

static void find_hierarchy(struct hierarchy *h, const char *root, const char *self, const char *mounts,
                           const char *controller)
{
    char mroot[PATH_MAX], point[PATH_MAX];
    memset(h, 0, sizeof(*h));
    if (self_path(self, controller, h->path, sizeof(h->path)) || cgroup_mount(mounts, controller, mroot, point))
        return;
    /* a mount of a subtree (a container's): the path below the subtree's root */
    const char *below = h->path;
    size_t rn = strlen(mroot);
    if (strcmp(mroot, "/") != 0 && strncmp(below, mroot, rn) == 0 && (below[rn] == '/' || below[rn] == '\0'))
        below += rn;
    if (strcmp(below, "/") == 0)
        below = "";
    join(h->top, sizeof(h->top), root, strcmp(point, "/") == 0 ? "" : point);
    join(h->dir, sizeof(h->dir), h->top, below);
    h->found = 1;
}

/* Moves dir one level up, never above top. Returns 0, or -1 when dir is top already. */
static int parent_dir(char *dir, const char *top)
{
    if (strlen(dir) <= strlen(top))
        return -1;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (strlen(dir) < strlen(top))
        strcpy(dir, top);
    return 0;
}

/* ==== Memory and CPU ==== */

/* The smallest of the files named in `files` (a NULL-terminated list) from h's cgroup up to the root. */
static void read_memory(struct cgroup_info *cg, const struct hierarchy *h, const char *const files[])
{
    if (!h->found)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64], buf[128];
    copy(dir, sizeof(dir), h->dir);
    do {
        for (int i = 0; files[i]; i++) {
            uint64_t v;
            snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
            if (slurp(path, buf, sizeof(buf)) || parse_limit(buf, &v))
                continue;
            if (v >= CGROUP_V1_UNLIMITED)
                v = CGROUP_NONE;
            if (v < cg->memory_limit_bytes) {
                cg->memory_limit_bytes = v;
                copy(cg->memory_limit_from, sizeof(cg->memory_limit_from), path);
            }
        }
    } while (parent_dir(dir, h->top) == 0);
}

/* Keeps quota/period when it is tighter than the one found so far. */
static void keep_quota(struct cgroup_info *cg, int64_t quota, int64_t period, const char *from, const char *dir)
{
    if (quota <= 0 || period <= 0)
        return;
    if (cg->cpu_quota_us > 0 &&
        (double)quota / (double)period >= (double)cg->cpu_quota_us / (double)cg->cpu_period_us)
        return;
    cg->cpu_quota_us = quota;
    cg->cpu_period_us = period;
    copy(cg->cpu_quota_from, sizeof(cg->cpu_quota_from), from);
    join(cg->cpu_stat_path, sizeof(cg->cpu_stat_path), dir, "/cpu.stat");
}

static void read_cpu_v1(struct cgroup_info *cg, const struct hierarchy *h)
{
    if (!h->found)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64], buf[128];
    copy(dir, sizeof(dir), h->dir);
    do {
        snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
        if (slurp(path, buf, sizeof(buf)))
            continue;
        int64_t period = strtoll(buf, NULL, 10);
        snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
        if (slurp(path, buf, sizeof(buf)))
            continue;
        keep_quota(cg, strtoll(buf, NULL, 10), period, path, dir);
    } while (parent_dir(dir, h->top) == 0);
}

static void read_cpu_v2(struct cgroup_info *cg, const struct hierarchy *h)
{
    if (!h->found)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64], buf[128];
    copy(dir, sizeof(dir), h->dir);
    do {
        snprintf(path, sizeof(path), "%s/cpu.max", dir);
        uint64_t quota;
        if (slurp(path, buf, sizeof(buf)) || parse_limit(buf, &quota) || quota == CGROUP_NONE)
            continue;
        const char *space = strchr(buf, ' ');
        keep_quota(cg, (int64_t)quota, space ? strtoll(space + 1, NULL, 10) : 100000, path, dir);
    } while (parent_dir(dir, h->top) == 0);
}

/* ==== I/O throttles ==== */

/* The limit entry for dev, made when missing (NULL when the table is full). */
static struct cgroup_io_limit *io_limit_for(struct cgroup_info *cg, const struct cgroup_device *dev)
{
    for (int i = 0; i < cg->io_limit_count; i++)
        if (cg->io_limits[i].dev.major == dev->major && cg->io_limits[i].dev.minor == dev->minor)
            return &cg->io_limits[i];
    if (cg->io_limit_count >= CGROUP_MAX_IO_LIMITS)
        return NULL;
    struct cgroup_io_limit *l = &cg->io_limits[cg->io_limit_count++];
    memset(l, 0, sizeof(*l));
    l->dev = *dev;
    l->read_bps = l->write_bps = l->read_iops = l->write_iops = CGROUP_NONE;
    return l;
}

/* Lowers *slot to v; when v is the device's tightest bytes-per-second limit so far, dir becomes the
 * cgroup whose counters the evidence samples. */
static void lower(struct cgroup_io_limit *l, uint64_t *slot, uint64_t v, const char *dir, int v2)
{
    if (v == CGROUP_NONE || v == 0 || v >= *slot)
        return;
    *slot = v;
    if (!l->dir[0] || slot == &l->read_bps || slot == &l->write_bps) {
        copy(l->dir, sizeof(l->dir), dir);
        l->v2 = v2;
    }
}

static void read_io_v1(struct cgroup_info *cg, const struct hierarchy *h, const struct cgroup_device *devs,
                       int ndevs)
{
    static const char *const files[4] = {"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
                                         "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"};
    if (!h->found)
        return;
    char path[PATH_MAX + 64], buf[4096];
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof(path), "%s/%s", h->dir, files[f]);
        if (slurp(path, buf, sizeof(buf)))
            continue;
        for (const char *line = buf; line && *line;) {
            unsigned ma, mi;
            unsigned long long v;
            if (sscanf(line, "%u:%u %llu", &ma, &mi, &v) == 3) {
                for (int d = 0; d < ndevs; d++) {
                    if (devs[d].major != ma || devs[d].minor != mi)
                        continue;
                    struct cgroup_io_limit *l = io_limit_for(cg, &devs[d]);
                    uint64_t *slots[4] = {l ? &l->read_bps : NULL, l ? &l->write_bps : NULL,
                                          l ? &l->read_iops : NULL, l ? &l->write_iops : NULL};
                    if (l)
                        lower(l, slots[f], v, h->dir, 0);
                }
            }
            line = strchr(line, '\n');
            line = line ? line + 1 : NULL;
        }
    }
}

static void read_io_v2(struct cgroup_info *cg, const struct hierarchy *h, const struct cgroup_device *devs,
                       int ndevs)
{
    static const char *const keys[4] = {"rbps=", "wbps=", "riops=", "wiops="};
    if (!h->found)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64], buf[4096];
    copy(dir, sizeof(dir), h->dir);
    do {
        snprintf(path, sizeof(path), "%s/io.max", dir);
        if (slurp(path, buf, sizeof(buf)))
            continue;
        for (const char *line = buf; line && *line;) {
            const char *end = strchr(line, '\n');
            unsigned ma, mi;
            if (sscanf(line, "%u:%u", &ma, &mi) == 2) {
                for (int d = 0; d < ndevs; d++) {
                    if (devs[d].major != ma || devs[d].minor != mi)
                        continue;
                    struct cgroup_io_limit *l = io_limit_for(cg, &devs[d]);
                    if (!l)
                        continue;
                    uint64_t *slots[4] = {&l->read_bps, &l->write_bps, &l->read_iops, &l->write_iops};
                    for (int k = 0; k < 4; k++) {
                        const char *at = strstr(line, keys[k]);
                        uint64_t v;
                        if (at && (!end || at < end) && parse_limit(at + strlen(keys[k]), &v) == 0)
                            lower(l, slots[k], v, dir, 1);
                    }
                }
            }
            line = end ? end + 1 : NULL;
        }
    } while (parent_dir(dir, h->top) == 0);
}

/* Drops the entries io_limit_for made for devices whose lines held no limit ("max" everywhere). */
static void drop_empty_limits(struct cgroup_info *cg)
{
    int kept = 0;
    for (int i = 0; i < cg->io_limit_count; i++) {
        const struct cgroup_io_limit *l = &cg->io_limits[i];
        if (l->read_bps != CGROUP_NONE || l->write_bps != CGROUP_NONE || l->read_iops != CGROUP_NONE ||
            l->write_iops != CGROUP_NONE)
            cg->io_limits[kept++] = *l;
    }
    cg->io_limit_count = kept;
}

/* ==== The whole picture ==== */

void cgroup_read(struct cgroup_info *cg, const char *root, const struct cgroup_device *devs, int ndevs)
{
    static const char *const memory_v1[] = {"memory.limit_in_bytes", NULL};
    static const char *const memory_v2[] = {"memory.max", "memory.high", NULL};
    memset(cg, 0, sizeof(*cg));
    cg->memory_limit_bytes = CGROUP_NONE;
    cg->cpu_quota_us = cg->cpu_period_us = -1;
    char path[PATH_MAX + 64];
    char *self = malloc(CGROUP_FILE_BYTES), *mounts = malloc(CGROUP_FILE_BYTES * 4);
    if (!self || !mounts)
        goto out;
    snprintf(path, sizeof(path), "%s/proc/self/cgroup", root);
    if (slurp(path, self, CGROUP_FILE_BYTES))
        goto out;
    snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
    if (slurp(path, mounts, CGROUP_FILE_BYTES * 4))
        goto out;
    struct hierarchy mem, cpu, blkio, v2;
    find_hierarchy(&mem, root, self, mounts, "memory");
    find_hierarchy(&cpu, root, self, mounts, "cpu");
    find_hierarchy(&blkio, root, self, mounts, "blkio");
    find_hierarchy(&v2, root, self, mounts, NULL);
    cg->v1 = mem.found || cpu.found || blkio.found;
    cg->v2 = v2.found;
    copy(cg->memory_path, sizeof(cg->memory_path), mem.found ? mem.path : v2.path);
    read_memory(cg, &mem, memory_v1);
    read_memory(cg, &v2, memory_v2);
    read_cpu_v1(cg, &cpu);
    read_cpu_v2(cg, &v2);
    read_io_v1(cg, &blkio, devs, ndevs);
    read_io_v2(cg, &v2, devs, ndevs);
    drop_empty_limits(cg);
    if (v2.found && strcmp(v2.dir, v2.top) != 0) {
        snprintf(path, sizeof(path), "%s/cpu.pressure", v2.dir);
        if (access(path, R_OK) == 0)
            copy(cg->pressure_dir, sizeof(cg->pressure_dir), v2.dir);
    }
out:
    free(self);
    free(mounts);
}

/* ==== Counters ==== */

int cgroup_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_us)
{
    int found = 0;
    for (const char *line = text; line && *line;) {
        unsigned long long v;
        if (sscanf(line, "nr_throttled %llu", &v) == 1) {
            *nr_throttled = v;
            found |= 1;
        } else if (sscanf(line, "throttled_time %llu", &v) == 1) { /* v1: nanoseconds */
            *throttled_us = v / 1000;
            found |= 2;
        } else if (sscanf(line, "throttled_usec %llu", &v) == 1) {
            *throttled_us = v;
            found |= 2;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return found == 3 ? 0 : -1;
}

int cgroup_parse_blkio_v1(const char *text, unsigned major, unsigned minor, uint64_t *read, uint64_t *write)
{
    int found = 0;
    for (const char *line = text; line && *line;) {
        unsigned ma, mi;
        char op[16];
        unsigned long long v;
        if (sscanf(line, "%u:%u %15s %llu", &ma, &mi, op, &v) == 4 && ma == major && mi == minor) {
            if (strcmp(op, "Read") == 0) {
                *read = v;
                found |= 1;
            } else if (strcmp(op, "Write") == 0) {
                *write = v;
                found |= 2;
            }
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    return found == 3 ? 0 : -1;
}

int cgroup_parse_io_stat(const char *text, unsigned major, unsigned minor, uint64_t *rbytes, uint64_t *wbytes,
                         uint64_t *rios, uint64_t *wios)
{
    for (const char *line = text; line && *line;) {
        unsigned ma, mi;
        const char *end = strchr(line, '\n');
        if (sscanf(line, "%u:%u", &ma, &mi) == 2 && ma == major && mi == minor) {
            static const char *const keys[4] = {"rbytes=", "wbytes=", "rios=", "wios="};
            uint64_t *outs[4] = {rbytes, wbytes, rios, wios};
            for (int k = 0; k < 4; k++) {
                const char *at = strstr(line, keys[k]);
                *outs[k] = at && (!end || at < end) ? strtoull(at + strlen(keys[k]), NULL, 10) : 0;
            }
            return 0;
        }
        line = end ? end + 1 : NULL;
    }
    /* a device the cgroup has not used yet has no line: all zero */
    *rbytes = *wbytes = *rios = *wios = 0;
    return 0;
}

/* "20 MiB/s" or "1500 B/s" for a rate in bytes per second. */
static void format_bps(uint64_t bps, char *out, size_t len)
{
    if (bps % 1048576 == 0)
        snprintf(out, len, "%" PRIu64 " MiB/s", bps / 1048576);
    else if (bps >= 1048576)
        snprintf(out, len, "%.1f MiB/s", (double)bps / 1048576.0);
    else if (bps % 1024 == 0)
        snprintf(out, len, "%" PRIu64 " KiB/s", bps / 1024);
    else
        snprintf(out, len, "%" PRIu64 " B/s", bps);
}

char *cgroup_describe_io_limit(const struct cgroup_io_limit *l, char *out, size_t len)
{
    char parts[4][48], rate[32];
    int n = 0;
    if (l->read_bps != CGROUP_NONE) {
        format_bps(l->read_bps, rate, sizeof(rate));
        snprintf(parts[n++], sizeof(parts[0]), "%s read", rate);
    }
    if (l->write_bps != CGROUP_NONE) {
        format_bps(l->write_bps, rate, sizeof(rate));
        snprintf(parts[n++], sizeof(parts[0]), "%s write", rate);
    }
    if (l->read_iops != CGROUP_NONE)
        snprintf(parts[n++], sizeof(parts[0]), "%" PRIu64 " reads/s", l->read_iops);
    if (l->write_iops != CGROUP_NONE)
        snprintf(parts[n++], sizeof(parts[0]), "%" PRIu64 " writes/s", l->write_iops);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", parts[i]);
    if (used < len)
        snprintf(out + used, len - used, " on %s (%u:%u) by the cgroup %s (%s)", l->dev.name, l->dev.major,
                 l->dev.minor, l->dir, l->v2 ? "io.max" : "blkio.throttle.*_device");
    return out;
}
