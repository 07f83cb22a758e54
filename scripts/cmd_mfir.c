/* cmd_mfir.c — `whatif mfir` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_mfir(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif mfir: not implemented yet\n");
  return EXIT_BADINPUT;
}
