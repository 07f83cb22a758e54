/* cmd_info.c — `whatif info` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_info(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif info: not implemented yet\n");
  return EXIT_BADINPUT;
}
