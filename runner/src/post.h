/* post.h -- sending results to a bonnieboard server (POST /api/runs, the
 * JSON form) with libcurl; the only networked file. */
#ifndef POST_H
#define POST_H

#include <stddef.h>

#include "options.h"
#include "sbuf.h"

struct post_request {
    const char *board_url;      /* base URL, e.g. http://board:8000 */
    const char *token;          /* Bearer token or NULL */
    const char *csv;            /* all CSV lines, newline-terminated */
    const char *document_json;  /* the runner's document (JSON text) */
    const struct tag *tags;
    int tag_count;
    const char *label;          /* NULL for none */
    const char *spool_path;     /* where to keep the body if the post fails; NULL = default */
};

/* Builds the request body: {"csv":..., "document":..., "tags":{...}, "label":...}.
 * Returns 0 or -1; the caller frees out with sbuf_free. */
int post_build_body(const struct post_request *req, struct sbuf *out);

/* POSTs to {board_url}/api/runs. On success prints the server's answer to
 * stderr and returns 0. On failure writes the body to the spool file,
 * prints why and the curl command that resends it, and returns -1. */
int post_send(const struct post_request *req);

#endif
