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
**
** While the command runs, P checks the lock every --check-interval seconds
** (sqlq_lock_check, bounded by --check-timeout): a session that ended or
** stopped answering may have let another holder in.  When the lock is
** lost, P says so in one line, sends SIGTERM to the command through G,
** after --kill-after seconds has G kill the command's whole tree with
** SIGKILL (cli_kill_guarded), and exits 75 whatever the command's code.
** The checks run on a thread of their own (the watcher) while P waits for
** G in waitpid(), never blocking SIGCHLD: a client library's threads
** (Firebird's embedded engine) would take it, and the engine then hung in
** its detach.
*/
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "guardian.h"

static const char usage[] =
  "usage: sqlq [--url URL] lock [OPTIONS] NAME -- CMD [ARGS...]\n"
  "\n"
  "Take the lock NAME, run CMD while holding it and exit with CMD's exit\n"
  "code (128+N if a signal N killed it).  If sqlq lock dies, even by\n"
  "SIGKILL, CMD and every process it started are killed, then the lock is\n"
  "free again.  SIGTERM, SIGINT and SIGHUP sent to sqlq lock are passed on\n"
  "to CMD.  CMD's environment has no SQLQ_URL, which may hold a password,\n"
  "unless --pass-url is given.  Where the lock is a lease (PostgreSQL\n"
  "through a transaction pooler), CMD gets SQLQ_LOCK_FENCE, the lock's\n"
  "fencing token: higher for each later holder.\n"
  "\n"
  "  -w, --wait SECONDS     give up after this long (fractions allowed)\n"
  "  -n, --nonblock         give up at once if the lock is held\n"
  "  -E, --conflict-exit-code CODE\n"
  "                         exit code when the lock was not had (default 75)\n"
  "      --tempfail         exit with that code on any failure to take the\n"
  "                         lock (database unavailable, permissions, a lost\n"
  "                         connection...), not only when it is held: a mail\n"
  "                         filter then defers, never bounces\n"
  "      --pass-url         set SQLQ_URL in CMD's environment to the URL of\n"
  "                         the database (password included)\n"
  "      --check-interval SECONDS\n"
  "                         check the lock this often while CMD runs\n"
  "                         (default 2)\n"
  "      --check-timeout SECONDS\n"
  "                         a check that gets no answer in this time counts\n"
  "                         as a lost lock (default 5)\n"
  "      --kill-after SECONDS\n"
  "                         after a lost lock, SIGKILL CMD and all it started\n"
  "                         this long after the SIGTERM (default 10)\n"
  "                         A lock that is a lease (through a transaction\n"
  "                         pooler) needs interval + 2 x timeout + kill-after\n"
  "                         below the lease; the defaults shrink to fit it\n"
  "  -h, --help             print this help\n"
  "\n"
  "Without -w or -n, waits for the lock for ever.  When the lock is lost\n"
  "while CMD runs (its session ended or stopped answering), CMD gets\n"
  "SIGTERM, then SIGKILL, and sqlq lock exits 75.\n";

/* The signals P passes on to the command. */
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The guardian, for P's signal handler. */
static volatile pid_t guardian_pid;

/* What the flags ask for. */
typedef struct lock_opts {
  double timeout;        /* -w; -1: for ever, 0: -n */
  int conflict_code;     /* -E */
  int tempfail;          /* --tempfail: every failure to take the lock is a conflict */
  int pass_url;          /* --pass-url: CMD gets SQLQ_URL */
  double check_interval; /* --check-interval; < 0: not given */
  double check_timeout;  /* --check-timeout; < 0: not given */
  double kill_after;     /* --kill-after; < 0: not given */
  int help;
} lock_opts;

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
  while ((got = waitpid(pid, status, 0)) < 0 && errno == EINTR) {}
  return got;
}

/* The watcher: a thread that checks the lock while P waits for G.  P
** waits in a plain blocking waitpid(), as it did before locks were checked:
** Firebird's embedded engine hung in its detach when P waited otherwise
** (poll() on a pidfd, interrupted by a forwarded signal).  The watcher
** runs with every signal blocked, so signals reach P's main thread. */
typedef struct watcher {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled when done is set */
  int done;          /* set by P once G is reaped */
  int lost;          /* set by the watcher when the lock was lost */
  pid_t g;           /* the guardian */
  sqlq_db *db;       /* the handle and lock checked; not used by P meanwhile */
  sqlq_lock *lock;
  const char *name;
  const lock_opts *o;
} watcher;

/* Wait on w->cv, with w->mu held, until w->done or seconds have passed:
** returns w->done. */
static int wait_done(watcher *w, double seconds) {
  struct timespec until = cli_deadline(seconds);
  while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT) {}
  return w->done;
}

/* The watcher's thread: every o->check_interval seconds until P is done,
** check the lock; once it is lost, say so in one line, send SIGTERM to the
** command through G and, when G has not ended o->kill_after seconds later,
** have G kill the command's whole tree with SIGKILL (cli_kill_guarded). */
static void *watch_lock(void *arg) {
  watcher *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!wait_done(w, w->o->check_interval)) {
    int rc;
    pthread_mutex_unlock(&w->mu);
    rc = sqlq_lock_check(w->lock, w->o->check_timeout);
    pthread_mutex_lock(&w->mu);
    if (rc != SQLQ_OK && !w->done) {
      w->lost = 1;
      cli_error("lock: the lock '%.100s' was lost: %s; stopping the command", w->name,
                sqlq_errmsg(w->db));
      kill(w->g, SIGTERM);
      if (!wait_done(w, w->o->kill_after)) {
        cli_kill_guarded(w->g);
      }
      break;
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Start w's thread with every signal blocked.  Returns 0, or an errno. */
static int watcher_start(watcher *w, pthread_t *thread) {
  pthread_condattr_t attr;
  sigset_t all, old;
  int err;
  pthread_mutex_init(&w->mu, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &attr);
  pthread_condattr_destroy(&attr);
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  err = pthread_create(thread, NULL, watch_lock, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

/* Tell w's thread that G was reaped, and wait for it to end (at most one
** check, bounded by --check-timeout). */
static void watcher_stop(watcher *w, pthread_t thread) {
  pthread_mutex_lock(&w->mu);
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

/* P: with lock (on db, called name) held, run cmd through a guardian, with
** the environment env, and return its exit code, or 75 with *lost set when
** the lock was lost meanwhile. */
static int run_locked(char **cmd, char *const *env, sqlq_db *db, sqlq_lock *lock, const char *name,
                      const lock_opts *o, int *lost) {
  struct sigaction sa;
  sigset_t set, old;
  watcher w = {.done = 0};
  pthread_t thread;
  pid_t g;
  int status, err;
  size_t i;

  /* Blocked until G's pid is known to forward_signal. */
  forwarded_set(&set);
  sigprocmask(SIG_BLOCK, &set, &old);
  g = cli_spawn_guarded(cmd, -1, env);
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
  w.g = g;
  w.db = db;
  w.lock = lock;
  w.name = name;
  w.o = o;
  err = watcher_start(&w, &thread);
  waitpid_retry(g, &status);
  if (err == 0) {
    watcher_stop(&w, thread);
  } else {
    cli_error("lock: cannot watch the lock: %s", strerror(err));
  }
  if (w.lost) {
    *lost = 1;
    return EXIT_TEMPFAIL;
  }
  return status_code(status);
}

/* Long options without a letter. */
enum { OPT_TEMPFAIL = 256, OPT_PASS_URL, OPT_CHECK_INTERVAL, OPT_CHECK_TIMEOUT, OPT_KILL_AFTER };

/* Parse the value s of --check-interval or --check-timeout (> 0), or of
** --kill-after (>= 0), told by c, into *o.  Returns 0, or prints one line
** and returns EXIT_USAGE. */
static int parse_duration(int c, const char *s, lock_opts *o) {
  const char *flag = c == OPT_CHECK_INTERVAL  ? "--check-interval"
                     : c == OPT_CHECK_TIMEOUT ? "--check-timeout"
                                              : "--kill-after";
  double *out = c == OPT_CHECK_INTERVAL  ? &o->check_interval
                : c == OPT_CHECK_TIMEOUT ? &o->check_timeout
                                         : &o->kill_after;
  double v;
  if (cli_parse_seconds(s, &v) != 0 || (v == 0 && c != OPT_KILL_AFTER)) {
    return cli_usage_error("lock", "%s '%s' is not a number of seconds%s", flag, s,
                           c == OPT_KILL_AFTER ? "" : " above 0");
  }
  *out = v;
  return 0;
}

/* Whether o's checks stop the command before a lease of lease seconds
** runs out, when a check finds it lost: from the server's time of the
** last renewal, its answer took up to a check's timeout, the next check
** comes an interval later and fails a timeout after that, and the
** command is killed kill-after seconds later. */
static int fits_lease(const lock_opts *o, double lease) {
  return o->check_interval + 2 * o->check_timeout + o->kill_after < lease;
}

/* Give the checks the flags left out their defaults (2, 5 and 10 s), or
** for a lease (lease > 0) a share of it where the defaults do not fit it:
** an eighth for the interval and for the timeout, a quarter for
** kill-after.  Returns 0, or prints one line and returns EXIT_USAGE when
** the flags given do not fit the lease. */
static int fit_checks(lock_opts *o, double lease) {
  lock_opts d = *o;
  d.check_interval = o->check_interval >= 0 ? o->check_interval : 2;
  d.check_timeout = o->check_timeout >= 0 ? o->check_timeout : 5;
  d.kill_after = o->kill_after >= 0 ? o->kill_after : 10;
  if (lease > 0 && !fits_lease(&d, lease)) {
    d.check_interval = o->check_interval >= 0 ? o->check_interval : lease / 8;
    d.check_timeout = o->check_timeout >= 0 ? o->check_timeout : lease / 8;
    d.kill_after = o->kill_after >= 0 ? o->kill_after : lease / 4;
    if (!fits_lease(&d, lease)) {
      return cli_usage_error("lock",
                             "the lock is a lease of %g s: --check-interval + 2 x"
                             " --check-timeout + --kill-after must be less (%g s)",
                             lease, d.check_interval + 2 * d.check_timeout + d.kill_after);
    }
  }
  *o = d;
  return 0;
}

/* Parse the flags into *o.  Returns 0 (with o->help set for --help), or
** the exit code. */
static int parse(int argc, char **argv, lock_opts *o) {
  static const struct option options[] = {
    {"wait", required_argument, NULL, 'w'},
    {"timeout", required_argument, NULL, 'w'},
    {"nonblock", no_argument, NULL, 'n'},
    {"conflict-exit-code", required_argument, NULL, 'E'},
    {"tempfail", no_argument, NULL, OPT_TEMPFAIL},
    {"pass-url", no_argument, NULL, OPT_PASS_URL},
    {"check-interval", required_argument, NULL, OPT_CHECK_INTERVAL},
    {"check-timeout", required_argument, NULL, OPT_CHECK_TIMEOUT},
    {"kill-after", required_argument, NULL, OPT_KILL_AFTER},
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
        return cli_usage_error("lock", "exit code '%s' is not a whole number in 0..255", optarg);
      }
      o->conflict_code = (int)code;
      break;
    case OPT_TEMPFAIL:
      o->tempfail = 1;
      break;
    case OPT_PASS_URL:
      o->pass_url = 1;
      break;
    case OPT_CHECK_INTERVAL:
    case OPT_CHECK_TIMEOUT:
    case OPT_KILL_AFTER:
      if (parse_duration(c, optarg, o) != 0) {
        return EXIT_USAGE;
      }
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
  lock_opts o = {.timeout = -1,
                 .conflict_code = EXIT_TEMPFAIL,
                 .check_interval = -1,
                 .check_timeout = -1,
                 .kill_after = -1};
  struct sigaction inherited[N_FORWARDED];
  size_t i;
  int code, rc, lost = 0;
  const char *name;
  char **cmd, **env;
  sqlq_db *db;
  sqlq_lock *lock = NULL;
  static const char *const fence_names[] = {"SQLQ_LOCK_FENCE", NULL};
  char **fence_slot = NULL, fence[48];

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
  env = cli_command_env(g, o.pass_url, fence_names, &fence_slot);
  if (env == NULL) {
    cli_error("lock: out of memory");
    return o.tempfail ? o.conflict_code : EXIT_SOFTWARE;
  }
  db = cli_open(g, &code);
  restore_signals(inherited);
  if (db == NULL) {
    free(env);
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
  } else if ((code = fit_checks(&o, sqlq_lock_lease(lock))) != 0) {
    sqlq_unlock(lock);
  } else {
    if (sqlq_lock_fence(lock) > 0) {
      snprintf(fence, sizeof fence, "SQLQ_LOCK_FENCE=%" PRId64, sqlq_lock_fence(lock));
      fence_slot[0] = fence;
    }
    code = run_locked(cmd, env, db, lock, name, &o, &lost);
    if (lost) {
      /* Closing may wait for a server that no longer answers (a Firebird
      ** detach does): the kernel closes the connections at exit. */
      _exit(code);
    }
    sqlq_unlock(lock);
  }
  sqlq_close(db);
  free(env);
  return code;
}
