/* sweep_plan.h -- the study plan of `bonnieboard-runner sweep`: a small text file of `key = value`
 * lines with one `[name]` section per configuration; the seeded order of each round; the tags of
 * each run; the board URLs printed at the end. Pure text in, structs out: the unit tests reach all
 * of it without a device. */
#ifndef SWEEP_PLAN_H
#define SWEEP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "sbuf.h"

#define SWEEP_MAX_CONFIGS 32
#define SWEEP_MAX_TAGS 40          /* the plan's and a configuration's together; the board takes 50 */
#define SWEEP_MAX_WORDS 64         /* words of a runner = or mkfs = line */
#define SWEEP_MAX_ROUNDS 100       /* rounds = N at most */
/* rounds = auto: at least this many rounds (a 95 % CI from two values is t = 12.7 wide), at most
 * SWEEP_AUTO_MAX_ROUNDS, stopping at the first round after which the study is decided (sweep_stats.h). */
#define SWEEP_AUTO_MIN_ROUNDS 3
#define SWEEP_AUTO_MAX_ROUNDS 10
#define SWEEP_NAME_MAX 64

enum sweep_order { SWEEP_ORDER_INTERLEAVED = 0, SWEEP_ORDER_FIXED };

struct sweep_config {
    char name[SWEEP_NAME_MAX];     /* the [section]'s name: the config= tag */
    int line;                      /* the [section] line, for errors */
    char *mkfs[SWEEP_MAX_WORDS + 1];   /* words, NULL-terminated; the device is appended */
    int mkfs_words;
    char *mount_options;           /* NULL or the -o text */
    struct tag tags[SWEEP_MAX_TAGS];
    int tag_count;
};

struct sweep_plan {
    char *device;                  /* exactly as written */
    int device_line, runner_line;  /* where device = and runner = are, for their errors */
    char *mountpoint;
    int rounds;                    /* 0 = auto */
    enum sweep_order order;
    int seed_set;
    uint32_t seed;                 /* seed = N: the order's seed (otherwise chosen at the start, recorded) */
    char *runner[SWEEP_MAX_WORDS + 1]; /* the runner's options for every run, NULL-terminated */
    int runner_words;
    struct tag tags[SWEEP_MAX_TAGS];
    int tag_count;
    struct sweep_config configs[SWEEP_MAX_CONFIGS];
    int config_count;
    uint64_t checksum;             /* FNV-1a of the plan's text: --resume refuses a changed plan */
};

/* Parses text (the plan file's content; `path` names it in errors). Returns 0, or -1 with
 * "PATH:LINE: key \"KEY\": why" (or "PATH:LINE: why" for a line without a key) in err. The plan owns
 * its strings: sweep_plan_free releases them, whatever the result. */
int sweep_plan_parse(struct sweep_plan *p, const char *path, const char *text, char *err, size_t errlen);

/* The runner = line checked as the runner's own command line would be (options_parse, then
 * options_finalize with ram_mib), without the options the sweep sets itself (-d, -x, --json, --post,
 * --token, --token-file, --spool, --tag, -p, -y). Returns 0 or -1 with the message in err. */
int sweep_plan_check_runner(const struct sweep_plan *p, const char *path, int64_t ram_mib, char *err, size_t errlen);

void sweep_plan_free(struct sweep_plan *p);

/* The order of round `round` (1-based): indexes of p->configs into order[0..config_count-1]. Interleaved:
 * a Fisher-Yates shuffle driven by splitmix64 of (seed, round), the same on every machine; fixed: the
 * plan's order. */
void sweep_plan_order(const struct sweep_plan *p, uint32_t seed, int round, int *order);

/* The tags of one run in tags[] (at most max): the plan's, then the configuration's (a key given
 * twice takes the configuration's value), then config=NAME, round=N and order_seed=SEED. Returns the
 * count. The strings point into the plan, or into the caller's scratch buffers round_text and
 * seed_text. */
int sweep_plan_run_tags(const struct sweep_plan *p, int config, int round, uint32_t seed, char *round_text,
                        size_t round_len, char *seed_text, size_t seed_len, struct tag *tags, int max);

/* The board's compare URL of a study: BOARD/compare?runs=IDS&group=config&baseline=FIRST, the baseline
 * the first run of the plan's first configuration. Returns 0 or -1 (out of memory or no runs). */
int sweep_plan_compare_url(struct sbuf *out, const char *board, const long *run_ids, int run_count,
                           long baseline_id);

/* The two tag keys whose values vary between the configurations (a key some configurations lack
 * counts as varying), when exactly two do; the matrix URL BOARD/matrix?rows=K1&cols=K2&runs=IDS. Returns
 * 1 with out written, 0 when the plan does not vary exactly two keys, -1 out of memory. */
int sweep_plan_matrix_url(struct sbuf *out, const struct sweep_plan *p, const char *board, const long *run_ids,
                          int run_count);

/* FNV-1a, 64 bits, of text. */
uint64_t sweep_plan_checksum(const char *text);

#endif
