/* test_evidence.c -- the /proc parsers and the sysfs walk on fixtures, and each verdict rule on
 * made-up results (issue 12: evidence per test). */
#include "testhelp.h"

#include "evidence.h"

static char *slurp(const char *path)
{
    static char buf[65536];
    FILE *fp = fopen(path, "r");
    size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = '\0';
    return buf;
}

static struct test_result result(double wall, double user, double sys)
{
    struct test_result r;
    memset(&r, 0, sizeof(r));
    r.elapsed_s = wall;
    r.user_s = user;
    r.sys_s = sys;
    r.ev.sampled = 1;
    r.ev.interval_s = wall;
    return r;
}

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    char path[4096], backing[4096], disks[EVIDENCE_MAX_DISKS][EVIDENCE_NAME_LEN];
    struct disk_counters dc;
    struct cpu_counters cc;
    uint64_t us;

    /* /proc parsers */
    snprintf(path, sizeof(path), "%s/diskstats", fx);
    char *text = slurp(path);
    test_cond("vda2 in diskstats", evidence_parse_diskstats(text, "vda2", &dc) == 0);
    test_cond("vda2 counters: reads, sectors, writes, sectors, io_ticks", dc.reads == 382 && dc.read_sectors == 22176 &&
              dc.writes == 361669 && dc.write_sectors == 80022975 && dc.io_ticks_ms == 76712);
    test_cond("vda is not vda2's prefix match", evidence_parse_diskstats(text, "vda", &dc) == 0 && dc.reads == 3021);
    test_cond("absent device", evidence_parse_diskstats(text, "sdz", &dc) == -1);
    snprintf(path, sizeof(path), "%s/stat", fx);
    test_cond("/proc/stat cpu line", evidence_parse_stat(slurp(path), &cc) == 0 && cc.steal == 874 &&
              cc.total == 168844 + 1484 + 70982 + 100494 + 6164 + 0 + 2352 + 874);
    snprintf(path, sizeof(path), "%s/pressure_cpu", fx);
    test_cond("pressure some total", evidence_parse_pressure(slurp(path), &us) == 0 && us == 531167112);
    test_cond("pressure without some", evidence_parse_pressure("full total=1\n", &us) == -1);

    /* sysfs: the disks behind a device */
    snprintf(path, sizeof(path), "%s/sysfs", fx);
    test_cond("a whole disk is its own disk", evidence_find_disks(path, "vda", disks, 16, backing, sizeof(backing)) == 1 &&
              strcmp(disks[0], "vda") == 0);
    test_cond("a partition: its disk", evidence_find_disks(path, "vda2", disks, 16, backing, sizeof(backing)) == 1 &&
              strcmp(disks[0], "vda") == 0);
    test_cond("dm: through its slave partition to the disk",
              evidence_find_disks(path, "dm-0", disks, 16, backing, sizeof(backing)) == 1 && strcmp(disks[0], "vda") == 0);
    int n = evidence_find_disks(path, "md5p1", disks, 16, backing, sizeof(backing));
    test_cond("a partition of md: the array's members", n == 2 &&
              ((strcmp(disks[0], "sdx") == 0 && strcmp(disks[1], "sdy") == 0) ||
               (strcmp(disks[0], "sdy") == 0 && strcmp(disks[1], "sdx") == 0)));
    test_cond("loop: the backing file is reported", evidence_find_disks(path, "loop3", disks, 16, backing, sizeof(backing)) == 0 &&
              strcmp(backing, "/nonexistent/images/disk.img") == 0);
    test_cond("unknown device: none", evidence_find_disks(path, "nvme9n9", disks, 16, backing, sizeof(backing)) == 0);

    /* deltas */
    struct evidence_source src;
    memset(&src, 0, sizeof(src));
    strcpy(src.device, "vda2");
    src.disk_count = 1;
    strcpy(src.disks[0], "vda");
    struct evidence_sample a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.have_device = b.have_device = a.have_cpu = b.have_cpu = a.have_psi_cpu = b.have_psi_cpu = 1;
    a.wall_s = 10;
    b.wall_s = 12;
    b.device.reads = 100;
    b.device.read_sectors = 800;
    b.device.writes = 50;
    b.device.write_sectors = 1600;
    b.disk_ticks_ms[0] = 1900;
    a.cpu.total = 1000;
    b.cpu.total = 1400;
    b.cpu.steal = 40;
    a.psi_cpu_us = 0;
    b.psi_cpu_us = 500000;
    struct test_evidence ev;
    evidence_delta(&src, &a, &b, &ev);
    test_cond("delta: device requests and bytes", ev.disk_known && ev.dev_reads == 100 && ev.dev_read_bytes == 800 * 512 &&
              ev.dev_writes == 50 && ev.dev_write_bytes == 1600 * 512);
    test_cond("delta: busy seconds of the busiest disk", ev.busy_s > 1.899 && ev.busy_s < 1.901);
    test_cond("delta: steal 10 %, CPU pressure 25 %", ev.steal_pct > 9.99 && ev.steal_pct < 10.01 &&
              ev.cpu_pressure_pct > 24.99 && ev.cpu_pressure_pct < 25.01);

    /* verdicts */
    struct bench_params bp;
    memset(&bp, 0, sizeof(bp));
    bp.file_size_mib = 4096;
    bp.byte_io_mib = 3;
    bp.io_chunk_bytes = 8192;
    bp.seeks = 8192;
    bp.seek_procs = 5;
    bp.num_files = 16;
    struct limiter_context ctx = {.bp = &bp, .ram_mib = 1024, .memory_fs = 0, .block_device = 1, .cpus = 2};
    struct limiter lim;
    struct test_result r = result(2.0, 0.2, 1.7);
    evidence_judge(TEST_PUTC, &r, &ctx, &lim);
    test_str_eq("per-char at 95 % CPU: cpu_bound", evidence_code_name(lim.code), "cpu_bound");
    ctx.memory_fs = 1;
    evidence_judge(TEST_PUTC, &r, &ctx, &lim);
    test_str_eq("per-char on tmpfs is still cpu_bound", evidence_code_name(lim.code), "cpu_bound");
    r = result(2.0, 0.0, 1.9);
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("block read on tmpfs: cached", evidence_code_name(lim.code), "cached");
    ctx.memory_fs = 0;
    r = result(2.0, 0.0, 0.5);
    r.calls.bytes_read = 1 << 30;
    r.ev.disk_known = 1;
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("reads with no device reads: cached", evidence_code_name(lim.code), "cached");
    r.ev.dev_reads = 1000;
    r.ev.busy_s = 1.9;
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("disk busy 95 %: device_bound", evidence_code_name(lim.code), "device_bound");
    test_cond("... with its utilisation", lim.device_util > 0.94 && lim.device_util < 0.96);
    r.ev.busy_s = 0.5;
    r.sys_s = 1.9;
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("CPU 95 %, disk 25 %: cpu_bound", evidence_code_name(lim.code), "cpu_bound");
    r.sys_s = 0.5;
    r.ev.cpu_known = 1;
    r.ev.steal_pct = 30;
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("steal 30 %: noisy", evidence_code_name(lim.code), "noisy");
    r.ev.steal_pct = 0;
    evidence_judge(TEST_GET_BLOCK, &r, &ctx, &lim);
    test_str_eq("nothing stands out: unknown", evidence_code_name(lim.code), "unknown");
    r = result(0.25, 0.0, 0.1);
    r.ev.disk_known = 1;
    r.ev.dev_writes = 10;
    evidence_judge(TEST_SEQ_CREATE, &r, &ctx, &lim);
    test_str_eq("under 0.5 s: too_short", evidence_code_name(lim.code), "too_short");
    test_str_eq("... with the -n that takes 0.5 s at 65536 files/s", lim.suggestion, "-n 39");
    bp.file_size_mib = 1024;
    r = result(5.0, 0.0, 1.0);
    evidence_judge(TEST_PUT_BLOCK, &r, &ctx, &lim);
    test_str_eq("file under twice the RAM: cached", evidence_code_name(lim.code), "cached");
    r = result(1.0, 1.0, 0.0);
    evidence_judge(TEST_SEEKS, &r, &ctx, &lim);
    test_cond("seekers' CPU is divided by the cores they can use", lim.cpu_of_wall > 0.49 && lim.cpu_of_wall < 0.51);
    struct test_result not_run;
    memset(&not_run, 0, sizeof(not_run));
    evidence_judge(TEST_GETC, &not_run, &ctx, &lim);
    test_cond("not run: no verdict", lim.code == LIMIT_NONE && evidence_code_name(lim.code) == NULL);

    test_report();
    return 0;
}
