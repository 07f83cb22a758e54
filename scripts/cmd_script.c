/* cmd_script.c — `whatif script` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_script(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif script: not implemented yet\n");
  return EXIT_BADINPUT;
}
