/* ugid.c -- see ugid.h. */
#include "ugid.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_id(const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

int ugid_switch(const char *user, const char *group, int quiet, char *err, size_t errlen)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    int set_group = 0, set_user = 0;
    long id;
    if (user) {
        struct passwd *pw;
        if (parse_id(user, &id) == 0) {
            uid = (uid_t)id;
            pw = getpwuid(uid);
            struct group *gr = pw ? NULL : getgrnam("nogroup");
            if (pw || gr) {
                gid = pw ? pw->pw_gid : gr->gr_gid;
                set_group = 1;
            }
        } else {
            pw = getpwnam(user);
            if (!pw) {
                snprintf(err, errlen, "-u: can't find user %s", user);
                return -1;
            }
            uid = pw->pw_uid;
            gid = pw->pw_gid;
            set_group = 1;
        }
        set_user = 1;
    }
    if (group) {
        if (parse_id(group, &id) == 0) {
            gid = (gid_t)id;
        } else {
            struct group *gr = getgrnam(group);
            if (!gr) {
                snprintf(err, errlen, "-g: can't find group %s", group);
                return -1;
            }
            gid = gr->gr_gid;
        }
        set_group = 1;
    }
    if (set_group) {
        /* root's supplementary groups would otherwise stay with the tests (bonnie++ keeps them) */
        if (geteuid() == 0 && setgroups(1, &gid)) {
            snprintf(err, errlen, "can't drop supplementary groups: %s", strerror(errno));
            return -1;
        }
        if (setgid(gid)) {
            snprintf(err, errlen, "can't set gid to %d: %s", (int)gid, strerror(errno));
            return -1;
        }
    }
    if (set_user && setuid(uid)) {
        snprintf(err, errlen, "can't set uid to %d: %s", (int)uid, strerror(errno));
        return -1;
    }
    if (!quiet)
        fprintf(stderr, "Using uid:%d, gid:%d.\n", (int)getuid(), (int)getgid());
    return 0;
}
