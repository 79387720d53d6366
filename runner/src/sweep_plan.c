/* sweep_plan.c -- reading a study plan, the rounds' order, the runs' tags and the board URLs. */
#include "sweep_plan.h"

#include "sbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t sweep_plan_checksum(const char *text)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *s = (const unsigned char *)text; *s; s++)
        h = (h ^ *s) * 1099511628211ULL;
    return h;
}

/* The keys a plan knows, for the "unknown key" message. */
#define GLOBAL_KEYS "device, mountpoint, rounds, order, seed, runner, tags"
#define SECTION_KEYS "mkfs, mount_options, tags"
/* Tags the sweep sets on every run itself. */
static const char *const reserved_tags[] = {"config", "round", "order_seed"};

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Splits value at spaces into words[] (heap copies, NULL-terminated). Returns the count or -1. */
static int split_words(const char *value, char **words, int max)
{
    int n = 0;
    const char *p = value;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (n >= max)
            return -1;
        words[n] = strndup(start, (size_t)(p - start));
        if (!words[n])
            return -1;
        words[++n] = NULL;
    }
    return n;
}

/* tags = K=V K=V: each checked by the runner's own --tag rules (the board's), reserved keys refused. */
static int parse_tags(const char *value, struct tag *tags, int *count, const char *where, const char *key,
                      char *err, size_t errlen)
{
    char *words[SWEEP_MAX_WORDS + 1];
    int n = split_words(value, words, SWEEP_MAX_WORDS);
    int rc = 0;
    if (n < 0) {
        for (int i = 0; i < SWEEP_MAX_WORDS && words[i]; i++)
            free(words[i]);
        return set_error(err, errlen, "%s: key \"%s\": more than %d words", where, key, SWEEP_MAX_WORDS);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        struct options o;
        char why[512];
        char *argv[] = {"sweep", "--tag", words[i], NULL};
        if (options_parse(&o, 3, argv, why, sizeof(why)) != OPTIONS_OK) {
            rc = set_error(err, errlen, "%s: key \"%s\": %s", where, key, why);
        } else {
            for (size_t r = 0; r < sizeof(reserved_tags) / sizeof(reserved_tags[0]); r++)
                if (strcmp(o.tags[0].key, reserved_tags[r]) == 0)
                    rc = set_error(err, errlen, "%s: key \"%s\": the tag %s= is the sweep's own (it sets config=, round= "
                              "and order_seed= on every run)", where, key, o.tags[0].key);
            int at = *count;
            for (int t = 0; t < *count; t++)
                if (strcmp(tags[t].key, o.tags[0].key) == 0)
                    at = t;
            if (rc == 0 && at == *count && *count >= SWEEP_MAX_TAGS)
                rc = set_error(err, errlen, "%s: key \"%s\": more than %d tags", where, key, SWEEP_MAX_TAGS);
            if (rc == 0) {
                if (at < *count) { /* a key given twice: the later value, as --tag does */
                    free(tags[at].key);
                    free(tags[at].value);
                } else {
                    (*count)++;
                }
                tags[at] = o.tags[0];
                o.tags[0].key = o.tags[0].value = NULL;
                o.tag_count = 0;
            }
        }
        options_free(&o);
    }
    for (int i = 0; i < n; i++)
        free(words[i]);
    return rc;
}

static int parse_uint(const char *text, long max, long *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*text))
        return -1;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A section name becomes the value of config=: letters, digits, '.', '_', '-'. */
static int valid_name(const char *name)
{
    if (!*name || strlen(name) >= SWEEP_NAME_MAX)
        return 0;
    for (const char *s = name; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
            return 0;
    return 1;
}

static int set_string(char **slot, const char *value, const char *where, const char *key, char *err, size_t errlen)
{
    if (*slot)
        return set_error(err, errlen, "%s: key \"%s\" is given twice", where, key);
    if (!*value)
        return set_error(err, errlen, "%s: key \"%s\" has no value", where, key);
    *slot = strdup(value);
    return *slot ? 0 : set_error(err, errlen, "out of memory");
}

static int parse_global(struct sweep_plan *p, const char *key, const char *value, const char *where, int *seen,
                        char *err, size_t errlen)
{
    long v;
    if (strcmp(key, "device") == 0)
        return set_string(&p->device, value, where, key, err, errlen);
    if (strcmp(key, "mountpoint") == 0) {
        if (value[0] != '/')
            return set_error(err, errlen, "%s: key \"mountpoint\": an absolute path, got \"%s\"", where, value);
        return set_string(&p->mountpoint, value, where, key, err, errlen);
    }
    /* seen: bit 0 rounds, 1 order, 2 seed, 3 runner, 4 tags */
    int bit = strcmp(key, "rounds") == 0 ? 1 : strcmp(key, "order") == 0 ? 2 : strcmp(key, "seed") == 0 ? 4
            : strcmp(key, "runner") == 0 ? 8 : strcmp(key, "tags") == 0 ? 16 : 0;
    if (!bit)
        return set_error(err, errlen, "%s: unknown key \"%s\" (before the first [section]: " GLOBAL_KEYS ")", where, key);
    if (*seen & bit)
        return set_error(err, errlen, "%s: key \"%s\" is given twice", where, key);
    *seen |= bit;
    if (bit == 1) {
        if (strcmp(value, "auto") == 0)
            p->rounds = 0;
        else if (parse_uint(value, SWEEP_MAX_ROUNDS, &v) || v < 1)
            return set_error(err, errlen, "%s: key \"rounds\": a whole number 1..%d or auto, got \"%s\"", where,
                        SWEEP_MAX_ROUNDS, value);
        else
            p->rounds = (int)v;
        return 0;
    }
    if (bit == 2) {
        if (strcmp(value, "interleaved") == 0)
            p->order = SWEEP_ORDER_INTERLEAVED;
        else if (strcmp(value, "fixed") == 0)
            p->order = SWEEP_ORDER_FIXED;
        else
            return set_error(err, errlen, "%s: key \"order\": interleaved or fixed, got \"%s\"", where, value);
        return 0;
    }
    if (bit == 4) {
        char *end;
        errno = 0;
        unsigned long long seed = strtoull(value, &end, 10);
        if (!isdigit((unsigned char)*value) || errno || *end || seed > UINT32_MAX)
            return set_error(err, errlen, "%s: key \"seed\": a whole number 0..%lu, got \"%s\"", where,
                        (unsigned long)UINT32_MAX, value);
        p->seed = (uint32_t)seed;
        p->seed_set = 1;
        return 0;
    }
    if (bit == 8) {
        int n = split_words(value, p->runner, SWEEP_MAX_WORDS);
        if (n < 0)
            return set_error(err, errlen, "%s: key \"runner\": more than %d words", where, SWEEP_MAX_WORDS);
        p->runner_words = n;
        return 0;
    }
    return parse_tags(value, p->tags, &p->tag_count, where, key, err, errlen);
}

static int parse_section_key(struct sweep_config *c, const char *key, const char *value, const char *where,
                             int *seen, char *err, size_t errlen)
{
    if (strcmp(key, "mkfs") == 0) {
        if (c->mkfs_words)
            return set_error(err, errlen, "%s: key \"mkfs\" is given twice", where);
        int n = split_words(value, c->mkfs, SWEEP_MAX_WORDS);
        if (n < 0)
            return set_error(err, errlen, "%s: key \"mkfs\": more than %d words", where, SWEEP_MAX_WORDS);
        if (n == 0)
            return set_error(err, errlen, "%s: key \"mkfs\" has no value", where);
        c->mkfs_words = n;
        return 0;
    }
    if (strcmp(key, "mount_options") == 0) {
        if (strpbrk(value, " \t"))
            return set_error(err, errlen, "%s: key \"mount_options\": one word, options separated by commas, got \"%s\"",
                        where, value);
        return set_string(&c->mount_options, value, where, key, err, errlen);
    }
    if (strcmp(key, "tags") == 0) {
        if (*seen)
            return set_error(err, errlen, "%s: key \"tags\" is given twice", where);
        *seen = 1;
        return parse_tags(value, c->tags, &c->tag_count, where, key, err, errlen);
    }
    return set_error(err, errlen, "%s: unknown key \"%s\" (in a [section]: " SECTION_KEYS ")", where, key);
}

int sweep_plan_parse(struct sweep_plan *p, const char *path, const char *text, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->rounds = -1;
    p->checksum = sweep_plan_checksum(text);
    int global_seen = 0, section_tags_seen = 0, lineno = 0;
    struct sweep_config *cur = NULL;
    const char *s = text;
    char where[512];
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        lineno++;
        snprintf(where, sizeof(where), "%s:%d", path, lineno);
        char *line = strndup(s, len);
        if (!line)
            return set_error(err, errlen, "out of memory");
        s += len + (eol ? 1 : 0);
        char *hash = strchr(line, '#'); /* a comment runs to the end of the line */
        if (hash)
            *hash = '\0';
        char *t = trim(line);
        int rc = 0;
        if (!*t) {
            /* blank */
        } else if (*t == '[') {
            size_t n = strlen(t);
            if (t[n - 1] != ']') {
                rc = set_error(err, errlen, "%s: a section line is [name], got \"%s\"", where, t);
            } else {
                t[n - 1] = '\0';
                char *name = trim(t + 1);
                if (!valid_name(name))
                    rc = set_error(err, errlen, "%s: section [%s]: a name of 1..%d letters, digits, '.', '_' or '-' "
                              "(it becomes the tag config=NAME)", where, name, SWEEP_NAME_MAX - 1);
                for (int i = 0; rc == 0 && i < p->config_count; i++)
                    if (strcmp(p->configs[i].name, name) == 0)
                        rc = set_error(err, errlen, "%s: section [%s] is given twice (first on line %d)", where, name,
                                  p->configs[i].line);
                if (rc == 0 && cur && !cur->mkfs_words)
                    rc = set_error(err, errlen, "%s:%d: section [%s]: key \"mkfs\" is missing", path, cur->line, cur->name);
                if (rc == 0 && p->config_count >= SWEEP_MAX_CONFIGS)
                    rc = set_error(err, errlen, "%s: at most %d configurations", where, SWEEP_MAX_CONFIGS);
                if (rc == 0) {
                    cur = &p->configs[p->config_count++];
                    snprintf(cur->name, sizeof(cur->name), "%s", name);
                    cur->line = lineno;
                    section_tags_seen = 0;
                }
            }
        } else {
            char *eq = strchr(t, '=');
            if (!eq) {
                rc = set_error(err, errlen, "%s: expected key = value or [name], got \"%s\"", where, t);
            } else {
                *eq = '\0';
                char *key = trim(t), *value = trim(eq + 1);
                if (!*key)
                    rc = set_error(err, errlen, "%s: a line without a key before '='", where);
                else if (cur)
                    rc = parse_section_key(cur, key, value, where, &section_tags_seen, err, errlen);
                else
                    rc = parse_global(p, key, value, where, &global_seen, err, errlen);
                if (rc == 0 && !cur && strcmp(key, "device") == 0)
                    p->device_line = lineno;
                if (rc == 0 && !cur && strcmp(key, "runner") == 0)
                    p->runner_line = lineno;
            }
        }
        free(line);
        if (rc)
            return rc;
    }
    snprintf(where, sizeof(where), "%s:%d", path, lineno ? lineno : 1);
    if (cur && !cur->mkfs_words)
        return set_error(err, errlen, "%s:%d: section [%s]: key \"mkfs\" is missing", path, cur->line, cur->name);
    if (!p->device)
        return set_error(err, errlen, "%s: key \"device\" is missing (the scratch device every configuration erases)",
                    where);
    if (p->device[0] != '/')
        return set_error(err, errlen, "%s:%d: key \"device\": an absolute path like /dev/md0, got \"%s\"", path,
                         p->device_line, p->device);
    if (!p->mountpoint)
        return set_error(err, errlen, "%s: key \"mountpoint\" is missing", where);
    if (p->rounds < 0)
        return set_error(err, errlen, "%s: key \"rounds\" is missing (a number, or auto)", where);
    if (p->config_count == 0)
        return set_error(err, errlen, "%s: no configuration: add a [name] section with mkfs = ...", where);
    for (int c = 0; c < p->config_count; c++)
        if (p->tag_count + p->configs[c].tag_count + 4 > 50)
            return set_error(err, errlen, "%s:%d: section [%s]: key \"tags\": with the plan's tags and the sweep's four, "
                        "over the board's 50 tags", path, p->configs[c].line, p->configs[c].name);
    return 0;
}

/* Whether o's field s came from the command line words (not a default). */
static int from_words(const char *s, char *const *words)
{
    for (int i = 0; s && words[i]; i++)
        if (s >= words[i] && s <= words[i] + strlen(words[i]))
            return 1;
    return 0;
}

int sweep_plan_check_runner(const struct sweep_plan *p, const char *path, int64_t ram_mib, char *err, size_t errlen)
{
    char *argv[SWEEP_MAX_WORDS + 2];
    int line = p->runner_line ? p->runner_line : 1;
    argv[0] = "bonnieboard-runner";
    for (int i = 0; i <= p->runner_words; i++)
        argv[i + 1] = p->runner[i];
    struct options o;
    char why[512];
    int rc = 0;
    enum options_result r = options_parse(&o, p->runner_words + 1, argv, why, sizeof(why));
    if (r == OPTIONS_ERROR)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": %s", path, line, why);
    else if (r != OPTIONS_OK)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": --help and --version run no tests", path, line);
    else if (from_words(o.dir, p->runner))
        rc = set_error(err, errlen, "%s:%d: key \"runner\": -d is the sweep's (the plan's mountpoint)", path, line);
    else if (o.test_count != -1)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": -x is the sweep's (rounds = N repeats each configuration)", path, line);
    else if (o.json_path || o.spool_path)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": --json and --spool are the sweep's (it keeps each run's files)",
                  path, line);
    else if (o.post_url || o.token || o.token_file)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": --post and the token go on the sweep's command line", path, line);
    else if (o.tag_count)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": tags go on the tags = line", path, line);
    else if (o.sem_procs || o.sync_mode)
        rc = set_error(err, errlen, "%s:%d: key \"runner\": -p and -y synchronise separate runs; a sweep runs one at a time",
                  path, line);
    else if (options_finalize(&o, ram_mib, why, sizeof(why)))
        rc = set_error(err, errlen, "%s:%d: key \"runner\": %s", path, line, why);
    options_free(&o);
    return rc;
}

static void free_words(char **words)
{
    for (int i = 0; words[i]; i++)
        free(words[i]);
    words[0] = NULL;
}

static void free_tags(struct tag *tags, int n)
{
    for (int i = 0; i < n; i++) {
        free(tags[i].key);
        free(tags[i].value);
    }
}

void sweep_plan_free(struct sweep_plan *p)
{
    free(p->device);
    free(p->mountpoint);
    free_words(p->runner);
    free_tags(p->tags, p->tag_count);
    for (int c = 0; c < p->config_count; c++) {
        free_words(p->configs[c].mkfs);
        free(p->configs[c].mount_options);
        free_tags(p->configs[c].tags, p->configs[c].tag_count);
    }
    memset(p, 0, sizeof(*p));
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sweep_plan_order(const struct sweep_plan *p, uint32_t seed, int round, int *order)
{
    for (int i = 0; i < p->config_count; i++)
        order[i] = i;
    if (p->order == SWEEP_ORDER_FIXED)
        return;
    uint64_t state = ((uint64_t)seed << 32) | (uint32_t)round;
    for (int i = p->config_count - 1; i > 0; i--) {
        int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int sweep_plan_run_tags(const struct sweep_plan *p, int config, int round, uint32_t seed, char *round_text,
                        size_t round_len, char *seed_text, size_t seed_len, struct tag *tags, int max)
{
    const struct sweep_config *c = &p->configs[config];
    int n = 0;
    for (int i = 0; i < p->tag_count && n < max; i++)
        tags[n++] = p->tags[i];
    for (int i = 0; i < c->tag_count; i++) {
        int at = n;
        for (int j = 0; j < n; j++)
            if (strcmp(tags[j].key, c->tags[i].key) == 0)
                at = j;
        if (at < max) {
            tags[at] = c->tags[i];
            if (at == n)
                n++;
        }
    }
    snprintf(round_text, round_len, "%d", round);
    snprintf(seed_text, seed_len, "%lu", (unsigned long)seed);
    struct tag own[] = {{"config", (char *)c->name}, {"round", round_text}, {"order_seed", seed_text}};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]) && n < max; i++)
        tags[n++] = own[i];
    return n;
}

/* BOARD without its trailing slashes. */
static int append_board(struct sbuf *out, const char *board)
{
    size_t n = strlen(board);
    while (n && board[n - 1] == '/')
        n--;
    return sbuf_append(out, board, n);
}

static int append_ids(struct sbuf *out, const long *ids, int n)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        rc |= sbuf_printf(out, i ? ",%ld" : "%ld", ids[i]);
    return rc;
}

int sweep_plan_compare_url(struct sbuf *out, const char *board, const long *run_ids, int run_count,
                           long baseline_id)
{
    if (run_count <= 0)
        return -1;
    int rc = append_board(out, board) | sbuf_printf(out, "/compare?runs=") | append_ids(out, run_ids, run_count);
    rc |= sbuf_printf(out, "&group=config");
    if (baseline_id > 0)
        rc |= sbuf_printf(out, "&baseline=%ld", baseline_id);
    return rc ? -1 : 0;
}

/* The value of key in configuration c's tags (the plan's, then its own), or NULL. */
static const char *tag_value(const struct sweep_plan *p, int c, const char *key)
{
    const char *v = NULL;
    for (int i = 0; i < p->tag_count; i++)
        if (strcmp(p->tags[i].key, key) == 0)
            v = p->tags[i].value;
    for (int i = 0; i < p->configs[c].tag_count; i++)
        if (strcmp(p->configs[c].tags[i].key, key) == 0)
            v = p->configs[c].tags[i].value;
    return v;
}

int sweep_plan_matrix_url(struct sbuf *out, const struct sweep_plan *p, const char *board, const long *run_ids,
                          int run_count)
{
    const char *varying[2];
    int nvary = 0;
    for (int c = 0; c < p->config_count; c++) {
        for (int i = 0; i < p->configs[c].tag_count; i++) {
            const char *key = p->configs[c].tags[i].key;
            int known = 0;
            for (int k = 0; k < nvary; k++)
                known |= strcmp(varying[k], key) == 0;
            if (known)
                continue;
            const char *first = tag_value(p, 0, key);
            int varies = 0;
            for (int d = 1; d < p->config_count && !varies; d++) {
                const char *v = tag_value(p, d, key);
                varies = (!v != !first) || (v && first && strcmp(v, first) != 0);
            }
            if (!varies)
                continue;
            if (nvary == 2)
                return 0; /* three keys vary: no one table shows them */
            varying[nvary++] = key;
        }
    }
    if (nvary != 2 || run_count <= 0)
        return 0;
    int rc = append_board(out, board) | sbuf_printf(out, "/matrix?rows=%s&cols=%s&runs=", varying[0], varying[1]);
    rc |= append_ids(out, run_ids, run_count);
    return rc ? -1 : 1;
}
