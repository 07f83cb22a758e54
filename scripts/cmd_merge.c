/* cmd_merge.c — `whatif merge` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_merge(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif merge: not implemented yet\n");
  return EXIT_BADINPUT;
}
