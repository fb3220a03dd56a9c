/*
** mysql_wait.c -- waiting for jobs: a wait on the server that a
** producer's KILL QUERY cuts short.
**
** MySQL and MariaDB have no notifications.  A waiting handle runs, in
** autocommit,
**
**   SELECT /\*sqlq-wait:TAG*\/ IF(d <= 0, 1, 2 + GET_LOCK(@sqlq_wait_block, LEAST(COALESCE(d, L), L)))
**
** where d is the seconds until its queue next needs a worker (computed in
** the same statement, from the queue set in @sqlq_wait_queue by
** wait_prepare), L is the URL option wake_interval (2 s by default) or
** less when the caller's deadline is nearer, and TAG is MD5(database/queue).
** The lock @sqlq_wait_block ("sqlq-wait:" and 16 random hex digits) is held
** by the handle's second session (mysql_lock.c), so GET_LOCK waits the
** whole time.  The answer 1 means a job is due; 2 means the time ran out,
** and the statement runs again; error 1317 or NULL means it was
** interrupted: woken.
**
** Why GET_LOCK and not SLEEP: KILL of a SLEEP() sometimes stalls the killer
** until the sleep ends by itself (measured: 3 kills in 8 took 2 s, the
** rest under 2 ms; see docs/mariadb-wakeups.md), where KILL of a lock wait
** took 0.6 to 0.8 ms every time.
**
** A producer, after its COMMIT, calls sqlq_wake(queue, n) (mysql_sql.c),
** which finds up to n such statements of the queue in the process list and
** interrupts each with KILL QUERY ID.  A commit before the waiter's
** statement started is seen by its d; one after it finds the statement in
** the process list.  Producers that insert with plain SQL call nothing:
** their jobs are seen within L, when the statement runs again.  An idle
** waiter thus sends one statement every L seconds.
**
** A ring's followers wait the same way on the ring's channel: d is 0 when
** the ring's counter moved since the mark wait_prepare took before the
** core's check, else NULL, and a push wakes every one of them (n
** SQLQ__WAKE_ALL becomes the largest INT).
**
** With the URL option wake=poll, producers call nothing either, and
** waiters only look again every L seconds (for servers or proxies where
** KILL cannot reach the waiters' sessions).
**
** The handle's eventfd is watched beside the session's socket.  When
** sqlq_interrupt() fired it, the handle interrupts its own statement
** through its second session.  A local wake-up (a commit in this process)
** is left to the producer's sqlq_wake, which follows it, so that two
** sessions never kill one statement at once.
*/
#include <errno.h>
#include <limits.h>
#include <mysqld_error.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mysql_int.h"

/* How long past the statement's own limit to wait for its answer before
** calling the session lost. */
#define ANSWER_GRACE_MS 10000

void sqlq__my_forget_wait(mysql_db *m) {
  free(m->wait_queue);
  m->wait_queue = NULL;
  m->wait_tag[0] = '\0';
}

/* Make sure the second session holds this handle's block lock, the one
** its wait statement waits for. */
static int hold_block(sqlq_db *db, mysql_db *m) {
  if (m->block_held) return SQLQ_OK;
  if (m->block[0] == '\0') {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint64_t)sqlq__monotonic_ns();
    snprintf(m->block, sizeof m->block, "sqlq-wait:%016llx", (unsigned long long)r);
  }
  MYSQL *aux = sqlq__my_aux(db);
  if (aux == NULL) return db->errcode;
  double now = 0;
  long long got = 0;
  int rc = sqlq__my_run_on_aux(db, aux, "SELECT GET_LOCK(?, ?)", m->block, &now, &got);
  if (rc != SQLQ_OK) {
    sqlq__my_check_aux(m);
    return rc;
  }
  if (got != 1)
    return sqlq__error(db, SQLQ_ERROR, "mysql: the wait lock %s is held elsewhere", m->block);
  m->block_held = 1;
  return SQLQ_OK;
}

/* A channel whose name starts with a control character is a ring's
** ("\x1Ering:NAME", see ring.c); any other is a queue's. */
static int is_ring(const char *channel) {
  return (unsigned char)channel[0] < 0x20;
}

/* Set the session up for the wait statement of channel queue: the block
** lock held, @sqlq_wait_queue and the tag (once per channel). */
static int prepare_channel(sqlq_db *db, const char *queue) {
  mysql_db *m = MY(db);
  int rc = sqlq__my_ready(db);
  if (rc == SQLQ_OK) rc = hold_block(db, m);
  if (rc != SQLQ_OK || (m->wait_queue && strcmp(m->wait_queue, queue) == 0)) return rc;
  sqlq__my_forget_wait(m);
  const char *params[2] = {queue, m->block};
  sqlq__stmt *st;
  rc = sqlq__my_run(db, MY_SQL_WAIT_QUEUE, 2, params, NULL, &st);
  db->driver->reset(st);
  if (rc != SQLQ_OK) return rc;
  rc = sqlq__my_run(db, MY_SQL_WAIT_TAG, 1, params, NULL, &st);
  if (rc == SQLQ_OK && (rc = sqlq__my_fetch(db, st)) == SQLQ__ROW) {
    size_t len = 0;
    const char *tag = db->driver->column_blob(st, 0, &len);
    /* The tag is written into the statement's text: 32 hex digits only. */
    if (tag && len == 32 && strspn(tag, "0123456789abcdef") >= 32) {
      memcpy(m->wait_tag, tag, 32);
      m->wait_tag[32] = '\0';
      rc = SQLQ_OK;
    } else {
      rc = sqlq__error(db, SQLQ_ERROR, "mysql: MD5() gave an unexpected tag");
    }
  } else if (rc == SQLQ__DONE) {
    rc = sqlq__error(db, SQLQ_ERROR, "mysql: MD5() gave no tag");
  }
  db->driver->reset(st);
  if (rc != SQLQ_OK) return rc;
  if ((m->wait_queue = strdup(queue)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return SQLQ_OK;
}

/* For a ring, the wait statement also ends at once when the ring's counter
** moved since this mark, taken before the core's check: a push committed
** after the check is seen even when its KILL QUERY came too early. */
int sqlq__my_wait_prepare(sqlq_db *db, const char *channel) {
  int rc = prepare_channel(db, channel);
  if (rc != SQLQ_OK || !is_ring(channel)) return rc;
  sqlq__stmt *st;
  rc = sqlq__my_run(db, MY_SQL_WAIT_MARK, 0, NULL, NULL, &st);
  db->driver->reset(st);
  return rc;
}

/* Interrupt this handle's own wait statement through the second session.
** KILL QUERY ID names the statement, so it cannot hit what the session
** runs after it. */
static void interrupt_own(sqlq_db *db) {
  mysql_db *m = MY(db);
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  MYSQL *aux = sqlq__my_aux(db);
  char sql[192];
  snprintf(sql, sizeof sql,
           "SELECT query_id FROM information_schema.processlist WHERE id = %lu"
           " AND info LIKE 'SELECT /*sqlq-wait:%%'",
           mysql_thread_id(m->conn));
  if (aux && mysql_query(aux, sql) == 0) {
    MYSQL_RES *res = mysql_store_result(aux);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    if (row && row[0] && strspn(row[0], "0123456789") == strlen(row[0])) {
      snprintf(sql, sizeof sql, "KILL QUERY ID %s", row[0]);
      mysql_query(aux, sql); /* gone already (1094): nothing to interrupt */
    }
    if (res) mysql_free_result(res);
  }
  /* A second session that broke (a signal can cut its read short) is
  ** opened again by the next wait_prepare. */
  sqlq__my_check_aux(m);
  sqlq__restore_error(db, &saved);
}

/* Sleep on the eventfd until the deadline or for at most max_ns: for a
** session that cannot run the wait statement. */
static int sleep_on_fd(int wake_fd, int64_t deadline_ns, int64_t max_ns) {
  int64_t until = sqlq__monotonic_ns() + max_ns;
  if (deadline_ns >= 0 && deadline_ns < until) until = deadline_ns;
  struct pollfd fd = {wake_fd, POLLIN, 0};
  if (poll(&fd, 1, sqlq__poll_ms(until)) > 0) return SQLQ_OK;
  return deadline_ns >= 0 && sqlq__monotonic_ns() >= deadline_ns ? SQLQ_TIMEOUT : SQLQ_OK;
}

/* The wait statement of each level of limits (SQLQ__LIMITS_*). */
static const char *const wait_sql[] = {
  [SQLQ__LIMITS_NONE] = sqlq__mysql_wait_unlimited_sql,
  [SQLQ__LIMITS_CONCURRENCY] = sqlq__mysql_wait_sql,
  [SQLQ__LIMITS_RATES] = sqlq__mysql_wait_rates_sql,
  [SQLQ__LIMITS_GROUPS] = sqlq__mysql_wait_groups_sql,
};

/* Run the wait statement once, sleeping at most limit_s on the server.
** Sets *woken when a job is due or the sleep was cut short. */
static int wait_once(sqlq_db *db, int wake_fd, double limit_s, int *woken) {
  mysql_db *m = MY(db);
  char limit[32], body[4096], sql[4200];
  my_cursor c;
  const char *cursor = NULL;
  snprintf(limit, sizeof limit, "%.3f", limit_s);
  /* A queue whose claims go by lanes, with a cursor: its scans start at
  ** the cursor's floors, as the claim's and the core's check's do
  ** (mysql_sql.c). */
  if (!is_ring(m->wait_queue) && db->limits_schema == SQLQ__LIMITS_GROUPS &&
      sqlq__cursor_get(db, m->wait_queue, &cursor) && sqlq__my_cursor_parse(cursor, &c) == 0)
    snprintf(body, sizeof body, sqlq__mysql_wait_lanes_sql, limit, limit, c.due_floor, c.last_id,
             c.moves, c.lease_floor);
  else
    snprintf(body, sizeof body,
             is_ring(m->wait_queue) ? sqlq__mysql_ring_wait_sql : wait_sql[db->limits_schema],
             limit, limit);
  int len = snprintf(sql, sizeof sql, "SELECT /*sqlq-wait:%s*/ %s", m->wait_tag, body);
  if (mysql_send_query(m->conn, sql, (unsigned long)len) != 0)
    return sqlq__my_error(db, m->conn, NULL, "wait");
  struct pollfd fds[2] = {{mysql_get_socket(m->conn), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  int64_t give_up =
    sqlq__monotonic_ns() + (int64_t)(limit_s * 1e9) + ANSWER_GRACE_MS * INT64_C(1000000);
  for (;;) {
    int r = poll(fds, 2, sqlq__poll_ms(give_up));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || (fds[0].revents & POLLIN) || (fds[0].revents & (POLLERR | POLLHUP))) break;
    if (fds[1].revents & POLLIN) {
      if (atomic_load(&db->interrupted)) {
        interrupt_own(db);
        break;
      }
      fds[1].events = 0;
    }
  }
  if (mysql_read_query_result(m->conn) != 0) {
    unsigned err = mysql_errno(m->conn);
    if (err == ER_QUERY_INTERRUPTED) {
      *woken = 1;
      return SQLQ_OK;
    }
    return sqlq__my_error(db, m->conn, NULL, "wait");
  }
  MYSQL_RES *res = mysql_store_result(m->conn);
  MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
  long v = row && row[0] ? strtol(row[0], NULL, 10) : 1;
  if (res) mysql_free_result(res);
  if (v == 3) {
    /* The block lock was free: the second session is gone.  Let it go;
    ** the next wait_prepare opens a new one to hold it. */
    mysql_query(m->conn, "DO RELEASE_LOCK(@sqlq_wait_block)");
    if (m->aux) mysql_close(m->aux);
    m->aux = NULL;
    m->block_held = 0;
  }
  *woken = v != 2;
  return SQLQ_OK;
}

int sqlq__my_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns) {
  (void)queue;
  mysql_db *m = MY(db);
  int64_t interval_ns = (int64_t)(m->wake_interval * 1e9);
  for (;;) {
    /* sqlq_interrupt(): the core says so, whether or not the kill of the
    ** statement reached it (then it only ended in its own time). */
    if (atomic_load(&db->interrupted)) return SQLQ_OK;
    /* A session that is away: the core's next look reconnects. */
    if (m->conn == NULL || m->lost || m->wait_tag[0] == '\0' || !m->block_held)
      return sleep_on_fd(wake_fd, deadline_ns, interval_ns);
    int64_t left = deadline_ns < 0 ? interval_ns : deadline_ns - sqlq__monotonic_ns();
    if (left <= 0) return SQLQ_TIMEOUT;
    if (left > interval_ns) left = interval_ns;
    int woken = 0;
    int rc = wait_once(db, wake_fd, left < 1000000 ? 0.001 : left / 1e9, &woken);
    if (rc == SQLQ_UNAVAILABLE) return SQLQ_OK;
    if (rc != SQLQ_OK || woken) return rc;
  }
}

int sqlq__my_notify(sqlq_db *db, const char *queue, int n) {
  if (!MY(db)->kill_wake) return SQLQ_OK;
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  const char *params[2] = {queue, NULL};
  long long ints[2] = {0, n == SQLQ__WAKE_ALL ? INT_MAX : n > 1 ? n : 1};
  sqlq__stmt *st;
  int rc = sqlq__my_run(db, MY_SQL_WAKE, 2, params, ints, &st);
  db->driver->reset(st);
  sqlq__restore_error(db, &saved);
  return rc;
}
