/* workdir.c -- see workdir.h. */
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int workdir_open(struct workdir *w, const char *path, char *err, size_t errlen)
{
    w->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->dirfd < 0) {
        snprintf(err, errlen, "can't open directory \"%s\": %s", path, strerror(errno));
        return -1;
    }
    if (faccessat(w->dirfd, ".", W_OK | X_OK, AT_EACCESS)) {
        snprintf(err, errlen, "can't write in directory \"%s\": %s", path, strerror(errno));
        close(w->dirfd);
        w->dirfd = -1;
        return -1;
    }
    snprintf(w->name, sizeof(w->name), "Bonnie.%d", (int)getpid());
    return 0;
}

int64_t workdir_free_bytes(const struct workdir *w)
{
    struct statvfs sv;
    if (fstatvfs(w->dirfd, &sv))
        return -1;
    return (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

/* Removes every entry of the directory open as fd, one level of
 * subdirectories deep (bonnie++'s layout: files, or NNNNN/ dirs of files). */
static void remove_entries(int fd, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    int removed;
    do { /* entries can be missed while the directory shrinks: repeat */
        removed = 0;
        rewinddir(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            struct stat st;
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
                continue;
            if (S_ISDIR(st.st_mode) && depth > 0) {
                int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0)
                    remove_entries(sub, depth - 1);
                if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
                    removed++;
            } else if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
                removed++;
            }
        }
    } while (removed);
    closedir(d);
}

void workdir_cleanup(const struct workdir *w)
{
    if (w->dirfd < 0)
        return;
    struct stat st;
    if (fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW))
        return;
    if (S_ISDIR(st.st_mode)) {
        int fd = openat(w->dirfd, w->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
            remove_entries(fd, 1);
        unlinkat(w->dirfd, w->name, AT_REMOVEDIR);
    } else {
        unlinkat(w->dirfd, w->name, 0);
    }
}

void workdir_close(struct workdir *w)
{
    if (w->dirfd >= 0)
        close(w->dirfd);
    w->dirfd = -1;
}
