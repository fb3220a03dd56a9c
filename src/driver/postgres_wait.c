/*
** postgres_wait.c -- waiting for jobs with LISTEN/NOTIFY.
**
** A waiting handle LISTENs on its queue's channel (sqlq_channel(queue),
** asked of the server once per queue and session) before the core checks
** whether a job is due, so a commit after that check always reaches it as a
** notification.  It then sleeps in poll() on the session's socket and the
** handle's eventfd until a notification for its channel, the eventfd, or
** the deadline (the next due run_at or lease end, or the caller's timeout).
** The library's NOTIFY follows the producer's COMMIT as a transaction of
** its own (postgres.c): a producer that dies between the two leaves its
** jobs unannounced, so a waiter also looks again every RECHECK_S seconds.
** An idle waiter sends nothing else to the server.
**
** With the URL option notify=off, nothing is LISTENed or NOTIFYed: a
** waiter looks again every poll_interval seconds (1 by default).
**
** Through a transaction pooler (p->pooled), a LISTEN would be made on a
** server session that other clients then use, and its notifications
** would reach them, or nobody.  The handle LISTENs instead on a session
** of its own on the server itself, named by the URL options listen_host
** and listen_port (the rest of the URL as it is), opened at the first
** wait and again whenever it is lost (paced as reconnections are); a
** commit made while it was lost is caught by the check that follows the
** new LISTEN.  Without those options, or while that session cannot be
** opened, a waiter polls, as with notify=off.  NOTIFYs are sent through
** the pooler all the same, in the transaction that owes them.
*/
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "postgres_int.h"

#define RECHECK_S 30

/* The session notifications arrive on: the handle's own, or through a
** pooler the listening session (NULL when there is none). */
static PGconn *listen_conn(postgres_db *p) {
  return p->pooled ? p->listen_conn : p->conn;
}

PGconn *sqlq__pg_connect_listen(sqlq_db *db) {
  postgres_db *p = PG(db);
  size_t n = 0;
  while (p->keys[n]) n++;
  const char **keys = calloc(n + 3, sizeof *keys);
  const char **values = calloc(n + 3, sizeof *values);
  PGconn *conn = NULL;
  if (keys && values) {
    memcpy(keys, p->keys, n * sizeof *keys);
    memcpy(values, p->values, n * sizeof *values);
    /* A keyword given twice takes its last value. */
    if (p->listen_host) {
      keys[n] = "host";
      values[n++] = p->listen_host;
    }
    if (p->listen_port) {
      keys[n] = "port";
      values[n++] = p->listen_port;
    }
    conn = sqlq__pg_connect_with(db, keys, values);
  } else {
    sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  free(keys);
  free(values);
  return conn;
}

/* Through a pooler: have a listening session when the URL names one and
** it can be opened (after a pause when the last attempt failed); 0 when
** the waiter must poll instead. */
static int have_listen_conn(sqlq_db *db, postgres_db *p) {
  if (!p->listen_host && !p->listen_port) return 0;
  if (p->listen_conn && PQstatus(p->listen_conn) == CONNECTION_OK) return 1;
  if (sqlq__backoff_wait_ns(&p->listen_retry) > 0) return 0;
  if (p->listen_conn) PQfinish(p->listen_conn);
  sqlq__pg_forget_listen(p);
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  p->listen_conn = sqlq__pg_connect_listen(db);
  sqlq__restore_error(db, &saved);
  sqlq__backoff_result(&p->listen_retry, p->listen_conn != NULL);
  return p->listen_conn != NULL;
}

void sqlq__pg_forget_listen(postgres_db *p) {
  free(p->listen_queue);
  p->listen_queue = NULL;
  p->channel[0] = '\0';
}

/* LISTEN on queue's channel instead of the one listened on before. */
static int listen_to(sqlq_db *db, postgres_db *p, const char *queue) {
  const char *params[1] = {queue};
  PGresult *r = sqlq__pg_exec_own(db, PG_SQL_CHANNEL, 1, params);
  if (r == NULL) return db->errcode;
  char channel[64];
  snprintf(channel, sizeof channel, "%s", PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
  PQclear(r);
  /* The channel is 'sqlq_' and 32 hex digits, so it needs no quoting. */
  if (strspn(channel, "sqlq_0123456789abcdef") != strlen(channel) || strlen(channel) != 37)
    return sqlq__error(db, SQLQ_SCHEMA, "postgres: sqlq_channel() gave an unexpected name");
  char sql[128];
  if (p->channel[0])
    snprintf(sql, sizeof sql, "UNLISTEN %s; LISTEN %s", p->channel, channel);
  else
    snprintf(sql, sizeof sql, "LISTEN %s", channel);
  PGconn *conn = listen_conn(p);
  r = PQexec(conn, sql);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  int rc = ok ? SQLQ_OK : sqlq__pg_error(db, conn, r, "LISTEN");
  PQclear(r);
  if (!ok) return rc;
  char *copy = strdup(queue);
  if (copy == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  free(p->listen_queue);
  p->listen_queue = copy;
  memcpy(p->channel, channel, sizeof channel);
  return SQLQ_OK;
}

int sqlq__pg_wait_prepare(sqlq_db *db, const char *queue) {
  postgres_db *p = PG(db);
  int rc = sqlq__pg_ready(db);
  if (rc != SQLQ_OK || !p->notify) return rc;
  if (p->pooled && !have_listen_conn(db, p)) return SQLQ_OK;
  if (p->listen_queue && strcmp(p->listen_queue, queue) == 0) return SQLQ_OK;
  return listen_to(db, p, queue);
}

/*
** Wake-up tickets.  Every listening session of every process receives
** each notification, but a notification for n jobs should start only n
** waiters.  Within a process that is kept exact: the library's payload is
** "N TOKEN" with a random token, and the first of this process's sessions
** to read it opens a ticket with N uses; each waiter that reads it takes a
** use, or, when none are left, goes on sleeping.  The sender's own process
** opens the ticket with no uses: its core wakes local waiters directly.
** Payloads without a token (the trigger's, for plain-SQL producers) wake
** every waiter.  The ring forgets old tickets; a late reader of a
** forgotten one wakes once more than needed, never less.
*/
#define TICKETS 128

static struct {
  char token[20];
  int uses;
} tickets[TICKETS];
static int ticket_next;
static pthread_mutex_t tickets_lock = PTHREAD_MUTEX_INITIALIZER;

/* Find token's ticket or open one with `uses` uses; then take a use when
** take is set.  Returns whether a use was had (or opened). */
static int ticket(const char *token, int uses, int take) {
  pthread_mutex_lock(&tickets_lock);
  int i;
  for (i = 0; i < TICKETS; i++)
    if (strcmp(tickets[i].token, token) == 0) break;
  if (i == TICKETS) {
    i = ticket_next;
    ticket_next = (ticket_next + 1) % TICKETS;
    snprintf(tickets[i].token, sizeof tickets[i].token, "%s", token);
    tickets[i].uses = uses;
  }
  int had = !take || tickets[i].uses > 0;
  if (take && had) tickets[i].uses--;
  pthread_mutex_unlock(&tickets_lock);
  return had;
}

void sqlq__pg_ticket_sent(const char *token) {
  ticket(token, 0, 0);
}

/* Should a notification with this payload wake this waiter? */
static int wakes(const char *payload) {
  char *end;
  long n = strtol(payload, &end, 10);
  if (end == payload || *end != ' ' || strlen(end + 1) == 0 || strlen(end + 1) >= 20) return 1;
  return ticket(end + 1, n > 1 ? (int)n : 1, 1);
}

/* Take the notifications libpq has read; does one of them wake us? */
static int take_notifications(postgres_db *p) {
  int hit = 0;
  PGnotify *n;
  while ((n = PQnotifies(listen_conn(p))) != NULL) {
    if (!hit && strcmp(n->relname, p->channel) == 0) hit = wakes(n->extra);
    PQfreemem(n);
  }
  return hit;
}

int sqlq__pg_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns) {
  (void)queue;
  postgres_db *p = PG(db);
  sqlq__pg_conn(db); /* what is read while waiting is notifications only */
  PGconn *conn = listen_conn(p);
  int listening = p->notify && conn && PQstatus(conn) == CONNECTION_OK && p->channel[0];
  if (!listening) {
    /* Polling: sleep one interval (or until the deadline) on the eventfd. */
    int64_t next = sqlq__monotonic_ns() + (int64_t)(p->poll_interval * 1e9);
    if (deadline_ns >= 0 && deadline_ns < next) next = deadline_ns;
    struct pollfd fd = {wake_fd, POLLIN, 0};
    int r = poll(&fd, 1, sqlq__poll_ms(next));
    if (r > 0) return SQLQ_OK;
    return deadline_ns >= 0 && sqlq__monotonic_ns() >= deadline_ns ? SQLQ_TIMEOUT : SQLQ_OK;
  }
  int64_t recheck = sqlq__monotonic_ns() + RECHECK_S * INT64_C(1000000000);
  int rechecking = deadline_ns < 0 || recheck < deadline_ns;
  for (;;) {
    if (take_notifications(p)) return SQLQ_OK;
    struct pollfd fds[2] = {{PQsocket(conn), POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int r = poll(fds, 2, sqlq__poll_ms(rechecking ? recheck : deadline_ns));
    if (r < 0 && errno != EINTR)
      return sqlq__error(db, SQLQ_ERROR, "postgres: poll failed: %s", strerror(errno));
    if (r == 0) return rechecking ? SQLQ_OK : SQLQ_TIMEOUT;
    if (fds[1].revents) return SQLQ_OK;
    /* A lost session reads as a change: the core's next look reconnects. */
    if (fds[0].revents && (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK))
      return SQLQ_OK;
  }
}
