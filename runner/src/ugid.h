/* ugid.h -- bonnie++'s -u user[:group] and -g group: run the tests as that user. */
#ifndef UGID_H
#define UGID_H

#include <stddef.h>

/* Switches to user (name or number) and group (name or number; default the user's primary group,
 * or "nogroup" for a number without a passwd entry), as bonnie++'s bon_setugid() does, and also
 * drops root's supplementary groups. Returns 0 or -1 with a message in err. */
int ugid_switch(const char *user, const char *group, int quiet, char *err, size_t errlen);

#endif
