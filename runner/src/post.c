/* post.c -- see post.h: the libcurl part. */
#include "post.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sbuf.h"
#include "version.h"

#define POST_TIMEOUT_S 120L
#define POST_CONNECT_TIMEOUT_S 15L
#define POST_ANSWER_MAX_BYTES 65536

static size_t collect(char *data, size_t size, size_t n, void *user)
{
    struct sbuf *b = user;
    if (b->len < POST_ANSWER_MAX_BYTES)
        sbuf_append(b, data, size * n); /* only shown to the user: a cut answer is fine */
    return size * n;
}

/* Appends header to *list; on failure frees the list and returns -1. */
static int add_header(struct curl_slist **list, const char *header)
{
    struct curl_slist *grown = curl_slist_append(*list, header);
    if (!grown)
        return -1;
    *list = grown;
    return 0;
}

/* Sets up and performs the request: a POST of body, or a GET when body is NULL. Returns 0 with the HTTP
 * status, or -1 with why. */
static int perform(const struct post_request *req, const char *url, const struct sbuf *body,
                   struct sbuf *answer, long *status, char *why, size_t whylen)
{
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    int rc = -1;
    CURL *curl = curl_easy_init();
    if (!curl) {
        snprintf(why, whylen, "libcurl could not start");
        return -1;
    }
    int failed = add_header(&headers, "Content-Type: application/json") ||
                 add_header(&headers, "Accept: application/json");
    if (!failed && req->idempotency_key) {
        struct sbuf key = {0};
        failed = sbuf_printf(&key, "Idempotency-Key: %s", req->idempotency_key) || add_header(&headers, key.s);
        sbuf_free(&key);
    }
    if (!failed && req->token) {
        struct sbuf auth = {0};
        failed = sbuf_printf(&auth, "Authorization: Bearer %s", req->token) || add_header(&headers, auth.s);
        if (auth.s)
            explicit_bzero(auth.s, auth.len);
        sbuf_free(&auth);
    }
    if (failed) {
        snprintf(why, whylen, "out of memory for the request headers");
        goto out;
    }
    CURLcode cc = CURLE_OK;
    /* every setopt is checked: a silently ignored option could send without the timeout or the token */
    if ((cc = curl_easy_setopt(curl, CURLOPT_URL, url)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers)) ||
        (body && (cc = curl_easy_setopt(curl, CURLOPT_POSTFIELDS, sbuf_str(body)))) ||
        (body && (cc = curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len))) ||
        (cc = curl_easy_setopt(curl, CURLOPT_USERAGENT, RUNNER_NAME "-runner/" RUNNER_VERSION)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_TIMEOUT, POST_TIMEOUT_S)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, POST_CONNECT_TIMEOUT_S)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect)) ||
        (cc = curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer))) {
        snprintf(why, whylen, "libcurl refused an option: %s", curl_easy_strerror(cc));
        goto out;
    }
    cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        snprintf(why, whylen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        goto out;
    }
    if ((cc = curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status)) != CURLE_OK) {
        snprintf(why, whylen, "no HTTP status: %s", curl_easy_strerror(cc));
        goto out;
    }
    rc = 0;
out:
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return rc;
}

int post_send(const struct post_request *req)
{
    struct sbuf body = {0}, answer = {0}, url = {0};
    char why[512] = "";
    long status = 0;
    int rc = -1;
    if (post_runs_url(req->board_url, &url) || post_build_body(req, &body)) {
        fprintf(stderr, "Out of memory building the post.\n");
        goto out;
    }
    if (perform(req, sbuf_str(&url), &body, &answer, &status, why, sizeof(why)) == 0) {
        if (status >= 200 && status <= 299) {
            fprintf(stderr, "Posted to %s: HTTP %ld %s\n", sbuf_str(&url), status, sbuf_str(&answer));
            /* where a periodic run's results show over time, for whoever reads the journal */
            struct sbuf history = {0};
            if (req->machine && post_history_url(req->board_url, req->machine, &history) == 0)
                fprintf(stderr, "history: %s\n", sbuf_str(&history));
            sbuf_free(&history);
            if (req->spool_fd >= 0) { /* made before the run, for a failure that did not happen */
                close(req->spool_fd);
                unlink(req->spool_path);
            }
            rc = 0;
            goto out;
        }
        snprintf(why, sizeof(why), "the server answered HTTP %ld: %.300s", status, sbuf_str(&answer));
    }
    char path[4096];
    fprintf(stderr, "Post to %s failed: %s\n", sbuf_str(&url), why);
    if (post_spool_write(req, &body, path, sizeof(path)) == 0) {
        struct sbuf cmd = {0};
        if (post_resend_command(&cmd, path, sbuf_str(&url), req->token != NULL, req->token_file,
                                req->idempotency_key) == 0)
            fprintf(stderr, "The results are kept in %s. To send them later:\n  %s\n", path, sbuf_str(&cmd));
        else
            fprintf(stderr, "The results are kept in %s.\n", path);
        sbuf_free(&cmd);
    } else {
        fprintf(stderr, "Could not write the spool file %s either; the body follows:\n%s", path, sbuf_str(&body));
    }
out:
    sbuf_free(&body);
    sbuf_free(&answer);
    sbuf_free(&url);
    return rc;
}

int post_get(const char *url, const char *token, struct sbuf *answer, long *status, char *why, size_t whylen)
{
    struct post_request req = {.token = token, .spool_fd = -1};
    return perform(&req, url, NULL, answer, status, why, whylen);
}
