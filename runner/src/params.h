/* params.h -- what a run is asked to do: the test parameters, one struct filled by the options
 * parser and read (through a const pointer) by the I/O tests, the file tests, the report and
 * the document. */
#ifndef PARAMS_H
#define PARAMS_H

#include <stddef.h>
#include <stdint.h>

enum char_mode { CHAR_MODE_SYSCALL = 0, CHAR_MODE_STDIO };

struct bench_params {
    int64_t file_size_mib;         /* -s size; 0 skips the I/O tests */
    int64_t byte_io_mib;           /* -f<N>: per-char tests over this many MiB; 0 skips them */
    int io_chunk_bytes;            /* -s size:chunk */
    int seeks;                     /* -s size:chunk:seeks */
    int seek_procs;                /* -s size:chunk:seeks:procs */
    int64_t num_files;             /* -n num, units of 1024 files; 0 skips the file tests */
    int64_t max_size;              /* -n num:max, bytes; -1 hard links, -2 symlinks */
    int64_t min_size;              /* -n num:max:min */
    int num_dirs;                  /* -n num:max:min:dirs */
    int file_chunk_bytes;          /* -n num:max:min:dirs:chunk */
    int fsync_each;                /* -b */
    int direct_io;                 /* -D: O_DIRECT when the big file is created */
    int concurrency;               /* -c (recorded only, as bonnie++ does) */
    enum char_mode char_mode;      /* --char-mode */
    size_t stdio_buffer_bytes;     /* --stdio-buffer; 0 = the file's st_blksize */
};

#endif
