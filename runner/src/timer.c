/* timer.c -- monotonic clock and getrusage CPU accounting. */
#include "timer.h"

#include <sys/resource.h>
#include <time.h>

double timer_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void timer_cpu_now(double *user_s, double *sys_s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void timer_start(struct timer *t, const struct evidence_source *ev)
{
    t->ev = ev;
    if (ev)
        evidence_sample(ev, &t->start);
    t->wall_s = timer_now_s();
    timer_cpu_now(&t->user_s, &t->sys_s);
}

void timer_stop(const struct timer *t, struct test_result *r)
{
    double u, s;
    r->elapsed_s = timer_now_s() - t->wall_s;
    timer_cpu_now(&u, &s);
    r->user_s = u - t->user_s;
    r->sys_s = s - t->sys_s;
    if (r->elapsed_s <= 0.0)
        r->elapsed_s = 1e-9; /* it ran: never report "not run" for a real test */
    if (t->ev) {
        struct evidence_sample end;
        evidence_sample(t->ev, &end);
        evidence_delta(t->ev, &t->start, &end, &r->ev);
    }
}
