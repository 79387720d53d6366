/* test_report.c -- exact CSV text for fixed results, latency formatting,
 * the +++++ rule, the header, bonnie++'s names, JSON escaping. */
#include "testhelp.h"

#include "bench_files.h"
#include "json.h"
#include "report.h"
#include "rng.h"
#include "units.h"

/* A result whose bonnie++ rate truncates to value and %CPU to cpu. */
static void set(struct test_result *r, double size, double value, int cpu, int latency_us)
{
    r->elapsed_s = size / (value + 0.5);
    r->user_s = 0;
    r->sys_s = r->elapsed_s * (cpu + 0.5) / 100.0;
    r->latency_s = (latency_us + 0.5) / 1e6;
}

static void fast(struct test_result *r, int latency_us)
{
    r->elapsed_s = 0.2;
    r->sys_s = 0.1;
    r->latency_s = (latency_us + 0.5) / 1e6;
}

static void base_params(struct run_params *p, struct bench_params *bp)
{
    memset(p, 0, sizeof(*p));
    memset(bp, 0, sizeof(*bp));
    p->bp = bp;
    p->machine = "raid5_chunk64_ext3";
    p->version = "2.00a";
    bp->concurrency = 1;
    p->seed = "1795352513";
    bp->file_size_mib = 512;
    bp->byte_io_mib = 3;
    bp->io_chunk_bytes = 8192;
    bp->seeks = 8192;
    bp->seek_procs = 5;
    bp->num_files = 16;
    bp->num_dirs = 1;
    bp->file_chunk_bytes = 8192;
}

static const char *csv(struct sbuf *b, const struct run_params *p, const struct test_result *res)
{
    b->len = 0;
    if (b->s)
        b->s[0] = '\0';
    report_csv_line(b, p, res);
    return sbuf_str(b);
}

static int count_fields(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

int main(void)
{
    char buf[16];
    struct sbuf b = {0};
    struct run_params p;
    struct bench_params bp;
    struct test_result res[TEST_COUNT];

    /* latency: bonnie++'s thresholds and truncation */
    test_str_eq("0 is empty", units_format_latency(buf, 0.0), "");
    test_str_eq("117 us", units_format_latency(buf, 0.0001175), "117us");
    test_str_eq("0.0999989 s is still us", units_format_latency(buf, 0.0999989), "99998us");
    test_str_eq("0.0999995 s is already ms (> 0.099999)", units_format_latency(buf, 0.0999995), "99ms");
    test_str_eq("0.1 s is 100ms", units_format_latency(buf, 0.1), "100ms");
    test_str_eq("228 ms", units_format_latency(buf, 0.2289), "228ms");
    test_str_eq("99.9999 s is ms", units_format_latency(buf, 99.9999), "99999ms");
    test_str_eq("99.9999995 s is s (> 99.999999)", units_format_latency(buf, 99.9999995), "99s");
    test_str_eq("150.7 s", units_format_latency(buf, 150.7), "150s");

    /* the real 2.00a line from the API contract, rebuilt from results */
    base_params(&p, &bp);
    memset(res, 0, sizeof(res));
    set(&res[TEST_PUTC], 3072, 869, 96, 18213);
    set(&res[TEST_PUT_BLOCK], 524288, 420469, 81, 4307);
    fast(&res[TEST_REWRITE], 1098);
    set(&res[TEST_GETC], 3072, 1443, 98, 10287);
    fast(&res[TEST_GET_BLOCK], 117);
    fast(&res[TEST_SEEKS], 7618);
    set(&res[TEST_SEQ_CREATE], 16384, 16795, 94, 10730);
    fast(&res[TEST_SEQ_STAT], 5072);
    fast(&res[TEST_SEQ_DEL], 2346);
    set(&res[TEST_RAN_CREATE], 16384, 23036, 95, 12162);
    fast(&res[TEST_RAN_STAT], 214);
    fast(&res[TEST_RAN_DEL], 6909);
    const char *want =
        "1.98,2.00a,raid5_chunk64_ext3,1,1795352513,512M,,8192,5,869,96,420469,81,+++++,+++,1443,98,"
        "+++++,+++,+++++,+++,16,,,,,16795,94,+++++,+++,+++++,+++,23036,95,+++++,+++,+++++,+++,18213us,"
        "4307us,1098us,10287us,117us,7618us,10730us,5072us,2346us,12162us,214us,6909us\n";
    test_str_eq("real 2.00a line reproduced", csv(&b, &p, res), want);
    test_cond("50 fields", count_fields(sbuf_str(&b)) == 50);

    /* the +++++ rule: < 0.5 s, exactly 0.5 s, not run */
    res[TEST_PUT_BLOCK].elapsed_s = 0.4999;
    csv(&b, &p, res);
    test_cond("0.4999 s is +++++,+++", strstr(sbuf_str(&b), ",5,869,96,+++++,+++,+++++,+++,1443,") != NULL);
    res[TEST_PUT_BLOCK].elapsed_s = 0.5;
    res[TEST_PUT_BLOCK].sys_s = 0.25;
    csv(&b, &p, res);
    test_cond("0.5 s is a value", strstr(sbuf_str(&b), ",869,96,1048576,50,+++++,") != NULL);

    /* -f: per-char not run; seeks formatting; -s size in G; dirs; max/min */
    base_params(&p, &bp);
    memset(res, 0, sizeof(res));
    bp.file_size_mib = 2048;
    bp.byte_io_mib = 0;
    p.machine = "vm";
    p.version = "bonnieboard-0.1.0";
    bp.num_files = 4;
    bp.max_size = 4096;
    bp.min_size = 1024;
    bp.num_dirs = 8;
    bp.seeks = 2000;
    bp.seek_procs = 3;
    set(&res[TEST_PUT_BLOCK], 2097152, 100000, 20, 1000);
    set(&res[TEST_REWRITE], 2097152, 50000, 10, 200000);
    set(&res[TEST_GET_BLOCK], 2097152, 150000, 5, 100);
    res[TEST_SEEKS].elapsed_s = 2000 / 262.34;
    res[TEST_SEEKS].user_s = res[TEST_SEEKS].elapsed_s * 0.015;
    res[TEST_SEEKS].latency_s = 150.2;
    for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
        set(&res[t], 4096, 1000 + t, 30, 50 + t);
    want = "1.98,bonnieboard-0.1.0,vm,1,1795352513,2G,,2000,3,,,100000,20,50000,10,,,150000,5,262.3,1,"
           "4,4096,1024,,8,1006,30,1007,30,1008,30,1009,30,1010,30,1011,30,"
           ",1000us,200ms,,100us,150s,56us,57us,58us,59us,60us,61us\n";
    test_str_eq("-f, 2G, seeks %.1f, num_dirs in the 5th file column", csv(&b, &p, res), want);
    test_cond("50 fields with -f", count_fields(sbuf_str(&b)) == 50);
    res[TEST_SEEKS].elapsed_s = 2000 / 13116.4;
    res[TEST_SEEKS].user_s = 0;
    res[TEST_SEEKS].sys_s = res[TEST_SEEKS].elapsed_s;
    res[TEST_SEEKS].elapsed_s = 0.6;
    res[TEST_SEEKS].sys_s = 0.3;
    csv(&b, &p, res);
    test_cond("seeks >= 1000 printed as %.0f", strstr(sbuf_str(&b), ",150000,5,3333,50,4,") != NULL);

    /* max only, link, symlink, -n 0, -s 0 */
    bp.min_size = 0;
    bp.num_dirs = 1;
    csv(&b, &p, res);
    test_cond("max without min: 4,4096,,,", strstr(sbuf_str(&b), ",4,4096,,,,1006,") != NULL);
    bp.max_size = -1;
    csv(&b, &p, res);
    test_cond("link: 4,link,,,", strstr(sbuf_str(&b), ",4,link,,,,1006,") != NULL);
    bp.max_size = -2;
    csv(&b, &p, res);
    test_cond("symlink: 4,symlink,,,", strstr(sbuf_str(&b), ",4,symlink,,,,1006,") != NULL);
    bp.max_size = 0;
    csv(&b, &p, res);
    test_cond("no max: 4,,,,", strstr(sbuf_str(&b), ",4,,,,,1006,") != NULL);

    memset(res, 0, sizeof(res));
    bp.num_files = 0;
    set(&res[TEST_PUT_BLOCK], 2097152, 100000, 20, 1000);
    set(&res[TEST_REWRITE], 2097152, 50000, 10, 2000);
    set(&res[TEST_GET_BLOCK], 2097152, 150000, 5, 100);
    fast(&res[TEST_SEEKS], 300);
    want = "1.98,bonnieboard-0.1.0,vm,1,1795352513,2G,,2000,3,,,100000,20,50000,10,,,150000,5,+++++,+++,"
           ",,,,,,,,,,,,,,,,,,1000us,2000us,,100us,300us,,,,,,\n";
    test_str_eq("-n 0: 17 empty fields and 6 empty latencies", csv(&b, &p, res), want);
    test_cond("50 fields with -n 0", count_fields(sbuf_str(&b)) == 50);

    memset(res, 0, sizeof(res));
    bp.file_size_mib = 0;
    bp.num_files = 1;
    for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
        fast(&res[t], 10);
    want = "1.98,bonnieboard-0.1.0,vm,1,1795352513,,,,,,,,,,,,,,,,,1,,,,,+++++,+++,+++++,+++,+++++,+++,"
           "+++++,+++,+++++,+++,+++++,+++,,,,,,,10us,10us,10us,10us,10us,10us\n";
    test_str_eq("-s 0: fields 5..20 empty", csv(&b, &p, res), want);
    test_cond("50 fields with -s 0", count_fields(sbuf_str(&b)) == 50);

    /* the header names all 50 columns */
    test_cond("header has 50 names", count_fields(REPORT_CSV_HEADER) == 50);
    test_cond("header starts as the parser expects",
              strncmp(REPORT_CSV_HEADER, "format_version,bonnie_version,", 30) == 0);

    /* bonnie++'s file names: 10 hex digits + 0..12 alphanumerics */
    struct rng r;
    char name[32];
    rng_init(&r, 1);
    bench_files_make_name(name, &r, 0x2a, 0);
    test_cond("sequential name starts with the number", strncmp(name, "000000002a", 10) == 0 &&
              strlen(name) <= 22);
    rng_init(&r, 1);
    char name2[32];
    bench_files_make_name(name2, &r, 0x2a, 1);
    size_t n2 = strlen(name2);
    test_cond("random name ends with the number", n2 >= 10 && strcmp(name2 + n2 - 10, "000000002a") == 0);
    test_cond("same random part either way", strncmp(name + 10, name2, n2 - 10) == 0);
    /* the random source is glibc's rand() sequence for the seed */
    rng_init(&r, 12345);
    srand(12345);
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= rng_next(&r) == rand();
    test_cond("rng matches srand()/rand()", same);
    rng_reset(&r);
    srand(12345);
    test_cond("rng_reset restarts the sequence", rng_next(&r) == rand());

    /* JSON escaping */
    struct sbuf j = {0};
    json_escape(&j, "a\"b\\c\n\x01");
    test_str_eq("json escape", sbuf_str(&j), "\"a\\\"b\\\\c\\n\\u0001\"");
    sbuf_free(&j);
    json_escape(&j, "h\xc3\xa9 \xff\xc3 \xed\xa0\x80 \xf0\x9f\x98\x80");
    test_str_eq("json escape keeps UTF-8 and replaces other bytes", sbuf_str(&j),
                "\"h\xc3\xa9 \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \xf0\x9f\x98\x80\"");
    sbuf_free(&j);

    sbuf_free(&b);
    test_report();
    return 0;
}
