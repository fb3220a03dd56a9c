/*
** work_common.c -- what the two modes of `sqlq work` share (work_common.h):
** the signals that stop a worker and wake its loop through a self-pipe,
** and small helpers.
*/
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work_common.h"

/* State the signal handler reaches.  signal_db and the pipe's write end
** are set by work_signals_install() and taken away by
** work_signals_uninstall(),
** which then waits until no handler uses them (signal_users counts the
** handlers running, on any thread) before the worker closes them. */
static volatile sig_atomic_t stop_requested;
static _Atomic(sqlq_db *) signal_db;
static atomic_int signal_wake_fd = -1;
static atomic_int signal_users;
static int wake_pipe[2] = {-1, -1};

void work_signals_poke(void) {
  int fd;
  ssize_t ignored;
  atomic_fetch_add(&signal_users, 1);
  sqlq_interrupt(atomic_load(&signal_db));
  if ((fd = atomic_load(&signal_wake_fd)) >= 0) {
    ignored = write(fd, "", 1);
    (void)ignored;
  }
  atomic_fetch_sub(&signal_users, 1);
}

static void on_signal(int sig) {
  int saved = errno;
  if (sig != SIGCHLD) {
    stop_requested = 1;
  }
  work_signals_poke();
  errno = saved;
}

int work_signals_install(sqlq_db *db) {
  static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT};
  struct sigaction sa;
  size_t i;
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return -1;
  }
  stop_requested = 0;
  atomic_store(&signal_wake_fd, wake_pipe[1]);
  atomic_store(&signal_db, db);
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

void work_signals_uninstall(void) {
  atomic_store(&signal_db, NULL);
  atomic_store(&signal_wake_fd, -1);
  while (atomic_load(&signal_users) > 0) {
    sched_yield();
  }
  close(wake_pipe[0]);
  close(wake_pipe[1]);
  wake_pipe[0] = wake_pipe[1] = -1;
}

int work_signals_fd(void) {
  return wake_pipe[0];
}

int work_stop_requested(void) {
  return stop_requested;
}

void work_signals_drain(void) {
  char buf[64];
  while (read(wake_pipe[0], buf, sizeof buf) > 0) {}
}

void work_sleep_for_event(double timeout) {
  struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
  int ms = timeout < 0 ? -1 : (int)ceil(fmin(timeout, 86400.0) * 1000.0);
  poll(&p, 1, ms);
}

void work_describe_status(int status, char *out, size_t size) {
  if (WIFEXITED(status)) {
    snprintf(out, size, "exit status %d", WEXITSTATUS(status));
  } else {
    snprintf(out, size, "killed by signal %d", WTERMSIG(status));
  }
}

int work_queue_empty(sqlq_db *db, const char *queue, int *empty) {
  sqlq_queue_stats *st = NULL;
  size_t n = 0, i;
  int rc = sqlq_stats(db, queue, &st, &n);
  *empty = 1;
  for (i = 0; rc == SQLQ_OK && i < n; i++) {
    *empty = *empty && st[i].ready + st[i].scheduled + st[i].running == 0;
  }
  sqlq_queue_stats_free(st, n);
  return rc;
}
