/*
** firebird_int.h -- declarations shared by the files of the Firebird
** driver (firebird.c: attachments, transactions, errors; firebird_stmt.c:
** statements on XSQLDA; firebird_sql.c: the dialect; firebird_wait.c:
** wake-ups with POST_EVENT; firebird_lock.c: named locks; firebird_sub.c:
** the triggers of table subscriptions).
**
** The driver speaks the legacy ISC API of libfbclient (ibase.h), which
** serves both a server (`firebird://`) and an embedded database file
** (`firebird:PATH`, the engine loaded into the process).
*/
#ifndef SQLQ_FIREBIRD_INT_H
#define SQLQ_FIREBIRD_INT_H

#include "firebird_api.h"

#include "sqlq_int.h"

/* The server's clock in microseconds since the epoch, as Firebird 3 reads
** it: local time of the server (run it with TZ=UTC), millisecond
** resolution, fixed for the length of a statement. */
#define FB_NOW_US \
  "CAST(DATEDIFF(MILLISECOND FROM TIMESTAMP '1970-01-01 00:00:00' TO CURRENT_TIMESTAMP) * 1000" \
  " AS BIGINT)"

/* Separates the statements of a script (PSQL bodies hold semicolons). */
#define FB_SEP "\n^\n"

/* The driver's own statements, numbered after the core's. */
enum {
  FB_SQL_EVENT_NAME = SQLQ__SQL_COUNT, /* $1 channel -> the name of its event */
  FB_SQL_POST,                         /* $1 channel: posts its event at commit */
  FB_SQL_COUNT
};

/* The most elements of one batch statement: each packed array of
** integers fits a VARCHAR(32765) even when every element takes the 21
** bytes of "-9223372036854775808,". */
#define FB_ARRAY_ROWS_MAX (32765 / 21)
/* The most bytes of payloads and group keys of one batch statement: with
** the lengths ahead of them (FB_ARRAY_ROWS_MAX of at most 6 bytes), each
** packed array fits a VARCHAR(32765). */
#define FB_ARRAY_BYTES_MAX 24000

/* Most parameters ($1..$N) of one statement, and most `?` marks. */
#define FB_MAX_PARAMS 10
#define FB_MAX_MARKS 16

/* A value bound to a parameter: an integer, bytes, or NULL.  An array is
** bound as bytes the driver packs (see firebird_stmt.c) and owns. */
typedef struct fb_value {
  enum { FB_UNSET, FB_NULL, FB_INT, FB_BYTES } kind;
  int64_t i;
  const char *p; /* the core's, valid until reset, or owned */
  size_t n;
  char *owned; /* p when the driver made it; freed at reset */
} fb_value;

/* A result column of the current row.  A BLOB column NAME may come with a
** column NAME_INLINE of the same bytes as a VARCHAR when they are short,
** NULL otherwise: reading it saves the round trips of a blob. */
typedef struct fb_col {
  int inline_col; /* the column NAME_INLINE, or -1 */
  char *blob;     /* a BLOB column's bytes, read on first access */
  size_t blob_len;
  int blob_read;
} fb_col;

/*
** A statement of one attachment: its text with $N rewritten to `?`,
** prepared once per attachment (the first time it runs), bound by $N,
** executed at its first step.  A SELECT (or a selectable EXECUTE BLOCK)
** is a cursor fetched row by row; any other statement runs at once, and
** a RETURNING clause gives its one row (all NULL: no row matched).
*/
struct sqlq__stmt {
  int id;
  struct fb_db *fb;
  isc_stmt_handle h;                 /* 0 until prepared */
  int type;                          /* isc_info_sql_stmt_* */
  unsigned char marks[FB_MAX_MARKS]; /* parameter (0-based) of each `?` */
  int n_marks;
  XSQLDA *in;   /* one variable per mark */
  char *in_buf; /* their data, rebuilt at each execution */
  size_t in_cap;
  XSQLDA *out; /* result columns, or NULL */
  char *out_buf;
  short *out_ind;
  fb_col *cols;
  fb_value vals[FB_MAX_PARAMS];
  int executed; /* rows (if any) are being fetched */
  int cursor_open;
  int singleton_row; /* a non-cursor statement's row is there to show */
  int done;
  int64_t changes;              /* -1: not asked yet */
  short in_types[FB_MAX_MARKS]; /* each mark's type as described */
  short in_subtypes[FB_MAX_MARKS];
};

typedef struct fb_db {
  isc_db_handle att; /* 0 when detached */
  isc_tr_handle tr;  /* the open transaction, 0 when none */
  /* What it takes to attach again (and to attach the lock connection):
  ** the connection string and the DPB with user, password and charset. */
  char *dsn;
  char *dpb;
  short dpb_len;
  int embedded;
  int lost;               /* att broke: attach again before the next use */
  sqlq__backoff reattach; /* pacing of those attempts */
  sqlq__stmt stmts[FB_SQL_COUNT];
  /* Named locks (firebird_lock.c): the attachment that holds them, 0
  ** until the first lock, and how many locks are held there; a descriptor
  ** of its socket (-1: none, embedded), and the number of lock
  ** attachments made so far, which tells each lock whether it was taken
  ** on this one. */
  isc_db_handle lock_att;
  int locks_held;
  int lock_sock;
  unsigned lock_session;
  /* Wake-ups (firebird_wait.c). */
  struct fb_events *events; /* NULL until the first wait */
  int events_off;           /* URL option events=off: waiters poll */
  double poll_interval;     /* seconds between looks when events cannot be had */
} fb_db;

#define FB(db) ((fb_db *)(db)->driver_data)

extern const char *const sqlq__firebird_sql[FB_SQL_COUNT];
extern const char *const sqlq__firebird_migrations[SQLQ_SCHEMA_VERSION];

/* Record the error in status on db, saying what was being done: SQLQ_BUSY
** for lock conflicts (and db->tx_retryable set: the transaction may run
** again), SQLQ_UNAVAILABLE for a lost or refused attachment, SQLQ_SCHEMA
** for a missing sqlq table, else SQLQ_ERROR.  Returns the status. */
int sqlq__fb_error(sqlq_db *db, const ISC_STATUS *status, const char *doing);
/* Whether status holds the code gdscode anywhere in its vector. */
int sqlq__fb_has(const ISC_STATUS *status, ISC_STATUS gdscode);
/* Whether status is a lock conflict: another transaction holds the row. */
int sqlq__fb_conflict(const ISC_STATUS *status);

/* Attach another connection to db's database (for named locks). */
int sqlq__fb_attach(sqlq_db *db, isc_db_handle *out);
/* Start a transaction on att: writable, READ COMMITTED RECORD_VERSION,
** waiting up to wait_s seconds for row locks (< 0: for ever; 0: NO WAIT). */
int sqlq__fb_start(sqlq_db *db, isc_db_handle *att, double wait_s, isc_tr_handle *out);
/* The descriptors open at a moment: bit fd of open, for fd < n; n < 0
** when they could not be listed (see firebird.c, "Descriptors"). */
typedef struct sqlq__fb_fds {
  unsigned char *open;
  int n;
} sqlq__fb_fds;
/* Note the descriptors open now in *s. */
void sqlq__fb_fds_note(sqlq__fb_fds *s);
/* Make the descriptors opened since sqlq__fb_fds_note(s) close-on-exec;
** free what s holds. */
void sqlq__fb_fds_cloexec_new(sqlq__fb_fds *s);
/* A descriptor of the caller's own (close-on-exec) for the one TCP socket
** opened since sqlq__fb_fds_note(s), or -1 when none or several were;
** free what s holds. */
int sqlq__fb_fds_new_socket(sqlq__fb_fds *s);

/* Make sure db has a transaction to run a statement in. */
int sqlq__fb_need_tx(sqlq_db *db);
/* Make sure db's attachment is up: when it was lost (and no transaction
** is open), drop its statements and event registration and attach again,
** paced by sqlq__backoff; SQLQ_UNAVAILABLE while that fails. */
int sqlq__fb_ready(sqlq_db *db);

/* Statements (firebird_stmt.c). */
int sqlq__fb_prepare(sqlq_db *db, int id, sqlq__stmt **out);
int sqlq__fb_bind_int64(sqlq__stmt *st, int i, int64_t v);
int sqlq__fb_bind_text(sqlq__stmt *st, int i, const char *s);
int sqlq__fb_bind_blob(sqlq__stmt *st, int i, const void *p, size_t n);
int sqlq__fb_bind_int64_array(sqlq__stmt *st, int i, const int64_t *v, size_t n);
int sqlq__fb_bind_text_array(sqlq__stmt *st, int i, const char *const *v, size_t n);
int sqlq__fb_bind_blob_array(sqlq__stmt *st, int i, const void *const *p, const size_t *len,
                             size_t n);
int sqlq__fb_step(sqlq_db *db, sqlq__stmt *st);
int sqlq__fb_column_is_null(sqlq__stmt *st, int i);
int64_t sqlq__fb_column_int64(sqlq__stmt *st, int i);
const void *sqlq__fb_column_blob(sqlq__stmt *st, int i, size_t *len);
int64_t sqlq__fb_changes(sqlq_db *db, sqlq__stmt *st);
void sqlq__fb_reset(sqlq__stmt *st);
/* Drop st's prepared statement (before detaching). */
void sqlq__fb_forget(sqlq__stmt *st);
/* Run one statement of a script, without parameters or results. */
int sqlq__fb_exec_one(sqlq_db *db, const char *sql, size_t len);

/* Wake-ups (firebird_wait.c).  sqlq__fb_forget_wait cancels the handle's
** events and detaches their attachment (before fb_close detaches the
** main one, and whenever the main attachment is made again). */
int sqlq__fb_wait_prepare(sqlq_db *db, const char *channel);
int sqlq__fb_wait(sqlq_db *db, const char *channel, int wake_fd, int64_t deadline_ns);
int sqlq__fb_notify(sqlq_db *db, const char *channel, int n);
void sqlq__fb_forget_wait(sqlq_db *db);

/* The triggers of table subscriptions (firebird_sub.c). */
int sqlq__fb_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan);

/* Named locks (firebird_lock.c). */
int sqlq__fb_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out);
void sqlq__fb_unlock(sqlq_db *db, sqlq__lockstate *ls);
int sqlq__fb_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns);
/* Detach the lock attachment, if any (the core has unlocked every lock
** before closing; on a lost attachment, forget it). */
void sqlq__fb_forget_locks(sqlq_db *db);

#endif /* SQLQ_FIREBIRD_INT_H */
