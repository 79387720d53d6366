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
#include "sync.h"
#include "sysinfo.h"
#include "ugid.h"
#include "workdir.h"

#define EXIT_USAGE 1
#define EXIT_PREPARE 2
#define EXIT_RUNTIME 3
#define EXIT_POST 4

/* The one mutable global: set by SIGINT/SIGTERM, polled by the test loops. */
static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: bonnieboard-runner [-d scratch-dir] [-s size(MiB)[:chunk-size(b)[:seeks[:seekers]]]]\n"
        "      [-n number-to-stat(*1024)[:max-size[:min-size][:num-directories[:chunk-size]]]]\n"
        "      [-m machine-name] [-r ram-size-in-MiB] [-x number-of-tests] [-c concurrency]\n"
        "      [-q] [-f[size-MiB]] [-b] [-D] [-z seed | -Z random-file] [-u user[:group]] [-g group]\n"
        "      [-p processes | -y s|p]\n"
        "      [--json FILE] [--char-mode syscall|stdio] [--stdio-buffer BYTES]\n"
        "      [--post BOARD_URL] [--token-file FILE | --token TOKEN] [--tag KEY=VALUE]... [--label TEXT]\n"
        "      [--spool FILE]   (the token may also come from $BONNIEBOARD_TOKEN)\n"
        "\n"
        "Runs bonnie++ 2.00a's tests and prints its text report and a CSV line in format 1.98.\n"
        "Exit codes: 1 usage, 2 preparation, 3 run-time failure or interrupted, 4 post failed.\n"
        "Version: " RUNNER_NAME "-" RUNNER_VERSION "\n");
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

int main(int argc, char **argv)
{
    struct options opts;
    char err[1024];
    switch (options_parse(&opts, argc, argv, err, sizeof(err))) {
    case OPTIONS_OK:
        break;
    case OPTIONS_HELP:
        usage(stdout);
        options_free(&opts);
        return 0;
    case OPTIONS_VERSION:
        printf(RUNNER_NAME "-runner " RUNNER_VERSION "\n");
        options_free(&opts);
        return 0;
    case OPTIONS_ERROR:
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        usage(stderr);
        options_free(&opts);
        return EXIT_USAGE;
    }
    if (options_load_token(&opts, err, sizeof(err))) {
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        options_free(&opts);
        return EXIT_USAGE;
    }
    /* bonnie++'s order: change user first, so every file below is made as that user */
    if ((opts.user || opts.group) && ugid_switch(opts.user, opts.group, opts.quiet, err, sizeof(err))) {
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        options_free(&opts);
        return EXIT_USAGE;
    }
    if (opts.sem_procs) { /* -p: only set up (or remove) the semaphores for runs with -y s */
        int rc = opts.sem_procs < 0 ? sync_remove(err, sizeof(err)) : sync_create(opts.sem_procs, err, sizeof(err));
        if (rc)
            fprintf(stderr, "bonnieboard-runner: %s\n", err);
        options_free(&opts);
        return rc ? EXIT_PREPARE : 0;
    }
    const char *ram_source = opts.ram_set ? "option" : "detected";
    int64_t detected_ram_mib = detect_ram_mib();
    if (options_finalize(&opts, detected_ram_mib, err, sizeof(err))) {
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        options_free(&opts);
        return EXIT_USAGE;
    }
    if (install_signals()) {
        perror("bonnieboard-runner: can't handle SIGINT");
        options_free(&opts);
        return EXIT_PREPARE;
    }

    struct utsname uts;
    if (!opts.machine) {
        opts.machine = uname(&uts) == 0 ? uts.nodename : "";
        if (options_check_machine(opts.machine, err, sizeof(err))) {
            fprintf(stderr, "bonnieboard-runner: the node name can't be the machine name (give one with -m): %s\n",
                    err);
            options_free(&opts);
            return EXIT_USAGE;
        }
    }

    struct out_file json_out = {NULL, -1, 0}, spool_out = {NULL, -1, 0};
    if (opts.json_path && out_file_open(&json_out, opts.json_path)) {
        fprintf(stderr, "bonnieboard-runner: can't write the --json file %s: %s\n", opts.json_path, strerror(errno));
        options_free(&opts);
        return EXIT_PREPARE;
    }
    if (opts.post_url && opts.spool_path) {
        spool_out.path = opts.spool_path;
        spool_out.created = 1;
        spool_out.fd = post_spool_create(opts.spool_path);
        if (spool_out.fd < 0) {
            fprintf(stderr, "bonnieboard-runner: can't create the --spool file %s%s: %s\n", opts.spool_path,
                    errno == EEXIST ? " (it exists; the runner never overwrites one)" : "", strerror(errno));
            out_file_abandon(&json_out);
            options_free(&opts);
            return EXIT_PREPARE;
        }
    }

    struct workdir wd;
    if (workdir_open(&wd, opts.dir, err, sizeof(err))) {
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        out_file_abandon(&json_out);
        out_file_abandon(&spool_out);
        options_free(&opts);
        return EXIT_PREPARE;
    }
    int64_t free_bytes = workdir_free_bytes(&wd), need = space_needed(&opts);
    if (free_bytes >= 0 && free_bytes < need) {
        fprintf(stderr, "bonnieboard-runner: not enough free space in %s: the tests need %lld MiB, "
                "%lld MiB are free\n", opts.dir, (long long)(need >> 20), (long long)(free_bytes >> 20));
        workdir_close(&wd);
        out_file_abandon(&json_out);
        out_file_abandon(&spool_out);
        options_free(&opts);
        return EXIT_PREPARE;
    }

    if (!opts.seed_set)
        opts.seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
    struct rng rng;
    char seed_text[32];
    snprintf(seed_text, sizeof(seed_text), "%u", opts.seed);
    if (opts.random_file) {
        if (rng_init_file(&rng, opts.random_file, err, sizeof(err))) {
            fprintf(stderr, "bonnieboard-runner: %s\n", err);
            workdir_close(&wd);
            out_file_abandon(&json_out);
            out_file_abandon(&spool_out);
            options_free(&opts);
            return EXIT_PREPARE;
        }
    } else {
        rng_init(&rng, opts.seed);
    }
    struct bench_sync sync = {SYNC_NONE, -1};
    if (sync_open(&sync, (enum sync_mode)opts.sync_mode, err, sizeof(err))) {
        fprintf(stderr, "bonnieboard-runner: %s\n", err);
        rng_free(&rng);
        workdir_close(&wd);
        out_file_abandon(&json_out);
        out_file_abandon(&spool_out);
        options_free(&opts);
        return EXIT_PREPARE;
    }

    struct system_info *sys = calloc(1, sizeof(*sys));
    if (!sys) {
        fprintf(stderr, "bonnieboard-runner: out of memory\n");
        workdir_close(&wd);
        out_file_abandon(&json_out);
        out_file_abandon(&spool_out);
        rng_free(&rng);
        options_free(&opts);
        return EXIT_PREPARE;
    }
    sysinfo_collect(sys, opts.dir, wd.dirfd);
    struct evidence_source evsrc;
    evidence_open(&evsrc, sys->block.found ? sys->block.name : NULL, &sys->cgroup);
#ifdef RUNNER_NO_SAMPLING
    /* The control build of bench/runner_vs_bonnie.sh (make nosample): the tests run without the
     * evidence samples, so the samples' cost can be measured against this. Never a release build. */
    const struct evidence_source *ev = NULL;
#else
    const struct evidence_source *ev = &evsrc;
#endif
    const char *fs_type = sys->mount.found ? sys->mount.fs_type : "";
    struct limiter_context judge = {
        .bp = &opts.bp, .ram_mib = detected_ram_mib, .cg = &sys->cgroup,
        .memory_fs = strcmp(fs_type, "tmpfs") == 0 || strcmp(fs_type, "ramfs") == 0,
        .device = sys->block.found ? sys->block.name : "", .cpus = sys->cpu_count_online,
    };
    struct document doc;
    document_init(&doc, argc, argv, &opts, sys, ram_source);
    if (opts.bp.file_size_mib && opts.ram_set && detected_ram_mib &&
        opts.bp.file_size_mib * opts.bp.concurrency < detected_ram_mib * 2)
        document_warn(&doc, "file size %lld MiB is less than twice the RAM (%lld MiB; -r %lld was given): "
                      "the I/O results may measure the page cache",
                      (long long)opts.bp.file_size_mib, (long long)detected_ram_mib, (long long)opts.ram_mib);
    if (opts.ram_set && opts.ram_mib == 0)
        document_warn(&doc, "-r 0 disabled bonnie++'s RAM checks");

    struct run_params params = {.machine = opts.machine, .version = RUNNER_NAME "-" RUNNER_VERSION, .bp = &opts.bp};
    params.seed = opts.random_file ? opts.random_file : seed_text;
    struct bench_config bench = {
        .dirfd = wd.dirfd, .name = wd.name, .p = &opts.bp, .quiet = opts.quiet, .sync = &sync,
        .ev = ev, .stop = &stop_requested,
    };

    struct sbuf csv = {0}, line = {0};
    int exit_code = 0;
    if (opts.test_count > 1) {
        printf("%s\n", REPORT_CSV_HEADER);
        fflush(stdout);
    }
    int runs = opts.test_count < 0 ? 1 : opts.test_count;
    for (int run = 0; run < runs; run++) {
        struct test_result res[TEST_COUNT];
        memset(res, 0, sizeof(res));
        rng_reset(&rng); /* bonnie++ Initialize(): every run repeats the seed */
        int rc = BENCH_OK;
        if (opts.bp.file_size_mib)
            rc = bench_io_run(&bench, &rng, res);
        if (rc == BENCH_OK && opts.bp.num_files)
            rc = bench_files_run(&bench, &rng, res);
        if (rc != BENCH_OK || stop_requested) {
            results_free(res);
            workdir_cleanup(&wd);
            fprintf(stderr, rc == BENCH_STOPPED || stop_requested
                    ? "Interrupted; test files removed.\n"
                    : "Test failed; test files removed.\n");
            exit_code = EXIT_RUNTIME;
            break;
        }
        struct limiter lim[TEST_COUNT];
        for (int t = 0; t < TEST_COUNT; t++)
            limiter_judge((enum test_id)t, &res[t], &judge, &lim[t]);
        if (opts.test_count < 0) {
            report_text(opts.quiet ? stderr : stdout, &params, res);
            report_notes(opts.quiet ? stderr : stdout, lim);
        }
        line.len = 0;
        if (report_csv_line(&line, &params, res)) {
            fprintf(stderr, "bonnieboard-runner: out of memory\n");
            exit_code = EXIT_RUNTIME;
            results_free(res);
            break;
        }
        fputs(sbuf_str(&line), stdout);
        fflush(stdout);
        if (sbuf_append(&csv, line.s, line.len)) {
            fprintf(stderr, "bonnieboard-runner: out of memory\n");
            exit_code = EXIT_RUNTIME;
            results_free(res);
            break;
        }
        line.s[line.len - 1] = '\0'; /* the document keeps the line without '\n' */
        document_add_run(&doc, &params, line.s, res, lim);
        results_free(res);
    }
    workdir_cleanup(&wd);
    workdir_close(&wd);

    struct sbuf text = {0};
    if (exit_code == 0) {
        document_now(doc.finished_at, sizeof(doc.finished_at));
        if (document_render(&doc, &text)) {
            fprintf(stderr, "bonnieboard-runner: out of memory writing the JSON document\n");
            exit_code = EXIT_RUNTIME;
        }
    }
    if (exit_code == 0) {
        if (json_out.fd >= 0 && out_file_write(&json_out, sbuf_str(&text), text.len)) {
            fprintf(stderr, "bonnieboard-runner: can't write %s: %s\n", opts.json_path, strerror(errno));
            exit_code = EXIT_PREPARE;
        }
        if (opts.post_url) {
            struct post_request req = {
                .board_url = opts.post_url, .token = opts.token, .csv = sbuf_str(&csv),
                .document_json = sbuf_str(&text), .tags = opts.tags, .tag_count = opts.tag_count,
                .label = opts.label, .spool_path = opts.spool_path, .spool_fd = spool_out.fd,
            };
            spool_out.fd = -1; /* post_send owns it now */
            if (post_send(&req))
                exit_code = EXIT_POST;
        }
    }
    sbuf_free(&text);
    out_file_abandon(&json_out);
    out_file_abandon(&spool_out);
    sbuf_free(&csv);
    sbuf_free(&line);
    document_free(&doc);
    evidence_close(&evsrc);
    rng_free(&rng);
    free(sys);
    options_free(&opts);
    return exit_code;
}
