/* test_sweep_plan.c -- the study plan: the documented example, every error naming its line and key,
 * the seeded order, the runs' tags, the board URLs, the runner = checks and the stopping rule. */
#include "testhelp.h"

#define fabs(x) ((x) < 0 ? -(x) : (x))

#include "sweep_plan.h"
#include "sbuf.h"
#include "sweep_stats.h"

static const char *example =
    "device = /dev/md0            # the scratch device: every configuration makes a new filesystem on it\n"
    "mountpoint = /mnt/bench\n"
    "rounds = 5\n"
    "order = interleaved          # each round runs every configuration once, in a seeded shuffled order\n"
    "runner = -s 8g -n 16         # the runner's own options for every run (-d is the mountpoint)\n"
    "tags = study=raid6-fs raid=6 chunk_kib=64     # tags for every run\n"
    "\n"
    "[ext4]\n"
    "mkfs = mkfs.ext4 -F -E stride=16,stripe-width=64\n"
    "mount_options = noatime\n"
    "tags = fs=ext4\n"
    "\n"
    "[xfs-logbsize]\n"
    "mkfs = mkfs.xfs -f -l size=128m\n"
    "mount_options = logbsize=256k\n"
    "tags = fs=xfs log=128m\n";

/* Parses text; returns the error message ("" when it parsed). */
static const char *parse_error(const char *text)
{
    static char err[1024];
    struct sweep_plan p;
    err[0] = '\0';
    sweep_plan_parse(&p, "study.plan", text, err, sizeof(err));
    sweep_plan_free(&p);
    return err;
}

static int contains(const char *s, const char *part)
{
    int ok = strstr(s, part) != NULL;
    if (!ok)
        printf("    [%s] lacks [%s]\n", s, part);
    return ok;
}

#define HEAD "device = /dev/loop0\nmountpoint = /mnt/b\nrounds = 2\n"

static void test_example(void)
{
    struct sweep_plan p;
    char err[1024] = "";
    int rc = sweep_plan_parse(&p, "study.plan", example, err, sizeof(err));
    test_cond("the README's example parses", rc == 0);
    if (rc) {
        printf("    %s\n", err);
        return;
    }
    test_str_eq("device as written", p.device, "/dev/md0");
    test_str_eq("mountpoint", p.mountpoint, "/mnt/bench");
    test_cond("5 rounds, interleaved", p.rounds == 5 && p.order == SWEEP_ORDER_INTERLEAVED);
    test_cond("runner words", p.runner_words == 4 && strcmp(p.runner[0], "-s") == 0 && strcmp(p.runner[3], "16") == 0 &&
                                  p.runner[4] == NULL);
    test_cond("three plan tags", p.tag_count == 3 && strcmp(p.tags[2].key, "chunk_kib") == 0 &&
                                     strcmp(p.tags[2].value, "64") == 0);
    test_cond("two configurations", p.config_count == 2 && strcmp(p.configs[0].name, "ext4") == 0 &&
                                        strcmp(p.configs[1].name, "xfs-logbsize") == 0);
    test_cond("mkfs words", p.configs[0].mkfs_words == 4 && strcmp(p.configs[0].mkfs[3], "stride=16,stripe-width=64") == 0);
    test_str_eq("mount options", p.configs[1].mount_options, "logbsize=256k");
    test_cond("the configuration's tags", p.configs[1].tag_count == 2 && strcmp(p.configs[1].tags[1].key, "log") == 0);

    struct tag tags[64];
    char round_text[16], seed_text[16];
    int n = sweep_plan_run_tags(&p, 1, 3, 42, round_text, sizeof(round_text), seed_text, sizeof(seed_text), tags, 64);
    test_cond("a run's tags: 3 of the plan, 2 of the configuration, config, round, order_seed", n == 8);
    test_cond("config=NAME", strcmp(tags[5].key, "config") == 0 && strcmp(tags[5].value, "xfs-logbsize") == 0);
    test_cond("round=N", strcmp(tags[6].key, "round") == 0 && strcmp(tags[6].value, "3") == 0);
    test_cond("order_seed=SEED", strcmp(tags[7].key, "order_seed") == 0 && strcmp(tags[7].value, "42") == 0);

    long ids[] = {7, 9, 8, 10};
    struct sbuf url = {0};
    test_cond("compare URL", sweep_plan_compare_url(&url, "http://board:8000/", ids, 4, 7) == 0);
    test_str_eq("compare URL text", sbuf_str(&url), "http://board:8000/compare?runs=7,9,8,10&group=config&baseline=7");
    url.len = 0;
    test_cond("compare URL under a path", sweep_plan_compare_url(&url, "https://tools.example/bb/", ids, 4, 7) == 0);
    test_str_eq("a board under a proxy's path keeps it", sbuf_str(&url),
                "https://tools.example/bb/compare?runs=7,9,8,10&group=config&baseline=7");
    url.len = 0;
    test_cond("two keys vary (fs, log): a matrix", sweep_plan_matrix_url(&url, &p, "http://b", ids, 4) == 1);
    test_str_eq("matrix URL text", sbuf_str(&url), "http://b/matrix?rows=fs&cols=log&runs=7,9,8,10");
    sbuf_free(&url);
    sweep_plan_free(&p);
}

static void test_order(void)
{
    struct sweep_plan p;
    char err[512];
    const char *text = HEAD "[a]\nmkfs = m\n[b]\nmkfs = m\n[c]\nmkfs = m\n[d]\nmkfs = m\n[e]\nmkfs = m\n";
    test_cond("five configurations parse", sweep_plan_parse(&p, "p", text, err, sizeof(err)) == 0);
    int first[SWEEP_MAX_CONFIGS], again[SWEEP_MAX_CONFIGS], other[SWEEP_MAX_CONFIGS];
    int differs_by_round = 0, differs_by_seed = 0;
    for (int round = 1; round <= 10; round++) {
        sweep_plan_order(&p, 12345, round, first);
        sweep_plan_order(&p, 12345, round, again);
        int seen = 0;
        for (int i = 0; i < 5; i++)
            seen |= 1 << first[i];
        if (seen != 31 || memcmp(first, again, sizeof(int) * 5) != 0)
            test_cond("each round's order is a permutation, the same for the same seed", 0);
        sweep_plan_order(&p, 12345, round + 1, other);
        differs_by_round |= memcmp(first, other, sizeof(int) * 5) != 0;
        sweep_plan_order(&p, 54321, round, other);
        differs_by_seed |= memcmp(first, other, sizeof(int) * 5) != 0;
    }
    test_cond("rounds get different orders", differs_by_round);
    test_cond("another seed gives other orders", differs_by_seed);
    /* the order is splitmix64's, not the C library's: the same on every machine */
    sweep_plan_order(&p, 7, 1, first);
    printf("    seed 7 round 1: %d %d %d %d %d\n", first[0], first[1], first[2], first[3], first[4]);
    int fixed_value[] = {3, 4, 0, 1, 2};
    test_cond("seed 7's first round is fixed forever", memcmp(first, fixed_value, sizeof(fixed_value)) == 0);
    sweep_plan_free(&p);

    text = HEAD "order = fixed\n[a]\nmkfs = m\n[b]\nmkfs = m\n[c]\nmkfs = m\n";
    sweep_plan_parse(&p, "p", text, err, sizeof(err));
    sweep_plan_order(&p, 99, 4, first);
    test_cond("order = fixed: the plan's order", first[0] == 0 && first[1] == 1 && first[2] == 2);
    sweep_plan_free(&p);
}

static void test_errors(void)
{
    test_cond("unknown key: line and key",
              contains(parse_error(HEAD "colour = blue\n[a]\nmkfs = m\n"), "study.plan:4: unknown key \"colour\""));
    test_cond("unknown key in a section",
              contains(parse_error(HEAD "[a]\nmkfs = m\nmount = x\n"), "study.plan:6: unknown key \"mount\""));
    test_cond("bad rounds", contains(parse_error("device = /dev/x\nmountpoint = /m\nrounds = many\n[a]\nmkfs = m\n"),
                                     "study.plan:3: key \"rounds\": a whole number 1..100 or auto, got \"many\""));
    test_cond("rounds = 0", contains(parse_error("device = /dev/x\nmountpoint = /m\nrounds = 0\n[a]\nmkfs = m\n"),
                                     "study.plan:3: key \"rounds\""));
    test_cond("rounds = auto parses", parse_error("device = /dev/x\nmountpoint = /m\nrounds = auto\n[a]\nmkfs = m\n")[0] == 0);
    test_cond("bad order", contains(parse_error(HEAD "order = random\n[a]\nmkfs = m\n"), "study.plan:4: key \"order\""));
    test_cond("a key given twice",
              contains(parse_error(HEAD "rounds = 3\n[a]\nmkfs = m\n"), "study.plan:4: key \"rounds\" is given twice"));
    test_cond("a section without mkfs names its line",
              contains(parse_error(HEAD "[a]\ntags = x=1\n[b]\nmkfs = m\n"), "study.plan:4: section [a]: key \"mkfs\" is missing"));
    test_cond("the last section without mkfs",
              contains(parse_error(HEAD "[a]\nmkfs = m\n[b]\n"), "study.plan:6: section [b]: key \"mkfs\" is missing"));
    test_cond("a section given twice", contains(parse_error(HEAD "[a]\nmkfs = m\n[a]\nmkfs = n\n"),
                                                "study.plan:6: section [a] is given twice (first on line 4)"));
    test_cond("a bad section name", contains(parse_error(HEAD "[a b]\nmkfs = m\n"), "study.plan:4: section [a b]"));
    test_cond("a line without =", contains(parse_error(HEAD "mkfs.ext4\n"), "study.plan:4: expected key = value"));
    test_cond("a tag without =", contains(parse_error(HEAD "tags = fs\n[a]\nmkfs = m\n"),
                                          "study.plan:4: key \"tags\": --tag: expected KEY=VALUE"));
    test_cond("a tag the sweep sets", contains(parse_error(HEAD "[a]\nmkfs = m\ntags = round=1\n"),
                                               "study.plan:6: key \"tags\": the tag round= is the sweep's own"));
    test_cond("no device", contains(parse_error("mountpoint = /m\nrounds = 1\n[a]\nmkfs = m\n"), "key \"device\" is missing"));
    test_cond("a relative mountpoint", contains(parse_error("mountpoint = m\n"), "study.plan:1: key \"mountpoint\""));
    test_cond("no rounds", contains(parse_error("device = /dev/x\nmountpoint = /m\n[a]\nmkfs = m\n"), "key \"rounds\" is missing"));
    test_cond("no configuration", contains(parse_error(HEAD), "no configuration"));
    test_cond("mount options with a space",
              contains(parse_error(HEAD "[a]\nmkfs = m\nmount_options = a b\n"), "study.plan:6: key \"mount_options\""));
    test_cond("a bad seed", contains(parse_error(HEAD "seed = -1\n[a]\nmkfs = m\n"), "study.plan:4: key \"seed\""));
    test_cond("a comment after a value and a blank line",
              parse_error(HEAD "\n# note\n[a]   # first\nmkfs = m # the command\n")[0] == 0);
}

static const char *runner_error(const char *runner)
{
    static char err[1024];
    char text[512];
    snprintf(text, sizeof(text), HEAD "runner = %s\n[a]\nmkfs = m\n", runner);
    struct sweep_plan p;
    err[0] = '\0';
    if (sweep_plan_parse(&p, "study.plan", text, err, sizeof(err)) == 0)
        sweep_plan_check_runner(&p, "study.plan", 24000, err, sizeof(err));
    sweep_plan_free(&p);
    return err;
}

static void test_runner_line(void)
{
    test_cond("the test's small runs are fine", runner_error("-s 32M -r 0 -n 1")[0] == 0);
    test_cond("-d is the sweep's", contains(runner_error("-s 32M -r 0 -d /tmp"), "key \"runner\": -d is the sweep's"));
    test_cond("-x is the sweep's", contains(runner_error("-s 32M -r 0 -x 3"), "-x is the sweep's"));
    test_cond("--post goes on the command line", contains(runner_error("-r 0 --post http://b"), "--post and the token"));
    test_cond("--tag goes on tags =", contains(runner_error("-r 0 --tag a=b"), "tags go on the tags = line"));
    test_cond("an unknown option", contains(runner_error("-Q"), "key \"runner\": unknown option -Q"));
    test_cond("bonnie++'s twice-the-RAM rule", contains(runner_error("-s 100M"), "key \"runner\": "));
}

static void test_stats(void)
{
    double v[] = {100000, 99000, 101000};
    /* the board's describe() on the same values: ci95 high / geometric mean - 1 */
    test_cond("CI of 100000, 99000, 101000 is the board's (+2.515 %)", fabs(sweep_stats_ci_half(v, 3) - 0.0251534511) < 1e-7);
    double w[] = {500, 520, 480, 510};
    test_cond("CI of 500, 520, 480, 510 is the board's (+5.598 %)", fabs(sweep_stats_ci_half(w, 4) - 0.0559777002) < 1e-7);
    double x[] = {1000.5, 990.2};
    test_cond("values with a fraction use the 0.1 step (+6.795 %)", fabs(sweep_stats_ci_half(x, 2) - 0.0679530307) < 1e-7);
    double y[] = {0, 1000, 0};
    test_cond("fewer than two measured: no CI", sweep_stats_ci_half(y, 3) < 0);

    double r[SWEEP_STAT_TESTS];
    const char *line = "1.98,2.00a,box,1,1700000000,2G,,8192,5,463,37,150000,20,60000,15,1125,45,300000,30,"
                       "+++++,+++,16,,,,,2000,30,+++++,+++,1500,10,1800,20,+++++,+++,900.5,5,1us,2us";
    test_cond("CSV line read", sweep_stats_from_csv(line, r) == 0);
    test_cond("block rates", r[0] == 150000 && r[1] == 60000 && r[2] == 300000);
    test_cond("file rates, +++++ as 0", r[3] == 2000 && r[4] == 0 && r[5] == 1500 && r[6] == 1800 && r[7] == 0 &&
                                            r[8] == 900.5);
    test_cond("a short line is refused", sweep_stats_from_csv("1.98,2.00a,box", r) < 0);
    const char *no_files = "1.98,2.00a,box,1,1700000000,2G,,8192,5,463,37,150000,20,60000,15,1125,45,300000,30,"
                           "+++++,+++,0,,,,,,,,,,,,,,,,,1us,2us";
    test_cond("-n 0: the file tests not run, as -1", sweep_stats_from_csv(no_files, r) == 0 && r[0] == 150000 &&
                                                          r[3] == -1 && r[8] == -1);

    struct sbuf text = {0};
    sweep_stats_interval_text(&text, 0.0251534511);
    test_str_eq("an interval under ±100 %", sbuf_str(&text), "±2.5 %");
    text.len = 0;
    sweep_stats_interval_text(&text, 2.2);
    test_str_eq("an interval past ±100 % as a factor", sbuf_str(&text), "×3.2 either way");
    text.len = 0;
    sweep_stats_interval_text(&text, 507186.43);
    test_str_eq("an absurd interval is not printed as a figure", sbuf_str(&text), "over ×100 either way");
    sbuf_free(&text);

    double rates[3][SWEEP_STAT_TESTS] = {{100000, 500}, {99000, 520}, {101000, 480}};
    int test = -1;
    double widest = sweep_stats_widest((const double(*)[SWEEP_STAT_TESTS])rates, 3, &test);
    test_cond("the widest CI is rewrite's", test == 1 && widest > 0.05);
    printf("    widest %.4f\n", widest);
}

int main(void)
{
    test_example();
    test_order();
    test_errors();
    test_runner_line();
    test_stats();
    test_report();
}
