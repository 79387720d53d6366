/* test_results.c -- one test's measurement: summing system-call counts. */
#include "testhelp.h"

#include "results.h"

int main(void)
{
    struct sys_counts sum, more;
    memset(&sum, 0, sizeof(sum));
    memset(&more, 0, sizeof(more));
    sum.read = 1;
    sum.sync_ns = 5;
    more.read = 2;
    more.write = 3;
    more.creat = 4;
    more.ipc_write = 6;
    more.bytes_written = 7;
    more.sync_ns = 8;
    results_add_calls(&sum, &more);
    test_cond("counts add up", sum.read == 3 && sum.write == 3 && sum.creat == 4 && sum.ipc_write == 6);
    test_cond("bytes and sync time add up", sum.bytes_written == 7 && sum.sync_ns == 13 && sum.bytes_read == 0);

    /* every member: all ones added twice gives all twos */
    struct sys_counts ones = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, twos;
    memset(&twos, 0, sizeof(twos));
    results_add_calls(&twos, &ones);
    results_add_calls(&twos, &ones);
    struct sys_counts want = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    test_cond("every member is added", memcmp(&twos, &want, sizeof(want)) == 0);
    test_report();
}
