/*
** subcommand.c -- commands made of subcommands (`sqlq ring push ...`):
** find the subcommand named by the first argument and run it.
*/
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_subcommand(const cli_global *g, const char *cmd, const char *usage, const cli_sub *subs,
                   size_t n, int argc, char **argv) {
  size_t i;
  if (argc < 2) {
    cli_error("%s: expected a subcommand (see 'sqlq %s --help')", cmd, cmd);
    return EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(usage, stdout);
    return 0;
  }
  for (i = 0; i < n; i++) {
    if (strcmp(subs[i].name, argv[1]) == 0) {
      optind = 0;
      return subs[i].fn(g, argc - 1, argv + 1);
    }
  }
  cli_error("%s: unknown subcommand '%.64s' (see 'sqlq %s --help')", cmd, argv[1], cmd);
  return EXIT_USAGE;
}
