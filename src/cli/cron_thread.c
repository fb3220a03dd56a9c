/*
** cron_thread.c -- a thread that runs scheduling passes (sqlq_cron_tick())
** on a connection of its own: `sqlq cron run`, and every `sqlq work`
** unless --no-cron.
**
** After each pass it sleeps until the earliest next tick, but at most
** CRON_RECHECK seconds (a schedule added meanwhile, by another process, is
** seen within that) and at least CRON_MIN_SLEEP (the next tick comes from
** the database's clock, which may run ahead of this host's).  A failed
** pass is reported in one line, again only when the message changes (a
** worker's, not when the database is away, which the worker says, nor when
** its schema is older than schedules), and the passes go on: a worker keeps
** working while its database is away or not upgraded.
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The longest and the shortest sleep between two passes, in seconds. */
#define CRON_RECHECK 1.0
#define CRON_MIN_SLEEP 0.05

struct cli_cron {
  sqlq_db *db;
  const char *who; /* the command, for messages */
  int worker;      /* SQLQ_UNAVAILABLE and SQLQ_SCHEMA are not reported */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond; /* on CLOCK_MONOTONIC */
  int stop;            /* under lock */
  char said[256];      /* the last failure reported; "" after a success */
};

/* Report a failed pass, unless its message is the one reported last. */
static void report(cli_cron *c, int rc) {
  char msg[256];
  if (c->worker && (rc == SQLQ_UNAVAILABLE || rc == SQLQ_SCHEMA)) return;
  snprintf(msg, sizeof msg, "%s: %s", sqlq_status_name(rc), sqlq_errmsg(c->db));
  if (strcmp(msg, c->said) == 0) return;
  snprintf(c->said, sizeof c->said, "%s", msg);
  cli_error("%s: scheduling pass: %s", c->who, sqlq_errmsg(c->db));
}

/* Seconds to sleep after a pass that said the next tick is at next_us. */
static double sleep_after(int64_t next_us) {
  double s = next_us > 0 ? (double)(next_us - cli_realtime_us()) / 1e6 : CRON_RECHECK;
  return s < CRON_MIN_SLEEP ? CRON_MIN_SLEEP : s > CRON_RECHECK ? CRON_RECHECK : s;
}

static void *run(void *arg) {
  cli_cron *c = arg;
  pthread_mutex_lock(&c->lock);
  while (!c->stop) {
    pthread_mutex_unlock(&c->lock);
    int64_t next_us = 0;
    int rc = sqlq_cron_tick(c->db, 0, NULL, &next_us);
    if (rc == SQLQ_OK)
      c->said[0] = '\0';
    else
      report(c, rc);
    struct timespec until = cli_deadline(rc == SQLQ_OK ? sleep_after(next_us) : CRON_RECHECK);
    pthread_mutex_lock(&c->lock);
    while (!c->stop && pthread_cond_timedwait(&c->cond, &c->lock, &until) == 0) {}
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

cli_cron *cli_cron_start(const cli_global *g, const char *who, int worker, int *exit_code) {
  cli_cron *c = calloc(1, sizeof *c);
  pthread_condattr_t attr;
  sigset_t all, old;
  if (c == NULL) {
    cli_error("%s: out of memory", who);
    *exit_code = EXIT_SOFTWARE;
    return NULL;
  }
  c->who = who;
  c->worker = worker;
  if ((c->db = cli_open(g, exit_code)) == NULL) {
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->lock, NULL);
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&c->cond, &attr);
  pthread_condattr_destroy(&attr);
  /* The caller's thread takes the signals. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int err = pthread_create(&c->thread, NULL, run, c);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    cli_error("%s: cannot start the scheduling thread: %s", who, strerror(err));
    *exit_code = EXIT_SOFTWARE;
    c->stop = 1;
    cli_cron_stop(c);
    return NULL;
  }
  return c;
}

void cli_cron_stop(cli_cron *c) {
  if (c == NULL) return;
  pthread_mutex_lock(&c->lock);
  int started = !c->stop;
  c->stop = 1;
  pthread_cond_signal(&c->cond);
  pthread_mutex_unlock(&c->lock);
  if (started) pthread_join(c->thread, NULL);
  pthread_cond_destroy(&c->cond);
  pthread_mutex_destroy(&c->lock);
  sqlq_close(c->db);
  free(c);
}
