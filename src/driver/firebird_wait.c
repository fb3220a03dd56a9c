/*
** firebird_wait.c -- wake-ups of the Firebird driver.
**
** For now a waiter looks again every poll_interval seconds (URL option,
** default 1 s), or at once when this process wakes it.
*/
#include <poll.h>

#include "firebird_int.h"

int sqlq__fb_wait_prepare(sqlq_db *db, const char *channel) {
  (void)db;
  (void)channel;
  return SQLQ_OK;
}

int sqlq__fb_wait(sqlq_db *db, const char *channel, int wake_fd, int64_t deadline_ns) {
  (void)channel;
  int64_t until = sqlq__monotonic_ns() + (int64_t)(FB(db)->poll_interval * 1e9);
  int timed = deadline_ns >= 0 && deadline_ns < until;
  struct pollfd p = {.fd = wake_fd, .events = POLLIN};
  int r = poll(&p, wake_fd >= 0 ? 1 : 0, sqlq__poll_ms(timed ? deadline_ns : until));
  if (r == 0 && timed) return SQLQ_TIMEOUT;
  return SQLQ_OK;
}

int sqlq__fb_notify(sqlq_db *db, const char *channel, int n) {
  (void)db;
  (void)channel;
  (void)n;
  return SQLQ_OK;
}

void sqlq__fb_forget_wait(sqlq_db *db) {
  (void)db;
}
