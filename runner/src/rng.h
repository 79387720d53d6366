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
    int *values;              /* -Z: numbers from a file, used in turn and repeated; NULL = rand() */
    long count, next;
};

void rng_init(struct rng *r, unsigned int seed);
/* -Z FILE, as bonnie++ Rand::seedFile(): the file's 32-bit big-endian integers, made
 * non-negative, are the sequence. Returns 0, or -1 with a message in err. rng_free releases it. */
int rng_init_file(struct rng *r, const char *path, char *err, size_t errlen);
void rng_free(struct rng *r);
void rng_reset(struct rng *r);     /* back to the start of the sequence */
int rng_next(struct rng *r);       /* 0 .. RAND_MAX, like rand() */

#endif
