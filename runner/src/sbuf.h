/* sbuf.h -- a growable, always NUL-terminated string buffer. */
#ifndef SBUF_H
#define SBUF_H

#include <stddef.h>

struct sbuf {
    char *s;       /* heap text, owned by the sbuf; NULL until first append */
    size_t len;    /* bytes used, excluding the terminating NUL */
    size_t cap;
};

/* Appends formatted text; returns 0, or -1 when out of memory. */
int sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sbuf_append(struct sbuf *b, const char *text, size_t len);
/* Returns the text ("" when empty); valid until the next append or free. */
const char *sbuf_str(const struct sbuf *b);
void sbuf_free(struct sbuf *b);

/* Formats a message into the caller's fixed buffer err (errlen bytes); returns -1, so that a parser can
 * `return set_error(err, errlen, "...", ...)` where it fails. */
int set_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
