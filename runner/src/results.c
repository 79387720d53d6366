/* results.c -- see results.h. */
#include "results.h"

#include <stdlib.h>

const char *const results_test_names[TEST_COUNT] = {
    "putc", "put_block", "rewrite", "getc", "get_block", "seeks",
    "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"
};

void results_free(struct test_result res[TEST_COUNT])
{
    for (int t = 0; t < TEST_COUNT; t++) {
        free(res[t].seekers);
        res[t].seekers = NULL;
        res[t].seeker_count = 0;
    }
}
