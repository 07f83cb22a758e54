/* cmd_bench.c — `whatif bench` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_bench(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif bench: not implemented yet\n");
  return EXIT_BADINPUT;
}
