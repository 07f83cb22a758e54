/* cmd_config.c — `whatif config` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_config(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif config: not implemented yet\n");
  return EXIT_BADINPUT;
}
