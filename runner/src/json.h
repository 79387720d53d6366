/* json.h -- a small streaming JSON writer into an sbuf. Keys are given
 * with each value; pass key NULL inside arrays and for the top value. */
#ifndef JSON_H
#define JSON_H

#include <stdint.h>

#include "sbuf.h"

#define JSON_MAX_DEPTH 32

struct json {
    struct sbuf *out;
    int depth;
    int count[JSON_MAX_DEPTH];  /* values written at each level */
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

/* Appends s as a quoted JSON string (escaping quotes, backslashes, control
 * characters). Returns 0 or -1 when out of memory. */
int json_escape(struct sbuf *out, const char *s);

#endif
