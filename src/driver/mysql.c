/*
** mysql.c -- the MySQL/MariaDB backend on MariaDB Connector/C: connecting
** and reconnecting, prepared statements, transactions, errors.
**
** One sqlq_db is one session (plus, once a named lock is taken, a second
** one: mysql_lock.c).  Statements are prepared once per session and cached
** by id; their $N parameters become `?` placeholders, and their rows are
** stored on the client when they execute.  The session stays in autocommit:
** reads and single-statement writes (SQLQ__TX_SINGLE) are their own
** transactions, and other writes run between START TRANSACTION and COMMIT.
** The isolation level is the server's default, REPEATABLE READ, but for the
** claim's own transactions (mysql_claim.c): under binlog_format=STATEMENT,
** MariaDB refuses writes under READ COMMITTED.
**
** RELEASE, TOUCH and RING_ADVANCE cannot return a row from an UPDATE on
** MariaDB 10.11: the dialect has their *_ROW statements, which the core
** runs after them.  The claim is a pick and an UPDATE (mysql_claim.c),
** POOL_NEXT five statements (mysql_pool.c), and ENQUEUE_ARRAY takes its
** ids first (mysql_ids.c): the driver's claim, pool_next and take_ids
** methods.  A duplicate key (error 1062) only undoes the statement that
** hit it: step says SQLQ__CONSTRAINT.
**
** A session lost outside a transaction is opened again at the next call,
** paced by sqlq__backoff; within a transaction, a lost session fails the
** call with SQLQ_UNAVAILABLE and the transaction is gone.  A deadlock (1213)
** rolls the whole transaction back: the driver says so with
** db->tx_retryable, and the core runs its transaction again.
*/
#include <fcntl.h>
#include <math.h>
#include <mysqld_error.h>
#include <errmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mysql_int.h"

/* MySQL's "deadlock found when trying to get user-level lock". */
#define ER_USER_LOCK_DEADLOCK_MYSQL 3058
/* MariaDB 10.11's "connection was killed", "disconnected by the server
** because of inactivity". */
#define ER_CONNECTION_KILLED_MARIADB 1927
#define ER_CLIENT_INTERACTION_TIMEOUT_MARIADB 4031

static const char *const options[] = {"socket", "wake", "wake_interval", "connect_timeout", NULL};

/* ---------------------------------------------------------------------
** Errors.
*/

/* Errors after which the session is opened again.  A statement
** interrupted (1317) outside a wait was cut short by a server shutting
** down, or by someone's KILL: either way a new session is the way on. */
static int lost_connection(unsigned err) {
  return err == CR_SERVER_GONE_ERROR || err == CR_SERVER_LOST || err == CR_CONNECTION_ERROR ||
         err == CR_CONN_HOST_ERROR || err == CR_SERVER_LOST_EXTENDED ||
         err == ER_CONNECTION_KILLED_MARIADB || err == ER_SERVER_SHUTDOWN ||
         err == ER_QUERY_INTERRUPTED || err == ER_CLIENT_INTERACTION_TIMEOUT_MARIADB ||
         err == CR_COMMANDS_OUT_OF_SYNC;
}

static int status_of(unsigned err) {
  if (lost_connection(err)) return SQLQ_UNAVAILABLE;
  switch (err) {
  case ER_LOCK_DEADLOCK:
  case ER_USER_LOCK_DEADLOCK_MYSQL:
  case ER_LOCK_WAIT_TIMEOUT:
    return SQLQ_BUSY;
  case ER_NO_SUCH_TABLE:
  case ER_SP_DOES_NOT_EXIST:
  case ER_BAD_FIELD_ERROR:
    return SQLQ_SCHEMA;
  case ER_NET_PACKET_TOO_LARGE:
  case CR_NET_PACKET_TOO_LARGE:
    return SQLQ_TOOBIG;
  case ER_DATA_TOO_LONG:
  case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
  case ER_CONSTRAINT_FAILED:
    return SQLQ_MISUSE;
  case ER_ACCESS_DENIED_ERROR:
  case ER_DBACCESS_DENIED_ERROR:
  case ER_BAD_DB_ERROR:
  case ER_CON_COUNT_ERROR:
    return SQLQ_UNAVAILABLE;
  default:
    return SQLQ_ERROR;
  }
}

int sqlq__my_error(sqlq_db *db, MYSQL *conn, MYSQL_STMT *st, const char *what) {
  mysql_db *m = MY(db);
  unsigned err = st ? mysql_stmt_errno(st) : conn ? mysql_errno(conn) : CR_SERVER_GONE_ERROR;
  const char *msg = st ? mysql_stmt_error(st) : conn ? mysql_error(conn) : "no connection";
  if (msg == NULL || *msg == '\0') msg = "unknown error";
  int status = status_of(err);
  if (lost_connection(err)) {
    if (conn == m->conn) m->lost = 1;
    return sqlq__error(db, status, "mysql: lost the connection to %s (%s): %s", db->url_redacted,
                       what, msg);
  }
  /* InnoDB rolled the whole transaction back: it may be run again. */
  if (err == ER_LOCK_DEADLOCK && conn == m->conn) db->tx_retryable = 1;
  if (status == SQLQ_SCHEMA)
    return sqlq__error(db, status, "the database has no sqlq schema: run `sqlq init` (mysql: %s)",
                       msg);
  return sqlq__error(db, status, "mysql: %s failed: %s (error %u)", what, msg, err);
}

/* ---------------------------------------------------------------------
** Connecting.
*/

static int read_options(sqlq_db *db, mysql_db *m, const sqlq__url *url) {
  m->wake_interval = 2.0;
  m->connect_timeout = 10;
  m->kill_wake = 1;
  const char *v;
  char *end;
  if ((v = sqlq__url_option(url, "wake"))) {
    if (strcmp(v, "kill") && strcmp(v, "poll"))
      return sqlq__error(db, SQLQ_MISUSE, "URL option wake must be kill or poll");
    m->kill_wake = strcmp(v, "kill") == 0;
  }
  int rc = sqlq__url_seconds(db, url, "wake_interval", 0.01, 3600, &m->wake_interval);
  if (rc != SQLQ_OK) return rc;
  if ((v = sqlq__url_option(url, "connect_timeout"))) {
    long s = strtol(v, &end, 10);
    if (*v == '\0' || *end || s < 1 || s > 3600)
      return sqlq__error(db, SQLQ_MISUSE, "URL option connect_timeout must be 1 to 3600 seconds");
    m->connect_timeout = (unsigned)s;
  }
  if ((v = sqlq__url_option(url, "socket")) && *v != '/')
    return sqlq__error(db, SQLQ_MISUSE, "URL option socket must be an absolute path");
  return SQLQ_OK;
}

/* Copy s (NULL stays NULL) into *out; SQLQ_NOMEM on failure. */
static int copy(const char *s, char **out) {
  *out = s ? strdup(s) : NULL;
  return s && *out == NULL ? SQLQ_NOMEM : SQLQ_OK;
}

static int keep_params(sqlq_db *db, mysql_db *m, const sqlq__url *url) {
  const char *dbname = url->path && url->path[0] == '/' ? url->path + 1 : url->path;
  if (dbname == NULL || *dbname == '\0')
    return sqlq__error(db, SQLQ_MISUSE,
                       "a mysql URL names its database: mysql://USER@HOST/DATABASE");
  if (copy(url->host, &m->host) || copy(url->user, &m->user) || copy(url->password, &m->password) ||
      copy(dbname, &m->dbname) || copy(sqlq__url_option(url, "socket"), &m->socket))
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  m->port = (unsigned)url->port;
  return SQLQ_OK;
}

/* Make conn's socket close-on-exec.  Connector/C opens it without the
** flag, so every program that the application starts would inherit the
** session: `sqlq work`'s commands the worker's, `sqlq lock`'s the lock's.
** (A program that another thread starts between the connect and this
** call still inherits it: fork and exec while a handle connects only on
** one thread.) */
static int set_cloexec(sqlq_db *db, MYSQL *conn) {
  int fd = (int)mysql_get_socket(conn);
  int flags = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0)
    return sqlq__error(db, SQLQ_ERROR, "mysql: cannot make the socket to %s close-on-exec",
                       db->url_redacted);
  return SQLQ_OK;
}

MYSQL *sqlq__my_connect(sqlq_db *db) {
  mysql_db *m = MY(db);
  MYSQL *conn = mysql_init(NULL);
  if (conn == NULL) {
    sqlq__error(db, SQLQ_NOMEM, "out of memory");
    return NULL;
  }
  my_bool off = 0;
  mysql_options(conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  mysql_options(conn, MYSQL_OPT_CONNECT_TIMEOUT, &m->connect_timeout);
  mysql_options(conn, MYSQL_OPT_RECONNECT, &off);
  mysql_options(conn, MYSQL_READ_DEFAULT_GROUP, NULL);
  /* With a socket, the host is the local server. */
  const char *host = m->socket ? "localhost" : m->host ? m->host : "localhost";
  if (!mysql_real_connect(conn, host, m->user, m->password, m->dbname, m->port, m->socket,
                          CLIENT_MULTI_STATEMENTS | CLIENT_FOUND_ROWS)) {
    sqlq__error(db, SQLQ_UNAVAILABLE, "mysql: cannot connect to %s: %s", db->url_redacted,
                mysql_error(conn));
    mysql_close(conn);
    return NULL;
  }
  if (set_cloexec(db, conn) != SQLQ_OK) {
    mysql_close(conn);
    return NULL;
  }
  /* Every session, the lock session too, has TCP keepalives and a limit on
  ** data left unacknowledged: on a link that drops every packet, a call
  ** fails within SQLQ__USER_TIMEOUT_MS and an idle session ends within
  ** about 40 s, where TCP alone takes 15 minutes and over 2 hours
  ** (docs/scale.md). */
  sqlq__keepalive(mysql_get_socket(conn));
  /* Locks waited for by a write give up after the handle's busy timeout
  ** (whole seconds, at least 1); the SQL mode is fixed so that the
  ** server's configuration does not change what a statement means. */
  char sql[320];
  snprintf(sql, sizeof sql,
           "SET SESSION innodb_lock_wait_timeout = %ld,"
           " sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO';"
           " SELECT @@log_bin = 0 OR @@binlog_format <> 'STATEMENT'",
           db->busy_timeout < 1 ? 1L : (long)ceil(db->busy_timeout));
  int ok = mysql_query(conn, sql) == 0 && mysql_next_result(conn) == 0;
  MYSQL_RES *res = ok ? mysql_store_result(conn) : NULL;
  MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
  if (row && row[0]) m->rc_claims = strcmp(row[0], "1") == 0;
  if (res) mysql_free_result(res);
  if (!row) {
    sqlq__error(db, SQLQ_UNAVAILABLE, "mysql: cannot set up the session on %s: %s",
                db->url_redacted, mysql_error(conn));
    mysql_close(conn);
    return NULL;
  }
  return conn;
}

/* Close every prepared statement of the session. */
static void forget_statements(mysql_db *m) {
  for (int i = 0; i < MY_SQL_COUNT; i++) {
    sqlq__stmt *st = &m->stmts[i];
    if (st->ms) mysql_stmt_close(st->ms);
    st->ms = NULL;
    st->executed = 0;
    st->view = NULL;
  }
}

int sqlq__my_ready(sqlq_db *db) {
  mysql_db *m = MY(db);
  if (m->conn && !m->lost) return SQLQ_OK;
  if (m->in_tx)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "mysql: lost the connection to %s in a transaction",
                       db->url_redacted);
  int64_t wait_ns = sqlq__backoff_wait_ns(&m->reconnect);
  if (wait_ns > 0)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "mysql: %s is unreachable; next try in %lld ms",
                       db->url_redacted, (long long)(wait_ns / 1000000));
  forget_statements(m);
  sqlq__my_forget_wait(m);
  if (m->conn) mysql_close(m->conn);
  m->lost = 0;
  m->conn = sqlq__my_connect(db);
  sqlq__backoff_result(&m->reconnect, m->conn != NULL);
  return m->conn ? SQLQ_OK : db->errcode;
}

static void my_close(sqlq_db *db);

static int my_open(sqlq_db *db, const sqlq__url *url) {
  if (sqlq__dl_load(db, &sqlq__my_lib) != SQLQ_OK) return db->errcode;
  mysql_db *m = calloc(1, sizeof *m);
  if (m == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  db->driver_data = m;
  for (int i = 0; i < MY_SQL_COUNT; i++) m->stmts[i].id = i;
  m->galera = -1;
  int rc = sqlq__url_one_host(db, url);
  if (rc == SQLQ_OK) rc = read_options(db, m, url);
  if (rc == SQLQ_OK) rc = keep_params(db, m, url);
  if (rc != SQLQ_OK) return rc;
  if ((m->conn = sqlq__my_connect(db)) == NULL) return db->errcode;
  /* Handles on one database of one server wake each other locally. */
  char ident[1024];
  snprintf(ident, sizeof ident, "mysql:%s:%u:%s:%s",
           m->socket ? m->socket
           : m->host ? m->host
                     : "",
           m->port, m->dbname, m->user ? m->user : "");
  if ((db->ident = strdup(ident)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return SQLQ_OK;
}

/* Free the result columns of st. */
static void forget_columns(sqlq__stmt *st) {
  for (unsigned c = 0; c < st->n_cols; c++) free(st->cols[c].buf);
  free(st->cols);
  free(st->col_binds);
  st->cols = NULL;
  st->col_binds = NULL;
  st->n_cols = 0;
}

static void free_stmt(sqlq__stmt *st) {
  sqlq__my_free_arrays(st);
  free(st->marks);
  free(st->binds);
  free(st->tail);
  forget_columns(st);
}

static void my_close(sqlq_db *db) {
  mysql_db *m = MY(db);
  if (m == NULL) return;
  forget_statements(m);
  for (int i = 0; i < MY_SQL_COUNT; i++) free_stmt(&m->stmts[i]);
  if (m->conn) mysql_close(m->conn);
  if (m->aux) mysql_close(m->aux);
  sqlq__my_forget_wait(m);
  free(m->host);
  free(m->user);
  free(m->password);
  free(m->dbname);
  free(m->socket);
  free(m);
  db->driver_data = NULL;
}

static void *my_native(sqlq_db *db) {
  return MY(db)->conn;
}

/* ---------------------------------------------------------------------
** Statements.
*/

/* Bind the result columns of st's prepared statement: integers as such,
** the rest as bytes.  Those of an earlier statement of st are dropped
** first: the columns of a RETURNING clause are known only once the
** statement ran, so a statement prepared again (for another number of
** rows, or on a new session) has none until then. */
static int bind_columns(sqlq_db *db, sqlq__stmt *st) {
  forget_columns(st);
  MYSQL_RES *meta = mysql_stmt_result_metadata(st->ms);
  if (meta == NULL) return SQLQ_OK;
  unsigned n = mysql_num_fields(meta);
  MYSQL_FIELD *fields = mysql_fetch_fields(meta);
  st->cols = calloc(n, sizeof *st->cols);
  st->col_binds = calloc(n, sizeof *st->col_binds);
  st->n_cols = n;
  int rc = st->cols && st->col_binds ? SQLQ_OK : sqlq__error(db, SQLQ_NOMEM, "out of memory");
  for (unsigned c = 0; rc == SQLQ_OK && c < n; c++) {
    my_col *col = &st->cols[c];
    MYSQL_BIND *b = &st->col_binds[c];
    switch (fields[c].type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
      col->is_int = 1;
      b->buffer_type = MYSQL_TYPE_LONGLONG;
      b->buffer = &col->ival;
      break;
    default:
      col->cap = 256;
      if ((col->buf = malloc(col->cap)) == NULL) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
      b->buffer_type = MYSQL_TYPE_STRING;
      b->buffer = col->buf;
      b->buffer_length = col->cap;
    }
    b->length = &col->len;
    b->is_null = &col->is_null;
    b->error = &col->error;
  }
  mysql_free_result(meta);
  if (rc != SQLQ_OK) {
    st->n_cols = 0;
    return rc;
  }
  return mysql_stmt_bind_result(st->ms, st->col_binds) ? sqlq__my_error(db, NULL, st->ms, "bind")
                                                       : SQLQ_OK;
}

/* Prepare sql[st->id] on the session for `rows` array elements, once. */
static int prepare_once(sqlq_db *db, sqlq__stmt *st, size_t rows) {
  mysql_db *m = MY(db);
  if (st->ms && st->prepared_rows == rows) return SQLQ_OK;
  if (st->ms) mysql_stmt_close(st->ms);
  st->ms = NULL;
  char *sql = sqlq__my_statement_text(db, st, rows);
  if (sql == NULL) return db->errcode;
  int rc = SQLQ_OK;
  if ((st->ms = mysql_stmt_init(m->conn)) == NULL)
    rc = sqlq__my_error(db, m->conn, NULL, "prepare");
  if (rc == SQLQ_OK && mysql_stmt_prepare(st->ms, sql, (unsigned long)strlen(sql)) != 0)
    rc = sqlq__my_error(db, m->conn, st->ms, "prepare");
  if (rc == SQLQ_OK) rc = bind_columns(db, st);
  free(sql);
  if (rc != SQLQ_OK && st->ms) {
    mysql_stmt_close(st->ms);
    st->ms = NULL;
  }
  st->prepared_rows = rows;
  return rc;
}

static int my_prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  mysql_db *m = MY(db);
  if (sqlq__mysql_sql[id] == NULL)
    return sqlq__error(db, SQLQ_ERROR, "mysql: statement %d is not in the dialect", id);
  *out = &m->stmts[id];
  return SQLQ_OK;
}

/* Run st's prepared statement and store its rows.  Returns 0 on success,
** else the error number (the error stays on st->ms). */
static unsigned run_and_store(sqlq_db *db, sqlq__stmt *st) {
  if (mysql_stmt_execute(st->ms) != 0) return mysql_stmt_errno(st->ms);
  st->changes = (long long)mysql_stmt_affected_rows(st->ms);
  st->insert_id = (long long)mysql_stmt_insert_id(st->ms);
  /* The columns of a RETURNING clause are known only once it ran. */
  if (st->n_cols == 0 && mysql_stmt_field_count(st->ms) > 0 && bind_columns(db, st) != SQLQ_OK)
    return (unsigned)-1;
  if (st->n_cols && mysql_stmt_store_result(st->ms) != 0) return mysql_stmt_errno(st->ms);
  return 0;
}

/* How many times sqlq__my_execute prepares and runs a statement again
** that met a trigger without its tables (below), and how long it waits
** before each. */
#define REPREPARES 3
#define REPREPARE_PAUSE_NS 20000000L

int sqlq__my_execute(sqlq_db *db, sqlq__stmt *st) {
  size_t rows = sqlq__my_is_array(st) ? sqlq__my_array_rows(st) : 0;
  if (sqlq__my_is_array(st) && rows == 0)
    return sqlq__error(db, SQLQ_ERROR, "mysql: statement %d run without its arrays", st->id);
  /* A statement prepared before a trigger was made on a table it writes
  ** (schema version 12 makes two on sqlq_jobs, while queues run): MariaDB
  ** 10.11 runs it with the new trigger but without the tables the trigger
  ** writes, and it fails with "Table 'sqlq_lanes' doesn't exist" (1146)
  ** or "Unknown trigger has an error in its body: 'Query was empty'"
  ** (1064), though both are whole (tests/cli/my_init_race.sh; CI).  The
  ** failed statement was rolled back: it is prepared again and run
  ** again, up to REPREPARES times, 20 ms apart (CI once saw the second run
  ** fail too, at a load of 20-30 on two CPUs: the trigger's body is loaded
  ** anew with the table's definition), which fails the same way every time
  ** only where the table is truly missing. */
  unsigned err = 0;
  for (int tries = 0;; tries++) {
    int rc = prepare_once(db, st, rows);
    if (rc == SQLQ_OK) rc = sqlq__my_bind_marks(db, st);
    if (rc != SQLQ_OK) return rc;
    err = run_and_store(db, st);
    if (tries == REPREPARES || (err != ER_NO_SUCH_TABLE && err != ER_PARSE_ERROR)) break;
    mysql_stmt_close(st->ms);
    st->ms = NULL;
    struct timespec pause = {0, REPREPARE_PAUSE_NS};
    nanosleep(&pause, NULL);
  }
  if (err == (unsigned)-1) return db->errcode;
  if (err != 0) return sqlq__my_error(db, MY(db)->conn, st->ms, "query");
  st->executed = 1;
  return sqlq__my_tx_gone(db);
}

int sqlq__my_tx_gone(sqlq_db *db) {
  mysql_db *m = MY(db);
  if (!m->tx_watch || m->conn == NULL || (m->conn->server_status & SERVER_STATUS_IN_TRANS))
    return SQLQ_OK;
  m->tx_watch = 0;
  db->tx_retryable = 1;
  return sqlq__error(db, SQLQ_BUSY,
                     "mysql: the server rolled the transaction back (a deadlock or, on a Galera"
                     " cluster, a conflict with a replicated transaction)");
}

int sqlq__my_fetch(sqlq_db *db, sqlq__stmt *st) {
  if (st->n_cols == 0) return SQLQ__DONE;
  int r = mysql_stmt_fetch(st->ms);
  if (r == MYSQL_NO_DATA) return SQLQ__DONE;
  if (r == 1) return sqlq__my_error(db, MY(db)->conn, st->ms, "fetch");
  for (unsigned c = 0; c < st->n_cols; c++) {
    my_col *col = &st->cols[c];
    if (col->is_int || col->is_null || col->len < col->cap) continue;
    char *nb = realloc(col->buf, col->len + 1);
    if (nb == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    col->buf = nb;
    col->cap = col->len + 1;
    MYSQL_BIND *b = &st->col_binds[c];
    b->buffer = nb;
    b->buffer_length = col->cap;
    if (mysql_stmt_fetch_column(st->ms, b, c, 0) != 0)
      return sqlq__my_error(db, MY(db)->conn, st->ms, "fetch");
    /* The next fetch fills the larger buffer directly. */
    if (mysql_stmt_bind_result(st->ms, st->col_binds) != 0)
      return sqlq__my_error(db, MY(db)->conn, st->ms, "bind");
  }
  return SQLQ__ROW;
}

int sqlq__my_start(sqlq_db *db) {
  mysql_db *m = MY(db);
  return m->in_tx && !m->lost ? SQLQ_OK : sqlq__my_ready(db);
}

/* A statement that hit a duplicate key (see above) is ready for reset. */
static int duplicate_key(sqlq__stmt *st) {
  if (st->ms == NULL || mysql_stmt_errno(st->ms) != ER_DUP_ENTRY) return 0;
  /* A statement that returns rows (RETURNING id) must be reset: else the
  ** client library waits for the rows of the failed execution at the
  ** statement's next one, for ever. */
  mysql_stmt_reset(st->ms);
  st->changes = 0;
  st->executed = 1;
  return 1;
}

/* Commit the transaction a batch opened for its ids (mysql_ids.c) after
** its INSERT ran with status rc, or roll it back; its rows are stored. */
static int end_batch_tx(sqlq_db *db, int rc) {
  mysql_db *m = MY(db);
  if (rc == SQLQ_OK) rc = sqlq__my_tx_gone(db);
  m->batch_tx = m->in_tx = m->tx_watch = 0;
  if (m->lost) return rc;
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  int end = sqlq__my_query(db, m->conn, rc == SQLQ_OK ? "COMMIT" : "ROLLBACK",
                           rc == SQLQ_OK ? "COMMIT" : "ROLLBACK");
  if (rc != SQLQ_OK) sqlq__restore_error(db, &saved);
  return rc != SQLQ_OK ? rc : end;
}

static int my_step(sqlq_db *db, sqlq__stmt *st) {
  if (!st->executed) {
    int rc = sqlq__my_start(db);
    if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
    if (MY(db)->batch_tx) rc = end_batch_tx(db, rc);
    if (rc != SQLQ_OK) return duplicate_key(st) ? SQLQ__CONSTRAINT : rc;
  }
  int rc = sqlq__my_fetch(db, st->view ? st->view : st);
  if (rc == SQLQ__DONE && st->tail && !st->tail_shown) {
    st->tail_shown = 1;
    rc = SQLQ__ROW;
  }
  return rc;
}

static int my_claim(sqlq_db *db, sqlq__stmt *st) {
  int rc = sqlq__my_start(db);
  return rc == SQLQ_OK ? sqlq__my_claim(db, st) : rc;
}

static int my_pool_next(sqlq_db *db, sqlq__stmt *st) {
  int rc = sqlq__my_start(db);
  return rc == SQLQ_OK ? sqlq__my_pool_next(db, st) : rc;
}

/* The tail row's column i (see sqlq__stmt): column 10 holds the text. */
#define TAIL_COL 10

static int64_t my_column_int64(sqlq__stmt *st, int i) {
  if (st->tail_shown) return i == TAIL_COL ? strtoll(st->tail, NULL, 10) : 0;
  if (st->view) st = st->view;
  my_col *col = &st->cols[i];
  if (col->is_null) return 0;
  return col->is_int ? col->ival : strtoll(col->buf, NULL, 10);
}

static int my_column_is_null(sqlq__stmt *st, int i) {
  if (st->tail_shown) return i != TAIL_COL;
  if (st->view) st = st->view;
  return st->cols[i].is_null;
}

static const void *my_column_blob(sqlq__stmt *st, int i, size_t *len) {
  if (st->tail_shown) {
    *len = i == TAIL_COL ? strlen(st->tail) : 0;
    return i == TAIL_COL ? st->tail : NULL;
  }
  if (st->view) st = st->view;
  my_col *col = &st->cols[i];
  if (col->is_null || col->is_int) {
    *len = 0;
    return NULL;
  }
  *len = col->len;
  return col->buf;
}

static int64_t my_changes(sqlq_db *db, sqlq__stmt *st) {
  (void)db;
  return st->changes;
}

static void clear(sqlq__stmt *st) {
  if (st->executed && st->ms) mysql_stmt_free_result(st->ms);
  st->executed = 0;
  sqlq__my_free_arrays(st);
  st->n_params = 0;
  st->changes = 0;
  if (st->view) clear(st->view);
  st->view = NULL;
  free(st->tail);
  st->tail = NULL;
  st->tail_shown = 0;
}

static void my_reset(sqlq__stmt *st) {
  clear(st);
}

int sqlq__my_run(sqlq_db *db, int id, int n, const char *const *params, const long long *ints,
                 sqlq__stmt **out) {
  sqlq__stmt *st = &MY(db)->stmts[id];
  clear(st);
  for (int k = 0; k < n; k++)
    if (params[k])
      sqlq__my_bind_text(st, k + 1, params[k]);
    else
      sqlq__my_bind_int64(st, k + 1, ints[k]);
  *out = st;
  int rc = sqlq__my_ready(db);
  return rc == SQLQ_OK ? sqlq__my_execute(db, st) : rc;
}

/* ---------------------------------------------------------------------
** Scripts and transactions.
*/

int sqlq__my_query(sqlq_db *db, MYSQL *conn, const char *sql, const char *what) {
  if (mysql_query(conn, sql) != 0) return sqlq__my_error(db, conn, NULL, what);
  int rc = SQLQ_OK;
  /* Read every result of a multi-statement script; the first failure
  ** ends it. */
  for (;;) {
    MYSQL_RES *res = mysql_store_result(conn);
    if (res) mysql_free_result(res);
    int next = mysql_next_result(conn);
    if (next < 0) break;
    if (next > 0) {
      rc = sqlq__my_error(db, conn, NULL, what);
      break;
    }
  }
  return rc;
}

#define INIT_LOCK "CONCAT('sqlq:init:', DATABASE())"

static int my_exec(sqlq_db *db, const char *script) {
  mysql_db *m = MY(db);
  int rc = m->in_tx ? SQLQ_OK : sqlq__my_ready(db);
  m->tx_watch = 0; /* DDL commits what is open */
  return rc == SQLQ_OK ? sqlq__my_query(db, m->conn, script, "script") : rc;
}

/* sqlq init first takes the lock that makes concurrent inits take turns;
** it is let go when the transaction ends.  The core reads the schema
** version after it, so that of inits that find the same old version one
** migrates and the others find the new one: no migration's DDL (a
** trigger made while other sessions claim, migration 11) runs twice.  An
** init that cannot have the lock within 60 s fails rather than migrate
** beside another. */
static int my_init(sqlq_db *db) {
  mysql_db *m = MY(db);
  int rc = m->in_tx ? SQLQ_OK : sqlq__my_ready(db);
  if (rc == SQLQ_OK && !m->init_lock) {
    rc = sqlq__my_query(db, m->conn,
                        "BEGIN NOT ATOMIC IF GET_LOCK(" INIT_LOCK ", 60) IS NOT TRUE THEN"
                        " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT ="
                        " 'another sqlq init held the init lock for 60 s'; END IF; END",
                        "init lock");
    m->init_lock = rc == SQLQ_OK;
  }
  return rc;
}

int sqlq__my_in_own_tx(sqlq_db *db, sqlq__stmt *st, const char *start, sqlq__my_tx_fn fn) {
  mysql_db *m = MY(db);
  int own = !m->in_tx, committed = 0;
  int rc = own ? sqlq__my_query(db, m->conn, start, "START TRANSACTION") : SQLQ_OK;
  if (own && rc == SQLQ_OK) m->tx_watch = 1;
  if (rc == SQLQ_OK) rc = fn(db, st, own, &committed);
  if (own && rc == SQLQ_OK && !committed) rc = sqlq__my_tx_gone(db);
  if (own && rc == SQLQ_OK && !committed) rc = sqlq__my_query(db, m->conn, "COMMIT", "COMMIT");
  if (own) m->tx_watch = 0;
  if (own && rc != SQLQ_OK && !m->lost) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    sqlq__my_query(db, m->conn, "ROLLBACK", "ROLLBACK");
    sqlq__restore_error(db, &saved);
  }
  return rc;
}

static void end_tx(sqlq_db *db) {
  mysql_db *m = MY(db);
  m->in_tx = m->tx_watch = 0;
  if (m->init_lock && m->conn && !m->lost) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    sqlq__my_query(db, m->conn, "DO RELEASE_LOCK(" INIT_LOCK ")", "init unlock");
    sqlq__restore_error(db, &saved);
  }
  m->init_lock = 0;
}

/* Reads and single-statement writes run in autocommit. */
static int my_begin(sqlq_db *db, unsigned kind) {
  mysql_db *m = MY(db);
  int rc = sqlq__my_ready(db);
  if (rc != SQLQ_OK || !(kind & SQLQ__TX_WRITE) || (kind & SQLQ__TX_SINGLE)) return rc;
  rc = sqlq__my_query(db, m->conn, "START TRANSACTION", "START TRANSACTION");
  m->in_tx = m->tx_watch = rc == SQLQ_OK;
  return rc;
}

static int my_commit(sqlq_db *db) {
  mysql_db *m = MY(db);
  if (!m->in_tx) return SQLQ_OK;
  int rc = m->lost
             ? sqlq__error(db, SQLQ_UNAVAILABLE,
                           "mysql: lost the connection to %s in a transaction", db->url_redacted)
             : sqlq__my_tx_gone(db);
  if (rc == SQLQ_OK) rc = sqlq__my_query(db, m->conn, "COMMIT", "COMMIT");
  end_tx(db);
  return rc;
}

static int my_rollback(sqlq_db *db) {
  mysql_db *m = MY(db);
  int was_open = m->in_tx;
  int rc = SQLQ_OK;
  if (was_open && m->conn && !m->lost) rc = sqlq__my_query(db, m->conn, "ROLLBACK", "ROLLBACK");
  end_tx(db);
  return rc;
}

static const char *const schemes[] = {"mysql", "mariadb", NULL};

const sqlq__driver sqlq__driver_mysql = {
  .name = "mysql",
  .schemes = schemes,
  .options = options,
  .traits = SQLQ__TRAIT_DDL_COMMITS,
  .sql = sqlq__mysql_sql,
  /* A prepared statement takes at most 65,535 placeholders, and a row of
  ** ENQUEUE_ARRAY has 7 (ACK_ARRAY's 3). */
  .array_rows_max = 65535 / 7,
  /* Well within max_allowed_packet's defaults (MariaDB 16 MiB, MySQL 64). */
  .array_bytes_max = 4 << 20,
  .migrations = sqlq__mysql_migrations,
  .lanes_version = 12,
  .open = my_open,
  .close = my_close,
  .exec = my_exec,
  .init = my_init,
  .begin = my_begin,
  .commit = my_commit,
  .rollback = my_rollback,
  .prepare = my_prepare,
  .bind_int64 = sqlq__my_bind_int64,
  .bind_text = sqlq__my_bind_text,
  .bind_blob = sqlq__my_bind_blob,
  .bind_int64_array = sqlq__my_bind_int64_array,
  .bind_text_array = sqlq__my_bind_text_array,
  .bind_blob_array = sqlq__my_bind_blob_array,
  .step = my_step,
  .column_is_null = my_column_is_null,
  .column_int64 = my_column_int64,
  .column_blob = my_column_blob,
  .changes = my_changes,
  .reset = my_reset,
  .claim = my_claim,
  .pool_next = my_pool_next,
  .take_ids = sqlq__my_take_ids,
  .wait_prepare = sqlq__my_wait_prepare,
  .wait = sqlq__my_wait,
  .notify = sqlq__my_notify,
  .lock = sqlq__my_lock,
  .unlock = sqlq__my_unlock,
  .lock_check = sqlq__my_lock_check,
  .lock_xact = NULL,
  .sub_triggers = sqlq__my_sub_triggers,
  .native = my_native,
};
