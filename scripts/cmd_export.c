/* cmd_export.c — `whatif export`: write a trace (or, later, an MFIR window) in another tool's
 * format. One exporter per option (--champsim, ...); each parses its own arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "champsim.h"
#include "cli.h"
#include "trace.h"

/* An exporter: selected by its option, given the whole argument vector (argv[0] = "export"). */
typedef struct exp_format {
  const char *option; /* "--champsim" */
  const char *usage;  /* its synopsis for `whatif export --help` */
  int (*run)(int argc, char **argv);
} exp_format;

/* ---- ChampSim --------------------------------------------------------------------------------- */

/* whatif export TRACE --champsim OUT.xz [--xz-level N] */
static int export_champsim(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  uint64_t level = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--champsim")) {
      if (i + 1 >= argc) return cli_usage("export", "--champsim needs an output file (OUT.xz)");
      out = argv[++i];
    } else if (!strcmp(argv[i], "--xz-level")) {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], &level) || level > 9)
        return cli_usage("export", "--xz-level needs a number in 0..9");
      i++;
    } else if (argv[i][0] == '-') {
      return cli_usage("export", "unknown option %s for --champsim", argv[i]);
    } else if (!in) {
      in = argv[i];
    } else {
      return cli_usage("export", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!in) return cli_usage("export", "no input trace given");
  wi_err err = {0};
  trace_t *t = trace_open(in, &err);
  if (!t) return cli_fail(&err);
  chs_stats st;
  wi_rc rc = chs_export(t, out, (int)level, &st, &err);
  trace_close(t);
  if (rc != WI_OK) return cli_fail(&err);
  char a[32];
  fprintf(stderr, "whatif: %s ChampSim records (%llu branches) into %s: %llu bytes\n",
          fmt_si(a, sizeof a, (double)st.records), (unsigned long long)st.branches, out,
          (unsigned long long)st.xz_bytes);
  return 0;
}

/* ---- dispatch ------------------------------------------------------------------------------------ */

int export_kanata(int argc, char **argv); /* scripts/export_kanata.c (MFIR window -> Konata) */

static const exp_format formats[] = {
  {"--champsim", "whatif export TRACE --champsim OUT.xz [--xz-level N]   ChampSim input trace "
                 "(64-byte records, xz)", export_champsim},
  {"--kanata", "whatif export DB --kanata OUT.log [--from FID] [--count N]   MFIR window as a Kanata "
               "pipeline log (Konata viewer)", export_kanata},
};

static void usage(FILE *f) {
  fprintf(f, "usage:\n");
  for (size_t i = 0; i < WI_ARRAY_LEN(formats); i++) fprintf(f, "  %s\n", formats[i].usage);
}

int cmd_export(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
  const exp_format *chosen = NULL;
  for (int i = 1; i < argc; i++)
    for (size_t k = 0; k < WI_ARRAY_LEN(formats); k++)
      if (!strcmp(argv[i], formats[k].option)) {
        if (chosen && chosen != &formats[k])
          return cli_usage("export", "choose one format (%s or %s)", chosen->option, formats[k].option);
        chosen = &formats[k];
      }
  if (!chosen) {
    return cli_usage("export", "no output format given (--champsim OUT.xz or --kanata OUT.log; see whatif export --help)");
  }
  return chosen->run(argc, argv);
}
