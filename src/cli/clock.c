/*
** clock.c -- time for the commands of the sqlq tool: the monotonic clock
** (for timeouts, deadlines and measured durations, which a change of the
** wall clock must not move), the wall clock (for times that cross
** processes and hosts), sleeps, and deadlines for pthread_cond_timedwait().
*/
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"

/* The longest wait a deadline stands for: 100 years, as good as forever,
** and far from time_t's overflow. */
#define CLI_DEADLINE_MAX_S (86400.0 * 365 * 100)

int64_t cli_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double cli_monotonic_s(void) {
  return (double)cli_monotonic_ns() / 1e9;
}

int64_t cli_realtime_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void cli_sleep_us(long us) {
  struct timespec ts = {us / 1000000L, (us % 1000000L) * 1000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

struct timespec cli_deadline(double seconds) {
  struct timespec until;
  double whole;
  if (seconds > CLI_DEADLINE_MAX_S) {
    seconds = CLI_DEADLINE_MAX_S;
  }
  clock_gettime(CLOCK_MONOTONIC, &until);
  seconds += until.tv_nsec / 1e9;
  whole = (double)(int64_t)seconds;
  until.tv_sec += (time_t)whole;
  until.tv_nsec = (long)((seconds - whole) * 1e9);
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  return until;
}
