/* version.h -- the runner's name and version (CSV field 1 is
 * RUNNER_NAME "-" RUNNER_VERSION). */
#ifndef VERSION_H
#define VERSION_H
#define RUNNER_NAME "bonnieboard"
#define RUNNER_VERSION "0.1.0"
#endif
