/* report.c -- CSV line and text report, following bonnie++ 2.00a's
 * bon_time.cpp DoReportIO/DoReportFile. */
#include "report.h"

#include <string.h>

#include "options.h"

char *report_format_latency(char *buf, double latency_s)
{
    if (latency_s == 0.0)
        buf[0] = '\0';
    else if (latency_s > 99.999999)
        snprintf(buf, 16, "%ds", (int)latency_s);
    else if (latency_s > 0.099999)
        snprintf(buf, 16, "%dms", (int)(latency_s * 1000.0));
    else
        snprintf(buf, 16, "%dus", (int)(latency_s * 1000000.0));
    return buf;
}

/* bonnie++ print_size(): "<n><unit>" dividing by 1024 while exact and a
 * bigger unit exists; a trailing ' ' unit means "no suffix". */
static void print_size(char *buf, size_t len, int64_t size, const char *units)
{
    int ind = 0;
    if (size == 0) {
        snprintf(buf, len, "%lld%c", (long long)size, units[0]);
    } else {
        while (size % 1024 == 0 && units[ind + 1] != '\0') {
            size /= 1024;
            ind++;
        }
        snprintf(buf, len, "%lld%c", (long long)size, units[ind]);
    }
    size_t n = strlen(buf);
    if (n && buf[n - 1] == ' ')
        buf[n - 1] = '\0';
}

double report_test_size(const struct run_params *p, enum test_id t)
{
    switch (t) {
    case TEST_PUTC:
    case TEST_GETC:
        return (double)(p->byte_io_mib * 1024);
    case TEST_PUT_BLOCK:
    case TEST_REWRITE:
    case TEST_GET_BLOCK:
        return (double)(p->file_size_mib * 1024);
    case TEST_SEEKS:
        return (double)p->seeks;
    default:
        return (double)(p->num_files * 1024);
    }
}

double report_rate(const struct run_params *p, const struct test_result *r, enum test_id t)
{
    return report_test_size(p, t) / r->elapsed_s;
}

int report_cpu_pct(const struct test_result *r)
{
    return (int)((r->user_s + r->sys_s) / r->elapsed_s * 100.0);
}

static int csv_stat(struct sbuf *out, const struct run_params *p,
                    const struct test_result *r, enum test_id t)
{
    if (!timer_test_ran(r))
        return sbuf_printf(out, ",,");
    if (timer_too_fast(r))
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
    if (p->file_size_mib) {
        print_size(buf, sizeof(buf), p->file_size_mib, "MG");
        /* 1.98 writes the size and then only the separator of io_chunk_size */
        rc |= sbuf_printf(out, REPORT_CSV_FORMAT ",%s,%s,%d,%s,%s,,%d,%d", p->version,
                          p->machine, p->concurrency, p->seed, buf, p->seeks, p->seek_procs);
        for (int t = TEST_PUTC; t <= TEST_SEEKS; t++)
            rc |= csv_stat(out, p, &res[t], (enum test_id)t);
    } else {
        rc |= sbuf_printf(out, REPORT_CSV_FORMAT ",%s,%s,%d,%s,,,,,,,,,,,,,,,,", p->version,
                          p->machine, p->concurrency, p->seed);
    }
    if (p->num_files) {
        rc |= sbuf_printf(out, ",%lld", (long long)p->num_files);
        if (p->max_size == -1)
            rc |= sbuf_printf(out, ",link,");
        else if (p->max_size == -2)
            rc |= sbuf_printf(out, ",symlink,");
        else if (p->max_size && p->min_size)
            rc |= sbuf_printf(out, ",%lld,%lld", (long long)p->max_size, (long long)p->min_size);
        else if (p->max_size)
            rc |= sbuf_printf(out, ",%lld,", (long long)p->max_size);
        else
            rc |= sbuf_printf(out, ",,");
        /* bonnie++ loses the file chunk size here and puts num_dirs one
         * column late (spec 3.3): ",<empty>,<dirs or empty>" */
        rc |= sbuf_printf(out, ",");
        if (p->num_dirs > 1)
            rc |= sbuf_printf(out, ",%d", p->num_dirs);
        else
            rc |= sbuf_printf(out, ",");
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            rc |= csv_stat(out, p, &res[t], (enum test_id)t);
    } else {
        rc |= sbuf_printf(out, ",,,,,,,,,,,,,,,,,");
    }
    for (int t = 0; t < TEST_COUNT; t++)
        rc |= sbuf_printf(out, ",%s", report_format_latency(buf, res[t].latency_s));
    rc |= sbuf_printf(out, "\n");
    return rc ? -1 : 0;
}

static void text_stat(FILE *fp, const struct run_params *p, const struct test_result *r,
                      enum test_id t)
{
    if (!timer_test_ran(r)) {
        fprintf(fp, "          ");
        return;
    }
    if (timer_too_fast(r)) {
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
    if (p->file_size_mib) {
        fprintf(fp, "Version %5s       ------Sequential Output------ --Sequential Input- --Random-\n",
                RUNNER_VERSION);
        fprintf(fp, "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n");
        fprintf(fp, "Name:Size etc        /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP\n");
        /* size:chunk:concurrency:seeks:procs, trailing empty parts removed */
        char size_buf[160], part[32];
        print_size(size_buf, sizeof(size_buf), p->file_size_mib, "MG");
        char rest[128] = "";
        size_t keep = 0;
        const char *parts[4];
        char chunk_txt[32] = "", conc_txt[16] = "", seeks_txt[16] = "", procs_txt[16] = "";
        if (p->io_chunk_bytes != OPT_DEFAULT_CHUNK_BYTES)
            print_size(chunk_txt, sizeof(chunk_txt), p->io_chunk_bytes, " km");
        if (p->concurrency != 1)
            snprintf(conc_txt, sizeof(conc_txt), "%d", p->concurrency);
        if (p->seeks != OPT_DEFAULT_SEEKS)
            snprintf(seeks_txt, sizeof(seeks_txt), "%d", p->seeks);
        if (p->seek_procs != OPT_DEFAULT_SEEK_PROCS)
            snprintf(procs_txt, sizeof(procs_txt), "%d", p->seek_procs);
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
            fprintf(fp, " %9s", report_format_latency(lat, res[t].latency_s));
        fprintf(fp, "\n");
    }
    if (p->num_files) {
        char buf[128];
        int n = snprintf(buf, sizeof(buf), "%lld", (long long)p->num_files);
        if (p->max_size == -1)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":link");
        else if (p->max_size == -2)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":symlink");
        else if (p->max_size)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, ":%lld:%lld",
                          (long long)p->max_size, (long long)p->min_size);
        if (p->num_dirs > 1)
            snprintf(buf + n, sizeof(buf) - (size_t)n, "/%d", p->num_dirs);
        fprintf(fp, "Version %5s       ------Sequential Create------ --------Random Create--------\n",
                RUNNER_VERSION);
        fprintf(fp, "%-19.19s -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n", p->machine);
        if (p->min_size)
            fprintf(fp, "files:max:min       ");
        else if (p->max_size)
            fprintf(fp, "files:max           ");
        else
            fprintf(fp, "              files ");
        fprintf(fp, " /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP  /sec %%CP\n");
        fprintf(fp, "%19s", buf);
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            text_stat(fp, p, &res[t], (enum test_id)t);
        fprintf(fp, "\nLatency          ");
        for (int t = TEST_SEQ_CREATE; t < TEST_COUNT; t++)
            fprintf(fp, " %9s", report_format_latency(lat, res[t].latency_s));
        fprintf(fp, "\n");
    }
    fflush(fp);
}
