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

/* The units of a duration, in seconds: each a whole multiple of the next. */
static const struct unit {
  char name;
  double seconds;
} units[] = {{'w', 604800}, {'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};

int cli_parse_duration(const char *s, double *out) {
  char number[64];
  size_t len = strlen(s);
  double scale = 1;
  if (len > 0 && len < sizeof number) {
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
      if (s[len - 1] == units[i].name) {
        scale = units[i].seconds;
        len--;
        break;
      }
    }
  }
  if (len == 0 || len >= sizeof number) {
    return -1;
  }
  memcpy(number, s, len);
  number[len] = '\0';
  if (cli_parse_seconds(number, out) != 0 || !isfinite(*out * scale)) {
    return -1;
  }
  *out *= scale;
  return 0;
}

void cli_format_duration(double seconds, char *out, size_t size) {
  int n;
  if (seconds == 0) {
    snprintf(out, size, "-");
    return;
  }
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    double count = seconds / units[i].seconds;
    if (count == floor(count) && count < 1e15) {
      snprintf(out, size, "%.0f%c", count, units[i].name);
      return;
    }
  }
  n = snprintf(out, size, "%.6f", seconds);
  while (n > 0 && out[n - 1] == '0') {
    out[--n] = '\0';
  }
  snprintf(out + n, size - (size_t)n, "s");
}

int cli_parse_rate(const char *s, int64_t *max_starts, int64_t *period_us) {
  char number[32];
  const char *slash = strchr(s, '/');
  size_t len = slash ? (size_t)(slash - s) : strlen(s);
  long long n;
  double seconds;
  if (len == 0 || len >= sizeof number) {
    return -1;
  }
  memcpy(number, s, len);
  number[len] = '\0';
  if (cli_parse_int(number, 0, SQLQ_RATE_MAX_STARTS_MAX, &n) != 0) {
    return -1;
  }
  *max_starts = n;
  *period_us = 0;
  if (slash == NULL) {
    return n == 0 ? 0 : -1; /* only "0" may go without a period */
  }
  /* "100/s": a bare unit is one of it. */
  char period[64];
  int bare_unit = slash[1] != '\0' && slash[2] == '\0' && strchr("wdhms", slash[1]) != NULL;
  snprintf(period, sizeof period, "%s%s", bare_unit ? "1" : "", slash + 1);
  if (cli_parse_duration(period, &seconds) != 0 || !(seconds * 1e6 >= 1) ||
      seconds * 1e6 > (double)SQLQ_RATE_PERIOD_MAX_US) {
    return -1;
  }
  *period_us = n == 0 ? 0 : (int64_t)llround(seconds * 1e6);
  return 0;
}

void cli_format_rate(int64_t max_starts, int64_t period_us, char *out, size_t size) {
  char period[48];
  if (max_starts == 0) {
    snprintf(out, size, "-");
    return;
  }
  cli_format_duration((double)period_us / 1e6, period, sizeof period);
  snprintf(out, size, "%lld/%s", (long long)max_starts, period);
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
