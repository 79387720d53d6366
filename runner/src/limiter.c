/* limiter.c -- see limiter.h. */
#include "limiter.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

#define MIB 1048576.0

const char *limiter_code_name(enum limiter_code code)
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

static void verdict(struct limiter *out, enum limiter_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void verdict(struct limiter *out, enum limiter_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->text, sizeof(out->text), fmt, ap);
    va_end(ap);
    out->code = code;
}

uint64_t limiter_cache_ram_bytes(const struct limiter_context *ctx, const char **from)
{
    uint64_t ram = ctx->ram_mib > 0 ? (uint64_t)ctx->ram_mib << 20 : 0;
    *from = "physical";
    if (ctx->cg && ctx->cg->memory_limit_bytes != CGROUP_NONE && (!ram || ctx->cg->memory_limit_bytes < ram)) {
        ram = ctx->cg->memory_limit_bytes;
        *from = "memory_cgroup";
    }
    return ram;
}

/* The direction whose bytes tell whether the page cache answered for the device: reads for the
 * tests that read data, writes for the ones that write it (their fsync, close or sync() is inside
 * the timing). 'r', 'w', or 0 for the tests that move no data (deletes, stat without data). */
static char judged_direction(enum test_id t, const struct test_result *r)
{
    switch (t) {
    case TEST_REWRITE: /* the read half is what a page cache can serve; the writes reach the device by fsync */
    case TEST_GETC:
    case TEST_GET_BLOCK:
    case TEST_SEEKS:
    case TEST_SEQ_STAT:
    case TEST_RAN_STAT:
        return r->calls.bytes_read ? 'r' : 0;
    case TEST_PUTC:
    case TEST_PUT_BLOCK:
    case TEST_SEQ_CREATE:
    case TEST_RAN_CREATE:
        return r->calls.bytes_written ? 'w' : 0;
    default:
        return 0;
    }
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

/* The CPU quota, described: "0.20 CPU (cpu.cfs_quota_us 20000 per 100000 us, <file>)". */
static void describe_quota(const struct cgroup_info *cg, char *out, size_t len)
{
    snprintf(out, len, "%.2f CPU (%" PRId64 " us per %" PRId64 " us, %s)",
             (double)cg->cpu_quota_us / (double)cg->cpu_period_us, cg->cpu_quota_us, cg->cpu_period_us,
             cg->cpu_quota_from);
}

/* How the runner's own time split: waiting for a CPU (run-queue delay), and off the CPU without
 * waiting for one (blocked on I/O, sleeping). Seekers: summed over them. */
static void split_time(enum test_id t, const struct test_result *r, struct limiter *out)
{
    double wall = 0, delay = 0, blocked = 0;
    int known = 0;
    if (t == TEST_SEEKS && r->seeker_count) {
        known = 1;
        for (int i = 0; i < r->seeker_count; i++) {
            const struct seeker_facts *s = &r->seekers[i];
            known &= s->run_delay_known;
            wall += s->wall_s;
            delay += s->run_delay_s;
            double off = s->wall_s - s->user_s - s->sys_s - s->run_delay_s;
            blocked += off > 0 ? off : 0;
        }
    } else if (t != TEST_SEEKS && r->ev.sched_known) {
        known = 1;
        wall = r->elapsed_s;
        delay = r->ev.run_delay_s;
        double off = wall - r->user_s - r->sys_s - delay;
        blocked = off > 0 ? off : 0;
    }
    if (known && wall > 0) {
        out->run_delay_s = delay;
        out->run_delay_share = delay / wall;
        out->blocked_share = blocked / wall;
    }
}

/* bytes as "812.0 MiB" or "36 KiB" */
static const char *format_bytes(uint64_t bytes, char *out, size_t len)
{
    if (bytes >= 1048576)
        snprintf(out, len, "%.1f MiB", (double)bytes / MIB);
    else
        snprintf(out, len, "%.0f KiB", (double)bytes / 1024.0);
    return out;
}

/* What a sync() in the test wrote: the test's own device, or the devices outside it that wrote the
 * most (two: a loop device's writes reach the disk under its backing file too). Returns 1 when the
 * test's device wrote the most. */
static int sync_target(const struct test_evidence *ev, const char *device, struct limiter *out)
{
    char own[32], first[32], second[32], others[288];
    if (ev->disk_known && ev->dev_write_bytes && ev->dev_write_bytes >= ev->other_write_bytes[0]) {
        snprintf(out->sync_waited_for, sizeof(out->sync_waited_for), "%s, the test's device: %s written",
                 device && device[0] ? device : "the device", format_bytes(ev->dev_write_bytes, own, sizeof(own)));
        return 1;
    }
    if (!ev->other_write_bytes[0])
        return 0;
    format_bytes(ev->other_write_bytes[0], first, sizeof(first));
    if (ev->other_write_bytes[1])
        snprintf(others, sizeof(others), "%s and %s, not the test's device: %s and %s written", ev->other_writer[0],
                 ev->other_writer[1], first, format_bytes(ev->other_write_bytes[1], second, sizeof(second)));
    else
        snprintf(others, sizeof(others), "%s, not the test's device: %s written", ev->other_writer[0], first);
    if (ev->disk_known)
        snprintf(out->sync_waited_for, sizeof(out->sync_waited_for), "%s (the test's device %s)", others,
                 format_bytes(ev->dev_write_bytes, own, sizeof(own)));
    else
        snprintf(out->sync_waited_for, sizeof(out->sync_waited_for), "%s (the test's files are on no block device)",
                 others);
    return 0;
}

void limiter_judge(enum test_id t, const struct test_result *r, const struct limiter_context *ctx,
                   struct limiter *out)
{
    memset(out, 0, sizeof(*out));
    out->device_util = out->device_share = out->file_vs_ram = -1;
    out->run_delay_s = out->run_delay_share = out->blocked_share = out->cpu_quota_cores = out->throttle_share = -1;
    if (!results_ran(r))
        return;
    const struct test_evidence *ev = &r->ev;
    const struct cgroup_info *cg = ctx->cg;
    double wall = r->elapsed_s, cpu_s = r->user_s + r->sys_s;
    double rate = units_test_work(ctx->bp, t) / wall;
    const char *unit = units_test_unit(t);
    double cores = 1;
    if (t == TEST_SEEKS) /* seekers run in parallel: the most CPU they can use */
        cores = ctx->bp->seek_procs < ctx->cpus ? ctx->bp->seek_procs : (ctx->cpus > 0 ? ctx->cpus : 1);
    out->cpu_of_wall = cpu_s / wall / cores;
    char quota[PATH_MAX + 96] = "";
    double of_quota = -1;
    if (cg && cg->cpu_quota_us > 0) {
        out->cpu_quota_cores = (double)cg->cpu_quota_us / (double)cg->cpu_period_us;
        of_quota = cpu_s / wall / out->cpu_quota_cores;
        describe_quota(cg, quota, sizeof(quota));
    }
    /* the quota held the runner back: it allows fewer cores than the test can use, and the test
     * used (nearly) all of it */
    int quota_bound = of_quota >= 0 && out->cpu_quota_cores < cores &&
                      (of_quota >= LIMIT_CPU_OF_WALL ||
                       (ev->cg_cpu_known && ev->cg_nr_throttled && of_quota >= LIMIT_QUOTA_THROTTLED));
    split_time(t, r, out);
    double delay_share = out->run_delay_share >= 0 ? out->run_delay_share : 0;
    if (ev->disk_known && ev->interval_s > 0)
        out->device_util = ev->busy_s / ev->interval_s;
    if (ev->throttle_known && ev->throttle_s > 0) {
        out->throttle_share = ev->throttle_s / wall;
        cgroup_describe_io_limit(&cg->io_limits[ev->throttle_index], out->throttle, sizeof(out->throttle));
    }
    const char *ram_from;
    uint64_t cache_ram = limiter_cache_ram_bytes(ctx, &ram_from);
    if (t <= TEST_SEEKS && cache_ram)
        out->file_vs_ram = (double)ctx->bp->file_size_mib * MIB / (double)cache_ram;
    char dir = judged_direction(t, r);
    uint64_t test_bytes = dir == 'r' ? r->calls.bytes_read : r->calls.bytes_written;
    uint64_t dev_bytes = dir == 'r' ? ev->dev_read_bytes : ev->dev_write_bytes;
    if (dir && ev->disk_known) {
        out->judged_on = dir == 'r' ? "read" : "write";
        out->device_share = (double)dev_bytes / (double)test_bytes;
    }
    double sync_s = (double)r->calls.sync_ns / 1e9;
    out->sync_share = sync_s / wall;
    int own_sync = sync_target(ev, ctx->device, out);
    if (results_too_fast(r))
        suggest(t, ctx->bp, rate, out->suggestion, sizeof(out->suggestion));
    char quota_use[160] = "";
    if (of_quota >= 0)
        snprintf(quota_use, sizeof(quota_use), "%.0f %% of the quota; the kernel throttled the runner %" PRIu64
                 " times for %.2f s", of_quota * 100, ev->cg_nr_throttled, ev->cg_throttled_s);

    /* one byte per call measures the CPU: on a CPU, or runnable and waiting for one */
    if ((t == TEST_PUTC || t == TEST_GETC) && out->cpu_of_wall + delay_share >= LIMIT_CPU_OF_WALL) {
        if (quota_bound)
            verdict(out, LIMIT_CPU, "the CPU quota of %s set the pace: CPU time was %.0f %% of the wall time, %s; "
                    "one byte per call measures the CPU the runner is allowed", quota, out->cpu_of_wall * 100,
                    quota_use);
        else if (delay_share >= LIMIT_NOISY_RUN_DELAY)
            verdict(out, LIMIT_NOISY, "the runner waited for a CPU %.0f %% of the time (its own run-queue delay) "
                    "and ran %.0f %%: other load competed for the CPU this test measures", delay_share * 100,
                    out->cpu_of_wall * 100);
        else
            verdict(out, LIMIT_CPU, "CPU time was %.0f %% of the wall time (user %.2f s, system %.2f s; it waited "
                    "for a CPU %.0f %% of it): one byte per call keeps one core busy, so this measures the CPU and "
                    "the system-call path, not the storage", out->cpu_of_wall * 100, r->user_s, r->sys_s,
                    delay_share * 100);
        return;
    }
    /* a +++++ test is too_short whatever its sync() waited for */
    if (out->sync_share >= LIMIT_SYNC_SHARE && !results_too_fast(r)) {
        if (own_sync)
            verdict(out, LIMIT_DEVICE, "%.2f of the %.2f s went to sync(), waiting for %s%s%s", sync_s, wall,
                    out->sync_waited_for, out->throttle[0] ? "; throttled to " : "", out->throttle);
        else
            verdict(out, LIMIT_NOISY, "%.2f of the %.2f s went to sync(), which waits for every filesystem's dirty "
                    "data: %s", sync_s, wall,
                    out->sync_waited_for[0] ? out->sync_waited_for
                                            : "no block device wrote meanwhile (a network or FUSE filesystem?)");
        return;
    }
    if (ctx->memory_fs) {
        verdict(out, LIMIT_CACHED, "the files are on a memory filesystem (tmpfs): no device is involved");
        return;
    }
    if (out->device_share >= 0 && out->device_share < LIMIT_CACHED_SHARE) {
        if (dir == 'r')
            verdict(out, LIMIT_CACHED, "the device read %.1f MiB while the test read %.1f MiB (%.0f %%): the page "
                    "cache served the rest", (double)dev_bytes / MIB, (double)test_bytes / MIB,
                    out->device_share * 100);
        else
            verdict(out, LIMIT_CACHED, "the device wrote %.1f MiB while the test wrote %.1f MiB (%.0f %%), its %s "
                    "included: the rest stayed in the page cache", (double)dev_bytes / MIB,
                    (double)test_bytes / MIB, out->device_share * 100, t < TEST_SEEKS ? "fsync" : "sync()");
        return;
    }
    if ((t == TEST_SEQ_STAT || t == TEST_RAN_STAT) && !dir && ev->disk_known && ev->dev_reads == 0 &&
        r->calls.stat) {
        verdict(out, LIMIT_CACHED, "%" PRIu64 " files stat'ed with no reads from the device: the page cache held "
                "them", r->calls.stat);
        return;
    }
    int reads_file = t == TEST_REWRITE || t == TEST_GETC || t == TEST_GET_BLOCK || t == TEST_SEEKS;
    if (!ev->disk_known && reads_file && out->file_vs_ram >= 0 && out->file_vs_ram < 2.0) {
        verdict(out, LIMIT_CACHED, "no device counters to check; the file (%" PRId64 " MiB) is %.2g times the RAM "
                "the page cache can use (%.0f MiB, %s), under 2: the cache can hold much of it",
                ctx->bp->file_size_mib, out->file_vs_ram, (double)cache_ram / MIB,
                strcmp(ram_from, "physical") == 0 ? "physical" : "the memory cgroup's limit");
        return;
    }
    if (results_too_fast(r)) {
        verdict(out, LIMIT_TOO_SHORT, "took %.3f s, under bonnie++'s 0.5 s minimum (+++++); at the measured %.0f %s, "
                "%s would take at least 0.5 s", wall, rate, unit, out->suggestion);
        return;
    }
    if (out->throttle_share >= LIMIT_THROTTLE_SHARE) {
        verdict(out, LIMIT_DEVICE, "throttled to %s: the %.1f MiB read there take %.2f s at its read limit and the "
                "%.1f MiB written %.2f s at its write limit (each direction is limited on its own); the test took "
                "%.2f s", out->throttle, (double)ev->cg_read_bytes / MIB, ev->throttle_read_s,
                (double)ev->cg_write_bytes / MIB, ev->throttle_write_s, wall);
        return;
    }
    if (ev->cg_psi_io_known && ev->cg_io_pressure_pct >= LIMIT_IO_PRESSURE_PCT) {
        verdict(out, LIMIT_DEVICE, "the runner's cgroup waited for I/O %.0f %% of the time (io.pressure of %s)%s%s",
                ev->cg_io_pressure_pct, cg->pressure_dir, out->throttle[0] ? "; throttled to " : "", out->throttle);
        return;
    }
    if (out->device_util >= LIMIT_DEVICE_UTIL) {
        verdict(out, LIMIT_DEVICE, "%s was busy %.0f %% of the time (%" PRIu64 " reads, %" PRIu64 " writes, %.1f MiB "
                "moved)", ev->busiest, out->device_util * 100, ev->dev_reads, ev->dev_writes,
                (double)(ev->dev_read_bytes + ev->dev_write_bytes) / MIB);
        return;
    }
    if (quota_bound) {
        verdict(out, LIMIT_CPU, "the CPU quota of %s held the runner: CPU time was %.0f %% of the wall time%s, %s",
                quota, out->cpu_of_wall * 100, t == TEST_SEEKS ? " of the seekers' usable cores" : "", quota_use);
        return;
    }
    if (out->cpu_of_wall >= LIMIT_CPU_OF_WALL) {
        char util[32] = "an unknown share";
        if (out->device_util >= 0)
            snprintf(util, sizeof(util), "%.0f %%", out->device_util * 100);
        verdict(out, LIMIT_CPU, "CPU time was %.0f %% of the wall time%s (user %.2f s, system %.2f s), the device "
                "busy %s of it", out->cpu_of_wall * 100, t == TEST_SEEKS ? " of the seekers' usable cores" : "",
                r->user_s, r->sys_s, util);
        return;
    }
    if (delay_share >= LIMIT_NOISY_RUN_DELAY) {
        verdict(out, LIMIT_NOISY, "the runner waited for a CPU %.0f %% of the time (its own run-queue delay%s): "
                "other load competed", delay_share * 100, t == TEST_SEEKS ? ", summed over the seekers" : "");
        return;
    }
    if (ev->cg_psi_cpu_known && ev->cg_cpu_pressure_pct >= LIMIT_NOISY_CPU_PSI_PCT) {
        verdict(out, LIMIT_NOISY, "the runner's cgroup waited for a CPU %.0f %% of the time (cpu.pressure of %s): "
                "other load competed", ev->cg_cpu_pressure_pct, cg->pressure_dir);
        return;
    }
    if (ev->cpu_known && ev->steal_pct >= LIMIT_NOISY_STEAL_PCT &&
        out->cpu_of_wall + delay_share >= LIMIT_NOISY_RUN_DELAY) {
        verdict(out, LIMIT_NOISY, "CPU steal was %.0f %% while the runner ran or waited for a CPU %.0f %% of the "
                "time: the hypervisor ran someone else", ev->steal_pct, (out->cpu_of_wall + delay_share) * 100);
        return;
    }
    uint64_t dev_moved = ev->dev_read_bytes + ev->dev_write_bytes;
    uint64_t test_moved = r->calls.bytes_read + r->calls.bytes_written;
    if (t <= TEST_SEEKS && ev->disk_known && test_moved && out->blocked_share >= LIMIT_NOISY_BLOCKED &&
        dev_moved > 2 * test_moved + (16u << 20)) {
        verdict(out, LIMIT_NOISY, "the runner was off the CPU %.0f %% of the time while the device moved %.1f MiB for "
                "the test's %.1f MiB: other I/O competed for it", out->blocked_share * 100, (double)dev_moved / MIB,
                (double)test_moved / MIB);
        return;
    }
    char util[32] = "unknown", waits[96] = "";
    if (out->device_util >= 0)
        snprintf(util, sizeof(util), "%.0f %%", out->device_util * 100);
    if (out->blocked_share >= 0)
        snprintf(waits, sizeof(waits), ", waited for a CPU %.0f %%, off the CPU %.0f %% (I/O, sleeping)",
                 delay_share * 100, out->blocked_share * 100);
    verdict(out, LIMIT_UNKNOWN, "no limit reached: CPU %.0f %% of the wall time%s, device busy %s",
            out->cpu_of_wall * 100, waits, util);
}
