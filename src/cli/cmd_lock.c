/*
** cmd_lock.c -- `sqlq lock`: run a command while holding a named lock, like
** flock(1).
**
** The lock and the command live and die together, and the lock is never
** free while the command runs.  `sqlq lock` (P) takes the lock and runs the
** command under a guardian G (cli_spawn_guarded), which shares P's hold of
** the lock, as a forked child does; the command holds no descriptor of the
** lock (the library opens them close-on-exec).  When the command ends, G
** exits the same way and P releases the lock and exits with the command's
** code.  When P dies (maybe by SIGKILL), G kills the command and every
** process it started, waits for them all, and only then exits, dropping
** the last hold of the lock.
**
** P forwards SIGTERM, SIGINT and SIGHUP sent to it to G, which forwards
** them to the command; signals from the terminal reach every process of the
** group and are not forwarded again.
*/
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
    "usage: sqlq [--url URL] lock [OPTIONS] NAME -- CMD [ARGS...]\n"
    "\n"
    "Take the lock NAME, run CMD while holding it and exit with CMD's exit\n"
    "code (128+N if a signal N killed it).  If sqlq lock dies, even by\n"
    "SIGKILL, CMD and every process it started are killed, then the lock is\n"
    "free again.  SIGTERM, SIGINT and SIGHUP sent to sqlq lock are passed on\n"
    "to CMD.\n"
    "\n"
    "  -w, --wait SECONDS     give up after this long (fractions allowed)\n"
    "  -n, --nonblock         give up at once if the lock is held\n"
    "  -E, --conflict-exit-code CODE\n"
    "                         exit code when the lock was not had (default 75)\n"
    "      --tempfail         exit with that code on any failure to take the\n"
    "                         lock (database unavailable, permissions, a lost\n"
    "                         connection...), not only when it is held: a mail\n"
    "                         filter then defers, never bounces\n"
    "  -h, --help             print this help\n"
    "\n"
    "Without -w or -n, waits for the lock for ever.\n";

/* The signals P passes on to the command. */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The guardian, for P's signal handler. */
static volatile pid_t guardian_pid;

/* The exit code a shell would give for wait status status. */
static int status_code(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : EXIT_SOFTWARE;
}

static void forward_signal(int sig, siginfo_t *info, void *ctx) {
  (void)ctx;
  /* The terminal signals the whole process group, the command included. */
  if (info->si_code != SI_KERNEL && guardian_pid > 0) {
    kill(guardian_pid, sig);
  }
}

static void forwarded_set(sigset_t *set) {
  size_t i;
  sigemptyset(set);
  for (i = 0; i < N_FORWARDED; i++) {
    sigaddset(set, forwarded[i]);
  }
}

/* Put back the dispositions of the forwarded signals kept in saved.  Until
** the lock is had sqlq lock holds nothing, so those signals end it as they
** would have ended it at its start; a client library may have caught them
** meanwhile (Firebird's catches SIGINT and SIGTERM to shut its connections
** down, which does not always end a wait for a lock). */
static void restore_signals(const struct sigaction *saved) {
  size_t i;
  for (i = 0; i < N_FORWARDED; i++) {
    sigaction(forwarded[i], &saved[i], NULL);
  }
}

static pid_t waitpid_retry(pid_t pid, int *status) {
  pid_t got;
  while ((got = waitpid(pid, status, 0)) < 0 && errno == EINTR) {
  }
  return got;
}

/* P: with the lock held, run cmd through a guardian and return its exit
** code. */
static int run_locked(char **cmd) {
  struct sigaction sa;
  sigset_t set, old;
  pid_t g;
  int status;
  size_t i;

  /* Blocked until G's pid is known to forward_signal. */
  forwarded_set(&set);
  sigprocmask(SIG_BLOCK, &set, &old);
  g = cli_spawn_guarded(cmd, -1);
  if (g < 0) {
    cli_error("lock: cannot run %s: %s", cmd[0], strerror(errno));
    sigprocmask(SIG_SETMASK, &old, NULL);
    return EXIT_SOFTWARE;
  }
  guardian_pid = g;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < N_FORWARDED; i++) {
    sigaction(forwarded[i], &sa, NULL);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  waitpid_retry(g, &status);
  return status_code(status);
}

/* What the flags ask for. */
typedef struct lock_opts {
  double timeout;    /* -w; -1: for ever, 0: -n */
  int conflict_code; /* -E */
  int tempfail;      /* --tempfail: every failure to take the lock is a conflict */
  int help;
} lock_opts;

/* Parse the flags into *o.  Returns 0 (with o->help set for --help), or
** the exit code. */
static int parse(int argc, char **argv, lock_opts *o) {
  enum { OPT_TEMPFAIL = 256 };
  static const struct option options[] = {
      {"wait", required_argument, NULL, 'w'},
      {"timeout", required_argument, NULL, 'w'},
      {"nonblock", no_argument, NULL, 'n'},
      {"conflict-exit-code", required_argument, NULL, 'E'},
      {"tempfail", no_argument, NULL, OPT_TEMPFAIL},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  long long code;
  int c;
  while ((c = cli_getopt("lock", argc, argv, ":w:nE:h", options)) != -1) {
    switch (c) {
    case 'w':
      if (cli_parse_seconds(optarg, &o->timeout) != 0) {
        return cli_usage_error("lock", "wait '%s' is not a number of seconds", optarg);
      }
      break;
    case 'n':
      o->timeout = 0;
      break;
    case 'E':
      if (cli_parse_int(optarg, 0, 255, &code) != 0) {
        return cli_usage_error("lock", "exit code '%s' is not a whole number in 0..255",
                               optarg);
      }
      o->conflict_code = (int)code;
      break;
    case OPT_TEMPFAIL:
      o->tempfail = 1;
      break;
    case 'h':
      o->help = 1;
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  return 0;
}

int cmd_lock(const cli_global *g, int argc, char **argv) {
  lock_opts o = {.timeout = -1, .conflict_code = EXIT_TEMPFAIL};
  struct sigaction inherited[N_FORWARDED];
  size_t i;
  int code, rc;
  const char *name;
  char **cmd;
  sqlq_db *db;
  sqlq_lock *lock = NULL;

  if ((code = parse(argc, argv, &o)) != 0 || o.help) {
    if (o.help) {
      fputs(usage, stdout);
    }
    return code;
  }
  if (optind >= argc) {
    return cli_usage_error("lock", "expected NAME -- CMD [ARGS...]");
  }
  name = argv[optind++];
  /* getopt hides the first "--"; a second one after NAME is dropped. */
  if (optind < argc && strcmp(argv[optind], "--") == 0) {
    optind++;
  }
  if (optind >= argc) {
    return cli_usage_error("lock", "expected a command after NAME");
  }
  cmd = argv + optind;
  if (name[0] == '\0') {
    return cli_usage_error("lock", "the lock name is empty");
  }
  for (i = 0; i < N_FORWARDED; i++) {
    sigaction(forwarded[i], NULL, &inherited[i]);
  }
  /* From here on every failure is one to take the lock. */
  db = cli_open(g, &code);
  restore_signals(inherited);
  if (db == NULL) {
    return o.tempfail ? o.conflict_code : code;
  }
  rc = sqlq_lock_acquire(db, name, strlen(name), o.timeout, &lock);
  if (rc == SQLQ_BUSY) {
    cli_error("lock: the lock is held elsewhere");
    code = o.conflict_code;
  } else if (rc != SQLQ_OK) {
    code = cli_fail(db, rc, "lock");
    if (o.tempfail) {
      code = o.conflict_code;
    }
  } else {
    code = run_locked(cmd);
    sqlq_unlock(lock);
  }
  sqlq_close(db);
  return code;
}
