/* results.c -- see results.h. */
#include "results.h"

#include <stdlib.h>

const char *const results_test_names[TEST_COUNT] = {
    "putc", "put_block", "rewrite", "getc", "get_block", "seeks",
    "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"
};

/* Field by field: a struct of uint64_t members is not an array of them, and summing through a
 * uint64_t pointer walked across the members is undefined behaviour. The assertion makes a new
 * member fail the build until it is added here. */
_Static_assert(sizeof(struct sys_counts) == 20 * sizeof(uint64_t),
               "results_add_calls adds 20 members: add the new one there");

void results_add_calls(struct sys_counts *sum, const struct sys_counts *more)
{
    sum->read += more->read;
    sum->write += more->write;
    sum->lseek += more->lseek;
    sum->open += more->open;
    sum->creat += more->creat;
    sum->close += more->close;
    sum->fsync += more->fsync;
    sum->stat += more->stat;
    sum->unlink += more->unlink;
    sum->mkdir += more->mkdir;
    sum->rmdir += more->rmdir;
    sum->getdents += more->getdents;
    sum->link += more->link;
    sum->symlink += more->symlink;
    sum->sync += more->sync;
    sum->ipc_read += more->ipc_read;
    sum->ipc_write += more->ipc_write;
    sum->bytes_read += more->bytes_read;
    sum->bytes_written += more->bytes_written;
    sum->sync_ns += more->sync_ns;
}

void results_free(struct test_result res[TEST_COUNT])
{
    for (int t = 0; t < TEST_COUNT; t++) {
        free(res[t].seekers);
        res[t].seekers = NULL;
        res[t].seeker_count = 0;
    }
}
