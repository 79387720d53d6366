/* json.h -- a small streaming JSON writer into an sbuf. Keys are given
 * with each value; pass key NULL inside arrays and for the top value.
 * Running out of memory sets a sticky flag (json_failed) instead of
 * returning from every call: the caller checks once at the end. */
#ifndef JSON_H
#define JSON_H

#include <stdint.h>

#include "sbuf.h"

#define JSON_MAX_DEPTH 32

struct json {
    struct sbuf *out;
    int depth;
    int count[JSON_MAX_DEPTH];  /* values written at each level */
    int failed;                 /* sticky: an append ran out of memory, or nesting went too deep */
};

void json_init(struct json *j, struct sbuf *out);
void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_string(struct json *j, const char *key, const char *value);   /* NULL -> null */
void json_int(struct json *j, const char *key, int64_t value);
void json_uint(struct json *j, const char *key, uint64_t value);
void json_double(struct json *j, const char *key, double value);        /* non-finite -> null */
void json_bool(struct json *j, const char *key, int value);
void json_null(struct json *j, const char *key);
/* Inserts already-serialised JSON text as the value. */
void json_raw(struct json *j, const char *key, const char *text);
/* 1 when any call since json_init failed: the text in out is incomplete. */
int json_failed(const struct json *j);

/* Appends s as a quoted JSON string (escaping quotes, backslashes, control
 * characters). Returns 0 or -1 when out of memory. */
int json_escape(struct sbuf *out, const char *s);

/* Length (1-4) of the well-formed UTF-8 sequence at p, with its code point in *cp_out, or 0 when there is
 * none (a stray byte, an overlong form, a surrogate, past U+10FFFF, or cut short by the NUL). json_escape
 * writes U+FFFD for what this refuses; options_check_machine refuses such names up front. */
int json_utf8_decode(const unsigned char *p, unsigned *cp_out);

#endif
