/* cmd_query.c — `whatif query` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_query(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif query: not implemented yet\n");
  return EXIT_BADINPUT;
}
