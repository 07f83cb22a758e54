/* cmd_demo.c — `whatif demo` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_demo(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif demo: not implemented yet\n");
  return EXIT_BADINPUT;
}
