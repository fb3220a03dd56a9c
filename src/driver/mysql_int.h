/*
** mysql_int.h -- declarations shared by the files of the MySQL/MariaDB
** driver (mysql.c: connection, statements, transactions, errors;
** mysql_sql.c: the dialect; mysql_claim.c: the two-step claim;
** mysql_pool.c: a pool's next item; mysql_sub.c: subscription triggers;
** mysql_ids.c: the ids of a batch of jobs;
** mysql_wait.c: wake-ups with KILL QUERY; mysql_lock.c: GET_LOCK).
*/
#ifndef SQLQ_MYSQL_INT_H
#define SQLQ_MYSQL_INT_H

#include "mysql_api.h"

#include "sqlq_int.h"

/* The server's clock in microseconds since the epoch, fixed for the
** length of a statement and safe for statement-based replication (see
** mysql_sql.c). */
#define NOW_US "(UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))"

/* The driver's own statements, numbered after the core's. */
enum {
  MY_SQL_EXPIRED_EXIST = SQLQ__SQL_COUNT, /* $1 queue -> has expired leases (no locks) */
  MY_SQL_EXPIRED,                         /* $1 queue -> id, dead: expired leases, locked */
  MY_SQL_WAIT_QUEUE, /* $1 queue $2 block lock: what the wait statement reads */
  MY_SQL_WAIT_TAG,   /* $1 queue -> the tag of its waiters */
  MY_SQL_WAKE,       /* $1 queue $2 n: interrupt n waiters */
  /* Rings and pools (schema version 2). */
  MY_SQL_WAIT_MARK,   /* the counter of the ring waited for
                                              (@sqlq_wait_queue) into @sqlq_wait_mark */
  MY_SQL_POOL_TURN,   /* $1 pool: locks its first item by name */
  MY_SQL_POOL_NEWEST, /* $1 pool -> its newest stamp, locked */
  MY_SQL_POOL_STAMP,  /* $1 newest stamp $2 hold_us $3 token $4 id */
  MY_SQL_POOL_PICKED, /* $1 id -> POOL_NEXT's columns */
  /* Subscriptions (schema version 3). */
  MY_SQL_SUB_TAGS, /* $1 table -> action, tag, with_rows of
                                              its subscriptions, locked */
  MY_SQL_TAKE_IDS, /* $1 n: takes the next n job ids; the
                                              last is the insert id */
  /* Claim lanes (schema version 12; mysql_claim.c). */
  MY_SQL_LANES_IDLE,   /* as CLAIM_LANES, for a pick without rows: its
                          columns 10 and 11 alone */
  MY_SQL_EXPIRED_FROM, /* as EXPIRED, $2 lease floor */
  MY_SQL_COUNT
};

/* Most distinct parameters ($1..$N) of one statement. */
#define MY_MAX_PARAMS 10

/* A placeholder of a statement's text: the parameter it takes (0-based)
** and, in a repeated section, which element of its array (1-based; 0:
** the parameter's one value).  See mysql_bind.c. */
typedef struct my_mark {
  unsigned char param;
  size_t elem;
} my_mark;

/* An array bound to a parameter by bind_*_array (when set): ints, or
** pointers and lengths of text or blobs. */
typedef struct my_array {
  int set;
  enum enum_field_types type;
  size_t n;
  long long *ints;
  const void **ptrs;
  unsigned long *lens;
} my_array;

/* One result column of the current row: integers are fetched as such,
** everything else as bytes into buf (grown to fit). */
typedef struct my_col {
  int is_int;
  long long ival;
  char *buf;
  unsigned long cap;
  unsigned long len;
  my_bool is_null;
  my_bool error;
} my_col;

/*
** A statement of one connection: its text with $N rewritten to `?`,
** prepared once per connection, bound by $N, executed at its first step,
** its rows stored on the client and fetched one by one.
**
** A pool's next item is more than one statement here (mysql_pool.c): the
** rows of the last stand for the first's (view).
*/
struct sqlq__stmt {
  int id;
  MYSQL_STMT *ms;       /* NULL until prepared on this connection */
  size_t prepared_rows; /* an array statement's rows as prepared */
  my_mark *marks;       /* placeholders in the prepared text */
  size_t n_marks, cap_marks;
  MYSQL_BIND *binds; /* one per mark, at execution */
  size_t n_binds;
  MYSQL_BIND params[MY_MAX_PARAMS]; /* bound values, by parameter */
  long long ints[MY_MAX_PARAMS];
  unsigned long lens[MY_MAX_PARAMS];
  my_array arrays[MY_MAX_PARAMS];
  int n_params; /* highest parameter bound */
  unsigned n_cols;
  my_col *cols;
  MYSQL_BIND *col_binds;
  int executed; /* rows (if any) are stored */
  long long changes;
  long long insert_id;
  /* The statement whose rows stand for this one's, once it ran. */
  struct sqlq__stmt *view;
  /* A last row the driver adds after the stored ones (owned; NULL: none):
  ** every column NULL but column 10, this text (the cursor of
  ** CLAIM_LANES); tail_shown once the steps reached it. */
  char *tail;
  int tail_shown;
};

typedef struct mysql_db {
  MYSQL *conn; /* NULL while disconnected */
  int lost;    /* the connection broke: open it again */
  /* What it takes to connect again (and to open the lock connection). */
  char *host, *user, *password, *dbname, *socket;
  unsigned port;
  unsigned connect_timeout;
  sqlq__stmt stmts[MY_SQL_COUNT];
  int in_tx; /* a transaction is open */
  /* The claim's own transactions may read committed: no statement-based
  ** binary log (which refuses writes under READ COMMITTED). */
  int rc_claims;
  int init_lock; /* sqlq init's lock is held until the transaction ends */
  /* A batch outside a transaction opened one for its ids and its INSERT,
  ** which its step commits (mysql_ids.c). */
  int batch_tx;
  sqlq__backoff reconnect;
  /* Wake-ups (mysql_wait.c). */
  int kill_wake;        /* producers interrupt waits (URL option wake) */
  double wake_interval; /* the longest sleep of a wait, seconds */
  char *wait_queue;     /* the queue the session's wait statement is for */
  char wait_tag[33];    /* its tag: 32 hex digits */
  char block[32];       /* the lock the wait statement waits for */
  int block_held;       /* ... which aux holds */
  /* Named locks: a second connection, so that a lock is never taken or
  ** waited for inside the caller's transaction; it also interrupts this
  ** handle's own waits (KILL QUERY).  The number of second sessions opened
  ** so far tells each lock whether it was taken on this one. */
  MYSQL *aux;
  unsigned aux_session;
  /* Whether the server is a node of a Galera cluster: -1 until asked
  ** (mysql_galera.c). */
  int galera;
  /* A transaction opened with START TRANSACTION (by the core's begin, a
  ** batch's ids or a method's own) is open and has run no DDL: the server
  ** must say so (SERVER_STATUS_IN_TRANS) after each of its statements
  ** (sqlq__my_tx_gone). */
  int tx_watch;
} mysql_db;

#define MY(db) ((mysql_db *)(db)->driver_data)

extern const char *const sqlq__mysql_sql[MY_SQL_COUNT];
extern const char *const sqlq__mysql_migrations[SQLQ_SCHEMA_VERSION];
extern const char sqlq__mysql_wait_sql[];           /* schema version 6 or 7 */
extern const char sqlq__mysql_wait_unlimited_sql[]; /* below schema version 6 */
extern const char sqlq__mysql_wait_rates_sql[];     /* schema version 8 or 9 */
extern const char sqlq__mysql_wait_groups_sql[];    /* from schema version 10 */
extern const char sqlq__mysql_ring_wait_sql[];
/* The wait statement of a queue with a claim cursor (schema version 12),
** with four more conversions after the two limits: the cursor's due floor,
** job id, count of moves and lease floor (%lld each). */
extern const char sqlq__mysql_wait_lanes_sql[];

/* A claim cursor of the MariaDB dialect (mysql_claim.c; docs/mysql.md,
** "Claims under a long-held snapshot"), as parsed from its text. */
#define MY_LANES_MAX 64
typedef struct my_cursor {
  long long last_id;     /* sqlq_job_ids.last_id as the claim read it */
  long long lease_floor; /* no expired lease ended before it unseen */
  long long moves;       /* the queue's count of moves in sqlq_lane_moves */
  long long due_floor;   /* the least of the lanes' floors */
  long long clock;       /* the server's clock at the claim that made it */
  int n;                 /* lanes, highest priority first */
  long long priority[MY_LANES_MAX], floor[MY_LANES_MAX];
} my_cursor;
/* Parse text into *c: 0 when it is a cursor this driver made, -1 else. */
int sqlq__my_cursor_parse(const char *text, my_cursor *c);

/* Record the error of conn (or of st when not NULL) on db, mapped to a
** status, and return that status.  what says what failed.  Marks db's
** connection lost when the error says it is. */
int sqlq__my_error(sqlq_db *db, MYSQL *conn, MYSQL_STMT *st, const char *what);
/* Open a new connection with db's parameters; NULL with an error recorded. */
MYSQL *sqlq__my_connect(sqlq_db *db);
/* Make sure db's connection is up, reconnecting (paced) when it was lost
** outside a transaction. */
int sqlq__my_ready(sqlq_db *db);
/* Get ready to run a statement: sqlq__my_ready(), but for nothing more
** than a check within a transaction. */
int sqlq__my_start(sqlq_db *db);
/* Run a driver statement with the given text ($1..$n) or integer
** parameters: params[k] NULL means the integer ints[k].  Rows, if any, are
** read with the statement interface; the caller resets st. */
int sqlq__my_run(sqlq_db *db, int id, int n, const char *const *params, const long long *ints,
                 sqlq__stmt **out);
/* Parameters (mysql_bind.c).  sqlq__my_statement_text returns sql[st->id]
** with its sections repeated for `rows` elements and its parameters
** written `?`, noting st's marks (malloc'ed; NULL with an error recorded).
** sqlq__my_bind_marks binds the values of st's marks to its prepared
** statement. */
char *sqlq__my_statement_text(sqlq_db *db, sqlq__stmt *st, size_t rows);
int sqlq__my_is_array(const sqlq__stmt *st);
size_t sqlq__my_array_rows(const sqlq__stmt *st);
int sqlq__my_bind_marks(sqlq_db *db, sqlq__stmt *st);
int sqlq__my_bind_int64(sqlq__stmt *st, int i, int64_t v);
int sqlq__my_bind_text(sqlq__stmt *st, int i, const char *s);
int sqlq__my_bind_blob(sqlq__stmt *st, int i, const void *p, size_t n);
int sqlq__my_bind_int64_array(sqlq__stmt *st, int i, const int64_t *v, size_t n);
int sqlq__my_bind_text_array(sqlq__stmt *st, int i, const char *const *v, size_t n);
int sqlq__my_bind_blob_array(sqlq__stmt *st, int i, const void *const *p, const size_t *len,
                             size_t n);
void sqlq__my_free_arrays(sqlq__stmt *st);

/* Execute st (prepared on first use) with its bound parameters and store
** its rows on the client. */
int sqlq__my_execute(sqlq_db *db, sqlq__stmt *st);
/* Fetch the next stored row of st: SQLQ__ROW, SQLQ__DONE or an error.
** Columns cut short by their buffer are fetched again into a larger one. */
int sqlq__my_fetch(sqlq_db *db, sqlq__stmt *st);
/* Run sql (no parameters; results, if any, dropped) on conn. */
int sqlq__my_query(sqlq_db *db, MYSQL *conn, const char *sql, const char *what);

/* Work of a driver statement done in a transaction: commit says that the
** transaction is fn's own, which fn may commit itself with its last
** statement (setting *committed). */
typedef int (*sqlq__my_tx_fn)(sqlq_db *db, sqlq__stmt *st, int commit, int *committed);
/* SQLQ_OK unless the transaction being watched (tx_watch) is no longer
** open on the server; then SQLQ_BUSY, retryable (db->tx_retryable), as a
** deadlock is.  A Galera node rolls back a local transaction that a
** replicated one conflicts with, and tells the session with error 1213 at
** its next command, whichever that is (COM_STMT_PREPARE and
** COM_STMT_RESET get it too); the session is then back in autocommit: the
** transaction's later statements each commit on their own, and its COMMIT
** commits nothing, with success.  Ring pushes from three nodes at once
** reported success for a push that was not stored (2 rounds of 6), and
** pool holds gave one item twice (2 rounds of about 60): the 1213 had
** gone where the driver did not see it (not found where).  With this
** check after each statement and before COMMIT, 12 rounds of pushes and
** 50 of holds were clean (docs/scale.md, "MariaDB Galera"). */
int sqlq__my_tx_gone(sqlq_db *db);
/* Run fn(db, st, ...) in the open transaction, or else in one of its own,
** opened by the script start, committed when fn succeeds (unless fn did)
** and rolled back when it fails. */
int sqlq__my_in_own_tx(sqlq_db *db, sqlq__stmt *st, const char *start, sqlq__my_tx_fn fn);

/* The claim (mysql_claim.c): run the pick of st, mark the jobs taken, and
** leave st showing their rows (as the claim left them: the pick reads
** attempts + 1 and the new lease). */
int sqlq__my_claim(sqlq_db *db, sqlq__stmt *st);
/* A pool's next item (mysql_pool.c): take the pool's turn, run the pick
** of st, stamp the item and leave st showing its row (none when no item
** is free). */
int sqlq__my_pool_next(sqlq_db *db, sqlq__stmt *st);

/* The take_ids method (mysql_ids.c): take the ids of the jobs of st, an
** ENQUEUE_ARRAY with its arrays bound, from the counter, and bind them as
** its $7. */
int sqlq__my_take_ids(sqlq_db *db, sqlq__stmt *st);

/* The sub_triggers method (mysql_sub.c). */
int sqlq__my_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan);

int sqlq__my_wait_prepare(sqlq_db *db, const char *queue);
int sqlq__my_wait(sqlq_db *db, const char *queue, int wake_fd, int64_t deadline_ns);
int sqlq__my_notify(sqlq_db *db, const char *queue, int n);
void sqlq__my_forget_wait(mysql_db *m);

/* The lock connection, opened on first use; NULL with an error recorded. */
MYSQL *sqlq__my_aux(sqlq_db *db);
/* Run sql on aux with the name and, when seconds is not NULL, a number of
** seconds as parameters; read its one integer answer into *v when v is not
** NULL (*v is -1 for NULL). */
int sqlq__my_run_on_aux(sqlq_db *db, MYSQL *aux, const char *sql, const char *name, double *seconds,
                        long long *v);
/* Drop the lock session when it broke; its locks are gone with it. */
void sqlq__my_check_aux(mysql_db *m);
int sqlq__my_lock(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
                  sqlq__lockstate **out);
void sqlq__my_unlock(sqlq_db *db, sqlq__lockstate *ls);
int sqlq__my_lock_check(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns);

/* SQLQ_OK when the server of conn is no node of a Galera cluster; else
** SQLQ_UNAVAILABLE, with the message "WHAT are refused on a Galera
** cluster (URL is a node), where WHY" (mysql_galera.c).  Asks the server
** once per handle. */
int sqlq__my_refuse_on_galera(sqlq_db *db, MYSQL *conn, const char *what, const char *why);
/* Whether the server of conn is a node of a Galera cluster, into *node
** (mysql_galera.c); asks the server once per handle. */
int sqlq__my_galera(sqlq_db *db, MYSQL *conn, int *node);
/* The why of the features whose exclusion is a GET_LOCK. */
#define GET_LOCK_LOCAL "GET_LOCK excludes only the sessions of one node"

#endif /* SQLQ_MYSQL_INT_H */
