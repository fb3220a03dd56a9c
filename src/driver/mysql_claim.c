/*
** mysql_claim.c -- the claim in two steps, in one transaction.
**
** 1. The pick (sql[SQLQ__SQL_CLAIM]): SELECT ... FOR UPDATE SKIP LOCKED
**    locks the first `limit` due jobs, in the order priority DESC, run_at,
**    id, that no other claimer holds, and reads them whole.
** 2. One UPDATE ... WHERE id IN (...) of their ids marks them running
**    with the claim's token and lease.
**
** Expired leases: the pick also says, reading without locks, whether the
** queue has jobs whose lease expired.  Only then (rarely) does the claim
** lock those jobs, bury the ones with no attempt left as dead, put the
** others back as ready (their error saying why), and pick again.  A
** locking scan of the running jobs in every claim would hold gap locks
** that the other claimers' UPDATEs wait for, and deadlock them.
**
** The UPDATEs name their rows by id and hold no LIMIT, SKIP LOCKED or
** clock of the client, so they replay identically under statement-based
** replication.  The ids written into their text are integers the server
** returned, never text from the caller.
**
** The statement then shows the pick's rows again, which read the attempt
** counted and the new lease as the UPDATE writes them.
**
** Claim lanes (schema version 12, sql[SQLQ__SQL_CLAIM_LANES]; see "Claim
** cursors" in mysql_sql.c): the pick scans each lane of the queue's
** cursor from its floor, and reads, in the same statement, what the next
** cursor is made of (its column LANES_NEXT, or when it picked nothing the
** statement MY_SQL_LANES_IDLE, which stands in for today's check of
** expired leases: no round trip more).  The statement's steps then end
** with the row the core's contract asks for (sqlq_int.h, CLAIM_LANES): id
** NULL and the next cursor in column 10, a row the driver adds (the
** statement's tail), since a second SELECT in the pick would make it a
** UNION, whose payloads MariaDB copies through a temporary table on disk.  A claim outside a
** transaction (SQLQ__TX_SINGLE) opens its own, and sends its COMMIT with
** the UPDATE: three round trips.  Unless the binary log is statement-based
** (which refuses writes under READ COMMITTED), that transaction reads
** committed: under REPEATABLE READ, a pick that reaches the end of the
** queue's ready jobs locks the gap after them until it commits, and every
** producer's INSERT of a new job waits for it.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysql_int.h"

/* The pick's columns this file reads. */
enum { COL_ID = 0, COL_LEASE_UNTIL = 6, COL_EXPIRED_EXIST = 10, COL_LANES_NEXT = 11 };

/* Claim lanes: priorities above and below every INT, which bound the
** arrays of the pick; the floor before every run_at; and how far behind
** its clock a claim puts a floor (see "Claim cursors" in mysql_sql.c). */
#define LANE_ABOVE 4611686018427387904LL
#define LANE_BELOW (-4611686018427387904LL)
#define NO_FLOOR (-9223372036854775807LL)
#define MARGIN_US 100000LL
/* The integers of a cursor's text before its lanes (mysql_sql.c). */
#define HEAD 5

static long long col_int(const sqlq__stmt *st, int i) {
  const my_col *c = &st->cols[i];
  if (c->is_null) return 0;
  return c->is_int ? c->ival : strtoll(c->buf, NULL, 10);
}

/* Run "UPDATE sqlq_jobs SET <set> WHERE id IN (<ids>)" for n ids, and
** COMMIT in the same round trip when commit is set (a failed UPDATE stops
** the script before it) -- but on a Galera node, where the COMMIT goes on
** its own: a replicated transaction that aborts this one between the two
** statements of one script leaves the COMMIT nothing to commit, and it
** succeeds (the node says so only at the session's next command).  Two
** workers on two nodes then held the same four jobs (1 drain in 6 of 900
** jobs; docs/scale.md, "MariaDB Galera").  A COMMIT sent by itself gets
** the 1213.  The
** primary key is named: with the statistics of a table that just grew, the
** optimizer may scan the whole index instead, locking every row, and
** deadlock the other claimers. */
static int update_ids(sqlq_db *db, const char *set, const long long *ids, int n, int commit) {
  if (n == 0) return SQLQ_OK;
  sqlq__buf sql = {0};
  sqlq__buf_addf(&sql, "UPDATE sqlq_jobs FORCE INDEX (PRIMARY) SET %s WHERE id IN (", set);
  for (int k = 0; k < n; k++) sqlq__buf_addf(&sql, "%s%lld", k ? "," : "", ids[k]);
  int galera = 0, rc = commit ? sqlq__my_galera(db, MY(db)->conn, &galera) : SQLQ_OK;
  sqlq__buf_add(&sql, commit && !galera ? "); COMMIT" : ")");
  if (rc == SQLQ_OK)
    rc = sql.oom ? sqlq__error(db, SQLQ_NOMEM, "out of memory") : sqlq__my_tx_gone(db);
  if (rc == SQLQ_OK) rc = sqlq__my_query(db, MY(db)->conn, sql.p, "claim");
  if (rc == SQLQ_OK && commit && galera) rc = sqlq__my_tx_gone(db);
  if (rc == SQLQ_OK && commit && galera) rc = sqlq__my_query(db, MY(db)->conn, "COMMIT", "COMMIT");
  sqlq__buf_free(&sql);
  return rc;
}

/* Does queue (parameter 1 of the pick) have expired leases?  The pick's
** first row says; with no row, ask. */
static int expired_exist(sqlq_db *db, sqlq__stmt *pick, int n_rows, int *exist) {
  if (n_rows > 0) {
    mysql_stmt_data_seek(pick->ms, 0);
    int rc = sqlq__my_fetch(db, pick);
    if (rc != SQLQ__ROW)
      return rc == SQLQ__DONE ? sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row") : rc;
    *exist = col_int(pick, COL_EXPIRED_EXIST) != 0;
    return SQLQ_OK;
  }
  const char *params[1] = {pick->params[0].buffer};
  sqlq__stmt *st;
  int rc = sqlq__my_run(db, MY_SQL_EXPIRED_EXIST, 1, params, NULL, &st);
  if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  *exist = rc == SQLQ__ROW && col_int(st, 0) != 0;
  db->driver->reset(st);
  return rc == SQLQ__ROW || rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* Lock the queue's jobs whose lease expired (from *floor on, when floor
** is not NULL); bury those with no attempt left and make the others ready
** again. */
static int take_back_expired(sqlq_db *db, const char *queue, const long long *floor) {
  const char *params[2] = {queue, NULL};
  long long ints[2] = {0, floor ? *floor : 0};
  sqlq__stmt *st;
  int rc = floor ? sqlq__my_run(db, MY_SQL_EXPIRED_FROM, 2, params, ints, &st)
                 : sqlq__my_run(db, MY_SQL_EXPIRED, 1, params, NULL, &st);
  int n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0;
  long long *ids = n ? malloc((size_t)n * sizeof *ids) : NULL;
  int n_dead = 0, n_ready = 0;
  if (n && ids == NULL) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  /* The dead fill ids from the front, the others from the back. */
  if (rc == SQLQ_OK) {
    while ((rc = sqlq__my_fetch(db, st)) == SQLQ__ROW && n_dead + n_ready < n) {
      if (col_int(st, 1))
        ids[n_dead++] = col_int(st, 0);
      else
        ids[n - ++n_ready] = col_int(st, 0);
    }
  }
  db->driver->reset(st);
  if (rc == SQLQ__DONE) rc = SQLQ_OK;
  if (rc == SQLQ_OK)
    rc = update_ids(db,
                    "last_error = CONCAT('lease expired during attempt ', attempts),"
                    " state = 'dead', token = NULL, lease_until = NULL",
                    ids, n_dead, 0);
  if (rc == SQLQ_OK)
    rc = update_ids(db,
                    "last_error = CONCAT('lease expired during attempt ', attempts),"
                    " state = 'ready', token = NULL, lease_until = NULL",
                    ids + n - n_ready, n_ready, 0);
  free(ids);
  return rc;
}

/* ---------------------------------------------------------------------
** Claim lanes.
*/

int sqlq__my_cursor_parse(const char *text, my_cursor *c) {
  long long v[HEAD + 2 * MY_LANES_MAX];
  int n = 0;
  if (text == NULL) return -1;
  for (const char *p = text; *p;) {
    char *end;
    if (n == (int)(sizeof v / sizeof v[0])) return -1;
    errno = 0;
    v[n++] = strtoll(p, &end, 10);
    if (end == p || errno) return -1;
    p = end;
    if (*p == ' ' && p[1])
      p++;
    else if (*p)
      return -1;
  }
  if (n < HEAD || (n - HEAD) % 2) return -1;
  c->last_id = v[0];
  c->lease_floor = v[1];
  c->moves = v[2];
  c->due_floor = v[3];
  c->clock = v[4];
  c->n = (n - HEAD) / 2;
  for (int i = 0; i < c->n; i++) {
    c->priority[i] = v[HEAD + 2 * i];
    c->floor[i] = v[HEAD + 1 + 2 * i];
    /* Highest first, each once. */
    if (i && c->priority[i] >= c->priority[i - 1]) return -1;
  }
  return 0;
}

/* The arrays of the pick ($7 priorities, $8 their floors, $9 the next
** lower priority of the arrays): first a lane above every priority, then
** the cursor's lanes. */
typedef struct lane_arrays {
  size_t n;
  int64_t priority[MY_LANES_MAX + 1], floor[MY_LANES_MAX + 1], below[MY_LANES_MAX + 1];
} lane_arrays;

static void lane_arrays_of(const my_cursor *c, lane_arrays *a) {
  a->n = 1;
  a->priority[0] = LANE_ABOVE;
  a->floor[0] = NO_FLOOR;
  for (int i = 0; c && i < c->n; i++, a->n++) {
    a->priority[a->n] = c->priority[i];
    a->floor[a->n] = c->floor[i];
  }
  for (size_t k = 0; k < a->n; k++) a->below[k] = k + 1 < a->n ? a->priority[k + 1] : LANE_BELOW;
}

static int bind_lanes(sqlq_db *db, sqlq__stmt *st, const lane_arrays *a, int below) {
  int rc = sqlq__my_bind_int64_array(st, 7, a->priority, a->n);
  if (rc == SQLQ_OK) rc = sqlq__my_bind_int64_array(st, 8, a->floor, a->n);
  if (rc == SQLQ_OK && below) rc = sqlq__my_bind_int64_array(st, 9, a->below, a->n);
  return rc == SQLQ_OK ? rc : sqlq__error(db, SQLQ_NOMEM, "out of memory");
}

/* The cursor text a lanes pick was given ($6), NULL for none. */
static const char *cursor_text(const sqlq__stmt *st) {
  const MYSQL_BIND *b = &st->params[5];
  return st->n_params >= 6 && b->buffer_type != MYSQL_TYPE_NULL ? b->buffer : NULL;
}

/* Whether queue (parameter 1 of the lanes pick) has expired leases since
** the cursor's lease floor, and the text of LANES_NEXT (*next, malloc'd):
** from the pick's first row, or with no row from MY_SQL_LANES_IDLE. */
static int lanes_state(sqlq_db *db, sqlq__stmt *pick, int n_rows, const lane_arrays *a, int *exist,
                       char **next) {
  sqlq__stmt *st = pick;
  int rc, col_exist = COL_EXPIRED_EXIST, col_next = COL_LANES_NEXT;
  if (n_rows > 0) {
    mysql_stmt_data_seek(pick->ms, 0);
    rc = sqlq__my_fetch(db, pick);
  } else {
    st = &MY(db)->stmts[MY_SQL_LANES_IDLE];
    db->driver->reset(st);
    col_exist = 0;
    col_next = 1;
    sqlq__my_bind_text(st, 1, pick->params[0].buffer);
    sqlq__my_bind_text(st, 6, cursor_text(pick));
    rc = bind_lanes(db, st, a, 0);
    if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
    if (rc == SQLQ_OK) rc = sqlq__my_fetch(db, st);
  }
  if (rc == SQLQ__ROW) {
    const my_col *c = &st->cols[col_next];
    *exist = col_int(st, col_exist) != 0;
    if (c->is_null || c->is_int || (*next = malloc(c->len + 1)) == NULL) {
      rc = c->is_null || c->is_int ? sqlq__error(db, SQLQ_ERROR, "mysql: the claim read no cursor")
                                   : sqlq__error(db, SQLQ_NOMEM, "out of memory");
    } else {
      memcpy(*next, c->buf, c->len);
      (*next)[c->len] = '\0';
      rc = SQLQ_OK;
    }
  } else if (rc == SQLQ__DONE) {
    rc = sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row");
  }
  if (st != pick) db->driver->reset(st);
  return rc;
}

static int by_priority_desc(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x < y) - (x > y);
}

/* The next cursor's text (malloc'd; NULL: out of memory, or *garbled
** set when next does not parse), from next, the LANES_NEXT of a claim
** that was given the cursor old (NULL: none) and whose read saw expired
** leases since its lease floor when expired is set.  A lane's floor is
** the earliest of its first ready job, the clock less MARGIN_US and LOW;
** every lane starts from its start again when the queue's count of moves
** is not the old cursor's, and a lane new to the cursor does.  Past
** MY_LANES_MAX lanes, the lowest are left out: the pick scans those from
** their start, and so does the wait. */
static char *next_cursor(const my_cursor *old, const char *next, int expired, int *garbled) {
  enum { MOST = 2 * MY_LANES_MAX + 1 };
  long long head[4] = {0}, lanes[2 * MOST];
  int n_head = 0, n = 0, full = 0, in_new = 0;
  for (const char *p = next; *p;) {
    char *end;
    if (*p == '|' && !in_new) {
      in_new = 1;
      p++;
    } else if (*p == ' ') {
      p++;
    } else {
      long long v = strtoll(p, &end, 10);
      if (end == p) {
        *garbled = 1;
        return NULL;
      }
      p = end;
      if (n_head < 4 && !in_new) {
        head[n_head++] = v;
      } else if (n + 2 > 2 * MOST) {
        full = 1;
      } else {
        /* A lane new to the cursor: its priority, scanned from its start. */
        lanes[n++] = v;
        if (in_new) lanes[n++] = NO_FLOOR;
      }
    }
  }
  if (n_head < 4 || n % 2) {
    *garbled = 1;
    return NULL;
  }
  long long clock = head[1], low = head[3];
  /* The server's clock went back since the old cursor: a lease given
  ** since may end before its lease floor, a job's run_at be before its
  ** floors; start everything from its start. */
  int back = old && clock < old->clock;
  int reset = old == NULL || old->moves != head[2] || back;
  long long cap = clock - MARGIN_US < low ? clock - MARGIN_US : low;
  my_cursor c = {.last_id = head[0], .moves = head[2], .clock = clock};
  c.lease_floor = !expired ? clock - MARGIN_US : old && !back ? old->lease_floor : NO_FLOOR;
  qsort(lanes, (size_t)n / 2, 2 * sizeof lanes[0], by_priority_desc);
  for (int i = 0; i + 1 < n; i += 2) {
    if (lanes[i] == LANE_ABOVE) continue;
    if (c.n == MY_LANES_MAX) {
      full = 1;
      break;
    }
    c.priority[c.n] = lanes[i];
    c.floor[c.n++] = reset ? NO_FLOOR : lanes[i + 1] < cap ? lanes[i + 1] : cap;
  }
  c.due_floor = full || reset ? NO_FLOOR : cap;
  for (int i = 0; i < c.n; i++)
    if (c.floor[i] < c.due_floor) c.due_floor = c.floor[i];
  size_t size = HEAD * 24 + (size_t)c.n * 48 + 1;
  char *text = malloc(size);
  if (text == NULL) return NULL;
  int len = snprintf(text, size, "%lld %lld %lld %lld %lld", c.last_id, c.lease_floor, c.moves,
                     c.due_floor, c.clock);
  for (int i = 0; i < c.n; i++)
    len += snprintf(text + len, size - (size_t)len, " %lld %lld", c.priority[i], c.floor[i]);
  return text;
}

/* Steps 1 and 2 inside the open transaction; with commit set, the UPDATE
** that marks the jobs also commits, and *committed says it did. */
static int pick_and_mark(sqlq_db *db, sqlq__stmt *st, int commit, int *committed) {
  int lanes = st->id == SQLQ__SQL_CLAIM_LANES, has_old = 0, rc = SQLQ_OK;
  my_cursor old;
  lane_arrays arrays;
  char *next = NULL;
  if (lanes) {
    has_old = sqlq__my_cursor_parse(cursor_text(st), &old) == 0;
    if (!has_old) sqlq__my_bind_text(st, 6, NULL);
    lane_arrays_of(has_old ? &old : NULL, &arrays);
    rc = bind_lanes(db, st, &arrays, 1);
    /* Candidates: enough that concurrent claims, which read the same
    ** first ones and skip each other's, still find their jobs. */
    long long max = st->ints[3];
    if (rc == SQLQ_OK) rc = sqlq__my_bind_int64(st, 10, max * 4 > max + 100 ? max * 4 : max + 100);
  }
  if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
  int n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0, exist = 0;
  if (rc == SQLQ_OK)
    rc = lanes ? lanes_state(db, st, n, &arrays, &exist, &next) : expired_exist(db, st, n, &exist);
  if (rc == SQLQ_OK && exist) {
    long long floor = has_old ? old.lease_floor : NO_FLOOR;
    mysql_stmt_free_result(st->ms);
    rc = take_back_expired(db, st->params[0].buffer, lanes ? &floor : NULL);
    if (rc == SQLQ_OK) rc = sqlq__my_execute(db, st);
    n = rc == SQLQ_OK ? (int)mysql_stmt_num_rows(st->ms) : 0;
    free(next);
    next = NULL;
    if (rc == SQLQ_OK && lanes) rc = lanes_state(db, st, n, &arrays, &exist, &next);
  }
  int garbled = 0;
  if (rc == SQLQ_OK && lanes &&
      (st->tail = next_cursor(has_old ? &old : NULL, next, exist, &garbled)) == NULL)
    rc = garbled ? sqlq__error(db, SQLQ_ERROR, "mysql: the claim read a garbled cursor")
                 : sqlq__error(db, SQLQ_NOMEM, "out of memory");
  free(next);
  if (rc != SQLQ_OK || n == 0) return rc;
  long long *ids = malloc((size_t)n * sizeof *ids);
  if (ids == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  mysql_stmt_data_seek(st->ms, 0);
  long long lease_until = 0;
  for (int r = 0; rc == SQLQ_OK && r < n; r++) {
    rc = sqlq__my_fetch(db, st);
    if (rc == SQLQ__ROW)
      rc = SQLQ_OK;
    else if (rc == SQLQ__DONE)
      rc = sqlq__error(db, SQLQ_ERROR, "mysql: the pick lost a row");
    ids[r] = col_int(st, COL_ID);
    lease_until = col_int(st, COL_LEASE_UNTIL);
  }
  char set[160];
  snprintf(set, sizeof set,
           "attempts = attempts + 1, state = 'running', token = %lld, lease_until = %lld",
           st->ints[1], lease_until);
  if (rc == SQLQ_OK) rc = update_ids(db, set, ids, n, commit);
  *committed = rc == SQLQ_OK && commit;
  /* The statement's steps show the rows from the first. */
  mysql_stmt_data_seek(st->ms, 0);
  free(ids);
  return rc;
}

int sqlq__my_claim(sqlq_db *db, sqlq__stmt *st) {
  const char *start = MY(db)->rc_claims
                        ? "SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION"
                        : "START TRANSACTION";
  return sqlq__my_in_own_tx(db, st, start, pick_and_mark);
}
