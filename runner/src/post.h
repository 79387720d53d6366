/* post.h -- sending results to a bonnieboard server (POST /api/runs, the
 * JSON form). post.c is the only networked file (libcurl); post_body.c holds
 * what needs no network -- the body, the spool file, the resend command -- so
 * the unit tests reach it without libcurl. */
#ifndef POST_H
#define POST_H

#include <stddef.h>

#include "options.h"
#include "sbuf.h"

/* The environment variable the printed resend command names: never the token itself. */
#define POST_TOKEN_ENV "BONNIEBOARD_TOKEN"

struct post_request {
    const char *board_url;      /* base URL, e.g. http://board:8000 */
    const char *token;          /* Bearer token or NULL */
    const char *token_file;     /* --token-file the token came from, or NULL */
    const char *csv;            /* all CSV lines, newline-terminated */
    const char *document_json;  /* the runner's document (JSON text) */
    const struct tag *tags;
    int tag_count;
    const char *label;          /* NULL for none */
    const char *spool_path;     /* --spool, or NULL for the default name */
    int spool_fd;               /* spool_path opened by post_spool_open before the run, or -1 */
    const char *idempotency_key; /* the Idempotency-Key header, or NULL */
    const char *machine;        /* the CSV lines' machine name: a successful post prints its history URL */
};

/* Builds the request body: {"csv":..., "document":..., "tags":{...}, "label":...}.
 * Returns 0 or -1 (out of memory); the caller frees out with sbuf_free. */
int post_build_body(const struct post_request *req, struct sbuf *out);

/* {board_url without trailing slashes}/api/runs into out. Returns 0 or -1. */
int post_runs_url(const char *board_url, struct sbuf *out);

/* {board_url without trailing slashes}/history?machine={machine, percent-encoded} into out: the board's page
 * of this machine's runs over time. A path in board_url (a board behind a proxy) stays. Returns 0 or -1. */
int post_history_url(const char *board_url, const char *machine, struct sbuf *out);

/* Creates path exclusively with mode 0600 (the body is the user's results; a token never is in
 * it, but the file need not be world-readable either). Returns the fd, or -1 with errno set. */
int post_spool_create(const char *path);

/* Writes body to the spool file: req->spool_fd when open, else a new file named
 * bonnieboard-spool-<UTC time>-<pid>.json in the current directory or, failing that, /tmp.
 * Returns 0 with the path used in path, or -1. */
int post_spool_write(const struct post_request *req, const struct sbuf *body, char *path, size_t len);

/* The shell command that sends spool file `spool` to `url` later. With a token it reads the token
 * where it came from, never showing the secret: $(cat 'TOKEN_FILE') when token_file is not NULL,
 * else the variable $BONNIEBOARD_TOKEN. An idempotency_key (not NULL) is sent as the Idempotency-Key
 * header again, so the board still stores the upload once. Returns 0 or -1. */
int post_resend_command(struct sbuf *out, const char *spool, const char *url, int with_token,
                        const char *token_file, const char *idempotency_key);

/* POSTs to {board_url}/api/runs. On success prints the server's answer and the
 * machine's history URL (post_history_url, when req->machine is set) to stderr,
 * removes an unused spool file made by post_spool_create, and returns 0.
 * On failure writes the body to the spool file, prints why and the curl
 * command that resends it, and returns -1. */
int post_send(const struct post_request *req);

/* GETs url (a page of the board's API) with the token when not NULL; the answer's first 64 KiB go to
 * answer. Returns 0 with the HTTP status in *status, or -1 with why. */
int post_get(const char *url, const char *token, struct sbuf *answer, long *status, char *why, size_t whylen);

#endif
