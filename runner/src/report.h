/* report.h -- bonnie++'s results as text: the CSV line (format 1.98, 50
 * fields), the -x header, the text report, and the value encodings. */
#ifndef REPORT_H
#define REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "limiter.h"
#include "params.h"
#include "sbuf.h"
#include "timer.h"

#define REPORT_CSV_FORMAT "1.98"
#define REPORT_CSV_FIELDS 50

/* All 50 column names (bonnie++ 2.00a's header names only 48: it forgets
 * seeks and seek_proc_count). No trailing newline. */
#define REPORT_CSV_HEADER \
    "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size," \
    "seek_count,seek_proc_count,putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu," \
    "getc,getc_cpu,get_block,get_block_cpu,seeks,seeks_cpu,num_files,max_size,min_size," \
    "num_dirs,file_chunk_size,seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del," \
    "seq_del_cpu,ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu," \
    "putc_latency,put_block_latency,rewrite_latency,getc_latency,get_block_latency," \
    "seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,ran_create_latency," \
    "ran_stat_latency,ran_del_latency"

/* One run's identity and parameters: the metadata columns of the line. */
struct run_params {
    const char *machine;
    const char *version;     /* field 1, e.g. "bonnieboard-0.1.0" */
    const char *seed;        /* -z number, or the -Z file name (bonnie++ writes either) */
    const struct bench_params *bp;
};

/* Rate of test t as bonnie++ computes it (KiB/s, seeks/s, files/s). */
double report_rate(const struct run_params *p, const struct test_result *r, enum test_id t);

/* Integer %CPU as bonnie++: int(cpu / elapsed * 100). */
int report_cpu_pct(const struct test_result *r);

/* Appends one CSV line (with '\n') exactly as bonnie++ 2.00a writes it,
 * including its column quirks (empty io_chunk_size, num_dirs in the fifth
 * file-test column). Returns 0 or -1 when out of memory. */
int report_csv_line(struct sbuf *out, const struct run_params *p,
                    const struct test_result res[TEST_COUNT]);

/* Prints bonnie++'s text report (I/O block if run, file block if run),
 * with the file-test rates printed as numbers (2.00a prints garbage). */
void report_text(FILE *fp, const struct run_params *p, const struct test_result res[TEST_COUNT]);

/* Prints what limited each test that ran, one line per test ("Notes:" block after the report). */
void report_notes(FILE *fp, const struct limiter lim[TEST_COUNT]);

#endif
