/* sbuf.c -- see sbuf.h. */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sbuf_reserve(struct sbuf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s)
        return -1;
    b->s = s;
    b->cap = cap;
    return 0;
}

int sbuf_append(struct sbuf *b, const char *text, size_t len)
{
    if (sbuf_reserve(b, len))
        return -1;
    memcpy(b->s + b->len, text, len);
    b->len += len;
    b->s[b->len] = '\0';
    return 0;
}

int sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sbuf_reserve(b, (size_t)n))
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

const char *sbuf_str(const struct sbuf *b)
{
    return b->s ? b->s : "";
}

void sbuf_free(struct sbuf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

int set_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
