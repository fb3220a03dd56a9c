/*
** work_common.h -- what the two modes of `sqlq work` share: the options
** (parsed by cmd_work.c), the signals that stop a worker and wake its loop
** (a self-pipe), and small helpers.  cmd_work.c runs a command per job;
** work_stdio.c feeds jobs to long-lived handlers (docs/protocol.md).
*/
#ifndef SQLQ_CLI_WORK_COMMON_H
#define SQLQ_CLI_WORK_COMMON_H

#include <stddef.h>

#include "cli.h"

/* The options of `sqlq work`.  The strings point into argv. */
typedef struct work_options {
  const char *queue;
  char **cmd; /* NULL-terminated */
  int concurrency;
  double lease;
  double backoff;
  double kill_after;
  double timeout; /* the longest run of a command or a --stdio job; 0: none */
  int drain;
  int pass_url;
  int stdio;    /* --stdio: work_stdio.c */
  int window;   /* --stdio: jobs in flight per handler */
  int batch;    /* --stdio: most jobs one claim takes */
  double grace; /* --stdio: after SIGTERM, how long answers are waited for */
  int no_cron;  /* --no-cron: no scheduling passes (cron_thread.c) */
} work_options;

/* `sqlq work --stdio`: run the worker of o on g's database.  Returns the
** exit code. */
int work_stdio_run(const cli_global *g, const work_options *o);

/* Make the self-pipe and route SIGCHLD, SIGTERM and SIGINT to a handler
** that writes to it and calls sqlq_interrupt(db) (db may be NULL);
** SIGTERM and SIGINT also set the stop flag.  Returns 0 or -1. */
int work_signals_install(sqlq_db *db);

/* Take db and the self-pipe away from the signal handler (which stays
** installed) and close the pipe: the caller may then close db. */
void work_signals_uninstall(void);

/* The self-pipe's read end, for poll(), and reading all it holds. */
int work_signals_fd(void);
void work_signals_drain(void);

/* Whether SIGTERM or SIGINT arrived since work_signals_install(). */
int work_stop_requested(void);

/* Block until a signal arrives or timeout seconds pass (negative: no
** limit). */
void work_sleep_for_event(double timeout);

/* Write how a process with wait status status ended into out. */
void work_describe_status(int status, char *out, size_t size);

/* Whether queue has no ready, scheduled or running job, into *empty.
** Returns the status of sqlq_stats(). */
int work_queue_empty(sqlq_db *db, const char *queue, int *empty);

/* Wake the loop as a signal does (the self-pipe and sqlq_interrupt() of
** the handle given to work_signals_install()), from any thread. */
void work_signals_poke(void);

/* The watch (work_watch.c): a thread on a connection of its own (opened on
** g's URL) that waits in sqlq_wait_lost() on the jobs of queue the loop
** holds, and puts aside those no longer held (cancelled, or taken back),
** waking the loop with work_signals_poke().  NULL on failure, with one line
** said and *exit_code set.  queue must outlive the watch. */
typedef struct work_watch work_watch;
work_watch *work_watch_start(const cli_global *g, const char *queue, int *exit_code);

/* The jobs refs[0..n) are those to watch from now on (copied); in the same
** order each time for the same jobs, so that an unchanged set costs
** nothing. */
void work_watch_set(work_watch *w, const sqlq_job_ref *refs, size_t n);

/* Move up to max of the jobs found no longer held into out; returns how
** many. */
size_t work_watch_take(work_watch *w, sqlq_job_ref *out, size_t max);

/* Stop the thread and free w (NULL is fine). */
void work_watch_stop(work_watch *w);

/* The lease guard (work_guard.c): a thread that sends SIGTERM to the
** guardian of a command whose lease ran out, at the moment it runs out,
** and SIGKILLs its tree kill_after seconds later, even while the loop is
** blocked in a call to the database.  n slots, numbered from 0.  NULL on
** failure, with one line said and *exit_code set. */
typedef struct work_guard work_guard;
work_guard *work_guard_start(size_t n, double kill_after, int *exit_code);

/* Slot i runs the command whose guardian is pid (0: none) and whose lease
** lasts until lease_end (monotonic seconds).  A new pid starts unsignalled;
** the same pid stays signalled once it was. */
void work_guard_set(work_guard *g, size_t i, pid_t pid, double lease_end);

/* Whether the guard signalled the command of slot i because its lease ran
** out. */
int work_guard_fired(work_guard *g, size_t i);

/* waitpid(-1, status, WNOHANG), with the reaped pid forgotten by the guard
** before it can signal it again. */
pid_t work_guard_reap(work_guard *g, int *status);

/* Stop the thread and free g (NULL is fine). */
void work_guard_stop(work_guard *g);

#endif /* SQLQ_CLI_WORK_COMMON_H */
