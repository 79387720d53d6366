/* test_cgroup.c -- the runner's cgroup limits on fixture trees: a v1 machine with the unified tree
 * beside it (this project's CI), a v2-only machine, a container that sees its own subtree as the
 * root, and no cgroups at all; the counter parsers. */
#include "testhelp.h"

#include "cgroup.h"

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

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    char root[4096], path[4096], text[512];
    static struct cgroup_info cg;
    const struct cgroup_device devs[] = {{"loop0", 7, 0}, {"vda", 254, 0}};

    /* v1 controllers, the unified tree beside them */
    snprintf(root, sizeof(root), "%s/cgroup/v1", fx);
    cgroup_read(&cg, root, devs, 2);
    test_cond("v1: both hierarchies found", cg.v1 && cg.v2);
    test_str_eq("v1: the memory cgroup's path", cg.memory_path, "/outer/bench");
    test_cond("v1: the memory limit is the parent's 128 MiB (the own cgroup says unlimited)",
              cg.memory_limit_bytes == 134217728 && ends_with(cg.memory_limit_from, "/memory/outer/memory.limit_in_bytes"));
    test_cond("v1: the quota, from a hierarchy shared by cpu and cpuacct",
              cg.cpu_quota_us == 50000 && cg.cpu_period_us == 100000 &&
              ends_with(cg.cpu_quota_from, "/cpu,cpuacct/bench/cpu.cfs_quota_us") &&
              ends_with(cg.cpu_stat_path, "/cpu,cpuacct/bench/cpu.stat"));
    test_cond("v1: one throttle, on the test's device only", cg.io_limit_count == 1);
    const struct cgroup_io_limit *l = &cg.io_limits[0];
    test_cond("v1: 20 MiB/s each way on 7:0, from the own cgroup (v1 throttles are flat: the root's 1 MiB/s "
              "does not apply)", l->dev.major == 7 && l->dev.minor == 0 && l->read_bps == 20971520 &&
              l->write_bps == 20971520 && l->read_iops == CGROUP_NONE && l->write_iops == CGROUP_NONE && !l->v2 &&
              ends_with(l->dir, "/blkio/bench"));
    cgroup_describe_io_limit(l, text, sizeof(text));
    test_cond("v1: the throttle in words names the rates, the device and the cgroup",
              strstr(text, "20 MiB/s read, 20 MiB/s write on loop0 (7:0) by the cgroup ") == text &&
              strstr(text, "/blkio/bench (blkio.throttle.*_device)"));
    test_cond("v1: the runner's own v2 cgroup gives its pressure", ends_with(cg.pressure_dir, "/unified/bench"));

    /* v2 only */
    snprintf(root, sizeof(root), "%s/cgroup/v2", fx);
    cgroup_read(&cg, root, devs, 2);
    test_cond("v2: only the unified hierarchy", !cg.v1 && cg.v2);
    test_cond("v2: memory.high under the parent's memory.max is the limit",
              cg.memory_limit_bytes == 201326592 && ends_with(cg.memory_limit_from, "/bench/memory.high"));
    test_cond("v2: cpu.max of 1.5 CPUs", cg.cpu_quota_us == 150000 && cg.cpu_period_us == 100000 &&
              ends_with(cg.cpu_stat_path, "/user.slice/bench/cpu.stat"));
    test_cond("v2: io.max from the cgroup and its parent: the tighter of each, all-max lines dropped",
              cg.io_limit_count == 1 && cg.io_limits[0].read_bps == 10485760 &&
              cg.io_limits[0].write_bps == 20971520 && cg.io_limits[0].write_iops == 1000 &&
              cg.io_limits[0].read_iops == CGROUP_NONE && cg.io_limits[0].v2);
    test_cond("v2: the counters come from the cgroup with the tightest rate", ends_with(cg.io_limits[0].dir, "/user.slice"));
    test_cond("v2: pressure of the own cgroup", ends_with(cg.pressure_dir, "/user.slice/bench"));

    /* a container: the mount's root is the container's cgroup */
    snprintf(root, sizeof(root), "%s/cgroup/ns", fx);
    cgroup_read(&cg, root, devs, 2);
    test_cond("container: the path below the mount's root, the smaller limit above it",
              cg.memory_limit_bytes == 33554432 && ends_with(cg.memory_limit_from, "/sys/fs/cgroup/memory.max"));
    test_cond("container: at the mount's root, the pressure files would be the container's own: none here",
              cg.pressure_dir[0] == '\0');

    /* nothing to read: unknown, not a crash */
    cgroup_read(&cg, "/nonexistent-root", devs, 2);
    test_cond("no cgroups: every limit unknown", !cg.v1 && !cg.v2 && cg.memory_limit_bytes == CGROUP_NONE &&
              cg.cpu_quota_us == -1 && cg.io_limit_count == 0 && !cg.pressure_dir[0]);

    /* counters */
    uint64_t n, us, rd, wr, rios, wios;
    snprintf(path, sizeof(path), "%s/cgroup/v1/sys/fs/cgroup/cpu,cpuacct/bench/cpu.stat", fx);
    test_cond("v1 cpu.stat: throttled_time in ns", cgroup_parse_cpu_stat(slurp(path), &n, &us) == 0 && n == 26 &&
              us == 824347);
    snprintf(path, sizeof(path), "%s/cgroup/v2/sys/fs/cgroup/user.slice/bench/cpu.stat", fx);
    test_cond("v2 cpu.stat: throttled_usec", cgroup_parse_cpu_stat(slurp(path), &n, &us) == 0 && n == 12 &&
              us == 340000);
    test_cond("cpu.stat without throttling (no cpu controller)",
              cgroup_parse_cpu_stat("usage_usec 1\nuser_usec 1\n", &n, &us) == -1);
    snprintf(path, sizeof(path), "%s/cgroup/v1/sys/fs/cgroup/blkio/bench/blkio.throttle.io_service_bytes", fx);
    test_cond("v1 io_service_bytes", cgroup_parse_blkio_v1(slurp(path), 7, 0, &rd, &wr) == 0 && rd == 50333696 &&
              wr == 15728640);
    test_cond("v1 io_service_bytes: another device", cgroup_parse_blkio_v1(slurp(path), 7, 1, &rd, &wr) == -1);
    snprintf(path, sizeof(path), "%s/cgroup/v2/sys/fs/cgroup/user.slice/io.stat", fx);
    test_cond("v2 io.stat", cgroup_parse_io_stat(slurp(path), 7, 0, &rd, &wr, &rios, &wios) == 0 &&
              rd == 268435456 && wr == 4096 && rios == 2048 && wios == 1);
    test_cond("v2 io.stat: a device without a line is all zero",
              cgroup_parse_io_stat(slurp(path), 9, 9, &rd, &wr, &rios, &wios) == 0 && rd == 0 && wios == 0);
    test_report();
    return 0;
}
