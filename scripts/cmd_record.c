/* cmd_record.c — `whatif record`: parse options and run the recorder (core/record.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "record.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif record [-o FILE] [--skip N] [--max N] [--roi ssc|func:NAME] [--seed N]\n"
          "                     [--level N] [--chunk N] [-q] [--] PROG [ARGS...]\n"
          "\n"
          "Run PROG under qemu-x86_64 with the whatif recorder plugin and write its execution\n"
          "(first thread) to FILE (default: <PROG basename>.wtr). PROG's input and output pass\n"
          "through; whatif exits with PROG's exit status (2 if PROG was killed by a signal: the\n"
          "trace up to the signal is still written).\n"
          "\n"
          "  -o FILE          output trace\n"
          "  --skip N         skip N instructions once the region of interest starts\n"
          "  --max N          record at most N instructions, then let PROG run to its end\n"
          "  --roi ssc        record between SSC marks (mov ebx,111 / mov ebx,222 + 64 67 90)\n"
          "  --roi func:NAME  record the first call of function NAME (main binary) to its return\n"
          "  --seed N         seed of the guest's randomness: AT_RANDOM and getrandom(2) (default 0:\n"
          "                   runs are reproducible; /dev/urandom and clocks are not)\n"
          "  --level N        zstd level of the trace (default 3)\n"
          "  --chunk N        instructions per trace chunk (default 262144)\n"
          "  -q, --quiet      no summary line on stderr\n"
          "N accepts K/M/G suffixes (powers of 1000).\n");
}

int cmd_record(int argc, char **argv) {
  rec_opts o = {0};
  bool quiet = false;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    }
    if (a[0] != '-') break; /* the program */
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t n = 0;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = true;
      continue;
    }
    if (!val) return cli_usage("record", "option %s needs a value", a);
    i++;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      o.out = val;
    } else if (!strcmp(a, "--roi")) {
      o.roi = val;
    } else if (!strcmp(a, "--skip") || !strcmp(a, "--max") || !strcmp(a, "--seed") ||
               !strcmp(a, "--level") || !strcmp(a, "--chunk")) {
      if (!parse_u64(val, &n)) return cli_usage("record", "%s: '%s' is not a number", a, val);
      if (!strcmp(a, "--skip")) o.skip = n;
      else if (!strcmp(a, "--max")) o.max = n;
      else if (!strcmp(a, "--seed")) o.seed = n;
      else if (!strcmp(a, "--level")) {
        if (n < 1 || n > 22) return cli_usage("record", "--level: %s is not in 1..22", val);
        o.zstd_level = (int)n;
      } else {
        if (n < 1 || n > (1u << 24)) return cli_usage("record", "--chunk: %s is not in 1..16M", val);
        o.chunk_insns = (uint32_t)n;
      }
    } else {
      return cli_usage("record", "unknown option %s (see whatif record --help)", a);
    }
  }
  if (i >= argc) return cli_usage("record", "no program given (whatif record [options] -- PROG [ARGS...])");
  o.exe_dir = cli_exe_dir();

  rec_result res;
  wi_err err = {0};
  wi_rc rc = rec_run(&o, argc - i, argv + i, &res, &err);
  if (rc != WI_OK) {
    rec_result_free(&res);
    return cli_fail(&err);
  }
  if (!quiet) {
    char a[32], b[32];
    double mips = res.run_seconds > 0 ? (double)res.n_raw / res.run_seconds : 0;
    fprintf(stderr, "whatif: recorded %s instructions (%s/s under QEMU) into %s: %llu bytes, "
            "stream %.3f bytes/instruction\n",
            fmt_si(a, sizeof a, (double)res.n_raw), fmt_si(b, sizeof b, mips), res.out,
            (unsigned long long)res.file_bytes,
            res.n_raw ? (double)res.stream_bytes / (double)res.n_raw : 0.0);
  }
  /* Said even with -q: a wrapper script or launcher that execs the real program would
   * otherwise leave a trace of the wrapper alone without a word. */
  if (res.stopped_at_exec)
    fprintf(stderr, "whatif: note: %s called execve; the trace ends there (record the program it runs "
            "directly)\n", argv[i]);
  int status = res.exit_status;
  if (res.term_signal) {
    fprintf(stderr, "whatif: %s was killed by signal %d (%s); the trace up to it is in %s\n",
            argv[i], res.term_signal, strsignal(res.term_signal), res.out);
    status = EXIT_BADINPUT;
  }
  rec_result_free(&res);
  return status;
}
