/* units.c -- the runner's one place for units: bonnie++'s size syntax (scan and print),
 * its latency text, and each test's unit of work and rate unit. See units.h. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int units_size_from_str(const char *text, const char *conv, int64_t *out)
{
    const char *p = text;
    if (!p || !*p)
        return -1;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (!isdigit((unsigned char)*p))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (errno)
        return -1;
    if (*end) {
        if (end[1] != '\0' || !conv)
            return -1;
        const char *hit = strchr(conv, tolower((unsigned char)*end));
        if (!hit || *hit == ' ')
            return -1;
        for (long i = 0; i <= hit - conv; i++) {
            if (v > (INT64_MAX >> 10))
                return -1;
            v *= 1024;
        }
    }
    *out = neg ? -v : v;
    return 0;
}

void units_format_size(char *buf, size_t len, int64_t size, const char *units)
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

char *units_format_latency(char *buf, double latency_s)
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

double units_test_work(const struct bench_params *bp, enum test_id t)
{
    switch (t) {
    case TEST_PUTC:
    case TEST_GETC:
        return (double)(bp->byte_io_mib * 1024);
    case TEST_PUT_BLOCK:
    case TEST_REWRITE:
    case TEST_GET_BLOCK:
        return (double)(bp->file_size_mib * 1024);
    case TEST_SEEKS:
        return (double)bp->seeks;
    default:
        return (double)(bp->num_files * 1024);
    }
}

const char *units_test_unit(enum test_id t)
{
    if (t < TEST_SEEKS)
        return "KiB/s";
    return t == TEST_SEEKS ? "seeks/s" : "files/s";
}

