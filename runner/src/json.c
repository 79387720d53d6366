/* json.c -- see json.h. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


/* A machine name, host name or mount option need not be UTF-8; JSON must be, so a byte that does
 * not start a well-formed sequence becomes U+FFFD and the document stays valid. */
int json_escape(struct sbuf *out, const char *s)
{
    int rc = sbuf_append(out, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': rc |= sbuf_append(out, "\\\"", 2); break;
        case '\\': rc |= sbuf_append(out, "\\\\", 2); break;
        case '\n': rc |= sbuf_append(out, "\\n", 2); break;
        case '\r': rc |= sbuf_append(out, "\\r", 2); break;
        case '\t': rc |= sbuf_append(out, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                rc |= sbuf_printf(out, "\\u%04x", *p);
            } else if (*p < 0x80) {
                rc |= sbuf_append(out, (const char *)p, 1);
            } else {
                unsigned cp;
                int n = json_utf8_decode(p, &cp);
                if (n) {
                    rc |= sbuf_append(out, (const char *)p, (size_t)n);
                    p += n - 1;
                } else {
                    rc |= sbuf_append(out, "\\ufffd", 6);
                }
            }
        }
    }
    return rc | sbuf_append(out, "\"", 1);
}

void json_init(struct json *j, struct sbuf *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
}

int json_failed(const struct json *j)
{
    return j->failed;
}

static void put(struct json *j, const char *text, size_t len)
{
    if (sbuf_append(j->out, text, len))
        j->failed = 1;
}

static void put_escaped(struct json *j, const char *text)
{
    if (json_escape(j->out, text))
        j->failed = 1;
}

static void prefix(struct json *j, const char *key)
{
    if (j->count[j->depth]++ > 0)
        put(j, ",", 1);
    if (key) {
        put_escaped(j, key);
        put(j, ":", 1);
    }
}

static void open_level(struct json *j, const char *key, const char *bracket)
{
    prefix(j, key);
    put(j, bracket, 1);
    if (j->depth < JSON_MAX_DEPTH - 1)
        j->count[++j->depth] = 0;
    else
        j->failed = 1; /* deeper than the counters go: commas would come out wrong */
}

static void close_level(struct json *j, const char *bracket)
{
    put(j, bracket, 1);
    if (j->depth > 0)
        j->depth--;
}

void json_begin_object(struct json *j, const char *key) { open_level(j, key, "{"); }
void json_end_object(struct json *j) { close_level(j, "}"); }
void json_begin_array(struct json *j, const char *key) { open_level(j, key, "["); }
void json_end_array(struct json *j) { close_level(j, "]"); }

void json_string(struct json *j, const char *key, const char *value)
{
    prefix(j, key);
    if (value)
        put_escaped(j, value);
    else
        put(j, "null", 4);
}

void json_int(struct json *j, const char *key, int64_t value)
{
    prefix(j, key);
    if (sbuf_printf(j->out, "%" PRId64, value))
        j->failed = 1;
}

void json_uint(struct json *j, const char *key, uint64_t value)
{
    prefix(j, key);
    if (sbuf_printf(j->out, "%" PRIu64, value))
        j->failed = 1;
}

void json_double(struct json *j, const char *key, double value)
{
    prefix(j, key);
    if (!isfinite(value))
        put(j, "null", 4);
    else if (sbuf_printf(j->out, "%.9g", value))
        j->failed = 1;
}

void json_bool(struct json *j, const char *key, int value)
{
    prefix(j, key);
    put(j, value ? "true" : "false", value ? 4 : 5);
}

void json_null(struct json *j, const char *key)
{
    prefix(j, key);
    put(j, "null", 4);
}

void json_raw(struct json *j, const char *key, const char *text)
{
    prefix(j, key);
    put(j, text, strlen(text));
}

/* See json.h. */
int json_utf8_decode(const unsigned char *p, unsigned *cp_out)
{
    int n;
    unsigned cp;
    if (p[0] < 0x80) {
        *cp_out = p[0];
        return 1;
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1fu;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0fu;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *cp_out = cp;
    return n;
}
