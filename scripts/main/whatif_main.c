/* whatif_main.c — entry point of the `whatif` command-line program. */
int cli_main(int argc, char **argv);

int main(int argc, char **argv) { return cli_main(argc - 1, argv + 1); }
