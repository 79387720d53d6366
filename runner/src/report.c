/* report.c -- CSV line and text report, following bonnie++ 2.00a's
 * bon_time.cpp DoReportIO/DoReportFile. */
#include "report.h"

#include <string.h>

#include "options.h"
#include "units.h"

double report_rate(const struct run_params *p, const struct test_result *r, enum test_id t)
{
    return units_test_work(p->bp, t) / r->elapsed_s;
}

int report_cpu_pct(const struct test_result *r)
{
    return (int)((r->user_s + r->sys_s) / r->elapsed_s * 100.0);
}

static int csv_stat(struct sbuf *out, const struct run_params *p,
                    const struct test_result *r, enum test_id t)
{
    if (!results_ran(r))
        return sbuf_printf(out, ",,");
    if (results_too_fast(r))
        return sbuf_printf(out, ",+++++,+++");
    double rate = report_rate(p, r, t);
    int rc;
    if (t == TEST_SEEKS)
        rc = sbuf_printf(out, rate >= 1000.0 ? ",%.0f" : ",%.1f", rate);
    else
        rc = sbuf_printf(out, ",%d", (int)rate);
    return rc | sbuf_printf(out, ",%d", report_cpu_pct(r));
}

int report_csv_line(struct sbuf *out, const struct run_params *p,
                    const struct test_result res[TEST_COUNT])
{
    int rc = 0;
    char buf[64];
    if (p->bp->file_size_mib) {
        units_format_size(buf, sizeof(buf), p->bp->file_size_mib, "MG");
        /* 1.98 writes the size and then only the separator of io_chunk_size */
        rc |= sbuf_printf(out, REPORT_CSV_FORMAT ",%s,%s,%d,%s,%s,,%d,%d", p->version,
                          p->machine, p->bp->concurrency, p->seed, buf, p->bp->seeks, p->bp->seek_procs);
        for (int t = TEST_PUTC; t <= TEST_SEEKS; t++)
            rc |= csv_stat(out, p, &res[t], (enum test_id)t);
    } else {
        rc |= sbuf_printf(out, REPORT_CSV_FORMAT ",%s,%s,%d,%s,,,,,,,,,,,,,,,,", p->version,
                          p->machine, p->bp->concurrency, p->seed);
    }
    if (p->bp->num_files) {
        rc |= sbuf_printf(out, ",%lld", (long long)p->bp->num_files);
        if (p->bp->max_size == -1)
            rc |= sbuf_printf(out, ",link,");
        else if (p->bp->max_size == -2)
            rc |= sbuf_printf(out, ",symlink,");
        else if (p->bp->max_size && p->bp->min_size)
            rc |= sbuf_printf(out, ",%lld,%lld", (long long)p->bp->max_size, (long long)p->bp->min_size);
        else if (p->bp->max_size)
            rc |= sbuf_printf(out, ",%lld,", (long long)p->bp->max_size);
        else
            rc |= sbuf_printf(out, ",,");
        /* bonnie++ loses the file chunk size here and puts num_dirs one
         * column late (spec 3.3): ",<empty>,<dirs or empty>" */
        rc |= sbuf_printf(out, ",");
        if (p->bp->num_dirs > 1)
            rc |= sbuf_printf(out, ",%d", p->bp->num_dirs);
        else
            rc |= sbuf_printf(out, ",");
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            rc |= csv_stat(out, p, &res[t], (enum test_id)t);
    } else {
        rc |= sbuf_printf(out, ",,,,,,,,,,,,,,,,,");
    }
    for (int t = 0; t < TEST_COUNT; t++)
        rc |= sbuf_printf(out, ",%s", units_format_latency(buf, res[t].latency_s));
    rc |= sbuf_printf(out, "\n");
    return rc ? -1 : 0;
}

static void text_stat(FILE *fp, const struct run_params *p, const struct test_result *r,
                      enum test_id t)
{
    if (!results_ran(r)) {
        fprintf(fp, "          ");
        return;
    }
    if (results_too_fast(r)) {
        fprintf(fp, " +++++ +++");
        return;
    }
    double stat = report_rate(p, r, t);
    if (t == TEST_SEEKS) {
        fprintf(fp, stat >= 1000.0 ? " %5.0f" : " %5.1f", stat);
    } else if (t < TEST_SEEKS) {
        if (stat < 10000.0)
            fprintf(fp, " %4dk", (int)stat);
        else if (stat / 1024.0 < 1000.0) {
            stat /= 1024.0;
            if (stat < 100.0)
                fprintf(fp, " %4.1fm", stat);
            else
                fprintf(fp, " %4dm", (int)(stat + 0.5));
        } else
            fprintf(fp, " %4.1fg", stat / 1024.0 / 1024.0);
    } else {
        fprintf(fp, " %5d", (int)stat); /* 2.00a passes a double to %5d here */
    }
    fprintf(fp, " %3d", report_cpu_pct(r));
}

void report_text(FILE *fp, const struct run_params *p, const struct test_result res[TEST_COUNT])
{
    char lat[16];
    if (p->bp->file_size_mib) {
        fprintf(fp, "Version %5s       ------Sequential Output------ --Sequential Input- --Random-\n",
                RUNNER_VERSION);
        fprintf(fp, "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n");
        fprintf(fp, "Name:Size etc        /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP\n");
        /* size:chunk:concurrency:seeks:procs, trailing empty parts removed */
        char size_buf[160], part[32];
        units_format_size(size_buf, sizeof(size_buf), p->bp->file_size_mib, "MG");
        char rest[128] = "";
        size_t keep = 0;
        const char *parts[4];
        char chunk_txt[32] = "", conc_txt[16] = "", seeks_txt[16] = "", procs_txt[16] = "";
        if (p->bp->io_chunk_bytes != OPT_DEFAULT_CHUNK_BYTES)
            units_format_size(chunk_txt, sizeof(chunk_txt), p->bp->io_chunk_bytes, " km");
        if (p->bp->concurrency != 1)
            snprintf(conc_txt, sizeof(conc_txt), "%d", p->bp->concurrency);
        if (p->bp->seeks != OPT_DEFAULT_SEEKS)
            snprintf(seeks_txt, sizeof(seeks_txt), "%d", p->bp->seeks);
        if (p->bp->seek_procs != OPT_DEFAULT_SEEK_PROCS)
            snprintf(procs_txt, sizeof(procs_txt), "%d", p->bp->seek_procs);
        parts[0] = chunk_txt; parts[1] = conc_txt; parts[2] = seeks_txt; parts[3] = procs_txt;
        for (int i = 0; i < 4; i++) {
            snprintf(part, sizeof(part), ":%s", parts[i]);
            strncat(rest, part, sizeof(rest) - strlen(rest) - 1);
            if (parts[i][0])
                keep = strlen(rest);
        }
        rest[keep] = '\0';
        strncat(size_buf, rest, sizeof(size_buf) - strlen(size_buf) - 1);

        char buf[256];
        snprintf(buf, 19, "%s                  ", p->machine);
        buf[19] = '\0';
        char *cur = buf;
        int offset = 20 - (int)strlen(size_buf) - 2;
        if (offset >= 0) {
            cur = &buf[offset];
            *cur++ = ' ';
        }
        snprintf(cur, sizeof(buf) - (size_t)(cur - buf), "%s", size_buf);
        fputs(buf, fp);
        for (int t = TEST_PUTC; t <= TEST_SEEKS; t++)
            text_stat(fp, p, &res[t], (enum test_id)t);
        fprintf(fp, "\nLatency          ");
        for (int t = TEST_PUTC; t <= TEST_SEEKS; t++)
            fprintf(fp, " %9s", units_format_latency(lat, res[t].latency_s));
        fprintf(fp, "\n");
    }
    if (p->bp->num_files) {
        char buf[128];
        int n = snprintf(buf, sizeof(buf), "%lld", (long long)p->bp->num_files);
        if (p->bp->max_size == -1)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":link");
        else if (p->bp->max_size == -2)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":symlink");
        else if (p->bp->max_size)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":%lld:%lld",
                          (long long)p->bp->max_size, (long long)p->bp->min_size);
        if (p->bp->num_dirs > 1)
            snprintf(buf + n, sizeof(buf) - (size_t)n, "/%d", p->bp->num_dirs);
        fprintf(fp, "Version %5s       ------Sequential Create------ --------Random Create--------\n",
                RUNNER_VERSION);
        fprintf(fp, "%-19.19s -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n", p->machine);
        if (p->bp->min_size)
            fprintf(fp, "files:max:min       ");
        else if (p->bp->max_size)
            fprintf(fp, "files:max           ");
        else
            fprintf(fp, "              files ");
        fprintf(fp, " /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP\n");
        fprintf(fp, "%19s", buf);
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            text_stat(fp, p, &res[t], (enum test_id)t);
        fprintf(fp, "\nLatency          ");
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            fprintf(fp, " %9s", units_format_latency(lat, res[t].latency_s));
        fprintf(fp, "\n");
    }
    fflush(fp);
}

void report_notes(FILE *fp, const struct limiter lim[TEST_COUNT])
{
    int any = 0;
    for (int t = 0; t < TEST_COUNT; t++) {
        const char *code = limiter_code_name(lim[t].code);
        if (!code)
            continue;
        if (!any++)
            fprintf(fp, "Notes (what limited each test; the evidence is in the JSON document):\n");
        fprintf(fp, "  %-10s %-12s %s\n", results_test_names[t], code, lim[t].text);
    }
    fflush(fp);
}
