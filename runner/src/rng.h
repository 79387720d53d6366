/* rng.h -- bonnie++'s random source: glibc rand() seeded with srand(seed),
 * kept in a caller-owned state so the sequence (file names, seek offsets,
 * file sizes) for a given -z seed is the one bonnie++ 2.00a produces. */
#ifndef RNG_H
#define RNG_H

#include <stdlib.h>

struct rng {
    struct random_data data;
    char state[128];          /* 128 bytes = glibc's default TYPE_3 generator */
    unsigned int seed;
};

void rng_init(struct rng *r, unsigned int seed);
void rng_reset(struct rng *r);     /* back to the start of the sequence */
int rng_next(struct rng *r);       /* 0 .. RAND_MAX, like rand() */

#endif
