/*
** sqlite.c -- the SQLite backend: connection, statements, transactions.
**
** One sqlq_db is one sqlite3 connection in WAL mode.  Every transaction
** that writes starts with BEGIN IMMEDIATE, so that it waits for the write
** lock at its start (through the busy handler) instead of failing later.
** The busy handler sleeps in short, growing steps (20 us up to 2 ms) rather
** than SQLite's default steps of 1 ms and more, because queue transactions
** hold the lock for tens of microseconds.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqlite_int.h"

static const char *const driver_sql[SQLITE_STMT_COUNT - SQLQ__SQL_COUNT] = {
  [SQLITE_STMT_BEGIN_READ - SQLQ__SQL_COUNT] = "BEGIN",
  [SQLITE_STMT_BEGIN_WRITE - SQLQ__SQL_COUNT] = "BEGIN IMMEDIATE",
  [SQLITE_STMT_COMMIT - SQLQ__SQL_COUNT] = "COMMIT",
  [SQLITE_STMT_ROLLBACK - SQLQ__SQL_COUNT] = "ROLLBACK",
  [SQLITE_STMT_DATA_VERSION - SQLQ__SQL_COUNT] = "PRAGMA data_version",
};

int sqlq__sqlite_error(sqlq_db *db, int rc, const char *doing) {
  sqlite_conn *c = SQLITE_CONN(db);
  const char *msg = c && c->conn ? sqlite3_errmsg(c->conn) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return sqlq__error(db, SQLQ_BUSY, "%s: the database is busy (%s)", doing, msg);
  case SQLITE_NOMEM:
    return sqlq__error(db, SQLQ_NOMEM, "%s: out of memory", doing);
  case SQLITE_CANTOPEN:
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT:
  case SQLITE_PERM:
  case SQLITE_READONLY:
  case SQLITE_AUTH:
    return sqlq__error(db, SQLQ_UNAVAILABLE, "%s: %s", doing, msg);
  case SQLITE_ERROR:
    if (strncmp(msg, "no such table: sqlq_", 20) == 0)
      return sqlq__error(db, SQLQ_SCHEMA, "the database has no sqlq schema: run `sqlq init` (%s)", msg);
    /* fall through */
  default:
    return sqlq__error(db, SQLQ_ERROR, "%s: %s", doing, msg);
  }
}

/* sqlq_now(): the host's clock in microseconds since the epoch. */
static void now_function(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sqlite3_result_int64(ctx, (sqlite3_int64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

static int busy_handler(void *arg, int count) {
  sqlite_conn *c = arg;
  int64_t now = sqlq__monotonic_ns();
  if (count == 0) c->busy_deadline_ns = now + (int64_t)(c->busy_timeout * 1e9);
  if (now >= c->busy_deadline_ns) return 0;
  long us = count < 7 ? 20L << count : 2000; /* 20, 40, ... 1280, then 2000 us */
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
  return 1;
}

/* Resolve the file's absolute path, its directory and name, and the
** sidecar's path.  The file may not exist yet; its directory must. */
static int set_paths(sqlq_db *db, sqlite_conn *c, const char *path) {
  char *copy = strdup(path);
  if (copy == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  char *slash = strrchr(copy, '/');
  const char *dir = slash ? (slash == copy ? "/" : copy) : ".";
  const char *base = slash ? slash + 1 : copy;
  if (slash) *slash = '\0';
  char resolved[PATH_MAX];
  int rc = SQLQ_OK;
  if (*base == '\0') {
    rc = sqlq__error(db, SQLQ_MISUSE, "sqlite URL names a directory, not a file");
  } else if (realpath(dir, resolved) == NULL) {
    rc = sqlq__error(db, SQLQ_UNAVAILABLE, "cannot open the SQLite database: directory '%s': %s",
                     dir, strerror(errno));
  } else {
    size_t dl = strlen(resolved), bl = strlen(base);
    c->dir = strdup(resolved);
    c->base = strdup(base);
    c->path = malloc(dl + 1 + bl + 1);
    c->sidecar = malloc(dl + 1 + bl + 6);
    if (!c->dir || !c->base || !c->path || !c->sidecar) {
      rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
    } else {
      snprintf(c->path, dl + bl + 2, "%s%s%s", resolved, dl > 1 ? "/" : "", base);
      snprintf(c->sidecar, dl + bl + 7, "%s-sqlq", c->path);
    }
  }
  free(copy);
  return rc;
}

/* Read the driver's own URL options into the PRAGMA text for sync. */
static int sync_pragma(sqlq_db *db, const sqlq__url *url, const char **pragma) {
  static const char *const known[] = {"payload_limit", "history", "busy_timeout", "sync", NULL};
  for (int i = 0; i < url->n_opts; i++) {
    int ok = 0;
    for (const char *const *k = known; *k && !ok; k++) ok = strcmp(*k, url->opts[i].key) == 0;
    if (!ok)
      return sqlq__error(db, SQLQ_MISUSE, "unknown URL option '%.40s' for sqlite (known: %s)",
                         url->opts[i].key, "payload_limit, history, busy_timeout, sync");
  }
  const char *sync = sqlq__url_option(url, "sync");
  *pragma = "PRAGMA synchronous=FULL";
  if (sync == NULL || strcmp(sync, "full") == 0) return SQLQ_OK;
  if (strcmp(sync, "normal") == 0) *pragma = "PRAGMA synchronous=NORMAL";
  else if (strcmp(sync, "off") == 0) *pragma = "PRAGMA synchronous=OFF";
  else return sqlq__error(db, SQLQ_MISUSE, "URL option sync must be off, normal or full");
  return SQLQ_OK;
}

static int sqlite_open(sqlq_db *db, const sqlq__url *url) {
  sqlite_conn *c = calloc(1, sizeof *c);
  if (c == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  db->drv = c;
  c->sidecar_fd = -1;
  c->inotify_fd = -1;
  c->busy_timeout = db->busy_timeout;
  const char *sync;
  int rc = sync_pragma(db, url, &sync);
  if (rc != SQLQ_OK) return rc;
  if (url->host)
    return sqlq__error(db, SQLQ_MISUSE, "sqlite URLs name a file: sqlite:PATH or sqlite:///ABSOLUTE/PATH");
  if (url->path == NULL || url->path[0] == '\0')
    return sqlq__error(db, SQLQ_MISUSE, "sqlite URL has no file path: expected sqlite:PATH or sqlite::memory:");
  int memory = strcmp(url->path, ":memory:") == 0;
  if (!memory && (rc = set_paths(db, c, url->path)) != SQLQ_OK) return rc;

  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  int src = sqlite3_open_v2(memory ? ":memory:" : c->path, &c->conn, flags, NULL);
  if (src != SQLITE_OK) return sqlq__sqlite_error(db, src, "cannot open the SQLite database");
  sqlite3_busy_handler(c->conn, busy_handler, c);
  src = sqlite3_create_function(c->conn, "sqlq_now", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
                                now_function, NULL, NULL);
  if (src == SQLITE_OK && !memory) src = sqlite3_exec(c->conn, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  if (src == SQLITE_OK) src = sqlite3_exec(c->conn, sync, NULL, NULL, NULL);
  if (src != SQLITE_OK) return sqlq__sqlite_error(db, src, "cannot open the SQLite database");

  if (memory) {
    char ident[64];
    snprintf(ident, sizeof ident, ":memory:%p", (void *)db);
    db->ident = strdup(ident);
  } else {
    db->ident = strdup(c->path);
  }
  return db->ident ? SQLQ_OK : sqlq__error(db, SQLQ_NOMEM, "out of memory");
}

static void sqlite_close(sqlq_db *db) {
  sqlite_conn *c = SQLITE_CONN(db);
  if (c == NULL) return;
  for (int i = 0; i < SQLITE_STMT_COUNT; i++) sqlite3_finalize(c->cache[i]);
  sqlite3_close_v2(c->conn);
  sqlq__sqlite_wait_close(c);
  free(c->path);
  free(c->dir);
  free(c->base);
  free(c->sidecar);
  free(c);
  db->drv = NULL;
}

/* The dialect writes parameters $N; SQLite reads "$N" as a name numbered
** by first appearance, so they are rewritten to ?N, which SQLite numbers N. */
static char *placeholders(const char *sql) {
  char *out = strdup(sql);
  if (out == NULL) return NULL;
  for (char *p = out; *p; p++)
    if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') *p = '?';
  return out;
}

static int get_stmt(sqlq_db *db, int id, sqlite3_stmt **out) {
  sqlite_conn *c = SQLITE_CONN(db);
  if (c->cache[id] == NULL) {
    const char *text = id < SQLQ__SQL_COUNT ? sqlq__sqlite_sql[id] : driver_sql[id - SQLQ__SQL_COUNT];
    char *sql = placeholders(text);
    if (sql == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    int src = sqlite3_prepare_v3(c->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &c->cache[id], NULL);
    free(sql);
    if (src != SQLITE_OK) return sqlq__sqlite_error(db, src, "cannot prepare a statement");
  }
  *out = c->cache[id];
  return SQLQ_OK;
}

static int sqlite_prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  return get_stmt(db, id, (sqlite3_stmt **)out);
}

static int run_simple(sqlq_db *db, int id, const char *doing) {
  sqlite3_stmt *st;
  int rc = get_stmt(db, id, &st);
  if (rc != SQLQ_OK) return rc;
  int src = sqlite3_step(st);
  sqlite3_reset(st);
  return src == SQLITE_DONE ? SQLQ_OK : sqlq__sqlite_error(db, src, doing);
}

static int sqlite_begin(sqlq_db *db, int write) {
  return run_simple(db, write ? SQLITE_STMT_BEGIN_WRITE : SQLITE_STMT_BEGIN_READ, "cannot begin a transaction");
}

static int sqlite_commit(sqlq_db *db) {
  return run_simple(db, SQLITE_STMT_COMMIT, "cannot commit");
}

static int sqlite_rollback(sqlq_db *db) {
  sqlite_conn *c = SQLITE_CONN(db);
  if (sqlite3_get_autocommit(c->conn)) return SQLQ_OK; /* SQLite already rolled back */
  return run_simple(db, SQLITE_STMT_ROLLBACK, "cannot roll back");
}

static int sqlite_exec(sqlq_db *db, const char *script) {
  int src = sqlite3_exec(SQLITE_CONN(db)->conn, script, NULL, NULL, NULL);
  return src == SQLITE_OK ? SQLQ_OK : sqlq__sqlite_error(db, src, "cannot change the schema");
}

/* Bindings: the core keeps bound text and blobs valid until reset. */
static int bind_result(int src) {
  return src == SQLITE_OK ? SQLQ_OK : src == SQLITE_TOOBIG ? SQLQ_TOOBIG : SQLQ_ERROR;
}

static int sqlite_bind_int64(sqlq__stmt *st, int i, int64_t v) {
  return bind_result(sqlite3_bind_int64((sqlite3_stmt *)st, i, v));
}

static int sqlite_bind_text(sqlq__stmt *st, int i, const char *s) {
  if (s == NULL) return bind_result(sqlite3_bind_null((sqlite3_stmt *)st, i));
  return bind_result(sqlite3_bind_text((sqlite3_stmt *)st, i, s, -1, SQLITE_STATIC));
}

static int sqlite_bind_blob(sqlq__stmt *st, int i, const void *p, size_t n) {
  return bind_result(sqlite3_bind_blob64((sqlite3_stmt *)st, i, p, n, SQLITE_STATIC));
}

static int sqlite_step(sqlq_db *db, sqlq__stmt *st) {
  int src = sqlite3_step((sqlite3_stmt *)st);
  if (src == SQLITE_ROW) return SQLQ__ROW;
  if (src == SQLITE_DONE) return SQLQ__DONE;
  return sqlq__sqlite_error(db, src, "statement failed");
}

static int sqlite_column_is_null(sqlq__stmt *st, int i) {
  return sqlite3_column_type((sqlite3_stmt *)st, i) == SQLITE_NULL;
}

static int64_t sqlite_column_int64(sqlq__stmt *st, int i) {
  return sqlite3_column_int64((sqlite3_stmt *)st, i);
}

static const void *sqlite_column_blob(sqlq__stmt *st, int i, size_t *len) {
  sqlite3_stmt *s = (sqlite3_stmt *)st;
  if (sqlite3_column_type(s, i) == SQLITE_NULL) {
    *len = 0;
    return NULL;
  }
  const void *p = sqlite3_column_blob(s, i);
  *len = (size_t)sqlite3_column_bytes(s, i);
  return p ? p : ""; /* a zero-length value is not NULL */
}

static int64_t sqlite_changes(sqlq_db *db, sqlq__stmt *st) {
  (void)st;
  return sqlite3_changes64(SQLITE_CONN(db)->conn);
}

static void sqlite_reset(sqlq__stmt *st) {
  sqlite3_reset((sqlite3_stmt *)st);
  sqlite3_clear_bindings((sqlite3_stmt *)st);
}

int64_t sqlq__sqlite_data_version(sqlq_db *db) {
  sqlite3_stmt *st;
  if (get_stmt(db, SQLITE_STMT_DATA_VERSION, &st) != SQLQ_OK) return -1;
  int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_reset(st);
  return v;
}

static const char *const schemes[] = {"sqlite", NULL};

const sqlq_driver sqlq__driver_sqlite = {
  .name = "sqlite",
  .schemes = schemes,
  .caps = SQLQ__CAP_LOCKS | SQLQ__CAP_CROSS_WAKE,
  .sql = sqlq__sqlite_sql,
  .migrations = sqlq__sqlite_migrations,
  .open = sqlite_open,
  .close = sqlite_close,
  .exec = sqlite_exec,
  .begin = sqlite_begin,
  .commit = sqlite_commit,
  .rollback = sqlite_rollback,
  .prepare = sqlite_prepare,
  .bind_int64 = sqlite_bind_int64,
  .bind_text = sqlite_bind_text,
  .bind_blob = sqlite_bind_blob,
  .step = sqlite_step,
  .column_is_null = sqlite_column_is_null,
  .column_int64 = sqlite_column_int64,
  .column_blob = sqlite_column_blob,
  .changes = sqlite_changes,
  .reset = sqlite_reset,
  .wait_prepare = sqlq__sqlite_wait_prepare,
  .wait = sqlq__sqlite_wait,
  .notify = sqlq__sqlite_notify,
  .lock = sqlq__sqlite_lock,
  .unlock = sqlq__sqlite_unlock,
};
