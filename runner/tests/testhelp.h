/* testhelp.h -- a tiny unit-test macro header in the style of antirez's sds.
 *
 * test_cond(descr, expr) prints one line per check and counts failures;
 * test_report() prints the totals and exits 1 if any check failed. */
#ifndef TESTHELP_H
#define TESTHELP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failed_count = 0, test_count = 0;

#define test_cond(descr, _c) do { \
    test_count++; \
    printf("%d - %s: ", test_count, descr); \
    if (_c) printf("PASSED\n"); \
    else { printf("FAILED (%s:%d)\n", __FILE__, __LINE__); test_failed_count++; } \
} while (0)

#define test_str_eq(descr, got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    int ok_ = (g_ && w_ && strcmp(g_, w_) == 0); \
    test_cond(descr, ok_); \
    if (!ok_) printf("    got:  [%s]\n    want: [%s]\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define test_report() do { \
    printf("%d tests, %d passed, %d failed\n", test_count, \
           test_count - test_failed_count, test_failed_count); \
    if (test_failed_count) { printf("=== TEST FAILED ===\n"); exit(1); } \
} while (0)

#endif
