/*
** work_watch.c -- the watch of `sqlq work` (work_common.h): a thread, on a
** connection of its own, that waits in sqlq_wait_lost() on the jobs the
** worker runs, so that a cancel (`sqlq cancel`) reaches the worker within
** the wake-up latency instead of at its next lease extension.
**
** The loop gives the watch the jobs it holds whenever they change
** (work_watch_set); the thread takes the new set at most every
** WATCH_MIN_GAP seconds, so that a worker of many short jobs costs the
** database at most that many rounds of its lookups (one query per job).  A
** job the thread finds no longer held is put aside for the loop
** (work_watch_take), which is woken through the self-pipe of the signals
** (work_signals_poke) and stops its command.
*/
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "work_common.h"

/* The least time between two looks of the watch, in seconds: at most this
** is added to the time a cancel takes to reach the worker. */
#define WATCH_MIN_GAP 0.1

/* How long the watch pauses after a wait failed, in seconds (a database
** away: the worker says so; the library reconnects at the next wait). */
#define WATCH_RETRY 1.0

struct work_watch {
  sqlq_db *db;
  const char *queue;
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t cond; /* on CLOCK_MONOTONIC */
  /* Under lock: the jobs to watch (set by the loop), the jobs found lost
  ** and not yet taken, and whether to stop. */
  sqlq_job_ref *set, *lost;
  size_t n_set, set_cap, n_lost, lost_cap;
  int stop;
  /* The thread's own: the copy of the set it waits on, and its flags. */
  sqlq_job_ref *mine;
  int *flags;
  size_t mine_cap, flags_cap;
};

/* Make room for n elements of size bytes in *p, of *cap now.  Returns 0,
** or -1 when memory ran out (*p is as it was). */
static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n <= *cap) return 0;
  size_t want = n > 2 * *cap ? n : 2 * *cap;
  void *bigger = realloc(*p, want * size);
  if (bigger == NULL) return -1;
  *p = bigger;
  *cap = want;
  return 0;
}

/* Wait on the cond of w, which is locked, for at most seconds, or until
** stop: a change of the set does not end it. */
static void pause_locked(work_watch *w, double seconds) {
  struct timespec until = cli_deadline(seconds);
  while (!w->stop && pthread_cond_timedwait(&w->cond, &w->lock, &until) == 0) {}
}

/* With w locked: put the jobs of mine[0..n) that flags says are lost aside
** for the loop, when they are still in the set (the loop may have dropped
** them meanwhile, as it does the jobs it finished), and drop them from the
** set.  Returns how many. */
static size_t put_aside(work_watch *w, size_t n) {
  size_t found = 0;
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; w->flags[i] && k < w->n_set; k++) {
      if (w->set[k].id != w->mine[i].id || w->set[k].token != w->mine[i].token) continue;
      if (grow((void **)&w->lost, &w->lost_cap, w->n_lost + 1, sizeof *w->lost) == 0) {
        w->lost[w->n_lost++] = w->set[k];
        found++;
      }
      w->set[k] = w->set[--w->n_set];
      break;
    }
  }
  return found;
}

static void *watch_main(void *arg) {
  work_watch *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->stop) {
    while (!w->stop && w->n_set == 0) pthread_cond_wait(&w->cond, &w->lock);
    if (w->stop) break;
    size_t n = w->n_set;
    int rc = SQLQ_NOMEM;
    double next = cli_monotonic_s() + WATCH_MIN_GAP;
    if (grow((void **)&w->mine, &w->mine_cap, n, sizeof *w->mine) == 0 &&
        grow((void **)&w->flags, &w->flags_cap, n, sizeof *w->flags) == 0) {
      memcpy(w->mine, w->set, n * sizeof *w->mine);
      pthread_mutex_unlock(&w->lock);
      rc = sqlq_wait_lost(w->db, w->queue, w->mine, n, -1, w->flags);
      pthread_mutex_lock(&w->lock);
    }
    if (rc == SQLQ_OK && put_aside(w, n) > 0) work_signals_poke();
    if (rc != SQLQ_OK && rc != SQLQ_INTERRUPTED) next += WATCH_RETRY;
    pause_locked(w, next - cli_monotonic_s());
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

work_watch *work_watch_start(const cli_global *g, const char *queue, int *exit_code) {
  work_watch *w = calloc(1, sizeof *w);
  pthread_condattr_t attr;
  sigset_t all, old;
  if (w == NULL) {
    cli_error("work: out of memory");
    *exit_code = EXIT_SOFTWARE;
    return NULL;
  }
  w->queue = queue;
  pthread_mutex_init(&w->lock, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cond, &attr);
  pthread_condattr_destroy(&attr);
  if ((w->db = cli_open(g, exit_code)) == NULL) {
    work_watch_stop(w);
    return NULL;
  }
  /* The caller's thread takes the signals. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int err = pthread_create(&w->thread, NULL, watch_main, w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    cli_error("work: cannot start the watching thread: %s", strerror(err));
    *exit_code = EXIT_SOFTWARE;
    work_watch_stop(w);
    return NULL;
  }
  w->started = 1;
  return w;
}

void work_watch_set(work_watch *w, const sqlq_job_ref *refs, size_t n) {
  pthread_mutex_lock(&w->lock);
  int same = n == w->n_set && (n == 0 || memcmp(refs, w->set, n * sizeof *refs) == 0);
  if (!same && grow((void **)&w->set, &w->set_cap, n, sizeof *w->set) == 0) {
    if (n) memcpy(w->set, refs, n * sizeof *refs);
    w->n_set = n;
    pthread_cond_signal(&w->cond);
    sqlq_interrupt(w->db);
  }
  pthread_mutex_unlock(&w->lock);
}

size_t work_watch_take(work_watch *w, sqlq_job_ref *out, size_t max) {
  pthread_mutex_lock(&w->lock);
  size_t n = w->n_lost < max ? w->n_lost : max;
  if (n) memcpy(out, w->lost, n * sizeof *out);
  if (w->n_lost > n) memmove(w->lost, w->lost + n, (w->n_lost - n) * sizeof *out);
  w->n_lost -= n;
  pthread_mutex_unlock(&w->lock);
  return n;
}

void work_watch_stop(work_watch *w) {
  if (w == NULL) return;
  pthread_mutex_lock(&w->lock);
  w->stop = 1;
  pthread_cond_signal(&w->cond);
  sqlq_interrupt(w->db);
  pthread_mutex_unlock(&w->lock);
  if (w->started) pthread_join(w->thread, NULL);
  sqlq_close(w->db);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  free(w->set);
  free(w->lost);
  free(w->mine);
  free(w->flags);
  free(w);
}
