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
** block) and the job's variables in an environment built for it (the
** worker's own environment never changes), and runs under a guardian
** (cli_spawn_guarded), which the worker reaps instead of the command: the
** command and every process it started die with the worker, even when the
** worker is killed with SIGKILL.
**
** A lease is lost when an extension finds the job no longer held with the
** claim's token (the lease ran out and the job was claimed or reaped
** again, it was cancelled, or it was purged), when the watch
** (work_watch.c) finds the same as soon as a cancel of the queue wakes it,
** or when no extension succeeded before the
** lease ran out (the database could not be reached: the worker cannot know
** whether it still holds the job).  The command then gets SIGTERM at once
** and SIGKILL, to its whole tree, --kill-after seconds later: a timer of
** the loop, like the extensions, so that the worker never blocks on one
** command.
**
** --timeout bounds how long a command runs: past it, the command is
** stopped the same way (SIGTERM, SIGKILL --kill-after later), its lease
** still extended meanwhile, and its end is recorded as a failed attempt,
** retried after the backoff like any other.
*/
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "guardian.h"
#include "work_common.h"

static const char usage[] =
  "usage: sqlq [--url URL] work [OPTIONS] QUEUE -- CMD [ARGS...]\n"
  "       sqlq [--url URL] work --stdio [OPTIONS] QUEUE -- CMD [ARGS...]\n"
  "\n"
  "Run CMD once per job of QUEUE, with the payload on stdin and SQLQ_JOB_ID,\n"
  "SQLQ_QUEUE, SQLQ_ATTEMPT (counted from 1) and SQLQ_JOB_TOKEN (the claim's\n"
  "token) in its environment, but not SQLQ_URL, which may hold a password.\n"
  "CMD exits 0: the job is done.  CMD exits 75: the job is given back, to run\n"
  "again after the backoff base, without counting the attempt.  Anything else\n"
  "(or a signal): the attempt failed; the job runs again after an exponential\n"
  "backoff, or is dead after its last attempt.  A lost lease (the job was\n"
  "taken back or cancelled with `sqlq cancel`, which the worker hears of at\n"
  "once, or no extension reached the database before the lease ran\n"
  "out): CMD gets SIGTERM, then SIGKILL after --kill-after, and its result\n"
  "is recorded as a failed attempt only if the job is still held.  A command\n"
  "that runs past --timeout gets SIGTERM, then SIGKILL after --kill-after,\n"
  "and its attempt fails (retried after the backoff).  SIGTERM\n"
  "or SIGINT: claim nothing more, wait for the running commands, exit 0.  A\n"
  "database that goes away once the worker has connected is waited for, not\n"
  "fatal.\n"
  "\n"
  "With --stdio, CMD is a long-lived handler (-c N of them) that gets jobs on\n"
  "its stdin and answers on its stdout, one JSON line each, in the protocol\n"
  "of docs/protocol.md (examples/handler.py, .js, .sh).  A handler that\n"
  "dies, breaks the protocol or leaves a job unanswered past its deadline\n"
  "(the lease, unless it touches the job) is stopped, its jobs in flight\n"
  "fail, and it is restarted after a pause that doubles from 0.1 s to 10 s.\n"
  "SIGTERM or SIGINT: claim nothing more, wait --grace for the answers of the\n"
  "jobs in flight, release the rest, close the handlers' stdin, exit 0.\n"
  "\n"
  "Every worker also runs the scheduling passes of periodic jobs (see `sqlq\n"
  "cron`), on a connection and a thread of its own, about once a second and\n"
  "at each tick; however many run them, each tick makes one job.\n"
  "\n"
  "  -c, --concurrency N    commands run at once, or --stdio handlers\n"
  "                         (default 1)\n"
  "      --lease SECONDS    lease of a claimed job, extended while CMD runs\n"
  "                         (default 30; at most 3.2e9)\n"
  "      --backoff SECONDS  base of the retry backoff (default 1; 0 retries\n"
  "                         at once; at most 86400)\n"
  "      --timeout SECONDS  longest run of a command, or of a --stdio job\n"
  "                         (default 0: none; at most 3.2e9)\n"
  "      --kill-after SECONDS\n"
  "                         after a lost lease or a timeout, SIGKILL a\n"
  "                         command this long after its SIGTERM (default 10)\n"
  "      --pass-url         set SQLQ_URL in CMD's environment to the URL of\n"
  "                         the database (password included)\n"
  "      --drain            exit 0 once the queue has no ready, scheduled or\n"
  "                         running job (a job waiting for others counts as\n"
  "                         scheduled)\n"
  "      --stdio            feed the jobs to long-lived handlers (above)\n"
  "      --window W         --stdio: jobs in flight per handler (default 64)\n"
  "      --batch N          --stdio: most jobs one claim takes (default: as\n"
  "                         many as the handlers have room for)\n"
  "      --grace SECONDS    --stdio: after SIGTERM, how long the answers of\n"
  "                         the jobs in flight are waited for (default 30)\n"
  "      --no-cron          run no scheduling passes\n"
  "  -h, --help             print this help\n";

/* The exit code with which a command asks for its job back. */
#define EXIT_RELEASE 75

/* The most concurrent commands one worker runs. */
#define MAX_CONCURRENCY 1024

/* The longest --backoff: sqlq_fail() caps the backoff at one day, and a
** base that sqlq_release() refuses (past 3.2e9 s) made every release fail,
** so that jobs given back ran out of attempts instead. */
#define MAX_BACKOFF 86400.0

/* The longest --lease, the longest that sqlq_claim() takes. */
#define MAX_LEASE 3.2e9

/* How often a paused or busy queue is looked at again, in seconds. */
#define RECHECK_INTERVAL 1.0

/* The first and the longest pause after sqlq_wait() said a job was due
** but the claim found none (due jobs whose group is busy), in seconds. */
#define IDLE_FIRST 0.05
#define IDLE_MAX 1.0

/* One running command and the job it works on.  Times are monotonic
** seconds. */
typedef struct slot {
  pid_t pid; /* the command's guardian; 0 when the slot is free */
  int64_t id;
  int64_t token;
  int lost;          /* the lease was lost: no more touches */
  int timed_out;     /* it ran past --timeout */
  int stopped;       /* lost or timed out: SIGTERM sent */
  int killed;        /* stopped, and SIGKILL sent */
  double next_touch; /* when to extend the lease */
  double lease_end;  /* the lease lasts at least until then */
  double timeout_at; /* when it runs past --timeout; INFINITY: never */
  double kill_at;    /* stopped: when to send SIGKILL */
} slot;

/* The variables that describe a job to its command, in the order of
** job_vars' fields. */
static const char *const job_var_names[] = {"SQLQ_JOB_ID", "SQLQ_QUEUE", "SQLQ_ATTEMPT",
                                            "SQLQ_JOB_TOKEN", NULL};

/* The "NAME=value" entries of the variables of the job started next, which
** the command's environment points at (fork() gives it its copy). */
typedef struct job_vars {
  char id[40];
  char queue[16 + SQLQ_QUEUE_NAME_MAX];
  char attempt[32];
  char token[40];
} job_vars;

typedef struct worker {
  sqlq_db *db;
  work_options o; /* the command line's */
  char **env;     /* the commands' environment (cli_command_env) */
  char **env_job; /* its entries of the job's variables */
  job_vars vars;
  slot *slots;
  int running;
  int code;           /* non-zero: stop on an error and exit with this */
  int expect_job;     /* the last sqlq_wait() said a job was due */
  int away;           /* the database is unreachable (said once) */
  double idle;        /* current pause after a claim found nothing */
  work_watch *watch;  /* tells of the jobs cancelled while they run */
  work_guard *guard;  /* signals the commands whose leases ran out */
  sqlq_job_ref *refs; /* room for --concurrency jobs, for the watch */
} worker;

/* What one claim did. */
enum claim_outcome { CLAIM_GOT, CLAIM_EMPTY, CLAIM_RECHECK, CLAIM_FULL, CLAIM_ERROR };

/* Stop claiming and exit with code once the running commands end. */
static void stop_with(worker *w, int code) {
  if (w->code == 0) {
    w->code = code;
  }
}

static int stopping(const worker *w) {
  return work_stop_requested() || w->code != 0;
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

/* Make the command environment's entries of the job's variables describe
** job. */
static void set_job_vars(worker *w, const sqlq_job *job) {
  job_vars *v = &w->vars;
  snprintf(v->id, sizeof v->id, "%s=%" PRId64, job_var_names[0], job->id);
  snprintf(v->queue, sizeof v->queue, "%s=%s", job_var_names[1], job->queue);
  snprintf(v->attempt, sizeof v->attempt, "%s=%d", job_var_names[2], job->attempts);
  snprintf(v->token, sizeof v->token, "%s=%" PRId64, job_var_names[3], job->token);
  w->env_job[0] = v->id;
  w->env_job[1] = v->queue;
  w->env_job[2] = v->attempt;
  w->env_job[3] = v->token;
}

/* Start the command for job, claimed at claimed_at, in the free slot s.
** Returns 0, or -1 (errno set) when it could not be started. */
static int spawn(worker *w, const sqlq_job *job, double claimed_at, slot *s) {
  pid_t pid;
  int fd, saved;
  if ((fd = payload_fd(job->payload, job->payload_len)) < 0) {
    return -1;
  }
  set_job_vars(w, job);
  pid = cli_spawn_guarded(w->o.cmd, fd, w->env);
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
  s->timed_out = 0;
  s->stopped = 0;
  s->killed = 0;
  s->timeout_at = w->o.timeout > 0 ? cli_monotonic_s() + w->o.timeout : INFINITY;
  s->next_touch = cli_monotonic_s() + w->o.lease / 3;
  s->lease_end = claimed_at + w->o.lease;
  work_guard_set(w->guard, (size_t)(s - w->slots), s->pid, s->lease_end);
  w->running++;
  return 0;
}

static slot *free_slot(worker *w) {
  int i;
  for (i = 0; i < w->o.concurrency; i++) {
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
** be SQLQ_STALE, which another try after reconnecting gives.  A call that
** stayed busy (SQLQ_BUSY: every attempt of the library lost a deadlock,
** or on a Galera cluster its certification) is tried again too: given up,
** the job would run again once its lease ran out. */
static int finish_retrying(worker *w, const slot *s, const char *action, finish_call_fn finish_call,
                           const char *why) {
  double give_up = cli_monotonic_s() + w->o.lease, pause = 0.05;
  int rc;
  while (((rc = finish_call(w, s, why)) == SQLQ_BUSY || database_away(w, rc, action)) &&
         cli_monotonic_s() < give_up) {
    work_sleep_for_event(pause);
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
  return sqlq_release(w->db, s->id, s->token, w->o.backoff);
}

static int call_fail(worker *w, const slot *s, const char *why) {
  /* --backoff 0 retries at once; the options' zero backoff is the default. */
  sqlq_fail_options fo = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  fo.backoff = w->o.backoff;
  fo.retry_now = w->o.backoff == 0;
  return sqlq_fail(w->db, s->id, s->token, why, &fo);
}

/* Report the outcome of finishing the job of s (action names the call). */
static void report_finish(worker *w, const slot *s, int rc, const char *action) {
  if (rc == SQLQ_STALE) {
    cli_error("work: job %" PRId64 ": lease lost, %s refused", s->id, action);
  } else if (rc == SQLQ_UNAVAILABLE) {
    /* The lease ran out meanwhile: the job runs again once it is reaped. */
    cli_error("work: job %" PRId64 ": %s failed: the database was away for a whole lease,"
              " so the job may run again",
              s->id, action);
  } else if (rc != SQLQ_OK) {
    cli_fail(w->db, rc, action);
  }
}

/* Record the end of the command of s, whose lease was lost, in one line:
** the job is failed with the claim's token, which records the attempt if
** the worker still holds the job (its lease ran out while the database
** could not be reached, and nobody took the job since); otherwise the call
** changes nothing (SQLQ_STALE), and whoever took the job back counted the
** attempt (the lease reaper, with the error "lease expired during attempt
** N"). */
static void finish_lost(worker *w, const slot *s, int status) {
  char ended[48], why[80];
  int rc;
  work_describe_status(status, ended, sizeof ended);
  snprintf(why, sizeof why, "lease lost, then %s", ended);
  rc = finish_retrying(w, s, "fail", call_fail, why);
  if (rc == SQLQ_OK) {
    cli_error("work: job %" PRId64 ": %s after its lease was lost; the attempt is recorded "
              "as failed",
              s->id, ended);
  } else if (rc == SQLQ_STALE) {
    cli_error("work: job %" PRId64 ": %s after its lease was lost; the job was cancelled or "
              "taken back, so no result is recorded",
              s->id, ended);
  } else {
    report_finish(w, s, rc, "fail");
  }
}

/* Record the end of the command of s, which ran past --timeout and was
** stopped, as a failed attempt, however it ended. */
static void finish_timed_out(worker *w, const slot *s, int status) {
  char ended[48], why[96];
  work_describe_status(status, ended, sizeof ended);
  snprintf(why, sizeof why, "timed out after %g s, then %s", w->o.timeout, ended);
  cli_error("work: job %" PRId64 ": %s", s->id, why);
  report_finish(w, s, finish_retrying(w, s, "fail", call_fail, why), "fail");
}

/* Record the end of the command of s, whose wait status is status. */
static void finish(worker *w, const slot *s, int status) {
  if (s->lost) {
    finish_lost(w, s, status);
  } else if (s->timed_out) {
    finish_timed_out(w, s, status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    report_finish(w, s, finish_retrying(w, s, "ack", call_ack, NULL), "ack");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_RELEASE) {
    report_finish(w, s, finish_retrying(w, s, "release", call_release, NULL), "release");
  } else {
    char why[48];
    work_describe_status(status, why, sizeof why);
    cli_error("work: job %" PRId64 ": %s", s->id, why);
    report_finish(w, s, finish_retrying(w, s, "fail", call_fail, why), "fail");
  }
}

/* Why a lease was lost when no extension succeeded in time. */
#define LEASE_RAN_OUT "it ran out before an extension reached the database"

/* Reap every command that ended and finish its job. */
static void reap(worker *w) {
  pid_t pid;
  int status, i;
  while ((pid = work_guard_reap(w->guard, &status)) > 0) {
    for (i = 0; i < w->o.concurrency; i++) {
      slot *s = &w->slots[i];
      if (s->pid == pid) {
        if (!s->lost && work_guard_fired(w->guard, (size_t)i)) {
          /* The lease guard stopped it while the loop was blocked. */
          cli_error("work: job %" PRId64 ": lease lost (%s); its command got SIGTERM", s->id,
                    LEASE_RAN_OUT);
          s->lost = 1;
        }
        finish(w, s, status);
        s->pid = 0;
        w->running--;
      }
    }
  }
}

/* Stop the command of s, unless it is stopped already: SIGTERM now (to
** the guardian, which passes it on) and SIGKILL at s->kill_at (kill_due). */
static void stop_command(worker *w, slot *s) {
  if (s->stopped) {
    return;
  }
  s->stopped = 1;
  s->kill_at = cli_monotonic_s() + w->o.kill_after;
  kill(s->pid, SIGTERM);
}

/* The lease of s is lost, for the reason why: stop its command. */
static void lease_lost(worker *w, slot *s, const char *why) {
  cli_error("work: job %" PRId64 ": lease lost (%s); its command gets SIGTERM, and SIGKILL "
            "in %g s if it still runs",
            s->id, why, w->o.kill_after);
  s->lost = 1;
  stop_command(w, s);
}

/* Stop the commands that ran past --timeout.  Their leases are still
** extended until they end, so that their failed attempts are recorded. */
static void timeout_due(worker *w) {
  int i;
  for (i = 0; i < w->o.concurrency; i++) {
    slot *s = &w->slots[i];
    if (s->pid != 0 && !s->stopped && s->timeout_at <= cli_monotonic_s()) {
      cli_error("work: job %" PRId64 ": ran past its timeout of %g s; its command gets SIGTERM, "
                "and SIGKILL in %g s if it still runs",
                s->id, w->o.timeout, w->o.kill_after);
      s->timed_out = 1;
      stop_command(w, s);
    }
  }
}

/* Extend the lease of s. */
static void touch(worker *w, slot *s) {
  double t = cli_monotonic_s();
  int rc = sqlq_touch(w->db, s->id, s->token, w->o.lease, NULL);
  if (rc == SQLQ_OK) {
    s->lease_end = t + w->o.lease;
    work_guard_set(w->guard, (size_t)(s - w->slots), s->pid, s->lease_end);
  } else if (rc == SQLQ_STALE) {
    lease_lost(w, s, "the job is no longer held with its token: it was cancelled, or taken back");
  } else if (!database_away(w, rc, "touch")) {
    cli_fail(w->db, rc, "touch");
  }
  s->next_touch = t + w->o.lease / 3;
}

/* Extend the leases whose time has come, then give up those that ran out
** before an extension succeeded (the lease guard may have signalled their
** commands already, while an extension was under way). */
static void touch_due(worker *w) {
  int i;
  for (i = 0; i < w->o.concurrency; i++) {
    slot *s = &w->slots[i];
    if (s->pid != 0 && !s->lost && s->next_touch <= cli_monotonic_s()) {
      touch(w, s);
    }
  }
  for (i = 0; i < w->o.concurrency; i++) {
    slot *s = &w->slots[i];
    if (s->pid != 0 && !s->lost &&
        (s->lease_end <= cli_monotonic_s() || work_guard_fired(w->guard, (size_t)i))) {
      lease_lost(w, s, LEASE_RAN_OUT);
    }
  }
}

/* Stop the commands of the jobs the watch found no longer held (cancelled,
** or taken back), then give the watch the jobs held now. */
static void watch_sync(worker *w) {
  size_t n = work_watch_take(w->watch, w->refs, (size_t)w->o.concurrency), k;
  int i;
  for (k = 0; k < n; k++) {
    for (i = 0; i < w->o.concurrency; i++) {
      slot *s = &w->slots[i];
      if (s->pid != 0 && !s->lost && s->id == w->refs[k].id && s->token == w->refs[k].token) {
        lease_lost(w, s, "the job was cancelled, or taken back");
      }
    }
  }
  for (i = 0, n = 0; i < w->o.concurrency; i++) {
    const slot *s = &w->slots[i];
    if (s->pid != 0 && !s->lost) {
      w->refs[n].id = s->id;
      w->refs[n++].token = s->token;
    }
  }
  work_watch_set(w->watch, w->refs, n);
}

/* SIGKILL the stopped commands that outlived their SIGTERM by
** kill_after. */
static void kill_due(worker *w) {
  int i;
  for (i = 0; i < w->o.concurrency; i++) {
    slot *s = &w->slots[i];
    if (s->pid != 0 && s->stopped && !s->killed && s->kill_at <= cli_monotonic_s()) {
      cli_error("work: job %" PRId64 ": its command outlived SIGTERM by %g s; SIGKILL", s->id,
                w->o.kill_after);
      cli_kill_guarded(s->pid);
      s->killed = 1;
    }
  }
}

/* Seconds until the next timer of a slot is due (0 if overdue): a lease
** extension, the end of a lease, a timeout, a SIGKILL; -1 when none is
** pending. */
static double until_next_timer(const worker *w) {
  double next = INFINITY;
  int i;
  for (i = 0; i < w->o.concurrency; i++) {
    const slot *s = &w->slots[i];
    if (s->pid == 0) {
      continue;
    }
    if (!s->lost) {
      next = fmin(next, fmin(s->next_touch, s->lease_end));
    }
    next = fmin(next, !s->stopped ? s->timeout_at : !s->killed ? s->kill_at : INFINITY);
  }
  return isinf(next) ? -1 : fmax(0, next - cli_monotonic_s());
}

/* Give back the n jobs the worker claimed but cannot run. */
static void give_back(worker *w, const sqlq_job *jobs, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    int rc = sqlq_release(w->db, jobs[i].id, jobs[i].token, 0);
    if (rc != SQLQ_OK) {
      cli_fail(w->db, rc, "release");
    }
  }
}

/* Claim jobs for the free slots and start their commands. */
static enum claim_outcome claim_and_spawn(worker *w) {
  sqlq_claim_options opts = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  size_t n = 0, i;
  int rc;
  double claimed_at = cli_monotonic_s();
  if (w->running == w->o.concurrency) {
    return CLAIM_FULL;
  }
  opts.lease = w->o.lease;
  rc = sqlq_claim(w->db, w->o.queue, (size_t)(w->o.concurrency - w->running), &opts, &jobs, &n);
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
    if (spawn(w, &jobs[i], claimed_at, free_slot(w)) != 0) {
      cli_error("work: cannot start %s: %s", w->o.cmd[0], strerror(errno));
      give_back(w, jobs + i, n - i);
      stop_with(w, EXIT_SOFTWARE);
      break;
    }
  }
  sqlq_jobs_free(jobs, n);
  return n > 0 ? CLAIM_GOT : CLAIM_EMPTY;
}

/* Whether the queue has no ready, scheduled or running job.  On an error,
** stops the worker and says no. */
static int queue_is_empty(worker *w) {
  int empty, rc = work_queue_empty(w->db, w->o.queue, &empty);
  if (database_away(w, rc, "stats")) {
    return 0;
  }
  if (rc != SQLQ_OK) {
    stop_with(w, cli_fail(w->db, rc, "stats"));
    return 0;
  }
  return empty;
}

/* Block in sqlq_wait() for a job to come due, at most timeout seconds. */
static void wait_for_job(worker *w, double timeout) {
  int rc = sqlq_wait(w->db, w->o.queue, timeout);
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
  double timeout = until_next_timer(w);
  if (outcome == CLAIM_EMPTY && w->expect_job) {
    /* Woken for a due job that could not be claimed: a due job whose group
    ** is busy keeps sqlq_wait() returning at once, so back off. */
    w->idle = w->idle == 0 ? IDLE_FIRST : fmin(w->idle * 2, IDLE_MAX);
    w->expect_job = 0;
    work_sleep_for_event(timeout < 0 ? w->idle : fmin(timeout, w->idle));
  } else if (outcome == CLAIM_EMPTY) {
    /* A draining worker looks again every RECHECK_INTERVAL: the acks of
    ** other workers that empty the queue wake nobody. */
    if (w->o.drain && (timeout < 0 || timeout > RECHECK_INTERVAL)) timeout = RECHECK_INTERVAL;
    wait_for_job(w, timeout);
  } else if (outcome == CLAIM_RECHECK) {
    work_sleep_for_event(timeout < 0 ? RECHECK_INTERVAL : fmin(timeout, RECHECK_INTERVAL));
  } else {
    work_sleep_for_event(timeout);
  }
}

static int work_loop(worker *w) {
  for (;;) {
    enum claim_outcome outcome;
    work_signals_drain();
    reap(w);
    watch_sync(w);
    touch_due(w);
    timeout_due(w);
    kill_due(w);
    if (stopping(w)) {
      if (w->running == 0) {
        return w->code;
      }
      work_sleep_for_event(until_next_timer(w));
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
    if (w->o.drain && w->running == 0 && queue_is_empty(w)) {
      return w->code;
    }
    block(w, outcome);
  }
}

/* The most jobs one handler of --stdio has in flight. */
#define MAX_WINDOW 100000

/* Parse the flags and arguments into o.  Returns 0, or the exit code. */
static int parse(work_options *o, int argc, char **argv, int *help) {
  static const struct option options[] = {
    {"concurrency", required_argument, NULL, 'c'},
    {"lease", required_argument, NULL, 'L'},
    {"backoff", required_argument, NULL, 'B'},
    {"kill-after", required_argument, NULL, 'K'},
    {"timeout", required_argument, NULL, 'T'},
    {"drain", no_argument, NULL, 'D'},
    {"pass-url", no_argument, NULL, 'U'},
    {"stdio", no_argument, NULL, 'S'},
    {"window", required_argument, NULL, 'W'},
    {"batch", required_argument, NULL, 'b'},
    {"grace", required_argument, NULL, 'G'},
    {"no-cron", no_argument, NULL, 'N'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  long long n;
  int c, stdio_only = 0;
  while ((c = cli_getopt("work", argc, argv, ":c:h", options)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_int(optarg, 1, MAX_CONCURRENCY, &n) != 0) {
        return cli_usage_error("work", "concurrency '%s' is not a whole number in 1..%d", optarg,
                               MAX_CONCURRENCY);
      }
      o->concurrency = (int)n;
      break;
    case 'L':
      if (cli_parse_seconds(optarg, &o->lease) != 0 || o->lease <= 0 || o->lease > MAX_LEASE) {
        return cli_usage_error("work", "lease '%s' is not a number of seconds in (0, %g]", optarg,
                               MAX_LEASE);
      }
      break;
    case 'B':
      if (cli_parse_seconds(optarg, &o->backoff) != 0 || o->backoff > MAX_BACKOFF) {
        return cli_usage_error("work", "backoff '%s' is not a number of seconds in [0, %g]", optarg,
                               MAX_BACKOFF);
      }
      break;
    case 'K':
      if (cli_parse_seconds(optarg, &o->kill_after) != 0) {
        return cli_usage_error("work", "kill-after '%s' is not a number of seconds", optarg);
      }
      break;
    case 'T':
      if (cli_parse_seconds(optarg, &o->timeout) != 0 || o->timeout > MAX_LEASE) {
        return cli_usage_error("work", "timeout '%s' is not a number of seconds in [0, %g]", optarg,
                               MAX_LEASE);
      }
      break;
    case 'D':
      o->drain = 1;
      break;
    case 'U':
      o->pass_url = 1;
      break;
    case 'S':
      o->stdio = 1;
      break;
    case 'N':
      o->no_cron = 1;
      break;
    case 'W':
    case 'b':
      if (cli_parse_int(optarg, 1, MAX_WINDOW, &n) != 0) {
        return cli_usage_error("work", "%s '%s' is not a whole number in 1..%d",
                               c == 'W' ? "window" : "batch", optarg, MAX_WINDOW);
      }
      *(c == 'W' ? &o->window : &o->batch) = (int)n;
      stdio_only = 1;
      break;
    case 'G':
      if (cli_parse_seconds(optarg, &o->grace) != 0) {
        return cli_usage_error("work", "grace '%s' is not a number of seconds", optarg);
      }
      stdio_only = 1;
      break;
    case 'h':
      *help = 1;
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  if (stdio_only && !o->stdio) {
    return cli_usage_error("work", "--window, --batch and --grace need --stdio");
  }
  if (optind >= argc) {
    return cli_usage_error("work", "expected QUEUE -- CMD [ARGS...]");
  }
  o->queue = argv[optind++];
  /* getopt hides the first "--"; a second one after QUEUE is dropped. */
  if (optind < argc && strcmp(argv[optind], "--") == 0) {
    optind++;
  }
  if (optind >= argc) {
    return cli_usage_error("work", "expected a command after QUEUE");
  }
  o->cmd = argv + optind;
  return cli_check_queue("work", o->queue);
}

/* `sqlq work` without --stdio: a command per job. */
static int run_commands(const cli_global *g, const work_options *o) {
  worker w;
  int code;
  memset(&w, 0, sizeof w);
  w.o = *o;
  w.slots = calloc((size_t)o->concurrency, sizeof *w.slots);
  w.refs = calloc((size_t)o->concurrency, sizeof *w.refs);
  w.env = cli_command_env(g, o->pass_url, job_var_names, &w.env_job);
  if (w.slots == NULL || w.refs == NULL || w.env == NULL) {
    cli_error("work: out of memory");
    free(w.slots);
    free(w.refs);
    free(w.env);
    return EXIT_SOFTWARE;
  }
  w.db = cli_open(g, &code);
  if (w.db != NULL && (w.watch = work_watch_start(g, o->queue, &code)) != NULL &&
      (w.guard = work_guard_start((size_t)o->concurrency, o->kill_after, &code)) != NULL) {
    if (work_signals_install(w.db) != 0) {
      cli_error("work: cannot set up signals: %s", strerror(errno));
      code = EXIT_SOFTWARE;
    } else {
      code = work_loop(&w);
    }
    work_signals_uninstall();
  }
  work_guard_stop(w.guard);
  work_watch_stop(w.watch);
  sqlq_close(w.db);
  free(w.slots);
  free(w.refs);
  free(w.env);
  return code;
}

int cmd_work(const cli_global *g, int argc, char **argv) {
  work_options o = {.concurrency = 1,
                    .lease = 30,
                    .backoff = 1,
                    .kill_after = 10,
                    .window = 64,
                    .batch = 0,
                    .grace = 30};
  int code, help = 0;

  if ((code = parse(&o, argc, argv, &help)) != 0 || help) {
    if (help) {
      fputs(usage, stdout);
    }
    return code;
  }
  cli_cron *cron = NULL;
  if (!o.no_cron && (cron = cli_cron_start(g, "work", 1, &code)) == NULL) {
    return code;
  }
  code = o.stdio ? work_stdio_run(g, &o) : run_commands(g, &o);
  cli_cron_stop(cron);
  return code;
}
