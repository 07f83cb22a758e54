/* cmd_run.c — `whatif run` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif run: not implemented yet\n");
  return EXIT_BADINPUT;
}
