/* cmd_stacks.c — `whatif stacks` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_stacks(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif stacks: not implemented yet\n");
  return EXIT_BADINPUT;
}
