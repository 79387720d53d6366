/* sweep_stats.c -- the stopping rule of rounds = auto, computed as the board computes a CI. */
#include "sweep_stats.h"

#include "sbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sweep_stat_test_names[SWEEP_STAT_TESTS] = {
    "put_block", "rewrite", "get_block", "seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del",
};

/* Their columns in a format-1.98 line (report.h's REPORT_CSV_HEADER, 0-based). */
static const int columns[SWEEP_STAT_TESTS] = {11, 13, 17, 26, 28, 30, 32, 34, 36};

int sweep_stats_from_csv(const char *line, double values[SWEEP_STAT_TESTS])
{
    int col = 0;
    const char *field = line;
    for (int t = 0; t < SWEEP_STAT_TESTS; t++)
        values[t] = 0;
    while (field) {
        for (int t = 0; t < SWEEP_STAT_TESTS; t++) {
            if (columns[t] != col)
                continue;
            char *end;
            double v = strtod(field, &end);
            int empty = *field == ',' || *field == '\0' || *field == '\n';
            values[t] = empty ? -1 : end != field && (*end == ',' || *end == '\0' || *end == '\n') && v > 0 ? v : 0;
        }
        if (col == 37)
            return 0;
        const char *comma = strchr(field, ',');
        field = comma ? comma + 1 : NULL;
        col++;
    }
    return -1;
}

/* Student's t quantile 0.975 for 1..30 degrees of freedom (the board's t_975); beyond, 1.959964 + 2.4/df,
 * within 0.002 of it up to the 99 a plan's 100 rounds can reach. */
static double t_975(int df)
{
    static const double t[] = {
        0,         12.7062047, 4.3026527, 3.1824463, 2.7764451, 2.5705818, 2.4469119, 2.3646243,
        2.3060041, 2.2621572,  2.2281389, 2.2009852, 2.1788128, 2.1603687, 2.1447867, 2.1314495,
        2.1199053, 2.1098156,  2.1009220, 2.0930241, 2.0859634, 2.0796138, 2.0738731, 2.0686576,
        2.0638986, 2.0595386,  2.0555294, 2.0518305, 2.0484071, 2.0452296, 2.0422725,
    };
    return df < (int)(sizeof(t) / sizeof(t[0])) ? t[df] : 1.959964 + 2.4 / df;
}

double sweep_stats_ci_half(const double *values, int n)
{
    int m = 0;
    double sum = 0, rounding = 0;
    for (int i = 0; i < n; i++) {
        if (values[i] <= 0)
            continue;
        m++;
        sum += log(values[i]);
        /* the printing step: whole numbers, or one decimal for a value with a fraction */
        double q = values[i] == (double)(long long)values[i] ? 1.0 : 0.1;
        rounding += (q / values[i]) * (q / values[i]);
    }
    if (m < 2)
        return -1;
    double mean = sum / m, ss = 0;
    for (int i = 0; i < n; i++)
        if (values[i] > 0)
            ss += (log(values[i]) - mean) * (log(values[i]) - mean);
    double var = ss / (m - 1) + rounding / (12.0 * m);
    return exp(t_975(m - 1) * sqrt(var / m)) - 1;
}

double sweep_stats_widest(const double (*rates)[SWEEP_STAT_TESTS], int rounds, int *test)
{
    double widest = -1;
    double *column = malloc(sizeof(double) * (size_t)(rounds > 0 ? rounds : 1));
    if (!column)
        return -1;
    for (int t = 0; t < SWEEP_STAT_TESTS; t++) {
        for (int r = 0; r < rounds; r++)
            column[r] = rates[r][t];
        double half = sweep_stats_ci_half(column, rounds);
        if (half > widest) {
            widest = half;
            *test = t;
        }
    }
    free(column);
    return widest;
}

int sweep_stats_interval_text(struct sbuf *out, double half)
{
    if (half < 1)
        return sbuf_printf(out, "±%.1f %%", half * 100);
    if (half + 1 < 100)
        return sbuf_printf(out, "×%.2g either way", half + 1);
    return sbuf_printf(out, "over ×100 either way");
}
