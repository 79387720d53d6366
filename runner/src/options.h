/* options.h -- the runner's command line: bonnie++ 2.00a's options plus the
 * runner's own long options. One struct, filled by options_parse(). */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"
#include "version.h"

/* bonnie++ 2.00a defaults (bonnie.h.in). */
#define OPT_DEFAULT_FILE_SIZE_MIB 300
#define OPT_DEFAULT_CHUNK_BYTES 8192
#define OPT_DEFAULT_SEEKS 8192
#define OPT_DEFAULT_SEEK_PROCS 5
#define OPT_DEFAULT_NUM_FILES 16       /* units of 1024 files */
#define OPT_DEFAULT_BYTE_IO_MIB 3
#define OPT_MAX_TAGS 64
#define OPT_FILES_UNIT 1024            /* bonnie++ DirectoryUnit */
/* -s at most 2^31-1 MiB (2 PiB): chunk counts (size x 1 MiB / chunk) then fit in int64 with room to
 * spare, and finalize can compare them with bonnie++'s int limit without overflowing. */
#define OPT_MAX_FILE_SIZE_MIB INT32_MAX
/* A machine name's bytes at most: the CSV line stays far below the board's 4096-byte line limit. */
#define OPT_MAX_MACHINE_BYTES 200
/* bonnie++ MaxDataPerFile: name (10 + 12 random) + dir index (6) + NUL + pointer */
#define OPT_MAX_DATA_PER_FILE (10 + 12 + 6 + 1 + sizeof(void *))

struct tag {
    char *key;      /* heap, freed by options_free() */
    char *value;
};

struct options {
    const char *dir;               /* -d, default "." */
    struct bench_params bp;        /* the test parameters (-s, -n, -f, -b, -D, -c, --char-mode) */
    int size_set;                  /* -s given */
    const char *machine;           /* -m, default the node name */
    int64_t ram_mib;               /* -r; 0 disables the RAM checks */
    int ram_set;
    int test_count;                /* -x; -1 = default single run with text report */
    int quiet;                     /* -q */
    unsigned int seed;             /* -z */
    int seed_set;
    char *user;                    /* -u USER (heap; "-u user:group" splits here) */
    const char *group;             /* -g GROUP, or the part after ':' in -u (points into user) */
    int sem_procs;                 /* -p N: create the semaphores for N processes; -1 remove; 0 none */
    int sync_mode;                 /* -y: enum sync_mode (SYNC_NONE, SYNC_SEM, SYNC_PROMPT) */
    const char *random_file;       /* -Z FILE: random numbers from a file instead of -z's seed */
    const char *json_path;         /* --json */
    const char *post_url;          /* --post */
    const char *token;             /* --token, --token-file or $BONNIEBOARD_TOKEN (options_load_token) */
    const char *token_file;        /* --token-file */
    char *token_buf;               /* heap copy of a token read from a file or the environment */
    const char *label;             /* --label */
    const char *spool_path;        /* --spool */
    const char *idempotency_key;   /* --idempotency-key: the post's Idempotency-Key header */
    struct tag tags[OPT_MAX_TAGS]; /* --tag K=V */
    int tag_count;
};

/* What options_parse found on the command line. */
enum options_result {
    OPTIONS_ERROR = -1,     /* a usage error; the message is in err */
    OPTIONS_OK = 0,         /* o holds a run to do */
    OPTIONS_HELP = 1,       /* --help: print the usage and exit 0 */
    OPTIONS_VERSION = 2,    /* --version: print the version and exit 0 */
};

/* Fills o from argv. Returns OPTIONS_OK, OPTIONS_HELP or OPTIONS_VERSION (the first of --help and
 * --version ends the parse: what follows is not checked), or OPTIONS_ERROR with a message in err.
 * Strings in o point into argv except the user and the tags: options_free(o) frees those, whatever
 * the result. */
enum options_result options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen);

/* bonnie++'s post-parse rules, given the machine's RAM in MiB: default file
 * size of twice the RAM, the 2x RAM refusal, chunk-size and -n checks.
 * Returns 0 or -1 with a message in err (usage error, exit 1). */
int options_finalize(struct options *o, int64_t detected_ram_mib, char *err, size_t errlen);

/* The token for --post, from --token, --token-file FILE (its first line; refused when the file is
 * accessible by group or others) or the BONNIEBOARD_TOKEN environment variable, in that order.
 * Returns 0 (o->token set, or NULL when there is none) or -1 with a message in err (usage error). */
int options_load_token(struct options *o, char *err, size_t errlen);

/* How argument arg hides a secret from a record of the command line (the JSON document's
 * command_line): OPTIONS_SECRET_NONE, _NEXT (the next argument is the token: "--token T") or
 * _INLINE (the text after '=' is: "--token=T"). getopt_long takes unambiguous prefixes, so
 * "--tok T" counts too. */
enum options_secret { OPTIONS_SECRET_NONE = 0, OPTIONS_SECRET_NEXT, OPTIONS_SECRET_INLINE };
enum options_secret options_secret_arg(const char *arg);

/* 1 when arg is a long option whose name looks like --token's or --token-file's: a prefix of either,
 * a name within two typos of either, or one containing "tok", "tkn", "secret", "auth", "bearer" or
 * "pass". Error messages never show such an option's value (after '=' or the next argument). */
int options_token_like(const char *arg);

/* The text a record of the command line shows instead of a secret. */
#define OPTIONS_REDACTED "***"

/* 0 when name can be a machine name in a CSV line the board stores as written, else -1 with the
 * reason in err: 1..OPT_MAX_MACHINE_BYTES bytes of UTF-8 without commas (the board would read the
 * name's parts as columns), control characters (a newline splits the line), or U+FEFF. */
int options_check_machine(const char *name, char *err, size_t errlen);

/* Prints the usage and every option with a line about it: what --help prints, and the source of
 * the manual page (runner/tools/help2man.sh). With synopsis_only (after a usage error), the
 * synopsis and where to read more. */
void options_usage(FILE *fp, int synopsis_only);

void options_free(struct options *o);

#endif
