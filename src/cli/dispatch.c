/*
** dispatch.c -- the sqlq tool's global options, then dispatch to one
** command (cli_main(), which main.c calls and the fuzzing harness of
** tests/fuzz calls many times in one process).
**
**   sqlq [--url URL] COMMAND [ARGS...]
**   sqlq help [COMMAND]       sqlq --help       sqlq --version
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef int (*cli_command_fn)(const cli_global *g, int argc, char **argv);

typedef struct cli_command {
  const char *name;
  cli_command_fn fn;
  const char *summary;
} cli_command;

static const cli_command commands[] = {
  {"init", cmd_init, "create or upgrade the schema"},
  {"push", cmd_push, "enqueue a job (payload from an argument or stdin)"},
  {"work", cmd_work, "run a command once per job of a queue"},
  {"stats", cmd_stats, "count the jobs of each queue by state"},
  {"jobs", cmd_jobs, "list the jobs of a queue"},
  {"retry", cmd_retry, "make dead or scheduled jobs ready again"},
  {"cancel", cmd_cancel, "stop jobs: ready or running jobs become dead, cancelled"},
  {"pause", cmd_pause, "stop handing out the jobs of a queue"},
  {"resume", cmd_resume, "hand out the jobs of a paused queue again"},
  {"purge", cmd_purge, "delete every job of a queue"},
  {"retention", cmd_retention, "show or set how long finished jobs stay in history"},
  {"prune", cmd_prune, "delete the finished jobs a queue's retention no longer keeps"},
  {"limit", cmd_limit, "show or set how many jobs of a queue may run at once"},
  {"lock", cmd_lock, "run a command while holding a named lock"},
  {"locks", cmd_locks, "list the named locks held now, and by whom"},
  {"ring", cmd_ring, "create, push into, read and drop capped FIFO logs"},
  {"pool", cmd_pool, "hand out the items of a pool in fair rotation"},
  {"subscribe", cmd_subscribe, "turn the row changes of a table into jobs"},
  {"unsubscribe", cmd_unsubscribe, "end a table subscription"},
  {"subscriptions", cmd_subscriptions, "list the table subscriptions"},
  {"cron", cmd_cron, "enqueue jobs on schedules (crontab specs, @every)"},
  {"bench", cmd_bench, "measure throughput and latency"},
  {"serve", cmd_serve, "serve a JSON API and Prometheus metrics over HTTP"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const cli_command *find_command(const char *name) {
  size_t i;
  for (i = 0; i < N_COMMANDS; i++) {
    if (strcmp(commands[i].name, name) == 0) {
      return &commands[i];
    }
  }
  return NULL;
}

static void print_usage(FILE *out) {
  size_t i;
  fputs("usage: sqlq [--url URL] COMMAND [ARGS...]\n"
        "       sqlq help COMMAND | sqlq --help | sqlq --version\n"
        "\n"
        "URL defaults to $SQLQ_URL, else sqlite:sqlq.db.\n"
        "\n"
        "commands:\n",
        out);
  for (i = 0; i < N_COMMANDS; i++) {
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  }
}

/* Run one command with argv[0] its name.  getopt is reset first, so every
** command parses its flags from scratch. */
static int run(const cli_global *g, const cli_command *cmd, int argc, char **argv) {
  optind = 0;
  return cmd->fn(g, argc, argv);
}

static int unknown_command(const char *name) {
  cli_error("unknown command '%.64s' (see 'sqlq --help')", name);
  return EXIT_USAGE;
}

/* `sqlq help [COMMAND]`: the tool's usage, or COMMAND's (as COMMAND --help
** prints it), on stdout. */
static int help(const cli_global *g, int argc, char **argv) {
  const cli_command *cmd;
  char help_flag[] = "--help";
  char *cmd_argv[3];
  if (argc < 2) {
    print_usage(stdout);
    return 0;
  }
  if (argc > 2) {
    cli_error("help: expected one command name (see 'sqlq --help')");
    return EXIT_USAGE;
  }
  cmd = find_command(argv[1]);
  if (cmd == NULL) {
    return unknown_command(argv[1]);
  }
  cmd_argv[0] = argv[1];
  cmd_argv[1] = help_flag;
  cmd_argv[2] = NULL;
  return run(g, cmd, 2, cmd_argv);
}

int cli_main(int argc, char **argv) {
  static const struct option options[] = {
    {"url", required_argument, NULL, 'u'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
  };
  cli_global g;
  const cli_command *cmd;
  int c;

  g.url = getenv("SQLQ_URL");
  if (g.url == NULL || g.url[0] == '\0') {
    g.url = "sqlite:sqlq.db";
  }
  /* '+': the global options end at the command's name.  optind 0 makes
  ** getopt start afresh, also on a second call in one process. */
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
    switch (c) {
    case 'u':
      g.url = optarg;
      break;
    case 'h':
      print_usage(stdout);
      return 0;
    case 'V':
      printf("sqlq %s\n", SQLQ_VERSION);
      return 0;
    case ':':
      cli_error("option '%s' needs a value (see 'sqlq --help')", argv[optind - 1]);
      return EXIT_USAGE;
    default:
      cli_error("unknown option '%s' (see 'sqlq --help')", argv[optind - 1]);
      return EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    cli_error("no command given (see 'sqlq --help')");
    return EXIT_USAGE;
  }
  argc -= optind;
  argv += optind;
  if (strcmp(argv[0], "help") == 0) {
    return help(&g, argc, argv);
  }
  cmd = find_command(argv[0]);
  if (cmd == NULL) {
    return unknown_command(argv[0]);
  }
  return run(&g, cmd, argc, argv);
}
