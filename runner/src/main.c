/* main.c -- bonnieboard-runner: options -> checks -> tests (bonnie++ 2.00a's,
 * in its order) -> text report and CSV -> JSON document -> optional post.
 *
 * Exit codes: 0 ok; 1 usage (bad option, file size under twice the RAM);
 * 2 preparation (scratch directory, free space, --json file); 3 run-time
 * failure or interrupted by SIGINT/SIGTERM/SIGPIPE (test files removed); 4 the
 * results were produced but the post failed (they are in the spool file). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_files.h"
#include "bench_io.h"
#include "document.h"
#include "evidence.h"
#include "limiter.h"
#include "options.h"
#include "post.h"
#include "report.h"
#include "rng.h"
#include "sweep.h"
#include "sync.h"
#include "sysinfo.h"
#include "ugid.h"
#include "workdir.h"

#define EXIT_USAGE 1
#define EXIT_PREPARE 2
#define EXIT_RUNTIME 3
#define EXIT_POST 4

/* Prints "bonnieboard-runner: " and the formatted message as one line on stderr. Returns code, the
 * exit code main leaves with. */
static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
    /* one vfprintf, so the unbuffered stderr gets the line in one write(2), not three */
    char line_fmt[256];
    int n = snprintf(line_fmt, sizeof(line_fmt), "bonnieboard-runner: %s\n", fmt);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(line_fmt)) {
        vfprintf(stderr, line_fmt, ap);
    } else { /* a format too long for line_fmt: never cut one */
        fputs("bonnieboard-runner: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
    return code;
}

/* The one mutable global: set by SIGINT/SIGTERM, polled by the test loops. */
static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int64_t detect_ram_mib(void)
{
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    if (page <= 0 || pages <= 0)
        return 0;
    return (int64_t)(page / 1024) * (pages / 1024); /* as bonnie++ computes it */
}

static int install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;  /* no SA_RESTART: blocking reads return EINTR */
    sigemptyset(&sa.sa_mask);
    /* SIGPIPE too (`runner | head`), and the limits bonnie++ also catches:
     * each stops the run and removes the test files instead of killing us */
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) || sigaction(SIGPIPE, &sa, NULL) ||
        sigaction(SIGXFSZ, &sa, NULL) || sigaction(SIGXCPU, &sa, NULL))
        return -1;
    sa.sa_handler = SIG_IGN;
    return sigaction(SIGHUP, &sa, NULL);
}

/* Bytes the tests need at most in the scratch directory. */
static int64_t space_needed(const struct options *o)
{
    int64_t need = o->bp.file_size_mib * 1048576;
    int64_t files = o->bp.num_files * OPT_FILES_UNIT;
    int64_t per_file = o->bp.max_size > 0 ? o->bp.max_size : 0;
    int64_t files_bytes = files * per_file;
    return (need > files_bytes ? need : files_bytes) + 1048576;
}

/* An output file named on the command line, opened before the tests so a bad path costs no run. */
struct out_file {
    const char *path;
    int fd;          /* -1: none */
    int created;     /* we made it: removed again when the run fails */
};

#define OUT_FILE_NONE {NULL, -1, 0}

/* Opens path for writing without truncating an existing file yet (a failed run keeps the old
 * document). Returns 0 or -1 with errno set. */
static int out_file_open(struct out_file *f, const char *path)
{
    f->path = path;
    f->created = 1;
    f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (f->fd < 0 && errno == EEXIST) {
        f->created = 0;
        f->fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    return f->fd < 0 ? -1 : 0;
}

/* Creates the --spool file at path, never over an existing one (post_spool_create). Returns 0 or -1 with
 * errno set. */
static int out_file_create_spool(struct out_file *f, const char *path)
{
    f->path = path;
    f->created = 1;
    f->fd = post_spool_create(path);
    return f->fd < 0 ? -1 : 0;
}

/* Replaces the file's content with text and closes it. Returns 0 or -1 with errno set. */
static int out_file_write(struct out_file *f, const char *text, size_t len)
{
    int rc = ftruncate(f->fd, 0);
    while (rc == 0 && len) {
        ssize_t n = write(f->fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = -1;
        else
            text += n, len -= (size_t)n;
    }
    if (close(f->fd))
        rc = -1;
    f->fd = -1;
    return rc;
}

/* Closes f; when the run produced nothing for it, removes the file it created. */
static void out_file_abandon(struct out_file *f)
{
    if (f->fd < 0)
        return;
    close(f->fd);
    f->fd = -1;
    if (f->created)
        unlink(f->path);
}

/* Warns in doc when -r let the runner test a file the page cache can hold, or turned the checks off. The RAM
 * is what the page cache may use: the memory cgroup's limit where it is below the physical RAM, as the
 * limiter's verdicts take it. */
static void warn_about_ram(struct document *doc, const struct options *opts, int64_t detected_ram_mib,
                           const struct cgroup_info *cg)
{
    int64_t ram_mib = detected_ram_mib;
    const char *what = "the RAM";
    if (cg->memory_limit_bytes != CGROUP_NONE && (!ram_mib || (int64_t)(cg->memory_limit_bytes >> 20) < ram_mib)) {
        ram_mib = (int64_t)(cg->memory_limit_bytes >> 20);
        what = "the memory cgroup's limit";
    }
    if (opts->bp.file_size_mib && opts->ram_set && ram_mib &&
        opts->bp.file_size_mib * opts->bp.concurrency < ram_mib * 2)
        document_warn(doc, "file size %lld MiB is less than twice %s (%lld MiB; -r %lld was given): "
                      "the I/O results may measure the page cache",
                      (long long)opts->bp.file_size_mib, what, (long long)ram_mib, (long long)opts->ram_mib);
    if (opts->ram_set && opts->ram_mib == 0)
        document_warn(doc, "-r 0 disabled bonnie++'s RAM checks");
}

/* Runs the tests opts->test_count times (-x; once by default): prints each run's report and CSV line
 * and records the run in doc and its line in csv (which the caller frees). Returns 0, or EXIT_RUNTIME
 * when a test failed or was stopped (the test files are removed and a line says so) or memory ran out. */
static int run_tests(const struct options *opts, const struct bench_config *bench, struct rng *rng,
                     const struct limiter_context *judge, const struct run_params *params,
                     const struct workdir *wd, struct document *doc, struct sbuf *csv)
{
    struct sbuf line = {0};
    int exit_code = 0;
    if (opts->test_count > 1) {
        printf("%s\n", REPORT_CSV_HEADER);
        fflush(stdout);
    }
    int runs = opts->test_count < 0 ? 1 : opts->test_count;
    for (int run = 0; run < runs; run++) {
        struct test_result res[TEST_COUNT];
        memset(res, 0, sizeof(res));
        rng_reset(rng); /* bonnie++ Initialize(): every run repeats the seed */
        enum bench_status rc = BENCH_OK;
        if (opts->bp.file_size_mib)
            rc = bench_io_run(bench, rng, res);
        if (rc == BENCH_OK && opts->bp.num_files)
            rc = bench_files_run(bench, rng, res);
        if (rc != BENCH_OK || *bench->stop) {
            results_free(res);
            workdir_cleanup(wd);
            fprintf(stderr, rc == BENCH_STOPPED || *bench->stop
                    ? "Interrupted; test files removed.\n"
                    : "Test failed; test files removed.\n");
            exit_code = EXIT_RUNTIME;
            break;
        }
        struct limiter lim[TEST_COUNT];
        for (int t = 0; t < TEST_COUNT; t++)
            limiter_judge((enum test_id)t, &res[t], judge, &lim[t]);
        if (opts->test_count < 0) {
            report_text(opts->quiet ? stderr : stdout, params, res);
            report_notes(opts->quiet ? stderr : stdout, lim);
        }
        line.len = 0;
        if (report_csv_line(&line, params, res)) {
            exit_code = fail(EXIT_RUNTIME, "out of memory");
            results_free(res);
            break;
        }
        fputs(sbuf_str(&line), stdout);
        fflush(stdout);
        if (sbuf_append(csv, line.s, line.len)) {
            exit_code = fail(EXIT_RUNTIME, "out of memory");
            results_free(res);
            break;
        }
        line.s[line.len - 1] = '\0'; /* the document keeps the line without '\n' */
        document_add_run(doc, params, line.s, res, lim);
        results_free(res);
    }
    sbuf_free(&line);
    return exit_code;
}

/* Renders doc and hands it out: into the --json file, and with --post to the board together with the
 * CSV lines (post_send then owns the spool file, which keeps the body when the post fails). Returns 0,
 * EXIT_RUNTIME (out of memory), EXIT_PREPARE (the --json file failed) or EXIT_POST (the post failed,
 * whatever happened to the --json file). */
static int deliver(const struct options *opts, struct document *doc, const struct sbuf *csv,
                   struct out_file *json_out, struct out_file *spool_out)
{
    struct sbuf text = {0};
    int exit_code = 0;
    document_now(doc->finished_at, sizeof(doc->finished_at));
    if (document_render(doc, &text)) {
        sbuf_free(&text);
        return fail(EXIT_RUNTIME, "out of memory writing the JSON document");
    }
    if (json_out->fd >= 0 && out_file_write(json_out, sbuf_str(&text), text.len))
        exit_code = fail(EXIT_PREPARE, "can't write %s: %s", opts->json_path, strerror(errno));
    if (opts->post_url) {
        struct post_request req = {
            .board_url = opts->post_url, .token = opts->token, .token_file = opts->token_file, .csv = sbuf_str(csv),
            .document_json = sbuf_str(&text), .tags = opts->tags, .tag_count = opts->tag_count,
            .label = opts->label, .spool_path = opts->spool_path, .spool_fd = spool_out->fd,
            .idempotency_key = opts->idempotency_key, .machine = opts->machine,
        };
        spool_out->fd = -1; /* post_send owns it now */
        if (post_send(&req))
            exit_code = EXIT_POST;
    }
    sbuf_free(&text);
    return exit_code;
}

/* Each resource is released once, at the end, in the reverse order of its acquisition: a failure
 * jumps to the label that releases what was acquired before it. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "sweep") == 0) /* a study of configurations: sweep.h */
        return sweep_main(argc - 1, argv + 1);
    struct options opts;
    char err[1024];
    int exit_code = 0;
    switch (options_parse(&opts, argc, argv, err, sizeof(err))) {
    case OPTIONS_OK:
        break;
    case OPTIONS_HELP:
        options_usage(stdout, 0);
        goto free_options;
    case OPTIONS_VERSION:
        printf(RUNNER_NAME "-runner " RUNNER_VERSION "\n");
        goto free_options;
    case OPTIONS_ERROR:
        exit_code = fail(EXIT_USAGE, "%s", err);
        options_usage(stderr, 1);
        goto free_options;
    }
    /* bonnie++'s order: change user first, so every file below is made as that user */
    if (options_load_token(&opts, err, sizeof(err)) ||
        ((opts.user || opts.group) && ugid_switch(opts.user, opts.group, opts.quiet, err, sizeof(err)))) {
        exit_code = fail(EXIT_USAGE, "%s", err);
        goto free_options;
    }
    if (opts.sem_procs) { /* -p: only set up (or remove) the semaphores for runs with -y s */
        if (opts.sem_procs < 0 ? sync_remove(err, sizeof(err)) : sync_create(opts.sem_procs, err, sizeof(err)))
            exit_code = fail(EXIT_PREPARE, "%s", err);
        goto free_options;
    }
    /* The scratch directory before the size rules: when -d names no usable directory, that is the
     * mistake to report, not a default file size that the RAM rule refuses. */
    struct workdir probe;
    if (workdir_open(&probe, opts.dir, err, sizeof(err))) {
        exit_code = fail(EXIT_PREPARE, "%s", err);
        goto free_options;
    }
    workdir_close(&probe);
    const char *ram_source = opts.ram_set ? "option" : "detected";
    int64_t detected_ram_mib = detect_ram_mib();
    if (options_finalize(&opts, detected_ram_mib, err, sizeof(err))) {
        exit_code = fail(EXIT_USAGE, "%s", err);
        goto free_options;
    }
    if (install_signals()) {
        exit_code = fail(EXIT_PREPARE, "can't handle SIGINT: %s", strerror(errno));
        goto free_options;
    }
    struct utsname uts; /* the default machine name points into it */
    if (!opts.machine) {
        opts.machine = uname(&uts) == 0 ? uts.nodename : "";
        if (options_check_machine(opts.machine, err, sizeof(err))) {
            exit_code = fail(EXIT_USAGE, "the node name can't be the machine name (give one with -m): %s", err);
            goto free_options;
        }
    }

    struct out_file json_out = OUT_FILE_NONE, spool_out = OUT_FILE_NONE;
    if (opts.json_path && out_file_open(&json_out, opts.json_path)) {
        exit_code = fail(EXIT_PREPARE, "can't write the --json file %s: %s", opts.json_path, strerror(errno));
        goto free_options;
    }
    if (opts.post_url && opts.spool_path && out_file_create_spool(&spool_out, opts.spool_path)) {
        exit_code = fail(EXIT_PREPARE, "can't create the --spool file %s%s: %s", opts.spool_path,
                         errno == EEXIST ? " (it exists; the runner never overwrites one)" : "", strerror(errno));
        goto abandon_outputs;
    }
    struct workdir wd;
    if (workdir_open(&wd, opts.dir, err, sizeof(err))) {
        exit_code = fail(EXIT_PREPARE, "%s", err);
        goto abandon_outputs;
    }
    int64_t free_bytes = workdir_free_bytes(&wd), need = space_needed(&opts);
    if (free_bytes >= 0 && free_bytes < need) {
        exit_code = fail(EXIT_PREPARE, "not enough free space in %s: the tests need %lld MiB, %lld MiB are free",
                         opts.dir, (long long)(need >> 20), (long long)(free_bytes >> 20));
        goto close_workdir;
    }
    if (!opts.seed_set)
        opts.seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
    char seed_text[32];
    snprintf(seed_text, sizeof(seed_text), "%u", opts.seed);
    struct rng rng;
    if (!opts.random_file) {
        rng_init(&rng, opts.seed);
    } else if (rng_init_file(&rng, opts.random_file, err, sizeof(err))) {
        exit_code = fail(EXIT_PREPARE, "%s", err);
        goto close_workdir;
    }
    struct bench_sync sync = {SYNC_NONE, -1};
    if (sync_open(&sync, (enum sync_mode)opts.sync_mode, err, sizeof(err))) {
        exit_code = fail(EXIT_PREPARE, "%s", err);
        goto free_rng;
    }
    struct system_info *sys = calloc(1, sizeof(*sys));
    if (!sys) {
        exit_code = fail(EXIT_PREPARE, "out of memory");
        goto free_rng;
    }

    sysinfo_collect(sys, opts.dir, wd.dirfd);
    struct evidence_source evsrc;
    evidence_open(&evsrc, sys->block.found ? sys->block.name : NULL, &sys->cgroup);
    const char *fs_type = sys->mount.found ? sys->mount.fs_type : "";
    struct limiter_context judge = {
        .bp = &opts.bp, .ram_mib = detected_ram_mib, .cg = &sys->cgroup,
        .memory_fs = strcmp(fs_type, "tmpfs") == 0 || strcmp(fs_type, "ramfs") == 0,
        .device = sys->block.found ? sys->block.name : "", .cpus = sys->cpu_count_online,
    };
    struct document doc;
    document_init(&doc, argc, argv, &opts, sys, ram_source);
    warn_about_ram(&doc, &opts, detected_ram_mib, &sys->cgroup);
    struct run_params params = {
        .machine = opts.machine, .version = RUNNER_NAME "-" RUNNER_VERSION, .bp = &opts.bp,
        .seed = opts.random_file ? opts.random_file : seed_text,
    };
    struct bench_config bench = {
        .dirfd = wd.dirfd, .name = wd.name, .p = &opts.bp, .quiet = opts.quiet, .sync = &sync,
#ifdef RUNNER_NO_SAMPLING
        /* The control build of bench/runner_vs_bonnie.sh (make nosample): the tests run without the
         * evidence samples, so the samples' cost can be measured against this. Never a release build. */
        .ev = NULL,
#else
        .ev = &evsrc,
#endif
        .stop = &stop_requested,
    };

    struct sbuf csv = {0};
    exit_code = run_tests(&opts, &bench, &rng, &judge, &params, &wd, &doc, &csv);
    workdir_cleanup(&wd); /* the scratch directory is clean before the document and the post go out */
    workdir_close(&wd);
    if (exit_code == 0)
        exit_code = deliver(&opts, &doc, &csv, &json_out, &spool_out);
    sbuf_free(&csv);
    document_free(&doc);
    evidence_close(&evsrc);
    free(sys);
free_rng:
    rng_free(&rng);
close_workdir:
    workdir_close(&wd);
abandon_outputs:
    out_file_abandon(&spool_out);
    out_file_abandon(&json_out);
free_options:
    options_free(&opts);
    return exit_code;
}
