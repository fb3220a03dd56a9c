/*
** sqlite_int.h -- state shared by the files of the SQLite driver:
** sqlite.c (connection, statements, transactions), sqlite_sql.c (the SQL
** text), sqlite_wait.c (wake-ups), sqlite_lock.c (named locks) and
** sqlite_sidecar.c (the sidecar file both of those use).
*/
#ifndef SQLQ_SQLITE_INT_H
#define SQLQ_SQLITE_INT_H

#include <sqlite3.h>
#include <sys/types.h>

#include "sqlq_int.h"

/* Statements of the driver itself, cached after the dialect's. */
enum {
  SQLQ__SQLITE_BEGIN_READ = SQLQ__SQL_COUNT,
  SQLQ__SQLITE_BEGIN_WRITE,
  SQLQ__SQLITE_COMMIT,
  SQLQ__SQLITE_ROLLBACK,
  SQLQ__SQLITE_DATA_VERSION,
  SQLQ__SQLITE_COUNT
};

/*
** One SQLite connection per database file per process, shared by every
** handle of that process that opens the file.  SQLite lets one writer in
** at a time anyway; sharing the connection keeps its page cache warm (a
** connection must drop its cache whenever another one committed) and hands
** the write turn from thread to thread through a mutex instead of SQLite's
** sleeping busy handler.  The mutex is held for the whole of each
** transaction.  A child process made by fork() never uses its parent's
** connection: entries are keyed by process id too.
*/
typedef struct sqlite_shared {
  char *key;            /* the file's absolute path; NULL in memory */
  pid_t pid;            /* the process that opened it */
  int refs;             /* handles using it */
  pthread_mutex_t turn; /* held by the handle in a transaction */
  sqlite3 *conn;
  const char *sync; /* the PRAGMA of the sync option (static text) */
  int configured;   /* its pragmas have run (sqlite.c's configure) */
  sqlite3_stmt *cache[SQLQ__SQLITE_COUNT];
  int64_t busy_deadline_ns; /* end of the current wait for another process */
  double busy_timeout;      /* of the handle holding the turn */
  struct sqlite_shared *next;
} sqlite_shared;

typedef struct sqlite_conn {
  sqlite_shared *sh;
  int holds_turn;       /* this handle holds sh->turn */
  char *path;           /* absolute path of the database file; NULL in memory */
  char *dir;            /* its directory */
  char *base;           /* its file name */
  char *sidecar;        /* path + "-sqlq": named locks and wake-up signals */
  int sidecar_fd;       /* opened at the first notify, -1 before */
  int inotify_fd;       /* opened at the first wait, -1 before */
  int64_t data_version; /* PRAGMA data_version when the wait was prepared */
  double busy_timeout;
} sqlite_conn;

#define SQLITE_CONN(db) ((sqlite_conn *)(db)->driver_data)

/* The dialect's statements and migrations (sqlite_sql.c). */
extern const char *const sqlq__sqlite_sql[SQLQ__SQL_COUNT];
extern const char *const sqlq__sqlite_migrations[SQLQ_SCHEMA_VERSION];

/* Map the connection's last error to a status and record it on db. */
int sqlq__sqlite_error(sqlq_db *db, int rc, const char *doing);

/* PRAGMA data_version of the connection, or -1 on error. */
int64_t sqlq__sqlite_data_version(sqlq_db *db);

/* The sub_triggers method (sqlite_sub.c). */
int sqlq__sqlite_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan);

/* Copy the first n bytes (at most 32 KiB) of the WAL-index (the -shm
** file) of db's database into buf, through the connection's own mapping
** of it (its sqlite3_file's xShmMap), on this process's turn on the
** connection.  Opening the -shm file apart would not do: closing it would
** drop every POSIX lock this process holds on the file.  Returns 1 when
** copied, 0 when there is nothing to copy (in memory, no WAL-index yet). */
int sqlq__sqlite_shm_read(sqlq_db *db, void *buf, size_t n);

/* The health method (sqlite_health.c). */
int sqlq__sqlite_health(sqlq_db *db, sqlq__health *h);

/* Wake-ups (sqlite_wait.c). */
int sqlq__sqlite_wait_prepare(sqlq_db *db, const char *queue);
int sqlq__sqlite_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns);
int sqlq__sqlite_notify(sqlq_db *db, const char *queue, int n);
void sqlq__sqlite_wait_close(sqlite_conn *c);

/* Open the sidecar file (c->sidecar) for reading and writing, creating it
** with the database file's mode (and owner, as root) if it is missing;
** refuse a symbolic link or anything but a regular file (sqlite_sidecar.c).
** Sets *fd to the close-on-exec descriptor, which the caller owns, and
** returns SQLQ_OK; or sets it to -1 and records why on db. */
int sqlq__sqlite_sidecar_open(sqlq_db *db, int *fd);

/* Named locks (sqlite_lock.c). */
int sqlq__sqlite_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len,
                      double timeout_s, sqlq__lockstate **out);
void sqlq__sqlite_unlock(sqlq_db *db, sqlq__lockstate *ls);
int sqlq__sqlite_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns);
int sqlq__sqlite_lock_list(sqlq_db *db, sqlq__lock_list *l);
int64_t sqlq__sqlite_lock_key(uint64_t key);

#endif /* SQLQ_SQLITE_INT_H */
