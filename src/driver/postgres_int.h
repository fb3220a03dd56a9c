/*
** postgres_int.h -- declarations shared by the files of the PostgreSQL
** driver (postgres.c: connection, statements, transactions; postgres_sql.c:
** the dialect; postgres_wait.c: LISTEN/NOTIFY; postgres_lock.c: advisory
** locks; postgres_sub.c: the triggers of table subscriptions).
*/
#ifndef SQLQ_POSTGRES_INT_H
#define SQLQ_POSTGRES_INT_H

#include "postgres_api.h"

#include "sqlq_int.h"

/* The driver's own statements, numbered after the core's. */
enum {
  PG_SQL_NOTIFY = SQLQ__SQL_COUNT, /* $1 queue $2 payload */
  PG_SQL_LAZY,                     /* this transaction's commit need not wait */
  PG_SQL_CHANNEL,                  /* $1 queue -> channel name */
  PG_SQL_NOTIFY_TX,                /* $1 queue $2 payload, in the open
                                      transaction (through a pooler) */
  PG_SQL_COUNT
};

#define PG_MAX_PARAMS 8

/* A statement of one connection: prepared once under the name "sqlq_ID",
** bound, executed at its first step, its rows read from res. */
struct sqlq__stmt {
  int id;
  int prepared; /* on the current connection */
  int n_params; /* highest parameter bound */
  const char *values[PG_MAX_PARAMS];
  int lengths[PG_MAX_PARAMS];
  int formats[PG_MAX_PARAMS];   /* 0 text, 1 binary */
  char ints[PG_MAX_PARAMS][24]; /* integers, as text */
  char *owned[PG_MAX_PARAMS];   /* arrays built by bind_*_array */
  PGresult *res;
  int row; /* the current row; -1 before the first */
};

/* A NOTIFY owed by the open transaction, sent once its COMMIT is. */
typedef struct pg_notice {
  char *queue;
  char payload[48]; /* "N TOKEN" */
  struct pg_notice *next;
} pg_notice;

typedef struct postgres_db {
  PGconn *conn;
  /* The connection's parameters (NULL-terminated keyword and value arrays),
  ** kept to reconnect and to open the lock connection. */
  const char **keys;
  const char **values;
  sqlq__stmt stmts[PG_SQL_COUNT];
  const char *const *sql; /* PG_SQL_COUNT statements */
  int in_tx;              /* a write transaction is open */
  int begin_pending;      /* BEGIN is sent with the next statement */
  int single_pending;     /* the next statement is the transaction */
  int lazy;               /* its commit need not wait for the disk */
  int worker_sync;        /* never lazy (URL option worker_synchronous_commit) */
  pg_notice *notices;
  /* Pipelines sent without waiting for their results (notifications):
  ** the connection stays in pipeline mode until they are read. */
  int unread;
  sqlq__backoff reconnect; /* pacing of reconnections */
  int read_only;           /* the server refused a write as read-only */
  /* Wake-ups. */
  int notify;           /* LISTEN/NOTIFY on (URL option notify) */
  double poll_interval; /* seconds between looks when off */
  char *listen_queue;   /* the queue listened for, or NULL */
  char channel[64];     /* its channel */
  /* Named locks: a second session, so that a lock's wait never runs in,
  ** or aborts, the caller's transaction; the number of lock sessions
  ** opened so far tells each lock whether it was taken on this one. */
  PGconn *lock_conn;
  unsigned lock_session;
  /* A transaction pooler (PgBouncer in transaction mode) may stand
  ** between the handle and the server (URL option pooler: PG_POOLER_*).
  ** pooled: the handle's statements are sent unnamed, nothing is left in
  ** a server session between transactions, the notifications a
  ** transaction owes go in it, and named locks are leases (lease.c).
  ** Wake-ups are heard on listen_conn, a session on the server itself
  ** (the URL options listen_host, listen_port), or by polling. */
  int pooler;
  int pooled;
  char *listen_host, *listen_port; /* NULL: the URL's */
  PGconn *listen_conn;
  sqlq__backoff listen_retry; /* pacing of its reopening */
} postgres_db;

enum { PG_POOLER_AUTO, PG_POOLER_NONE, PG_POOLER_TRANSACTION };

#define PG(db) ((postgres_db *)(db)->driver_data)

extern const char *const sqlq__postgres_sql[PG_SQL_COUNT];
extern const char *const sqlq__postgres_migrations[SQLQ_SCHEMA_VERSION];

/* Record the error of res (or of the connection when res is NULL) on db,
** mapped to a status, and return that status.  what says what failed. */
int sqlq__pg_error(sqlq_db *db, PGconn *conn, const PGresult *res, const char *what);
/* Make sure db's connection is up, reconnecting (with a capped pause
** between attempts) when it was lost outside a transaction. */
int sqlq__pg_ready(sqlq_db *db);
/* db's connection, out of pipeline mode, with the results of pipelines
** sent without waiting read and dropped: ready for a command.  May be NULL
** or broken: the command then fails. */
PGconn *sqlq__pg_conn(sqlq_db *db);
/* Open a new session with db's parameters; NULL with an error recorded. */
PGconn *sqlq__pg_connect(sqlq_db *db);
/* Open a new session with these libpq keywords and values (NULL-
** terminated; a keyword given twice takes its last value). */
PGconn *sqlq__pg_connect_with(sqlq_db *db, const char *const *keys, const char *const *values);
/* Open the session that LISTENs beside a pooled connection (listen_host,
** listen_port); NULL with an error recorded. */
PGconn *sqlq__pg_connect_listen(sqlq_db *db);
/* Run a statement of the driver's own with text parameters, returning
** its result (which the caller clears) or NULL with an error recorded. */
PGresult *sqlq__pg_exec_own(sqlq_db *db, int id, int n, const char *const *params);

int sqlq__pg_wait_prepare(sqlq_db *db, const char *queue);
int sqlq__pg_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns);
int sqlq__pg_notify(sqlq_db *db, const char *queue, int n);
void sqlq__pg_forget_listen(postgres_db *p);
/* Note that this process sent a notification with this token: its own
** waiters are woken by the core, so the notification wakes none here. */
void sqlq__pg_ticket_sent(const char *token);

int sqlq__pg_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out);
void sqlq__pg_unlock(sqlq_db *db, sqlq__lockstate *ls);
int sqlq__pg_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns);
int sqlq__pg_lock_xact(sqlq_db *db, uint64_t key, const void *name, size_t name_len,
                       double timeout_s);
/* The subscription triggers of plan (sqlq__driver.sub_triggers). */
int sqlq__pg_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan);
/* Send the open transaction's BEGIN now if it is still waiting for its
** first statement. */
int sqlq__pg_begin_now(sqlq_db *db);

#endif /* SQLQ_POSTGRES_INT_H */
