/* cmd_export.c — `whatif export` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_export(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif export: not implemented yet\n");
  return EXIT_BADINPUT;
}
