/* units.h -- the runner's one place for units: bonnie++'s size syntax (scan and print),
 * its latency text, and each test's unit of work and rate unit. */
#ifndef UNITS_H
#define UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "results.h"

/* Parses bonnie++-style sizes: a decimal number, optionally followed by one
 * suffix letter (case-insensitive) from conv; the i-th letter multiplies by
 * 1024^(i+1), as bonnie++'s size_from_str(). Returns 0 or -1 on bad text or overflow. */
int units_size_from_str(const char *text, const char *conv, int64_t *out);

/* bonnie++ units_format_size(): "<n><unit>" into buf, dividing by 1024 while exact and a bigger unit
 * exists in units (units[0] is size's own unit); a ' ' unit means "no suffix". */
void units_format_size(char *buf, size_t len, int64_t size, const char *units);

/* Writes bonnie++'s latency text for latency_s seconds into buf (size >= 16):
 * "" if 0, "%ds" above 99.999999 s, "%dms" above 0.099999 s, else "%dus";
 * numbers truncated. Returns buf. */
char *units_format_latency(char *buf, double latency_s);

/* Units of work the rate of test t is computed from: KiB (I/O tests), seeks or files. */
double units_test_work(const struct bench_params *bp, enum test_id t);

/* The unit of test t's rate: "KiB/s", "seeks/s" or "files/s". */
const char *units_test_unit(enum test_id t);

#endif
