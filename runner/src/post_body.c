/* post_body.c -- the parts of posting that need no network; see post.h. */
#include "post.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

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
    if (json_failed(&j))
        return -1;
    return sbuf_append(out, "\n", 1);
}

int post_runs_url(const char *board_url, struct sbuf *out)
{
    size_t base_len = strlen(board_url);
    while (base_len && board_url[base_len - 1] == '/')
        base_len--;
    return sbuf_append(out, board_url, base_len) | sbuf_append(out, "/api/runs", 9);
}

int post_history_url(const char *board_url, const char *machine, struct sbuf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t base_len = strlen(board_url);
    while (base_len && board_url[base_len - 1] == '/')
        base_len--;
    int failed = sbuf_append(out, board_url, base_len) | sbuf_append(out, "/history?machine=", 17);
    /* RFC 3986's unreserved characters stay; every other byte (a space, '&', '#', '+', UTF-8) is %XX, so
     * the name reaches the board as the CSV line carries it */
    for (const unsigned char *c = (const unsigned char *)machine; *c; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
            *c == '.' || *c == '_' || *c == '~') {
            failed |= sbuf_append(out, (const char *)c, 1);
        } else {
            char escaped[3] = {'%', hex[*c >> 4], hex[*c & 15]};
            failed |= sbuf_append(out, escaped, 3);
        }
    }
    return failed ? -1 : 0;
}

int post_spool_create(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

static int write_all(int fd, const char *text, size_t len)
{
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        text += n;
        len -= (size_t)n;
    }
    return 0;
}

int post_spool_write(const struct post_request *req, const struct sbuf *body, char *path, size_t len)
{
    int fd = req->spool_fd;
    if (fd >= 0) {
        snprintf(path, len, "%s", req->spool_path);
    } else {
        char stamp[32], name[96];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
        snprintf(name, sizeof(name), "bonnieboard-spool-%s-%d.json", stamp, (int)getpid());
        snprintf(path, len, "%s", req->spool_path ? req->spool_path : name);
        fd = post_spool_create(path);
        if (fd < 0 && !req->spool_path) { /* the current directory may be read-only */
            snprintf(path, len, "/tmp/%s", name);
            fd = post_spool_create(path);
        }
        if (fd < 0)
            return -1;
    }
    int rc = write_all(fd, sbuf_str(body), body->len);
    if (close(fd))
        rc = -1;
    return rc;
}

/* word in single quotes for a POSIX shell: each ' becomes '\'' */
static int shell_quote(struct sbuf *out, const char *word)
{
    if (sbuf_printf(out, "'"))
        return -1;
    for (const char *p = word; *p; p++)
        if (*p == '\'' ? sbuf_printf(out, "'\\''") : sbuf_printf(out, "%c", *p))
            return -1;
    return sbuf_printf(out, "'");
}

int post_resend_command(struct sbuf *out, const char *spool, const char *url, int with_token,
                        const char *token_file, const char *idempotency_key)
{
    if (sbuf_printf(out, "curl -X POST -H 'Content-Type: application/json'"))
        return -1;
    if (idempotency_key) {
        struct sbuf header = {0};
        int failed = sbuf_printf(&header, "Idempotency-Key: %s", idempotency_key) || sbuf_printf(out, " -H ") ||
                     shell_quote(out, sbuf_str(&header));
        sbuf_free(&header);
        if (failed)
            return -1;
    }
    if (with_token && token_file) {
        if (sbuf_printf(out, " -H \"Authorization: Bearer $(cat ") || shell_quote(out, token_file) ||
            sbuf_printf(out, ")\""))
            return -1;
    } else if (with_token && sbuf_printf(out, " -H \"Authorization: Bearer $" POST_TOKEN_ENV "\"")) {
        return -1;
    }
    return sbuf_printf(out, " --data-binary @%s %s", spool, url);
}
