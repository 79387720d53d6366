/* document.c -- see document.h. */
#include "document.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "sync.h"
#include "units.h"
#include "version.h"

void document_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void document_init(struct document *d, int argc, char **argv, const struct options *o,
                   const struct system_info *sys, const char *ram_source)
{
    memset(d, 0, sizeof(*d));
    d->argc = argc;
    d->argv = argv;
    d->opts = o;
    d->sys = sys;
    d->ram_source = ram_source;
    document_now(d->started_at, sizeof(d->started_at));
}

void document_warn(struct document *d, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    for (int i = 0; i < d->warning_count; i++)
        if (strcmp(d->warnings[i], buf) == 0)
            return;
    if (d->warning_count < DOCUMENT_MAX_WARNINGS) {
        char *w = strdup(buf);
        if (w)
            d->warnings[d->warning_count++] = w;
        else
            d->failed = 1;
    }
}

static void write_calls(struct json *j, const struct sys_counts *c)
{
    json_begin_object(j, "syscalls");
    json_uint(j, "read", c->read);
    json_uint(j, "write", c->write);
    json_uint(j, "lseek", c->lseek);
    json_uint(j, "open", c->open);
    json_uint(j, "open_creat", c->creat);
    json_uint(j, "close", c->close);
    json_uint(j, "fsync", c->fsync);
    json_uint(j, "stat", c->stat);
    json_uint(j, "unlink", c->unlink);
    json_uint(j, "mkdir", c->mkdir);
    json_uint(j, "rmdir", c->rmdir);
    json_uint(j, "getdents", c->getdents);
    json_uint(j, "link", c->link);
    json_uint(j, "symlink", c->symlink);
    json_uint(j, "sync", c->sync);
    json_uint(j, "pipe_read", c->ipc_read);
    json_uint(j, "pipe_write", c->ipc_write);
    json_end_object(j);
}

static void json_opt_double(struct json *j, const char *key, int known, double value)
{
    if (known)
        json_double(j, key, value);
    else
        json_null(j, key);
}

static void json_opt_uint(struct json *j, const char *key, int known, uint64_t value)
{
    if (known)
        json_uint(j, key, value);
    else
        json_null(j, key);
}

/* evidence.seekers: what each seeker process measured around its own seeks (at most
 * DOCUMENT_MAX_SEEKERS of them, in the order they reported). */
static void write_seekers(struct json *j, const struct test_result *r)
{
    if (!r->seekers) {
        json_null(j, "seekers");
        return;
    }
    json_begin_array(j, "seekers");
    for (int i = 0; i < r->seeker_count && i < DOCUMENT_MAX_SEEKERS; i++) {
        const struct seeker_facts *s = &r->seekers[i];
        double off = s->wall_s - s->user_s - s->sys_s - (s->run_delay_known ? s->run_delay_s : 0);
        json_begin_object(j, NULL);
        json_uint(j, "seeks", s->seeks);
        json_double(j, "wall_s", s->wall_s);
        json_double(j, "user_s", s->user_s);
        json_double(j, "sys_s", s->sys_s);
        json_opt_double(j, "cpu_pct", s->wall_s > 0, (s->user_s + s->sys_s) / s->wall_s * 100);
        json_opt_double(j, "run_delay_s", s->run_delay_known, s->run_delay_s);
        json_opt_double(j, "blocked_s", s->run_delay_known, off > 0 ? off : 0);
        json_int(j, "block_in", s->block_in);
        json_int(j, "block_out", s->block_out);
        json_end_object(j);
    }
    json_end_array(j);
}

/* tests[<test>]["limiter"]: the verdict, its sentence and the numbers behind it (runner/README.md). */
static void write_limiter(struct json *j, const struct test_result *r, const struct limiter *lim)
{
    const char *code = limiter_code_name(lim->code);
    if (!code) {
        json_null(j, "limiter");
        return;
    }
    const struct test_evidence *ev = &r->ev;
    uint64_t requests = ev->dev_reads + ev->dev_writes;
    double cpu_s = r->user_s + r->sys_s;
    json_begin_object(j, "limiter");
    json_string(j, "code", code);
    json_string(j, "text", lim->text);
    json_begin_object(j, "evidence");
    json_double(j, "cpu_of_wall_pct", lim->cpu_of_wall * 100);
    json_opt_double(j, "run_delay_s", lim->run_delay_s >= 0, lim->run_delay_s);
    json_opt_double(j, "run_delay_pct", lim->run_delay_share >= 0, lim->run_delay_share * 100);
    json_opt_double(j, "blocked_pct", lim->blocked_share >= 0, lim->blocked_share * 100);
    json_opt_double(j, "cpu_quota_cores", lim->cpu_quota_cores >= 0, lim->cpu_quota_cores);
    json_opt_double(j, "cpu_of_quota_pct", lim->cpu_quota_cores > 0,
                    lim->cpu_quota_cores > 0 ? cpu_s / r->elapsed_s / lim->cpu_quota_cores * 100 : 0);
    json_opt_uint(j, "cpu_throttled_count", ev->cg_cpu_known, ev->cg_nr_throttled);
    json_opt_double(j, "cpu_throttled_s", ev->cg_cpu_known, ev->cg_throttled_s);
    json_opt_double(j, "device_util_pct", lim->device_util >= 0, lim->device_util * 100);
    json_string(j, "device_busiest", lim->device_util >= 0 && ev->busiest[0] ? ev->busiest : NULL);
    json_opt_uint(j, "device_reads", ev->disk_known, ev->dev_reads);
    json_opt_uint(j, "device_writes", ev->disk_known, ev->dev_writes);
    json_opt_uint(j, "device_read_bytes", ev->disk_known, ev->dev_read_bytes);
    json_opt_uint(j, "device_write_bytes", ev->disk_known, ev->dev_write_bytes);
    json_opt_double(j, "device_avg_request_bytes", ev->disk_known && requests,
                    requests ? (double)(ev->dev_read_bytes + ev->dev_write_bytes) / (double)requests : 0);
    json_string(j, "judged_on", lim->judged_on);
    json_opt_double(j, "device_share_pct", lim->device_share >= 0, lim->device_share * 100);
    json_string(j, "throttle", lim->throttle[0] ? lim->throttle : NULL);
    json_opt_double(j, "throttle_s", ev->throttle_known, ev->throttle_s);
    json_opt_double(j, "throttle_pct", lim->throttle_share >= 0, lim->throttle_share * 100);
    json_opt_uint(j, "cgroup_read_bytes", ev->throttle_known, ev->cg_read_bytes);
    json_opt_uint(j, "cgroup_write_bytes", ev->throttle_known, ev->cg_write_bytes);
    json_opt_double(j, "cgroup_cpu_pressure_pct", ev->cg_psi_cpu_known, ev->cg_cpu_pressure_pct);
    json_opt_double(j, "cgroup_io_pressure_pct", ev->cg_psi_io_known, ev->cg_io_pressure_pct);
    json_opt_double(j, "steal_pct", ev->cpu_known, ev->steal_pct);
    json_opt_double(j, "cpu_pressure_pct", ev->psi_cpu_known, ev->cpu_pressure_pct);
    json_opt_double(j, "io_pressure_pct", ev->psi_io_known, ev->io_pressure_pct);
    json_opt_uint(j, "block_in", ev->sampled, (uint64_t)ev->block_in);
    json_opt_uint(j, "block_out", ev->sampled, (uint64_t)ev->block_out);
    json_opt_uint(j, "voluntary_switches", ev->sampled, (uint64_t)ev->voluntary_switches);
    json_opt_uint(j, "involuntary_switches", ev->sampled, (uint64_t)ev->involuntary_switches);
    json_double(j, "sync_s", (double)r->calls.sync_ns / 1e9);
    json_double(j, "sync_pct", lim->sync_share * 100);
    json_string(j, "sync_waited_for", r->calls.sync && lim->sync_waited_for[0] ? lim->sync_waited_for : NULL);
    json_opt_double(j, "file_vs_ram", lim->file_vs_ram >= 0, lim->file_vs_ram);
    json_string(j, "suggestion", lim->suggestion[0] ? lim->suggestion : NULL);
    write_seekers(j, r);
    json_end_object(j);
    json_end_object(j);
}

static void write_test(struct json *j, const struct run_params *p, enum test_id t,
                       const struct test_result *r, const struct limiter *lim)
{
    char lat[16];
    json_begin_object(j, results_test_names[t]);
    int ran = results_ran(r), fast = results_too_fast(r);
    json_string(j, "status", !ran ? "not_run" : fast ? "too_fast" : "ok");
    json_string(j, "unit", units_test_unit(t));
    if (ran && !fast) {
        double rate = report_rate(p, r, t);
        if (t == TEST_SEEKS)
            json_double(j, "value", rate);
        else
            json_int(j, "value", (int64_t)rate);
        json_int(j, "cpu_pct", report_cpu_pct(r));
    } else {
        json_null(j, "value");
        json_null(j, "cpu_pct");
    }
    if (ran) {
        json_double(j, "rate_measured", report_rate(p, r, t));
        json_double(j, "wall_s", r->elapsed_s);
        json_double(j, "user_s", r->user_s);
        json_double(j, "sys_s", r->sys_s);
        json_double(j, "cpu_s", r->user_s + r->sys_s);
        json_int(j, "latency_us", (int64_t)(r->latency_s * 1e6));
        json_string(j, "latency_text", units_format_latency(lat, r->latency_s));
        json_uint(j, "ops", r->ops);
        json_uint(j, "bytes_read", r->calls.bytes_read);
        json_uint(j, "bytes_written", r->calls.bytes_written);
        uint64_t moved = r->calls.bytes_read + r->calls.bytes_written;
        uint64_t ios = r->calls.read + r->calls.write;
        json_uint(j, "bytes_moved", moved);
        if (ios)
            json_double(j, "avg_io_bytes", (double)moved / (double)ios);
        else
            json_null(j, "avg_io_bytes");
        write_calls(j, &r->calls);
    }
    if (t == TEST_SEEKS)
        json_string(j, "cpu_pct_meaning", "seekers_own"); /* bonnie++ 2.00a: its process, once per seeker */
    write_limiter(j, r, lim);
    json_end_object(j);
}

void document_add_run(struct document *d, const struct run_params *p, const char *csv_line,
                      const struct test_result res[TEST_COUNT], const struct limiter lim[TEST_COUNT])
{
    struct json j;
    if (d->run_count++ && sbuf_append(&d->runs, ",", 1))
        d->failed = 1;
    json_init(&j, &d->runs);
    json_begin_object(&j, NULL);
    json_int(&j, "index", d->run_count);
    json_string(&j, "seed", p->seed);
    json_string(&j, "csv", csv_line);
    json_begin_object(&j, "tests");
    for (int t = 0; t < TEST_COUNT; t++)
        write_test(&j, p, (enum test_id)t, &res[t], &lim[t]);
    json_end_object(&j);
    json_end_object(&j);
    if (json_failed(&j))
        d->failed = 1;
    for (int t = 0; t < TEST_COUNT; t++)
        if (results_too_fast(&res[t]))
            document_warn(d, "%s took %.3f s, under bonnie++'s 0.5 s minimum: reported as +++++ "
                          "(its measured rate is in rate_measured)", results_test_names[t], res[t].elapsed_s);
}

/* system.cgroup: the limits the kernel enforces on the runner (cgroup.h). */
static void write_cgroup(struct json *j, const struct cgroup_info *cg)
{
    char dev[32];
    json_begin_object(j, "cgroup");
    json_string(j, "version", cg->v1 && cg->v2 ? "hybrid" : cg->v1 ? "v1" : cg->v2 ? "v2" : NULL);
    json_string(j, "memory_path", cg->memory_path[0] ? cg->memory_path : NULL);
    json_opt_uint(j, "memory_limit_bytes", cg->memory_limit_bytes != CGROUP_NONE, cg->memory_limit_bytes);
    json_string(j, "memory_limit_from", cg->memory_limit_from[0] ? cg->memory_limit_from : NULL);
    json_opt_double(j, "cpu_quota_cores", cg->cpu_quota_us > 0,
                    cg->cpu_quota_us > 0 ? (double)cg->cpu_quota_us / (double)cg->cpu_period_us : 0);
    json_opt_uint(j, "cpu_quota_us", cg->cpu_quota_us > 0, (uint64_t)cg->cpu_quota_us);
    json_opt_uint(j, "cpu_period_us", cg->cpu_quota_us > 0, (uint64_t)cg->cpu_period_us);
    json_string(j, "cpu_quota_from", cg->cpu_quota_from[0] ? cg->cpu_quota_from : NULL);
    json_begin_array(j, "io_limits");
    for (int i = 0; i < cg->io_limit_count; i++) {
        const struct cgroup_io_limit *l = &cg->io_limits[i];
        snprintf(dev, sizeof(dev), "%u:%u", l->dev.major, l->dev.minor);
        json_begin_object(j, NULL);
        json_string(j, "device", dev);
        json_string(j, "name", l->dev.name);
        json_opt_uint(j, "read_bps", l->read_bps != CGROUP_NONE, l->read_bps);
        json_opt_uint(j, "write_bps", l->write_bps != CGROUP_NONE, l->write_bps);
        json_opt_uint(j, "read_iops", l->read_iops != CGROUP_NONE, l->read_iops);
        json_opt_uint(j, "write_iops", l->write_iops != CGROUP_NONE, l->write_iops);
        json_string(j, "from", l->dir);
        json_end_object(j);
    }
    json_end_array(j);
    json_string(j, "pressure_from", cg->pressure_dir[0] ? cg->pressure_dir : NULL);
    json_end_object(j);
}

static void write_system(struct json *j, const struct system_info *s)
{
    char dev[32];
    json_begin_object(j, "system");
    json_string(j, "hostname", s->hostname);
    json_begin_object(j, "kernel");
    json_string(j, "name", s->kernel_name);
    json_string(j, "release", s->kernel_release);
    json_string(j, "version", s->kernel_version);
    json_string(j, "machine", s->machine);
    json_end_object(j);
    json_string(j, "os", s->os_name[0] ? s->os_name : NULL);
    json_begin_object(j, "cpu");
    json_string(j, "model", s->cpu_model[0] ? s->cpu_model : NULL);
    json_int(j, "count_online", s->cpu_count_online);
    json_int(j, "count_configured", s->cpu_count_configured);
    json_end_object(j);
    json_int(j, "ram_bytes", s->ram_bytes);
    json_begin_object(j, "filesystem");
    json_string(j, "dir", s->dir);
    json_int(j, "total_bytes", s->fs_total_bytes);
    json_int(j, "free_bytes", s->fs_free_bytes);
    if (s->mount.found) {
        snprintf(dev, sizeof(dev), "%u:%u", s->mount.major, s->mount.minor);
        json_string(j, "type", s->mount.fs_type);
        json_string(j, "device", dev);
        json_string(j, "mount_point", s->mount.mount_point);
        json_string(j, "mount_root", s->mount.root);
        json_string(j, "mount_source", s->mount.source);
        json_string(j, "mount_options", s->mount.options);
        json_string(j, "super_options", s->mount.super_options);
    } else {
        json_null(j, "type");
        json_null(j, "device");
        json_null(j, "mount_point");
        json_null(j, "mount_root");
        json_null(j, "mount_source");
        json_null(j, "mount_options");
        json_null(j, "super_options");
    }
    json_end_object(j);
    const struct block_info *b = &s->block;
    if (!b->found) {
        json_null(j, "block_device");
    } else {
        json_begin_object(j, "block_device");
        json_string(j, "name", b->name);
        json_string(j, "disk", b->disk);
        json_string(j, "scheduler", b->scheduler[0] ? b->scheduler : NULL);
        if (b->rotational < 0)
            json_null(j, "rotational");
        else
            json_bool(j, "rotational", b->rotational);
        json_int(j, "size_bytes", b->size_bytes);
        json_string(j, "write_cache", b->write_cache[0] ? b->write_cache : NULL);
        if (b->nr_requests < 0)
            json_null(j, "nr_requests");
        else
            json_int(j, "nr_requests", b->nr_requests);
        if (b->read_ahead_kb < 0)
            json_null(j, "read_ahead_kb");
        else
            json_int(j, "read_ahead_kb", b->read_ahead_kb);
        json_string(j, "loop_backing_file", b->loop_backing_file[0] ? b->loop_backing_file : NULL);
        json_begin_array(j, "disks");
        for (int i = 0; i < b->disk_count; i++) {
            const struct disk_settings *q = &b->disks[i];
            json_begin_object(j, NULL);
            json_string(j, "name", q->name);
            json_string(j, "scheduler", q->scheduler[0] ? q->scheduler : NULL);
            if (q->rotational < 0)
                json_null(j, "rotational");
            else
                json_bool(j, "rotational", q->rotational);
            json_string(j, "write_cache", q->write_cache[0] ? q->write_cache : NULL);
            json_opt_uint(j, "nr_requests", q->nr_requests >= 0, (uint64_t)q->nr_requests);
            json_opt_uint(j, "read_ahead_kb", q->read_ahead_kb >= 0, (uint64_t)q->read_ahead_kb);
            json_end_object(j);
        }
        json_end_array(j);
        if (!b->md.found) {
            json_null(j, "md");
        } else {
            const struct md_info *m = &b->md;
            json_begin_object(j, "md");
            json_string(j, "name", m->name);
            json_string(j, "level", m->level);
            if (m->chunk_bytes < 0)
                json_null(j, "chunk_bytes");
            else
                json_int(j, "chunk_bytes", m->chunk_bytes);
            if (m->raid_disks < 0)
                json_null(j, "raid_disks");
            else
                json_int(j, "raid_disks", m->raid_disks);
            json_int(j, "member_count", m->member_count);
            json_begin_array(j, "members");
            for (int i = 0; i < m->member_count; i++)
                json_string(j, NULL, m->members[i]);
            json_end_array(j);
            json_string(j, "state", m->state[0] ? m->state : NULL);
            if (m->degraded < 0)
                json_null(j, "degraded");
            else
                json_int(j, "degraded", m->degraded);
            json_string(j, "sync_action", m->sync_action[0] ? m->sync_action : NULL);
            json_string(j, "sync_completed", m->sync_completed[0] ? m->sync_completed : NULL);
            json_begin_array(j, "devices");
            for (int i = 0; i < m->device_count; i++) {
                const struct md_device *dev = &m->devices[i];
                json_begin_object(j, NULL);
                json_string(j, "name", dev->name);
                json_string(j, "role", dev->role);
                json_string(j, "state", dev->state[0] ? dev->state : NULL);
                if (dev->slot < 0)
                    json_null(j, "slot");
                else
                    json_int(j, "slot", dev->slot);
                json_end_object(j);
            }
            json_end_array(j);
            json_end_object(j);
        }
        json_end_object(j);
    }
    write_cgroup(j, &s->cgroup);
    json_end_object(j);
}

static void write_parameters(struct json *j, const struct document *d)
{
    const struct options *o = d->opts;
    json_begin_object(j, "parameters");
    json_string(j, "dir", o->dir);
    json_int(j, "file_size_mib", o->bp.file_size_mib);
    json_int(j, "byte_io_mib", o->bp.byte_io_mib);
    json_int(j, "io_chunk_bytes", o->bp.io_chunk_bytes);
    json_int(j, "seeks", o->bp.seeks);
    json_int(j, "seek_procs", o->bp.seek_procs);
    json_int(j, "num_files", o->bp.num_files);
    json_int(j, "max_size", o->bp.max_size);
    json_int(j, "min_size", o->bp.min_size);
    json_int(j, "num_dirs", o->bp.num_dirs);
    json_int(j, "file_chunk_bytes", o->bp.file_chunk_bytes);
    json_int(j, "ram_mib", o->ram_mib);
    json_string(j, "ram_source", d->ram_source);
    json_int(j, "concurrency", o->bp.concurrency);
    json_int(j, "test_count", o->test_count < 0 ? 1 : o->test_count);
    json_string(j, "random_file", o->random_file);
    json_string(j, "sync", o->sync_mode == SYNC_SEM ? "semaphore" : o->sync_mode == SYNC_PROMPT ? "prompt" : NULL);
    json_bool(j, "fsync_each", o->bp.fsync_each);
    json_bool(j, "direct_io", o->bp.direct_io);
    json_string(j, "char_mode", o->bp.char_mode == CHAR_MODE_STDIO ? "stdio" : "syscall");
    if (o->bp.char_mode == CHAR_MODE_STDIO && o->bp.stdio_buffer_bytes)
        json_int(j, "stdio_buffer_bytes", (int64_t)o->bp.stdio_buffer_bytes);
    else
        json_null(j, "stdio_buffer_bytes");
    json_end_object(j);
}

/* argv as given, except the token: "--token T" -> "--token", "***"; "--token=T" -> "--token=***".
 * The document is posted, stored, shown on pages and spooled; the token must reach none of them. */
static void write_command_line(struct json *j, int argc, char **argv)
{
    json_begin_array(j, "command_line");
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        switch (options_secret_arg(arg)) {
        case OPTIONS_SECRET_NEXT:
            json_string(j, NULL, arg);
            if (i + 1 < argc) {
                json_string(j, NULL, OPTIONS_REDACTED);
                i++;
            }
            break;
        case OPTIONS_SECRET_INLINE: {
            struct sbuf shown = {0};
            size_t name_len = strcspn(arg, "=") + 1;
            if (sbuf_append(&shown, arg, name_len) || sbuf_append(&shown, OPTIONS_REDACTED, strlen(OPTIONS_REDACTED)))
                j->failed = 1;
            json_string(j, NULL, sbuf_str(&shown));
            sbuf_free(&shown);
            break;
        }
        default:
            json_string(j, NULL, arg);
        }
    }
    json_end_array(j);
}

int document_render(const struct document *d, struct sbuf *out)
{
    struct json j;
    json_init(&j, out);
    json_begin_object(&j, NULL);
    json_string(&j, "schema", DOCUMENT_SCHEMA);
    json_begin_object(&j, "runner");
    json_string(&j, "name", RUNNER_NAME "-runner");
    json_string(&j, "version", RUNNER_VERSION);
    json_string(&j, "csv_version", RUNNER_NAME "-" RUNNER_VERSION);
    json_end_object(&j);
    write_command_line(&j, d->argc, d->argv);
    json_string(&j, "started_at", d->started_at);
    json_string(&j, "finished_at", d->finished_at[0] ? d->finished_at : NULL);
    write_parameters(&j, d);
    write_system(&j, d->sys);
    json_begin_array(&j, "runs");
    json_raw(&j, NULL, sbuf_str(&d->runs));
    /* json_raw counted one value; the run texts carry their own commas */
    json_end_array(&j);
    json_begin_array(&j, "warnings");
    for (int i = 0; i < d->warning_count; i++)
        json_string(&j, NULL, d->warnings[i]);
    json_end_array(&j);
    json_end_object(&j);
    if (d->failed || json_failed(&j))
        return -1;
    return sbuf_append(out, "\n", 1);
}

void document_free(struct document *d)
{
    for (int i = 0; i < d->warning_count; i++)
        free(d->warnings[i]);
    d->warning_count = 0;
    sbuf_free(&d->runs);
}
