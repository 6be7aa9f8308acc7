#include "cli/cli.h"
int cmd_calibrate(int argc, char **argv) { (void)argc; (void)argv; return EXIT_BAD_INPUT; }
