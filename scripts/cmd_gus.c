/* cmd_gus.c — `whatif gus` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_gus(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif gus: not implemented yet\n");
  return EXIT_BADINPUT;
}
