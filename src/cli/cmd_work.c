/*
** cmd_work.c -- `sqlq work`: run a command once per job of a queue.
**
** One thread, one connection.  Each turn of the loop reaps the commands
** that ended (ack, release or fail their jobs), extends the leases that
** are due, claims as many jobs as there are free slots and starts a command
** for each.  Then it blocks: in sqlq_wait() while a slot is free, else in
** poll() on a self-pipe, never past the next lease extension.  SIGCHLD,
** SIGTERM and SIGINT end either block at once: their handler writes to the
** self-pipe and calls sqlq_interrupt().
**
** A command gets the payload on stdin (a memfd, so that no payload size can
** block) and runs under a guardian (cli_spawn_guarded), which the worker
** reaps instead of the command: the command and every process it started
** die with the worker, even when the worker is killed with SIGKILL.
*/
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
    "usage: sqlq [--url URL] work [OPTIONS] QUEUE -- CMD [ARGS...]\n"
    "\n"
    "Run CMD once per job of QUEUE, with the payload on stdin and SQLQ_JOB_ID,\n"
    "SQLQ_QUEUE and SQLQ_ATTEMPT (counted from 1) in its environment.\n"
    "CMD exits 0: the job is done.  CMD exits 75: the job is given back, to run\n"
    "again after the backoff base, without counting the attempt.  Anything else\n"
    "(or a signal): the attempt failed; the job runs again after an exponential\n"
    "backoff, or is dead after its last attempt.  SIGTERM or SIGINT: claim\n"
    "nothing more, wait for the running commands, exit 0.  A database that\n"
    "goes away once the worker has connected is waited for, not fatal.\n"
    "\n"
    "  -c, --concurrency N    commands run at once (default 1)\n"
    "      --lease SECONDS    lease of a claimed job, extended while CMD runs\n"
    "                         (default 30)\n"
    "      --backoff SECONDS  base of the retry backoff (default 1; 0 retries\n"
    "                         at once)\n"
    "      --drain            exit 0 once the queue has no ready, scheduled or\n"
    "                         running job\n"
    "  -h, --help             print this help\n";

/* The exit code with which a command asks for its job back. */
#define EXIT_RELEASE 75

/* The most concurrent commands one worker runs. */
#define MAX_CONCURRENCY 1024

/* How often a paused or busy queue is looked at again, in seconds. */
#define RECHECK_INTERVAL 1.0

/* The first and the longest pause after sqlq_wait() said a job was due
** but the claim found none (due jobs whose group is busy), in seconds. */
#define IDLE_FIRST 0.05
#define IDLE_MAX 1.0

/* One running command and the job it works on. */
typedef struct slot {
  pid_t pid;          /* the command's guardian; 0 when the slot is free */
  int64_t id;
  int64_t token;
  int lost;           /* the lease was lost: no more touches */
  double next_touch;  /* monotonic seconds */
} slot;

typedef struct worker {
  sqlq_db *db;
  const char *queue;
  char **cmd;
  int concurrency;
  double lease;
  double backoff;
  int drain;
  slot *slots;
  int running;
  int code;          /* non-zero: stop on an error and exit with this */
  int expect_job;    /* the last sqlq_wait() said a job was due */
  int away;          /* the database is unreachable (said once) */
  double idle;       /* current pause after a claim found nothing */
} worker;

/* What one claim did. */
enum claim_outcome { CLAIM_GOT, CLAIM_EMPTY, CLAIM_RECHECK, CLAIM_FULL, CLAIM_ERROR };

/* State the signal handler reaches. */
static volatile sig_atomic_t stop_requested;
static sqlq_db *signal_db;
static int wake_pipe[2] = {-1, -1};

static void on_signal(int sig) {
  int saved = errno;
  ssize_t ignored;
  if (sig != SIGCHLD) {
    stop_requested = 1;
  }
  sqlq_interrupt(signal_db);
  ignored = write(wake_pipe[1], "", 1);
  (void)ignored;
  errno = saved;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Make the self-pipe and route SIGCHLD, SIGTERM and SIGINT to on_signal. */
static int install_signals(sqlq_db *db) {
  static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT};
  struct sigaction sa;
  size_t i;
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return -1;
  }
  signal_db = db;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    if (sigaction(sigs[i], &sa, NULL) != 0) {
      return -1;
    }
  }
  return 0;
}

static void drain_wake_pipe(void) {
  char buf[64];
  while (read(wake_pipe[0], buf, sizeof buf) > 0) {
  }
}

/* Block until a signal arrives or timeout seconds pass (negative: no
** limit). */
static void sleep_for_event(double timeout) {
  struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
  int ms = timeout < 0 ? -1 : (int)ceil(fmin(timeout, 86400.0) * 1000.0);
  poll(&p, 1, ms);
}

/* Stop claiming and exit with code once the running commands end. */
static void stop_with(worker *w, int code) {
  if (w->code == 0) {
    w->code = code;
  }
}

static int stopping(const worker *w) {
  return stop_requested || w->code != 0;
}

/* A memfd, at offset 0, holding the len bytes of payload; -1 on error. */
static int payload_fd(const unsigned char *payload, size_t len) {
  int fd = memfd_create("sqlq-payload", MFD_CLOEXEC);
  size_t done = 0;
  if (fd < 0) {
    return -1;
  }
  while (done < len) {
    ssize_t n = write(fd, payload + done, len - done);
    if (n < 0 && errno != EINTR) {
      close(fd);
      return -1;
    }
    done += n > 0 ? (size_t)n : 0;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Put the variables that describe job into this process's environment, for
** the command forked next to inherit. */
static int export_job(const sqlq_job *job) {
  char id[24], attempt[16];
  snprintf(id, sizeof id, "%" PRId64, job->id);
  snprintf(attempt, sizeof attempt, "%d", job->attempt);
  return setenv("SQLQ_JOB_ID", id, 1) | setenv("SQLQ_QUEUE", job->queue, 1) |
         setenv("SQLQ_ATTEMPT", attempt, 1);
}

/* Start the command for job in the free slot s.  Returns 0, or -1 (errno
** set) when it could not be started. */
static int spawn(worker *w, const sqlq_job *job, slot *s) {
  pid_t pid;
  int fd, saved;
  if (export_job(job) != 0 || (fd = payload_fd(job->payload, job->payload_len)) < 0) {
    return -1;
  }
  pid = cli_spawn_guarded(w->cmd, fd);
  saved = errno;
  close(fd);
  if (pid < 0) {
    errno = saved;
    return -1;
  }
  s->pid = pid;
  s->id = job->id;
  s->token = job->token;
  s->lost = 0;
  s->next_touch = now() + w->lease / 3;
  w->running++;
  return 0;
}

static slot *free_slot(worker *w) {
  int i;
  for (i = 0; i < w->concurrency; i++) {
    if (w->slots[i].pid == 0) {
      return &w->slots[i];
    }
  }
  return NULL;
}

/* Whether rc says the database is unreachable for now (a server that
** restarts): the worker says so once and carries on; the library
** reconnects at the next call. */
static int database_away(worker *w, int rc, const char *action) {
  if (rc != SQLQ_UNAVAILABLE) {
    return 0;
  }
  if (!w->away) {
    cli_error("work: %s: %s; retrying", action, sqlq_errmsg(w->db));
    w->away = 1;
  }
  return 1;
}

/* The longest pause between two tries of a call that finishes a job while
** the database is away, in seconds. */
#define AWAY_PAUSE_MAX 1.0

/* A call that finishes the job of s; why is the failure's reason (for
** call_fail only). */
typedef int (*finish_call_fn)(worker *w, const slot *s, const char *why);

/* Call finish_call(w, s, why) until the database answers, for at most one
** lease: after that the job's lease has run out, and the answer can only
** be SQLQ_STALE, which another try after reconnecting gives. */
static int finish_retrying(worker *w, const slot *s, const char *action,
                           finish_call_fn finish_call, const char *why) {
  double give_up = now() + w->lease, pause = 0.05;
  int rc;
  while (database_away(w, rc = finish_call(w, s, why), action) && now() < give_up) {
    sleep_for_event(pause);
    pause = fmin(pause * 2, AWAY_PAUSE_MAX);
  }
  return rc;
}

static int call_ack(worker *w, const slot *s, const char *why) {
  (void)why;
  return sqlq_ack(w->db, s->id, s->token);
}

static int call_release(worker *w, const slot *s, const char *why) {
  (void)why;
  return sqlq_release(w->db, s->id, s->token, w->backoff);
}

static int call_fail(worker *w, const slot *s, const char *why) {
  sqlq_fail_options fo = {.backoff = w->backoff, .dead = 0};
  return sqlq_fail(w->db, s->id, s->token, why, &fo);
}

/* Report the outcome of finishing the job of s (action names the call). */
static void report_finish(worker *w, const slot *s, int rc, const char *action) {
  if (rc == SQLQ_STALE) {
    cli_error("work: job %" PRId64 ": lease lost, %s refused", s->id, action);
  } else if (rc == SQLQ_UNAVAILABLE) {
    /* The lease ran out meanwhile: the job runs again once it is reaped. */
    cli_error("work: job %" PRId64 ": %s failed: the database was away for a whole lease,"
              " so the job may run again", s->id, action);
  } else if (rc != SQLQ_OK) {
    cli_fail(w->db, rc, action);
  }
}

/* Record the end of the command of s, whose wait status is status. */
static void finish(worker *w, const slot *s, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    report_finish(w, s, finish_retrying(w, s, "ack", call_ack, NULL), "ack");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_RELEASE) {
    report_finish(w, s, finish_retrying(w, s, "release", call_release, NULL), "release");
  } else {
    char why[48];
    if (WIFEXITED(status)) {
      snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
    } else {
      snprintf(why, sizeof why, "killed by signal %d", WTERMSIG(status));
    }
    cli_error("work: job %" PRId64 ": %s", s->id, why);
    report_finish(w, s, finish_retrying(w, s, "fail", call_fail, why), "fail");
  }
}

/* Reap every command that ended and finish its job. */
static void reap(worker *w) {
  pid_t pid;
  int status, i;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (i = 0; i < w->concurrency; i++) {
      slot *s = &w->slots[i];
      if (s->pid == pid) {
        finish(w, s, status);
        s->pid = 0;
        w->running--;
      }
    }
  }
}

/* Extend the leases whose time has come. */
static void touch_due(worker *w) {
  double t = now();
  int i;
  for (i = 0; i < w->concurrency; i++) {
    slot *s = &w->slots[i];
    int rc;
    if (s->pid == 0 || s->lost || s->next_touch > t) {
      continue;
    }
    rc = sqlq_touch(w->db, s->id, s->token, w->lease, NULL);
    if (rc == SQLQ_STALE) {
      cli_error("work: job %" PRId64 ": lease lost, its result will be refused", s->id);
      s->lost = 1;
    } else if (rc != SQLQ_OK && !database_away(w, rc, "touch")) {
      cli_fail(w->db, rc, "touch");
    }
    s->next_touch = t + w->lease / 3;
  }
}

/* Seconds until the next lease extension is due (0 if overdue), or -1 when
** none is pending. */
static double until_next_touch(const worker *w) {
  double next = INFINITY;
  int i;
  for (i = 0; i < w->concurrency; i++) {
    const slot *s = &w->slots[i];
    if (s->pid != 0 && !s->lost && s->next_touch < next) {
      next = s->next_touch;
    }
  }
  return isinf(next) ? -1 : fmax(0, next - now());
}

/* Give back the n jobs the worker claimed but cannot run. */
static void give_back(worker *w, const sqlq_job *jobs, int n) {
  int i;
  for (i = 0; i < n; i++) {
    int rc = sqlq_release(w->db, jobs[i].id, jobs[i].token, 0);
    if (rc != SQLQ_OK) {
      cli_fail(w->db, rc, "release");
    }
  }
}

/* Claim jobs for the free slots and start their commands. */
static enum claim_outcome claim_and_spawn(worker *w) {
  sqlq_claim_options opts = {.lease = w->lease};
  sqlq_job *jobs = NULL;
  int n = 0, i, rc;
  if (w->running == w->concurrency) {
    return CLAIM_FULL;
  }
  rc = sqlq_claim(w->db, w->queue, w->concurrency - w->running, &opts, &jobs, &n);
  if (rc == SQLQ_PAUSED) {
    return CLAIM_RECHECK;
  }
  if (rc == SQLQ_BUSY) {
    cli_fail(w->db, rc, "claim");
    return CLAIM_RECHECK;
  }
  if (database_away(w, rc, "claim")) {
    return CLAIM_RECHECK;
  }
  if (rc == SQLQ_OK && w->away) {
    cli_error("work: the database answers again");
    w->away = 0;
  }
  if (rc != SQLQ_OK) {
    stop_with(w, cli_fail(w->db, rc, "claim"));
    return CLAIM_ERROR;
  }
  for (i = 0; i < n; i++) {
    if (spawn(w, &jobs[i], free_slot(w)) != 0) {
      cli_error("work: cannot start %s: %s", w->cmd[0], strerror(errno));
      give_back(w, jobs + i, n - i);
      stop_with(w, EXIT_SOFTWARE);
      break;
    }
  }
  sqlq_claimed_free(jobs, n);
  return n > 0 ? CLAIM_GOT : CLAIM_EMPTY;
}

/* Whether the queue has no ready, scheduled or running job.  On an error,
** stops the worker and says no. */
static int queue_is_empty(worker *w) {
  sqlq_queue_stats *st = NULL;
  size_t n = 0, i;
  int empty = 1, rc = sqlq_stats(w->db, w->queue, &st, &n);
  if (database_away(w, rc, "stats")) {
    return 0;
  }
  if (rc != SQLQ_OK) {
    stop_with(w, cli_fail(w->db, rc, "stats"));
    return 0;
  }
  for (i = 0; i < n; i++) {
    empty = empty && st[i].ready + st[i].scheduled + st[i].running == 0;
  }
  sqlq_free(st);
  return empty;
}

/* Block in sqlq_wait() for a job to come due, at most timeout seconds. */
static void wait_for_job(worker *w, double timeout) {
  int rc = sqlq_wait(w->db, w->queue, timeout);
  w->expect_job = rc == SQLQ_OK;
  if (rc == SQLQ_TIMEOUT) {
    w->idle = 0;
  } else if (rc != SQLQ_OK && rc != SQLQ_INTERRUPTED && !database_away(w, rc, "wait")) {
    stop_with(w, cli_fail(w->db, rc, "wait"));
  }
}

/* Block after a claim came back with outcome, until there may be something
** to do. */
static void block(worker *w, enum claim_outcome outcome) {
  double timeout = until_next_touch(w);
  if (outcome == CLAIM_EMPTY && w->expect_job) {
    /* Woken for a due job that could not be claimed: a due job whose group
    ** is busy keeps sqlq_wait() returning at once, so back off. */
    w->idle = w->idle == 0 ? IDLE_FIRST : fmin(w->idle * 2, IDLE_MAX);
    w->expect_job = 0;
    sleep_for_event(timeout < 0 ? w->idle : fmin(timeout, w->idle));
  } else if (outcome == CLAIM_EMPTY) {
    /* A draining worker looks again every RECHECK_INTERVAL: the acks of
    ** other workers that empty the queue wake nobody. */
    if (w->drain && (timeout < 0 || timeout > RECHECK_INTERVAL)) timeout = RECHECK_INTERVAL;
    wait_for_job(w, timeout);
  } else if (outcome == CLAIM_RECHECK) {
    sleep_for_event(timeout < 0 ? RECHECK_INTERVAL : fmin(timeout, RECHECK_INTERVAL));
  } else {
    sleep_for_event(timeout);
  }
}

static int work_loop(worker *w) {
  for (;;) {
    enum claim_outcome outcome;
    drain_wake_pipe();
    reap(w);
    touch_due(w);
    if (stopping(w)) {
      if (w->running == 0) {
        return w->code;
      }
      sleep_for_event(until_next_touch(w));
      continue;
    }
    outcome = claim_and_spawn(w);
    if (outcome == CLAIM_GOT) {
      w->idle = 0;
      w->expect_job = 0;
      continue;
    }
    if (outcome == CLAIM_ERROR) {
      continue;
    }
    if (w->drain && w->running == 0 && queue_is_empty(w)) {
      return w->code;
    }
    block(w, outcome);
  }
}

/* Parse the flags and arguments into w.  Returns 0, or the exit code. */
static int parse(worker *w, int argc, char **argv, int *help) {
  static const struct option options[] = {
      {"concurrency", required_argument, NULL, 'c'},
      {"lease", required_argument, NULL, 'L'},
      {"backoff", required_argument, NULL, 'B'},
      {"drain", no_argument, NULL, 'D'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  long long n;
  int c;
  while ((c = cli_getopt("work", argc, argv, ":c:h", options)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_int(optarg, 1, MAX_CONCURRENCY, &n) != 0) {
        return cli_usage_error("work", "concurrency '%s' is not a whole number in 1..%d",
                               optarg, MAX_CONCURRENCY);
      }
      w->concurrency = (int)n;
      break;
    case 'L':
      if (cli_parse_seconds(optarg, &w->lease) != 0 || w->lease <= 0) {
        return cli_usage_error("work", "lease '%s' is not a positive number of seconds",
                               optarg);
      }
      break;
    case 'B':
      if (cli_parse_seconds(optarg, &w->backoff) != 0) {
        return cli_usage_error("work", "backoff '%s' is not a number of seconds", optarg);
      }
      break;
    case 'D':
      w->drain = 1;
      break;
    case 'h':
      *help = 1;
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    return cli_usage_error("work", "expected QUEUE -- CMD [ARGS...]");
  }
  w->queue = argv[optind++];
  /* getopt hides the first "--"; a second one after QUEUE is dropped. */
  if (optind < argc && strcmp(argv[optind], "--") == 0) {
    optind++;
  }
  if (optind >= argc) {
    return cli_usage_error("work", "expected a command after QUEUE");
  }
  w->cmd = argv + optind;
  return cli_check_queue("work", w->queue);
}

int cmd_work(const cli_global *g, int argc, char **argv) {
  worker w;
  int code, help = 0;

  memset(&w, 0, sizeof w);
  w.concurrency = 1;
  w.lease = 30;
  w.backoff = 1;
  if ((code = parse(&w, argc, argv, &help)) != 0 || help) {
    if (help) {
      fputs(usage, stdout);
    }
    return code;
  }
  w.slots = calloc((size_t)w.concurrency, sizeof *w.slots);
  if (w.slots == NULL) {
    cli_error("work: out of memory");
    return EXIT_SOFTWARE;
  }
  w.db = cli_open(g, &code);
  if (w.db != NULL) {
    if (install_signals(w.db) != 0) {
      cli_error("work: cannot set up signals: %s", strerror(errno));
      code = EXIT_SOFTWARE;
    } else {
      code = work_loop(&w);
    }
  }
  sqlq_close(w.db);
  free(w.slots);
  return code;
}
