/* cmd_sweep.c — `whatif sweep` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_sweep(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif sweep: not implemented yet\n");
  return EXIT_BADINPUT;
}
