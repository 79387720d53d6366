/* app.ingest._plain_lines: plain bonnie++ CSV lines checked, hashed and converted in C, then inserted through
 * SQLite's C API or written as PostgreSQL's COPY text.
 *
 * 100,000 lines are to be stored within 2x of sqlite3's `.import`
 * (docs/decisions.md, "Ingest within 2x of sqlite3's .import"), and old-format lines within 3x
 * (docs/decisions.md, "Old formats through the compiled path"). Python cannot even bind that many statements
 * in time, so for the common line this module does everything: scan() cuts the
 * upload into lines, keeps each line that has the usual shape of a bonnie++ line of format 1.98 (docs/
 * bonnie-csv-format.md §3.2: fifty fields), 1.97, 1.96 or 1.93c (§3.1: 48, or 47 for -s 0) or 1.03 (§2: 27), every
 * cell as bonnie++ writes it and no comma in the name (PLAIN (tests/plain_198.py) says the same in Python), and
 * hashes it; every other line is handed back to the Python parser (app/ingest/parsing.py),
 * which alone names a bad line's field. Scan.insert() then converts and binds each kept line into the
 * `run` table, inside the transaction the caller's SQLite connection has open, and Scan.copy_text() writes it as
 * PostgreSQL's COPY text: both by one walk over app/columns.py's STORED_COLUMNS (generated into _columns.h), each
 * column converted by its Conversion as app/ingest/parsing.py converts it; tests/ingest/test_sqlite_bulk.py and
 * tests/ingest/test_postgres_plain.py hold the paths to the same stored rows. Both release the GIL.
 *
 * A plain line can be no error for the parser, so nothing here reports one: a line this module is unsure
 * of is not plain. The line hash is BLAKE2b with a 16-byte digest, as app/ingest/service.py's line_hash(), by
 * the BLAKE2 authors' reference code in app/ingest/blake2/ (CPython's hashlib carries the same algorithm but
 * exports no C API; OpenSSL 3.0 only offers BLAKE2b-512, and a shorter BLAKE2b digest is not a cut 512-bit one).
 * SQLite is not linked: app/ingest/sqlite_api.h finds the functions in the SQLite CPython's _sqlite3 runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blake2/blake2.h"
#include "sqlite_api.h"

#define DIGEST_BYTES 16
#define BOM_UTF8 "\xef\xbb\xbf" /* U+FEFF, the byte order mark: app.ingest.lines.BOM */
#define BOM_BYTES 3
#define MAX_MACHINE_CHARS 500 /* limits.MAX_MACHINE_CHARS: a longer name is the parser's error to report */

typedef struct {
    const unsigned char *at;
    Py_ssize_t len;
} Cell;

/* ==== the plain-line check (PLAIN (tests/plain_198.py)) ==== */

static int is_digits(Cell c, Py_ssize_t fewest, Py_ssize_t most) {
    if (c.len < fewest || c.len > most)
        return 0;
    for (Py_ssize_t i = 0; i < c.len; i++)
        if (c.at[i] < '0' || c.at[i] > '9')
            return 0;
    return 1;
}

static int is(Cell c, const char *text) {
    size_t n = strlen(text);
    return (size_t)c.len == n && memcmp(c.at, text, n) == 0;
}

/* Free text (version, name, seed): UTF-8 that Python's strict decoder accepts, without '"', '\\', U+FEFF (the
 * parser refuses a byte order mark inside a line) or what parsing.control_or_separator() finds (C0 and C1
 * controls, DEL, U+2028 and U+2029: the parser names the field that holds one). A comma in the name makes a line of
 * more than fifty fields, which only the parser reads (counted from the end: §1.4). */
static int is_plain_text(Cell c) {
    const unsigned char *s = c.at, *end = c.at + c.len;
    while (s < end) {
        unsigned char b = *s;
        if (b < 0x80) {
            if (b < 0x20 || b == 0x7F || b == '"' || b == '\\')
                return 0;
            s++;
            continue;
        }
        int more;
        unsigned char low = 0x80, high = 0xBF; /* the range of the second byte */
        if (b >= 0xC2 && b <= 0xDF)
            more = 1;
        else if (b == 0xE0)
            more = 2, low = 0xA0;
        else if (b == 0xED)
            more = 2, high = 0x9F; /* no UTF-16 surrogates */
        else if (b >= 0xE1 && b <= 0xEF)
            more = 2;
        else if (b == 0xF0)
            more = 3, low = 0x90;
        else if (b >= 0xF1 && b <= 0xF3)
            more = 3;
        else if (b == 0xF4)
            more = 3, high = 0x8F;
        else
            return 0;
        if (end - s <= more || s[1] < low || s[1] > high)
            return 0;
        for (int i = 2; i <= more; i++)
            if (s[i] < 0x80 || s[i] > 0xBF)
                return 0;
        if (b == 0xEF && memcmp(s, BOM_UTF8, BOM_BYTES) == 0) /* three bytes, checked above */
            return 0;
        if (b == 0xC2 && s[1] <= 0x9F)
            return 0; /* U+0080-U+009F, the C1 controls */
        if (b == 0xE2 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9))
            return 0; /* U+2028, U+2029 */
        s += more + 1;
    }
    return 1;
}

/* At most n characters of text is_plain_text() accepted (valid UTF-8: each character has one lead byte). */
static int chars_at_most(Cell c, Py_ssize_t n) {
    Py_ssize_t chars = 0;
    for (Py_ssize_t i = 0; i < c.len; i++)
        chars += (c.at[i] & 0xC0) != 0x80;
    return chars <= n;
}

/* A value and its %CPU (§1.1): digits and digits, "+++++" and "+++", or both empty. */
static int is_pair(Cell value, Cell cpu, int seeks) {
    if (value.len == 0)
        return cpu.len == 0;
    if (is(value, "+++++"))
        return is(cpu, "+++");
    if (!is_digits(cpu, 1, 9))
        return 0;
    if (!seeks)
        return is_digits(value, 1, 15);
    /* seeks/s may have decimals (§1.2): \d{1,15} or \d{1,14}\.\d{1,6}; 15 digits and a fraction could round up
     * to parsing.MAX_NUMBER, which the parser refuses */
    const unsigned char *dot = memchr(value.at, '.', (size_t)value.len);
    if (dot == NULL)
        return is_digits(value, 1, 15);
    Cell whole = {value.at, dot - value.at}, fraction = {dot + 1, value.len - (dot - value.at) - 1};
    return is_digits(whole, 1, 14) && is_digits(fraction, 1, 6);
}

/* A latency (§1.3): empty, or up to 12 digits and us, ms or s. */
static int is_latency(Cell c) {
    if (c.len == 0)
        return 1;
    Py_ssize_t unit = c.len >= 2 && c.at[c.len - 1] == 's' && (c.at[c.len - 2] == 'u' || c.at[c.len - 2] == 'm') ? 2 : 1;
    if (c.at[c.len - 1] != 's')
        return 0;
    return is_digits((Cell){c.at, c.len - unit}, 1, 12);
}

static int all_empty(const Cell *cells, int count) {
    for (int i = 0; i < count; i++)
        if (cells[i].len)
            return 0;
    return 1;
}

/* A line's cells by meaning, whichever layout it came in: what the checks and convert() read. The members are named
 * as the fields of app/columns.py's STORED_COLUMNS (a test's three: value, cpu and latency, in TESTS order), whose
 * offsets app/ingest/_columns.h holds. A cell a layout lacks is empty (stored as NULL). */
typedef struct {
    Cell format_version;  /* "1.98", "1.97", "1.96", "1.93c", or "1.03" for the 27-field layout */
    Cell bonnie_version, name, concurrency, seed;
    Cell file_size;       /* 512M or 2G */
    Cell io_chunk_size;   /* digits, and 1.03's k */
    Cell seek_count, seek_proc_count;
    Cell num_files, max_size, min_size, always_empty, num_dirs; /* max_size may be "link" or "symlink" */
    Cell value[12], cpu[12], latency[12];
} Line;

#include "_columns.h"

static const Cell NO_CELL = {(const unsigned char *)"", 0};

/* Cut a line into its cells: at most `most` of them; the count, or most + 1 when there are more. */
static int split_fields(const unsigned char *line, Py_ssize_t len, Cell *f, int most) {
    const unsigned char *s = line, *end = line + len;
    for (int i = 0; i < most; i++) {
        const unsigned char *comma = memchr(s, ',', (size_t)(end - s));
        if (comma == NULL) {
            f[i] = (Cell){s, end - s};
            return i + 1;
        }
        f[i] = (Cell){s, comma - s};
        s = comma + 1;
    }
    return most + 1;
}

/* The 1.9x layouts (§3.1, §3.2): format, bonnie++ version, name, concurrency, seed, file_size, io_chunk_size,
 * (1.98: seek_count, seek_proc_count), twelve I/O cells, five file-test size cells, twelve file-test cells and
 * twelve latencies. `f` has the 48 or 50 fields of the format. */
static void read_9x(const Cell *f, int seeks, Line *l) {
    l->format_version = f[0], l->bonnie_version = f[1], l->name = f[2], l->concurrency = f[3], l->seed = f[4];
    l->file_size = f[5], l->io_chunk_size = f[6];
    int at = 7;
    if (seeks)
        l->seek_count = f[7], l->seek_proc_count = f[8], at = 9;
    for (int test = 0; test < 6; test++)
        l->value[test] = f[at + 2 * test], l->cpu[test] = f[at + 2 * test + 1];
    at += 12;
    l->num_files = f[at], l->max_size = f[at + 1], l->min_size = f[at + 2], l->always_empty = f[at + 3];
    l->num_dirs = f[at + 4];
    at += 5;
    for (int test = 6; test < 12; test++)
        l->value[test] = f[at + 2 * (test - 6)], l->cpu[test] = f[at + 2 * (test - 6) + 1];
    at += 12;
    for (int test = 0; test < 12; test++)
        l->latency[test] = f[at + test];
}

/* Cuts the leading digits (fewest..most of them) off *c into *digits. */
static int take_digits(Cell *c, Cell *digits, Py_ssize_t fewest, Py_ssize_t most) {
    Py_ssize_t n = 0;
    while (n < c->len && c->at[n] >= '0' && c->at[n] <= '9')
        n++;
    if (n < fewest || n > most)
        return 0;
    *digits = (Cell){c->at, n};
    c->at += n, c->len -= n;
    return 1;
}

static int take(Cell *c, const char *text) {
    size_t n = strlen(text);
    if ((size_t)c->len < n || memcmp(c->at, text, n) != 0)
        return 0;
    c->at += n, c->len -= n;
    return 1;
}

/* 1.03's file_size (§2): 300M, 2G, or with the chunk size 2G:4k or 2G:8192 (parsing._SIZE_103_RE). */
static int read_size_103(Cell c, Line *l) {
    if (c.len == 0)
        return 1;
    Cell digits;
    const unsigned char *start = c.at;
    if (!take_digits(&c, &digits, 1, 12) || c.len == 0 || (c.at[0] != 'M' && c.at[0] != 'G'))
        return 0;
    l->file_size = (Cell){start, digits.len + 1};
    c.at++, c.len--;
    if (c.len == 0)
        return 1;
    if (!take(&c, ":") || !take_digits(&c, &l->io_chunk_size, 1, 12))
        return 0;
    if (take(&c, "k"))
        l->io_chunk_size.len++; /* the cell keeps its unit: 4k */
    return c.len == 0;
}

/* 1.03's num_files (§2): 16, 16:100000:16, 4:link, 4:symlink, each with /8 for the directories
 * (parsing._FILES_103_RE). */
static int read_files_103(Cell c, Line *l) {
    if (c.len == 0)
        return 1;
    if (!take_digits(&c, &l->num_files, 1, 12))
        return 0;
    if (take(&c, ":")) {
        const unsigned char *word = c.at;
        if (take(&c, "link") || take(&c, "symlink"))
            l->max_size = (Cell){word, c.at - word};
        else if (!take_digits(&c, &l->max_size, 1, 12) || !take(&c, ":") || !take_digits(&c, &l->min_size, 1, 12))
            return 0;
    }
    if (take(&c, "/") && !take_digits(&c, &l->num_dirs, 1, 12))
        return 0;
    return c.len == 0;
}

/* The 27 fields of 1.03 (§2): name, file_size, twelve I/O cells, num_files, twelve file-test cells. */
static int read_103(const Cell *f, Line *l) {
    l->format_version = (Cell){(const unsigned char *)"1.03", 4};
    l->name = f[0];
    for (int test = 0; test < 6; test++)
        l->value[test] = f[2 + 2 * test], l->cpu[test] = f[3 + 2 * test];
    for (int test = 6; test < 12; test++)
        l->value[test] = f[15 + 2 * (test - 6)], l->cpu[test] = f[16 + 2 * (test - 6)];
    /* '#' starts a comment, which the parser skips; a header's file_size is no size */
    return (f[0].len == 0 || f[0].at[0] != '#') && read_size_103(f[1], l) && read_files_103(f[14], l);
}

static int is_format(Cell c) { return is(c, "1.98") || is(c, "1.97") || is(c, "1.96") || is(c, "1.93c"); }

/* The line's cells by meaning; 0 when it has a layout only the parser reads (another field count: a comma in
 * the name, a format the parser refuses, a cut-short line). */
static int read_layout(const unsigned char *text, Py_ssize_t len, Line *l) {
    Cell f[51];
    for (int i = 0; i < 12; i++)
        l->latency[i] = NO_CELL;
    l->format_version = l->bonnie_version = l->name = l->concurrency = l->seed = l->file_size = l->io_chunk_size = NO_CELL;
    l->seek_count = l->seek_proc_count = l->num_files = l->max_size = l->min_size = l->always_empty = NO_CELL;
    l->num_dirs = NO_CELL;
    int count = split_fields(text, len, f, 50);
    if (count == 27) /* always 1.03, whatever its first field (parsing._parse_fields) */
        return read_103(f, l);
    if (count < 47 || count > 50 || !is_format(f[0]))
        return 0;
    if (is(f[0], "1.98")) {
        if (count != 50)
            return 0;
        read_9x(f, 1, l);
        return 1;
    }
    int short_no_io = is(f[0], "1.93c") || is(f[0], "1.96");
    if (count == 47) {
        /* §3.3-3: a -s 0 line of 1.93c or 1.96 has 13 empty fields after the seed, not 14: one is put back */
        if (!short_no_io || !all_empty(f + 5, 13) || f[18].len == 0)
            return 0;
        memmove(f + 6, f + 5, 42 * sizeof *f);
        f[5] = NO_CELL;
    } else if (count != 48) {
        return 0;
    } else if (short_no_io && f[5].len && all_empty(f + 6, 13) && f[19].len) {
        return 0; /* the parser reads a comma in the name and the short layout (parsing._is_short_no_io_line) */
    }
    read_9x(f, 0, l);
    return 1;
}

static int io_tests_ran_plainly(const Line *l) {
    Cell size = l->file_size;
    if (!(size.len >= 2 && (size.at[size.len - 1] == 'M' || size.at[size.len - 1] == 'G') &&
          is_digits((Cell){size.at, size.len - 1}, 1, 12)))
        return 0;
    if (!is_digits(l->seek_count, 0, 15) || !is_digits(l->seek_proc_count, 0, 9))
        return 0;
    for (int test = 0; test < 6; test++)
        if (!is_pair(l->value[test], l->cpu[test], test == 5) || !is_latency(l->latency[test]))
            return 0;
    return 1;
}

static int file_tests_ran_plainly(const Line *l) {
    Cell max = l->max_size;
    if (!is_digits(l->num_files, 1, 15) || !(is_digits(max, 0, 15) || is(max, "link") || is(max, "symlink")))
        return 0;
    /* §3.3-1: the column before num_dirs is always empty. */
    if (!is_digits(l->min_size, 0, 15) || l->always_empty.len || !is_digits(l->num_dirs, 0, 15))
        return 0;
    for (int test = 6; test < 12; test++)
        if (!is_pair(l->value[test], l->cpu[test], 0) || !is_latency(l->latency[test]))
            return 0;
    return 1;
}

/* A family of tests that did not run leaves every cell of its own empty (-s 0, -n 0: §4). */
static int io_tests_not_run(const Line *l) {
    if (l->io_chunk_size.len || l->seek_count.len || l->seek_proc_count.len)
        return 0;
    return all_empty(l->value, 6) && all_empty(l->cpu, 6) && all_empty(l->latency, 6);
}

static int file_tests_not_run(const Line *l) {
    if (l->max_size.len || l->min_size.len || l->always_empty.len || l->num_dirs.len)
        return 0;
    return all_empty(l->value + 6, 6) && all_empty(l->cpu + 6, 6) && all_empty(l->latency + 6, 6);
}

/* A line of format 1.98 (§3.2), 1.97, 1.96 or 1.93c (§3.1, the -s 0 lines of 47 fields included) or 1.03 (§2), with
 * no comma in the name, the I/O tests, the file tests or both run, every cell in the shape bonnie++ writes
 * (§1.1-§1.4): the parser accepts it, and convert_and_bind() stores what the parser would. */
static int is_plain(const unsigned char *text, Py_ssize_t len, Line *l) {
    if (!read_layout(text, len, l))
        return 0;
    if (!is_plain_text(l->bonnie_version) || !is_plain_text(l->seed))
        return 0;
    if (!is_plain_text(l->name) || !chars_at_most(l->name, MAX_MACHINE_CHARS))
        return 0;
    if (l->format_version.at[2] != '0' && !is_digits(l->concurrency, 1, 9)) /* every 1.9x line has it, 1.03 none */
        return 0;
    /* 1.98 leaves io_chunk_size empty (§3.3-2); the older 1.9x formats write 8192 (a 4k or 1m is the parser's);
     * 1.03's 2G:4k was read by read_size_103() */
    Cell chunk = l->io_chunk_size;
    if (chunk.len && l->format_version.at[2] != '0' && (is(l->format_version, "1.98") || !is_digits(chunk, 1, 12)))
        return 0;
    int io_ran = l->file_size.len != 0, files_ran = l->num_files.len != 0;
    if (!io_ran && !files_ran)
        return 0;
    if (io_ran ? !io_tests_ran_plainly(l) : !io_tests_not_run(l))
        return 0;
    if (files_ran ? !file_tests_ran_plainly(l) : !file_tests_not_run(l))
        return 0;
    return 1;
}

/* ==== conversion: the values app/ingest/parsing.py gives such a line ====
 *
 * One walk over STORED_COLUMNS (app/ingest/_columns.h, generated from app/columns.py) converts each column's cell by
 * its Conversion into a Value, once, for both writers: bind_value() binds it to the SQLite statement's parameter,
 * put_value() writes it as a cell of PostgreSQL's COPY text. */

/* A column's value. DIGITS and DECIMAL keep the cell as written: SQLite is given the number, COPY the digits (which
 * PostgreSQL reads as the parser's int(), or rounds as Python's float() does: correctly). */
typedef enum { V_NULL, V_TEXT, V_DIGITS, V_DECIMAL, V_INT, V_HASH, V_UPLOAD } ValueType;

typedef struct {
    ValueType type;
    Cell text;       /* TEXT, DIGITS, DECIMAL */
    sqlite3_int64 n; /* INT */
} Value;

/* What one line brings besides its cells: its run's id, hash and text. */
typedef struct {
    sqlite3_int64 id;
    const unsigned char *digest;
    Cell raw;
} LineKeys;

static sqlite3_int64 to_int(Cell c) {
    sqlite3_int64 n = 0;
    for (Py_ssize_t i = 0; i < c.len; i++)
        n = n * 10 + (c.at[i] - '0');
    return n;
}

static const Value NULL_VALUE = {V_NULL, {(const unsigned char *)"", 0}, 0};

static Value text_value(const char *text) { return (Value){V_TEXT, {(const unsigned char *)text, (Py_ssize_t)strlen(text)}, 0}; }

static Value int_value(sqlite3_int64 n) { return (Value){V_INT, {NULL, 0}, n}; }

static Value digits_value(Cell c) { return c.len ? (Value){V_DIGITS, c, 0} : NULL_VALUE; }

/* "link" or "symlink" where the maximum file size goes (§3.3-1) */
static int is_link(Cell c) { return c.len && (c.at[0] == 'l' || c.at[0] == 's'); }

/* The value of `column` for line `l` (is_plain() accepted it, so every cell has the shape its rule reads). */
static Value convert(const StoredColumn *column, const Line *l, const LineKeys *keys) {
    Cell c = *(const Cell *)((const char *)l + column->cell);
    switch (column->conversion) {
    case CONVERT_ID:
        return int_value(keys->id);
    case CONVERT_UPLOAD_ID:
    case CONVERT_CREATED_AT:
    case CONVERT_LABEL:
    case CONVERT_DOCUMENT_ID:
        return (Value){V_UPLOAD, {NULL, 0}, 0};
    case CONVERT_LINE_HASH:
        return (Value){V_HASH, {keys->digest, DIGEST_BYTES}, 0};
    case CONVERT_RAW_LINE:
        return (Value){V_TEXT, keys->raw, 0};
    case CONVERT_TEXT: /* an empty name is the empty string, not NULL */
        return (Value){V_TEXT, c, 0};
    case CONVERT_OPTIONAL_TEXT:
        return c.len ? (Value){V_TEXT, c, 0} : NULL_VALUE;
    case CONVERT_OPTIONAL_INT:
    case CONVERT_RESULT_VALUE:
    case CONVERT_RESULT_CPU: /* +++++ and +++ are no number */
        return c.len && c.at[0] != '+' ? digits_value(c) : NULL_VALUE;
    case CONVERT_SIZE_MIB: /* 512M or 2G */
        if (c.len == 0)
            return NULL_VALUE;
        return int_value(to_int((Cell){c.at, c.len - 1}) * (c.at[c.len - 1] == 'G' ? 1024 : 1));
    case CONVERT_CHUNK_BYTES: { /* 8192, or 1.03's 4k */
        if (c.len == 0)
            return NULL_VALUE;
        char unit = (char)c.at[c.len - 1];
        if (unit >= '0' && unit <= '9')
            return digits_value(c);
        return int_value(to_int((Cell){c.at, c.len - 1}) * (unit == 'k' ? 1024 : 1024 * 1024));
    }
    case CONVERT_FILE_MAX_SIZE:
        return is_link(c) ? NULL_VALUE : digits_value(c);
    case CONVERT_FILE_LINK:
        return is_link(c) ? (Value){V_TEXT, c, 0} : NULL_VALUE;
    case CONVERT_RESULT_STATUS: /* §1.1: empty is not run, +++++ too fast */
        return text_value(c.len == 0 ? "not_run" : c.at[0] == '+' ? "too_fast" : "ok");
    case CONVERT_RESULT_DECIMAL:
        return c.len && c.at[0] != '+' ? (Value){V_DECIMAL, c, 0} : NULL_VALUE;
    case CONVERT_RESULT_LATENCY_US: { /* §1.3: 117us, 228ms or 105s */
        if (c.len == 0)
            return NULL_VALUE;
        sqlite3_int64 factor = 1000000;
        Py_ssize_t unit = 1;
        if (c.len >= 2 && c.at[c.len - 2] == 'u')
            factor = 1, unit = 2;
        else if (c.len >= 2 && c.at[c.len - 2] == 'm')
            factor = 1000, unit = 2;
        return int_value(to_int((Cell){c.at, c.len - unit}) * factor);
    }
    }
    return NULL_VALUE;
}

/* ---- sink 1: a SQLite statement's parameter ---- */

static int bind_value(sqlite3_stmt *s, int param, Value v) {
    switch (v.type) {
    case V_TEXT:
        return sqlite3_bind_text(s, param, (const char *)v.text.at, (int)v.text.len, SQLITE_STATIC);
    case V_DIGITS:
        return sqlite3_bind_int64(s, param, to_int(v.text));
    case V_DECIMAL: { /* a REAL column; strtod rounds as Python's float() does (correctly) */
        char digits[24];
        memcpy(digits, v.text.at, (size_t)v.text.len);
        digits[v.text.len] = '\0';
        return sqlite3_bind_double(s, param, strtod(digits, NULL));
    }
    case V_INT:
        return sqlite3_bind_int64(s, param, v.n);
    case V_HASH:
        return sqlite3_bind_blob(s, param, v.text.at, (int)v.text.len, SQLITE_STATIC);
    case V_UPLOAD: /* bound once per upload (prepare_and_insert) */
        return SQLITE_OK;
    case V_NULL:
        break;
    }
    return sqlite3_bind_null(s, param);
}

/* A line is_plain() accepted -> the statement's parameters (the ?N of STORED_COLUMNS[N - 1]), except the upload's
 * own, bound once. */
static int convert_and_bind(sqlite3_stmt *s, const Line *l, const LineKeys *keys) {
    int rc = SQLITE_OK;
    for (int c = 0; c < STORED_COLUMN_COUNT; c++)
        rc |= bind_value(s, c + 1, convert(&STORED_COLUMNS[c], l, keys));
    return rc;
}

/* ---- sink 2: a cell of PostgreSQL's COPY text ---- */

/* A growing buffer; `failed` once an allocation failed (then nothing more is written). */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} Text;

/* Room for n more bytes at the end of t: where they go, or NULL once an allocation failed. */
static char *reserve(Text *t, size_t n) {
    if (t->failed)
        return NULL;
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 65536;
        while (cap < t->len + n)
            cap *= 2;
        char *bigger = PyMem_RawRealloc(t->buf, cap);
        if (bigger == NULL) {
            t->failed = 1;
            return NULL;
        }
        t->buf = bigger, t->cap = cap;
    }
    return t->buf + t->len;
}

static void put(Text *t, const void *bytes, size_t n) {
    char *out = reserve(t, n);
    if (out == NULL)
        return;
    memcpy(out, bytes, n);
    t->len += n;
}

/* n in decimal and a tab, without snprintf's parsing of a format per cell */
static void put_int_cell(Text *t, sqlite3_int64 n) {
    char digits[24], *end = digits + sizeof digits, *at = end;
    unsigned long long u = n < 0 ? 0ULL - (unsigned long long)n : (unsigned long long)n;
    *--at = '\t';
    do
        *--at = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (n < 0)
        *--at = '-';
    put(t, at, (size_t)(end - at));
}

/* A line's hash as a bytea cell of COPY text: \\x and its hex digits (the backslash escaped for COPY). */
enum { BYTEA_CHARS = 3 + 2 * DIGEST_BYTES };
static void hash_as_bytea(char out[BYTEA_CHARS], const unsigned char *digest) {
    static const char hex[] = "0123456789abcdef";
    out[0] = out[1] = '\\', out[2] = 'x';
    for (int i = 0; i < DIGEST_BYTES; i++)
        out[3 + 2 * i] = hex[digest[i] >> 4], out[4 + 2 * i] = hex[digest[i] & 15];
}

/* COPY's text format: \N is NULL, a tab ends a cell. Plain text holds no backslash, tab or newline
 * (is_plain_text()), so a text cell goes as it is. */
static void put_value(Text *t, Value v) {
    char *out;
    switch (v.type) {
    case V_TEXT:
    case V_DIGITS:
    case V_DECIMAL:
        if ((out = reserve(t, (size_t)v.text.len + 1)) == NULL)
            return;
        memcpy(out, v.text.at, (size_t)v.text.len);
        out[v.text.len] = '\t';
        t->len += (size_t)v.text.len + 1;
        return;
    case V_INT:
        put_int_cell(t, v.n);
        return;
    case V_HASH: {
        char bytea[BYTEA_CHARS + 1];
        hash_as_bytea(bytea, v.text.at);
        bytea[BYTEA_CHARS] = '\t';
        put(t, bytea, sizeof bytea);
        return;
    }
    case V_UPLOAD: /* written before the walk (copy_row) */
        return;
    case V_NULL:
        put(t, "\\N\t", 3);
        return;
    }
}

/* One row of `run`: its id, the upload's own cells (`upload`: upload_id, created_at, label and document_id as COPY
 * text, each cell ending in a tab), then STORED_COLUMNS' others in their order (COPY_COLUMNS in
 * app/ingest/sqlite_bulk.py); the values convert_and_bind() binds. */
static void copy_row(Text *t, Cell upload, const Line *l, const LineKeys *keys) {
    put_value(t, int_value(keys->id));
    put(t, upload.at, (size_t)upload.len);
    for (int c = 0; c < STORED_COLUMN_COUNT; c++)
        if (STORED_COLUMNS[c].conversion != CONVERT_ID)
            put_value(t, convert(&STORED_COLUMNS[c], l, keys));
    if (!t->failed)
        t->buf[t->len - 1] = '\n'; /* the last cell's tab ends the row */
}

/* ==== Scan: an upload cut into plain lines and the ranges of other lines ==== */

typedef struct {
    Py_ssize_t start, len, line_no;
    Py_ssize_t first;          /* the index of this line's first occurrence (itself if it is the first) */
    Py_ssize_t distinct_before; /* first occurrences among the plain lines before this one */
    unsigned char digest[DIGEST_BYTES];
} PlainLine;

typedef struct {
    Py_ssize_t first_line, start, end; /* lines first_line... in data[start:end], for the parser */
} OtherRange;

typedef struct {
    PyObject_HEAD
    PyObject *data; /* the upload's bytes: plain lines are bound straight from them */
    PlainLine *plain;
    Py_ssize_t plain_count, distinct_count;
    OtherRange *others;
    Py_ssize_t other_count;
    int inserted;
    /* After numbered(): per plain line, the id of the run this upload creates for it; 0 for a repeat or a line
     * stored before (sequence ids start at 1). copy_text() writes these lines. */
    sqlite3_int64 *created_ids;
} Scan;

static int grow(void **array, Py_ssize_t *capacity, Py_ssize_t count, size_t item) {
    if (count < *capacity)
        return 0;
    Py_ssize_t wanted = *capacity ? *capacity * 2 : 1024;
    void *bigger = PyMem_RawRealloc(*array, (size_t)wanted * item);
    if (bigger == NULL)
        return -1;
    *array = bigger;
    *capacity = wanted;
    return 0;
}

/* Marks repeated lines (same hash, so the same line) with their first occurrence: an open-addressing set. */
static int mark_repeats(Scan *scan) {
    size_t slots = 1024;
    while (slots < 2 * (size_t)scan->plain_count)
        slots *= 2;
    Py_ssize_t *table = PyMem_RawMalloc(slots * sizeof *table);
    if (table == NULL)
        return -1;
    memset(table, 0xff, slots * sizeof *table); /* -1: empty */
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < scan->plain_count; i++) {
        PlainLine *line = &scan->plain[i];
        uint64_t key;
        memcpy(&key, line->digest, sizeof key);
        size_t slot = (size_t)key & (slots - 1);
        line->first = i;
        while (table[slot] >= 0) {
            if (memcmp(scan->plain[table[slot]].digest, line->digest, DIGEST_BYTES) == 0) {
                line->first = table[slot];
                break;
            }
            slot = (slot + 1) & (slots - 1);
        }
        if (line->first == i)
            table[slot] = i;
        line->distinct_before = distinct;
        distinct += line->first == i;
    }
    scan->distinct_count = distinct;
    PyMem_RawFree(table);
    return 0;
}

/* Without the GIL. The lines as app/ingest/parsing.py's iter_parse_bytes numbers them: a byte order mark only at
 * the very start, "\r\n" or "\n" ends a line. A plain line is at most a quarter of max_line_bytes long, as in
 * parsing.py, so the parser's length limit cannot apply to it. */
static int scan_lines(Scan *scan, const unsigned char *data, Py_ssize_t size, Py_ssize_t max_line_bytes) {
    Py_ssize_t plain_capacity = 0, other_capacity = 0, line_no = 0;
    Py_ssize_t start = size >= BOM_BYTES && memcmp(data, BOM_UTF8, BOM_BYTES) == 0 ? BOM_BYTES : 0;
    Line fields;
    int in_other = 0;
    for (;;) {
        line_no++;
        const unsigned char *newline = memchr(data + start, '\n', (size_t)(size - start));
        Py_ssize_t end = newline ? newline - data : size;
        Py_ssize_t len = end - start - (end > start && data[end - 1] == '\r');
        if (len <= max_line_bytes / 4 && is_plain(data + start, len, &fields)) {
            if (grow((void **)&scan->plain, &plain_capacity, scan->plain_count, sizeof(PlainLine)))
                return -1;
            PlainLine *line = &scan->plain[scan->plain_count++];
            line->start = start, line->len = len, line->line_no = line_no;
            blake2b(line->digest, DIGEST_BYTES, data + start, (size_t)len, NULL, 0);
            in_other = 0;
        } else if (in_other) {
            scan->others[scan->other_count - 1].end = end;
        } else {
            if (grow((void **)&scan->others, &other_capacity, scan->other_count, sizeof(OtherRange)))
                return -1;
            scan->others[scan->other_count++] = (OtherRange){line_no, start, end};
            in_other = 1;
        }
        if (newline == NULL)
            return mark_repeats(scan);
        start = end + 1;
    }
}

static PyTypeObject ScanType;

static PyObject *scan(PyObject *module, PyObject *args) {
    PyObject *data;
    Py_ssize_t max_line_bytes;
    if (!PyArg_ParseTuple(args, "Sn:scan", &data, &max_line_bytes))
        return NULL;
    Scan *self = PyObject_New(Scan, &ScanType);
    if (self == NULL)
        return NULL;
    Py_INCREF(data);
    self->data = data;
    self->plain = NULL, self->others = NULL;
    self->plain_count = self->distinct_count = self->other_count = 0;
    self->inserted = 0;
    self->created_ids = NULL;
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = scan_lines(self, (const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), max_line_bytes);
    Py_END_ALLOW_THREADS
    if (failed) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void scan_dealloc(Scan *self) {
    Py_XDECREF(self->data);
    PyMem_RawFree(self->plain);
    PyMem_RawFree(self->others);
    PyMem_RawFree(self->created_ids);
    PyObject_Free(self);
}

static PyObject *scan_others(Scan *self, void *closure) {
    PyObject *list = PyList_New(self->other_count);
    for (Py_ssize_t i = 0; list && i < self->other_count; i++) {
        OtherRange *r = &self->others[i];
        PyObject *item = Py_BuildValue("(nnn)", r->first_line, r->start, r->end);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *scan_plain_count(Scan *self, void *closure) { return PyLong_FromSsize_t(self->plain_count); }
static PyObject *scan_distinct_count(Scan *self, void *closure) { return PyLong_FromSsize_t(self->distinct_count); }

/* How many distinct plain lines come before line `line_no`: the runs numbered before it. */
static PyObject *scan_distinct_before(Scan *self, PyObject *arg) {
    Py_ssize_t line_no = PyLong_AsSsize_t(arg);
    if (line_no == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t low = 0, high = self->plain_count; /* the first plain line at or after line_no */
    while (low < high) {
        Py_ssize_t mid = (low + high) / 2;
        if (self->plain[mid].line_no < line_no)
            low = mid + 1;
        else
            high = mid;
    }
    return PyLong_FromSsize_t(low < self->plain_count ? self->plain[low].distinct_before : self->distinct_count);
}

/* ==== insert ==== */

/* The sqlite3* of a CPython sqlite3.Connection. CPython 3.11 has no API for it; its pysqlite_Connection
 * begins with PyObject_HEAD and then `sqlite3 *db` in CPython 3.8 to 3.13, the versions whose source was read.
 * Built for another CPython, or loaded into one (the runtime Py_Version), the module reads no connection:
 * CONNECTION_LAYOUT_KNOWN is false and app/ingest/sqlite_bulk.py takes the parser path before any call.
 * It also checks that this module and CPython's _sqlite3 run the same SQLite and that the handle's file is
 * the session's. */
#define LAYOUT_FIRST_HEX 0x03080000 /* 3.8.0 */
#define LAYOUT_END_HEX 0x030E0000   /* 3.14.0, not included */

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
} ConnectionHead;

static int connection_layout_known(void) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < LAYOUT_END_HEX
    return Py_Version >= LAYOUT_FIRST_HEX && Py_Version < LAYOUT_END_HEX; /* the CPython it is loaded into */
#elif PY_VERSION_HEX >= LAYOUT_FIRST_HEX && PY_VERSION_HEX < LAYOUT_END_HEX
    return 1; /* before 3.11 no Py_Version: a module built for one minor version loads only into it */
#else
    return 0;
#endif
}

/* Whether load_sqlite() found SQLite's functions, and if not, why. */
static int sqlite_found;
static char sqlite_problem[512];

/* The SQLite of CPython's _sqlite3 module: its shared object's file (already loaded by the import), or the
 * program itself for a Python that has the module built in. */
static int load_sqlite(void) {
    PyObject *module = PyImport_ImportModule("_sqlite3");
    if (module == NULL) {
        PyErr_Clear();
        snprintf(sqlite_problem, sizeof sqlite_problem, "this Python has no _sqlite3 module");
        return 0;
    }
    PyObject *file = PyObject_GetAttrString(module, "__file__");
    Py_DECREF(module);
    PyObject *path = NULL;
    if (file == NULL)
        PyErr_Clear();
    else if (!PyUnicode_FSConverter(file, &path)) {
        Py_DECREF(file);
        return -1;
    }
    Py_XDECREF(file);
    sqlite_found = load_sqlite_api(path ? PyBytes_AS_STRING(path) : NULL, sqlite_problem, sizeof sqlite_problem) == 0;
    Py_XDECREF(path);
    return 0;
}

static sqlite3 *connection_db(PyObject *connection) {
    if (!sqlite_found) {
        PyErr_Format(PyExc_RuntimeError, "no SQLite to call: %s", sqlite_problem);
        return NULL;
    }
    if (!connection_layout_known()) {
        PyErr_Format(PyExc_RuntimeError, "the layout of CPython %s's sqlite3.Connection is not known", Py_GetVersion());
        return NULL;
    }
    if (strcmp(Py_TYPE(connection)->tp_name, "sqlite3.Connection") != 0) {
        PyErr_Format(PyExc_TypeError, "not a sqlite3.Connection: %s", Py_TYPE(connection)->tp_name);
        return NULL;
    }
    sqlite3 *db = ((ConnectionHead *)connection)->db;
    if (db == NULL)
        PyErr_SetString(PyExc_ValueError, "the sqlite3.Connection is closed");
    return db;
}

static PyObject *db_filename(PyObject *module, PyObject *connection) {
    sqlite3 *db = connection_db(connection);
    if (db == NULL)
        return NULL;
    const char *name = sqlite3_db_filename(db, "main");
    return PyUnicode_DecodeFSDefault(name ? name : "");
}

static PyObject *libversion_number(PyObject *module, PyObject *unused) {
    if (!sqlite_found) {
        PyErr_Format(PyExc_RuntimeError, "no SQLite to call: %s", sqlite_problem);
        return NULL;
    }
    return PyLong_FromLong(sqlite3_libversion_number());
}

typedef struct {
    sqlite3_int64 id;
    Py_ssize_t line_no;
} Duplicate;

typedef struct {
    sqlite3 *db;
    Scan *scan;
    sqlite3_int64 first_id;
    const Py_ssize_t *parsed_lines; /* line numbers of the parser's runs: their ids are kept free */
    Py_ssize_t parsed_count;
    sqlite3_int64 *ids;             /* per plain line: its run's id */
    sqlite3_int64 *created;         /* ids of the runs made, in line order */
    Py_ssize_t created_count;
    Duplicate *duplicates;          /* lines already stored, in line order */
    Py_ssize_t duplicate_count;
    sqlite3_int64 *existing;        /* runs stored before this upload that plain lines repeat, once each */
    Py_ssize_t existing_count;
    int rc;
    char message[512];
} Insert;

static void fail(Insert *job, int rc) {
    job->rc = rc;
    snprintf(job->message, sizeof job->message, "%s", sqlite3_errmsg(job->db));
}

static const char INSERT_SQL_TAIL[] = ") ON CONFLICT (line_hash) DO NOTHING";

/* A statement built piece by piece into a fixed buffer: sql_append never writes past `size` and remembers a
 * piece that did not fit, so the builder checks once, at its end, instead of after every piece. */
typedef struct {
    char *buf;
    size_t size;
    size_t used;
    int overflowed;
} SqlText;

static void sql_append(SqlText *text, const char *format, ...) {
    if (text->overflowed)
        return;
    va_list args;
    va_start(args, format);
    int written = vsnprintf(text->buf + text->used, text->size - text->used, format, args);
    va_end(args);
    if (written < 0 || (size_t)written >= text->size - text->used)
        text->overflowed = 1;
    else
        text->used += (size_t)written;
}

/* Without the GIL. Runs are numbered in line order, the parser's runs included: a run's id is first_id
 * plus the number of distinct lines stored before it, which app/ingest/writers.py's SqliteWriter gives the
 * parser's runs too. A line already stored keeps its run; its id is looked up (rare). */
static void insert_lines(Insert *job, sqlite3_stmt *insert, sqlite3_stmt *lookup) {
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(job->scan->data);
    Line fields;
    Py_ssize_t parsed_before = 0;
    for (Py_ssize_t i = 0; i < job->scan->plain_count; i++) {
        PlainLine *line = &job->scan->plain[i];
        if (line->first != i) {
            job->ids[i] = job->ids[line->first];
            job->duplicates[job->duplicate_count++] = (Duplicate){job->ids[i], line->line_no};
            continue;
        }
        while (parsed_before < job->parsed_count && job->parsed_lines[parsed_before] < line->line_no)
            parsed_before++;
        sqlite3_int64 id = job->first_id + line->distinct_before + parsed_before;
        const unsigned char *text = data + line->start;
        is_plain(text, line->len, &fields); /* true: scan() kept it */
        LineKeys keys = {id, line->digest, {text, line->len}};
        int rc = convert_and_bind(insert, &fields, &keys);
        if (rc != SQLITE_OK)
            return fail(job, rc);
        sqlite3_int64 changes = sqlite3_total_changes64(job->db);
        rc = sqlite3_step(insert);
        sqlite3_reset(insert);
        if (rc != SQLITE_DONE)
            return fail(job, rc);
        if (sqlite3_total_changes64(job->db) != changes) {
            job->ids[i] = id;
            job->created[job->created_count++] = id;
            continue;
        }
        sqlite3_bind_blob(lookup, 1, line->digest, DIGEST_BYTES, SQLITE_STATIC);
        rc = sqlite3_step(lookup);
        if (rc != SQLITE_ROW) {
            sqlite3_reset(lookup);
            return fail(job, rc == SQLITE_DONE ? SQLITE_INTERNAL : rc);
        }
        job->ids[i] = sqlite3_column_int64(lookup, 0);
        sqlite3_reset(lookup);
        job->existing[job->existing_count++] = job->ids[i];
        job->duplicates[job->duplicate_count++] = (Duplicate){job->ids[i], line->line_no};
    }
}

static int prepare_and_insert(Insert *job, sqlite3_int64 upload_id, const char *created_at, const char *label,
                              Py_ssize_t label_len, int has_document, sqlite3_int64 document_id) {
    char sql[4096];
    SqlText text = {sql, sizeof sql, 0};
    sql_append(&text, "INSERT INTO run (");
    for (int c = 0; c < STORED_COLUMN_COUNT; c++)
        sql_append(&text, "%s%s", c ? ", " : "", STORED_COLUMNS[c].name);
    sql_append(&text, ") VALUES (");
    for (int c = 1; c <= STORED_COLUMN_COUNT; c++)
        sql_append(&text, "%s?%d", c > 1 ? ", " : "", c);
    sql_append(&text, "%s", INSERT_SQL_TAIL);
    if (text.overflowed) {
        job->rc = SQLITE_TOOBIG;
        snprintf(job->message, sizeof job->message, "the INSERT statement does not fit its %zu-byte buffer", sizeof sql);
        return job->rc;
    }

    sqlite3_stmt *insert = NULL, *lookup = NULL;
    int rc = sqlite3_prepare_v2(job->db, sql, -1, &insert, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(job->db, "SELECT id FROM run WHERE line_hash = ?1", -1, &lookup, NULL);
    if (rc == SQLITE_OK) {
        for (int c = 0; c < STORED_COLUMN_COUNT; c++) {
            int p = c + 1;
            switch (STORED_COLUMNS[c].conversion) {
            case CONVERT_UPLOAD_ID:
                rc |= sqlite3_bind_int64(insert, p, upload_id);
                break;
            case CONVERT_CREATED_AT:
                rc |= sqlite3_bind_text(insert, p, created_at, -1, SQLITE_STATIC);
                break;
            case CONVERT_LABEL:
                rc |= label ? sqlite3_bind_text(insert, p, label, (int)label_len, SQLITE_STATIC) : sqlite3_bind_null(insert, p);
                break;
            case CONVERT_DOCUMENT_ID:
                rc |= has_document ? sqlite3_bind_int64(insert, p, document_id) : sqlite3_bind_null(insert, p);
                break;
            }
        }
    }
    if (rc != SQLITE_OK) {
        fail(job, rc);
    } else {
        /* Held once for all lines: each bind and step takes this (recursive) mutex again, cheaply when held. */
        sqlite3_mutex_enter(sqlite3_db_mutex(job->db));
        insert_lines(job, insert, lookup);
        sqlite3_mutex_leave(sqlite3_db_mutex(job->db));
    }
    sqlite3_finalize(insert);
    sqlite3_finalize(lookup);
    return job->rc;
}

static PyObject *id_list(const sqlite3_int64 *ids, Py_ssize_t count) {
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list && i < count; i++) {
        PyObject *id = PyLong_FromLongLong(ids[i]);
        if (id == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, id);
    }
    return list;
}

/* What plain lines came to, as Python sees it: (created ids, [(line number, id) of each duplicate], existing ids). */
static PyObject *stored_tuple(const sqlite3_int64 *created, Py_ssize_t created_count, const Duplicate *duplicates,
                              Py_ssize_t duplicate_count, const sqlite3_int64 *existing, Py_ssize_t existing_count) {
    PyObject *result = NULL;
    PyObject *created_list = id_list(created, created_count);
    PyObject *existing_list = id_list(existing, existing_count);
    PyObject *duplicate_list = PyList_New(duplicate_count);
    for (Py_ssize_t i = 0; duplicate_list && i < duplicate_count; i++) {
        PyObject *pair = Py_BuildValue("(nL)", duplicates[i].line_no, (long long)duplicates[i].id);
        if (pair == NULL) {
            Py_CLEAR(duplicate_list);
            break;
        }
        PyList_SET_ITEM(duplicate_list, i, pair);
    }
    if (created_list && existing_list && duplicate_list)
        result = PyTuple_Pack(3, created_list, duplicate_list, existing_list);
    Py_XDECREF(created_list);
    Py_XDECREF(existing_list);
    Py_XDECREF(duplicate_list);
    return result;
}

static PyObject *raise_sqlite_error(Insert *job) {
    PyObject *sqlite3_module = PyImport_ImportModule("sqlite3");
    if (sqlite3_module == NULL)
        return NULL;
    int primary = job->rc & 0xff;
    PyObject *type = PyObject_GetAttrString(sqlite3_module, primary == SQLITE_CONSTRAINT ? "IntegrityError" : "OperationalError");
    Py_DECREF(sqlite3_module);
    if (type == NULL)
        return NULL;
    PyObject *error = PyObject_CallFunction(type, "s", job->message);
    Py_DECREF(type);
    if (error == NULL)
        return NULL;
    PyObject *code = PyLong_FromLong(job->rc);
    PyObject *name = PyUnicode_FromString(sqlite3_errstr(job->rc));
    if (code && name && PyObject_SetAttrString(error, "sqlite_errorcode", code) == 0)
        PyObject_SetAttrString(error, "sqlite_errorname", name);
    Py_XDECREF(code);
    Py_XDECREF(name);
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
    return NULL;
}

static PyObject *scan_insert(Scan *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"connection", "first_id", "parsed_lines", "upload_id", "created_at", "label", "document_id", NULL};
    PyObject *connection, *parsed, *document_arg;
    long long first_id, upload_id, document_id = 0;
    const char *created_at, *label;
    Py_ssize_t label_len;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OLO!Lsz#O:insert", keywords, &connection, &first_id, &PyList_Type,
                                     &parsed, &upload_id, &created_at, &label, &label_len, &document_arg))
        return NULL;
    int has_document = document_arg != Py_None;
    if (has_document && (document_id = PyLong_AsLongLong(document_arg)) == -1 && PyErr_Occurred())
        return NULL;
    if (self->inserted) {
        PyErr_SetString(PyExc_RuntimeError, "these lines were inserted already");
        return NULL;
    }
    Insert job = {.scan = self, .first_id = first_id, .parsed_count = PyList_GET_SIZE(parsed)};
    if ((job.db = connection_db(connection)) == NULL)
        return NULL;
    Py_ssize_t *parsed_lines = PyMem_RawMalloc((size_t)(job.parsed_count + 1) * sizeof *parsed_lines);
    Py_ssize_t n = self->plain_count + 1;
    job.ids = PyMem_RawMalloc((size_t)n * sizeof *job.ids);
    job.created = PyMem_RawMalloc((size_t)n * sizeof *job.created);
    job.existing = PyMem_RawMalloc((size_t)n * sizeof *job.existing);
    job.duplicates = PyMem_RawMalloc((size_t)n * sizeof *job.duplicates);
    PyObject *result = NULL;
    if (!parsed_lines || !job.ids || !job.created || !job.existing || !job.duplicates) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < job.parsed_count; i++) {
        parsed_lines[i] = PyLong_AsSsize_t(PyList_GET_ITEM(parsed, i));
        if (parsed_lines[i] == -1 && PyErr_Occurred())
            goto done;
        if (i && parsed_lines[i] <= parsed_lines[i - 1]) {
            PyErr_SetString(PyExc_ValueError, "parsed_lines must be in ascending order");
            goto done;
        }
    }
    job.parsed_lines = parsed_lines;
    self->inserted = 1;
    Py_BEGIN_ALLOW_THREADS
    prepare_and_insert(&job, upload_id, created_at, label, label_len, has_document, document_id);
    Py_END_ALLOW_THREADS
    if (job.rc != SQLITE_OK) {
        raise_sqlite_error(&job);
        goto done;
    }
    result = stored_tuple(job.created, job.created_count, job.duplicates, job.duplicate_count, job.existing,
                          job.existing_count);
done:
    PyMem_RawFree(parsed_lines);
    PyMem_RawFree(job.ids);
    PyMem_RawFree(job.created);
    PyMem_RawFree(job.existing);
    PyMem_RawFree(job.duplicates);
    return result;
}

/* The parser's line numbers, ascending, as a buffer of long long (Python's array("q")): the lines numbered among
 * the plain ones. Checked for its size only; the caller keeps the order. */
static int parsed_lines_buffer(Py_buffer *parsed, Py_ssize_t *count) {
    if (parsed->len % (Py_ssize_t)sizeof(long long)) {
        PyErr_SetString(PyExc_ValueError, "parsed_lines must be an array of long long (array('q'))");
        return -1;
    }
    *count = parsed->len / (Py_ssize_t)sizeof(long long);
    return 0;
}

/* Up to `count` of the runs numbered() created, from plain line `start` on, as COPY text for `run`'s columns (id,
 * upload_id, created_at, label, document_id, COLUMNS from line_hash on); (text, the next start). `upload` is the
 * upload's four cells as COPY text, each ending in a tab. */
static PyObject *scan_copy_text(Scan *self, PyObject *args) {
    Py_ssize_t start, count;
    Py_buffer upload;
    if (!PyArg_ParseTuple(args, "nny*:copy_text", &start, &count, &upload))
        return NULL;
    if (self->created_ids == NULL) {
        PyBuffer_Release(&upload);
        PyErr_SetString(PyExc_RuntimeError, "numbered() gives the runs their ids before copy_text() writes them");
        return NULL;
    }
    if (start < 0 || start > self->plain_count) {
        PyBuffer_Release(&upload);
        PyErr_SetString(PyExc_IndexError, "start is not a plain line's index");
        return NULL;
    }
    Text text = {NULL, 0, 0, 0};
    Py_ssize_t i = start;
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(self->data);
    Cell upload_cells = {upload.buf, upload.len};
    Py_BEGIN_ALLOW_THREADS
    Line fields;
    for (Py_ssize_t copied = 0; i < self->plain_count && copied < count && !text.failed; i++) {
        PlainLine *line = &self->plain[i];
        if (self->created_ids[i] == 0)
            continue;
        is_plain(data + line->start, line->len, &fields); /* true: scan() kept it */
        LineKeys keys = {self->created_ids[i], line->digest, {data + line->start, line->len}};
        copy_row(&text, upload_cells, &fields, &keys);
        copied++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&upload);
    PyObject *result = NULL;
    if (text.failed)
        PyErr_NoMemory();
    else
        result = Py_BuildValue("(y#n)", text.buf ? text.buf : "", (Py_ssize_t)text.len, i);
    PyMem_RawFree(text.buf);
    return result;
}

/* The distinct plain lines' hashes as COPY text of a one-column bytea table, a row each, in line order: the lines to
 * look up among the stored runs. */
static PyObject *scan_hashes_copy_text(Scan *self, PyObject *unused) {
    enum { ROW = BYTEA_CHARS + 1 }; /* and a newline */
    PyObject *text = PyBytes_FromStringAndSize(NULL, self->distinct_count * ROW);
    if (text == NULL)
        return NULL;
    char *out = PyBytes_AS_STRING(text);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < self->plain_count; i++) {
        if (self->plain[i].first != i)
            continue;
        hash_as_bytea(out, self->plain[i].digest);
        out[ROW - 1] = '\n';
        out += ROW;
    }
    Py_END_ALLOW_THREADS
    return text;
}

/* The ids of the runs, for lines another writer stores (PostgreSQL's COPY of copy_text()): each distinct plain line's
 * run is first_id plus the distinct lines before it, the parser's (`parsed`: their line numbers) included, as
 * insert_lines() numbers them on SQLite; unless `stored` (line hash -> id of a run stored before this upload) holds
 * it. (created, duplicates, existing) as insert() gives them; copy_text() then writes the created runs. */
static PyObject *scan_numbered(Scan *self, PyObject *args) {
    long long first_id;
    Py_buffer parsed;
    PyObject *stored;
    Py_ssize_t parsed_count;
    if (!PyArg_ParseTuple(args, "Ly*O!:numbered", &first_id, &parsed, &PyDict_Type, &stored))
        return NULL;
    if (parsed_lines_buffer(&parsed, &parsed_count)) {
        PyBuffer_Release(&parsed);
        return NULL;
    }
    const long long *parsed_lines = parsed.buf;
    Py_ssize_t n = self->plain_count + 1;
    sqlite3_int64 *ids = PyMem_RawMalloc((size_t)n * sizeof *ids);
    sqlite3_int64 *created_ids = PyMem_RawCalloc((size_t)n, sizeof *created_ids); /* 0: not this upload's to write */
    sqlite3_int64 *created = PyMem_RawMalloc((size_t)n * sizeof *created);
    sqlite3_int64 *existing = PyMem_RawMalloc((size_t)n * sizeof *existing);
    Duplicate *duplicates = PyMem_RawMalloc((size_t)n * sizeof *duplicates);
    Py_ssize_t created_count = 0, existing_count = 0, duplicate_count = 0, parsed_before = 0;
    PyObject *result = NULL;
    if (!ids || !created_ids || !created || !existing || !duplicates) {
        PyErr_NoMemory();
        goto done;
    }
    int any_stored = PyDict_GET_SIZE(stored) > 0;
    for (Py_ssize_t i = 0; i < self->plain_count; i++) {
        PlainLine *line = &self->plain[i];
        if (line->first != i) {
            ids[i] = ids[line->first];
            duplicates[duplicate_count++] = (Duplicate){ids[i], line->line_no};
            continue;
        }
        while (parsed_before < parsed_count && parsed_lines[parsed_before] < line->line_no)
            parsed_before++;
        PyObject *before = NULL;
        if (any_stored) {
            PyObject *key = PyBytes_FromStringAndSize((const char *)line->digest, DIGEST_BYTES);
            if (key == NULL)
                goto done;
            before = PyDict_GetItemWithError(stored, key); /* borrowed */
            Py_DECREF(key);
            if (before == NULL && PyErr_Occurred())
                goto done;
        }
        if (before == NULL) {
            ids[i] = created_ids[i] = first_id + line->distinct_before + parsed_before;
            created[created_count++] = ids[i];
            continue;
        }
        ids[i] = PyLong_AsLongLong(before);
        if (ids[i] == -1 && PyErr_Occurred())
            goto done;
        existing[existing_count++] = ids[i];
        duplicates[duplicate_count++] = (Duplicate){ids[i], line->line_no};
    }
    result = stored_tuple(created, created_count, duplicates, duplicate_count, existing, existing_count);
    if (result != NULL) { /* what copy_text() writes */
        PyMem_RawFree(self->created_ids);
        self->created_ids = created_ids;
        created_ids = NULL;
    }
done:
    PyBuffer_Release(&parsed);
    PyMem_RawFree(ids);
    PyMem_RawFree(created_ids);
    PyMem_RawFree(created);
    PyMem_RawFree(existing);
    PyMem_RawFree(duplicates);
    return result;
}

static PyObject *line_is_plain(PyObject *module, PyObject *args) {
    const char *line;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "y#:line_is_plain", &line, &len))
        return NULL;
    Line fields;
    return PyBool_FromLong(is_plain((const unsigned char *)line, len, &fields));
}

static PyObject *digest(PyObject *module, PyObject *args) {
    const char *data;
    Py_ssize_t len;
    int size;
    if (!PyArg_ParseTuple(args, "y#i:digest", &data, &len, &size))
        return NULL;
    if (size < 1 || size > BLAKE2B_OUTBYTES) {
        PyErr_Format(PyExc_ValueError, "a BLAKE2b digest has 1 to %d bytes, not %d", BLAKE2B_OUTBYTES, size);
        return NULL;
    }
    unsigned char out[BLAKE2B_OUTBYTES];
    blake2b(out, (size_t)size, data, (size_t)len, NULL, 0);
    return PyBytes_FromStringAndSize((const char *)out, size);
}

static PyMethodDef scan_methods[] = {
    {"insert", (PyCFunction)(void (*)(void))scan_insert, METH_VARARGS | METH_KEYWORDS,
     "insert(connection, first_id, parsed_lines, upload_id, created_at, label, document_id) -> (created, duplicates, "
     "existing): store the plain lines in the connection's open transaction. created: new run ids in line order; "
     "duplicates: (line number, run id) of lines stored before; existing: those runs stored before this upload."},
    {"distinct_before", (PyCFunction)scan_distinct_before, METH_O, "distinct plain lines before line number n"},
    {"hashes_copy_text", (PyCFunction)scan_hashes_copy_text, METH_NOARGS,
     "hashes_copy_text() -> bytes: the distinct plain lines' hashes as COPY text of a bytea column, in line order"},
    {"copy_text", (PyCFunction)scan_copy_text, METH_VARARGS,
     "copy_text(start, count, upload) -> (text, next start): up to count of the runs numbered() created, from plain "
     "line start on, as rows of COPY text for run's (id, upload_id, created_at, label, document_id, COPY_COLUMNS...); "
     "upload: the upload's four cells as COPY text, each ending in a tab"},
    {"numbered", (PyCFunction)scan_numbered, METH_VARARGS,
     "numbered(first_id, parsed_lines, stored) -> (created, duplicates, existing), as insert() answers: each distinct "
     "line's run is first_id + the distinct lines before it, the parser's (parsed_lines: their line numbers, "
     "ascending, as array('q')) included, unless stored (line hash -> id) holds its line"},
    {NULL},
};

static PyGetSetDef scan_getset[] = {
    {"others", (getter)scan_others, NULL, "(first line number, start, end) of each run of other lines", NULL},
    {"plain_count", (getter)scan_plain_count, NULL, "plain lines, repeats included", NULL},
    {"distinct_count", (getter)scan_distinct_count, NULL, "distinct plain lines", NULL},
    {NULL},
};

static PyTypeObject ScanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "app.ingest._plain_lines.Scan",
    .tp_basicsize = sizeof(Scan),
    .tp_dealloc = (destructor)scan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An upload's plain lines (hashed) and the ranges of its other lines.",
    .tp_methods = scan_methods,
    .tp_getset = scan_getset,
};

static PyMethodDef module_methods[] = {
    {"scan", scan, METH_VARARGS, "scan(data: bytes, max_line_bytes: int) -> Scan"},
    {"db_filename", db_filename, METH_O, "the file of a sqlite3.Connection's main database"},
    {"libversion_number", libversion_number, METH_NOARGS, "the SQLite this module runs (sqlite3_libversion_number)"},
    {"line_is_plain", line_is_plain, METH_VARARGS, "whether scan() keeps this line (without its newline)"},
    {"digest", digest, METH_VARARGS, "digest(data: bytes, size: int) -> bytes: the BLAKE2b digest scan() hashes lines with"},
    {NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "app.ingest._plain_lines", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__plain_lines(void) {
    if (PyType_Ready(&ScanType) < 0 || load_sqlite() < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    PyObject *columns = PyTuple_New(STORED_COLUMN_COUNT);
    for (int c = 0; columns && c < STORED_COLUMN_COUNT; c++) {
        PyObject *name = PyUnicode_FromString(STORED_COLUMNS[c].name);
        if (name == NULL) {
            Py_CLEAR(columns);
            break;
        }
        PyTuple_SET_ITEM(columns, c, name);
    }
    if (columns == NULL || PyModule_AddObject(module, "COLUMNS", columns) < 0) {
        Py_XDECREF(columns);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "CONNECTION_LAYOUT_KNOWN", connection_layout_known()) < 0 ||
        PyModule_AddIntConstant(module, "MAX_MACHINE_CHARS", MAX_MACHINE_CHARS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    PyObject *problem = sqlite_found ? Py_NewRef(Py_None) : PyUnicode_DecodeFSDefault(sqlite_problem);
    if (problem == NULL || PyModule_AddObject(module, "SQLITE_PROBLEM", problem) < 0) {
        Py_XDECREF(problem);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&ScanType);
    if (PyModule_AddObject(module, "Scan", (PyObject *)&ScanType) < 0) {
        Py_DECREF(&ScanType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
