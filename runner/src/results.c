/* results.c -- see results.h. */
#include "results.h"

const char *const results_test_names[TEST_COUNT] = {
    "putc", "put_block", "rewrite", "getc", "get_block", "seeks",
    "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"
};
