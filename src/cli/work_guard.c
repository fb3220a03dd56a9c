/*
** work_guard.c -- the lease guard of `sqlq work` (work_common.h): a thread
** that signals the command of each job whose lease ran out, at the moment
** it runs out, whatever the worker's loop is doing.
**
** The loop extends leases with calls to the database, and a call on a link
** that drops every packet returns only when TCP gives up on it (30 s with
** the drivers' keepalives, docs/scale.md; about 15 minutes without), long
** after the lease ran out and another worker may have claimed the job.  The
** guard keeps the promise of docs/architecture.md that a command is
** signalled no later than its lease ends: it sends SIGTERM to the command's
** guardian then (which passes it on), and SIGKILL to the command's tree
** kill_after seconds later, unless the loop got there first.
**
** The loop gives the guard each command's guardian and lease end
** (work_guard_set), and reaps guardians through the guard
** (work_guard_reap), under its lock, so that the guard never signals a pid
** that was reaped and could have been reused.  At its next turn the loop
** finds the lease lost itself (work_guard_fired) and stops the command as
** it always does: its SIGTERM and SIGKILL come again, which changes
** nothing.
*/
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "guardian.h"
#include "work_common.h"

/* What the guard knows of one slot of the loop. */
typedef struct guarded {
  pid_t pid;        /* the command's guardian; 0: none */
  double lease_end; /* monotonic seconds */
  int fired;        /* 0: not yet; 1: SIGTERM sent; 2: SIGKILL sent too */
} guarded;

struct work_guard {
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t cond; /* on CLOCK_MONOTONIC */
  double kill_after;
  /* Under lock. */
  guarded *slots;
  size_t n;
  int stop;
};

/* With g locked: signal the commands whose time came, and return when the
** next one comes (INFINITY: none). */
static double fire_due(work_guard *g) {
  double now = cli_monotonic_s(), next = INFINITY;
  for (size_t i = 0; i < g->n; i++) {
    guarded *s = &g->slots[i];
    if (s->pid == 0 || s->fired == 2) continue;
    if (s->fired == 0 && s->lease_end <= now) {
      /* A command that ended within its lease, and whose guardian waits to
      ** be reaped, is left for the loop to answer for (its ack may still be
      ** taken, or be refused). */
      siginfo_t info = {0};
      if (waitid(P_PID, (id_t)s->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == s->pid) {
        s->pid = 0;
        continue;
      }
      kill(s->pid, SIGTERM);
      s->fired = 1;
    }
    if (s->fired == 1 && s->lease_end + g->kill_after <= now) {
      cli_kill_guarded(s->pid);
      s->fired = 2;
      continue;
    }
    next = fmin(next, s->fired == 0 ? s->lease_end : s->lease_end + g->kill_after);
  }
  return next;
}

static void *guard_main(void *arg) {
  work_guard *g = arg;
  pthread_mutex_lock(&g->lock);
  while (!g->stop) {
    double next = fire_due(g);
    if (isinf(next)) {
      pthread_cond_wait(&g->cond, &g->lock);
    } else {
      struct timespec until = cli_deadline(next - cli_monotonic_s());
      pthread_cond_timedwait(&g->cond, &g->lock, &until);
    }
  }
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

work_guard *work_guard_start(size_t n, double kill_after, int *exit_code) {
  work_guard *g = calloc(1, sizeof *g);
  pthread_condattr_t attr;
  sigset_t all, old;
  if (g == NULL || (g->slots = calloc(n, sizeof *g->slots)) == NULL) {
    free(g);
    cli_error("work: out of memory");
    *exit_code = EXIT_SOFTWARE;
    return NULL;
  }
  g->n = n;
  g->kill_after = kill_after;
  pthread_mutex_init(&g->lock, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&g->cond, &attr);
  pthread_condattr_destroy(&attr);
  /* The caller's thread takes the signals. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int err = pthread_create(&g->thread, NULL, guard_main, g);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    cli_error("work: cannot start the lease guard: %s", strerror(err));
    *exit_code = EXIT_SOFTWARE;
    work_guard_stop(g);
    return NULL;
  }
  g->started = 1;
  return g;
}

void work_guard_set(work_guard *g, size_t i, pid_t pid, double lease_end) {
  pthread_mutex_lock(&g->lock);
  guarded *s = &g->slots[i];
  if (s->pid != pid) s->fired = 0;
  s->pid = pid;
  s->lease_end = lease_end;
  pthread_cond_signal(&g->cond);
  pthread_mutex_unlock(&g->lock);
}

int work_guard_fired(work_guard *g, size_t i) {
  pthread_mutex_lock(&g->lock);
  int fired = g->slots[i].fired != 0;
  pthread_mutex_unlock(&g->lock);
  return fired;
}

pid_t work_guard_reap(work_guard *g, int *status) {
  pthread_mutex_lock(&g->lock);
  pid_t pid = waitpid(-1, status, WNOHANG);
  for (size_t i = 0; pid > 0 && i < g->n; i++) {
    if (g->slots[i].pid == pid) g->slots[i].pid = 0;
  }
  pthread_mutex_unlock(&g->lock);
  return pid;
}

void work_guard_stop(work_guard *g) {
  if (g == NULL) return;
  if (g->started) {
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
  }
  pthread_cond_destroy(&g->cond);
  pthread_mutex_destroy(&g->lock);
  free(g->slots);
  free(g);
}
