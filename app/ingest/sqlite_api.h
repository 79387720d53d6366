/* The part of SQLite's C API that app/ingest/_plain_lines.c calls, found at run time in the SQLite that CPython's
 * _sqlite3 module runs, never linked.
 *
 * The module writes through the sqlite3* of a sqlite3.Connection, so it must run the very library that opened it:
 * a second copy of SQLite in the process (a libsqlite3 a wheel carries, which is what auditwheel would graft in
 * for a linked one) would work on another copy's structures. So nothing here is linked: load_sqlite_api() looks
 * each function up in _sqlite3's own shared object and the libraries it loaded (dlopen of the module's file with
 * RTLD_NOLOAD, then dlsym: the library is already in the process). The build needs no SQLite headers or library,
 * and the wheel no libsqlite3 (docs/decisions.md, "The compiled ingest path is optional").
 *
 * The declarations are SQLite's stable C interface (https://sqlite.org/c3ref/intro.html); the `#define`s let the
 * code call them by their usual names, as SQLite's own sqlite3ext.h does for loadable extensions. */
#ifndef BONNIEBOARD_SQLITE_API_H
#define BONNIEBOARD_SQLITE_API_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_mutex sqlite3_mutex;
typedef long long int sqlite3_int64;

#define SQLITE_OK 0
#define SQLITE_INTERNAL 2
#define SQLITE_TOOBIG 18
#define SQLITE_CONSTRAINT 19
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_STATIC ((void (*)(void *))0)

struct sqlite_api_functions {
    int (*bind_blob)(sqlite3_stmt *, int, const void *, int, void (*)(void *));
    int (*bind_double)(sqlite3_stmt *, int, double);
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
    sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
    const char *(*db_filename)(sqlite3 *, const char *);
    sqlite3_mutex *(*db_mutex)(sqlite3 *);
    const char *(*errmsg)(sqlite3 *);
    const char *(*errstr)(int);
    int (*finalize)(sqlite3_stmt *);
    int (*libversion_number)(void);
    void (*mutex_enter)(sqlite3_mutex *);
    void (*mutex_leave)(sqlite3_mutex *);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*reset)(sqlite3_stmt *);
    int (*step)(sqlite3_stmt *);
    sqlite3_int64 (*total_changes64)(sqlite3 *); /* SQLite 3.37 and later */
};
static struct sqlite_api_functions sqlite_api;

#define sqlite3_bind_blob sqlite_api.bind_blob
#define sqlite3_bind_double sqlite_api.bind_double
#define sqlite3_bind_int64 sqlite_api.bind_int64
#define sqlite3_bind_null sqlite_api.bind_null
#define sqlite3_bind_text sqlite_api.bind_text
#define sqlite3_column_int64 sqlite_api.column_int64
#define sqlite3_db_filename sqlite_api.db_filename
#define sqlite3_db_mutex sqlite_api.db_mutex
#define sqlite3_errmsg sqlite_api.errmsg
#define sqlite3_errstr sqlite_api.errstr
#define sqlite3_finalize sqlite_api.finalize
#define sqlite3_libversion_number sqlite_api.libversion_number
#define sqlite3_mutex_enter sqlite_api.mutex_enter
#define sqlite3_mutex_leave sqlite_api.mutex_leave
#define sqlite3_prepare_v2 sqlite_api.prepare_v2
#define sqlite3_reset sqlite_api.reset
#define sqlite3_step sqlite_api.step
#define sqlite3_total_changes64 sqlite_api.total_changes64

/* Fills sqlite_api from the shared object at `path` (already loaded), or from the program itself when `path` is
 * NULL (a Python whose _sqlite3 is built in). 0 when every function was found; otherwise -1 and `problem` says
 * which was not, and sqlite_api must not be used. */
static int load_sqlite_api(const char *path, char *problem, size_t problem_size) {
    static const struct {
        const char *name;
        size_t offset;
    } functions[] = {
#define FUNCTION(member) {"sqlite3_" #member, offsetof(struct sqlite_api_functions, member)}
        FUNCTION(bind_blob),    FUNCTION(bind_double), FUNCTION(bind_int64),          FUNCTION(bind_null),
        FUNCTION(bind_text),    FUNCTION(column_int64), FUNCTION(db_filename),        FUNCTION(db_mutex),
        FUNCTION(errmsg),       FUNCTION(errstr),       FUNCTION(finalize),           FUNCTION(libversion_number),
        FUNCTION(mutex_enter),  FUNCTION(mutex_leave),  FUNCTION(prepare_v2),         FUNCTION(reset),
        FUNCTION(step),         FUNCTION(total_changes64),
#undef FUNCTION
    };
    void *library = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : dlopen(NULL, RTLD_NOW);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(problem, problem_size, "%s is not loaded: %s", path ? path : "the program", why ? why : "?");
        return -1;
    }
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        void *found = dlsym(library, functions[i].name);
        if (found == NULL) {
            snprintf(problem, problem_size, "the SQLite of Python's _sqlite3 (%s) has no %s", path ? path : "built in",
                     functions[i].name);
            return -1;
        }
        /* POSIX guarantees a function's address survives the round trip through void * (dlsym's own contract). */
        memcpy((char *)&sqlite_api + functions[i].offset, &found, sizeof found);
    }
    return 0; /* the handle stays open: the functions are used for the life of the process */
}

#endif
