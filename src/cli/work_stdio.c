/*
** work_stdio.c -- `sqlq work --stdio QUEUE -- CMD`: feed the jobs of a
** queue to -c long-lived handler processes over their stdin, and take
** their answers from their stdout, in the protocol of docs/protocol.md
** (the lines themselves are stdio_frame.c's).
**
** One thread, one connection, runs the loop; a second thread, on a second
** connection, blocks in sqlq_wait() when the worker has room for jobs and
** the last claim emptied the queue, and wakes the loop through a pipe when
** a job may be due: no polling.  Each turn of the loop reaps the handlers
** that ended, starts the ones due for a (re)start, runs the timers (lease
** extensions, the deadlines of the jobs, SIGKILLs), acks the jobs answered
** since the last turn in one sqlq_ack_batch() (kept and tried again while
** the database is away, within the jobs' leases), claims as many jobs as the
** handlers have room for (each at most --window jobs in flight) and sends
** them; then it blocks in poll() on the handlers' pipes, the self-pipe of
** the signals (work_common.c) and the waiter's pipe, never past the next
** timer.
**
** A handler that breaks the protocol (a line that is not an answer, an
** answer for a job it does not hold or with the wrong token, a line over
** STDIO_LINE_MAX bytes, no hello first), or that leaves a job unanswered
** past its deadline or past --timeout (which touches do not move), is
** stopped (SIGTERM, SIGKILL after --kill-after) and
** its jobs in flight are failed at once, with the reason, which is also
** said in one line on stderr; one that ends by itself gets its jobs
** failed when it is reaped, after the answers it wrote before it ended
** are taken.  Either way it is started again after a pause that doubles
** from RESTART_FIRST up to RESTART_MAX, and falls back to RESTART_FIRST
** once it has finished a job.  The worker extends the leases of the jobs
** in flight itself, as `sqlq work` does, so that a job whose handler fails
** is still held, and its failed attempt is recorded (retried or dead as
** its attempts say).
**
** SIGTERM or SIGINT: claim nothing more, wait up to --grace for the
** answers of the jobs in flight, release the rest (their attempts not
** counted), close the handlers' stdin, SIGKILL those still running
** --kill-after later, exit 0.
*/
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "guardian.h"
#include "stdio_frame.h"
#include "work_common.h"

/* The first and the longest pause before a handler that ended is started
** again, in seconds. */
#define RESTART_FIRST 0.1
#define RESTART_MAX 10.0

/* How long a handler just started has for its hello at least, in
** seconds (the lease, when longer): an interpreter may take seconds to
** start on a loaded machine. */
#define HELLO_TIMEOUT 30.0

/* The first and the longest pause after a wake-up whose claim found no job
** (due jobs whose group is busy keep sqlq_wait() returning at once). */
#define IDLE_FIRST 0.05
#define IDLE_MAX 1.0

/* How often a paused queue, a database away or a draining worker's queue
** is looked at again, in seconds. */
#define RECHECK_INTERVAL 1.0

/* Room for one line of a handler, its newline and one byte more. */
#define IN_CAP (STDIO_LINE_MAX + 2)

/* One job in flight at a handler.  Times are monotonic seconds. */
typedef struct flight {
  int64_t id;
  int64_t token;
  double deadline;   /* the handler answers or touches the job by then */
  double next_touch; /* when the worker extends the lease next */
  double lease_end;  /* the lease lasts at least until then */
  double timeout_at; /* --timeout: unanswered by then, it failed; INFINITY: never */
  int lost;          /* an extension or the watch found the job taken back */
  int told;          /* the watch found it lost: the handler was told (cancel) */
} flight;

enum hstate {
  H_DOWN,  /* no process: started again at timer */
  H_HELLO, /* started, its hello due by timer */
  H_READY, /* takes jobs */
  H_DYING  /* stopped or ended: SIGKILL at timer, until reaped */
};

typedef struct handler {
  int num; /* from 1 */
  enum hstate state;
  pid_t pid;   /* its guardian (cli_spawn_guarded_io); 0 when none */
  int to_fd;   /* our end of its stdin; -1 when closed */
  int from_fd; /* our end of its stdout; -1 when closed */
  double timer;
  int killed;     /* H_DYING: SIGKILL sent */
  int told;       /* the worker stopped it (and said why, if it had to) */
  double backoff; /* the pause before its next start */
  char *in;       /* IN_CAP bytes: what it wrote that is not parsed yet */
  size_t in_len;
  char *out; /* what is not written to it yet */
  size_t out_len, out_cap;
  flight *jobs; /* --window entries, njobs of them in flight, oldest first */
  int njobs;
} handler;

typedef struct stdio_worker {
  const work_options *o;
  sqlq_db *db;
  char **env;             /* the handlers' environment (cli_command_env) */
  char *queue_json;       /* the queue's name as a JSON string */
  handler *h;             /* o->concurrency of them */
  int *close_fds;         /* room for the pipe ends of every handler (start_handler) */
  struct pollfd *pollfds; /* room for 2 + 2 * o->concurrency (poll_io) */
  sqlq_job_ref *acks;     /* answered, not yet acked */
  size_t nacks;
  double acks_until;  /* the first lease of those jobs to end; INFINITY: none */
  int acks_kept;      /* they failed, database away, and are tried again */
  int code;           /* non-zero: stop, and exit with this */
  int due;            /* a job may be due: claim */
  int woken;          /* due was set by a wake-up */
  double idle;        /* the current pause after a wake-up found nothing */
  double recheck_at;  /* when due is set again by time; 0: never */
  int away;           /* the database is unreachable (said once) */
  double stop_at;     /* stopping: when the grace ends; 0: not stopping */
  int closing;        /* stopping: the handlers' stdin is closed */
  work_watch *watch;  /* tells of the jobs cancelled while in flight */
  sqlq_job_ref *refs; /* room for every job in flight, for the watch */
  /* The waiter thread and what it shares with the loop, under mu. */
  sqlq_db *wdb;
  pthread_t thread;
  int thread_started;
  int wait_pipe[2];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int wait_asked; /* the loop asked for a wait that has not ended */
  int wait_ended; /* a wait ended, with wait_rc, not yet taken */
  int wait_rc;
  double wait_timeout;
  int wait_quit;
} stdio_worker;

static int stopping(const stdio_worker *w) {
  return w->stop_at > 0;
}

static void stop_with(stdio_worker *w, int code) {
  if (w->code == 0) {
    w->code = code;
  }
}

/* ------------------------------------------------------------------
** The waiter thread.
*/

static void *waiter_main(void *arg) {
  stdio_worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    double timeout;
    int rc;
    ssize_t ignored;
    while (!w->wait_asked && !w->wait_quit) {
      pthread_cond_wait(&w->cv, &w->mu);
    }
    if (w->wait_quit) {
      break;
    }
    timeout = w->wait_timeout;
    pthread_mutex_unlock(&w->mu);
    rc = sqlq_wait(w->wdb, w->o->queue, timeout);
    pthread_mutex_lock(&w->mu);
    w->wait_asked = 0;
    w->wait_ended = 1;
    w->wait_rc = rc;
    ignored = write(w->wait_pipe[1], "", 1);
    (void)ignored;
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Ask the waiter for a wait of at most timeout seconds (negative: no
** limit), unless one is under way. */
static void ask_wait(stdio_worker *w, double timeout) {
  pthread_mutex_lock(&w->mu);
  if (!w->wait_asked && !w->wait_ended) {
    w->wait_asked = 1;
    w->wait_timeout = timeout;
    pthread_cond_signal(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
}

static int say_away(stdio_worker *w, sqlq_db *db, int rc, const char *action) {
  if (rc != SQLQ_UNAVAILABLE) {
    return 0;
  }
  if (!w->away) {
    cli_error("work: %s: %s; retrying", action, sqlq_errmsg(db));
    w->away = 1;
  }
  return 1;
}

/* Take the end of a wait, if one ended. */
static void take_wait(stdio_worker *w) {
  char buf[64];
  int ended, rc;
  while (read(w->wait_pipe[0], buf, sizeof buf) > 0) {}
  pthread_mutex_lock(&w->mu);
  ended = w->wait_ended;
  rc = w->wait_rc;
  w->wait_ended = 0;
  pthread_mutex_unlock(&w->mu);
  if (!ended) {
    return;
  }
  if (rc == SQLQ_OK || rc == SQLQ_TIMEOUT) {
    /* A timeout is the draining worker's look again. */
    w->due = 1;
    w->woken = rc == SQLQ_OK;
  } else if (say_away(w, w->wdb, rc, "wait")) {
    w->recheck_at = cli_monotonic_s() + RECHECK_INTERVAL;
  } else if (rc != SQLQ_INTERRUPTED) {
    stop_with(w, cli_fail(w->wdb, rc, "wait"));
  }
}

static int start_waiter(stdio_worker *w, const cli_global *g) {
  int code;
  if ((w->wdb = cli_open(g, &code)) == NULL) {
    return code;
  }
  if (pipe2(w->wait_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
      pthread_create(&w->thread, NULL, waiter_main, w) != 0) {
    cli_error("work: cannot start the waiting thread: %s", strerror(errno));
    return EXIT_SOFTWARE;
  }
  w->thread_started = 1;
  return 0;
}

static void stop_waiter(stdio_worker *w) {
  if (w->thread_started) {
    pthread_mutex_lock(&w->mu);
    w->wait_quit = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    sqlq_interrupt(w->wdb);
    pthread_join(w->thread, NULL);
  }
  if (w->wait_pipe[0] >= 0) {
    close(w->wait_pipe[0]);
    close(w->wait_pipe[1]);
  }
}

/* ------------------------------------------------------------------
** Finishing jobs.
*/

/* Report the outcome rc of action on job id. */
static void report_finish(stdio_worker *w, int64_t id, int rc, const char *action) {
  if (rc == SQLQ_STALE) {
    cli_error("work: job %" PRId64 ": lease lost, %s refused", id, action);
  } else if (rc == SQLQ_UNAVAILABLE) {
    cli_error("work: job %" PRId64 ": %s failed: %s; the job runs again once its lease ends", id,
              action, sqlq_errmsg(w->db));
  } else if (rc != SQLQ_OK) {
    cli_fail(w->db, rc, action);
  }
}

/* Record a failed attempt of f, for the reason why, with the backoff and
** dead flag of a (NULL: the worker's --backoff). */
static void fail_job(stdio_worker *w, const flight *f, const char *why, const stdio_answer *a) {
  sqlq_fail_options fo = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  fo.backoff = a != NULL && a->seconds >= 0 ? a->seconds : w->o->backoff;
  /* A backoff of 0 retries at once; the options' zero is the default. */
  fo.retry_now = fo.backoff == 0;
  fo.dead = a != NULL && a->dead;
  report_finish(w, f->id, sqlq_fail(w->db, f->id, f->token, why, &fo), "fail");
}

/* Ack the jobs answered so far, in one transaction.  While the database is
** away the acks are kept and tried again at the next turn of the loop, up
** to the end of the first of their leases (then a retry could only be
** refused, and the jobs run again), as `sqlq work` does; last set, they
** are tried once. */
static void flush_acks(stdio_worker *w, int last) {
  size_t acked = 0;
  int rc;
  if (w->nacks == 0) {
    return;
  }
  rc = sqlq_ack_batch(w->db, w->acks, w->nacks, &acked);
  if (rc == SQLQ_UNAVAILABLE && !last && cli_monotonic_s() < w->acks_until) {
    if (!w->acks_kept) {
      cli_error("work: ack of %zu jobs failed: %s; tried again until their leases end", w->nacks,
                sqlq_errmsg(w->db));
      w->acks_kept = 1;
    }
    if (w->recheck_at == 0) {
      w->recheck_at = cli_monotonic_s() + RECHECK_INTERVAL;
    }
    return;
  }
  if (rc == SQLQ_STALE) {
    cli_error("work: %zu of %zu acks refused: their leases were lost", w->nacks - acked, w->nacks);
  } else if (rc != SQLQ_OK) {
    cli_error("work: ack of %zu jobs failed: %s; they run again once their leases end", w->nacks,
              sqlq_errmsg(w->db));
  }
  if (w->acks_kept && rc == SQLQ_OK) {
    cli_error("work: the acks kept went through");
  }
  w->nacks = 0;
  w->acks_until = INFINITY;
  w->acks_kept = 0;
}

/* Remove the job at index i of h's jobs in flight. */
static void drop_job(handler *h, int i) {
  memmove(&h->jobs[i], &h->jobs[i + 1], (size_t)(h->njobs - i - 1) * sizeof *h->jobs);
  h->njobs--;
}

/* Fail every job in flight at h, for the reason why. */
static void fail_all(stdio_worker *w, handler *h, const char *why) {
  int i;
  for (i = 0; i < h->njobs; i++) {
    if (!h->jobs[i].lost) {
      fail_job(w, &h->jobs[i], why, NULL);
    }
  }
  h->njobs = 0;
}

/* ------------------------------------------------------------------
** Handler processes.
*/

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

/* A pipe whose ends are above stderr and close-on-exec.  Returns 0 or -1. */
static int high_pipe(int p[2]) {
  int i;
  if (pipe2(p, O_CLOEXEC) != 0) {
    return -1;
  }
  for (i = 0; i < 2; i++) {
    if (p[i] <= STDERR_FILENO) {
      int fd = fcntl(p[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      close(p[i]);
      p[i] = fd;
    }
  }
  if (p[0] < 0 || p[1] < 0) {
    close_fd(&p[0]);
    close_fd(&p[1]);
    return -1;
  }
  return 0;
}

/* Make room for len more bytes of what h is sent.  Returns 0, or -1 when
** memory ran out. */
static int reserve_out(handler *h, size_t len) {
  if (h->out_len + len > h->out_cap) {
    size_t cap = (h->out_len + len) * 2;
    char *out = realloc(h->out, cap);
    if (out == NULL) {
      return -1;
    }
    h->out = out;
    h->out_cap = cap;
  }
  return 0;
}

/* Append len bytes to what h is sent.  Returns 0, or -1 when memory ran
** out. */
static int queue_out(handler *h, const char *p, size_t len) {
  if (reserve_out(h, len) != 0) {
    return -1;
  }
  memcpy(h->out + h->out_len, p, len);
  h->out_len += len;
  return 0;
}

/* Write what h is sent, as far as its pipe takes it now. */
static void write_out(handler *h) {
  size_t done = 0;
  while (done < h->out_len && h->to_fd >= 0) {
    ssize_t n = write(h->to_fd, h->out + done, h->out_len - done);
    if (n > 0) {
      done += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      /* EAGAIN: later; EPIPE: it ended, and is reaped. */
      if (n < 0 && errno != EAGAIN) {
        done = h->out_len;
      }
      break;
    }
  }
  memmove(h->out, h->out + done, h->out_len - done);
  h->out_len -= done;
}

/* Start h's command, with its hello line queued.  On failure, it is
** started again later. */
static void start_handler(stdio_worker *w, handler *h) {
  int to[2] = {-1, -1}, from[2] = {-1, -1}, i, n = 0;
  char hello[256 + 6 * SQLQ_QUEUE_NAME_MAX];
  size_t len = stdio_hello_line(hello, sizeof hello, w->queue_json, h->num, w->o->window,
                                w->o->lease, w->o->timeout);
  cli_spawn_io io;
  for (i = 0; i < w->o->concurrency; i++) {
    if (w->h[i].to_fd >= 0) w->close_fds[n++] = w->h[i].to_fd;
    if (w->h[i].from_fd >= 0) w->close_fds[n++] = w->h[i].from_fd;
  }
  h->out_len = h->in_len = 0;
  h->killed = h->told = 0;
  if (high_pipe(to) != 0 || high_pipe(from) != 0 || queue_out(h, hello, len) != 0) {
    cli_error("work: cannot start handler %d: %s", h->num, strerror(errno));
  } else {
    w->close_fds[n++] = to[1];
    w->close_fds[n++] = from[0];
    io = (cli_spawn_io){
      .stdin_fd = to[0], .stdout_fd = from[1], .close_fds = w->close_fds, .nclose = (size_t)n};
    h->pid = cli_spawn_guarded_io(w->o->cmd, &io, w->env);
    if (h->pid < 0) {
      cli_error("work: cannot start handler %d: %s", h->num, strerror(errno));
      h->pid = 0;
    }
  }
  close_fd(&to[0]);
  close_fd(&from[1]);
  if (h->pid == 0) {
    close_fd(&to[1]);
    close_fd(&from[0]);
    h->state = H_DOWN;
    h->timer = cli_monotonic_s() + h->backoff;
    h->backoff = fmin(h->backoff * 2, RESTART_MAX);
    return;
  }
  h->to_fd = to[1];
  h->from_fd = from[0];
  fcntl(h->to_fd, F_SETFL, O_NONBLOCK);
  fcntl(h->from_fd, F_SETFL, O_NONBLOCK);
  h->state = H_HELLO;
  h->timer = cli_monotonic_s() + fmax(w->o->lease, HELLO_TIMEOUT);
  write_out(h);
}

/* Stop h, which broke the protocol or left a job unanswered, for the
** reason why: say so, fail its jobs in flight, stop reading it, SIGTERM it
** (the guardian passes that on) and SIGKILL it --kill-after later. */
static void handler_broke(stdio_worker *w, handler *h, const char *why) {
  char reason[256];
  cli_error("work: handler %d (%s): %s; its %d jobs in flight fail, and it is restarted", h->num,
            w->o->cmd[0], why, h->njobs);
  snprintf(reason, sizeof reason, "handler %d: %s", h->num, why);
  fail_all(w, h, reason);
  close_fd(&h->to_fd);
  close_fd(&h->from_fd);
  kill(h->pid, SIGTERM);
  h->told = 1;
  h->state = H_DYING;
  h->timer = cli_monotonic_s() + w->o->kill_after;
}

/* The index of job id among h's jobs in flight, or -1. */
static int find_job(const handler *h, int64_t id) {
  int i;
  for (i = 0; i < h->njobs; i++) {
    if (h->jobs[i].id == id) {
      return i;
    }
  }
  return -1;
}

/* Extend the lease of f. */
static void touch_job(stdio_worker *w, flight *f) {
  double t = cli_monotonic_s();
  int rc = sqlq_touch(w->db, f->id, f->token, w->o->lease, NULL);
  if (rc == SQLQ_OK) {
    f->lease_end = t + w->o->lease;
  } else if (rc == SQLQ_STALE) {
    cli_error("work: job %" PRId64 ": lease lost: the job is no longer held with its token", f->id);
    f->lost = 1;
  } else if (!say_away(w, w->db, rc, "touch")) {
    cli_fail(w->db, rc, "touch");
  }
  f->next_touch = t + w->o->lease / 3;
}

/* Act on the answer a of h about its job at index i. */
static void on_answer(stdio_worker *w, handler *h, int i, const stdio_answer *a) {
  flight *f = &h->jobs[i];
  if (a->kind == STDIO_TOUCH) {
    f->deadline = cli_monotonic_s() + w->o->lease;
    if (!f->lost) {
      touch_job(w, f);
    }
    return;
  }
  h->backoff = RESTART_FIRST;
  if (f->told) {
    /* The answer to a cancel: nothing to record. */
  } else if (f->lost) {
    cli_error("work: job %" PRId64 ": its lease was lost, so its answer is ignored", f->id);
  } else if (a->kind == STDIO_ACK) {
    w->acks[w->nacks].id = f->id;
    w->acks[w->nacks++].token = f->token;
    w->acks_until = fmin(w->acks_until, f->lease_end);
  } else if (a->kind == STDIO_FAIL) {
    fail_job(w, f, a->error[0] != '\0' ? a->error : "failed", a);
  } else {
    report_finish(w, f->id, sqlq_release(w->db, f->id, f->token, a->seconds > 0 ? a->seconds : 0),
                  "release");
  }
  drop_job(h, i);
}

/* Act on one line (len bytes, newline excluded) that h wrote. */
static void on_line(stdio_worker *w, handler *h, const char *line, size_t len) {
  stdio_answer a;
  char why[200];
  int i;
  if (stdio_parse_answer(line, len, &a, why, sizeof why) != 0) {
    handler_broke(w, h, why);
  } else if (h->state == H_HELLO && a.kind != STDIO_HELLO) {
    handler_broke(w, h, "its first line is not a hello");
  } else if (a.kind == STDIO_HELLO && h->state != H_HELLO) {
    handler_broke(w, h, "a hello after the first line");
  } else if (a.kind == STDIO_HELLO && a.protocol != STDIO_PROTOCOL) {
    snprintf(why, sizeof why, "it speaks protocol %d, this worker %d", a.protocol, STDIO_PROTOCOL);
    handler_broke(w, h, why);
  } else if (a.kind == STDIO_HELLO) {
    h->state = H_READY;
  } else if ((i = find_job(h, a.id)) < 0) {
    snprintf(why, sizeof why, "an answer for job %" PRId64 ", which it does not hold", a.id);
    handler_broke(w, h, why);
  } else if (h->jobs[i].token != a.token) {
    snprintf(why, sizeof why, "the wrong token for job %" PRId64, a.id);
    handler_broke(w, h, why);
  } else {
    on_answer(w, h, i, &a);
  }
}

/* Read what h wrote and act on its complete lines, until its pipe is
** empty, it ended, or it was stopped. */
static void read_in(stdio_worker *w, handler *h) {
  while (h->from_fd >= 0) {
    size_t start = 0;
    char *nl;
    ssize_t n = read(h->from_fd, h->in + h->in_len, IN_CAP - h->in_len);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      if (n == 0 || errno != EAGAIN) {
        /* It closed its stdout: it is ending, and reaped; it gets
        ** --kill-after to do so. */
        close_fd(&h->from_fd);
        if (h->state != H_DYING) {
          h->state = H_DYING;
          h->timer = cli_monotonic_s() + w->o->kill_after;
        }
      }
      return;
    }
    h->in_len += (size_t)n;
    while (h->from_fd >= 0 && (nl = memchr(h->in + start, '\n', h->in_len - start)) != NULL) {
      on_line(w, h, h->in + start, (size_t)(nl - (h->in + start)));
      start = (size_t)(nl - h->in) + 1;
    }
    if (h->from_fd < 0) {
      return;
    }
    memmove(h->in, h->in + start, h->in_len - start);
    h->in_len -= start;
    if (h->in_len > STDIO_LINE_MAX) {
      char why[64];
      snprintf(why, sizeof why, "a line longer than %d bytes", STDIO_LINE_MAX);
      handler_broke(w, h, why);
    }
  }
}

/* Reap the handlers that ended: take the answers they wrote, fail the jobs
** they left, and start them again after their pause (unless stopping). */
static void reap(stdio_worker *w) {
  int i, status;
  for (i = 0; i < w->o->concurrency; i++) {
    handler *h = &w->h[i];
    char ended[48], why[128];
    if (h->pid == 0 || waitpid(h->pid, &status, WNOHANG) != h->pid) {
      continue;
    }
    read_in(w, h);
    work_describe_status(status, ended, sizeof ended);
    if (h->njobs > 0 || !h->told) {
      cli_error("work: handler %d (%s) ended (%s) with %d jobs in flight, which fail; it is "
                "restarted in %g s",
                h->num, w->o->cmd[0], ended, h->njobs, stopping(w) ? 0 : h->backoff);
    }
    snprintf(why, sizeof why, "handler %d ended (%s)", h->num, ended);
    fail_all(w, h, why);
    close_fd(&h->to_fd);
    close_fd(&h->from_fd);
    h->pid = 0;
    h->state = H_DOWN;
    h->timer = cli_monotonic_s() + h->backoff;
    h->backoff = fmin(h->backoff * 2, RESTART_MAX);
  }
}

/* Run the timers of h that are due: lease extensions, the deadlines of its
** jobs and of its hello, its SIGKILL, its restart. */
static void run_timers(stdio_worker *w, handler *h) {
  double now = cli_monotonic_s();
  int i;
  for (i = 0; i < h->njobs; i++) {
    if (!h->jobs[i].lost && h->jobs[i].next_touch <= now) {
      touch_job(w, &h->jobs[i]);
    }
  }
  if (h->state == H_READY) {
    for (i = 0; i < h->njobs; i++) {
      const flight *f = &h->jobs[i];
      if (f->deadline <= now || f->timeout_at <= now) {
        char why[160];
        snprintf(why, sizeof why, "no answer for job %" PRId64 " by its %s (%g s)", f->id,
                 f->deadline <= now ? "deadline" : "timeout",
                 f->deadline <= now ? w->o->lease : w->o->timeout);
        handler_broke(w, h, why);
        break;
      }
    }
  } else if (h->state == H_HELLO && h->timer <= now) {
    char why[64];
    snprintf(why, sizeof why, "no hello within %g s", fmax(w->o->lease, HELLO_TIMEOUT));
    handler_broke(w, h, why);
  } else if (h->state == H_DYING && !h->killed && h->timer <= now) {
    cli_kill_guarded(h->pid);
    h->killed = 1;
  } else if (h->state == H_DOWN && !stopping(w) && h->timer <= now) {
    start_handler(w, h);
  }
}

/* Seconds until the next timer is due (0 if overdue), -1 when none. */
static double until_next_timer(const stdio_worker *w) {
  double next = w->recheck_at > 0 ? w->recheck_at : INFINITY;
  int i, j;
  if (stopping(w) && !w->closing) {
    next = fmin(next, w->stop_at);
  }
  for (i = 0; i < w->o->concurrency; i++) {
    const handler *h = &w->h[i];
    for (j = 0; j < h->njobs; j++) {
      if (!h->jobs[j].lost) next = fmin(next, h->jobs[j].next_touch);
      if (h->state == H_READY) {
        next = fmin(next, fmin(h->jobs[j].deadline, h->jobs[j].timeout_at));
      }
    }
    if ((h->state == H_HELLO || (h->state == H_DYING && !h->killed) ||
         (h->state == H_DOWN && !stopping(w)))) {
      next = fmin(next, h->timer);
    }
  }
  return isinf(next) ? -1 : fmax(0, next - cli_monotonic_s());
}

/* The handler with the most room for jobs, or NULL when none has any. */
static handler *roomiest(stdio_worker *w) {
  handler *best = NULL;
  int i;
  for (i = 0; i < w->o->concurrency; i++) {
    handler *h = &w->h[i];
    if (h->state == H_READY && h->njobs < w->o->window &&
        (best == NULL || h->njobs < best->njobs)) {
      best = h;
    }
  }
  return best;
}

/* How many more jobs the handlers take.  An answered job whose ack is
** kept for a retry still holds its place in the acks (room for every job
** in flight): it counts against the room. */
static int room(const stdio_worker *w) {
  int i, n = 0;
  for (i = 0; i < w->o->concurrency; i++) {
    if (w->h[i].state == H_READY) n += w->o->window - w->h[i].njobs;
  }
  n -= (int)w->nacks;
  return n > 0 ? n : 0;
}

/* Send job, claimed at claimed_at, to h.  Returns 0, or -1 when memory ran
** out. */
static int send_job(stdio_worker *w, handler *h, const sqlq_job *job, double claimed_at) {
  flight *f;
  if (reserve_out(h, stdio_job_line_size(job, strlen(w->queue_json))) != 0) {
    return -1;
  }
  h->out_len += stdio_job_line(h->out + h->out_len, job, w->queue_json);
  f = &h->jobs[h->njobs++];
  f->id = job->id;
  f->token = job->token;
  f->deadline = claimed_at + w->o->lease;
  f->next_touch = claimed_at + w->o->lease / 3;
  f->lease_end = claimed_at + w->o->lease;
  f->timeout_at = w->o->timeout > 0 ? claimed_at + w->o->timeout : INFINITY;
  f->lost = 0;
  f->told = 0;
  return 0;
}

/* Note a claim that came back empty (or paused, or away): look again
** after a pause when woken for nothing, else wait for a job. */
static void claimed_nothing(stdio_worker *w, double pause) {
  w->due = 0;
  if (pause > 0) {
    w->recheck_at = cli_monotonic_s() + pause;
  }
}

/* Claim jobs for the room the handlers have, and send them. */
static void claim_and_send(stdio_worker *w) {
  sqlq_claim_options opts = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  size_t n = 0, i, max = (size_t)room(w);
  double claimed_at = cli_monotonic_s();
  int rc;
  if (w->o->batch > 0 && max > (size_t)w->o->batch) {
    max = (size_t)w->o->batch;
  }
  opts.lease = w->o->lease;
  rc = sqlq_claim(w->db, w->o->queue, max, &opts, &jobs, &n);
  if (rc == SQLQ_PAUSED || rc == SQLQ_BUSY || say_away(w, w->db, rc, "claim")) {
    if (rc == SQLQ_BUSY) cli_fail(w->db, rc, "claim");
    claimed_nothing(w, RECHECK_INTERVAL);
    return;
  }
  if (rc != SQLQ_OK) {
    stop_with(w, cli_fail(w->db, rc, "claim"));
    return;
  }
  if (w->away) {
    cli_error("work: the database answers again");
    w->away = 0;
  }
  for (i = 0; i < n; i++) {
    handler *h = roomiest(w);
    if (send_job(w, h, &jobs[i], claimed_at) != 0) {
      cli_error("work: out of memory");
      for (; i < n; i++) {
        report_finish(w, jobs[i].id, sqlq_release(w->db, jobs[i].id, jobs[i].token, 0), "release");
      }
      stop_with(w, EXIT_SOFTWARE);
    }
  }
  sqlq_jobs_free(jobs, n);
  for (i = 0; i < (size_t)w->o->concurrency; i++) {
    write_out(&w->h[i]);
  }
  if (n == 0 && w->woken) {
    w->idle = w->idle == 0 ? IDLE_FIRST : fmin(w->idle * 2, IDLE_MAX);
    claimed_nothing(w, w->idle);
  } else if (n < max) {
    w->idle = 0;
    claimed_nothing(w, 0);
  }
  w->woken = 0;
}

static int in_flight(const stdio_worker *w) {
  int i, n = 0;
  for (i = 0; i < w->o->concurrency; i++) {
    n += w->h[i].njobs;
  }
  return n;
}

static int running(const stdio_worker *w) {
  int i, n = 0;
  for (i = 0; i < w->o->concurrency; i++) {
    n += w->h[i].pid != 0;
  }
  return n;
}

/* Begin to stop: claim nothing more; the answers of the jobs in flight
** are waited for until grace seconds from now. */
static void begin_stop(stdio_worker *w, double grace) {
  if (!stopping(w)) {
    w->stop_at = cli_monotonic_s() + grace;
  }
}

/* Once stopping and no job is in flight or the grace ended: release what
** is still in flight and close the handlers' stdin, so that they end; they
** are SIGKILLed --kill-after later. */
static void close_handlers(stdio_worker *w) {
  int i, j;
  if (w->closing || (in_flight(w) > 0 && cli_monotonic_s() < w->stop_at)) {
    return;
  }
  w->closing = 1;
  for (i = 0; i < w->o->concurrency; i++) {
    handler *h = &w->h[i];
    for (j = 0; j < h->njobs; j++) {
      if (!h->jobs[j].lost) {
        report_finish(w, h->jobs[j].id, sqlq_release(w->db, h->jobs[j].id, h->jobs[j].token, 0),
                      "release");
      }
    }
    if (h->njobs > 0) {
      cli_error("work: handler %d: %d jobs still in flight after the grace period are released",
                h->num, h->njobs);
    }
    h->njobs = 0;
    close_fd(&h->to_fd);
    h->told = 1;
    if (h->pid != 0 && h->state != H_DYING) {
      h->state = H_DYING;
      h->timer = cli_monotonic_s() + w->o->kill_after;
    }
  }
}

/* Block in poll() on the pipes of the handlers, the signals and the waiter,
** for at most timeout seconds (negative: no limit), then read and write
** what is ready. */
static void poll_io(stdio_worker *w, double timeout) {
  struct pollfd *p = w->pollfds;
  int i, n = 2, ms = timeout < 0 ? -1 : (int)ceil(fmin(timeout, 86400.0) * 1000.0);
  p[0] = (struct pollfd){.fd = work_signals_fd(), .events = POLLIN};
  p[1] = (struct pollfd){.fd = w->wait_pipe[0], .events = POLLIN};
  for (i = 0; i < w->o->concurrency; i++) {
    handler *h = &w->h[i];
    p[n++] = (struct pollfd){.fd = h->from_fd, .events = POLLIN};
    p[n++] = (struct pollfd){.fd = h->out_len > 0 ? h->to_fd : -1, .events = POLLOUT};
  }
  if (poll(p, (nfds_t)n, ms) <= 0) {
    return;
  }
  for (i = 0; i < w->o->concurrency; i++) {
    handler *h = &w->h[i];
    if (p[2 + 2 * i].revents != 0) {
      read_in(w, h);
    }
    if (p[3 + 2 * i].revents != 0 && h->to_fd >= 0) {
      write_out(h);
    }
  }
}

/* Tell handler h that the watch found its job f no longer held:
** a cancel line; the handler's answer is then ignored. */
static void tell_cancel(handler *h, flight *f) {
  char line[STDIO_CANCEL_LINE_SIZE];
  size_t len = stdio_cancel_line(line, f->id, f->token);
  cli_error("work: job %" PRId64 ": no longer held (cancelled, or taken back); handler %d is told",
            f->id, h->num);
  f->lost = 1;
  f->told = 1;
  if (h->to_fd >= 0 && queue_out(h, line, len) != 0) {
    cli_error("work: out of memory");
  }
}

/* Tell the handlers of the jobs the watch found no longer held (cancelled,
** or taken back), then give the watch the jobs held now. */
static void watch_sync(stdio_worker *w) {
  size_t max = (size_t)w->o->concurrency * (size_t)w->o->window;
  size_t n = work_watch_take(w->watch, w->refs, max), k;
  int i, j;
  for (k = 0; k < n; k++) {
    for (i = 0; i < w->o->concurrency; i++) {
      handler *h = &w->h[i];
      for (j = 0; j < h->njobs; j++) {
        flight *f = &h->jobs[j];
        if (!f->told && f->id == w->refs[k].id && f->token == w->refs[k].token) {
          tell_cancel(h, f);
        }
      }
    }
  }
  for (i = 0, n = 0; i < w->o->concurrency; i++) {
    const handler *h = &w->h[i];
    for (j = 0; j < h->njobs; j++) {
      if (!h->jobs[j].lost) {
        w->refs[n].id = h->jobs[j].id;
        w->refs[n++].token = h->jobs[j].token;
      }
    }
  }
  work_watch_set(w->watch, w->refs, n);
}

/* Whether a draining worker is done: nothing in flight, and the queue has
** no ready, scheduled or running job. */
static int drained(stdio_worker *w) {
  int empty, rc;
  if (!w->o->drain || w->due || in_flight(w) > 0) {
    return 0;
  }
  rc = work_queue_empty(w->db, w->o->queue, &empty);
  if (rc != SQLQ_OK && !say_away(w, w->db, rc, "stats")) {
    stop_with(w, cli_fail(w->db, rc, "stats"));
  }
  return rc == SQLQ_OK && empty;
}

static int work_loop(stdio_worker *w) {
  for (;;) {
    int i;
    work_signals_drain();
    take_wait(w);
    reap(w);
    watch_sync(w);
    if (work_stop_requested() || w->code != 0) {
      begin_stop(w, work_stop_requested() ? w->o->grace : 0);
    }
    if (w->recheck_at > 0 && w->recheck_at <= cli_monotonic_s()) {
      w->recheck_at = 0;
      w->due = 1;
    }
    for (i = 0; i < w->o->concurrency; i++) {
      run_timers(w, &w->h[i]);
    }
    flush_acks(w, 0);
    if (stopping(w)) {
      close_handlers(w);
      if (running(w) == 0) {
        flush_acks(w, 1);
        return w->code;
      }
    } else if (w->due && room(w) > 0) {
      claim_and_send(w);
      poll_io(w, 0);
      continue;
    } else if (drained(w)) {
      begin_stop(w, 0);
      continue;
    } else if (!w->due && w->recheck_at == 0 && room(w) > 0) {
      ask_wait(w, w->o->drain ? RECHECK_INTERVAL : -1);
    }
    poll_io(w, until_next_timer(w));
  }
}

/* Make w's handlers, buffers and environment (w->queue_json is set
** already).  Returns 0 or -1 (memory ran out). */
static int setup(stdio_worker *w, const cli_global *g) {
  int i, n = w->o->concurrency;
  w->env = cli_command_env(g, w->o->pass_url, NULL, NULL);
  w->h = calloc((size_t)n, sizeof *w->h);
  w->close_fds = calloc((size_t)(2 * n + 2), sizeof *w->close_fds);
  w->pollfds = calloc((size_t)(2 * n + 2), sizeof *w->pollfds);
  w->acks = calloc((size_t)n * (size_t)w->o->window, sizeof *w->acks);
  w->refs = calloc((size_t)n * (size_t)w->o->window, sizeof *w->refs);
  if (w->queue_json == NULL || w->env == NULL || w->h == NULL || w->close_fds == NULL ||
      w->pollfds == NULL || w->acks == NULL || w->refs == NULL) {
    return -1;
  }
  for (i = 0; i < n; i++) {
    handler *h = &w->h[i];
    h->num = i + 1;
    h->to_fd = h->from_fd = -1;
    h->backoff = RESTART_FIRST;
    h->in = malloc(IN_CAP);
    h->jobs = calloc((size_t)w->o->window, sizeof *h->jobs);
    if (h->in == NULL || h->jobs == NULL) {
      return -1;
    }
  }
  return 0;
}

static void teardown(stdio_worker *w) {
  int i;
  for (i = 0; w->h != NULL && i < w->o->concurrency; i++) {
    close_fd(&w->h[i].to_fd);
    close_fd(&w->h[i].from_fd);
    free(w->h[i].in);
    free(w->h[i].out);
    free(w->h[i].jobs);
  }
  free(w->h);
  free(w->close_fds);
  free(w->pollfds);
  free(w->acks);
  free(w->refs);
  free(w->env);
  free(w->queue_json);
}

int work_stdio_run(const cli_global *g, const work_options *o) {
  stdio_worker w;
  sigset_t pipe_set, old;
  int code = EXIT_SOFTWARE;
  json_t *name = json_string(o->queue);
  /* The protocol's JSON carries the queue's name as a string: UTF-8 only. */
  if (name == NULL) return cli_usage_error("work", "--stdio needs a queue name in UTF-8");
  memset(&w, 0, sizeof w);
  w.o = o;
  /* The name as the job lines carry it (NULL when memory ran out: setup
  ** fails then). */
  w.queue_json = json_dumps(name, JSON_ENCODE_ANY | JSON_COMPACT);
  json_decref(name);
  w.due = 1;
  w.acks_until = INFINITY;
  w.wait_pipe[0] = w.wait_pipe[1] = -1;
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  /* A handler that ended makes writes to its pipe fail with EPIPE rather
  ** than kill the worker; its commands start with every signal unblocked
  ** (guardian.c). */
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  if (setup(&w, g) != 0) {
    cli_error("work: out of memory");
  } else if ((w.db = cli_open(g, &code)) != NULL && (code = start_waiter(&w, g)) == 0 &&
             (w.watch = work_watch_start(g, o->queue, &code)) != NULL) {
    if (work_signals_install(w.wdb) != 0) {
      cli_error("work: cannot set up signals: %s", strerror(errno));
      code = EXIT_SOFTWARE;
    } else {
      int i;
      for (i = 0; i < o->concurrency; i++) {
        start_handler(&w, &w.h[i]);
      }
      code = work_loop(&w);
    }
    work_signals_uninstall();
  }
  work_watch_stop(w.watch);
  stop_waiter(&w);
  sqlq_close(w.wdb);
  sqlq_close(w.db);
  teardown(&w);
  {
    /* Take the SIGPIPEs that writes to ended handlers left pending. */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) > 0) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);
  return code;
}
