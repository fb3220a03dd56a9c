/*
** main.c -- the sqlq tool's entry point: everything is in cli_main()
** (dispatch.c), so that a test can run the tool without a process.
*/
#include "cli.h"

int main(int argc, char **argv) {
  return cli_main(argc, argv);
}
