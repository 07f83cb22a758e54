/* cmd_record.c — `whatif record` (not yet implemented). */
#include "cli.h"

#include <stdio.h>

int cmd_record(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "whatif record: not implemented yet\n");
  return EXIT_BADINPUT;
}
