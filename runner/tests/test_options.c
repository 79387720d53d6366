/* test_options.c -- option parsing, size suffixes, bonnie++'s rules. */
#include "testhelp.h"

#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "rng.h"
#include "sync.h"
#include "units.h"

static int parse(struct options *o, char *err, size_t len, int argc, char **argv)
{
    return options_parse(o, argc, argv, err, len);
}

#define ARGV(...) ((char *[]){"bonnieboard-runner", __VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){"x", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, ...) parse(o, err, sizeof(err), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

int main(void)
{
    struct options o;
    char err[512];
    int64_t v;

    /* size suffixes */
    test_cond("plain number", units_size_from_str("300", "gt", &v) == 0 && v == 300);
    test_cond("g multiplies by 1024", units_size_from_str("2g", "gt", &v) == 0 && v == 2048);
    test_cond("G is case-insensitive", units_size_from_str("2G", "gt", &v) == 0 && v == 2048);
    test_cond("t multiplies by 1024^2", units_size_from_str("1t", "gt", &v) == 0 && v == 1048576);
    test_cond("k in kmg is 1024", units_size_from_str("4k", "kmg", &v) == 0 && v == 4096);
    test_cond("m in kmg is 1024^2", units_size_from_str("1m", "kmg", &v) == 0 && v == 1048576);
    test_cond("g in kmg is 1024^3", units_size_from_str("1g", "kmg", &v) == 0 && v == 1073741824);
    test_cond("-n's m means 1024 (units of 1024 files)", units_size_from_str("1m", "m", &v) == 0 && v == 1024);
    test_cond("negative for link", units_size_from_str("-1", "kmg", &v) == 0 && v == -1);
    test_cond("unknown suffix rejected", units_size_from_str("10x", "gt", &v) == -1);
    test_cond("two suffix letters rejected", units_size_from_str("10kk", "kmg", &v) == -1);
    test_cond("suffix without conv rejected", units_size_from_str("10k", NULL, &v) == -1);
    test_cond("empty rejected", units_size_from_str("", "k", &v) == -1);
    test_cond("letters rejected", units_size_from_str("abc", "k", &v) == -1);

    /* defaults */
    test_cond("no options parse", PARSE(&o, "-q") == 0);
    test_cond("default dir is .", strcmp(o.dir, ".") == 0);
    test_cond("default size 300M", o.bp.file_size_mib == 300 && !o.size_set);
    test_cond("default chunk 8192", o.bp.io_chunk_bytes == 8192 && o.bp.file_chunk_bytes == 8192);
    test_cond("default 8192 seeks, 5 seekers", o.bp.seeks == 8192 && o.bp.seek_procs == 5);
    test_cond("default 16 files, 1 dir", o.bp.num_files == 16 && o.bp.num_dirs == 1);
    test_cond("default byte I/O 3 MiB", o.bp.byte_io_mib == 3);
    test_cond("default -x is single run", o.test_count == -1);
    test_cond("default char mode syscall", o.bp.char_mode == CHAR_MODE_SYSCALL);
    options_free(&o);

    /* -s */
    test_cond("-s size:chunk:seeks:procs", PARSE(&o, "-s", "1g:4k:2k:3") == 0);
    test_cond("-s values", o.bp.file_size_mib == 1024 && o.bp.io_chunk_bytes == 4096 && o.bp.seeks == 2048 &&
              o.bp.seek_procs == 3 && o.size_set);
    options_free(&o);
    test_cond("-s bad size", PARSE(&o, "-s", "12q") == -1 && strstr(err, "-s"));
    test_cond("-s 64M is 64 MiB, as bonnie++ reads it", PARSE(&o, "-s", "64M") == 0 && o.bp.file_size_mib == 64);
    test_cond("-s 2G is 2048 MiB", PARSE(&o, "-s", "2G:4k") == 0 && o.bp.file_size_mib == 2048 && o.bp.io_chunk_bytes == 4096);
    options_free(&o);
    test_cond("-s 0 procs refused", PARSE(&o, "-s", "64:8k:100:0") == -1);
    options_free(&o);

    /* -n */
    test_cond("-n num:max:min:dirs:chunk", PARSE(&o, "-n", "16:4k:1k:4:16k") == 0);
    test_cond("-n values", o.bp.num_files == 16 && o.bp.max_size == 4096 && o.bp.min_size == 1024 &&
              o.bp.num_dirs == 4 && o.bp.file_chunk_bytes == 16384);
    options_free(&o);
    test_cond("-n link", PARSE(&o, "-n", "4:-1") == 0 && o.bp.max_size == -1);
    options_free(&o);
    test_cond("-n 1m files", PARSE(&o, "-n", "1m") == 0 && o.bp.num_files == 1024);
    options_free(&o);

    /* -f, -x, -z, -r, -b, -D, -m, -d */
    test_cond("-f alone skips per-char", PARSE(&o, "-f") == 0 && o.bp.byte_io_mib == 0);
    options_free(&o);
    test_cond("-f5 sets 5 MiB", PARSE(&o, "-f5") == 0 && o.bp.byte_io_mib == 5);
    options_free(&o);
    test_cond("-x 3 -z 42 -r 0 -b -D -m n -d /tmp",
              PARSE(&o, "-x", "3", "-z", "42", "-r", "0", "-b", "-D", "-m", "n", "-d", "/tmp") == 0 &&
              o.test_count == 3 && o.seed == 42 && o.seed_set && o.ram_mib == 0 && o.ram_set &&
              o.bp.fsync_each && o.bp.direct_io && strcmp(o.machine, "n") == 0 && strcmp(o.dir, "/tmp") == 0);
    options_free(&o);
    test_cond("-x 0 refused", PARSE(&o, "-x", "0") == -1);
    options_free(&o);
    test_cond("-z text refused", PARSE(&o, "-z", "abc") == -1);
    options_free(&o);
    test_cond("unknown option refused", PARSE(&o, "-k") == -1 && strstr(err, "-k"));
    options_free(&o);

    /* a mistyped token option: its name is shown, never its value */
    test_cond("--toke=V is ambiguous, named without V",
              PARSE(&o, "--toke=S3CRET") == -1 && strstr(err, "ambiguous option --toke:") && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("--tokn=V is unknown, named without V",
              PARSE(&o, "--tokn=S3CRET") == -1 && strstr(err, "unknown option --tokn") && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("--tokn V: nothing after the name", PARSE(&o, "--tokn", "S3CRET") == -1 && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("a typo's next argument is not echoed as unexpected",
              PARSE(&o, "-m", "--tkoen", "S3CRET") == -1 && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("--token=V given to another option is hidden",
              PARSE(&o, "-s", "--token=S3CRET") == -1 && strstr(err, "--token=***") && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("any unknown option's value is hidden",
              PARSE(&o, "--jsn=S3CRET") == -1 && strstr(err, "--jsn") && !strstr(err, "S3CRET"));
    options_free(&o);
    test_cond("a value for an option without one",
              PARSE(&o, "--help=S3CRET") == -1 && strstr(err, "--help takes no value") && !strstr(err, "S3CRET"));
    options_free(&o);
    /* --help and --version are results of their own, not messages */
    test_cond("--help", PARSE(&o, "--help") == OPTIONS_HELP);
    options_free(&o);
    test_cond("--version", PARSE(&o, "--version") == OPTIONS_VERSION);
    options_free(&o);
    test_cond("a prefix of --version", PARSE(&o, "--vers") == OPTIONS_VERSION);
    options_free(&o);
    test_cond("--help ends the parse: a bad option after it is not looked at",
              PARSE(&o, "--help", "-s", "bogus") == OPTIONS_HELP);
    options_free(&o);
    test_cond("a bad option before --help is a usage error",
              PARSE(&o, "-s", "bogus", "--help") == OPTIONS_ERROR && strstr(err, "bad size"));
    options_free(&o);
    test_cond("a token that is part of \"help\" leaves --help alone",
              PARSE(&o, "--token", "e", "--help") == OPTIONS_HELP);
    options_free(&o);
    test_cond("... and --version", PARSE(&o, "--token=ers", "--version") == OPTIONS_VERSION);
    options_free(&o);
    test_cond("a long option without its argument is named, not a control byte",
              PARSE(&o, "--json") == -1 && strcmp(err, "option --json needs an argument") == 0);
    options_free(&o);
    test_cond("token-like names", options_token_like("--tokn") && options_token_like("--t=x") &&
              options_token_like("--tkoen") && options_token_like("--Token-fiel") && !options_token_like("--json") &&
              !options_token_like("--tag") && !options_token_like("-t"));
    options_free(&o);
    test_cond("missing argument refused", PARSE(&o, "-s") == -1);
    options_free(&o);
    test_cond("stray argument refused", PARSE(&o, "extra") == -1);
    options_free(&o);

    /* long options */
    test_cond("long options",
              PARSE(&o, "--json", "o.json", "--char-mode", "stdio", "--stdio-buffer", "128k",
                    "--post", "http://b:8000", "--token", "t", "--tag", "raid=5", "--tag", "fs=xfs",
                    "--tag", "raid=6", "--label", "L", "--spool", "s.json") == 0);
    test_cond("long values", strcmp(o.json_path, "o.json") == 0 && o.bp.char_mode == CHAR_MODE_STDIO &&
              o.bp.stdio_buffer_bytes == 131072 && strcmp(o.post_url, "http://b:8000") == 0 &&
              strcmp(o.token, "t") == 0 && strcmp(o.label, "L") == 0 && strcmp(o.spool_path, "s.json") == 0);
    test_cond("tags: repeated key keeps the last value", o.tag_count == 2 &&
              strcmp(o.tags[0].key, "raid") == 0 && strcmp(o.tags[0].value, "6") == 0 &&
              strcmp(o.tags[1].key, "fs") == 0 && strcmp(o.tags[1].value, "xfs") == 0);
    options_free(&o);
    test_cond("--tag without = refused", PARSE(&o, "--tag", "raid") == -1);
    options_free(&o);
    /* the board's rules, before the run (app/ingest/validation.py) */
    test_cond("--tag with a space refused", PARSE(&o, "--tag", "fs=my xfs") == -1 && strstr(err, "space"));
    options_free(&o);
    test_cond("--tag with a no-break space refused", PARSE(&o, "--tag", "fs=a\xc2\xa0" "b") == -1);
    options_free(&o);
    test_cond("--tag not UTF-8 refused", PARSE(&o, "--tag", "fs=\xff") == -1 && strstr(err, "UTF-8"));
    options_free(&o);
    test_cond("--label not UTF-8 refused", PARSE(&o, "--label", "\xc3") == -1 && strstr(err, "--label"));
    options_free(&o);
    test_cond("--char-mode other refused", PARSE(&o, "--char-mode", "mmap") == -1);
    options_free(&o);
    test_cond("--stdio-buffer needs stdio mode", PARSE(&o, "--stdio-buffer", "4096") == -1);
    options_free(&o);

    /* the token: --token-file (private files only), $BONNIEBOARD_TOKEN, --token */
    {
        char tdir[] = "/tmp/test_options.XXXXXX", tpath[4200];
        test_cond("temp dir", mkdtemp(tdir) != NULL);
        snprintf(tpath, sizeof(tpath), "%s/token", tdir);
        FILE *tf = fopen(tpath, "w");
        fputs("tok-from-file\nsecond line\n", tf);
        fclose(tf);
        chmod(tpath, 0644);
        unsetenv("BONNIEBOARD_TOKEN");
        PARSE(&o, "--token-file", tpath);
        test_cond("a token file readable by others is refused",
                  options_load_token(&o, err, sizeof(err)) == -1 && strstr(err, "chmod 600") && !o.token);
        options_free(&o);
        chmod(tpath, 0600);
        PARSE(&o, "--token-file", tpath);
        test_cond("a private token file gives its first line",
                  options_load_token(&o, err, sizeof(err)) == 0 && strcmp(o.token, "tok-from-file") == 0);
        options_free(&o);
        test_cond("--token and --token-file together refused", PARSE(&o, "--token", "a", "--token-file", tpath) == -1);
        options_free(&o);
        setenv("BONNIEBOARD_TOKEN", "tok-from-env", 1);
        PARSE(&o, "-q");
        test_cond("BONNIEBOARD_TOKEN is used when no option gives one",
                  options_load_token(&o, err, sizeof(err)) == 0 && strcmp(o.token, "tok-from-env") == 0);
        options_free(&o);
        PARSE(&o, "--token", "tok-from-argv");
        test_cond("--token wins over the environment",
                  options_load_token(&o, err, sizeof(err)) == 0 && strcmp(o.token, "tok-from-argv") == 0);
        options_free(&o);
        setenv("BONNIEBOARD_TOKEN", "bad\r\nX-Injected: 1", 1);
        PARSE(&o, "-q");
        test_cond("a token with CR/LF is refused", options_load_token(&o, err, sizeof(err)) == -1);
        options_free(&o);
        unsetenv("BONNIEBOARD_TOKEN");
        PARSE(&o, "-q");
        test_cond("no token anywhere: none", options_load_token(&o, err, sizeof(err)) == 0 && !o.token);
        options_free(&o);
        unlink(tpath);
        rmdir(tdir);
    }

    /* -s bounds: no overflow, no 0-chunk file (issue 8.12) */
    test_cond("-s 9000000000000000:256 refused", PARSE(&o, "-s", "9000000000000000:256") == -1 && strstr(err, "largest"));
    options_free(&o);
    test_cond("-s 4503599627370496:256 refused (its chunk count wrapped to 0)",
              PARSE(&o, "-s", "4503599627370496:256") == -1);
    options_free(&o);
    test_cond("-s 2147483647 parses", PARSE(&o, "-s", "2147483647:256", "-r", "0") == 0);
    test_cond("... and is refused for its chunk count at 256 bytes", options_finalize(&o, 0, err, sizeof(err)) == -1 &&
              strstr(err, "more chunks"));
    options_free(&o);
    test_cond("-s 2048t refused", PARSE(&o, "-s", "2048t") == -1);
    options_free(&o);
    PARSE(&o, "-r", "2000000000", "-n", "0");
    test_cond("a default size over the bound (twice a huge -r) refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);

    /* machine names the board would misread (issue 8.13) */
    test_cond("plain name ok", options_check_machine("raid5-xfs_01.lab", err, sizeof(err)) == 0);
    test_cond("UTF-8 name ok", options_check_machine("h\xc3\xa9te", err, sizeof(err)) == 0);
    test_cond("newline refused", options_check_machine("a\nb", err, sizeof(err)) == -1 && strstr(err, "U+000A"));
    test_cond("tab refused", options_check_machine("a\tb", err, sizeof(err)) == -1);
    test_cond("DEL refused", options_check_machine("a\x7f", err, sizeof(err)) == -1);
    test_cond("C1 control refused", options_check_machine("a\xc2\x85", err, sizeof(err)) == -1);
    test_cond("line separator refused",
              options_check_machine("a\xe2\x80\xa8", err, sizeof(err)) == -1 && strstr(err, "U+2028"));
    test_cond("paragraph separator refused", options_check_machine("a\xe2\x80\xa9", err, sizeof(err)) == -1);
    test_cond("other punctuation ok", options_check_machine("a\xe2\x80\xa7", err, sizeof(err)) == 0);
    test_cond("comma refused", options_check_machine("a,b", err, sizeof(err)) == -1 && strstr(err, "comma"));
    test_cond("BOM refused", options_check_machine("\xef\xbb\xbfx", err, sizeof(err)) == -1);
    test_cond("not UTF-8 refused", options_check_machine("a\xff", err, sizeof(err)) == -1 && strstr(err, "0xff"));
    test_cond("empty refused", options_check_machine("", err, sizeof(err)) == -1);
    char long_name[OPT_MAX_MACHINE_BYTES + 2];
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    test_cond("too long refused", options_check_machine(long_name, err, sizeof(err)) == -1);
    long_name[OPT_MAX_MACHINE_BYTES] = '\0';
    test_cond("the longest allowed ok", options_check_machine(long_name, err, sizeof(err)) == 0);
    PARSE(&o, "-m", "a\nb", "-r", "0");
    test_cond("-m is checked by finalize", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);

    /* bonnie++'s -u, -g, -p, -y, -Z (issue 12.7) */
    test_cond("-u root:daemon", PARSE(&o, "-u", "root:daemon") == 0 && strcmp(o.user, "root") == 0 &&
              strcmp(o.group, "daemon") == 0);
    options_free(&o);
    test_cond("-u 0 -g 0", PARSE(&o, "-u", "0", "-g", "0") == 0 && strcmp(o.user, "0") == 0 && strcmp(o.group, "0") == 0);
    options_free(&o);
    test_cond("-u a:b with -g refused", PARSE(&o, "-u", "a:b", "-g", "c") == -1);
    options_free(&o);
    test_cond("-u twice refused", PARSE(&o, "-u", "a", "-u", "b") == -1);
    options_free(&o);
    test_cond("-p 3", PARSE(&o, "-p", "3") == 0 && o.sem_procs == 3);
    options_free(&o);
    test_cond("-p -1 removes", PARSE(&o, "-p", "-1") == 0 && o.sem_procs == -1);
    options_free(&o);
    test_cond("-p 0 refused", PARSE(&o, "-p", "0") == -1);
    options_free(&o);
    test_cond("-y s", PARSE(&o, "-y", "s") == 0 && o.sync_mode == SYNC_SEM);
    options_free(&o);
    test_cond("-y p", PARSE(&o, "-y", "p") == 0 && o.sync_mode == SYNC_PROMPT);
    options_free(&o);
    test_cond("-y x refused", PARSE(&o, "-y", "x") == -1);
    options_free(&o);
    test_cond("-p with -y refused", PARSE(&o, "-p", "2", "-y", "s") == -1);
    options_free(&o);
    test_cond("-Z file", PARSE(&o, "-Z", "/tmp/rand.bin") == 0 && strcmp(o.random_file, "/tmp/rand.bin") == 0);
    options_free(&o);
    test_cond("-Z with a comma refused (it is the CSV's seed)", PARSE(&o, "-Z", "a,b") == -1);
    test_cond("-Z with a C1 control refused, as the board refuses it in the seed",
              PARSE(&o, "-Z", "a\xc2\x85") == -1 && strstr(err, "U+0085"));
    test_cond("-Z with a line separator refused", PARSE(&o, "-Z", "a\xe2\x80\xa8") == -1);
    options_free(&o);
    test_cond("-Z with -z refused", PARSE(&o, "-Z", "f", "-z", "1") == -1);
    options_free(&o);
    {
        char rpath[] = "/tmp/test_rng.XXXXXX";
        int rfd = mkstemp(rpath);
        unsigned char raw[12] = {0, 0, 0, 5, 0xff, 0xff, 0xff, 0xfe, 0x80, 0, 0, 0}; /* 5, -2, INT_MIN */
        test_cond("random file written", rfd >= 0 && write(rfd, raw, sizeof(raw)) == (ssize_t)sizeof(raw));
        close(rfd);
        struct rng rr;
        test_cond("random file read", rng_init_file(&rr, rpath, err, sizeof(err)) == 0);
        int a = rng_next(&rr), b2 = rng_next(&rr), c2 = rng_next(&rr), d2 = rng_next(&rr);
        test_cond("big-endian, made non-negative, INT_MIN as 0, then repeated", a == 5 && b2 == 2 && c2 == 0 && d2 == 5);
        rng_reset(&rr);
        test_cond("reset restarts the file", rng_next(&rr) == 5);
        rng_free(&rr);
        unlink(rpath);
        test_cond("missing random file refused", rng_init_file(&rr, rpath, err, sizeof(err)) == -1);
    }

    /* bonnie++'s RAM rules */
    PARSE(&o, "-q");
    test_cond("default size becomes 2x RAM, rounded up to a GiB",
              options_finalize(&o, 1000, err, sizeof(err)) == 0 && o.bp.file_size_mib == 2048);
    options_free(&o);
    PARSE(&o, "-s", "1000");
    test_cond("size under 2x RAM refused", options_finalize(&o, 1000, err, sizeof(err)) == -1);
    test_cond("refusal says why", strstr(err, "twice the RAM") && strstr(err, "-r"));
    options_free(&o);
    PARSE(&o, "-s", "64", "-r", "32");
    test_cond("-r lets a small file through", options_finalize(&o, 24000, err, sizeof(err)) == 0 &&
              o.ram_mib == 32 && o.bp.file_size_mib == 64);
    options_free(&o);
    PARSE(&o, "-s", "64", "-r", "0");
    test_cond("-r 0 disables the check", options_finalize(&o, 24000, err, sizeof(err)) == 0);
    options_free(&o);
    PARSE(&o, "-s", "64", "-r", "0", "-f10");
    test_cond("byte I/O capped at the file size... kept when smaller",
              options_finalize(&o, 0, err, sizeof(err)) == 0 && o.bp.byte_io_mib == 10);
    options_free(&o);
    PARSE(&o, "-s", "4", "-r", "0", "-f10");
    test_cond("byte I/O capped at the file size", options_finalize(&o, 0, err, sizeof(err)) == 0 &&
              o.bp.byte_io_mib == 4);
    options_free(&o);
    PARSE(&o, "-s", "64:1000", "-r", "0");
    test_cond("chunk not a power of two refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);
    PARSE(&o, "-s", "64:128", "-r", "0");
    test_cond("chunk under 256 refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);
    PARSE(&o, "-s", "0", "-n", "0");
    test_cond("-s 0 -n 0 refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);
    PARSE(&o, "-r", "0", "-n", "4:100:200");
    test_cond("max < min refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);
    PARSE(&o, "-r", "0", "-n", "4:-2");
    test_cond("symlink mode accepted", options_finalize(&o, 0, err, sizeof(err)) == 0);
    options_free(&o);
    PARSE(&o, "-s", "0", "-r", "8", "-n", "1024");
    test_cond("too many files for the RAM refused", options_finalize(&o, 0, err, sizeof(err)) == -1);
    options_free(&o);

    test_report();
    return 0;
}
