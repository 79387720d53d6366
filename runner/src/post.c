/* post.c -- see post.h. */
#include "post.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "sbuf.h"
#include "version.h"

#define POST_TIMEOUT_S 120L
#define POST_CONNECT_TIMEOUT_S 15L

int post_build_body(const struct post_request *req, struct sbuf *out)
{
    struct json j;
    json_init(&j, out);
    json_begin_object(&j, NULL);
    json_string(&j, "csv", req->csv);
    json_raw(&j, "document", req->document_json);
    json_begin_object(&j, "tags");
    for (int i = 0; i < req->tag_count; i++)
        json_string(&j, req->tags[i].key, req->tags[i].value);
    json_end_object(&j);
    if (req->label)
        json_string(&j, "label", req->label);
    else
        json_null(&j, "label");
    json_end_object(&j);
    return sbuf_append(out, "\n", 1);
}

static size_t collect(char *data, size_t size, size_t n, void *user)
{
    struct sbuf *b = user;
    if (b->len < 65536)
        sbuf_append(b, data, size * n);
    return size * n;
}

/* Writes body to the spool file; returns the path used or NULL. */
static const char *spool_write(const struct post_request *req, const struct sbuf *body,
                               char *path, size_t len)
{
    if (req->spool_path) {
        snprintf(path, len, "%s", req->spool_path);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
        snprintf(path, len, "bonnieboard-spool-%s-%d.json", stamp, (int)getpid());
    }
    FILE *fp = fopen(path, "wx");
    if (!fp && !req->spool_path) { /* the current directory may be read-only */
        char alt[4200];
        snprintf(alt, sizeof(alt), "/tmp/%s", path);
        snprintf(path, len, "%.4000s", alt);
        fp = fopen(path, "wx");
    }
    if (!fp)
        return NULL;
    int ok = fwrite(sbuf_str(body), 1, body->len, fp) == body->len;
    ok &= fclose(fp) == 0;
    return ok ? path : NULL;
}

int post_send(const struct post_request *req)
{
    struct sbuf body = {0}, answer = {0}, url = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    char why[512] = "";
    long status = 0;
    int rc = -1;
    size_t base_len = strlen(req->board_url);
    while (base_len && req->board_url[base_len - 1] == '/')
        base_len--;
    sbuf_append(&url, req->board_url, base_len);
    sbuf_append(&url, "/api/runs", 9);
    if (post_build_body(req, &body)) {
        fprintf(stderr, "Out of memory building the post body.\n");
        return -1;
    }
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL;
    if (!curl) {
        snprintf(why, sizeof(why), "libcurl could not start");
        goto failed;
    }
    headers = curl_slist_append(headers, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Accept: application/json");
    if (req->token) {
        struct sbuf auth = {0};
        sbuf_printf(&auth, "Authorization: Bearer %s", req->token);
        headers = curl_slist_append(headers, sbuf_str(&auth));
        sbuf_free(&auth);
    }
    curl_easy_setopt(curl, CURLOPT_URL, sbuf_str(&url));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, sbuf_str(&body));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body.len);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, RUNNER_NAME "-runner/" RUNNER_VERSION);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, POST_TIMEOUT_S);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, POST_CONNECT_TIMEOUT_S);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        snprintf(why, sizeof(why), "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        goto failed;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        snprintf(why, sizeof(why), "the server answered HTTP %ld: %.300s", status, sbuf_str(&answer));
        goto failed;
    }
    fprintf(stderr, "Posted to %s: HTTP %ld %s\n", sbuf_str(&url), status, sbuf_str(&answer));
    rc = 0;
    goto out;
failed: {
        char path[4096];
        const char *spool = spool_write(req, &body, path, sizeof(path));
        fprintf(stderr, "Post to %s failed: %s\n", sbuf_str(&url), why);
        if (spool) {
            fprintf(stderr,
                    "The results are kept in %s. To send them later:\n"
                    "  curl -X POST -H 'Content-Type: application/json'%s --data-binary @%s %s\n",
                    spool, req->token ? " -H \"Authorization: Bearer $TOKEN\"" : "", spool,
                    sbuf_str(&url));
        } else {
            fprintf(stderr, "Could not write the spool file %s either; the body follows:\n%s",
                    path, sbuf_str(&body));
        }
    }
out:
    curl_slist_free_all(headers);
    if (curl)
        curl_easy_cleanup(curl);
    sbuf_free(&body);
    sbuf_free(&answer);
    sbuf_free(&url);
    return rc;
}
