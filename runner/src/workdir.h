/* workdir.h -- the scratch directory (-d): every test file lives under one
 * name ("Bonnie.<pid>", a file or a directory) inside it, reached only
 * through a directory fd with openat()/O_NOFOLLOW, and removed on the way out. */
#ifndef WORKDIR_H
#define WORKDIR_H

#include <stddef.h>
#include <stdint.h>

struct workdir {
    int dirfd;          /* the -d directory, O_DIRECTORY */
    char name[64];      /* "Bonnie.<pid>": the big file, later the test directory */
};

/* Opens path as the scratch directory and checks it is writable.
 * Returns 0, or -1 with a message in err. */
int workdir_open(struct workdir *w, const char *path, char *err, size_t errlen);

/* Free bytes for an unprivileged writer in the scratch directory, or -1. */
int64_t workdir_free_bytes(const struct workdir *w);

/* Removes the test file or test directory tree, if present. Never follows
 * symlinks; safe to call more than once and from any state. */
void workdir_cleanup(const struct workdir *w);

void workdir_close(struct workdir *w);

#endif
