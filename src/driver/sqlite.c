/*
** sqlite.c -- the SQLite backend: connection, statements, transactions.
**
** One sqlq_db is one sqlite3 connection in WAL mode.  Every transaction
** that writes starts with BEGIN IMMEDIATE, so that it waits for the write
** lock at its start (through the busy handler) instead of failing later.
** All handles of a process on one file share one connection (see
** sqlite_shared in sqlite_int.h).  Between processes, the busy handler
** sleeps in short, growing steps (20 us up to 2 ms) rather
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

static const char *const driver_sql[SQLQ__SQLITE_COUNT - SQLQ__SQL_COUNT] = {
  [SQLQ__SQLITE_BEGIN_READ - SQLQ__SQL_COUNT] = "BEGIN",
  [SQLQ__SQLITE_BEGIN_WRITE - SQLQ__SQL_COUNT] = "BEGIN IMMEDIATE",
  [SQLQ__SQLITE_COMMIT - SQLQ__SQL_COUNT] = "COMMIT",
  [SQLQ__SQLITE_ROLLBACK - SQLQ__SQL_COUNT] = "ROLLBACK",
  [SQLQ__SQLITE_DATA_VERSION - SQLQ__SQL_COUNT] = "PRAGMA data_version",
};

int sqlq__sqlite_error(sqlq_db *db, int rc, const char *doing) {
  sqlite_conn *c = SQLITE_CONN(db);
  const char *msg = c && c->sh && c->sh->conn ? sqlite3_errmsg(c->sh->conn) : sqlite3_errstr(rc);
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
    /* A table, or a column of a later version (the library's statements
    ** name no other), that the schema lacks. */
    if (strncmp(msg, "no such table: sqlq_", 20) == 0 || strncmp(msg, "no such column: ", 16) == 0)
      return sqlq__error(db, SQLQ_SCHEMA,
                         "the database lacks (part of) the sqlq schema: run `sqlq init` (%s)", msg);
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

/* Waits for another process's write lock: short, growing sleeps. */
static int busy_handler(void *arg, int count) {
  sqlite_shared *sh = arg;
  int64_t now = sqlq__monotonic_ns();
  if (count == 0) sh->busy_deadline_ns = now + (int64_t)(sh->busy_timeout * 1e9);
  if (now >= sh->busy_deadline_ns) return 0;
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

/* Pick the PRAGMA for the sync URL option (the core refused unknown ones). */
static int sync_pragma(sqlq_db *db, const sqlq__url *url, const char **pragma) {
  const char *sync = sqlq__url_option(url, "sync");
  *pragma = "PRAGMA synchronous=NORMAL";
  if (sync == NULL || strcmp(sync, "normal") == 0) return SQLQ_OK;
  if (strcmp(sync, "full") == 0)
    *pragma = "PRAGMA synchronous=FULL";
  else if (strcmp(sync, "off") == 0)
    *pragma = "PRAGMA synchronous=OFF";
  else
    return sqlq__error(db, SQLQ_MISUSE, "URL option sync must be off, normal or full");
  return SQLQ_OK;
}

/* The process-wide list of shared connections. */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite_shared *shared_list;

static void shared_free(sqlite_shared *sh) {
  for (int i = 0; i < SQLQ__SQLITE_COUNT; i++) sqlite3_finalize(sh->cache[i]);
  sqlite3_close_v2(sh->conn);
  pthread_mutex_destroy(&sh->turn);
  free(sh->key);
  free(sh);
}

/* Record why the connection sh could not be opened or configured (src,
** SQLite's code) on db. */
static void open_failed(sqlq_db *db, sqlite_shared *sh, int src) {
  const char *msg = sh->conn ? sqlite3_errmsg(sh->conn) : sqlite3_errstr(src);
  int status = (src & 0xff) == SQLITE_BUSY ? SQLQ_BUSY : SQLQ_UNAVAILABLE;
  sqlq__error(db, status, "cannot open the SQLite database '%s': %s",
              sh->key ? sh->key : ":memory:", msg);
}

/* The size the WAL file is cut back to when it starts over.  A reader that
** holds an old snapshot keeps every checkpoint from the frames written
** after it began, so the WAL grows by every commit's pages while it reads
** (docs/health.md, checkpoint_starved_frames); SQLite reuses the file
** from its start afterwards but keeps its size, gigabytes after a long
** report.  With this limit the first commit after a complete checkpoint
** truncates it. */
#define WAL_LIMIT "PRAGMA journal_size_limit=67108864"

/* Run the connection's pragmas once, before its first statement: WAL
** (persistent in the file, so this only matters for a new database), the
** sync option, temporary tables in memory, and WAL_LIMIT.  These read the
** file's header and schema, which is where a file that is not a database
** fails. */
static int configure(sqlq_db *db, sqlite_shared *sh) {
  if (sh->configured) return SQLQ_OK;
  int src = SQLITE_OK;
  if (sh->key) src = sqlite3_exec(sh->conn, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  if (src == SQLITE_OK) src = sqlite3_exec(sh->conn, sh->sync, NULL, NULL, NULL);
  if (src == SQLITE_OK) src = sqlite3_exec(sh->conn, "PRAGMA temp_store=MEMORY", NULL, NULL, NULL);
  if (src == SQLITE_OK) src = sqlite3_exec(sh->conn, WAL_LIMIT, NULL, NULL, NULL);
  if (src != SQLITE_OK) {
    open_failed(db, sh, src);
    return db->errcode;
  }
  sh->configured = 1;
  return SQLQ_OK;
}

/* Open a new connection to path (NULL: in memory).  Its pragmas wait for
** its first statement (configure): opening reads nothing of the file, so a
** call that runs no SQL, such as a named lock, which lives in the sidecar
** file, never makes SQLite create the -wal and -shm files (and the close
** remove them again), which was a fifth of what `sqlq lock -n NAME -- true`
** cost (docs/benchmarks.md, "Start-up"). */
static int shared_open(sqlq_db *db, const char *path, const char *sync, sqlite_shared **out) {
  sqlite_shared *sh = calloc(1, sizeof *sh);
  if (sh == NULL || (path && (sh->key = strdup(path)) == NULL)) {
    free(sh);
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  }
  pthread_mutex_init(&sh->turn, NULL);
  sh->pid = getpid();
  sh->refs = 1;
  sh->busy_timeout = db->busy_timeout;
  sh->sync = sync;
  int flags =
    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  int src = sqlite3_open_v2(path ? path : ":memory:", &sh->conn, flags, NULL);
  if (src == SQLITE_OK) {
    sqlite3_busy_handler(sh->conn, busy_handler, sh);
    src = sqlite3_create_function(sh->conn, "sqlq_now", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
                                  now_function, NULL, NULL);
  }
  if (src != SQLITE_OK) {
    open_failed(db, sh, src);
    shared_free(sh);
    return db->errcode;
  }
  *out = sh;
  return SQLQ_OK;
}

/* Find this process's connection to path, or open one. */
static int shared_get(sqlq_db *db, const char *path, const char *sync, sqlite_shared **out) {
  if (path == NULL) return shared_open(db, NULL, sync, out);
  pid_t pid = getpid();
  pthread_mutex_lock(&shared_lock);
  sqlite_shared *sh = shared_list;
  while (sh && (sh->pid != pid || strcmp(sh->key, path) != 0)) sh = sh->next;
  int rc = SQLQ_OK;
  if (sh) {
    sh->refs++;
  } else if ((rc = shared_open(db, path, sync, &sh)) == SQLQ_OK) {
    sh->next = shared_list;
    shared_list = sh;
  }
  pthread_mutex_unlock(&shared_lock);
  *out = sh;
  return rc;
}

static void shared_put(sqlite_shared *sh) {
  if (sh->key == NULL) {
    shared_free(sh);
    return;
  }
  pthread_mutex_lock(&shared_lock);
  int last = --sh->refs == 0;
  if (last)
    for (sqlite_shared **p = &shared_list; *p; p = &(*p)->next)
      if (*p == sh) {
        *p = sh->next;
        break;
      }
  pthread_mutex_unlock(&shared_lock);
  if (last) shared_free(sh);
}

static int sqlite_open(sqlq_db *db, const sqlq__url *url) {
  sqlite_conn *c = calloc(1, sizeof *c);
  if (c == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  db->driver_data = c;
  c->sidecar_fd = -1;
  c->inotify_fd = -1;
  c->busy_timeout = db->busy_timeout;
  const char *sync;
  int rc = sync_pragma(db, url, &sync);
  if (rc != SQLQ_OK) return rc;
  if (url->host)
    return sqlq__error(db, SQLQ_MISUSE,
                       "sqlite URLs name a file: sqlite:PATH or sqlite:///ABSOLUTE/PATH");
  if (url->path == NULL || url->path[0] == '\0')
    return sqlq__error(db, SQLQ_MISUSE,
                       "sqlite URL has no file path: expected sqlite:PATH or sqlite::memory:");
  int memory = strcmp(url->path, ":memory:") == 0;
  if (!memory && (rc = set_paths(db, c, url->path)) != SQLQ_OK) return rc;
  if ((rc = shared_get(db, c->path, sync, &c->sh)) != SQLQ_OK) return rc;
  if (memory) {
    char ident[64];
    snprintf(ident, sizeof ident, ":memory:%p", (void *)db);
    db->ident = strdup(ident);
  } else {
    db->ident = strdup(c->path);
  }
  return db->ident ? SQLQ_OK : sqlq__error(db, SQLQ_NOMEM, "out of memory");
}

static void give_turn(sqlite_conn *c) {
  if (!c->holds_turn) return;
  c->holds_turn = 0;
  pthread_mutex_unlock(&c->sh->turn);
}

/* Take this process's turn on the shared connection, waiting at most the
** busy timeout for a handle in another thread. */
static int take_turn(sqlq_db *db) {
  sqlite_conn *c = SQLITE_CONN(db);
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  int64_t ns = until.tv_nsec + (int64_t)(c->busy_timeout * 1e9);
  until.tv_sec += ns / 1000000000;
  until.tv_nsec = ns % 1000000000;
  int r = pthread_mutex_clocklock(&c->sh->turn, CLOCK_MONOTONIC, &until);
  if (r == ETIMEDOUT)
    return sqlq__error(
      db, SQLQ_BUSY,
      "the database is busy: another handle of this process kept a transaction open for %g s",
      c->busy_timeout);
  if (r != 0)
    return sqlq__error(db, SQLQ_ERROR, "cannot take the connection's mutex: %s", strerror(r));
  c->holds_turn = 1;
  c->sh->busy_timeout = c->busy_timeout;
  return SQLQ_OK;
}

static void sqlite_close(sqlq_db *db) {
  sqlite_conn *c = SQLITE_CONN(db);
  if (c == NULL) return;
  give_turn(c);
  if (c->sh) shared_put(c->sh);
  sqlq__sqlite_wait_close(c);
  free(c->path);
  free(c->dir);
  free(c->base);
  free(c->sidecar);
  free(c);
  db->driver_data = NULL;
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

/* The cached statement id into *out (NULL on failure); the caller holds
** the turn. */
static int get_stmt(sqlq_db *db, int id, sqlite3_stmt **out) {
  sqlite_shared *sh = SQLITE_CONN(db)->sh;
  *out = NULL;
  int rc = configure(db, sh);
  if (rc != SQLQ_OK) return rc;
  if (sh->cache[id] == NULL) {
    const char *text =
      id < SQLQ__SQL_COUNT ? sqlq__sqlite_sql[id] : driver_sql[id - SQLQ__SQL_COUNT];
    char *sql = placeholders(text);
    if (sql == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    int src =
      sqlite3_prepare_v3(sh->conn, sql, -1, SQLITE_PREPARE_PERSISTENT, &sh->cache[id], NULL);
    free(sql);
    if (src != SQLITE_OK) return sqlq__sqlite_error(db, src, "cannot prepare a statement");
  }
  *out = sh->cache[id];
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

static int sqlite_begin(sqlq_db *db, unsigned kind) {
  int rc = take_turn(db);
  if (rc != SQLQ_OK) return rc;
  rc = run_simple(db, (kind & SQLQ__TX_WRITE) ? SQLQ__SQLITE_BEGIN_WRITE : SQLQ__SQLITE_BEGIN_READ,
                  "cannot begin a transaction");
  if (rc != SQLQ_OK) give_turn(SQLITE_CONN(db));
  return rc;
}

/* A failed commit keeps the turn: the core then calls rollback. */
static int sqlite_commit(sqlq_db *db) {
  int rc = run_simple(db, SQLQ__SQLITE_COMMIT, "cannot commit");
  if (rc == SQLQ_OK) give_turn(SQLITE_CONN(db));
  return rc;
}

static int sqlite_rollback(sqlq_db *db) {
  sqlite_conn *c = SQLITE_CONN(db);
  int rc = SQLQ_OK;
  if (!sqlite3_get_autocommit(c->sh->conn)) /* else SQLite already rolled back */
    rc = run_simple(db, SQLQ__SQLITE_ROLLBACK, "cannot roll back");
  give_turn(c);
  return rc;
}

static int sqlite_exec(sqlq_db *db, const char *script) {
  int rc = configure(db, SQLITE_CONN(db)->sh);
  if (rc != SQLQ_OK) return rc;
  int src = sqlite3_exec(SQLITE_CONN(db)->sh->conn, script, NULL, NULL, NULL);
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
  int rc = sqlq__sqlite_error(db, src, "statement failed");
  /* A unique key violated undoes the statement only (SQLite's default
  ** conflict resolution, ABORT). */
  int ext = sqlite3_extended_errcode(SQLITE_CONN(db)->sh->conn);
  return ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY ? SQLQ__CONSTRAINT
                                                                                : rc;
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
  return sqlite3_changes64(SQLITE_CONN(db)->sh->conn);
}

static int64_t sqlite_last_insert_id(sqlq_db *db) {
  return sqlite3_last_insert_rowid(SQLITE_CONN(db)->sh->conn);
}

static void sqlite_reset(sqlq__stmt *st) {
  sqlite3_reset((sqlite3_stmt *)st);
  sqlite3_clear_bindings((sqlite3_stmt *)st);
}

int64_t sqlq__sqlite_data_version(sqlq_db *db) {
  sqlite3_stmt *st;
  if (take_turn(db) != SQLQ_OK) return -1;
  int64_t v = -1;
  if (get_stmt(db, SQLQ__SQLITE_DATA_VERSION, &st) == SQLQ_OK) {
    v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
  }
  give_turn(SQLITE_CONN(db));
  return v;
}

int sqlq__sqlite_shm_read(sqlq_db *db, void *buf, size_t n) {
  sqlite_conn *c = SQLITE_CONN(db);
  sqlite3_file *f = NULL;
  volatile void *region = NULL;
  int had = c->holds_turn, copied = 0;
  if (c->path == NULL || n > 32768) return 0;
  if (!had && take_turn(db) != SQLQ_OK) return 0;
  if (sqlite3_file_control(c->sh->conn, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK &&
      f != NULL && f->pMethods != NULL && f->pMethods->iVersion >= 2 &&
      f->pMethods->xShmMap(f, 0, 32768, 0, &region) == SQLITE_OK && region != NULL) {
    memcpy(buf, (const void *)region, n);
    copied = 1;
  }
  if (!had) give_turn(c);
  return copied;
}

static void *sqlite_native(sqlq_db *db) {
  return SQLITE_CONN(db)->sh->conn;
}

static const char *const schemes[] = {"sqlite", NULL};
static const char *const options[] = {"sync", NULL};

const sqlq__driver sqlq__driver_sqlite = {
  .name = "sqlite",
  .schemes = schemes,
  .options = options,
  .traits = 0,
  .sql = sqlq__sqlite_sql,
  .migrations = sqlq__sqlite_migrations,
  .lanes_version = 11,
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
  .last_insert_id = sqlite_last_insert_id,
  .reset = sqlite_reset,
  .wait_prepare = sqlq__sqlite_wait_prepare,
  .wait = sqlq__sqlite_wait,
  .notify = sqlq__sqlite_notify,
  .lock = sqlq__sqlite_lock,
  .sub_triggers = sqlq__sqlite_sub_triggers,
  .unlock = sqlq__sqlite_unlock,
  .lock_check = sqlq__sqlite_lock_check,
  .health = sqlq__sqlite_health,
  .lock_list = sqlq__sqlite_lock_list,
  .lock_key = sqlq__sqlite_lock_key,
  .native = sqlite_native,
};
