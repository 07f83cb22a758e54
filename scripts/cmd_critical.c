/* cmd_critical.c — `whatif critical` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_critical(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif critical: not implemented yet\n");
  return EXIT_BADINPUT;
}
