/* cmd_replay.c — `whatif replay` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_replay(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif replay: not implemented yet\n");
  return EXIT_BADINPUT;
}
