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
    if (sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
               &v[7]) < 4)
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

/* ==== sysfs ==== */

static void add_disk(char disks[][EVIDENCE_NAME_LEN], int *n, int max, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(disks[i], name) == 0)
            return;
    if (*n < max)
        snprintf(disks[(*n)++], EVIDENCE_NAME_LEN, "%s", name);
}

static void find_disks(const char *root, const char *name, char disks[][EVIDENCE_NAME_LEN], int *n, int max,
                       char *backing, size_t backing_len, int depth)
{
    char path[PATH_MAX], real[PATH_MAX], file[PATH_MAX + 64];
    if (depth > 8)
        return;
    snprintf(path, sizeof(path), "%s/class/block/%s", root, name);
    if (!realpath(path, real))
        return;
    snprintf(file, sizeof(file), "%s/partition", real);
    if (access(file, F_OK) == 0) { /* a partition: its disk (which may itself be md or dm) */
        char *slash = strrchr(real, '/');
        if (slash) {
            *slash = '\0';
            const char *parent = strrchr(real, '/');
            find_disks(root, parent ? parent + 1 : real, disks, n, max, backing, backing_len, depth + 1);
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
            find_disks(root, e->d_name, disks, n, max, backing, backing_len, depth + 1);
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
                    find_disks(root, base ? base + 1 : dev_real, disks, n, max, backing, backing_len, depth + 1);
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
    find_disks(sysfs_root, name, disks, &n, max, backing_file, backing_len, 0);
    return n;
}

/* ==== sampling ==== */

void evidence_open(struct evidence_source *src, const char *device)
{
    memset(src, 0, sizeof(*src));
    src->diskstats_fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    src->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    src->psi_cpu_fd = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
    src->psi_io_fd = open("/proc/pressure/io", O_RDONLY | O_CLOEXEC);
    if (device && device[0]) {
        snprintf(src->device, sizeof(src->device), "%s", device);
        src->disk_count = evidence_find_disks("/sys", device, src->disks, EVIDENCE_MAX_DISKS, NULL, 0);
    }
}

void evidence_close(struct evidence_source *src)
{
    int *fds[] = {&src->diskstats_fd, &src->stat_fd, &src->psi_cpu_fd, &src->psi_io_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* Re-reads an open /proc file from its start; one pread for the files we read. */
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

void evidence_sample(const struct evidence_source *src, struct evidence_sample *s)
{
    static char buf[EVIDENCE_READ_BYTES]; /* one sampler per process; the seekers never sample */
    memset(s, 0, sizeof(*s));
    if (src->device[0] && read_proc(src->diskstats_fd, buf, sizeof(buf)) == 0) {
        s->have_device = evidence_parse_diskstats(buf, src->device, &s->device) == 0;
        for (int i = 0; i < src->disk_count; i++) {
            struct disk_counters dc = {0};
            if (evidence_parse_diskstats(buf, src->disks[i], &dc) == 0)
                s->disk_ticks_ms[i] = dc.io_ticks_ms;
        }
    }
    if (read_proc(src->stat_fd, buf, sizeof(buf)) == 0)
        s->have_cpu = evidence_parse_stat(buf, &s->cpu) == 0;
    if (read_proc(src->psi_cpu_fd, buf, sizeof(buf)) == 0)
        s->have_psi_cpu = evidence_parse_pressure(buf, &s->psi_cpu_us) == 0;
    if (read_proc(src->psi_io_fd, buf, sizeof(buf)) == 0)
        s->have_psi_io = evidence_parse_pressure(buf, &s->psi_io_us) == 0;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        s->block_in = ru.ru_inblock;
        s->block_out = ru.ru_oublock;
        s->nvcsw = ru.ru_nvcsw;
        s->nivcsw = ru.ru_nivcsw;
    }
    s->wall_s = timer_now_s();
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
        uint64_t busiest = 0;
        for (int i = 0; i < src->disk_count; i++)
            if (b->disk_ticks_ms[i] - a->disk_ticks_ms[i] > busiest)
                busiest = b->disk_ticks_ms[i] - a->disk_ticks_ms[i];
        if (!src->disk_count) /* the device is its own disk as far as we can tell */
            busiest = b->device.io_ticks_ms - a->device.io_ticks_ms;
        ev->busy_s = (double)busiest / 1000.0;
    }
    if (a->have_cpu && b->have_cpu && b->cpu.total > a->cpu.total) {
        ev->cpu_known = 1;
        ev->steal_pct = 100.0 * (double)(b->cpu.steal - a->cpu.steal) / (double)(b->cpu.total - a->cpu.total);
    }
    if (ev->interval_s > 0) {
        if (a->have_psi_cpu && b->have_psi_cpu) {
            ev->psi_cpu_known = 1;
            ev->cpu_pressure_pct = (double)(b->psi_cpu_us - a->psi_cpu_us) / (ev->interval_s * 1e4);
        }
        if (a->have_psi_io && b->have_psi_io) {
            ev->psi_io_known = 1;
            ev->io_pressure_pct = (double)(b->psi_io_us - a->psi_io_us) / (ev->interval_s * 1e4);
        }
    }
    ev->block_in = b->block_in - a->block_in;
    ev->block_out = b->block_out - a->block_out;
    ev->voluntary_switches = b->nvcsw - a->nvcsw;
    ev->involuntary_switches = b->nivcsw - a->nivcsw;
}

/* ==== verdicts ==== */

const char *evidence_code_name(enum limiter_code code)
{
    switch (code) {
    case LIMIT_CPU: return "cpu_bound";
    case LIMIT_DEVICE: return "device_bound";
    case LIMIT_CACHED: return "cached";
    case LIMIT_TOO_SHORT: return "too_short";
    case LIMIT_NOISY: return "noisy";
    case LIMIT_UNKNOWN: return "unknown";
    default: return NULL;
    }
}

static int reads_data(enum test_id t)
{
    return t == TEST_REWRITE || t == TEST_GETC || t == TEST_GET_BLOCK || t == TEST_SEEKS || t == TEST_SEQ_STAT ||
           t == TEST_RAN_STAT;
}

/* The option value that makes test t take >= 0.5 s (with 20 % to spare) at the measured rate. */
static void suggest(enum test_id t, const struct bench_params *bp, double rate, char *out, size_t len)
{
    double need = ceil(rate * RESULTS_MIN_TIME_S * 1.2);
    if (t == TEST_PUTC || t == TEST_GETC)
        snprintf(out, len, "-f%.0f", ceil(need / 1024.0));
    else if (t < TEST_SEEKS)
        snprintf(out, len, "-s %.0f", ceil(need / 1024.0));
    else if (t == TEST_SEEKS)
        snprintf(out, len, "-s %" PRId64 ":%d:%.0f", bp->file_size_mib, bp->io_chunk_bytes, need);
    else
        snprintf(out, len, "-n %.0f", ceil(need / 1024.0));
}

void evidence_judge(enum test_id t, const struct test_result *r, const struct limiter_context *ctx,
                    struct limiter *out)
{
    memset(out, 0, sizeof(*out));
    out->device_util = -1;
    out->file_vs_ram = -1;
    if (!results_ran(r))
        return;
    const struct test_evidence *ev = &r->ev;
    double rate = units_test_work(ctx->bp, t) / r->elapsed_s;
    const char *unit = units_test_unit(t);
    double cores = 1;
    if (t == TEST_SEEKS) /* seekers run in parallel: the most CPU they can use */
        cores = ctx->bp->seek_procs < ctx->cpus ? ctx->bp->seek_procs : (ctx->cpus > 0 ? ctx->cpus : 1);
    out->cpu_of_wall = (r->user_s + r->sys_s) / r->elapsed_s / cores;
    if (ev->disk_known && ev->interval_s > 0)
        out->device_util = ev->busy_s / ev->interval_s;
    if (t <= TEST_SEEKS && ctx->ram_mib > 0)
        out->file_vs_ram = (double)ctx->bp->file_size_mib / (double)ctx->ram_mib;
    int per_char = t == TEST_PUTC || t == TEST_GETC;
    /* on a CPU, or runnable and waiting for one: either way the CPU set the pace */
    double cpu_or_waiting = out->cpu_of_wall + (ev->psi_cpu_known ? ev->cpu_pressure_pct / 100.0 : 0.0);
    if (results_too_fast(r))
        suggest(t, ctx->bp, rate, out->suggestion, sizeof(out->suggestion));

    if (per_char && cpu_or_waiting >= LIMIT_CPU_OF_WALL) {
        out->code = LIMIT_CPU;
        snprintf(out->text, sizeof(out->text),
                 "CPU time was %.0f %% of the wall time (user %.2f s, system %.2f s; tasks waited for a CPU %.0f %% "
                 "of it): one byte per call keeps one core busy, so this measures the CPU and the system-call "
                 "path, not the storage", out->cpu_of_wall * 100, r->user_s, r->sys_s,
                 ev->psi_cpu_known ? ev->cpu_pressure_pct : 0.0);
        return;
    }
    if (ctx->memory_fs) {
        out->code = LIMIT_CACHED;
        snprintf(out->text, sizeof(out->text), "the files are on a memory filesystem (tmpfs): no device is involved");
        return;
    }
    if (reads_data(t) && ev->disk_known && ev->dev_reads == 0 &&
        (r->calls.bytes_read > 0 || r->calls.stat > 0)) {
        out->code = LIMIT_CACHED;
        snprintf(out->text, sizeof(out->text),
                 "%.1f MiB read and %" PRIu64 " files stat'ed with no reads from the device: the page cache "
                 "served them", (double)r->calls.bytes_read / 1048576.0, r->calls.stat);
        return;
    }
    if (t <= TEST_SEEKS && out->file_vs_ram >= 0 && out->file_vs_ram < 2.0) {
        out->code = LIMIT_CACHED;
        snprintf(out->text, sizeof(out->text),
                 "the file (%" PRId64 " MiB) is %.2g times the RAM (%" PRId64 " MiB), under 2: the page cache can "
                 "hold much of it", ctx->bp->file_size_mib, out->file_vs_ram, ctx->ram_mib);
        return;
    }
    if (results_too_fast(r)) {
        out->code = LIMIT_TOO_SHORT;
        snprintf(out->text, sizeof(out->text),
                 "took %.3f s, under bonnie++'s 0.5 s minimum (+++++); at the measured %.0f %s, %s would take "
                 "at least 0.5 s", r->elapsed_s, rate, unit, out->suggestion);
        return;
    }
    if (out->device_util >= LIMIT_DEVICE_UTIL) {
        out->code = LIMIT_DEVICE;
        snprintf(out->text, sizeof(out->text),
                 "the busiest disk was busy %.0f %% of the time (%" PRIu64 " reads, %" PRIu64 " writes, "
                 "%.1f MiB moved)", out->device_util * 100, ev->dev_reads, ev->dev_writes,
                 (double)(ev->dev_read_bytes + ev->dev_write_bytes) / 1048576.0);
        return;
    }
    if (out->cpu_of_wall >= LIMIT_CPU_OF_WALL) {
        out->code = LIMIT_CPU;
        snprintf(out->text, sizeof(out->text),
                 "CPU time was %.0f %% of the wall time%s (user %.2f s, system %.2f s), the disk was busy %s",
                 out->cpu_of_wall * 100, t == TEST_SEEKS ? " of the seekers' usable cores" : "", r->user_s,
                 r->sys_s, out->device_util >= 0 ? "less than 90 % of it" : "an unknown share of it");
        return;
    }
    if ((ev->cpu_known && ev->steal_pct >= LIMIT_NOISY_STEAL_PCT) ||
        (ev->psi_cpu_known && ev->cpu_pressure_pct >= LIMIT_NOISY_CPU_PSI_PCT)) {
        out->code = LIMIT_NOISY;
        snprintf(out->text, sizeof(out->text),
                 "other load competed: CPU steal %.1f %%, tasks waiting for a CPU %.0f %% of the time",
                 ev->cpu_known ? ev->steal_pct : 0.0, ev->psi_cpu_known ? ev->cpu_pressure_pct : 0.0);
        return;
    }
    out->code = LIMIT_UNKNOWN;
    snprintf(out->text, sizeof(out->text), "no limit reached: CPU %.0f %% of wall time, disk busy %s",
             out->cpu_of_wall * 100, out->device_util >= 0 ? "" : "unknown");
    if (out->device_util >= 0) {
        size_t n = strlen(out->text);
        snprintf(out->text + n, sizeof(out->text) - n, "%.0f %%", out->device_util * 100);
    }
}
