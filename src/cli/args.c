/*
** args.c -- the words of a command line: getopt_long() with errors
** reported in one line, whole numbers, seconds, limits and queue names,
** each checked before any database work.
*/
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_limit(const char *cmd, const char *s, long long *out) {
  if (cli_parse_int(s, 1, INT_MAX, out) != 0) {
    return cli_usage_error(cmd, "limit '%.40s' is not a whole number >= 1", s);
  }
  return 0;
}

int cli_parse_seconds(const char *s, double *out) {
  char *end;
  double v;
  /* strtod() also takes hex, "inf" and "nan": only plain decimals are
  ** seconds. */
  if (s[0] == '\0' || strspn(s, "0123456789.eE+-") != strlen(s)) {
    return -1;
  }
  errno = 0;
  v = strtod(s, &end);
  if (*end != '\0' || errno != 0 || !isfinite(v) || v < 0) {
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_int(const char *s, long long min, long long max, long long *out) {
  char *end;
  long long v;
  if (s[0] == '\0' || strspn(s, "0123456789+-") != strlen(s)) {
    return -1;
  }
  errno = 0;
  v = strtoll(s, &end, 10);
  if (*end != '\0' || errno != 0 || v < min || v > max) {
    return -1;
  }
  *out = v;
  return 0;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts) {
  int c;
  opterr = 0;
  c = getopt_long(argc, argv, shortopts, longopts, NULL);
  if (c == '?' || c == ':') {
    /* A missing value is always the last word, which names the option.  An
    ** unknown long option is the word before optind; an unknown short one
    ** is optopt, maybe inside a group of letters. */
    const char *word = argv[optind - 1];
    char letter[3] = {'-', (char)optopt, '\0'};
    if (c == '?' && optopt != 0) {
      word = letter;
    }
    cli_usage_error(cmd, c == '?' ? "unknown option '%.*s'" : "option '%.*s' needs a value",
                    (int)strcspn(word, "="), word);
    return '?';
  }
  return c;
}

int cli_getopt_allowed(const char *cmd, const char *usage, const char *allowed, int argc,
                       char **argv, const char *shortopts, const struct option *longopts,
                       int *exit_code) {
  int c = cli_getopt(cmd, argc, argv, shortopts, longopts);
  if (c == 'h') {
    fputs(usage, stdout);
    *exit_code = 0;
    return 0;
  }
  if (c == '?') {
    *exit_code = EXIT_USAGE;
    return 0;
  }
  if (c != -1 && strchr(allowed, c) == NULL) {
    /* An option given its value as the next word is the word before it. */
    const char *word = argv[optind - 1];
    if (optarg == word && optind >= 2) word = argv[optind - 2];
    *exit_code = cli_usage_error(cmd, "takes no option '%.*s'", (int)strcspn(word, "="), word);
    return 0;
  }
  return c;
}

int cli_check_queue(const char *cmd, const char *queue) {
  size_t len = strlen(queue);
  if (len == 0) {
    return cli_usage_error(cmd, "the queue name is empty");
  }
  if (len > SQLQ_QUEUE_NAME_MAX) {
    return cli_usage_error(cmd, "the queue name is %zu bytes, longer than %d", len,
                           SQLQ_QUEUE_NAME_MAX);
  }
  return 0;
}

int cli_parse_ids(const char *cmd, char **args, int n, int64_t **ids_out) {
  int64_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
  int i;
  if (ids == NULL) {
    cli_error("%s: out of memory", cmd);
    return EXIT_SOFTWARE;
  }
  for (i = 0; i < n; i++) {
    long long id;
    if (cli_parse_int(args[i], 1, INT64_MAX, &id) != 0) {
      free(ids);
      return cli_usage_error(cmd, "job id '%s' is not a whole number >= 1", args[i]);
    }
    ids[i] = id;
  }
  *ids_out = ids;
  return 0;
}
