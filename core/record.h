/* record.h — the recorder's launcher: run a program under qemu-x86_64 with the whatif plugin,
 * then finalize the plugin's raw trace into a .wtr with code regions, symbols, source lines
 * and metadata. */
#ifndef WHATIF_RECORD_H
#define WHATIF_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* What to record. Zero-initialise and set what you need. */
typedef struct rec_opts {
  const char *out;       /* output trace (NULL: "<program basename>.wtr" in the working dir) */
  uint64_t skip;         /* raw instructions to skip once the region of interest starts */
  uint64_t max;          /* raw instructions to record at most (0: no limit) */
  const char *roi;       /* NULL or "all", "ssc" (SSC marks), "func:NAME" (one call of NAME) */
  uint64_t seed;         /* qemu -seed: guest randomness (AT_RANDOM, getrandom) is reproducible */
  const char *exe_dir;   /* directory of the running whatif executable, to find the plugin */
  const char *plugin;    /* plugin .so (NULL: $WHATIF_PLUGIN, then next to exe_dir) */
  const char *qemu;      /* qemu binary (NULL: $WHATIF_QEMU, then qemu-x86_64 in PATH) */
  int zstd_level;        /* 0: the writer's default */
  uint32_t chunk_insns;  /* instructions per chunk (0: the writer's default) */
} rec_opts;

/* What happened. Free with rec_result_free. */
typedef struct rec_result {
  int exit_status;       /* the program's exit status (0..255), or -1 if a signal killed it */
  int term_signal;       /* the signal that killed it, or 0 */
  uint64_t n_raw;        /* raw instructions recorded */
  uint64_t n_insns;      /* model instructions (rep runs collapsed) */
  uint64_t file_bytes;   /* size of the written trace */
  uint64_t stream_bytes; /* compressed bytes of its dynamic stream */
  double run_seconds;    /* wall time of the program under QEMU (recording included) */
  double total_seconds;  /* wall time of everything (finalize included) */
  char *out;             /* the path written (malloc'd) */
  bool stopped_at_exec;  /* the program called execve: the trace ends there */
} rec_result;

/* Record argv[0] (a path, or a name looked up in PATH like a shell) with arguments
 * argv[1..argc). The program's stdin, stdout and stderr are passed through. Returns WI_OK when
 * a trace was written — also when the program exited non-zero or was killed by a signal (see
 * res); a killed program's trace holds everything up to the signal. Otherwise returns an
 * error with a one-line message and leaves no output file: WI_EINVAL (program missing, not an
 * x86-64 ELF file, unknown function, empty trace), WI_EIO (output not writable), WI_ECHILD
 * (qemu missing, plugin missing or refused by QEMU, recording failed). res may be filled
 * partly on error (exit status of the program). */
wi_rc rec_run(const rec_opts *o, int argc, char *const argv[], rec_result *res, wi_err *err);
void rec_result_free(rec_result *res); /* accepts NULL; frees res->out */

/* Full path of an executable named name: name itself if it contains a '/', else the first
 * match in $PATH. malloc'd, or NULL with err filled. */
char *rec_which(const char *name, wi_err *err);

/* The recorder plugin: $WHATIF_PLUGIN, <exe_dir>/core/plugin/whatif_plugin.so (build tree),
 * <exe_dir>/../lib/whatif/whatif_plugin.so (installed). malloc'd, or NULL with err filled. */
char *rec_find_plugin(const char *exe_dir, wi_err *err);

#endif
