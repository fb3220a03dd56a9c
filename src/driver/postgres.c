/*
** postgres.c -- the PostgreSQL backend on libpq: connecting and
** reconnecting, prepared statements, transactions.
**
** One sqlq_db is one session.  Statements are prepared once per session
** and cached by id; integers and text are sent as text, blobs and arrays
** in binary, and results come back in binary.  A transaction the core
** marks single (SQLQ__TX_SINGLE) is its one statement, sent with a sync
** that commits it: one round trip.  Any other write transaction's BEGIN
** travels in one pipeline with its first statement.  A lazy transaction
** (SQLQ__TX_LAZY) sets synchronous_commit off in the same pipeline.  The
** NOTIFYs a transaction owes follow its COMMIT as a transaction of their
** own, whose results are read only before the next command.  Read-only
** work runs in autocommit: every read the core does is a single
** statement.
**
** A session lost outside a transaction is opened again at the next call;
** after a failed attempt, calls fail at once with SQLQ_UNAVAILABLE until a
** pause has passed that doubles from 50 ms up to 2 s (sqlq__backoff).  Within a
** transaction, a lost session fails the call with SQLQ_UNAVAILABLE and the
** transaction is gone.  A URL may name several hosts (a primary and its
** standbys): libpq tries them in turn at each connection, and
** target_session_attrs=read-write keeps the primary, so a reconnection
** after a failover finds the new one (docs/scale.md).  A write refused as
** read-only (SQLSTATE 25006) is SQLQ_UNAVAILABLE too, and the session is
** dropped at the next call for the same reason.  A session lost after a
** commit was sent and before its answer fails with SQLQ_UNAVAILABLE and a
** message saying that the transaction may have committed: no guess is
** made either way (lost_in_doubt).
*/
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "postgres_int.h"

/* URL options the driver reads: its own six, then those it passes on to
** libpq as connection keywords. */
#define OWN_OPTIONS 6
static const char *const options[] = {
  "notify",
  "poll_interval",
  "worker_synchronous_commit",
  "pooler",
  "listen_host",
  "listen_port",
  "host",
  "hostaddr",
  "port",
  "dbname",
  "user",
  "password",
  "passfile",
  "connect_timeout",
  "application_name",
  "options",
  "sslmode",
  "sslrootcert",
  "sslcert",
  "sslkey",
  "sslcrl",
  "target_session_attrs",
  "keepalives",
  "keepalives_idle",
  "keepalives_interval",
  "keepalives_count",
  "tcp_user_timeout",
  NULL,
};

static int is_libpq_option(const char *key) {
  for (const char *const *o = options + OWN_OPTIONS; *o; o++)
    if (strcmp(*o, key) == 0) return 1;
  return 0;
}

/* ---------------------------------------------------------------------
** Errors.
*/

/* The first line of msg, without libpq's "ERROR:  " style prefixes. */
static void first_line(const char *msg, char *out, size_t size) {
  if (msg == NULL || *msg == '\0') msg = "unknown error";
  size_t n = strcspn(msg, "\n");
  snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), msg);
}

/* SQLSTATE read_only_sql_transaction. */
#define READ_ONLY "25006"

/* The status for a SQLSTATE. */
static int status_of(const char *state) {
  if (state == NULL) return SQLQ_ERROR;
  if (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 ||
      strcmp(state, "57P03") == 0 || strcmp(state, "53300") == 0)
    return SQLQ_UNAVAILABLE;
  /* A server that turned read-only (a standby, or an old primary fenced
  ** with default_transaction_read_only): another host of the URL may be
  ** the primary now, and the session is opened anew (sqlq__pg_error). */
  if (strcmp(state, READ_ONLY) == 0) return SQLQ_UNAVAILABLE;
  if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0)
    return SQLQ_BUSY;
  if (strcmp(state, "57014") == 0) return SQLQ_TIMEOUT;
  /* A table, function or column (of a later version) the schema lacks. */
  if (strcmp(state, "42P01") == 0 || strcmp(state, "42883") == 0 || strcmp(state, "42703") == 0)
    return SQLQ_SCHEMA;
  if (strncmp(state, "22", 2) == 0) return SQLQ_MISUSE;
  return SQLQ_ERROR;
}

int sqlq__pg_error(sqlq_db *db, PGconn *conn, const PGresult *res, const char *what) {
  char line[400];
  if (conn == NULL || PQstatus(conn) == CONNECTION_BAD) {
    first_line(conn ? PQerrorMessage(conn) : "no connection", line, sizeof line);
    /* Before its commit was sent, a transaction dies with its session. */
    int open = conn && conn == PG(db)->conn && PG(db)->in_tx;
    return sqlq__error(db, SQLQ_UNAVAILABLE, "postgres: lost the connection to %s (%s%s): %s",
                       db->url_redacted, what, open ? "; the transaction was not committed" : "",
                       line);
  }
  const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  first_line(primary ? primary : PQerrorMessage(conn), line, sizeof line);
  int status = status_of(state);
  /* The session stays up on a read-only server: drop it at the next call
  ** out of a transaction, so that libpq looks for a read-write host. */
  if (state && strcmp(state, READ_ONLY) == 0 && conn == PG(db)->conn) PG(db)->read_only = 1;
  if (status == SQLQ_SCHEMA)
    return sqlq__error(
      db, status, "the database lacks (part of) the sqlq schema: run `sqlq init` (postgres: %s)",
      line);
  return sqlq__error(db, status, "postgres: %s failed: %s%s%s%s", what, line,
                     state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
}

/* ---------------------------------------------------------------------
** Connecting.
*/

#define TEXT(n) #n
#define NUMBER(n) TEXT(n)

/* Build the keyword/value arrays for libpq from url: its parts, then the
** libpq options of its query string. */
static int make_params(sqlq_db *db, postgres_db *p, const sqlq__url *url) {
  size_t n = 13 + (size_t)url->n_opts;
  p->keys = calloc(n, sizeof *p->keys);
  p->values = calloc(n, sizeof *p->values);
  if (p->keys == NULL || p->values == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  size_t k = 0;
  const char *dbname = url->path && url->path[0] == '/' ? url->path + 1 : url->path;
/* Both strings are copied: the URL is freed once the handle is open. */
#define ADD(key, val) \
  do { \
    p->keys[k] = strdup(key); \
    p->values[k] = strdup(val); \
    if (p->keys[k] == NULL || p->values[k] == NULL) \
      return sqlq__error(db, SQLQ_NOMEM, "out of memory"); \
    k++; \
  } while (0)
  ADD("fallback_application_name", "sqlq");
  ADD("connect_timeout", "10");
  /* Every session, the lock session too, has TCP keepalives and a limit on
  ** data left unacknowledged (sqlq__keepalive's values): on a link that
  ** drops every packet, a call fails within SQLQ__USER_TIMEOUT_MS and an
  ** idle session (a wait) ends within about 40 s, where TCP alone takes 15
  ** minutes and over 2 hours (docs/scale.md).  The URL's own keywords come
  ** later, and win. */
  ADD("keepalives", "1");
  ADD("keepalives_idle", NUMBER(SQLQ__KEEPIDLE_S));
  ADD("keepalives_interval", NUMBER(SQLQ__KEEPINTVL_S));
  ADD("keepalives_count", NUMBER(SQLQ__KEEPCNT));
  ADD("tcp_user_timeout", NUMBER(SQLQ__USER_TIMEOUT_MS));
  if (url->host) ADD("host", url->host);
  if (url->port) {
    char buf[8];
    snprintf(buf, sizeof buf, "%d", url->port);
    ADD("port", buf);
  }
  /* Several hosts: libpq tries them in turn, each with its port (an empty
  ** entry is libpq's default), and target_session_attrs says which will do. */
  if (url->ports) ADD("port", url->ports);
  if (url->user) ADD("user", url->user);
  if (url->password) ADD("password", url->password);
  if (dbname && *dbname) ADD("dbname", dbname);
  for (int i = 0; i < url->n_opts; i++)
    if (is_libpq_option(url->opts[i].key)) ADD(url->opts[i].key, url->opts[i].value);
#undef ADD
  return SQLQ_OK;
}

/* Read the URL option pooler (auto when absent) into p. */
static int read_pooler(sqlq_db *db, postgres_db *p, const sqlq__url *url) {
  const char *v = sqlq__url_option(url, "pooler");
  p->pooler = PG_POOLER_AUTO;
  if (v == NULL || strcmp(v, "auto") == 0) return SQLQ_OK;
  if (strcmp(v, "none") == 0)
    p->pooler = PG_POOLER_NONE;
  else if (strcmp(v, "transaction") == 0)
    p->pooler = PG_POOLER_TRANSACTION;
  else
    return sqlq__error(db, SQLQ_MISUSE, "URL option pooler must be auto, none or transaction");
  return SQLQ_OK;
}

/* Read listen_host (a host name, address or socket directory: printable
** text without spaces) and listen_port (1 to 65535) into p, when given. */
static int read_listen(sqlq_db *db, postgres_db *p, const sqlq__url *url) {
  const char *host = sqlq__url_option(url, "listen_host");
  const char *port = sqlq__url_option(url, "listen_port");
  if (host) {
    size_t n = strlen(host);
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)host[i] <= ' ' || (unsigned char)host[i] >= 0x7f) n = 0;
    if (n == 0 || n > 255)
      return sqlq__error(db, SQLQ_MISUSE,
                         "URL option listen_host must be a host name, address or directory");
  }
  if (port) {
    char *end;
    long v = strtol(port, &end, 10);
    if (*port < '0' || *port > '9' || *end || v < 1 || v > 65535)
      return sqlq__error(db, SQLQ_MISUSE, "URL option listen_port must be a port, 1 to 65535");
  }
  if ((host && (p->listen_host = strdup(host)) == NULL) ||
      (port && (p->listen_port = strdup(port)) == NULL))
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return SQLQ_OK;
}

/* Read the driver's own URL options into p: notify and
** worker_synchronous_commit (on/off switches, on and off when absent),
** poll_interval (0.001 to 3600 seconds, 1 when absent), pooler,
** listen_host and listen_port.  Returns SQLQ_OK, or the status of the
** first bad option with its message on db. */
static int read_options(sqlq_db *db, postgres_db *p, const sqlq__url *url) {
  p->notify = 1;
  p->poll_interval = 1.0;
  p->worker_sync = 0;
  int rc = sqlq__url_switch(db, url, "notify", &p->notify);
  if (rc == SQLQ_OK) rc = sqlq__url_switch(db, url, "worker_synchronous_commit", &p->worker_sync);
  if (rc == SQLQ_OK)
    rc = sqlq__url_seconds(db, url, "poll_interval", 0.001, 3600, &p->poll_interval);
  if (rc == SQLQ_OK) rc = read_pooler(db, p, url);
  if (rc == SQLQ_OK) rc = read_listen(db, p, url);
  return rc;
}

static void ignore_notice(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

PGconn *sqlq__pg_connect(sqlq_db *db) {
  postgres_db *p = PG(db);
  return sqlq__pg_connect_with(db, p->keys, p->values);
}

/*
** Whether conn reaches the server through a pooler: with pooler=auto, the
** first session of the handle asks the server for its process id and
** compares it with the one the connection's start-up gave (the cancel
** key's).  A pooler (PgBouncer, and the other poolers that can cancel)
** hands its clients keys of its own, since a client's server session
** changes; a server gives its own.  Asked once per handle, before any
** setting is made, at the cost of one round trip: a setting made on a
** pooled server session would stay there for other clients.  A pooler in
** session mode is taken for a transaction pool too (it costs what the
** transaction mode costs, and is correct).
*/
static void detect_pooler(postgres_db *p, PGconn *conn) {
  if (p->pooler != PG_POOLER_AUTO) {
    p->pooled = p->pooler == PG_POOLER_TRANSACTION;
    return;
  }
  /* Unanswered (the session failed at once): taken for a pool, for
  ** now, and asked again at the next connection. */
  PGresult *r = PQexec(conn, "SELECT pg_backend_pid()");
  int answered = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  p->pooled = !answered || atoi(PQgetvalue(r, 0, 0)) != PQbackendPID(conn);
  PQclear(r);
  if (answered) p->pooler = p->pooled ? PG_POOLER_TRANSACTION : PG_POOLER_NONE;
}

PGconn *sqlq__pg_connect_with(sqlq_db *db, const char *const *keys, const char *const *values) {
  postgres_db *p = PG(db);
  PGconn *conn = PQconnectdbParams(keys, values, 0);
  if (conn == NULL) {
    sqlq__error(db, SQLQ_NOMEM, "out of memory");
    return NULL;
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    char line[400];
    first_line(PQerrorMessage(conn), line, sizeof line);
    sqlq__error(db, SQLQ_UNAVAILABLE, "postgres: cannot connect to %s: %s", db->url_redacted, line);
    PQfinish(conn);
    return NULL;
  }
  /* libpq opens its socket close-on-exec itself (fcntl FD_CLOEXEC at each
  ** connect): programs the application starts do not inherit the session
  ** (tests/cli/pg_fds.sh). */
  /* Errors reach the caller through sqlq_errmsg(); libpq's own printing
  ** of notices (such as the FATAL a server sends as it shuts down) would
  ** put a second, unasked-for line on the application's stderr. */
  PQsetNoticeProcessor(conn, ignore_notice, NULL);
  detect_pooler(p, conn);
  /* Through a pooler, the server sessions are other clients' too: nothing
  ** is set (docs/scale.md says which settings a pooled role wants).  The
  ** session's statements are the library's few, prepared once: a plan
  ** made for each execution (which the server may choose after comparing
  ** costs) costs more than running them, and so would compiling them.
  ** Their plans must also not scan the whole table: a queue table that
  ** VACUUM last saw empty looks free to read in full, and a plan made then
  ** (VACUUM's own statistics invalidate the cached ones) would read every
  ** row, live and dead, at each claim and ack. */
  if (p->pooled) return conn;
  PGresult *r = PQexec(conn, "SET client_min_messages = warning;"
                             " SET plan_cache_mode = force_generic_plan; SET jit = off;"
                             " SET enable_seqscan = off");
  PQclear(r);
  return conn;
}

/* Forget what the old session had: its prepared statements, its LISTEN,
** the results it still owed. */
static void forget_session(postgres_db *p) {
  p->unread = 0;
  for (int i = 0; i < PG_SQL_COUNT; i++) {
    PQclear(p->stmts[i].res);
    p->stmts[i].res = NULL;
    p->stmts[i].prepared = 0;
  }
  sqlq__pg_forget_listen(p);
}

int sqlq__pg_ready(sqlq_db *db) {
  postgres_db *p = PG(db);
  if (p->conn && PQstatus(p->conn) == CONNECTION_OK && !p->read_only) return SQLQ_OK;
  if (p->in_tx)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "postgres: lost the connection to %s in a transaction",
                       db->url_redacted);
  int64_t wait_ns = sqlq__backoff_wait_ns(&p->reconnect);
  if (wait_ns > 0)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "postgres: %s is unreachable; next try in %lld ms",
                       db->url_redacted, (long long)(wait_ns / 1000000));
  if (p->conn) PQfinish(p->conn);
  forget_session(p);
  p->read_only = 0;
  p->conn = sqlq__pg_connect(db);
  sqlq__backoff_result(&p->reconnect, p->conn != NULL);
  return p->conn ? SQLQ_OK : db->errcode;
}

static void pg_close(sqlq_db *db);

static int pg_open(sqlq_db *db, const sqlq__url *url) {
  if (sqlq__dl_load(db, &sqlq__pg_lib) != SQLQ_OK) return db->errcode;
  postgres_db *p = calloc(1, sizeof *p);
  if (p == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  db->driver_data = p;
  p->sql = sqlq__postgres_sql;
  for (int i = 0; i < PG_SQL_COUNT; i++) p->stmts[i].id = i;
  int rc = read_options(db, p, url);
  if (rc == SQLQ_OK) rc = make_params(db, p, url);
  if (rc != SQLQ_OK) return rc;
  if ((p->conn = sqlq__pg_connect(db)) == NULL) return db->errcode;
  /* Handles on one database wake each other locally: with several hosts
  ** (in the authority or the host option), that database is whichever of
  ** them is the primary, so the ident names the list, not the host that
  ** answered first. */
  const char *hosts = url->ports ? url->host : sqlq__url_option(url, "host");
  const char *ports = url->ports ? url->ports : sqlq__url_option(url, "port");
  int list = hosts && strchr(hosts, ',');
  /* A session lock through a transaction pool is taken on a server
  ** session that other clients then use, and released by nobody. */
  db->lease_locks = p->pooled;
  char ident[1024];
  snprintf(ident, sizeof ident, "postgres:%s:%s/%s@%s", list ? hosts : PQhost(p->conn),
           list ? (ports ? ports : "") : PQport(p->conn), PQdb(p->conn), PQuser(p->conn));
  if ((db->ident = strdup(ident)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return SQLQ_OK;
}

static void free_notices(postgres_db *p) {
  while (p->notices) {
    pg_notice *n = p->notices;
    p->notices = n->next;
    free(n->queue);
    free(n);
  }
}

static void pg_close(sqlq_db *db) {
  postgres_db *p = PG(db);
  if (p == NULL) return;
  for (int i = 0; i < PG_SQL_COUNT; i++) {
    PQclear(p->stmts[i].res);
    for (int k = 0; k < PG_MAX_PARAMS; k++) free(p->stmts[i].owned[k]);
  }
  free_notices(p);
  free(p->listen_queue);
  free(p->listen_host);
  free(p->listen_port);
  if (p->listen_conn) PQfinish(p->listen_conn);
  if (p->conn) PQfinish(p->conn);
  if (p->lock_conn) PQfinish(p->lock_conn);
  for (size_t i = 0; p->keys && p->values && (p->keys[i] || p->values[i]); i++) {
    if (p->keys[i] && p->values[i] && strcmp(p->keys[i], "password") == 0)
      memset((char *)p->values[i], 0, strlen(p->values[i]));
    free((char *)p->keys[i]);
    free((char *)p->values[i]);
  }
  free(p->keys);
  free(p->values);
  free(p);
  db->driver_data = NULL;
}

/* The application writes through the session itself, so a transaction
** opened with sqlq_begin() must have sent its BEGIN by then. */
static void *pg_native(sqlq_db *db) {
  postgres_db *p = PG(db);
  if (p->in_tx && sqlq__pg_begin_now(db) != SQLQ_OK) return NULL;
  return sqlq__pg_conn(db);
}

/* ---------------------------------------------------------------------
** Statements.
*/

static int pg_prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  postgres_db *p = PG(db);
  sqlq__stmt *st = &p->stmts[id];
  *out = st;
  if (p->sql[id] == NULL)
    return sqlq__error(db, SQLQ_ERROR, "postgres: statement %d is not in this dialect", id);
  return SQLQ_OK;
}

/* Whether i (1-based) is a parameter a statement can hold: the arrays of
** sqlq__stmt hold PG_MAX_PARAMS; a statement of the dialect with more is
** a bug, refused here rather than written past them. */
static int slot_ok(int i) {
  return i >= 1 && i <= PG_MAX_PARAMS;
}

static int pg_bind_int64(sqlq__stmt *st, int i, int64_t v) {
  if (!slot_ok(i)) return SQLQ_MISUSE;
  snprintf(st->ints[i - 1], sizeof st->ints[i - 1], "%lld", (long long)v);
  st->values[i - 1] = st->ints[i - 1];
  st->lengths[i - 1] = 0;
  st->formats[i - 1] = 0;
  if (i > st->n_params) st->n_params = i;
  return SQLQ_OK;
}

static int pg_bind_text(sqlq__stmt *st, int i, const char *s) {
  if (!slot_ok(i)) return SQLQ_MISUSE;
  st->values[i - 1] = s;
  st->lengths[i - 1] = 0;
  st->formats[i - 1] = 0;
  if (i > st->n_params) st->n_params = i;
  return SQLQ_OK;
}

static int pg_bind_blob(sqlq__stmt *st, int i, const void *v, size_t n) {
  if (!slot_ok(i)) return SQLQ_MISUSE;
  st->values[i - 1] = n ? v : "";
  st->lengths[i - 1] = (int)n;
  st->formats[i - 1] = 1;
  if (i > st->n_params) st->n_params = i;
  return SQLQ_OK;
}

/* Binary arrays: a one-dimensional array of n elements of type oid, each
** written by put(k, at) (which returns the element's length, -1 for
** NULL, and writes it at `at` when not NULL). */
#define OID_INT8 20
#define OID_TEXT 25
#define OID_BYTEA 17

static void put32(char *at, int32_t v) {
  uint32_t be = htonl((uint32_t)v);
  memcpy(at, &be, 4);
}

static char *array_header(size_t payload, size_t n, int has_null, int32_t oid, size_t *len) {
  *len = 20 + 4 * n + payload;
  char *buf = malloc(*len);
  if (buf == NULL) return NULL;
  put32(buf, 1);
  put32(buf + 4, has_null);
  put32(buf + 8, oid);
  put32(buf + 12, (int32_t)n);
  put32(buf + 16, 1);
  return buf;
}

static int bind_array(sqlq__stmt *st, int i, char *buf, size_t len) {
  if (buf == NULL) return SQLQ_NOMEM;
  if (len > 0x7fffffff || !slot_ok(i)) {
    free(buf);
    return slot_ok(i) ? SQLQ_TOOBIG : SQLQ_MISUSE;
  }
  free(st->owned[i - 1]);
  st->owned[i - 1] = buf;
  st->values[i - 1] = buf;
  st->lengths[i - 1] = (int)len;
  st->formats[i - 1] = 1;
  if (i > st->n_params) st->n_params = i;
  return SQLQ_OK;
}

static int pg_bind_int64_array(sqlq__stmt *st, int i, const int64_t *v, size_t n) {
  size_t len;
  char *buf = array_header(8 * n, n, 0, OID_INT8, &len), *at = buf + 20;
  for (size_t k = 0; buf && k < n; k++, at += 12) {
    uint64_t u = (uint64_t)v[k];
    put32(at, 8);
    put32(at + 4, (int32_t)(u >> 32));
    put32(at + 8, (int32_t)(u & 0xffffffffu));
  }
  return bind_array(st, i, buf, len);
}

static int bind_bytes_array(sqlq__stmt *st, int i, const void *const *p, const size_t *lens,
                            size_t n, int32_t oid) {
  size_t payload = 0;
  int has_null = 0;
  for (size_t k = 0; k < n; k++) {
    if (p[k] == NULL)
      has_null = 1;
    else
      payload += lens ? lens[k] : strlen(p[k]);
  }
  size_t len;
  char *buf = array_header(payload, n, has_null, oid, &len), *at = buf + 20;
  for (size_t k = 0; buf && k < n; k++) {
    if (p[k] == NULL) {
      put32(at, -1);
      at += 4;
      continue;
    }
    size_t m = lens ? lens[k] : strlen(p[k]);
    put32(at, (int32_t)m);
    if (m) memcpy(at + 4, p[k], m);
    at += 4 + m;
  }
  return bind_array(st, i, buf, len);
}

static int pg_bind_text_array(sqlq__stmt *st, int i, const char *const *v, size_t n) {
  return bind_bytes_array(st, i, (const void *const *)v, NULL, n, OID_TEXT);
}

static int pg_bind_blob_array(sqlq__stmt *st, int i, const void *const *p, const size_t *len,
                              size_t n) {
  return bind_bytes_array(st, i, p, len, n, OID_BYTEA);
}

static char *stmt_name(const sqlq__stmt *st, char *buf, size_t size) {
  snprintf(buf, size, "sqlq_%d", st->id);
  return buf;
}

/* Leave pipeline mode unless results are still owed to it. */
static void leave_pipeline(postgres_db *p) {
  if (p->unread == 0 && PQpipelineStatus(p->conn) != PQ_PIPELINE_OFF) PQexitPipelineMode(p->conn);
}

/* Read the results of one pipeline, up to and including its sync; keep
** none.  Stops at a broken connection, or when nothing more is owed. */
static void skip_to_sync(PGconn *conn) {
  for (int nulls = 0; nulls < 2 && PQstatus(conn) == CONNECTION_OK;) {
    PGresult *r = PQgetResult(conn);
    if (r == NULL) {
      nulls++;
      continue;
    }
    nulls = 0;
    ExecStatusType s = PQresultStatus(r);
    PQclear(r);
    if (s == PGRES_PIPELINE_SYNC) return;
  }
}

PGconn *sqlq__pg_conn(sqlq_db *db) {
  postgres_db *p = PG(db);
  if (p->conn == NULL) return NULL;
  for (; p->unread > 0; p->unread--) skip_to_sync(p->conn);
  leave_pipeline(p);
  return p->conn;
}

/* Record that the session was lost after a pipeline that commits (a
** single-statement transaction, or a COMMIT) was sent and before any of its
** answers said it failed: the server may have committed it.  The status is
** SQLQ_UNAVAILABLE like any lost session, and the message says that the
** outcome is unknown, so that the caller does not take the work for
** undone: a job enqueued so may exist (a dedupe key makes trying again
** safe), an ack may have been done (trying again answers SQLQ_STALE). */
static int lost_in_doubt(sqlq_db *db, PGconn *conn, const char *what) {
  char line[400];
  first_line(PQerrorMessage(conn), line, sizeof line);
  return sqlq__error(db, SQLQ_UNAVAILABLE,
                     "postgres: lost the connection to %s after sending %s, before its answer: "
                     "the transaction may have committed (its outcome is unknown): %s",
                     db->url_redacted,
                     strcmp(what, "COMMIT") == 0 ? "COMMIT" : "a statement that commits by itself",
                     line);
}

/* Whether the session is lost, or ends with the error res: libpq makes an
** error result of a closed connection, and a server that stops sends a
** FATAL error first, maybe while a commit waits for a synchronous standby
** (the transaction has then committed locally). */
static int session_ends(PGconn *conn, const PGresult *res) {
  const char *severity = res ? PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED) : NULL;
  return PQstatus(conn) == CONNECTION_BAD ||
         (severity && (strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0));
}

/* Wait until the first result of the pipeline just sent has come, by
** db->call_deadline_ns; when it has not, close the session (a pooler
** that has no server session to give, or a server that does not answer:
** what it was sent may still run) and fail with SQLQ_TIMEOUT.  The rest
** of the answer comes with the first result (the server sends them
** together). */
static int await_answer(sqlq_db *db, postgres_db *p, const char *what) {
  PGconn *c = p->conn;
  for (;;) {
    if (PQflush(c) == 0 && !PQisBusy(c)) break;
    struct pollfd fd = {PQsocket(c), POLLIN, 0};
    int64_t left = db->call_deadline_ns - sqlq__monotonic_ns();
    if (fd.fd < 0 || left <= 0) break;
    if (poll(&fd, 1, sqlq__poll_ms(db->call_deadline_ns)) < 0 && errno != EINTR) break;
    if (!PQconsumeInput(c)) break;
  }
  if (PQstatus(c) == CONNECTION_OK && !PQisBusy(c)) return SQLQ_OK;
  PQfinish(c);
  p->conn = NULL;
  forget_session(p);
  return sqlq__error(db, SQLQ_TIMEOUT, "postgres: %s: %s gave no answer in time (closed it)", what,
                     db->url_redacted);
}

/* Collect the results of a pipeline of `count` queries and its sync:
** results[k] gets the k-th query's result.  commits says that the
** pipeline commits its transaction (see lost_in_doubt).  Returns SQLQ_OK
** or the status of the first failure (recorded on db).  The results of
** pipelines sent after it stay unread. */
static int pipeline_results(sqlq_db *db, postgres_db *p, int count, PGresult **results, int commits,
                            const char *what) {
  PGconn *conn = p->conn;
  int rc = SQLQ_OK;
  if (db->call_deadline_ns && (rc = await_answer(db, p, what)) != SQLQ_OK) return rc;
  for (int k = 0; k < count; k++) {
    PGresult *r = PQgetResult(conn);
    if (r == NULL) {
      if (rc == SQLQ_OK)
        rc = commits && session_ends(conn, NULL) ? lost_in_doubt(db, conn, what)
                                                 : sqlq__pg_error(db, conn, NULL, what);
      break;
    }
    results[k] = r;
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK && rc == SQLQ_OK)
      rc = commits && session_ends(conn, r) ? lost_in_doubt(db, conn, what)
                                            : sqlq__pg_error(db, conn, r, what);
    PGresult *end = PQgetResult(conn); /* the NULL closing each query */
    if (end) PQclear(end);
  }
  skip_to_sync(conn);
  leave_pipeline(p);
  return rc;
}

/* Prepare sql[id] on the session, once; through a pooler, never (a
** statement prepared on one server session is unknown on the others). */
static int prepare_once(sqlq_db *db, postgres_db *p, sqlq__stmt *st) {
  if (st->prepared || p->pooled) return SQLQ_OK;
  char name[16];
  PGresult *r = PQprepare(p->conn, stmt_name(st, name, sizeof name), p->sql[st->id], 0, NULL);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  int rc = ok ? SQLQ_OK : sqlq__pg_error(db, p->conn, r, "prepare");
  PQclear(r);
  st->prepared = ok;
  return rc;
}

/* Send st in the pipeline: the prepared statement, or through a pooler
** its text, as an unnamed statement. */
static int send_stmt(const postgres_db *p, const sqlq__stmt *st) {
  if (p->pooled)
    return PQsendQueryParams(p->conn, p->sql[st->id], st->n_params, NULL, st->values, st->lengths,
                             st->formats, 1);
  char name[16];
  return PQsendQueryPrepared(p->conn, stmt_name(st, name, sizeof name), st->n_params, st->values,
                             st->lengths, st->formats, 1);
}

/* Run st.  A pending BEGIN goes in one pipeline with it, and so does the
** setting that makes a lazy transaction's commit not wait for the disk.
** A single-statement transaction is st alone, committed by the sync that
** ends its pipeline; the transaction is then over. */
static int run_stmt(sqlq_db *db, postgres_db *p, sqlq__stmt *st) {
  PGconn *conn = sqlq__pg_conn(db);
  int rc = prepare_once(db, p, st);
  if (rc != SQLQ_OK) return rc;
  int opening = p->begin_pending || p->single_pending;
  if (!opening && p->pooled) {
    st->res = PQexecParams(conn, p->sql[st->id], st->n_params, NULL, st->values, st->lengths,
                           st->formats, 1);
    ExecStatusType s = PQresultStatus(st->res);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
      return sqlq__pg_error(db, conn, st->res, "query");
    return SQLQ_OK;
  }
  if (!opening) {
    char name[16];
    st->res = PQexecPrepared(conn, stmt_name(st, name, sizeof name), st->n_params, st->values,
                             st->lengths, st->formats, 1);
    ExecStatusType s = PQresultStatus(st->res);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
      return sqlq__pg_error(db, conn, st->res, "query");
    return SQLQ_OK;
  }
  sqlq__stmt *lazy = p->lazy ? &p->stmts[PG_SQL_LAZY] : NULL;
  if (lazy && (rc = prepare_once(db, p, lazy)) != SQLQ_OK) return rc;
  int begin = p->begin_pending, single = p->single_pending;
  p->begin_pending = 0;
  if (p->single_pending) {
    p->single_pending = 0;
    p->in_tx = 0;
  }
  PGresult *results[3] = {NULL, NULL, NULL};
  int count = begin + (lazy != NULL) + 1;
  int sent = PQenterPipelineMode(conn) &&
             (!begin || PQsendQueryParams(conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0)) &&
             (!lazy || send_stmt(p, lazy)) && send_stmt(p, st) && PQpipelineSync(conn);
  if (sent) {
    rc = pipeline_results(db, p, count, results, single, "query");
  } else {
    rc = sqlq__pg_error(db, conn, NULL, "query");
    leave_pipeline(p);
  }
  for (int k = 0; k < count - 1; k++) PQclear(results[k]);
  st->res = results[count - 1];
  return rc;
}

static int pg_step(sqlq_db *db, sqlq__stmt *st) {
  postgres_db *p = PG(db);
  if (st->res == NULL) {
    int rc = p->in_tx && p->conn ? SQLQ_OK : sqlq__pg_ready(db);
    if (rc == SQLQ_OK) rc = run_stmt(db, p, st);
    if (rc != SQLQ_OK) return rc;
    st->row = -1;
  }
  st->row++;
  return st->row < PQntuples(st->res) ? SQLQ__ROW : SQLQ__DONE;
}

static int pg_column_is_null(sqlq__stmt *st, int i) {
  return PQgetisnull(st->res, st->row, i);
}

static int64_t pg_column_int64(sqlq__stmt *st, int i) {
  if (PQgetisnull(st->res, st->row, i)) return 0;
  const unsigned char *v = (const unsigned char *)PQgetvalue(st->res, st->row, i);
  int len = PQgetlength(st->res, st->row, i);
  uint64_t u = 0;
  for (int k = 0; k < len; k++) u = (u << 8) | v[k];
  switch (len) { /* sign-extend the narrower integer types */
  case 1:
    return u != 0; /* boolean */
  case 2:
    return (int16_t)u;
  case 4:
    return (int32_t)u;
  default:
    return (int64_t)u;
  }
}

static const void *pg_column_blob(sqlq__stmt *st, int i, size_t *len) {
  if (PQgetisnull(st->res, st->row, i)) {
    *len = 0;
    return NULL;
  }
  *len = (size_t)PQgetlength(st->res, st->row, i);
  return PQgetvalue(st->res, st->row, i);
}

static int64_t pg_changes(sqlq_db *db, sqlq__stmt *st) {
  (void)db;
  return st->res ? atoll(PQcmdTuples(st->res)) : 0;
}

static void pg_reset(sqlq__stmt *st) {
  PQclear(st->res);
  st->res = NULL;
  for (int k = 0; k < st->n_params; k++) {
    free(st->owned[k]);
    st->owned[k] = NULL;
    st->values[k] = NULL;
  }
  st->n_params = 0;
}

PGresult *sqlq__pg_exec_own(sqlq_db *db, int id, int n, const char *const *params) {
  postgres_db *p = PG(db);
  sqlq__stmt *st = &p->stmts[id];
  for (int k = 0; k < n; k++) pg_bind_text(st, k + 1, params[k]);
  int rc = pg_step(db, st);
  PGresult *r = st->res;
  st->res = NULL;
  pg_reset(st);
  if (rc != SQLQ__ROW && rc != SQLQ__DONE) {
    PQclear(r);
    return NULL;
  }
  return r;
}

/* ---------------------------------------------------------------------
** Scripts and transactions.
*/

static int simple(sqlq_db *db, const char *sql, const char *what) {
  PGconn *conn = sqlq__pg_conn(db);
  PGresult *r = PQexec(conn, sql);
  ExecStatusType s = PQresultStatus(r);
  int rc =
    s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? SQLQ_OK : sqlq__pg_error(db, conn, r, what);
  PQclear(r);
  return rc;
}

int sqlq__pg_begin_now(sqlq_db *db) {
  postgres_db *p = PG(db);
  if (!p->begin_pending) return SQLQ_OK;
  p->begin_pending = 0;
  return simple(db, "BEGIN", "BEGIN");
}

static int pg_exec(sqlq_db *db, const char *script) {
  postgres_db *p = PG(db);
  int rc = p->in_tx ? SQLQ_OK : sqlq__pg_ready(db);
  if (rc == SQLQ_OK) rc = sqlq__pg_begin_now(db);
  return rc == SQLQ_OK ? simple(db, script, "script") : rc;
}

/* Read-only work is single statements in autocommit; only writes open a
** transaction, whose BEGIN waits for its first statement. */
static int pg_begin(sqlq_db *db, unsigned kind) {
  postgres_db *p = PG(db);
  if (!(kind & SQLQ__TX_WRITE)) return SQLQ_OK;
  int rc = sqlq__pg_ready(db);
  if (rc != SQLQ_OK) return rc;
  p->in_tx = 1;
  p->single_pending = (kind & SQLQ__TX_SINGLE) != 0;
  p->begin_pending = !p->single_pending;
  p->lazy = (kind & SQLQ__TX_LAZY) && !p->worker_sync;
  return SQLQ_OK;
}

/* Enter pipeline mode and send there each notification owed, as st
** (NOTIFY or NOTIFY_TX), then forget them.  Returns whether all were sent. */
static int pipeline_notices(postgres_db *p, sqlq__stmt *st) {
  int sent = PQenterPipelineMode(p->conn);
  for (pg_notice *n = p->notices; sent && n; n = n->next) {
    pg_bind_text(st, 1, n->queue);
    pg_bind_text(st, 2, n->payload);
    sent = send_stmt(p, st);
  }
  pg_reset(st);
  free_notices(p);
  return sent;
}

/* Send the notifications owed, after whatever the pipeline already holds,
** without waiting for their results: each is a transaction of its own
** (see postgres_sql.c), and a lost one only delays a wake-up. */
static void send_notices(sqlq_db *db, postgres_db *p) {
  if (p->notices == NULL || p->conn == NULL) return;
  sqlq__stmt *st = &p->stmts[PG_SQL_NOTIFY];
  /* Preparing needs the connection out of pipeline mode: pg_commit
  ** prepares the statement before it sends its COMMIT. */
  if (!st->prepared &&
      (PQpipelineStatus(p->conn) != PQ_PIPELINE_OFF || prepare_once(db, p, st) != SQLQ_OK)) {
    free_notices(p);
    return;
  }
  int synced = pipeline_notices(p, st) && PQpipelineSync(p->conn);
  if (synced && !p->pooled) {
    p->unread++;
    return;
  }
  /* A pooler may hand the server session to another client at the
  ** first end of a transaction: nothing is left unread there. */
  if (synced) skip_to_sync(p->conn);
  leave_pipeline(p);
}

/* Commit through a pooler: the notifications owed go in the transaction,
** before its COMMIT, all in one pipeline (the server sends them when the
** transaction commits); nothing is left for after it, when the server
** session may be another client's. */
static int commit_pooled(sqlq_db *db, postgres_db *p) {
  PGconn *conn = p->conn;
  int count = 1;
  for (pg_notice *n = p->notices; n; n = n->next) count++;
  PGresult **results = calloc((size_t)count, sizeof *results);
  if (results == NULL) {
    free_notices(p);
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  int sent = pipeline_notices(p, &p->stmts[PG_SQL_NOTIFY_TX]);
  sent =
    sent && PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) && PQpipelineSync(conn);
  int rc;
  if (sent) {
    rc = pipeline_results(db, p, count, results, 1, "COMMIT");
  } else {
    rc = sqlq__pg_error(db, conn, NULL, "COMMIT");
    leave_pipeline(p);
  }
  if (rc == SQLQ_OK && strcmp(PQcmdStatus(results[count - 1]), "COMMIT") != 0)
    rc = sqlq__error(db, SQLQ_ERROR, "postgres: the transaction was rolled back");
  for (int k = 0; k < count; k++) PQclear(results[k]);
  free(results);
  /* A notification that failed left the transaction open and aborted. */
  if (rc != SQLQ_OK && p->conn && PQtransactionStatus(p->conn) != PQTRANS_IDLE)
    PQclear(PQexec(p->conn, "ROLLBACK"));
  return rc;
}

static int pg_commit(sqlq_db *db) {
  postgres_db *p = PG(db);
  int sent_nothing = p->begin_pending || p->single_pending;
  int open = p->in_tx && !sent_nothing;
  p->in_tx = p->begin_pending = p->single_pending = 0;
  if (sent_nothing) free_notices(p);
  if (!open) { /* nothing to commit: a single statement committed itself */
    send_notices(db, p);
    return SQLQ_OK;
  }
  PGconn *conn = sqlq__pg_conn(db);
  if (p->pooled) return commit_pooled(db, p);
  if (p->notices && prepare_once(db, p, &p->stmts[PG_SQL_NOTIFY]) != SQLQ_OK) free_notices(p);
  int sent = PQenterPipelineMode(conn) &&
             PQsendQueryParams(conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) &&
             PQpipelineSync(conn);
  if (!sent) {
    free_notices(p);
    leave_pipeline(p);
    return sqlq__pg_error(db, conn, NULL, "COMMIT");
  }
  /* The notifications go right behind the COMMIT, before its answer is
  ** awaited; should the COMMIT fail, they only wake workers who find
  ** nothing. */
  send_notices(db, p);
  PGresult *result = NULL;
  int rc = pipeline_results(db, p, 1, &result, 1, "COMMIT");
  /* A COMMIT of a transaction that had failed answers ROLLBACK. */
  if (rc == SQLQ_OK && strcmp(PQcmdStatus(result), "COMMIT") != 0)
    rc = sqlq__error(db, SQLQ_ERROR, "postgres: the transaction was rolled back");
  PQclear(result);
  return rc;
}

static int pg_rollback(sqlq_db *db) {
  postgres_db *p = PG(db);
  free_notices(p);
  int was_open = p->in_tx && !p->begin_pending && !p->single_pending;
  p->in_tx = p->begin_pending = p->single_pending = 0;
  if (!was_open || PQstatus(p->conn) != CONNECTION_OK) return SQLQ_OK;
  return simple(db, "ROLLBACK", "ROLLBACK");
}

int sqlq__pg_notify(sqlq_db *db, const char *queue, int n) {
  postgres_db *p = PG(db);
  if (!p->notify) return SQLQ_OK;
  pg_notice *no = calloc(1, sizeof *no);
  if (no == NULL || (no->queue = strdup(queue)) == NULL) {
    free(no);
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  if (n == SQLQ__WAKE_ALL) {
    /* A payload without a ticket wakes every waiter (postgres_wait.c). */
    snprintf(no->payload, sizeof no->payload, "all");
  } else {
    uint64_t token = 0;
    if (getrandom(&token, sizeof token, 0) != (ssize_t)sizeof token)
      token = (uint64_t)sqlq__monotonic_ns();
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)token);
    snprintf(no->payload, sizeof no->payload, "%d %s", n, hex);
    sqlq__pg_ticket_sent(hex);
  }
  no->next = p->notices;
  p->notices = no;
  return SQLQ_OK;
}

static const char *const schemes[] = {"postgres", "postgresql", NULL};

const sqlq__driver sqlq__driver_postgres = {
  .name = "postgres",
  .schemes = schemes,
  .options = options,
  .traits = SQLQ__TRAIT_NOTIFY_AT_COMMIT,
  .sql = sqlq__postgres_sql,
  /* An ack's arrays meet the jobs in a join whose generic plan, made with
  ** the statistics of a table that VACUUM saw empty, can be a nested loop
  ** that compares each ref with each job: 21,845 refs in one statement
  ** once took 40 s.  Statements of 1000 bound that worst case. */
  .array_rows_max = 1000,
  .migrations = sqlq__postgres_migrations,
  .lanes_version = 11,
  .open = pg_open,
  .close = pg_close,
  .exec = pg_exec,
  .begin = pg_begin,
  .commit = pg_commit,
  .rollback = pg_rollback,
  .prepare = pg_prepare,
  .bind_int64 = pg_bind_int64,
  .bind_text = pg_bind_text,
  .bind_blob = pg_bind_blob,
  .bind_int64_array = pg_bind_int64_array,
  .bind_text_array = pg_bind_text_array,
  .bind_blob_array = pg_bind_blob_array,
  .step = pg_step,
  .column_is_null = pg_column_is_null,
  .column_int64 = pg_column_int64,
  .column_blob = pg_column_blob,
  .changes = pg_changes,
  .reset = pg_reset,
  .wait_prepare = sqlq__pg_wait_prepare,
  .wait = sqlq__pg_wait,
  .notify = sqlq__pg_notify,
  .lock = sqlq__pg_lock,
  .unlock = sqlq__pg_unlock,
  .lock_check = sqlq__pg_lock_check,
  .lock_xact = sqlq__pg_lock_xact,
  .sub_triggers = sqlq__pg_sub_triggers,
  .native = pg_native,
};
