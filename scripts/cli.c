/* cli.c — command dispatch, usage errors and locating shipped files. */
#include "cli.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef WHATIF_SOURCE_DIR
#define WHATIF_SOURCE_DIR "."
#endif

static const cli_cmd cmds[] = {
  {"record", cmd_record, "record a program under QEMU into a .wtr trace"},
  {"info", cmd_info, "describe a trace"},
  {"run", cmd_run, "run a trace through the out-of-order core model"},
  {"replay", cmd_replay, "replay a trace under interventions; exact deltas against the baseline"},
  {"sweep", cmd_sweep, "one replay per static PC (or per intervention in a list) into SQLite"},
  {"merge", cmd_merge, "merge sweep shards"},
  {"mfir", cmd_mfir, "build the MFIR causal graph of a replay into SQLite"},
  {"query", cmd_query, "run SQL on an MFIR database"},
  {"tma", cmd_tma, "top-down analysis from an MFIR database"},
  {"stacks", cmd_stacks, "per-instruction cycle stacks from an MFIR database"},
  {"critical", cmd_critical, "critical path and root-cause traversal on an MFIR database"},
  {"gus", cmd_gus, "Gus-style taint ranking and sensitivity analysis"},
  {"validate", cmd_validate, "rank attributions against perturbation ground truth"},
  {"script", cmd_script, "run a Lua what-if script"},
  {"export", cmd_export, "export a trace (ChampSim) or an MFIR window (Kanata)"},
  {"demo", cmd_demo, "record the bundled workloads and show what whatif does"},
  {"bench", cmd_bench, "measure recorder, reader and model speed"},
  {"config", cmd_config, "show or document machine configurations"},
};

static void help(FILE *f) {
  fprintf(f, "whatif %s — counterfactual replay engine for CPU performance analysis\n\n"
             "usage: whatif <command> [options]   (whatif <command> --help for details)\n\n",
          WHATIF_VERSION);
  for (size_t i = 0; i < WI_ARRAY_LEN(cmds); i++) fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
}

int cli_main(int argc, char **argv) {
  wi_tmp_cleanup_on_signals(); /* Ctrl-C or a kill leaves no *.tmp.* behind */
  if (argc < 1 || !strcmp(argv[0], "help") || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
    help(stdout);
    if (argc < 1) fprintf(stderr, "whatif: no command given (try whatif help)\n");
    return argc < 1 ? EXIT_BADINPUT : 0;
  }
  if (!strcmp(argv[0], "--version")) {
    printf("whatif %s\n", WHATIF_VERSION);
    return 0;
  }
  for (size_t i = 0; i < WI_ARRAY_LEN(cmds); i++)
    if (!strcmp(argv[0], cmds[i].name)) return cmds[i].fn(argc, argv);
  fprintf(stderr, "whatif: unknown command '%s' (try whatif help)\n", argv[0]);
  return EXIT_BADINPUT;
}

int cli_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "whatif %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_BADINPUT;
}

int cli_fail(const wi_err *err) {
  wi_perror(err);
  return EXIT_BADINPUT;
}

int cli_check_out(const char *cmd, const char *path) {
  struct stat sb;
  if (!path[0]) return cli_usage(cmd, "empty output path");
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return cli_usage(cmd, "cannot write %s: it is a directory", path);
  char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (!slash) strcpy(dir, ".");
  else if (slash == dir) slash[1] = 0; /* "/name" */
  else *slash = 0;
  int rc = 0;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    rc = cli_usage(cmd, "cannot write %s: directory %s does not exist", path, dir);
  else if (access(dir, W_OK | X_OK) != 0)
    rc = cli_usage(cmd, "cannot write %s: directory %s is not writable", path, dir);
  free(dir);
  return rc;
}

const char *cli_exe_dir(void) {
  static char dir[PATH_MAX];
  if (!dir[0]) {
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) {
      strcpy(dir, ".");
    } else {
      dir[n] = 0;
      char *slash = strrchr(dir, '/');
      if (slash) *slash = 0;
    }
  }
  return dir;
}

char *cli_find_data(const char *rel) {
  const char *home = getenv("WHATIF_HOME");
  char *cands[4] = {
    home ? xasprintf("%s/%s", home, rel) : NULL,
    xasprintf("%s/../%s", cli_exe_dir(), rel),
    xasprintf("%s/../share/whatif/%s", cli_exe_dir(), rel),
    xasprintf("%s/%s", WHATIF_SOURCE_DIR, rel),
  };
  char *found = NULL;
  for (int i = 0; i < 4; i++) {
    if (!found && cands[i] && access(cands[i], R_OK) == 0) found = cands[i];
    else free(cands[i]);
  }
  return found;
}
