/*
** util.c -- helpers shared by the commands of the sqlq tool: error lines,
** the mapping of library statuses to exit codes, opening the database,
** parsing numbers and flags, reading stdin, starting child programs and
** printing tables.
*/
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"

void cli_error(const char *fmt, ...) {
  char *msg = NULL, *p;
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vasprintf(&msg, fmt, ap);
  va_end(ap);
  if (n < 0) {
    fputs("sqlq: out of memory\n", stderr);
    return;
  }
  /* Arguments and database messages may hold control characters: the
  ** error stays one line whatever they hold. */
  for (p = msg; *p != '\0'; p++) {
    if ((unsigned char)*p < 0x20 || *p == 0x7f) {
      *p = '?';
    }
  }
  fprintf(stderr, "sqlq: %s\n", msg);
  free(msg);
}

int cli_exit_code(int status) {
  switch (status) {
  case SQLQ_OK:
    return 0;
  case SQLQ_MISUSE:
    return EXIT_USAGE;
  case SQLQ_TOOBIG:
  case SQLQ_NOTFOUND:
    return EXIT_DATAERR;
  case SQLQ_UNAVAILABLE:
  case SQLQ_SCHEMA:
    return EXIT_UNAVAILABLE;
  case SQLQ_BUSY:
  case SQLQ_TIMEOUT:
  case SQLQ_STALE:
    return EXIT_TEMPFAIL;
  default:
    return EXIT_SOFTWARE;
  }
}

sqlq_db *cli_open(const cli_global *g, int *exit_code) {
  sqlq_db *db = NULL;
  int rc = sqlq_open(g->url, NULL, &db);
  if (rc == SQLQ_OK) {
    return db;
  }
  *exit_code = cli_fail(db, rc, "open");
  sqlq_close(db);
  return NULL;
}

int cli_fail(sqlq_db *db, int status, const char *what) {
  const char *msg = sqlq_errmsg(db);
  if (status == SQLQ_SCHEMA && strstr(msg, "sqlq init") == NULL) {
    cli_error("%s: %s (run `sqlq init`)", what, msg);
  } else {
    cli_error("%s: %s", what, msg);
  }
  return cli_exit_code(status);
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

unsigned char *cli_read_stdin(size_t limit, size_t *len) {
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap + 1);
  *len = 0;
  while (buf != NULL) {
    ssize_t got;
    if (n == cap) {
      unsigned char *bigger = realloc(buf, cap * 2 + 1);
      if (bigger == NULL) {
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    got = read(STDIN_FILENO, buf + n, cap - n);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      break;
    }
    if (got == 0) {
      buf[n] = '\0';
      *len = n;
      return buf;
    }
    n += (size_t)got;
    if (n > limit) {
      *len = limit + 1;
      break;
    }
  }
  free(buf);
  return NULL;
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

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cli_error("%s: %s (see 'sqlq %s --help')", cmd, msg, cmd);
  return EXIT_USAGE;
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

void cli_exec_child(pid_t parent, char **argv) {
  static const int handled[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
  sigset_t none;
  size_t i;
  for (i = 0; i < sizeof handled / sizeof handled[0]; i++) {
    signal(handled[i], SIG_DFL);
  }
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* The parent may have died between fork() and prctl(): then the death
  ** signal will never come, so check by hand. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    _exit(EXIT_SOFTWARE);
  }
  execvp(argv[0], argv);
  dprintf(STDERR_FILENO, "sqlq: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

int cli_table_init(cli_table *t, size_t ncols, const char *const *header) {
  t->ncols = ncols;
  t->ncells = 0;
  t->cap = 0;
  t->cells = NULL;
  return cli_table_add(t, header);
}

int cli_table_add(cli_table *t, const char *const *row) {
  size_t i;
  if (t->ncells + t->ncols > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : t->ncols * 16;
    char **cells = realloc(t->cells, cap * sizeof *cells);
    if (cells == NULL) {
      return -1;
    }
    t->cells = cells;
    t->cap = cap;
  }
  for (i = 0; i < t->ncols; i++) {
    char *copy = strdup(row[i]);
    if (copy == NULL) {
      while (i > 0) {
        free(t->cells[t->ncells + --i]);
      }
      return -1;
    }
    t->cells[t->ncells + i] = copy;
  }
  t->ncells += t->ncols;
  return 0;
}

void cli_table_print(const cli_table *t, FILE *out) {
  size_t col, cell;
  size_t *width = calloc(t->ncols, sizeof *width);
  if (width == NULL) {
    return;
  }
  for (cell = 0; cell < t->ncells; cell++) {
    size_t len = strlen(t->cells[cell]);
    col = cell % t->ncols;
    if (len > width[col]) {
      width[col] = len;
    }
  }
  for (cell = 0; cell < t->ncells; cell++) {
    col = cell % t->ncols;
    if (col + 1 == t->ncols) {
      fprintf(out, "%s\n", t->cells[cell]);
    } else {
      fprintf(out, "%-*s  ", (int)width[col], t->cells[cell]);
    }
  }
  free(width);
}

void cli_table_free(cli_table *t) {
  size_t i;
  for (i = 0; i < t->ncells; i++) {
    free(t->cells[i]);
  }
  free(t->cells);
  t->cells = NULL;
  t->ncells = t->cap = 0;
}
