/* cmd_tma.c — `whatif tma` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_tma(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif tma: not implemented yet\n");
  return EXIT_BADINPUT;
}
