/* rng.c -- see rng.h. */
#include "rng.h"

#include <string.h>

void rng_init(struct rng *r, unsigned int seed)
{
    memset(r, 0, sizeof(*r));
    r->seed = seed;
    initstate_r(seed, r->state, sizeof(r->state), &r->data);
    srandom_r(seed, &r->data);
}

void rng_reset(struct rng *r)
{
    srandom_r(r->seed, &r->data);
}

int rng_next(struct rng *r)
{
    int32_t v = 0;
    random_r(&r->data, &v);
    return (int)v;
}
