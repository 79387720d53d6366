/* sweep_stats.h -- when `rounds = auto` stops: the board's 95 % CI of each configuration's
 * geometric mean (app/compare/stats.py describe(): Student's t on the logarithms, the printing
 * step's rounding variance q²/12 added) for the block tests (put_block, rewrite, get_block) and the
 * six file tests, from the runs' CSV lines. A study is decided when every such CI is within ±5 % of
 * its geometric mean (exp(t·SE) ≤ 1.05), after at least SWEEP_AUTO_MIN_ROUNDS rounds. */
#ifndef SWEEP_STATS_H
#define SWEEP_STATS_H

#include <stddef.h>

#define SWEEP_STAT_TESTS 9
#define SWEEP_DECIDED_WITHIN 0.05  /* ±5 %: a bonnie++ rerun on one machine typically stays within it */

extern const char *const sweep_stat_test_names[SWEEP_STAT_TESTS];

/* The nine tests' rates from a format-1.98 CSV line: values[t] > 0 measured, 0 not measured (+++++),
 * -1 not run (an empty field). Returns 0, or -1 when the line has fewer than the 38 columns up to ran_del_cpu. */
int sweep_stats_from_csv(const char *line, double values[SWEEP_STAT_TESTS]);

/* The 95 % CI's half width relative to the geometric mean, exp(t·SE of the logs) - 1, of the n
 * measured values (> 0; others are left out). Returns -1 when fewer than two are measured. */
double sweep_stats_ci_half(const double *values, int n);

/* The widest relative half width among the tests of one configuration: rates[round][test] for
 * `rounds` rounds. A test measured in fewer than two rounds is left out (bonnie++ calls it too fast to
 * time). Returns it with its test's index in *test, or -1 when no test has two measured values. */
double sweep_stats_widest(const double (*rates)[SWEEP_STAT_TESTS], int rounds, int *test);

/* A CI's half width in words, appended to out: "±2.1 %" below ±100 %, else the factor it spans either
 * way ("×3.2 either way"), and from ×100 on "over ×100 either way": a sign of too few rounds, not a
 * figure to read. Returns 0 or -1 (out of memory). */
struct sbuf;
int sweep_stats_interval_text(struct sbuf *out, double half);

#endif
