/* sync.c -- see sync.h; follows bonnie++ 2.00a's semaphore.cpp and sync.cpp. */
#include "sync.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>

int sync_create(int procs, char *err, size_t errlen)
{
    int semid = semget(SYNC_SEM_KEY, TEST_COUNT, IPC_CREAT | 0666);
    if (semid < 0) {
        snprintf(err, errlen, "-p: can't get semaphore: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < TEST_COUNT; i++) {
        if (semctl(semid, i, SETVAL, procs) < 0) {
            snprintf(err, errlen, "-p: can't set semaphore value: %s", strerror(errno));
            return -1;
        }
    }
    printf("Creating semaphore for %d procs.\n", procs);
    return 0;
}

int sync_remove(char *err, size_t errlen)
{
    int semid = semget(SYNC_SEM_KEY, 1, 0666);
    if (semid < 0 || semctl(semid, 0, IPC_RMID) < 0) {
        snprintf(err, errlen, "-p -1: can't remove semaphore %d: %s", SYNC_SEM_KEY, strerror(errno));
        return -1;
    }
    printf("Semaphore removed.\n");
    return 0;
}

int sync_open(struct bench_sync *s, enum sync_mode mode, char *err, size_t errlen)
{
    s->mode = mode;
    s->semid = -1;
    if (mode != SYNC_SEM)
        return 0;
    s->semid = semget(SYNC_SEM_KEY, TEST_COUNT, 0666);
    if (s->semid < 0) {
        snprintf(err, errlen, "-y s: can't get semaphore %d (create it with -p N first): %s", SYNC_SEM_KEY,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int sync_wait(const struct bench_sync *s, enum test_id t)
{
    if (!s || s->mode == SYNC_NONE)
        return 0;
    if (s->mode == SYNC_PROMPT) {
        char line[16];
        printf("\n%d:\n", (int)t);
        fflush(NULL);
        if (!fgets(line, sizeof(line), stdin))
            return 0; /* bonnie++ goes on at end of input too */
        return 0;
    }
    struct sembuf take = {.sem_num = (unsigned short)t, .sem_op = -1, .sem_flg = IPC_NOWAIT};
    struct sembuf until_zero = {.sem_num = (unsigned short)t, .sem_op = 0, .sem_flg = SEM_UNDO};
    if (semop(s->semid, &take, 1) < 0) {
        perror("semop: can't take the test's semaphore (more processes than -p said?)");
        return -1;
    }
    while (semop(s->semid, &until_zero, 1) < 0) {
        if (errno != EINTR) {
            perror("semop: waiting for the other processes failed");
            return -1;
        }
    }
    return 0;
}
