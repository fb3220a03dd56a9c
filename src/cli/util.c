/*
** util.c -- helpers shared by the commands of the sqlq tool: error lines,
** the mapping of library statuses to exit codes, opening the database,
** parsing numbers and flags, reading stdin, running commands under a
** guardian and printing tables.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
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
  case SQLQ_LOCK_LOST:
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

int cli_done(sqlq_db *db, int rc, const char *what) {
  int code = rc == SQLQ_OK ? 0 : cli_fail(db, rc, what);
  sqlq_close(db);
  return code;
}

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

/* ---------------------------------------------------------------------
** Guarded commands: see cli_spawn_guarded() in cli.h for the design.
*/

/* The signal with which a caller tells its guardian to kill the command's
** whole tree at once (cli_kill_guarded). */
#define GUARD_KILL SIGUSR1

/* The signals a guardian takes from a signalfd instead of by default:
** SIGCHLD, GUARD_KILL, and those it passes on when they come from its
** caller. */
static const int guard_signals[] = {SIGCHLD, GUARD_KILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT};

/* The lifeline: the caller keeps the write end (close-on-exec) open for as
** long as it lives and never writes to it; every guardian polls the read
** end, where end-of-file means the caller is gone. */
static int lifeline[2] = {-1, -1};

static void guard_set(sigset_t *set) {
  size_t i;
  sigemptyset(set);
  for (i = 0; i < sizeof guard_signals / sizeof guard_signals[0]; i++) {
    sigaddset(set, guard_signals[i]);
  }
}

/* C: in a child just forked by the guardian parent (whose signal handlers
** are already the defaults), unblock every signal, arrange to be killed
** with SIGKILL when the parent dies (and die at once if it already has),
** put stdin_fd (unless -1) on stdin and execvpe(argv) with envp (NULL: this
** process's environment).  When the program cannot be run, prints one line
** and exits 127 (not found) or 126. */
static void exec_child(pid_t parent, int stdin_fd, char **argv, char *const *envp)
  __attribute__((noreturn));
static void exec_child(pid_t parent, int stdin_fd, char **argv, char *const *envp) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* The parent may have died between fork() and prctl(): then the death
  ** signal will never come, so check by hand. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    _exit(EXIT_SOFTWARE);
  }
  /* fd 0 can only be stdin_fd if stdin was closed: then keep it open across
  ** exec instead of duplicating it. */
  if (stdin_fd >= 0 && (stdin_fd == STDIN_FILENO ? fcntl(stdin_fd, F_SETFD, 0) != 0
                                                 : dup2(stdin_fd, STDIN_FILENO) < 0)) {
    _exit(EXIT_SOFTWARE);
  }
  execvpe(argv[0], argv, envp != NULL ? envp : environ);
  dprintf(STDERR_FILENO, "sqlq: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

/* SIGKILL every child of this process, found in /proc (the pid of a child
** stays valid until this process reaps it). */
static void kill_children(void) {
  pid_t self = getpid();
  struct dirent *e;
  DIR *dir = opendir("/proc");
  if (dir == NULL) {
    return;
  }
  while ((e = readdir(dir)) != NULL) {
    char path[300], buf[256], *paren;
    ssize_t n;
    int fd, ppid;
    if (e->d_name[0] < '1' || e->d_name[0] > '9') {
      continue;
    }
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
      continue;
    }
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
      continue;
    }
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID ...", where COMM may hold anything. */
    paren = strrchr(buf, ')');
    if (paren != NULL && sscanf(paren + 1, " %*c %d", &ppid) == 1 && ppid == self) {
      kill((pid_t)atoi(e->d_name), SIGKILL);
    }
  }
  closedir(dir);
}

/* Kill the guardian's whole tree: it is a subreaper, so the children of
** each process that dies become its children, to be killed in the next
** round.  Returns once it has no child left. */
static void kill_tree(pid_t c) {
  kill(c, SIGKILL);
  for (;;) {
    pid_t got;
    kill_children();
    while ((got = waitpid(-1, NULL, 0)) < 0 && errno == EINTR) {}
    if (got < 0) {
      return;
    }
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
  }
}

/* Exit the way a process with wait status status did: with its exit code,
** or killed by the same signal (without a core dump). */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    sigset_t one;
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0);
    signal(sig, SIG_DFL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SOFTWARE);
}

/* G: start argv as C (with stdin_fd and envp as for exec_child) and watch
** it, the lifeline and the signals.  Never returns.  Entered with
** guard_signals blocked. */
static void guardian(pid_t caller, char **argv, int stdin_fd, char *const *envp)
  __attribute__((noreturn));
static void guardian(pid_t caller, char **argv, int stdin_fd, char *const *envp) {
  pid_t self = getpid(), c;
  struct pollfd fds[2];
  sigset_t set;
  size_t i;

  close(lifeline[1]);
  /* Drop the caller's handlers; a signal the caller ignores stays ignored
  ** for the command (a blocked signal still reaches the signalfd).  SIGCHLD
  ** ignored would reap children unseen, GUARD_KILL ignored would be lost:
  ** they get their default. */
  for (i = 0; i < sizeof guard_signals / sizeof guard_signals[0]; i++) {
    struct sigaction old;
    int sig = guard_signals[i];
    if (sig == SIGCHLD || sig == GUARD_KILL || sigaction(sig, NULL, &old) != 0 ||
        (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_IGN) {
      signal(sig, SIG_DFL);
    }
  }
  guard_set(&set);
  fds[0].fd = lifeline[0];
  fds[1].fd = signalfd(-1, &set, SFD_CLOEXEC);
  if (fds[1].fd < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || (c = fork()) < 0) {
    dprintf(STDERR_FILENO, "sqlq: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(EXIT_SOFTWARE);
  }
  if (c == 0) {
    exec_child(self, stdin_fd, argv, envp);
  }
  for (;;) {
    struct signalfd_siginfo si;
    fds[0].events = fds[1].events = POLLIN;
    fds[0].revents = fds[1].revents = 0;
    if (poll(fds, 2, -1) < 0) {
      continue;
    }
    if (fds[0].revents) {
      /* Nobody writes to the lifeline: the caller is gone. */
      kill_tree(c);
      _exit(EXIT_SOFTWARE);
    }
    if (read(fds[1].fd, &si, sizeof si) != (ssize_t)sizeof si) {
      continue;
    }
    if (si.ssi_signo == SIGCHLD) {
      pid_t got;
      int status;
      /* C, or an orphan of its tree handed to this subreaper. */
      while ((got = waitpid(-1, &status, WNOHANG)) > 0) {
        if (got == c) {
          exit_like(status);
        }
      }
    } else if ((pid_t)si.ssi_pid == caller && si.ssi_signo == GUARD_KILL) {
      kill_tree(c);
      exit_like(SIGKILL); /* a wait status: killed by SIGKILL */
    } else if ((pid_t)si.ssi_pid == caller) {
      kill(c, (int)si.ssi_signo);
    }
  }
}

pid_t cli_spawn_guarded(char **argv, int stdin_fd, char *const *envp) {
  pid_t caller = getpid(), g;
  sigset_t set, old;
  int saved;
  if (lifeline[1] < 0 && pipe2(lifeline, O_CLOEXEC) != 0) {
    return -1;
  }
  /* Blocked across fork(): G takes them from its signalfd from birth. */
  guard_set(&set);
  sigprocmask(SIG_BLOCK, &set, &old);
  g = fork();
  if (g == 0) {
    guardian(caller, argv, stdin_fd, envp);
  }
  saved = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return g;
}

int cli_kill_guarded(pid_t guardian) {
  return kill(guardian, GUARD_KILL);
}

/* Whether the environment entry "NAME=value" is the variable name. */
static int env_is(const char *entry, const char *name) {
  size_t len = strlen(name);
  return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* Whether entry is one of the NULL-terminated names (names may be NULL). */
static int env_is_any(const char *entry, const char *const *names) {
  for (; names != NULL && *names != NULL; names++) {
    if (env_is(entry, *names)) {
      return 1;
    }
  }
  return 0;
}

char **cli_command_env(const cli_global *g, int pass_url, const char *const *names, char ***slots) {
  static const char url_name[] = "SQLQ_URL=";
  size_t inherited = 0, n_names = 0, url_size = pass_url ? sizeof url_name + strlen(g->url) : 0;
  size_t i, n = 0;
  char **env;
  while (environ[inherited] != NULL) {
    inherited++;
  }
  while (names != NULL && names[n_names] != NULL) {
    n_names++;
  }
  /* The array, then the SQLQ_URL entry, in one block. */
  env = malloc((inherited + 2 + n_names) * sizeof *env + url_size);
  if (env == NULL) {
    return NULL;
  }
  for (i = 0; i < inherited; i++) {
    if (!env_is(environ[i], "SQLQ_URL") && !env_is_any(environ[i], names)) {
      env[n++] = environ[i];
    }
  }
  if (pass_url) {
    char *url = (char *)(env + inherited + 2 + n_names);
    snprintf(url, url_size, "%s%s", url_name, g->url);
    env[n++] = url;
  }
  if (slots != NULL) {
    *slots = env + n;
  }
  memset(env + n, 0, (n_names + 1) * sizeof *env);
  return env;
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

static int table_print(const cli_table *t, FILE *out) {
  size_t col, cell;
  size_t *width = calloc(t->ncols, sizeof *width);
  if (width == NULL) {
    return -1;
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
  return 0;
}

static void table_free(cli_table *t) {
  size_t i;
  for (i = 0; i < t->ncells; i++) {
    free(t->cells[i]);
  }
  free(t->cells);
  t->cells = NULL;
  t->ncells = t->cap = 0;
}

int cli_table_finish(cli_table *t, int ok, const char *cmd) {
  ok = ok && table_print(t, stdout) == 0;
  table_free(t);
  if (!ok) {
    cli_error("%s: out of memory", cmd);
    return EXIT_SOFTWARE;
  }
  return 0;
}
