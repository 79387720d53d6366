/* rng.c -- see rng.h. */
#include "rng.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rng_init(struct rng *r, unsigned int seed)
{
    memset(r, 0, sizeof(*r));
    r->seed = seed;
    initstate_r(seed, r->state, sizeof(r->state), &r->data);
    srandom_r(seed, &r->data);
}

int rng_init_file(struct rng *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(err, errlen, "-Z: can't open random file \"%s\": %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    long count = (long)(st.st_size / (off_t)sizeof(int32_t));
    if (count < 1 || st.st_size > (off_t)1 << 30) {
        snprintf(err, errlen, "-Z: random file \"%s\" must hold 1 to 2^28 four-byte numbers", path);
        close(fd);
        return -1;
    }
    r->values = malloc((size_t)count * sizeof(int));
    size_t want = (size_t)count * sizeof(int32_t), got = 0;
    while (r->values && got < want) {
        ssize_t n = read(fd, (char *)r->values + got, want - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!r->values || got != want) {
        snprintf(err, errlen, "-Z: can't read random data from \"%s\"", path);
        rng_free(r);
        return -1;
    }
    for (long i = 0; i < count; i++) {
        int32_t v = (int32_t)ntohl((uint32_t)r->values[i]);
        /* bonnie++: abs(int(ntohl(x))); its abs(INT_MIN) stays negative, which would index out of bounds here */
        r->values[i] = v == INT32_MIN ? 0 : (v < 0 ? -v : v);
    }
    r->count = count;
    r->next = 0;
    return 0;
}

void rng_free(struct rng *r)
{
    free(r->values);
    r->values = NULL;
    r->count = 0;
}

void rng_reset(struct rng *r)
{
    if (r->values)
        r->next = 0;
    else
        srandom_r(r->seed, &r->data);
}

int rng_next(struct rng *r)
{
    if (r->values) {
        int v = r->values[r->next];
        r->next = (r->next + 1) % r->count;
        return v;
    }
    int32_t v = 0;
    random_r(&r->data, &v);
    return (int)v;
}
