/* evidence.c -- see evidence.h. */
#include "evidence.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "timer.h"
#include "units.h"

#define EVIDENCE_READ_BYTES 65536
#define SECTOR_BYTES 512

/* ==== parsers ==== */

int evidence_parse_diskstats(const char *text, const char *name, struct disk_counters *out)
{
    const char *line = text;
    while (line && *line) {
        const char *next = strchr(line, '\n');
        unsigned maj, mn;
        char dev[EVIDENCE_NAME_LEN];
        unsigned long long f[10];
        if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &maj, &mn, dev, &f[0], &f[1],
                   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]) == 13 &&
            strcmp(dev, name) == 0) {
            out->reads = f[0];
            out->read_sectors = f[2];
            out->writes = f[4];
            out->write_sectors = f[6];
            out->io_ticks_ms = f[9];
            return 0;
        }
        line = next ? next + 1 : NULL;
    }
    return -1;
}

int evidence_parse_stat(const char *text, struct cpu_counters *out)
{
    unsigned long long v[8] = {0};
    if (strncmp(text, "cpu ", 4) != 0)
        return -1;
    const char *p = text + 4;
    int count = 0;
    while (count < 8 && *p != '\n') { /* strtoull, not sscanf: this runs twice per test */
        char *end;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p)
            break;
        v[count++] = x;
        p = end;
    }
    if (count < 4)
        return -1;
    out->total = 0;
    for (int i = 0; i < 8; i++)
        out->total += v[i];
    out->steal = v[7];
    return 0;
}

int evidence_parse_pressure(const char *text, uint64_t *some_total_us)
{
    if (strncmp(text, "some ", 5) != 0)
        return -1;
    const char *total = strstr(text, "total=");
    const char *end_of_line = strchr(text, '\n');
    if (!total || (end_of_line && total > end_of_line))
        return -1;
    char *end;
    unsigned long long v = strtoull(total + 6, &end, 10);
    if (end == total + 6)
        return -1;
    *some_total_us = v;
    return 0;
}

int evidence_parse_schedstat(const char *text, uint64_t *on_cpu_ns, uint64_t *run_delay_ns)
{
    unsigned long long run, delay;
    if (sscanf(text, "%llu %llu", &run, &delay) != 2)
        return -1;
    *on_cpu_ns = run;
    *run_delay_ns = delay;
    return 0;
}

/* ==== sysfs ==== */

static void add_disk(char disks[][EVIDENCE_NAME_LEN], int *n, int max, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(disks[i], name) == 0)
            return;
    if (*n < max)
        snprintf(disks[(*n)++], EVIDENCE_NAME_LEN, "%s", name);
}

/* Where find_disks records every device it passes (NULL: nowhere). */
struct chain_out {
    struct cgroup_device *devs;
    int n, max;
};

static void chain_add(const char *root, struct chain_out *chain, const char *name, const char *real)
{
    if (!chain)
        return;
    for (int i = 0; i < chain->n; i++)
        if (strcmp(chain->devs[i].name, name) == 0)
            return;
    char file[PATH_MAX + 64], text[64];
    unsigned ma, mi;
    snprintf(file, sizeof(file), "%s/dev", real);
    int fd = open(file, O_RDONLY | O_CLOEXEC); /* not fopen: no fstat (see cgroup.c's slurp) */
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0)
        text[n] = '\0';
    int got = n > 0 && sscanf(text, "%u:%u", &ma, &mi) == 2;
    (void)root;
    if (!got || chain->n >= chain->max)
        return;
    struct cgroup_device *d = &chain->devs[chain->n++];
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->major = ma;
    d->minor = mi;
}

static void find_disks(const char *root, const char *name, char disks[][EVIDENCE_NAME_LEN], int *n, int max,
                       char *backing, size_t backing_len, struct chain_out *chain, int depth)
{
    char path[PATH_MAX], real[PATH_MAX], file[PATH_MAX + 64];
    if (depth > 8)
        return;
    snprintf(path, sizeof(path), "%s/class/block/%s", root, name);
    if (!realpath(path, real))
        return;
    chain_add(root, chain, name, real);
    snprintf(file, sizeof(file), "%s/partition", real);
    if (access(file, F_OK) == 0) { /* a partition: its disk (which may itself be md or dm) */
        char *slash = strrchr(real, '/');
        if (slash) {
            *slash = '\0';
            const char *parent = strrchr(real, '/');
            find_disks(root, parent ? parent + 1 : real, disks, n, max, backing, backing_len, chain, depth + 1);
        }
        return;
    }
    snprintf(file, sizeof(file), "%s/slaves", real);
    DIR *d = opendir(file);
    int members = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            members++;
            find_disks(root, e->d_name, disks, n, max, backing, backing_len, chain, depth + 1);
        }
        closedir(d);
    }
    if (members)
        return;
    snprintf(file, sizeof(file), "%s/loop/backing_file", real);
    FILE *fp = fopen(file, "re");
    if (fp) {
        char line[PATH_MAX];
        int got = fgets(line, sizeof(line), fp) != NULL;
        fclose(fp);
        if (got) {
            line[strcspn(line, "\n")] = '\0';
            if (backing && !backing[0])
                snprintf(backing, backing_len, "%s", line);
            struct stat st;
            char dev[PATH_MAX + 64], dev_real[PATH_MAX];
            if (stat(line, &st) == 0) {
                snprintf(dev, sizeof(dev), "%s/dev/block/%u:%u", root, major(st.st_dev), minor(st.st_dev));
                if (realpath(dev, dev_real)) {
                    const char *base = strrchr(dev_real, '/');
                    find_disks(root, base ? base + 1 : dev_real, disks, n, max, backing, backing_len, chain,
                               depth + 1);
                }
            }
            return;
        }
    }
    add_disk(disks, n, max, name);
}

int evidence_find_disks(const char *sysfs_root, const char *name, char disks[][EVIDENCE_NAME_LEN], int max,
                        char *backing_file, size_t backing_len)
{
    int n = 0;
    if (backing_file && backing_len)
        backing_file[0] = '\0';
    find_disks(sysfs_root, name, disks, &n, max, backing_file, backing_len, NULL, 0);
    return n;
}

int evidence_find_chain(const char *sysfs_root, const char *name, struct cgroup_device *chain, int max)
{
    char disks[EVIDENCE_MAX_DISKS][EVIDENCE_NAME_LEN];
    int n = 0;
    struct chain_out out = {chain, 0, max};
    find_disks(sysfs_root, name, disks, &n, EVIDENCE_MAX_DISKS, NULL, 0, &out, 0);
    return out.n;
}

/* ==== sampling ==== */

static int open_ro(const char *path)
{
    return path && path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

/* Every whole device in /sys/block outside the test's chain: where a sync() may have waited. */
static void find_whole(struct evidence_source *src)
{
    DIR *d = opendir("/sys/block");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && src->whole_count < EVIDENCE_MAX_WHOLE) {
        int ours = e->d_name[0] == '.';
        for (int i = 0; !ours && i < src->chain_count; i++)
            ours = strcmp(src->chain[i].name, e->d_name) == 0;
        if (!ours && strlen(e->d_name) < EVIDENCE_NAME_LEN)
            memcpy(src->whole[src->whole_count++], e->d_name, strlen(e->d_name) + 1);
    }
    closedir(d);
}

void evidence_open(struct evidence_source *src, const char *device, const struct cgroup_info *cg)
{
    memset(src, 0, sizeof(*src));
    src->diskstats_fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    src->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    src->psi_cpu_fd = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
    src->psi_io_fd = open("/proc/pressure/io", O_RDONLY | O_CLOEXEC);
    src->schedstat_fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);
    src->cg_cpu_stat_fd = src->cg_psi_cpu_fd = src->cg_psi_io_fd = -1;
    for (int i = 0; i < CGROUP_MAX_IO_LIMITS; i++)
        src->cg_io_fd[i][0] = src->cg_io_fd[i][1] = -1;
    if (device && device[0]) {
        snprintf(src->device, sizeof(src->device), "%s", device);
        struct chain_out chain = {src->chain, 0, EVIDENCE_MAX_DISKS};
        find_disks("/sys", device, src->disks, &src->disk_count, EVIDENCE_MAX_DISKS, NULL, 0, &chain, 0);
        src->chain_count = chain.n;
    }
    find_whole(src);
    src->cg = cg;
    if (!cg)
        return;
    char path[PATH_MAX + 64];
    src->cg_cpu_stat_fd = open_ro(cg->cpu_stat_path);
    if (cg->pressure_dir[0]) {
        snprintf(path, sizeof(path), "%s/cpu.pressure", cg->pressure_dir);
        src->cg_psi_cpu_fd = open_ro(path);
        snprintf(path, sizeof(path), "%s/io.pressure", cg->pressure_dir);
        src->cg_psi_io_fd = open_ro(path);
    }
    for (int i = 0; i < cg->io_limit_count; i++) {
        const struct cgroup_io_limit *l = &cg->io_limits[i];
        snprintf(path, sizeof(path), "%s/%s", l->dir, l->v2 ? "io.stat" : "blkio.throttle.io_service_bytes");
        src->cg_io_fd[i][0] = open_ro(path);
        if (!l->v2) {
            snprintf(path, sizeof(path), "%s/blkio.throttle.io_serviced", l->dir);
            src->cg_io_fd[i][1] = open_ro(path);
        }
    }
}

void evidence_close(struct evidence_source *src)
{
    int *fds[] = {&src->diskstats_fd, &src->stat_fd, &src->psi_cpu_fd, &src->psi_io_fd, &src->schedstat_fd,
                  &src->cg_cpu_stat_fd, &src->cg_psi_cpu_fd, &src->cg_psi_io_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
    for (int i = 0; i < CGROUP_MAX_IO_LIMITS; i++) {
        for (int k = 0; k < 2; k++) {
            if (src->cg_io_fd[i][k] >= 0)
                close(src->cg_io_fd[i][k]);
            src->cg_io_fd[i][k] = -1;
        }
    }
}

/* Re-reads an open /proc or cgroup file from its start; one pread for the files we read. */
static int read_proc(int fd, char *buf, size_t len)
{
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

int evidence_run_delay_ns(int schedstat_fd, uint64_t *run_delay_ns)
{
    char buf[128];
    uint64_t on_cpu_ns;
    if (read_proc(schedstat_fd, buf, sizeof(buf)))
        return -1;
    return evidence_parse_schedstat(buf, &on_cpu_ns, run_delay_ns);
}

/* The counters of the filesystem's device, of the disks below it and of every other whole device,
 * from /proc/diskstats text, read line by line once. */
/* Reads n unsigned numbers separated by blanks from p into out. Returns 0, or -1 when fewer are there.
 * strtoull: sscanf costs thousands of instructions per call, and a sample runs it per device. */
static int read_numbers(const char *p, unsigned long long *out, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = strtoull(p, &end, 10);
        if (end == p)
            return -1;
        p = end;
    }
    return 0;
}

static void sample_diskstats(const struct evidence_source *src, const char *text, struct evidence_sample *s)
{
    for (const char *line = text; line && *line;) {
        /* the name is the third field; only a wanted device's counters are converted */
        const char *p = line + strspn(line, " ");
        p += strcspn(p, " ");
        p += strspn(p, " ");
        p += strcspn(p, " ");
        p += strspn(p, " ");
        size_t len = strcspn(p, " \n");
        int device = src->device[0] && strlen(src->device) == len && strncmp(p, src->device, len) == 0;
        int disk = -1, whole = -1;
        for (int i = 0; disk < 0 && i < src->disk_count; i++)
            if (strlen(src->disks[i]) == len && strncmp(p, src->disks[i], len) == 0)
                disk = i;
        for (int i = 0; whole < 0 && i < src->whole_count; i++)
            if (strlen(src->whole[i]) == len && strncmp(p, src->whole[i], len) == 0)
                whole = i;
        unsigned long long f[10];
        if ((device || disk >= 0 || whole >= 0) && read_numbers(p + len, f, 10) == 0) {
            if (device) {
                s->have_device = 1;
                s->device = (struct disk_counters){f[0], f[2], f[4], f[6], f[9]};
            }
            if (disk >= 0)
                s->disk_ticks_ms[disk] = f[9];
            if (whole >= 0)
                s->whole_write_sectors[whole] = f[6];
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
}

/* The cgroup I/O counters of throttled device i into s. */
static void sample_cg_io(const struct evidence_source *src, int i, char *buf, size_t len,
                         struct evidence_sample *s)
{
    const struct cgroup_io_limit *l = &src->cg->io_limits[i];
    uint64_t *v = s->cg_io[i];
    if (l->v2) {
        s->have_cg_io[i] = read_proc(src->cg_io_fd[i][0], buf, len) == 0 &&
                           cgroup_parse_io_stat(buf, l->dev.major, l->dev.minor, &v[0], &v[1], &v[2], &v[3]) == 0;
        return;
    }
    /* v1 writes no line for a device the cgroup has not used yet: zeros */
    if (read_proc(src->cg_io_fd[i][0], buf, len))
        return;
    if (cgroup_parse_blkio_v1(buf, l->dev.major, l->dev.minor, &v[0], &v[1]))
        v[0] = v[1] = 0;
    if (read_proc(src->cg_io_fd[i][1], buf, len) == 0 &&
        cgroup_parse_blkio_v1(buf, l->dev.major, l->dev.minor, &v[2], &v[3]))
        v[2] = v[3] = 0;
    s->have_cg_io[i] = 1;
}

void evidence_sample(const struct evidence_source *src, struct evidence_sample *s)
{
    static char buf[EVIDENCE_READ_BYTES]; /* one sampler per process; the seekers never sample */
    memset(s, 0, sizeof(*s));
    if (read_proc(src->diskstats_fd, buf, sizeof(buf)) == 0)
        sample_diskstats(src, buf, s);
    if (read_proc(src->stat_fd, buf, sizeof(buf)) == 0)
        s->have_cpu = evidence_parse_stat(buf, &s->cpu) == 0;
    if (read_proc(src->psi_cpu_fd, buf, sizeof(buf)) == 0)
        s->have_psi_cpu = evidence_parse_pressure(buf, &s->psi_cpu_us) == 0;
    if (read_proc(src->psi_io_fd, buf, sizeof(buf)) == 0)
        s->have_psi_io = evidence_parse_pressure(buf, &s->psi_io_us) == 0;
    s->have_sched = evidence_run_delay_ns(src->schedstat_fd, &s->run_delay_ns) == 0;
    if (src->cg) {
        if (read_proc(src->cg_cpu_stat_fd, buf, sizeof(buf)) == 0)
            s->have_cg_cpu = cgroup_parse_cpu_stat(buf, &s->cg_nr_throttled, &s->cg_throttled_us) == 0;
        if (read_proc(src->cg_psi_cpu_fd, buf, sizeof(buf)) == 0)
            s->have_cg_psi_cpu = evidence_parse_pressure(buf, &s->cg_psi_cpu_us) == 0;
        if (read_proc(src->cg_psi_io_fd, buf, sizeof(buf)) == 0)
            s->have_cg_psi_io = evidence_parse_pressure(buf, &s->cg_psi_io_us) == 0;
        for (int i = 0; i < src->cg->io_limit_count; i++)
            sample_cg_io(src, i, buf, sizeof(buf), s);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        s->block_in = ru.ru_inblock;
        s->block_out = ru.ru_oublock;
        s->nvcsw = ru.ru_nvcsw;
        s->nivcsw = ru.ru_nivcsw;
    }
    s->wall_s = timer_now_s();
}

static double larger(double a, double b)
{
    return a > b ? a : b;
}

/* Seconds n units take at `limit` units per second; 0 when there is no such limit. */
static double at_limit_s(uint64_t n, uint64_t limit)
{
    return limit == CGROUP_NONE || limit == 0 ? 0.0 : (double)n / (double)limit;
}

/* The throttled device whose limits explain the most time between a and b into ev. */
static void delta_throttle(const struct evidence_source *src, const struct evidence_sample *a,
                           const struct evidence_sample *b, struct test_evidence *ev)
{
    for (int i = 0; src->cg && i < src->cg->io_limit_count; i++) {
        if (!a->have_cg_io[i] || !b->have_cg_io[i])
            continue;
        const struct cgroup_io_limit *l = &src->cg->io_limits[i];
        uint64_t d[4];
        for (int k = 0; k < 4; k++)
            d[k] = b->cg_io[i][k] >= a->cg_io[i][k] ? b->cg_io[i][k] - a->cg_io[i][k] : 0;
        /* reads and writes are limited separately (blkio v1's read and write rules, io.max's rbps and wbps), each
         * with a queue of its own that drains while the other does: the test needs the slower direction's time */
        double read_s = larger(at_limit_s(d[0], l->read_bps), at_limit_s(d[2], l->read_iops));
        double write_s = larger(at_limit_s(d[1], l->write_bps), at_limit_s(d[3], l->write_iops));
        if (ev->throttle_known && larger(read_s, write_s) <= ev->throttle_s)
            continue;
        ev->throttle_known = 1;
        ev->throttle_index = i;
        ev->throttle_s = larger(read_s, write_s);
        ev->throttle_read_s = read_s;
        ev->throttle_write_s = write_s;
        ev->cg_read_bytes = d[0];
        ev->cg_write_bytes = d[1];
        ev->cg_reads = d[2];
        ev->cg_writes = d[3];
    }
}

void evidence_delta(const struct evidence_source *src, const struct evidence_sample *a,
                    const struct evidence_sample *b, struct test_evidence *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->sampled = 1;
    ev->interval_s = b->wall_s - a->wall_s;
    if (a->have_device && b->have_device) {
        ev->disk_known = 1;
        ev->dev_reads = b->device.reads - a->device.reads;
        ev->dev_writes = b->device.writes - a->device.writes;
        ev->dev_read_bytes = (b->device.read_sectors - a->device.read_sectors) * SECTOR_BYTES;
        ev->dev_write_bytes = (b->device.write_sectors - a->device.write_sectors) * SECTOR_BYTES;
        /* the device itself (a loop device, dm, md) and each disk below: the busiest */
        uint64_t busiest = b->device.io_ticks_ms - a->device.io_ticks_ms;
        snprintf(ev->busiest, sizeof(ev->busiest), "%s", src->device);
        for (int i = 0; i < src->disk_count; i++) {
            if (b->disk_ticks_ms[i] - a->disk_ticks_ms[i] > busiest) {
                busiest = b->disk_ticks_ms[i] - a->disk_ticks_ms[i];
                snprintf(ev->busiest, sizeof(ev->busiest), "%s", src->disks[i]);
            }
        }
        ev->busy_s = (double)busiest / 1000.0;
    }
    for (int i = 0; i < src->whole_count; i++) {
        uint64_t bytes = (b->whole_write_sectors[i] - a->whole_write_sectors[i]) * SECTOR_BYTES;
        if (b->whole_write_sectors[i] < a->whole_write_sectors[i] || bytes <= ev->other_write_bytes[1])
            continue;
        int at = bytes > ev->other_write_bytes[0] ? 0 : 1;
        if (at == 0) {
            ev->other_write_bytes[1] = ev->other_write_bytes[0];
            memcpy(ev->other_writer[1], ev->other_writer[0], sizeof(ev->other_writer[1]));
        }
        ev->other_write_bytes[at] = bytes;
        snprintf(ev->other_writer[at], sizeof(ev->other_writer[at]), "%s", src->whole[i]);
    }
    if (a->have_cpu && b->have_cpu && b->cpu.total > a->cpu.total) {
        ev->cpu_known = 1;
        ev->steal_pct = 100.0 * (double)(b->cpu.steal - a->cpu.steal) / (double)(b->cpu.total - a->cpu.total);
    }
    if (ev->interval_s > 0) {
        double per_pct = ev->interval_s * 1e4; /* microseconds in 1 % of the interval */
        if (a->have_psi_cpu && b->have_psi_cpu) {
            ev->psi_cpu_known = 1;
            ev->cpu_pressure_pct = (double)(b->psi_cpu_us - a->psi_cpu_us) / per_pct;
        }
        if (a->have_psi_io && b->have_psi_io) {
            ev->psi_io_known = 1;
            ev->io_pressure_pct = (double)(b->psi_io_us - a->psi_io_us) / per_pct;
        }
        if (a->have_cg_psi_cpu && b->have_cg_psi_cpu) {
            ev->cg_psi_cpu_known = 1;
            ev->cg_cpu_pressure_pct = (double)(b->cg_psi_cpu_us - a->cg_psi_cpu_us) / per_pct;
        }
        if (a->have_cg_psi_io && b->have_cg_psi_io) {
            ev->cg_psi_io_known = 1;
            ev->cg_io_pressure_pct = (double)(b->cg_psi_io_us - a->cg_psi_io_us) / per_pct;
        }
    }
    if (a->have_sched && b->have_sched) {
        ev->sched_known = 1;
        ev->run_delay_s = (double)(b->run_delay_ns - a->run_delay_ns) / 1e9;
    }
    if (a->have_cg_cpu && b->have_cg_cpu) {
        ev->cg_cpu_known = 1;
        ev->cg_nr_throttled = b->cg_nr_throttled - a->cg_nr_throttled;
        ev->cg_throttled_s = (double)(b->cg_throttled_us - a->cg_throttled_us) / 1e6;
    }
    delta_throttle(src, a, b, ev);
    ev->block_in = b->block_in - a->block_in;
    ev->block_out = b->block_out - a->block_out;
    ev->voluntary_switches = b->nvcsw - a->nvcsw;
    ev->involuntary_switches = b->nivcsw - a->nivcsw;
}
