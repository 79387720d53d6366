/* test_evidence.c -- the /proc parsers and the sysfs walk on fixtures, and the deltas between two
 * made-up samples (the verdicts drawn from them: test_limiter.c). */
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
    uint64_t on_cpu, delay;
    test_cond("schedstat: on a CPU, waiting for one",
              evidence_parse_schedstat("399744060 1612223637 27\n", &on_cpu, &delay) == 0 && on_cpu == 399744060 &&
              delay == 1612223637);
    test_cond("schedstat: empty", evidence_parse_schedstat("", &on_cpu, &delay) == -1);

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
    struct cgroup_device chain[EVIDENCE_MAX_DISKS];
    n = evidence_find_chain(path, "dm-0", chain, EVIDENCE_MAX_DISKS);
    test_cond("chain of dm-0: itself, its partition, the disk, with their numbers",
              n == 3 && strcmp(chain[0].name, "dm-0") == 0 && chain[0].major == 253 && chain[0].minor == 0 &&
              strcmp(chain[1].name, "vda2") == 0 && chain[1].minor == 2 && strcmp(chain[2].name, "vda") == 0 &&
              chain[2].major == 254);
    n = evidence_find_chain(path, "md5p1", chain, EVIDENCE_MAX_DISKS);
    test_cond("chain of md5p1: the partition, the array, both members", n == 4 && chain[0].minor == 0 &&
              chain[1].major == 9 && chain[1].minor == 5);
    test_cond("chain of a loop device whose backing file is gone: itself",
              evidence_find_chain(path, "loop3", chain, EVIDENCE_MAX_DISKS) == 1 && chain[0].major == 7 &&
              chain[0].minor == 3);

    /* deltas */
    static struct evidence_source src;
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
    test_cond("delta: busy seconds of the busiest disk", ev.busy_s > 1.899 && ev.busy_s < 1.901 &&
              strcmp(ev.busiest, "vda") == 0);
    test_cond("delta: steal 10 %, CPU pressure 25 %", ev.steal_pct > 9.99 && ev.steal_pct < 10.01 &&
              ev.cpu_pressure_pct > 24.99 && ev.cpu_pressure_pct < 25.01);

    b.device.io_ticks_ms = 1990; /* a loop device is busier than the disk below it */
    evidence_delta(&src, &a, &b, &ev);
    test_cond("delta: the device itself when it is the busiest", ev.busy_s > 1.989 && strcmp(ev.busiest, "vda2") == 0);
    test_cond("delta: no schedstat, no cgroup: unknown", !ev.sched_known && !ev.cg_cpu_known && !ev.throttle_known);

    /* the runner's own wait, a throttled device, the other devices' writes */
    static struct cgroup_info cg;
    memset(&cg, 0, sizeof(cg));
    cg.io_limit_count = 1;
    cg.io_limits[0] = (struct cgroup_io_limit){.dev = {"loop0", 7, 0}, .read_bps = 8388608, .write_bps = 8388608,
                                               .read_iops = CGROUP_NONE, .write_iops = 100};
    src.cg = &cg;
    src.whole_count = 2;
    strcpy(src.whole[0], "sdb");
    strcpy(src.whole[1], "nvme0n1");
    a.have_sched = b.have_sched = a.have_cg_cpu = b.have_cg_cpu = a.have_cg_io[0] = b.have_cg_io[0] = 1;
    a.run_delay_ns = 1000000000;
    b.run_delay_ns = 1500000000;
    b.cg_nr_throttled = 7;
    b.cg_throttled_us = 250000;
    b.cg_io[0][0] = 16u << 20; /* 16 MiB read: 2 s at 8 MiB/s */
    b.cg_io[0][1] = 4u << 20;  /* 4 MiB written in 200 requests: 0.5 s by bytes, 2 s by requests */
    b.cg_io[0][3] = 200;
    b.whole_write_sectors[0] = 2048;
    b.whole_write_sectors[1] = 4096;
    evidence_delta(&src, &a, &b, &ev);
    test_cond("delta: the runner's own run-queue wait", ev.sched_known && ev.run_delay_s > 0.499 && ev.run_delay_s < 0.501);
    test_cond("delta: the quota's throttling", ev.cg_cpu_known && ev.cg_nr_throttled == 7 && ev.cg_throttled_s > 0.249 &&
              ev.cg_throttled_s < 0.251);
    test_cond("delta: the throttle needs the slower direction's time (reads 2 s; writes 2 s by requests)",
              ev.throttle_known && ev.throttle_index == 0 && ev.throttle_s > 1.999 && ev.throttle_s < 2.001 &&
              ev.throttle_read_s > 1.999 && ev.throttle_read_s < 2.001 && ev.throttle_write_s > 1.999 &&
              ev.throttle_write_s < 2.001 &&
              ev.cg_read_bytes == 16u << 20 && ev.cg_writes == 200);
    test_cond("delta: the two other devices that wrote the most, the most first",
              strcmp(ev.other_writer[0], "nvme0n1") == 0 && ev.other_write_bytes[0] == 4096 * 512 &&
              strcmp(ev.other_writer[1], "sdb") == 0 && ev.other_write_bytes[1] == 2048 * 512);

    test_report();
    return 0;
}
