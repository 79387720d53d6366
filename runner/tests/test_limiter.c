/* test_limiter.c -- each verdict rule on made-up results, the outside engineer's cases among them:
 * a throttled loop device in a small memory cgroup, a shared host's CPU pressure, a CPU quota, a
 * tmpfs test that spent its time in sync(). */
#include "testhelp.h"

#include "limiter.h"

#define MiB (1024.0 * 1024.0)

static struct test_result result(double wall, double user, double sys)
{
    struct test_result r;
    memset(&r, 0, sizeof(r));
    r.elapsed_s = wall;
    r.user_s = user;
    r.sys_s = sys;
    r.ev.sampled = 1;
    r.ev.interval_s = wall;
    r.ev.sched_known = 1;
    return r;
}

static const char *judge(enum test_id t, const struct test_result *r, const struct limiter_context *ctx,
                         struct limiter *lim)
{
    limiter_judge(t, r, ctx, lim);
    return limiter_code_name(lim->code);
}

int main(void)
{
    struct bench_params bp;
    memset(&bp, 0, sizeof(bp));
    bp.file_size_mib = 4096;
    bp.byte_io_mib = 3;
    bp.io_chunk_bytes = 8192;
    bp.seeks = 8192;
    bp.seek_procs = 5;
    bp.num_files = 16;
    static struct cgroup_info cg;
    memset(&cg, 0, sizeof(cg));
    cg.memory_limit_bytes = CGROUP_NONE;
    cg.cpu_quota_us = cg.cpu_period_us = -1;
    struct limiter_context ctx = {.bp = &bp, .ram_mib = 1024, .cg = &cg, .device = "loop0", .cpus = 2};
    struct limiter lim;
    const char *from;

    /* the RAM the page cache can use */
    test_cond("no memory cgroup: the physical RAM", limiter_cache_ram_bytes(&ctx, &from) == 1024u << 20 &&
              strcmp(from, "physical") == 0);
    cg.memory_limit_bytes = 128u << 20;
    test_cond("a memory cgroup under the RAM: its limit", limiter_cache_ram_bytes(&ctx, &from) == 128u << 20 &&
              strcmp(from, "memory_cgroup") == 0);

    /* per-char tests */
    struct test_result r = result(2.0, 0.2, 1.7);
    test_str_eq("per-char at 95 % CPU: cpu_bound", judge(TEST_PUTC, &r, &ctx, &lim), "cpu_bound");
    ctx.memory_fs = 1;
    test_str_eq("per-char on tmpfs is still cpu_bound", judge(TEST_PUTC, &r, &ctx, &lim), "cpu_bound");
    r = result(2.0, 0.1, 0.3);
    r.ev.run_delay_s = 1.58;
    cg.cpu_quota_us = 20000;
    cg.cpu_period_us = 100000;
    strcpy(cg.cpu_quota_from, "/sys/fs/cgroup/cpu/bench/cpu.cfs_quota_us");
    r.ev.cg_cpu_known = 1;
    r.ev.cg_nr_throttled = 19;
    r.ev.cg_throttled_s = 1.5;
    test_str_eq("per-char at a 0.2-CPU quota, waiting the rest: cpu_bound", judge(TEST_GETC, &r, &ctx, &lim),
                "cpu_bound");
    test_cond("... naming the quota, not other tasks", strstr(lim.text, "CPU quota of 0.20 CPU") &&
              strstr(lim.text, "cpu.cfs_quota_us") && strstr(lim.text, "throttled the runner 19 times") &&
              lim.cpu_quota_cores > 0.199 && lim.cpu_quota_cores < 0.201);
    cg.cpu_quota_us = cg.cpu_period_us = -1;
    r.ev.cg_cpu_known = 0;
    r = result(2.0, 0.3, 0.74);
    r.ev.run_delay_s = 0.9;
    test_str_eq("per-char that waited 45 % for a CPU without a quota: noisy", judge(TEST_PUTC, &r, &ctx, &lim),
                "noisy");
    test_cond("... the runner's own wait", strstr(lim.text, "waited for a CPU 45 %") && lim.run_delay_share > 0.449);

    /* tmpfs */
    r = result(2.0, 0.0, 1.9);
    test_str_eq("block read on tmpfs: cached", judge(TEST_GET_BLOCK, &r, &ctx, &lim), "cached");
    r = result(9.40, 0.01, 0.02);
    r.calls.sync = 1;
    r.calls.sync_ns = 9370000000;
    r.ev.run_delay_s = 0.0;
    strcpy(r.ev.other_writer[0], "vda");
    r.ev.other_write_bytes[0] = 812u << 20;
    test_str_eq("a tmpfs create that spent 9.37 of 9.40 s in sync(): noisy", judge(TEST_SEQ_CREATE, &r, &ctx, &lim),
                "noisy");
    test_cond("... naming what the sync() waited for", strstr(lim.text, "9.37 of the 9.40 s went to sync()") &&
              strstr(lim.text, "vda, not the test's device: 812.0 MiB written (the test's files are on no block "
                               "device)") && lim.sync_share > 0.99);
    r.elapsed_s = 0.3;
    r.calls.sync_ns = 200000000;
    test_str_eq("a +++++ test is too_short, or cached on tmpfs, whatever its sync()",
                judge(TEST_SEQ_CREATE, &r, &ctx, &lim), "cached");
    ctx.memory_fs = 0;

    /* cached from the device counters */
    r = result(2.0, 0.0, 0.5);
    r.calls.bytes_read = 1 << 30;
    r.ev.disk_known = 1;
    test_str_eq("reads with no device reads: cached", judge(TEST_GET_BLOCK, &r, &ctx, &lim), "cached");
    test_cond("... judged on reads, 0 % from the device", strcmp(lim.judged_on, "read") == 0 && lim.device_share == 0);
    r.ev.dev_reads = 1000;
    r.ev.dev_read_bytes = 1 << 30;
    r.ev.busy_s = 1.9;
    strcpy(r.ev.busiest, "sda");
    test_str_eq("the device read it all, busy 95 %: device_bound", judge(TEST_GET_BLOCK, &r, &ctx, &lim),
                "device_bound");
    test_cond("... naming the busy device", lim.device_util > 0.94 && lim.device_util < 0.96 &&
              strstr(lim.text, "sda was busy 95 %"));
    r = result(3.0, 0.0, 0.2);
    r.calls.bytes_written = 1 << 30;
    r.calls.fsync = 1;
    r.ev.disk_known = 1;
    r.ev.dev_write_bytes = 100u << 20;
    test_str_eq("writes the device never saw by the end of the fsync: cached", judge(TEST_PUT_BLOCK, &r, &ctx, &lim),
                "cached");

    /* the outside engineer's case 1: a 256 MiB file, a 128 MiB memory cgroup, a 20 MiB/s throttle */
    bp.file_size_mib = 256;
    cg.memory_limit_bytes = 128u << 20;
    cg.io_limit_count = 1;
    cg.io_limits[0] = (struct cgroup_io_limit){.dev = {"loop0", 7, 0}, .read_bps = 20971520, .write_bps = 20971520,
                                               .read_iops = CGROUP_NONE, .write_iops = CGROUP_NONE};
    strcpy(cg.io_limits[0].dir, "/sys/fs/cgroup/blkio/bench");
    r = result(12.9, 0.0, 0.3);
    r.calls.bytes_read = 256u << 20;
    r.ev.disk_known = 1;
    r.ev.dev_reads = 2048;
    r.ev.dev_read_bytes = 268u * 1000 * 1000;
    r.ev.busy_s = 1.0; /* a throttle never shows as utilisation */
    r.ev.throttle_known = 1;
    r.ev.cg_read_bytes = 256u << 20;
    r.ev.throttle_s = r.ev.throttle_read_s = 12.8;
    r.ev.throttle_write_s = 0;
    r.ev.psi_io_known = 1;
    r.ev.io_pressure_pct = 77;
    test_str_eq("the file under twice the cgroup's memory, the device read it all: not cached but device_bound",
                judge(TEST_GET_BLOCK, &r, &ctx, &lim), "device_bound");
    test_cond("... throttled to 20 MiB/s by the cgroup, in the text and the evidence",
              strstr(lim.text, "throttled to 20 MiB/s read, 20 MiB/s write on loop0 (7:0) by the cgroup "
                               "/sys/fs/cgroup/blkio/bench") &&
              strstr(lim.text, "the 256.0 MiB read there take 12.80 s at its read limit and the 0.0 MiB written 0.00 s") &&
              strstr(lim.throttle, "20 MiB/s read") && lim.throttle_share > 0.99 && lim.file_vs_ram > 1.99 &&
              lim.file_vs_ram < 2.01);
    r.ev.disk_known = 0;
    r.ev.throttle_known = 0;
    test_str_eq("no device counters: the 2 x RAM hint decides, with the cgroup's RAM; twice it is not cached",
                judge(TEST_GET_BLOCK, &r, &ctx, &lim), "unknown");
    bp.file_size_mib = 192;
    test_str_eq("... a file under twice the cgroup's 128 MiB: cached", judge(TEST_GET_BLOCK, &r, &ctx, &lim),
                "cached");
    test_cond("... saying whose RAM", strstr(lim.text, "the memory cgroup's limit") != NULL);
    bp.file_size_mib = 4096;
    cg.io_limit_count = 0;
    cg.memory_limit_bytes = CGROUP_NONE;

    /* the cgroup's own I/O pressure */
    r = result(5.0, 0.1, 0.2);
    r.calls.bytes_read = 64u << 20;
    r.ev.disk_known = 1;
    r.ev.dev_read_bytes = 64u << 20;
    r.ev.cg_psi_io_known = 1;
    r.ev.cg_io_pressure_pct = 70;
    strcpy(cg.pressure_dir, "/sys/fs/cgroup/bench");
    test_str_eq("the runner's cgroup waited for I/O 70 %: device_bound", judge(TEST_GET_BLOCK, &r, &ctx, &lim),
                "device_bound");
    cg.pressure_dir[0] = '\0';

    /* the machine's CPU pressure is not the runner's (case 3) */
    r = result(2.0, 0.0, 0.5);
    r.calls.bytes_read = 1 << 30;
    r.ev.disk_known = 1;
    r.ev.dev_read_bytes = 1 << 30;
    r.ev.busy_s = 0.5;
    r.ev.psi_cpu_known = 1;
    r.ev.cpu_pressure_pct = 97;
    r.ev.run_delay_s = 0.02;
    test_str_eq("a shared host's CPU pressure of 97 % with the runner waiting 1 %: not noisy",
                judge(TEST_GET_BLOCK, &r, &ctx, &lim), "unknown");
    test_cond("... the unknown says where the time went", strstr(lim.text, "waited for a CPU 1 %") &&
              strstr(lim.text, "off the CPU 74 %"));
    r.ev.run_delay_s = 0.6;
    test_str_eq("the runner itself waited 30 % for a CPU: noisy", judge(TEST_GET_BLOCK, &r, &ctx, &lim), "noisy");
    r.ev.run_delay_s = 0.0;
    r.ev.cpu_known = 1;
    r.ev.steal_pct = 30;
    r.sys_s = 0.3;
    test_str_eq("steal while the runner hardly wanted a CPU: not noisy", judge(TEST_GET_BLOCK, &r, &ctx, &lim),
                "unknown");
    r.sys_s = 0.9;
    test_str_eq("steal 30 % while it ran 45 %: noisy", judge(TEST_GET_BLOCK, &r, &ctx, &lim), "noisy");
    r.ev.steal_pct = 0;
    r.sys_s = 1.9;
    test_str_eq("CPU 95 %, device 25 %: cpu_bound", judge(TEST_GET_BLOCK, &r, &ctx, &lim), "cpu_bound");
    r = result(4.0, 0.0, 0.4);
    r.calls.bytes_read = 64u << 20;
    r.ev.disk_known = 1;
    r.ev.dev_read_bytes = 900u << 20;
    r.ev.busy_s = 2.0;
    test_str_eq("off the CPU 90 % while the device moved 14 times the test's bytes: noisy",
                judge(TEST_GET_BLOCK, &r, &ctx, &lim), "noisy");
    test_cond("... other I/O", strstr(lim.text, "other I/O competed") != NULL);

    /* a CPU quota on a test that is not per-char */
    cg.cpu_quota_us = 50000;
    cg.cpu_period_us = 100000;
    r = result(4.0, 0.4, 1.5);
    r.calls.bytes_written = 1 << 30;
    r.ev.disk_known = 1;
    r.ev.dev_write_bytes = 1 << 30;
    r.ev.busy_s = 1.0;
    r.ev.run_delay_s = 2.0;
    test_str_eq("48 % of the wall time at a 0.5-CPU quota: cpu_bound", judge(TEST_PUT_BLOCK, &r, &ctx, &lim),
                "cpu_bound");
    test_cond("... naming the quota", strstr(lim.text, "the CPU quota of 0.50 CPU") != NULL);
    cg.cpu_quota_us = cg.cpu_period_us = -1;

    /* sync() on the test's own device */
    r = result(4.0, 0.1, 0.2);
    r.calls.sync = 1;
    r.calls.sync_ns = 3000000000;
    r.ev.disk_known = 1;
    r.ev.dev_write_bytes = 300u << 20;
    r.ev.other_write_bytes[0] = 1u << 20;
    test_str_eq("75 % in a sync() that wrote the test's device: device_bound", judge(TEST_SEQ_DEL, &r, &ctx, &lim),
                "device_bound");
    test_cond("... naming it", strstr(lim.sync_waited_for, "loop0, the test's device: 300.0 MiB") != NULL);

    /* short tests, seekers, not run */
    r = result(0.25, 0.0, 0.1);
    r.ev.disk_known = 1;
    r.ev.dev_writes = 10;
    test_str_eq("under 0.5 s: too_short", judge(TEST_SEQ_CREATE, &r, &ctx, &lim), "too_short");
    test_str_eq("... with the -n that takes 0.5 s at 65536 files/s", lim.suggestion, "-n 39");
    r = result(1.0, 1.0, 0.0);
    r.ev.sched_known = 0;
    struct seeker_facts seekers[2] = {{.wall_s = 1.0, .user_s = 0.5, .run_delay_known = 1, .run_delay_s = 0.4},
                                      {.wall_s = 1.0, .user_s = 0.5, .run_delay_known = 1, .run_delay_s = 0.2}};
    r.seekers = seekers;
    r.seeker_count = 2;
    judge(TEST_SEEKS, &r, &ctx, &lim);
    test_cond("seekers' CPU is divided by the cores they can use", lim.cpu_of_wall > 0.49 && lim.cpu_of_wall < 0.51);
    test_cond("seekers' waits are their own, summed", lim.run_delay_s > 0.599 && lim.run_delay_s < 0.601 &&
              lim.run_delay_share > 0.299 && lim.run_delay_share < 0.301 && lim.blocked_share > 0.199 &&
              lim.blocked_share < 0.201);
    test_str_eq("... and they waited 30 % for a CPU: noisy", limiter_code_name(lim.code), "noisy");
    struct test_result not_run;
    memset(&not_run, 0, sizeof(not_run));
    test_cond("not run: no verdict", judge(TEST_GETC, &not_run, &ctx, &lim) == NULL && lim.code == LIMIT_NONE);

    test_report();
    return 0;
}
