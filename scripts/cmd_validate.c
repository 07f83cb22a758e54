/* cmd_validate.c — `whatif validate` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_validate(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif validate: not implemented yet\n");
  return EXIT_BADINPUT;
}
