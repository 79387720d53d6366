/* document.h -- the runner's JSON document: what bonnie++ does not record
 * (system facts, per-test wall/user/sys seconds, bytes, system calls,
 * average I/O size, command line, warnings). Described in runner/README.md. */
#ifndef DOCUMENT_H
#define DOCUMENT_H

#include "limiter.h"
#include "options.h"
#include "report.h"
#include "sbuf.h"
#include "sysinfo.h"
#include "timer.h"

#define DOCUMENT_SCHEMA "bonnieboard-runner/1"
#define DOCUMENT_MAX_WARNINGS 64
#define DOCUMENT_MAX_SEEKERS 64       /* seekers listed in a seek test's evidence */

struct document {
    int argc;
    char **argv;
    char started_at[32];             /* ISO 8601 UTC */
    char finished_at[32];
    const struct options *opts;
    const char *ram_source;          /* "detected" or "option" */
    const struct system_info *sys;
    struct sbuf runs;                /* serialised run objects, comma-separated */
    int run_count;
    char *warnings[DOCUMENT_MAX_WARNINGS];  /* heap strings */
    int warning_count;
    int failed;                      /* sticky: out of memory while recording; render fails */
};

void document_init(struct document *d, int argc, char **argv, const struct options *o,
                   const struct system_info *sys, const char *ram_source);

/* Adds a warning (formatted); duplicates are dropped. */
void document_warn(struct document *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records one run: its CSV line (without newline) and its twelve results. */
void document_add_run(struct document *d, const struct run_params *p, const char *csv_line,
                      const struct test_result res[TEST_COUNT], const struct limiter lim[TEST_COUNT]);

/* Serialises the whole document into out. Returns 0, or -1 when memory ran out here or while
 * recording (a warning or run was lost): the text is then incomplete and must not be used. */
int document_render(const struct document *d, struct sbuf *out);

/* ISO 8601 UTC timestamp of now into buf (>= 32 bytes). */
void document_now(char *buf, size_t len);

void document_free(struct document *d);

#endif
