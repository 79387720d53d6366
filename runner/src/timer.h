/* timer.h -- clocks and CPU use (bonnie++'s bon_time and duration analogue). */
#ifndef TIMER_H
#define TIMER_H

#include <stdint.h>

#include "evidence.h"
#include "results.h"

/* A running stopwatch: wall clock plus getrusage(RUSAGE_SELF), and the evidence sample taken just
 * before the clock started (when ev is set). */
struct timer {
    double wall_s, user_s, sys_s;
    const struct evidence_source *ev;
    struct evidence_sample start;
};

/* Longest-operation tracker (bonnie++ Duration). */
struct op_timer {
    double start_s, max_s;
};

double timer_now_s(void);                /* CLOCK_MONOTONIC in seconds */
void timer_cpu_now(double *user_s, double *sys_s);
/* Starts t; with ev, samples the evidence counters first (outside the measured time). */
void timer_start(struct timer *t, const struct evidence_source *ev);
/* Stops t and stores elapsed wall, user and system seconds into r, then (with ev) the evidence. */
void timer_stop(const struct timer *t, struct test_result *r);

static inline void op_timer_start(struct op_timer *o) { o->start_s = timer_now_s(); }
static inline void op_timer_stop(struct op_timer *o)
{
    double d = timer_now_s() - o->start_s;
    if (d > o->max_s)
        o->max_s = d;
}


#endif
