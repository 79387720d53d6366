/* sweep.c -- running a study plan: the checks, then round by round mkfs, mount, the runner, umount.
 *
 * Each run re-executes this binary (/proc/self/exe) as a plain runner invocation rather than calling
 * the test code in-process: a run is then exactly what `bonnieboard-runner -d MOUNTPOINT ...` does by
 * hand (its option checks, signal handling, evidence document, post and spool rule, exit codes), its
 * memory and file descriptors end with it, and the sweep only has to watch an exit code, a CSV line
 * and the post's answer. docs/decisions.md, "The sweep re-executes the runner for each run". */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "post.h"
#include "report.h"
#include "sbuf.h"
#include "sweep_plan.h"
#include "sweep_safety.h"
#include "sweep_stats.h"

#define EXIT_USAGE 1
#define EXIT_PREPARE 2
#define EXIT_RUNTIME 3
#define EXIT_POST 4

#define MAX_IDS 8                       /* run ids one post answers with (one CSV line: one) */
#define MAX_PLAN_BYTES (1 << 20)
#define STUDY_SUFFIX ".sweep"           /* PLAN.sweep/: the progress file and each run's files */

static volatile sig_atomic_t stop_requested = 0;
static volatile sig_atomic_t child_pid = 0;     /* the command running now, for SIGINT to reach it */

static void on_signal(int sig)
{
    stop_requested = 1;
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int say(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int say(int code, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "bonnieboard-runner sweep: %s\n", line);
    return code;
}

static void usage(FILE *fp)
{
    fprintf(fp,
        "usage: bonnieboard-runner sweep PLAN --yes-destroy DEVICE [--post BOARD_URL] [--token-file FILE]\n"
        "      [--dry-run] [--resume]\n"
        "\n"
        "Runs a configuration study: every round makes each [configuration]'s filesystem on the plan's\n"
        "device, mounts it, runs the tests and unmounts it, in a seeded shuffled order. DEVICE is erased:\n"
        "--yes-destroy must repeat the plan's device exactly. The study's files go to PLAN" STUDY_SUFFIX "/.\n"
        "Exit codes: 1 usage or bad plan, 2 device refused or mkfs/mount failed, 3 a run failed or\n"
        "interrupted, 4 some posts failed (spooled).\n");
}

/* ==== One run's record, in memory and in the progress file ==== */

struct record {
    int round, config;                  /* 1-based round, index into the plan's configurations */
    int exit_code;                      /* the runner's: 0, or 4 (posted nowhere: spooled) */
    long ids[MAX_IDS];
    int id_count;
    double rates[SWEEP_STAT_TESTS];
};

struct study {
    struct sweep_plan plan;
    const char *plan_path;
    char dir[PATH_MAX];                 /* PLAN.sweep */
    char progress_path[PATH_MAX + 16];
    uint32_t seed;
    struct record *records;
    int record_count, record_cap;
    int finished;                       /* the progress file says the study ended */
    const char *post_url, *token_file;
    char self[PATH_MAX];                /* this binary, re-executed for each run */
    time_t started;
    double run_seconds;                 /* the runs of this invocation: their total time and count, */
    int runs_timed;                     /* for the time left */
    char study_id[40];                  /* random, per study: its runs' sweep_study tag and Idempotency-Keys */
    char *progress_device, *progress_mountpoint; /* what the progress file says the study used (--resume) */
    const char *token;                  /* for the board's reads on --resume; freed with token_opts */
    struct options token_opts;
    int have_token_opts;
    int device_fd;                      /* the device held with O_EXCL between runs, or -1 */
    int claims[64], claim_count;        /* its other names, held with O_EXCL for the whole study */
};

static struct record *find_record(struct study *s, int round, int config)
{
    for (int i = 0; i < s->record_count; i++)
        if (s->records[i].round == round && s->records[i].config == config)
            return &s->records[i];
    return NULL;
}

static struct record *add_record(struct study *s)
{
    if (s->record_count == s->record_cap) {
        int cap = s->record_cap ? s->record_cap * 2 : 64;
        struct record *r = realloc(s->records, sizeof(*r) * (size_t)cap);
        if (!r)
            return NULL;
        s->records = r;
        s->record_cap = cap;
    }
    struct record *r = &s->records[s->record_count++];
    memset(r, 0, sizeof(*r));
    return r;
}

static int config_index(const struct sweep_plan *p, const char *name)
{
    for (int c = 0; c < p->config_count; c++)
        if (strcmp(p->configs[c].name, name) == 0)
            return c;
    return -1;
}

/* Reads the progress file of a study to resume. Returns 0 or an exit code (message printed). */
static int load_progress(struct study *s)
{
    FILE *fp = fopen(s->progress_path, "r");
    if (!fp)
        return say(EXIT_USAGE, "--resume: can't read %s: %s", s->progress_path, strerror(errno));
    static char line[16384];
    int lineno = 0, rc = 0, have_plan = 0, have_seed = 0;
    while (rc == 0 && fgets(line, sizeof(line), fp)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        unsigned long long sum;
        unsigned long seed;
        int round;
        char name[SWEEP_NAME_MAX], ids[256];
        int consumed = 0;
        if (line[0] == '#' || line[0] == '\0' || strncmp(line, "order ", 6) == 0 || strncmp(line, "note ", 5) == 0) {
            continue;
        } else if (strncmp(line, "study ", 6) == 0) {
            snprintf(s->study_id, sizeof(s->study_id), "%.39s", line + 6);
        } else if (strncmp(line, "device ", 7) == 0) {
            free(s->progress_device);
            s->progress_device = strdup(line + 7);
        } else if (strncmp(line, "mountpoint ", 11) == 0) {
            free(s->progress_mountpoint);
            s->progress_mountpoint = strdup(line + 11);
        } else if (sscanf(line, "plan %llx", &sum) == 1) {
            have_plan = 1;
            if (sum != s->plan.checksum)
                rc = say(EXIT_USAGE, "--resume: %s changed since the study started (%s:%d): a study keeps its plan; "
                         "start a new one by removing %s", s->plan_path, s->progress_path, lineno, s->dir);
        } else if (sscanf(line, "seed %lu", &seed) == 1) {
            s->seed = (uint32_t)seed;
            have_seed = 1;
        } else if (strncmp(line, "finished", 8) == 0) {
            s->finished = 1;
        } else if (sscanf(line, "run %d %63s exit=%*d ids=%255s csv=%n", &round, name, ids, &consumed) == 3 &&
                   consumed > 0) {
            int c = config_index(&s->plan, name);
            struct record *r = c >= 0 ? add_record(s) : NULL;
            if (!r) {
                rc = say(EXIT_USAGE, "%s:%d: %s", s->progress_path, lineno,
                         c < 0 ? "a configuration the plan does not have" : "out of memory");
                break;
            }
            r->round = round;
            r->config = c;
            sscanf(line, "run %*d %*s exit=%d", &r->exit_code);
            for (char *tok = strtok(ids, ","); tok && r->id_count < MAX_IDS; tok = strtok(NULL, ","))
                if (strcmp(tok, "-") != 0)
                    r->ids[r->id_count++] = atol(tok);
            sweep_stats_from_csv(line + consumed, r->rates);
        } else {
            rc = say(EXIT_USAGE, "%s:%d: not a progress line: \"%.80s\"", s->progress_path, lineno, line);
        }
    }
    fclose(fp);
    if (rc == 0 && (!have_plan || !have_seed))
        rc = say(EXIT_USAGE, "%s: no plan checksum or seed line: not a sweep's progress file", s->progress_path);
    return rc;
}

/* Appends one line to the progress file and flushes it to the disk: a power cut keeps every run
 * recorded before it. Returns 0 or -1. */
static int progress_append(const struct study *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int progress_append(const struct study *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    int fd = open(s->progress_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -1 : 0;
    for (size_t done = 0; rc == 0 && done < (size_t)n;) {
        ssize_t w = write(fd, line + done, (size_t)n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            done += (size_t)w;
    }
    if (fd >= 0 && (fsync(fd) || close(fd)))
        rc = -1;
    free(line);
    return rc;
}

/* ==== Commands ==== */

/* A word as a shell would need it: bare when safe, else in single quotes. */
static void append_shell_word(struct sbuf *out, const char *w)
{
    int bare = *w != '\0';
    for (const char *c = w; *c; c++)
        if (!(strchr("@%+=:,./-_", *c) || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            bare = 0;
    if (out->len)
        sbuf_printf(out, " ");
    if (bare) {
        sbuf_printf(out, "%s", w);
        return;
    }
    sbuf_printf(out, "'");
    for (const char *c = w; *c; c++)
        sbuf_printf(out, *c == '\'' ? "'\\''" : "%c", *c);
    sbuf_printf(out, "'");
}

static void command_text(struct sbuf *out, char *const *argv)
{
    out->len = 0;
    if (out->s)
        out->s[0] = '\0';
    for (int i = 0; argv[i]; i++)
        append_shell_word(out, argv[i]);
}

/* In a child just forked from `parent`: SIGKILL when the sweep dies, so no mkfs, mount or runner outlives it
 * (a runner left behind could still post its run); a parent already gone ends the child at once. */
static void die_with_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
        _exit(127);
}

/* Runs argv with its stdout and stderr collected into output. Returns the exit status as the
 * shell shows it (128 + signal when killed), or -1 when it could not start (errno set). */
static int run_collect(char *const *argv, struct sbuf *output)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC))
        return -1;
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        die_with_parent(parent);
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO); /* mkfs never stops to ask */
        execvp(argv[0], argv);
        fprintf(stderr, "can't run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    close(fds[1]);
    char buf[4096];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        sbuf_append(output, buf, (size_t)n);
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a preparation command (mkfs, mount, umount); on failure prints the command and what it said.
 * Returns 0, or -1 (message printed). */
static int run_step(char *const *argv)
{
    struct sbuf output = {0}, cmd = {0};
    command_text(&cmd, argv);
    int status = run_collect(argv, &output);
    int rc = 0;
    if (status != 0) {
        const char *text = sbuf_str(&output);
        size_t len = strlen(text);
        while (len && text[len - 1] == '\n')
            len--;
        if (status < 0)
            say(0, "can't run `%s`: %s", sbuf_str(&cmd), strerror(errno));
        else
            say(0, "`%s` failed (exit %d)%s%.*s", sbuf_str(&cmd), status, len ? ":\n" : " and said nothing",
                (int)len, text);
        rc = -1;
    }
    sbuf_free(&output);
    sbuf_free(&cmd);
    return rc;
}

/* Whether something is mounted on path (/proc/self/mountinfo). */
static int mounted_on(const char *path)
{
    unsigned ma, mi;
    return sweep_mounted_device("", path, &ma, &mi);
}

/* Unmounts the mountpoint: a few tries while something still holds it (a writeback, a udev probe).
 * Returns 0, or -1 with the failure printed. */
static int unmount(const struct study *s)
{
    char *argv[] = {"umount", s->plan.mountpoint, NULL};
    for (int attempt = 0; attempt < 5; attempt++) {
        struct sbuf output = {0};
        int status = run_collect(argv, &output);
        if (status == 0 || !mounted_on(s->plan.mountpoint)) {
            sbuf_free(&output);
            return 0;
        }
        if (attempt == 4) {
            say(0, "`umount %s` failed (exit %d): %s", s->plan.mountpoint, status, sbuf_str(&output));
            sbuf_free(&output);
            return -1;
        }
        sbuf_free(&output);
        sleep(1);
    }
    return -1;
}

/* ==== Progress ==== */

static void format_duration(char *out, size_t len, double seconds)
{
    long s = seconds < 0 ? 0 : (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

/* The number of runs the study makes at least: every round of a fixed count, SWEEP_AUTO_MIN_ROUNDS (or
 * the rounds begun) for auto. */
static int runs_planned(const struct study *s, int round)
{
    int rounds = s->plan.rounds ? s->plan.rounds : (round > SWEEP_AUTO_MIN_ROUNDS ? round : SWEEP_AUTO_MIN_ROUNDS);
    return rounds * s->plan.config_count;
}

/* "round 2/5, xfs (1/2), 3:04 elapsed, about 7:40 left". */
static void progress_prefix(const struct study *s, int round, int slot, int config, char *out, size_t len)
{
    char elapsed[32], left[48] = "time left unknown yet";
    format_duration(elapsed, sizeof(elapsed), difftime(time(NULL), s->started));
    int remaining = runs_planned(s, round) - s->record_count;
    if (s->runs_timed) {
        char t[32];
        double per_run = s->run_seconds / s->runs_timed;
        format_duration(t, sizeof(t), per_run * (remaining > 0 ? remaining : 0));
        snprintf(left, sizeof(left), "%s%s left", s->plan.rounds ? "about " : "at least ", t);
    }
    char rounds[16];
    if (s->plan.rounds)
        snprintf(rounds, sizeof(rounds), "%d", s->plan.rounds);
    else
        snprintf(rounds, sizeof(rounds), "auto");
    snprintf(out, len, "round %d/%s, %s (%d/%d), %s elapsed, %s", round, rounds, s->plan.configs[config].name,
             slot + 1, s->plan.config_count, elapsed, left);
}

/* The ids of a "Posted to URL: HTTP 201 {...}" line's answer: "created" and "duplicates" (the same line
 * stored before is still this run). */
static void parse_posted_ids(const char *line, struct record *r)
{
    const char *keys[] = {"\"created\":", "\"duplicates\":"};
    for (size_t k = 0; k < 2; k++) {
        const char *p = strstr(line, keys[k]);
        if (!p)
            continue;
        p = strchr(p, '[');
        while (p && *p && *p != ']' && r->id_count < MAX_IDS) {
            p++;
            while (*p == ' ')
                p++;
            char *end;
            long id = strtol(p, &end, 10);
            if (end == p)
                break;
            r->ids[r->id_count++] = id;
            p = end;
        }
    }
}

/* ==== One run ==== */

struct run_files {
    char json[PATH_MAX + 128], csv[PATH_MAX + 128], out[PATH_MAX + 128];
};

static void run_file_names(const struct study *s, int round, int config, struct run_files *f)
{
    const char *name = s->plan.configs[config].name;
    snprintf(f->json, sizeof(f->json), "%s/r%02d-%s.json", s->dir, round, name);
    snprintf(f->csv, sizeof(f->csv), "%s/r%02d-%s.csv", s->dir, round, name);
    snprintf(f->out, sizeof(f->out), "%s/r%02d-%s.txt", s->dir, round, name);
}

/* The runner's argv for one run: the plan's options, then the ones the sweep sets. The strings live in
 * words (freed by the caller). Returns the argv count or -1. */
static int runner_argv(const struct study *s, int round, int config, const struct run_files *f, char **argv,
                       int max, char **owned, int *owned_count)
{
    int n = 0;
    argv[n++] = (char *)s->self;
    for (int i = 0; i < s->plan.runner_words; i++)
        argv[n++] = s->plan.runner[i];
    argv[n++] = "-d";
    argv[n++] = s->plan.mountpoint;
    argv[n++] = "--json";
    argv[n++] = (char *)f->json;
    struct tag tags[64];
    char round_text[16], seed_text[16];
    int nt = sweep_plan_run_tags(&s->plan, config, round, s->seed, round_text, sizeof(round_text), seed_text,
                                 sizeof(seed_text), tags, 64);
    for (int t = 0; t < nt && n + 2 < max; t++) {
        char *kv = NULL;
        if (asprintf(&kv, "%s=%s", tags[t].key, tags[t].value) < 0)
            return -1;
        owned[(*owned_count)++] = kv;
        argv[n++] = "--tag";
        argv[n++] = kv;
    }
    if (s->post_url && s->study_id[0] && n + 4 < max) {
        char *tag = NULL, *key = NULL;
        if (asprintf(&tag, "sweep_study=%s", s->study_id) < 0)
            return -1;
        owned[(*owned_count)++] = tag;
        if (asprintf(&key, "sweep:%s:%s:%d", s->study_id, s->plan.configs[config].name, round) < 0)
            return -1;
        owned[(*owned_count)++] = key;
        argv[n++] = "--tag";
        argv[n++] = tag;
        argv[n++] = "--idempotency-key";
        argv[n++] = key;
    }
    if (s->post_url && n + 4 < max) {
        argv[n++] = "--post";
        argv[n++] = (char *)s->post_url;
        if (s->token_file) {
            argv[n++] = "--token-file";
            argv[n++] = (char *)s->token_file;
        }
    }
    argv[n] = NULL;
    return n;
}

/* The runner as a child: its stdout (text report and CSV line) into f->out, its stderr through ours
 * with the progress in front of each line. Returns its exit status (128 + signal when killed) or -1. */
static int run_runner(struct study *s, int round, int slot, int config, char **argv, const struct run_files *f,
                      struct record *r)
{
    int out = open(f->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0)
        return say(-1, "can't write %s: %s", f->out, strerror(errno));
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        close(out);
        return -1;
    }
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(out);
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        die_with_parent(parent);
        dup2(out, STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "can't run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    close(out);
    close(fds[1]);
    char buf[4096], prefix[256];
    static char line[16384];
    size_t line_len = 0;
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (line_len == 0) {
                progress_prefix(s, round, slot, config, prefix, sizeof(prefix));
                fprintf(stderr, "sweep: %s: ", prefix);
            }
            fputc(buf[i], stderr);
            if (line_len < sizeof(line) - 1)
                line[line_len++] = buf[i];
            if (buf[i] == '\n') {
                line[line_len] = '\0';
                if (strncmp(line, "Posted to ", 10) == 0)
                    parse_posted_ids(line, r);
                line_len = 0;
            }
        }
        fflush(stderr);
    }
    if (line_len)
        fputc('\n', stderr);
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The run's CSV line: the last line of its stdout in format 1.98. Returns 0 with it in csv, or -1. */
static int read_csv_line(const char *path, struct sbuf *csv)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    static char line[8192];
    int found = 0;
    while (fgets(line, sizeof(line), fp)) {
        if (strncmp(line, REPORT_CSV_FORMAT ",", sizeof(REPORT_CSV_FORMAT)) == 0) {
            line[strcspn(line, "\n")] = '\0';
            csv->len = 0;
            sbuf_printf(csv, "%s", line);
            found = 1;
        }
    }
    fclose(fp);
    return found ? 0 : -1;
}

static int write_text_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    int rc = fputs(text, fp) < 0;
    rc |= fclose(fp) != 0;
    return rc ? -1 : 0;
}

/* The argv of mkfs and mount for a configuration (mkfs's words + the device). */
static void step_argvs(const struct study *s, int config, char **mkfs, char **mount)
{
    const struct sweep_config *c = &s->plan.configs[config];
    int n = 0;
    for (int i = 0; i < c->mkfs_words; i++)
        mkfs[n++] = c->mkfs[i];
    mkfs[n++] = s->plan.device;
    mkfs[n] = NULL;
    n = 0;
    mount[n++] = "mount";
    if (c->mount_options) {
        mount[n++] = "-o";
        mount[n++] = c->mount_options;
    }
    mount[n++] = s->plan.device;
    mount[n++] = s->plan.mountpoint;
    mount[n] = NULL;
}

/* Checks the device again right before it is erased: something may have mounted it since. */
static int device_free(struct study *s, const struct sweep_device *dev)
{
    char err[2048];
    if (s->device_fd >= 0) { /* mkfs and mount open it exclusively themselves */
        close(s->device_fd);
        s->device_fd = -1;
    }
    if (sweep_check_in_use("", dev, s->plan.device, s->plan.mountpoint, SWEEP_PROBE_DEVICE, err, sizeof(err)))
        return say(EXIT_PREPARE, "refusing to erase %s: %s", s->plan.device, err);
    return 0;
}

/* Holds the device with O_EXCL between runs, so that nothing mounts or claims it while the sweep is not using
 * it: a few tries while the last umount lets go. Returns 0, or EXIT_PREPARE (message printed). */
static int hold_device(struct study *s)
{
    for (int attempt = 0; attempt < 20; attempt++) {
        s->device_fd = open(s->plan.device, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
        if (s->device_fd >= 0)
            return 0;
        if (errno != EBUSY)
            break;
        usleep(100 * 1000);
    }
    return say(EXIT_PREPARE, "can't hold %s for the study (open with O_EXCL): %s", s->plan.device, strerror(errno));
}

/* One configuration in one round: mkfs, mount, the runner, umount. Returns 0, or an exit code. */
static int one_run(struct study *s, const struct sweep_device *dev, int round, int slot, int config)
{
    char *mkfs[SWEEP_MAX_WORDS + 2], *mount[8];
    step_argvs(s, config, mkfs, mount);
    char prefix[256];
    struct sbuf cmd = {0};
    int rc = device_free(s, dev);
    if (rc)
        return rc;
    progress_prefix(s, round, slot, config, prefix, sizeof(prefix));
    command_text(&cmd, mkfs);
    fprintf(stderr, "sweep: %s: %s\n", prefix, sbuf_str(&cmd));
    time_t began = time(NULL);
    if (run_step(mkfs)) {
        sbuf_free(&cmd);
        return stop_requested ? EXIT_RUNTIME : EXIT_PREPARE;
    }
    if (stop_requested) {
        sbuf_free(&cmd);
        return EXIT_RUNTIME;
    }
    command_text(&cmd, mount);
    fprintf(stderr, "sweep: %s: %s\n", prefix, sbuf_str(&cmd));
    sbuf_free(&cmd);
    if (run_step(mount)) {
        if (mounted_on(s->plan.mountpoint))
            unmount(s);
        return stop_requested ? EXIT_RUNTIME : EXIT_PREPARE;
    }

    struct run_files f;
    run_file_names(s, round, config, &f);
    char *argv[SWEEP_MAX_WORDS + 160], *owned[80];
    int owned_count = 0;
    struct record rec;
    memset(&rec, 0, sizeof(rec));
    rec.round = round;
    rec.config = config;
    int status = -1;
    if (runner_argv(s, round, config, &f, argv, (int)(sizeof(argv) / sizeof(argv[0])), owned, &owned_count) > 0)
        status = run_runner(s, round, slot, config, argv, &f, &rec);
    for (int i = 0; i < owned_count; i++)
        free(owned[i]);
    int unmount_failed = unmount(s) != 0;
    if (!unmount_failed && !stop_requested && hold_device(s))
        unmount_failed = 1;

    if (status != 0 && status != EXIT_POST) {
        if (stop_requested)
            return EXIT_RUNTIME;
        say(0, "the run of %s in round %d failed (the runner's exit %d); its output is in %s",
            s->plan.configs[config].name, round, status, f.out);
        return unmount_failed ? EXIT_PREPARE : (status > 0 && status < 128 ? status : EXIT_RUNTIME);
    }
    struct sbuf csv = {0};
    if (read_csv_line(f.out, &csv)) {
        sbuf_free(&csv);
        return say(EXIT_RUNTIME, "the run of %s in round %d printed no CSV line (see %s)",
                   s->plan.configs[config].name, round, f.out);
    }
    rec.exit_code = status;
    sweep_stats_from_csv(sbuf_str(&csv), rec.rates);
    struct sbuf ids = {0}, csv_file = {0};
    for (int i = 0; i < rec.id_count; i++)
        sbuf_printf(&ids, i ? ",%ld" : "%ld", rec.ids[i]);
    sbuf_printf(&csv_file, "%s\n", sbuf_str(&csv));
    int bad = write_text_file(f.csv, sbuf_str(&csv_file)) ||
              progress_append(s, "run %d %s exit=%d ids=%s csv=%s\n", round, s->plan.configs[config].name, status,
                              rec.id_count ? sbuf_str(&ids) : "-", sbuf_str(&csv));
    sbuf_free(&ids);
    sbuf_free(&csv_file);
    sbuf_free(&csv);
    if (bad)
        return say(EXIT_PREPARE, "can't record the run in %s: %s", s->dir, strerror(errno));
    struct record *r = add_record(s);
    if (!r)
        return say(EXIT_RUNTIME, "out of memory");
    *r = rec;
    s->run_seconds += difftime(time(NULL), began);
    s->runs_timed++;
    if (unmount_failed)
        return EXIT_PREPARE;
    return 0;
}

/* ==== The decision ==== */

/* After `rounds` rounds: the widest CI among the configurations (its configuration and test), from
 * the rounds every configuration has run. Returns the widest half width, -1 when none is measured. */
static double widest_ci(const struct study *s, int rounds, int *config, int *test)
{
    double widest = -1;
    double (*rates)[SWEEP_STAT_TESTS] = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof(*rates));
    if (!rates)
        return -1;
    for (int c = 0; c < s->plan.config_count; c++) {
        int n = 0;
        for (int r = 1; r <= rounds; r++) {
            const struct record *rec = find_record((struct study *)s, r, c);
            if (rec)
                memcpy(rates[n++], rec->rates, sizeof(rec->rates));
        }
        int t = 0;
        double half = sweep_stats_widest((const double(*)[SWEEP_STAT_TESTS])rates, n, &t);
        if (half > widest) {
            widest = half;
            *config = c;
            *test = t;
        }
    }
    free(rates);
    return widest;
}

/* "put_block ±2.1 %, rewrite ±3.0 %, ...": each test's widest CI among the configurations; "+++++" for a
 * test no configuration measured twice (too fast to time), "not run" for one no run ran. */
static void per_test_widest(const struct study *s, int rounds, struct sbuf *out)
{
    double *column = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof(double));
    if (!column)
        return;
    for (int t = 0; t < SWEEP_STAT_TESTS; t++) {
        double widest = -1;
        int ran = 0;
        for (int c = 0; c < s->plan.config_count; c++) {
            int n = 0;
            for (int r = 1; r <= rounds; r++) {
                const struct record *rec = find_record((struct study *)s, r, c);
                if (rec) {
                    column[n++] = rec->rates[t];
                    ran |= rec->rates[t] >= 0;
                }
            }
            double half = sweep_stats_ci_half(column, n);
            if (half > widest)
                widest = half;
        }
        sbuf_printf(out, "%s%s ", t ? ", " : "", sweep_stat_test_names[t]);
        if (!ran)
            sbuf_printf(out, "not run");
        else if (widest < 0)
            sbuf_printf(out, "+++++");
        else
            sweep_stats_interval_text(out, widest);
    }
    free(column);
}

/* The closing note's sentence on the CIs after `rounds` rounds; returns 1 when decided. */
static int decision(const struct study *s, int rounds, struct sbuf *out)
{
    int config = 0, test = 0;
    double widest = widest_ci(s, rounds, &config, &test);
    out->len = 0;
    if (widest < 0) {
        sbuf_printf(out, "no block or file test was measured twice (all +++++): there is nothing to decide");
        return rounds >= SWEEP_AUTO_MIN_ROUNDS;
    }
    int decided = widest <= SWEEP_DECIDED_WITHIN && rounds >= SWEEP_AUTO_MIN_ROUNDS;
    struct sbuf per_test = {0};
    per_test_widest(s, rounds, &per_test);
    sbuf_printf(out, "the widest 95 %% CI of a configuration's geometric mean (put_block, rewrite, get_block and "
                "the six file tests; Student's t on the logs, as the board computes it) is %s %s, ",
                s->plan.configs[config].name, sweep_stat_test_names[test]);
    sweep_stats_interval_text(out, widest);
    sbuf_printf(out, " after %d round%s: %s", rounds, rounds == 1 ? "" : "s",
                decided ? "within ±5 %, decided" : "wider than ±5 %, not decided");
    sbuf_printf(out, " (per test, the widest: %s)", sbuf_str(&per_test));
    sbuf_free(&per_test);
    return decided;
}

/* ==== The end ==== */

static int print_urls(const struct study *s)
{
    if (!s->post_url) {
        printf("No --post: the study's CSV lines and documents are in %s/.\n", s->dir);
        return 0;
    }
    long *ids = malloc(sizeof(long) * (size_t)(s->record_count * MAX_IDS + 1));
    if (!ids)
        return -1;
    int n = 0, spooled = 0;
    long baseline = 0;
    for (int c = 0; c < s->plan.config_count; c++) { /* the first configuration's runs first */
        for (int i = 0; i < s->record_count; i++) {
            const struct record *r = &s->records[i];
            if (r->config != c)
                continue;
            if (r->exit_code == EXIT_POST)
                spooled++;
            for (int k = 0; k < r->id_count; k++) {
                if (!baseline && c == 0)
                    baseline = r->ids[k];
                ids[n++] = r->ids[k];
            }
        }
    }
    struct sbuf url = {0};
    if (n && sweep_plan_compare_url(&url, s->post_url, ids, n, baseline) == 0)
        printf("Compare: %s\n", sbuf_str(&url));
    url.len = 0;
    if (n && sweep_plan_matrix_url(&url, &s->plan, s->post_url, ids, n) == 1)
        printf("Matrix:  %s\n", sbuf_str(&url));
    if (spooled)
        printf("%d run%s could not be posted: %s kept in spool files (the runner printed the command that sends "
               "each); their ids are missing from the URLs above.\n", spooled, spooled == 1 ? "" : "s",
               spooled == 1 ? "it is" : "they are");
    sbuf_free(&url);
    free(ids);
    return 0;
}

/* ==== Setup ==== */

static int read_plan_file(const char *path, struct sbuf *text)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return say(EXIT_USAGE, "can't read the plan %s: %s", path, strerror(errno));
    char buf[8192];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return say(EXIT_USAGE, "can't read the plan %s: %s", path, strerror(errno));
        }
        if (n == 0)
            break;
        if (text->len + (size_t)n > MAX_PLAN_BYTES || memchr(buf, '\0', (size_t)n)) {
            close(fd);
            return say(EXIT_USAGE, "%s is not a plan (over 1 MiB, or binary)", path);
        }
        sbuf_append(text, buf, (size_t)n);
    }
    close(fd);
    return 0;
}

static int64_t ram_mib(void)
{
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    return page > 0 && pages > 0 ? (int64_t)(page / 1024) * (pages / 1024) : 0;
}

/* The device's checks (message printed): a block device, named exactly, not in use. Returns 0 or an
 * exit code; dev filled. */
static int check_device(const struct study *s, const char *yes_destroy, struct sweep_device *dev)
{
    struct stat st, named;
    if (stat(s->plan.device, &st))
        return say(EXIT_PREPARE, "the plan's device %s: %s", s->plan.device, strerror(errno));
    if (!S_ISBLK(st.st_mode))
        return say(EXIT_PREPARE, "the plan's device %s is not a block device", s->plan.device);
    int same = yes_destroy && stat(yes_destroy, &named) == 0 && S_ISBLK(named.st_mode) && named.st_rdev == st.st_rdev;
    char signature[128] = "";
    int fd = open(s->plan.device, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || sweep_probe_signature(fd, signature, sizeof(signature)) < 0) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        return say(EXIT_PREPARE, "can't read %s to look for a signature: %s", s->plan.device, strerror(saved));
    }
    close(fd);
    char err[1024];
    if (sweep_check_naming(s->plan.device, yes_destroy, same, signature, err, sizeof(err)))
        return say(EXIT_USAGE, "%s", err);
    dev->major = major(st.st_rdev);
    dev->minor = minor(st.st_rdev);
    if (sweep_device_name("", dev->major, dev->minor, dev->name, sizeof(dev->name)))
        return say(EXIT_PREPARE, "%s (%u:%u) is not in /sys/dev/block", s->plan.device, dev->major, dev->minor);
    if (sweep_check_in_use("", dev, s->plan.device, s->plan.mountpoint,
                           SWEEP_PROBE_DEVICE | SWEEP_PROBE_ALIASES | SWEEP_PROBE_PROCESSES, err, sizeof(err)))
        return say(EXIT_PREPARE, "refusing to erase %s: %s", s->plan.device, err);
    if (signature[0])
        say(0, "%s holds a signature (%s): the first mkfs erases it", s->plan.device, signature);
    return 0;
}

/* The token file's checks, as the runner makes them; the token is kept for the board's reads on --resume. */
static int check_token_file(struct study *s)
{
    char err[1024];
    char *argv[] = {"bonnieboard-runner", "--token-file", (char *)s->token_file, NULL};
    s->have_token_opts = 1;
    if (options_parse(&s->token_opts, 3, argv, err, sizeof(err)) != OPTIONS_OK ||
        options_load_token(&s->token_opts, err, sizeof(err)))
        return say(EXIT_USAGE, "%s", err);
    s->token = s->token_opts.token;
    return 0;
}

/* --resume: the study's own mount, left by a sweep that was killed (the device its progress file names, on the
 * mountpoint it names), is unmounted; anything else mounted there stays, for check_device to refuse. Returns 0
 * or an exit code (message printed). */
static int unmount_own_leftover(struct study *s)
{
    struct stat st;
    unsigned ma, mi;
    if (!s->progress_device || !s->progress_mountpoint || strcmp(s->progress_device, s->plan.device) != 0 ||
        strcmp(s->progress_mountpoint, s->plan.mountpoint) != 0 || stat(s->plan.device, &st) ||
        !S_ISBLK(st.st_mode) || !sweep_mounted_device("", s->plan.mountpoint, &ma, &mi) || ma != major(st.st_rdev) ||
        mi != minor(st.st_rdev))
        return 0;
    fprintf(stderr, "sweep: %s is still mounted on %s by the interrupted study: unmounting it\n", s->plan.device,
            s->plan.mountpoint);
    return unmount(s) ? EXIT_PREPARE : 0;
}

/* A number after `key` in a JSON answer, or -1. */
static long json_number_after(const char *answer, const char *key)
{
    const char *p = strstr(answer, key);
    if (!p)
        return -1;
    char *end;
    long v = strtol(p + strlen(key), &end, 10);
    return end == p + strlen(key) ? -1 : v;
}

/* Asks the board whether it holds the run of (round, config) of this study (its tags sweep_study, config and
 * round). Returns 1 with its id and CSV line, 0 when it does not, -1 when the board can't be asked (why set). */
static int board_run_of(const struct study *s, int round, int config, long *id, struct sbuf *csv, char *why,
                        size_t whylen)
{
    struct sbuf url = {0}, answer = {0};
    long status = 0;
    int rc = -1;
    if (post_runs_url(s->post_url, &url) ||
        sbuf_printf(&url, "?tag=sweep_study%%3D%s&tag=config%%3D%s&tag=round%%3D%d&limit=1", s->study_id,
                    s->plan.configs[config].name, round) ||
        post_get(sbuf_str(&url), s->token, &answer, &status, why, whylen))
        goto out;
    if (status != 200) {
        snprintf(why, whylen, "GET %s answered HTTP %ld", sbuf_str(&url), status);
        goto out;
    }
    long total = json_number_after(sbuf_str(&answer), "\"total\":");
    *id = json_number_after(sbuf_str(&answer), "\"items\":[{\"id\":");
    if (total == 0) {
        rc = 0;
        goto out;
    }
    if (total < 0 || *id <= 0) {
        snprintf(why, whylen, "GET %s: not a list of runs", sbuf_str(&url));
        goto out;
    }
    url.len = 0;
    answer.len = 0;
    if (post_runs_url(s->post_url, &url) || sbuf_printf(&url, "/export.csv?runs=%ld", *id) ||
        post_get(sbuf_str(&url), s->token, &answer, &status, why, whylen))
        goto out;
    const char *text = sbuf_str(&answer);
    size_t len = strcspn(text, "\n");
    if (status != 200 || len == 0) {
        snprintf(why, whylen, "GET %s answered HTTP %ld without the run's line", sbuf_str(&url), status);
        goto out;
    }
    csv->len = 0;
    sbuf_append(csv, text, len);
    rc = 1;
out:
    sbuf_free(&url);
    sbuf_free(&answer);
    return rc;
}

/* --resume with --post: the runs of the first unfinished round that the board holds already (posted before
 * the sweep was killed, not yet in the progress file) are recorded as done, not run again. A board that can't
 * be asked is said; its runs are then sent again and answered from their Idempotency-Key. Returns 0 or an exit
 * code. */
static int adopt_stored_runs(struct study *s)
{
    if (!s->post_url || !s->study_id[0] || s->finished)
        return 0;
    int rounds = s->plan.rounds ? s->plan.rounds : SWEEP_AUTO_MAX_ROUNDS;
    for (int round = 1; round <= rounds; round++) {
        int missing = 0;
        for (int c = 0; c < s->plan.config_count; c++) {
            if (find_record(s, round, c))
                continue;
            missing = 1;
            long id = 0;
            char why[1024] = "";
            struct sbuf csv = {0};
            int held = board_run_of(s, round, c, &id, &csv, why, sizeof(why));
            if (held < 0) {
                sbuf_free(&csv);
                say(0, "--resume: can't ask the board which runs it holds (%s): a run it holds is sent again and "
                    "answered from its Idempotency-Key", why);
                return 0;
            }
            if (held == 1) {
                struct record *r = add_record(s);
                if (!r || progress_append(s, "run %d %s exit=0 ids=%ld csv=%s\n", round, s->plan.configs[c].name, id,
                                          sbuf_str(&csv))) {
                    sbuf_free(&csv);
                    return say(EXIT_PREPARE, "can't record the run in %s: %s", s->dir, strerror(errno));
                }
                r->round = round;
                r->config = c;
                r->ids[r->id_count++] = id;
                sweep_stats_from_csv(sbuf_str(&csv), r->rates);
                fprintf(stderr, "sweep: round %d, %s: the board holds its run already (run %ld): not run again\n",
                        round, s->plan.configs[c].name, id);
            }
            sbuf_free(&csv);
        }
        if (missing)
            break; /* runs go round by round: a later round has nothing on the board */
    }
    return 0;
}

static int max_rounds(const struct study *s)
{
    return s->plan.rounds ? s->plan.rounds : SWEEP_AUTO_MAX_ROUNDS;
}

static void print_dry_run(struct study *s)
{
    int rounds = s->plan.rounds ? s->plan.rounds : SWEEP_AUTO_MIN_ROUNDS;
    printf("# bonnieboard-runner sweep %s: a dry run; nothing below is run\n", s->plan_path);
    printf("# order seed %lu%s\n", (unsigned long)s->seed,
           s->plan.seed_set ? " (the plan's seed)" : " (chosen now: a real run chooses its own unless the plan "
                                                     "gives seed =)");
    int order[SWEEP_MAX_CONFIGS];
    struct sbuf cmd = {0};
    char *mkdir_argv[] = {"mkdir", s->plan.mountpoint, NULL}, *umount_argv[] = {"umount", s->plan.mountpoint, NULL};
    if (access(s->plan.mountpoint, F_OK)) {
        command_text(&cmd, mkdir_argv);
        printf("%s\n", sbuf_str(&cmd));
    }
    for (int round = 1; round <= rounds; round++) {
        sweep_plan_order(&s->plan, s->seed, round, order);
        printf("# round %d:", round);
        for (int i = 0; i < s->plan.config_count; i++)
            printf(" %s", s->plan.configs[order[i]].name);
        printf("\n");
        for (int i = 0; i < s->plan.config_count; i++) {
            int c = order[i];
            char *mkfs[SWEEP_MAX_WORDS + 2], *mount[8];
            step_argvs(s, c, mkfs, mount);
            struct run_files f;
            run_file_names(s, round, c, &f);
            char *argv[SWEEP_MAX_WORDS + 160], *owned[80];
            int owned_count = 0;
            command_text(&cmd, mkfs);
            printf("%s\n", sbuf_str(&cmd));
            command_text(&cmd, mount);
            printf("%s\n", sbuf_str(&cmd));
            if (runner_argv(s, round, c, &f, argv, (int)(sizeof(argv) / sizeof(argv[0])), owned, &owned_count) > 0) {
                command_text(&cmd, argv);
                struct sbuf out = {0};
                append_shell_word(&out, f.out);
                printf("%s > %s\n", sbuf_str(&cmd), sbuf_str(&out));
                sbuf_free(&out);
            }
            for (int k = 0; k < owned_count; k++)
                free(owned[k]);
            command_text(&cmd, umount_argv);
            printf("%s\n", sbuf_str(&cmd));
        }
    }
    if (!s->plan.rounds)
        printf("# rounds = auto: then round by round, up to %d, until every configuration's 95 %% CI of the block "
               "and file tests is within ±5 %%\n", SWEEP_AUTO_MAX_ROUNDS);
    sbuf_free(&cmd);
}

static int install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: a blocked read returns EINTR */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
        return -1;
    sa.sa_handler = SIG_IGN;
    return sigaction(SIGHUP, &sa, NULL) || sigaction(SIGPIPE, &sa, NULL);
}

/* ==== The study ==== */

static int run_study(struct study *s, const struct sweep_device *dev)
{
    int order[SWEEP_MAX_CONFIGS];
    struct sbuf note = {0};
    int exit_code = 0, decided = 0, last_round = 0;
    for (int round = 1; round <= max_rounds(s) && !decided && !s->finished; round++) {
        sweep_plan_order(&s->plan, s->seed, round, order);
        int todo = 0;
        for (int i = 0; i < s->plan.config_count; i++)
            todo += !find_record(s, round, order[i]);
        if (todo == s->plan.config_count) {
            struct sbuf names = {0};
            for (int i = 0; i < s->plan.config_count; i++)
                sbuf_printf(&names, " %s", s->plan.configs[order[i]].name);
            progress_append(s, "order %d%s\n", round, sbuf_str(&names));
            sbuf_free(&names);
        }
        for (int i = 0; i < s->plan.config_count && exit_code == 0; i++) {
            if (find_record(s, round, order[i]))
                continue; /* done before --resume */
            if (stop_requested) {
                exit_code = EXIT_RUNTIME;
                break;
            }
            exit_code = one_run(s, dev, round, i, order[i]);
        }
        if (exit_code)
            break;
        last_round = round;
        decided = decision(s, round, &note);
        if (!s->plan.rounds && round >= SWEEP_AUTO_MIN_ROUNDS)
            fprintf(stderr, "sweep: after round %d: %s\n", round, sbuf_str(&note));
        else
            decided = 0;
    }
    if (exit_code == 0 && !s->finished) {
        decision(s, last_round, &note);
        const char *rule = s->plan.rounds ? "" : decided ? "rounds = auto stopped: " : "rounds = auto reached its "
                                                                                      "10 rounds undecided: ";
        progress_append(s, "finished %d\n", last_round);
        printf("Study done: %d configurations × %d rounds, order seed %lu.\n%s%s.\n", s->plan.config_count,
               last_round, (unsigned long)s->seed, rule, sbuf_str(&note));
        progress_append(s, "note %s%s\n", rule, sbuf_str(&note));
    } else if (exit_code == 0) {
        printf("The study in %s is finished.\n", s->dir);
    } else if (exit_code == EXIT_RUNTIME && stop_requested) {
        say(0, "interrupted: %d runs kept (posted when --post was given), nothing is mounted; "
            "add --resume to the same command to continue", s->record_count);
    }
    sbuf_free(&note);
    if (exit_code == 0 || (exit_code == EXIT_RUNTIME && stop_requested))
        print_urls(s);
    fflush(stdout);
    if (exit_code == 0)
        for (int i = 0; i < s->record_count; i++)
            if (s->records[i].exit_code == EXIT_POST)
                exit_code = EXIT_POST;
    return exit_code;
}

int sweep_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"yes-destroy", required_argument, NULL, 'Y'}, {"post", required_argument, NULL, 'P'},
        {"token-file", required_argument, NULL, 'T'},  {"dry-run", no_argument, NULL, 'N'},
        {"resume", no_argument, NULL, 'R'},            {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *yes_destroy = NULL;
    int dry_run = 0, resume = 0, c;
    static struct study s;
    memset(&s, 0, sizeof(s));
    s.device_fd = -1;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (c) {
        case 'Y': yes_destroy = optarg; break;
        case 'P': s.post_url = optarg; break;
        case 'T': s.token_file = optarg; break;
        case 'N': dry_run = 1; break;
        case 'R': resume = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            say(0, "%s %s", c == ':' ? "an option needs an argument:" : "unknown option", argv[optind - 1]);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        say(0, optind >= argc ? "no PLAN given" : "one PLAN only, then options");
        usage(stderr);
        return EXIT_USAGE;
    }
    s.plan_path = argv[optind];
    if (s.token_file && !s.post_url)
        return say(EXIT_USAGE, "--token-file goes with --post");

    struct sbuf text = {0};
    char err[2048];
    int exit_code = read_plan_file(s.plan_path, &text);
    if (exit_code)
        goto out;
    if (sweep_plan_parse(&s.plan, s.plan_path, sbuf_str(&text), err, sizeof(err)) ||
        sweep_plan_check_runner(&s.plan, s.plan_path, ram_mib(), err, sizeof(err))) {
        exit_code = say(EXIT_USAGE, "%s", err);
        goto out;
    }
    if (s.token_file && (exit_code = check_token_file(&s)))
        goto out;
    ssize_t self_len = readlink("/proc/self/exe", s.self, sizeof(s.self) - 1);
    if (self_len <= 0) {
        exit_code = say(EXIT_PREPARE, "can't find this program's own path (/proc/self/exe): %s", strerror(errno));
        goto out;
    }
    s.self[self_len] = '\0';
    snprintf(s.dir, sizeof(s.dir), "%s" STUDY_SUFFIX, s.plan_path);
    snprintf(s.progress_path, sizeof(s.progress_path), "%s/progress", s.dir);
    if (resume) {
        if ((exit_code = load_progress(&s)))
            goto out;
    } else if (access(s.progress_path, F_OK) == 0) {
        exit_code = say(EXIT_USAGE, "%s holds a study of this plan already: add --resume to continue it, or move "
                        "the directory away to start again", s.dir);
        goto out;
    } else {
        s.seed = s.plan.seed_set ? s.plan.seed : (uint32_t)getpid() ^ (uint32_t)time(NULL);
        unsigned char id[8];
        if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
            exit_code = say(EXIT_PREPARE, "can't draw the study's id: %s", strerror(errno));
            goto out;
        }
        for (size_t i = 0; i < sizeof(id); i++)
            snprintf(s.study_id + 2 * i, 3, "%02x", id[i]);
    }

    if (resume && !dry_run && (exit_code = unmount_own_leftover(&s)))
        goto out;
    struct sweep_device dev;
    if ((exit_code = check_device(&s, yes_destroy, &dev)))
        goto out;
    if (dry_run) {
        print_dry_run(&s);
        goto out;
    }
    s.claim_count = sweep_claim_aliases(&dev, s.claims, (int)(sizeof(s.claims) / sizeof(s.claims[0])), err,
                                        sizeof(err));
    if (s.claim_count < 0) {
        s.claim_count = 0;
        exit_code = say(EXIT_PREPARE, "refusing to erase %s: %s", s.plan.device, err);
        goto out;
    }
    if ((exit_code = hold_device(&s)))
        goto out;
    if (install_signals()) {
        exit_code = say(EXIT_PREPARE, "can't handle SIGINT: %s", strerror(errno));
        goto out;
    }
    if (mkdir(s.dir, 0755) && errno != EEXIST) {
        exit_code = say(EXIT_PREPARE, "can't make the study directory %s: %s", s.dir, strerror(errno));
        goto out;
    }
    if (mkdir(s.plan.mountpoint, 0755) && errno != EEXIST) {
        exit_code = say(EXIT_PREPARE, "can't make the mountpoint %s: %s", s.plan.mountpoint, strerror(errno));
        goto out;
    }
    if (!resume && (progress_append(&s, "# bonnieboard-runner sweep of %s: its progress, read by --resume\n"
                                        "plan %016llx\nseed %lu\nstudy %s\ndevice %s\nmountpoint %s\n",
                                    s.plan_path, (unsigned long long)s.plan.checksum, (unsigned long)s.seed,
                                    s.study_id, s.plan.device, s.plan.mountpoint))) {
        exit_code = say(EXIT_PREPARE, "can't write %s: %s", s.progress_path, strerror(errno));
        goto out;
    }
    if (resume && (exit_code = adopt_stored_runs(&s)))
        goto out;
    s.started = time(NULL);
    char rounds[16] = "auto";
    if (s.plan.rounds)
        snprintf(rounds, sizeof(rounds), "%d", s.plan.rounds);
    fprintf(stderr, "sweep: %d configurations, %s rounds, order seed %lu, study files in %s\n",
            s.plan.config_count, rounds, (unsigned long)s.seed, s.dir);
    exit_code = run_study(&s, &dev);
out:
    sbuf_free(&text);
    if (s.device_fd >= 0)
        close(s.device_fd);
    for (int i = 0; i < s.claim_count; i++)
        close(s.claims[i]);
    if (s.have_token_opts)
        options_free(&s.token_opts);
    free(s.progress_device);
    free(s.progress_mountpoint);
    free(s.records);
    sweep_plan_free(&s.plan);
    return exit_code;
}
