/* cmd_config.c — `whatif config [NAME|FILE] [--set LUA] [--doc]`: print a resolved machine
 * configuration as Lua, or document every parameter (unit, range, meaning). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "machine.h"
#include "ooo.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: whatif config [NAME|FILE] [--set LUA-TABLE] [--doc] [--hash]\n"
          "  Print the resolved machine configuration NAME (golden_cove, skylake, stress) or FILE as a\n"
          "  Lua table that loads back to the same machine (default golden_cove).\n"
          "  --set    apply overrides first, e.g. --set '{core = {rob = 256}}'\n"
          "  --doc    document every parameter: path, type, unit, range, meaning\n"
          "  --hash   print the configuration hash only\n");
}

int cmd_config(int argc, char **argv) {
  const char *name = NULL, *set = NULL;
  bool doc = false, hash = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--doc")) {
      doc = true;
    } else if (!strcmp(a, "--hash")) {
      hash = true;
    } else if (!strcmp(a, "--set")) {
      if (i + 1 >= argc) return cli_usage("config", "--set needs a Lua table");
      set = argv[++i];
    } else if (a[0] == '-') {
      return cli_usage("config", "unknown option '%s' (see whatif config --help)", a);
    } else if (!name) {
      name = a;
    } else {
      return cli_usage("config", "more than one configuration given ('%s' and '%s')", name, a);
    }
  }
  if (doc && !name && !set) {
    ooo_config_doc(stdout);
    return 0;
  }
  wi_err err = {0};
  ooo_config cfg;
  if (machine_load(name, &cfg, &err)) return cli_fail(&err);
  if (set && machine_apply_expr(&cfg, set, &err)) return cli_fail(&err);
  if (doc) {
    ooo_config_doc(stdout);
    return 0;
  }
  if (hash) {
    printf("%016llx\n", (unsigned long long)ooo_config_hash(&cfg));
    return 0;
  }
  char *path = machine_path(name);
  printf("-- machine configuration %s, resolved from %s (hash %016llx)\n", cfg.name, path ? path : "?",
         (unsigned long long)ooo_config_hash(&cfg));
  free(path);
  ooo_config_dump_lua(&cfg, stdout);
  return 0;
}
