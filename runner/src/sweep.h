/* sweep.h -- `bonnieboard-runner sweep PLAN --yes-destroy DEVICE [--post URL] [--token-file F]
 * [--dry-run] [--resume]`: a configuration study in one command. Each round makes every configuration's
 * filesystem afresh on the scratch device, mounts it, runs the runner's tests on it and unmounts it,
 * in a seeded shuffled order per round; rounds = auto stops when the study is decided.
 *
 * Exit codes: 0 done; 1 usage (command line, plan, --yes-destroy); 2 preparation (the device is
 * refused, mkfs/mount/umount failed, the study directory); 3 a run failed or the sweep was
 * interrupted (nothing is left mounted; --resume continues); 4 every run ran, some posts failed
 * (their bodies are in spool files). */
#ifndef SWEEP_H
#define SWEEP_H

/* argv[0] is "sweep". Returns the exit code. */
int sweep_main(int argc, char **argv);

#endif
