/* options.c -- command-line parsing with bonnie++ 2.00a's syntax and rules. */
#include "options.h"
#include "json.h"
#include "sbuf.h"
#include "sync.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Splits s at ':' into at most max parts (in place); returns the count.
 * Like strtok, empty parts are skipped. */
static int split_colons(char *s, char **parts, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, ":", &save); t && n < max; t = strtok_r(NULL, ":", &save))
        parts[n++] = t;
    return n;
}

static int parse_s(struct options *o, const char *arg, char *err, size_t errlen)
{
    char buf[256];
    char *part[5];
    int64_t v;
    if (strlen(arg) >= sizeof(buf))
        return set_error(err, errlen, "-s: argument too long");
    strcpy(buf, arg);
    int n = split_colons(buf, part, 5);
    if (n < 1 || n > 4)
        return set_error(err, errlen, "-s: expected size[:chunk[:seeks[:procs]]], got \"%s\"", arg);
    /* bonnie++ ignores an unknown last letter, so people write "-s 64M"; "m" means the unit itself. */
    size_t size_len = strlen(part[0]);
    if (size_len > 1 && tolower((unsigned char)part[0][size_len - 1]) == 'm')
        part[0][size_len - 1] = '\0';
    if (units_size_from_str(part[0], "gt", &v) || v < 0)
        return set_error(err, errlen, "-s: bad size \"%s\" (MiB, or suffix m/g/t)", part[0]);
    if (v > OPT_MAX_FILE_SIZE_MIB)
        return set_error(err, errlen, "-s: size \"%s\" is over the largest file the runner tests, %d MiB",
                    part[0], OPT_MAX_FILE_SIZE_MIB);
    o->bp.file_size_mib = v;
    if (n > 1) {
        if (units_size_from_str(part[1], "k", &v) || v <= 0 || v > INT32_MAX)
            return set_error(err, errlen, "-s: bad chunk size \"%s\"", part[1]);
        o->bp.io_chunk_bytes = (int)v;
    }
    if (n > 2) {
        if (units_size_from_str(part[2], "k", &v) || v < 0 || v > INT32_MAX)
            return set_error(err, errlen, "-s: bad number of seeks \"%s\"", part[2]);
        o->bp.seeks = (int)v;
    }
    if (n > 3) {
        if (units_size_from_str(part[3], NULL, &v) || v < 1 || v > 1000)
            return set_error(err, errlen, "-s: bad number of seeker processes \"%s\" (1..1000)", part[3]);
        o->bp.seek_procs = (int)v;
    }
    o->size_set = 1;
    return 0;
}

static int parse_n(struct options *o, const char *arg, char *err, size_t errlen)
{
    char buf[256];
    char *part[6];
    int64_t v;
    if (strlen(arg) >= sizeof(buf))
        return set_error(err, errlen, "-n: argument too long");
    strcpy(buf, arg);
    int n = split_colons(buf, part, 6);
    if (n < 1 || n > 5)
        return set_error(err, errlen, "-n: expected num[:max[:min[:dirs[:chunk]]]], got \"%s\"", arg);
    if (units_size_from_str(part[0], "m", &v) || v < 0 || v > INT32_MAX)
        return set_error(err, errlen, "-n: bad number of files \"%s\" (units of 1024, suffix m)", part[0]);
    o->bp.num_files = v;
    if (n > 1) {
        if (units_size_from_str(part[1], "kmg", &v) || v < -2 || v > INT32_MAX)
            return set_error(err, errlen, "-n: bad maximum size \"%s\"", part[1]);
        o->bp.max_size = v;
    }
    if (n > 2) {
        if (units_size_from_str(part[2], "kmg", &v) || v < 0 || v > INT32_MAX)
            return set_error(err, errlen, "-n: bad minimum size \"%s\"", part[2]);
        o->bp.min_size = v;
    }
    if (n > 3) {
        if (units_size_from_str(part[3], "k", &v) || v < 1 || v >= 100000)
            return set_error(err, errlen, "-n: bad number of directories \"%s\" (1..99999)", part[3]);
        o->bp.num_dirs = (int)v;
    }
    if (n > 4) {
        if (units_size_from_str(part[4], "kmg", &v) || v <= 0 || v > INT32_MAX)
            return set_error(err, errlen, "-n: bad chunk size \"%s\"", part[4]);
        o->bp.file_chunk_bytes = (int)v;
    }
    return 0;
}

static int parse_int(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* The board's rules for tags and labels (app/ingest/validation.py check_tag and check_label, docs/api-contract.md "Tags
 * and labels"), checked before the run: a post the board refuses would come after hours of benchmark. */
#define BOARD_MAX_TAGS 50
#define BOARD_MAX_TAG_CHARS 200
#define BOARD_MAX_LABEL_CHARS 500
#define BOARD_MAX_IDEMPOTENCY_KEY_CHARS 200 /* app/limits.py: IDEMPOTENCY_KEY_MAX_CHARS */
_Static_assert(BOARD_MAX_TAGS <= OPT_MAX_TAGS, "the board's tags must fit in struct options");

/* The board's TAG_SPACES (app/web/schemas.py): every character Python's str.isspace calls a space. */
static int is_board_space(unsigned cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f ||
           cp == 0x3000;
}

/* `text` must be UTF-8 (the JSON writer would change other bytes) of at most max_chars characters (code points,
 * as the board counts), and without spaces when no_spaces. */
static int check_board_text(const char *what, const char *text, long max_chars, int no_spaces, char *err,
                            size_t errlen)
{
    long chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; chars++) {
        unsigned cp;
        int n = json_utf8_decode(p, &cp);
        size_t at = (size_t)(p - (const unsigned char *)text) + 1;
        if (!n)
            return set_error(err, errlen, "%s is not UTF-8 (byte 0x%02x at byte %zu)", what, *p, at);
        if (no_spaces && is_board_space(cp))
            return set_error(err, errlen, "%s has a space (U+%04X at byte %zu), which the board refuses; use '-' or '_'",
                        what, cp, at);
        p += n;
    }
    if (chars > max_chars)
        return set_error(err, errlen, "%s is %ld characters long; the board takes at most %ld", what, chars, max_chars);
    return 0;
}

static int add_tag(struct options *o, const char *arg, char *err, size_t errlen)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return set_error(err, errlen, "--tag: expected KEY=VALUE, got \"%s\"", arg);
    struct tag next = {strndup(arg, (size_t)(eq - arg)), strdup(eq + 1)};
    if (!next.key || !next.value) {
        free(next.key);
        free(next.value);
        return set_error(err, errlen, "out of memory");
    }
    char what[80];
    snprintf(what, sizeof what, "--tag \"%.40s\": the key", next.key);
    int bad = check_board_text(what, next.key, BOARD_MAX_TAG_CHARS, 1, err, errlen);
    snprintf(what, sizeof what, "--tag \"%.40s\": the value", arg);
    bad = bad || check_board_text(what, next.value, BOARD_MAX_TAG_CHARS, 1, err, errlen);
    for (int i = 0; !bad && i < o->tag_count; i++) {
        if (strcmp(o->tags[i].key, next.key) == 0) { /* later value wins */
            free(o->tags[i].value);
            o->tags[i].value = next.value;
            free(next.key);
            return 0;
        }
    }
    if (!bad && o->tag_count >= BOARD_MAX_TAGS)
        bad = set_error(err, errlen, "--tag: at most %d tags (the board's limit)", BOARD_MAX_TAGS);
    if (bad) {
        free(next.key);
        free(next.value);
        return -1;
    }
    o->tags[o->tag_count++] = next;
    return 0;
}

/* ==== Secrets in error messages ==== */

/* The edit distance (insertions, deletions, substitutions, adjacent swaps) between a and b, capped at
 * 9: enough to tell a typo of "token" from another word. */
static int edit_distance(const char *a, const char *b)
{
    enum { MAX = 24 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX || lb >= MAX)
        return 9;
    int d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb] > 9 ? 9 : d[la][lb];
}

int options_token_like(const char *arg)
{
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    char name[32];
    size_t len = strcspn(arg + 2, "=");
    if (len == 0 || len >= sizeof(name))
        return 0;
    for (size_t i = 0; i < len; i++)
        name[i] = (char)tolower((unsigned char)arg[2 + i]);
    name[len] = '\0';
    /* a prefix getopt_long may take for --token or --token-file ("--t" is ambiguous with --tag, and
     * still a token's name to whoever typed it) */
    if (strncmp(name, "token-file", len) == 0)
        return 1;
    if (strstr(name, "tok") || strstr(name, "tkn") || strstr(name, "secret") || strstr(name, "auth") ||
        strstr(name, "bearer") || strstr(name, "pass"))
        return 1;
    return edit_distance(name, "token") <= 2 || edit_distance(name, "token-file") <= 2;
}

/* What may hold a secret in argv: the value of every token-like option (after its '=', or the
 * argument after it). Collected before getopt_long permutes argv; the pointers stay valid. */
struct secrets {
    int count;
    const char *values[16];
};

static void secrets_collect(struct secrets *s, int argc, char **argv)
{
    s->count = 0;
    for (int i = 1; i < argc && s->count < (int)(sizeof(s->values) / sizeof(s->values[0])); i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (!options_token_like(argv[i]))
            continue;
        const char *eq = strchr(argv[i], '=');
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        if (value && *value)
            s->values[s->count++] = value;
    }
}

/* Replaces every occurrence of a collected secret in err with OPTIONS_REDACTED (a value given to
 * the wrong option, as in "-s --token=T", is echoed by that option's message). */
static void secrets_redact(const struct secrets *s, char *err, size_t errlen)
{
    for (int k = 0; k < s->count; k++) {
        size_t vlen = strlen(s->values[k]);
        char *at;
        while ((at = strstr(err, s->values[k])) != NULL) {
            char rest[1024];
            snprintf(rest, sizeof(rest), "%s", at + vlen);
            *at = '\0';
            size_t used = strlen(err);
            snprintf(err + used, errlen - used, "%s%s", OPTIONS_REDACTED, rest);
        }
    }
}

/* The message for a long option getopt_long refused: unknown, ambiguous, or given a value it does not
 * take. Names only the option, up to its '=' (the value may be a mistyped token), and for a name
 * like --token's says that its value is not shown. Returns -1. */
static int fail_long_option(char *err, size_t errlen, const char *arg, const struct option *longopts)
{
    char name[48];
    size_t len = strcspn(arg, "=");
    if (len >= sizeof(name))
        len = sizeof(name) - 1;
    for (size_t i = 0; i < len; i++)
        name[i] = isprint((unsigned char)arg[i]) ? arg[i] : '?';
    name[len] = '\0';
    const char *hidden = options_token_like(arg) ? " (its value is not shown)" : "";
    char matches[160] = "";
    int count = 0, exact = 0;
    for (const struct option *lo = longopts; len > 2 && lo->name; lo++) {
        if (strncmp(lo->name, name + 2, len - 2) != 0)
            continue;
        exact |= lo->name[len - 2] == '\0';
        size_t used = strlen(matches);
        snprintf(matches + used, sizeof(matches) - used, "%s--%s", count++ ? ", " : "", lo->name);
    }
    if (exact || count == 1)
        return set_error(err, errlen, "option %s takes no value%s", name, hidden);
    if (count > 1)
        return set_error(err, errlen, "ambiguous option %s: %s%s", name, matches, hidden);
    if (*hidden)
        return set_error(err, errlen, "unknown option %s: --token or --token-file?%s", name, hidden);
    return set_error(err, errlen, "unknown option %s", name);
}

enum {
    LONG_JSON = 256, LONG_CHAR_MODE, LONG_STDIO_BUFFER, LONG_POST, LONG_TOKEN, LONG_TOKEN_FILE,
    LONG_TAG, LONG_LABEL, LONG_SPOOL, LONG_IDEMPOTENCY_KEY, LONG_HELP, LONG_VERSION
};

/* A text field of the CSV line (the machine name, -Z's file name as the seed): UTF-8 without a comma (it would
 * split the field) and without what the board refuses in every text field (app/ingest/parsing.py control_or_separator):
 * C0 and C1 controls, DEL and the line and paragraph separators, each of which ends a line for some reader; nor
 * U+FEFF, which the board refuses inside a line. Returns 0, or -1 with err naming `what` and the byte. */
/* An Idempotency-Key: 1 to BOARD_MAX_IDEMPOTENCY_KEY_CHARS printable ASCII characters, no space. */
static int printable_key(const char *key)
{
    size_t len = strlen(key);
    if (len == 0 || len > BOARD_MAX_IDEMPOTENCY_KEY_CHARS)
        return 0;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        if (*p < 0x21 || *p > 0x7e)
            return 0;
    return 1;
}

static int check_csv_text(const char *what, const char *text, char *err, size_t errlen)
{
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        unsigned cp;
        int n = json_utf8_decode(p, &cp);
        size_t at = (size_t)(p - (const unsigned char *)text) + 1;
        if (!n)
            return set_error(err, errlen, "%s is not UTF-8 (byte 0x%02x at byte %zu)", what, *p, at);
        if (cp == ',')
            return set_error(err, errlen, "%s has a comma (byte %zu): the CSV line would "
                        "have more columns than its format, and readers would split the field", what, at);
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
            return set_error(err, errlen, "%s has control or line separator character U+%04X at byte %zu "
                        "(a newline would split the CSV line)", what, cp, at);
        if (cp == 0xfeff)
            return set_error(err, errlen, "%s has a byte order mark (U+FEFF) at byte %zu", what, at);
        p += n;
    }
    return 0;
}

static enum options_result parse_args(struct options *o, int argc, char **argv, const struct option *longopts,
                                      char *err, size_t errlen);

enum options_result options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, LONG_JSON},
        {"char-mode", required_argument, NULL, LONG_CHAR_MODE},
        {"stdio-buffer", required_argument, NULL, LONG_STDIO_BUFFER},
        {"post", required_argument, NULL, LONG_POST},
        {"token", required_argument, NULL, LONG_TOKEN},
        {"token-file", required_argument, NULL, LONG_TOKEN_FILE},
        {"tag", required_argument, NULL, LONG_TAG},
        {"label", required_argument, NULL, LONG_LABEL},
        {"spool", required_argument, NULL, LONG_SPOOL},
        {"idempotency-key", required_argument, NULL, LONG_IDEMPOTENCY_KEY},
        {"help", no_argument, NULL, LONG_HELP},
        {"version", no_argument, NULL, LONG_VERSION},
        {NULL, 0, NULL, 0}
    };
    memset(o, 0, sizeof(*o));
    o->dir = ".";
    o->bp.file_size_mib = OPT_DEFAULT_FILE_SIZE_MIB;
    o->bp.io_chunk_bytes = OPT_DEFAULT_CHUNK_BYTES;
    o->bp.seeks = OPT_DEFAULT_SEEKS;
    o->bp.seek_procs = OPT_DEFAULT_SEEK_PROCS;
    o->bp.num_files = OPT_DEFAULT_NUM_FILES;
    o->bp.num_dirs = 1;
    o->bp.file_chunk_bytes = OPT_DEFAULT_CHUNK_BYTES;
    o->ram_mib = -1;
    o->test_count = -1;
    o->bp.byte_io_mib = OPT_DEFAULT_BYTE_IO_MIB;
    o->bp.concurrency = 1;

    struct secrets secrets;
    secrets_collect(&secrets, argc, argv);
    if (errlen)
        err[0] = '\0';
    enum options_result rc = parse_args(o, argc, argv, longopts, err, errlen);
    if (rc == OPTIONS_ERROR)
        secrets_redact(&secrets, err, errlen);
    return rc;
}

/* The getopt_long loop of options_parse: OPTIONS_OK, OPTIONS_HELP, OPTIONS_VERSION, or OPTIONS_ERROR
 * with a message in err (set_error() returns -1, which is OPTIONS_ERROR). */
static enum options_result parse_args(struct options *o, int argc, char **argv, const struct option *longopts,
                                      char *err, size_t errlen)
{
    optind = 1;
    opterr = 0;
    int c;
    long lv;
    int64_t v;
    while ((c = getopt_long(argc, argv, ":bc:d:f::g:m:n:p:qr:s:u:x:y:z:DZ:", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': o->bp.fsync_each = 1; break;
        case 'D': o->bp.direct_io = 1; break;
        case 'q': o->quiet = 1; break;
        case 'c':
            if (parse_int(optarg, 1, 200, &lv))
                return set_error(err, errlen, "-c: concurrency must be 1..200, got \"%s\"", optarg);
            o->bp.concurrency = (int)lv;
            break;
        case 'd': o->dir = optarg; break;
        case 'f':
            if (!optarg)
                o->bp.byte_io_mib = 0;
            else if (parse_int(optarg, 0, INT32_MAX, &lv))
                return set_error(err, errlen, "-f: byte-I/O size must be a number of MiB, got \"%s\"", optarg);
            else
                o->bp.byte_io_mib = lv;
            break;
        case 'm': o->machine = optarg; break;
        case 'u': {
            if (o->user)
                return set_error(err, errlen, "-u given twice");
            o->user = strdup(optarg);
            if (!o->user)
                return set_error(err, errlen, "out of memory");
            char *colon = strchr(o->user, ':');
            if (colon) {
                if (o->group)
                    return set_error(err, errlen, "-u user:group and -g both name a group");
                *colon = '\0';
                o->group = colon + 1;
            }
            if (!o->user[0] || (o->group && !o->group[0]))
                return set_error(err, errlen, "-u: expected user[:group], got \"%s\"", optarg);
            break;
        }
        case 'g':
            if (o->group)
                return set_error(err, errlen, "-g given twice, or with -u user:group");
            if (!optarg[0])
                return set_error(err, errlen, "-g: empty group");
            o->group = optarg;
            break;
        case 'p':
            if (parse_int(optarg, -1, 1000, &lv) || lv == 0)
                return set_error(err, errlen, "-p: number of processes must be 1..1000, or -1 to remove the "
                            "semaphores, got \"%s\"", optarg);
            o->sem_procs = (int)lv;
            break;
        case 'y':
            if (tolower((unsigned char)optarg[0]) == 's')
                o->sync_mode = SYNC_SEM;
            else if (tolower((unsigned char)optarg[0]) == 'p')
                o->sync_mode = SYNC_PROMPT;
            else
                return set_error(err, errlen, "-y: expected s (semaphore) or p (prompt), got \"%s\"", optarg);
            break;
        case 'Z':
            /* the file's name is the CSV's seed column, as in bonnie++ */
            if (check_csv_text("-Z: the file name (the CSV's seed column)", optarg, err, errlen))
                return OPTIONS_ERROR;
            if (!optarg[0] || strlen(optarg) > OPT_MAX_MACHINE_BYTES)
                return set_error(err, errlen, "-Z: the file name must be 1..%d bytes", OPT_MAX_MACHINE_BYTES);
            o->random_file = optarg;
            break;
        case 'n':
            if (parse_n(o, optarg, err, errlen))
                return OPTIONS_ERROR;
            break;
        case 'r':
            if (parse_int(optarg, 0, INT32_MAX, &lv))
                return set_error(err, errlen, "-r: RAM size must be a number of MiB, got \"%s\"", optarg);
            o->ram_mib = lv;
            o->ram_set = 1;
            break;
        case 's':
            if (parse_s(o, optarg, err, errlen))
                return OPTIONS_ERROR;
            break;
        case 'x':
            if (parse_int(optarg, 1, 1000000, &lv))
                return set_error(err, errlen, "-x: number of tests must be >= 1, got \"%s\"", optarg);
            o->test_count = (int)lv;
            break;
        case 'z':
            if (parse_int(optarg, 0, (long)UINT32_MAX, &lv))
                return set_error(err, errlen, "-z: seed must be an unsigned number, got \"%s\"", optarg);
            o->seed = (unsigned int)lv;
            o->seed_set = 1;
            break;
        case LONG_JSON: o->json_path = optarg; break;
        case LONG_CHAR_MODE:
            if (strcmp(optarg, "syscall") == 0)
                o->bp.char_mode = CHAR_MODE_SYSCALL;
            else if (strcmp(optarg, "stdio") == 0)
                o->bp.char_mode = CHAR_MODE_STDIO;
            else
                return set_error(err, errlen, "--char-mode: expected syscall or stdio, got \"%s\"", optarg);
            break;
        case LONG_STDIO_BUFFER:
            if (units_size_from_str(optarg, "km", &v) || v < 1 || v > (1 << 30))
                return set_error(err, errlen, "--stdio-buffer: bad size \"%s\" (bytes, suffix k/m)", optarg);
            o->bp.stdio_buffer_bytes = (size_t)v;
            break;
        case LONG_POST: o->post_url = optarg; break;
        case LONG_TOKEN: o->token = optarg; break;
        case LONG_TOKEN_FILE: o->token_file = optarg; break;
        case LONG_TAG:
            if (add_tag(o, optarg, err, errlen))
                return OPTIONS_ERROR;
            break;
        case LONG_LABEL:
            if (check_board_text("--label", optarg, BOARD_MAX_LABEL_CHARS, 0, err, errlen))
                return OPTIONS_ERROR;
            o->label = optarg;
            break;
        case LONG_SPOOL: o->spool_path = optarg; break;
        case LONG_IDEMPOTENCY_KEY:
            if (!printable_key(optarg))
                return set_error(err, errlen, "--idempotency-key: 1 to %d printable ASCII characters without spaces",
                                 BOARD_MAX_IDEMPOTENCY_KEY_CHARS);
            o->idempotency_key = optarg;
            break;
        case LONG_HELP: return OPTIONS_HELP;
        case LONG_VERSION: return OPTIONS_VERSION;
        case ':': /* a long option's optopt is its value (LONG_*), not a letter */
            if (optopt > 0 && optopt < LONG_JSON)
                return set_error(err, errlen, "option -%c needs an argument", optopt);
            return set_error(err, errlen, "option %s needs an argument", argv[optind - 1]);
        default:
            if (optopt > 0 && optopt < LONG_JSON)
                return isprint(optopt) ? set_error(err, errlen, "unknown option -%c", optopt)
                                       : set_error(err, errlen, "unknown option (byte 0x%02x)", (unsigned)optopt);
            return fail_long_option(err, errlen, argv[optind - 1], longopts);
        }
    }
    if (optind < argc)
        return set_error(err, errlen, "unexpected argument \"%s\"", argv[optind]);
    if (o->sem_procs && o->sync_mode)
        return set_error(err, errlen, "-p (create the semaphores) and -y (use them) are for different runs");
    if (o->seed_set && o->random_file)
        return set_error(err, errlen, "-z and -Z: give one source of random numbers");
    if (o->token && o->token_file)
        return set_error(err, errlen, "--token and --token-file: give one of them");
    if (o->idempotency_key && !o->post_url)
        return set_error(err, errlen, "--idempotency-key goes with --post");
    if (o->bp.stdio_buffer_bytes && o->bp.char_mode != CHAR_MODE_STDIO)
        return set_error(err, errlen, "--stdio-buffer needs --char-mode stdio");
    return OPTIONS_OK;
}

static int is_power_of_two(int v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

int options_finalize(struct options *o, int64_t detected_ram_mib, char *err, size_t errlen)
{
    if (!o->ram_set)
        o->ram_mib = detected_ram_mib > 0 ? detected_ram_mib : 0;
    if (o->ram_mib && !o->size_set) {
        if (o->bp.file_size_mib < o->ram_mib * 2)
            o->bp.file_size_mib = o->ram_mib * 2;
        if (o->bp.file_size_mib % 1024 > 512) /* round up to the nearest GiB */
            o->bp.file_size_mib += 1024 - o->bp.file_size_mib % 1024;
    }
    if (o->bp.byte_io_mib > o->bp.file_size_mib)
        o->bp.byte_io_mib = o->bp.file_size_mib;
    if (o->bp.file_size_mib == 0 && o->bp.num_files == 0)
        return set_error(err, errlen, "-s 0 and -n 0 leave nothing to test");
    if (o->machine && options_check_machine(o->machine, err, errlen))
        return -1;
    if (o->bp.io_chunk_bytes < 256 || o->bp.io_chunk_bytes > (1 << 20) || !is_power_of_two(o->bp.io_chunk_bytes))
        return set_error(err, errlen, "-s: chunk size must be a power of two from 256 to 1m, got %d",
                    o->bp.io_chunk_bytes);
    if (o->bp.file_chunk_bytes < 256 || o->bp.file_chunk_bytes > (1 << 20) || !is_power_of_two(o->bp.file_chunk_bytes))
        return set_error(err, errlen, "-n: chunk size must be a power of two from 256 to 1m, got %d",
                    o->bp.file_chunk_bytes);
    if (o->bp.max_size != -1 && o->bp.max_size != -2 && o->bp.max_size < o->bp.min_size)
        return set_error(err, errlen, "-n: maximum size %lld is smaller than minimum size %lld",
                    (long long)o->bp.max_size, (long long)o->bp.min_size);
    if (o->bp.file_size_mib > OPT_MAX_FILE_SIZE_MIB) /* a default of twice a huge -r */
        return set_error(err, errlen, "file size %lld MiB is over the largest the runner tests, %d MiB",
                    (long long)o->bp.file_size_mib, OPT_MAX_FILE_SIZE_MIB);
    if (o->bp.file_size_mib * ((1 << 20) / o->bp.io_chunk_bytes) > INT32_MAX)
        return set_error(err, errlen, "-s: %lld MiB in %d-byte chunks is more chunks than bonnie++ can count",
                    (long long)o->bp.file_size_mib, o->bp.io_chunk_bytes);
    if (o->bp.file_size_mib && o->ram_mib && o->bp.file_size_mib * o->bp.concurrency < o->ram_mib * 2)
        return set_error(err, errlen,
                    "file size %lldM is less than twice the RAM (%lldM): the page cache would "
                    "hold the file and the I/O results would measure memory, not storage. "
                    "Use -s %lldM or more, or tell the RAM size to assume with -r "
                    "(-r 0 disables this check)",
                    (long long)o->bp.file_size_mib, (long long)o->ram_mib, (long long)o->ram_mib * 2);
    if (o->bp.num_files && o->ram_mib &&
        (uint64_t)o->bp.num_files * OPT_MAX_DATA_PER_FILE * 2 > (uint64_t)o->ram_mib << 10)
        return set_error(err, errlen,
                    "testing %lldK files in %lld MiB of RAM would page the runner's own "
                    "file-name table and give suspect results; use fewer files",
                    (long long)o->bp.num_files, (long long)o->ram_mib);
    if ((uint64_t)o->bp.num_files * OPT_MAX_DATA_PER_FILE > (1u << 20))
        return set_error(err, errlen, "not enough RAM to test with %lldK files", (long long)o->bp.num_files);
    return 0;
}


int options_check_machine(const char *name, char *err, size_t errlen)
{
    size_t len = strlen(name);
    if (len == 0)
        return set_error(err, errlen, "-m: the machine name is empty");
    if (len > OPT_MAX_MACHINE_BYTES)
        return set_error(err, errlen, "-m: the machine name is %zu bytes long, at most %d are allowed", len,
                    OPT_MAX_MACHINE_BYTES);
    return check_csv_text("-m: the machine name", name, err, errlen);
}

enum options_secret options_secret_arg(const char *arg)
{
    static const char secret_option[] = "token";
    if (strncmp(arg, "--", 2) != 0)
        return OPTIONS_SECRET_NONE;
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    if (len == 0 || len > strlen(secret_option) || strncmp(name, secret_option, len) != 0)
        return OPTIONS_SECRET_NONE;
    return name[len] == '=' ? OPTIONS_SECRET_INLINE : OPTIONS_SECRET_NEXT;
}

/* A token goes into an HTTP header: printable ASCII only (no CR/LF to inject headers). */
static int token_ok(const char *t)
{
    if (!*t)
        return 0;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        if (*p < 0x21 || *p > 0x7e)
            return 0;
    return 1;
}

static int read_token_file(struct options *o, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO given as the file is refused below instead of waiting for a writer forever */
    int fd = open(o->token_file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return set_error(err, errlen, "--token-file: can't open \"%s\": %s", o->token_file, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return set_error(err, errlen, "--token-file: \"%s\" is not a regular file (a FIFO, device or directory is refused)",
                         o->token_file);
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        close(fd);
        return set_error(err, errlen,
                    "--token-file: \"%s\" is accessible by group or others (mode %04o); "
                    "a token must be private: chmod 600 %s",
                    o->token_file, (unsigned)(st.st_mode & 07777), o->token_file);
    }
    char buf[4097];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        return set_error(err, errlen, "--token-file: can't read \"%s\": %s", o->token_file, strerror(errno));
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\r')
        buf[--len] = '\0';
    if (len == (size_t)n && n == (ssize_t)sizeof(buf) - 1)
        return set_error(err, errlen, "--token-file: the first line of \"%s\" is over 4096 bytes", o->token_file);
    if (!token_ok(buf)) {
        explicit_bzero(buf, sizeof(buf));
        return set_error(err, errlen, "--token-file: the first line of \"%s\" is not a token "
                    "(empty, or characters other than printable ASCII)", o->token_file);
    }
    o->token_buf = strdup(buf);
    explicit_bzero(buf, sizeof(buf));
    if (!o->token_buf)
        return set_error(err, errlen, "out of memory");
    o->token = o->token_buf;
    return 0;
}

int options_load_token(struct options *o, char *err, size_t errlen)
{
    if (o->token_file)
        return read_token_file(o, err, errlen);
    if (!o->token) {
        const char *env = getenv("BONNIEBOARD_TOKEN");
        if (env && *env) {
            if (!token_ok(env))
                return set_error(err, errlen, "BONNIEBOARD_TOKEN is not a token (characters other than printable ASCII)");
            o->token_buf = strdup(env);
            if (!o->token_buf)
                return set_error(err, errlen, "out of memory");
            o->token = o->token_buf;
        }
        return 0;
    }
    if (!token_ok(o->token))
        return set_error(err, errlen, "--token: not a token (empty, or characters other than printable ASCII)");
    return 0;
}

void options_free(struct options *o)
{
    free(o->user);
    o->user = NULL;
    if (o->token_buf) {
        explicit_bzero(o->token_buf, strlen(o->token_buf));
        free(o->token_buf);
        o->token_buf = NULL;
        o->token = NULL;
    }
    for (int i = 0; i < o->tag_count; i++) {
        free(o->tags[i].key);
        free(o->tags[i].value);
    }
    o->tag_count = 0;
}

/* The one text of --help; runner/tools/help2man.sh turns it into bonnieboard-runner.1, so the manual
 * and --help cannot disagree. Its shape is what that script reads: a "usage:" synopsis, a paragraph,
 * headed lists of "  OPTION  text" entries (a text too long for one line goes on, indented further),
 * then the environment and the exit codes. */
static const char usage_text[] =
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
    "\n"
    "bonnie++'s options, with its syntax and defaults:\n"
    "  -d DIR                scratch directory (default .); every test file is made in it\n"
    "  -s SIZE[:CHUNK[:SEEKS[:PROCS]]]\n"
    "                        file size in MiB (g, t suffixes; default twice the RAM, at least 300), I/O chunk\n"
    "                        in bytes (256 to 1m; default 8192), random seeks (default 8192), seeker processes\n"
    "                        (default 5); -s 0 skips the I/O tests\n"
    "  -n NUM[:MAX[:MIN[:DIRS[:CHUNK]]]]\n"
    "                        file tests on NUM*1024 files (default 16) of MIN to MAX bytes (MAX -1: hard links,\n"
    "                        -2: symlinks) in DIRS directories, data in CHUNK bytes; -n 0 skips them\n"
    "  -m NAME               machine name (default the node name): 1 to 200 bytes of UTF-8, no comma or\n"
    "                        control character\n"
    "  -r MIB                RAM to assume; the file must be at least twice it (-r 0 disables the check)\n"
    "  -x N                  run N times: the CSV header, then one CSV line per run, no text report\n"
    "  -c N                  concurrency, recorded in the CSV only\n"
    "  -q                    quiet: no progress, the text report on stderr\n"
    "  -f[N]                 skip the per-character tests, or run them over N MiB (default 3)\n"
    "  -b                    fsync after every write of the seek and file tests\n"
    "  -D                    open the test file with O_DIRECT\n"
    "  -z SEED               random seed (default pid XOR time)\n"
    "  -Z FILE               random numbers from FILE instead of a seed\n"
    "  -u USER[:GROUP]       run the tests as USER (name or number), switched before any file is made\n"
    "  -g GROUP              run the tests as GROUP (default the user's primary group)\n"
    "  -p N                  create the semaphores for N processes and exit; -p -1 removes them\n"
    "  -y s|p                before each test wait on the semaphores of -p (s), or for a line on stdin (p)\n"
    "\n"
    "The runner's own:\n"
    "  --json FILE           write the JSON document (system facts, per-test evidence) to FILE\n"
    "  --char-mode syscall|stdio\n"
    "                        per-character tests with one-byte read/write calls (default) or stdio's\n"
    "                        putc/getc (bonnie++ 1.03)\n"
    "  --stdio-buffer BYTES  stdio's buffer for --char-mode stdio (default the file's st_blksize)\n"
    "  --post BOARD_URL      post the results to BOARD_URL/api/runs; kept in a spool file if that fails;\n"
    "                        once stored, prints \"history: BOARD_URL/history?machine=NAME\" (stderr), the\n"
    "                        page of this machine's runs over time\n"
    "  --token-file FILE     send the token on FILE's first line (FILE readable by its owner only)\n"
    "  --token TOKEN         send TOKEN (it shows in ps: prefer --token-file)\n"
    "  --tag KEY=VALUE       tag the runs; repeatable\n"
    "  --label TEXT          label the runs (at most 500 characters)\n"
    "  --idempotency-key KEY send KEY as the post's Idempotency-Key: the board stores one upload per key\n"
    "  --spool FILE          where the results go when the post fails (default\n"
    "                        ./bonnieboard-spool-TIME-PID.json, else under /tmp)\n"
    "  --help                print this list of options and exit\n"
    "  --version             print the version and exit\n"
    "\n"
    "Environment:\n"
    "  BONNIEBOARD_TOKEN     the token for --post when neither --token nor --token-file is given\n"
    "\n"
    "Exit codes: 1 usage, 2 preparation, 3 run-time failure or interrupted, 4 post failed.\n"
    "Version: " RUNNER_NAME "-" RUNNER_VERSION "\n";

void options_usage(FILE *fp, int synopsis_only)
{
    if (!synopsis_only) {
        fputs(usage_text, fp);
        return;
    }
    fprintf(fp, "%.*s", (int)(strstr(usage_text, "\n\n") - usage_text + 1), usage_text);
    fputs("bonnieboard-runner --help describes every option.\n", fp);
}
