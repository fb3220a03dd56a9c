/*
** mysql_sub.c -- the triggers of table subscriptions on MariaDB.
**
** Each action with subscribers gets one AFTER ... FOR EACH ROW trigger
** that enqueues a job per subscription of the table and action, in the
** order of their tags, with one multi-row INSERT ... VALUES.  The tags are
** written into the trigger, which reads no table: under statement-based
** replication, a statement that writes a table with an AUTO_INCREMENT
** column (as the application's table may have) and reads another table,
** in a trigger too, is logged as unsafe.  So every subscribe and
** unsubscribe makes the table's triggers anew from its subscription rows.
** The jobs take their ids from sqlq_job_ids through the trigger
** sqlq_jobs_id (migration 3 of mysql_sql.c), for the same reason.  The
** event's time is the statement's clock (UNIX_TIMESTAMP() and NOW(6),
** which the binary log carries), formatted in UTC without any time zone.
**
** A trigger keeps the sql_mode it was created under, and a plain client
** may run another: every string the trigger text embeds (the names of the
** table, its columns and the tags) is a hex literal with a charset
** introducer, which reads the same under any mode, and every identifier is
** backquoted with its backquotes doubled.
**
** DDL commits the open transaction.  The subscription rows, which the core
** wrote in it, are read with locks and committed first, and the triggers
** made after, under a lock per table (GET_LOCK on the session) that makes
** concurrent subscribers of one table take turns: each one reads the rows
** after the previous one committed them, and makes its triggers after the
** previous one made its own.  A trigger is replaced in one statement
** (CREATE OR REPLACE), never dropped and made again, so the table has no
** moment without it.  When the DDL fails, the rows stay: `sqlq
** subscriptions` shows an action without its trigger (no-trigger), and
** subscribing again makes it; a trigger whose tag was since removed keeps
** enqueueing for it until then.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mysql_int.h"

/* The actions, in the order of SQLQ_ON_*: name, trigger suffix, event. */
static const struct {
  unsigned bit;
  const char *action, *event;
  char suffix;
} kinds[] = {{SQLQ_ON_INSERT, "insert", "INSERT", 'i'},
             {SQLQ_ON_UPDATE, "update", "UPDATE", 'u'},
             {SQLQ_ON_DELETE, "delete", "DELETE", 'd'}};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* The event's time, "YYYY-MM-DDTHH:MM:SS.ffffffZ": the epoch plus the
** statement's clock in microseconds, as a DATETIME, which has no zone. */
#define AT_UTC \
  "DATE_FORMAT(TIMESTAMP'1970-01-01 00:00:00' + INTERVAL " NOW_US " MICROSECOND," \
  " '%Y-%m-%dT%H:%i:%s.%fZ')"

/* What the trigger of one action enqueues: the VALUES rows, one per tag,
** and which of the two payloads they use. */
struct action_jobs {
  sqlq__buf rows;
  int bare, images;
};

/* Append the n bytes at s as a utf8mb4 string literal in hex. */
static void add_string(sqlq__buf *b, const char *s, size_t n) {
  sqlq__buf_add(b, "_utf8mb4 X'");
  for (size_t i = 0; i < n; i++) sqlq__buf_addf(b, "%02x", (unsigned char)s[i]);
  sqlq__buf_add(b, "'");
}

/* The value of column col of row (NEW or OLD) for JSON_OBJECT(): bytes
** become the text "\x" and their hex digits. */
static void add_value(sqlq__buf *b, const char *row, const sqlq__sub_column *col) {
  if (col->binary) sqlq__buf_add(b, "CONCAT(_utf8mb4 X'5c78', LOWER(HEX(");
  sqlq__buf_addf(b, "%s.", row);
  sqlq__buf_quote(b, col->name, '`');
  if (col->binary) sqlq__buf_add(b, ")))");
}

/* JSON_OBJECT() of the columns of row: the primary key's, in key order,
** when pk_only, else every column in table order. */
static void add_object(sqlq__buf *b, const sqlq__sub_plan *plan, const char *row, int pk_only) {
  const char *sep = "";
  sqlq__buf_add(b, "JSON_OBJECT(");
  for (size_t place = 1; place <= (pk_only ? plan->n_cols : 1); place++) {
    for (size_t i = 0; i < plan->n_cols; i++) {
      if (pk_only && (size_t)plan->cols[i].pk != place) continue;
      sqlq__buf_add(b, sep);
      sep = ", ";
      add_string(b, plan->cols[i].name, strlen(plan->cols[i].name));
      sqlq__buf_add(b, ", ");
      add_value(b, row, &plan->cols[i]);
    }
  }
  sqlq__buf_add(b, ")");
}

/* Set the trigger's variable var to the payload of kind k: with the row
** images when images is set. */
static void set_payload(sqlq__buf *b, const sqlq__sub_plan *plan, size_t k, const char *var,
                        int images) {
  sqlq__buf_addf(b, " SET %s = JSON_COMPACT(JSON_OBJECT('table', ", var);
  add_string(b, plan->table, strlen(plan->table));
  sqlq__buf_addf(b, ", 'action', '%s', 'pk', JSON_EXTRACT(sqlq_pk, '$'), 'at', sqlq_at",
                 kinds[k].action);
  if (images && kinds[k].bit != SQLQ_ON_DELETE) {
    sqlq__buf_add(b, ", 'new', ");
    add_object(b, plan, "NEW", 0);
  }
  if (images && kinds[k].bit != SQLQ_ON_INSERT) {
    sqlq__buf_add(b, ", 'old', ");
    add_object(b, plan, "OLD", 0);
  }
  sqlq__buf_add(b, "));");
}

/* The statement that makes the trigger of kind k, waiting at most
** wait_s seconds for the table's metadata lock. */
static void add_trigger(sqlq__buf *b, const sqlq__sub_plan *plan, size_t k,
                        const struct action_jobs *jobs, long wait_s) {
  sqlq__buf_addf(b,
                 "SET STATEMENT lock_wait_timeout = %ld FOR CREATE OR REPLACE TRIGGER"
                 " `%s_%c` AFTER %s ON ",
                 wait_s, plan->base, kinds[k].suffix, kinds[k].event);
  sqlq__buf_quote(b, plan->on, '`');
  sqlq__buf_add(b, " FOR EACH ROW BEGIN"
                   " DECLARE sqlq_pk, sqlq_at, sqlq_bare, sqlq_images"
                   " LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;"
                   " SET sqlq_pk = JSON_COMPACT(");
  add_object(b, plan, kinds[k].bit == SQLQ_ON_DELETE ? "OLD" : "NEW", 1);
  sqlq__buf_add(b, "); SET sqlq_at = " AT_UTC ";");
  if (jobs->bare) set_payload(b, plan, k, "sqlq_bare", 0);
  if (jobs->images) set_payload(b, plan, k, "sqlq_images", 1);
  sqlq__buf_add(b, " INSERT INTO sqlq_jobs (queue, group_key, payload) VALUES ");
  sqlq__buf_add(b, jobs->rows.p);
  sqlq__buf_add(b, "; END;");
}

/* The kind whose action is the len bytes at name, or N_KINDS. */
static size_t kind_of(const char *name, size_t len) {
  size_t k = 0;
  while (k < N_KINDS &&
         !(strlen(kinds[k].action) == len && memcmp(kinds[k].action, name, len) == 0))
    k++;
  return k;
}

/* Read the subscriptions of plan->table, locked, into one VALUES row per
** tag in jobs[] (by kind).  A row's group key is the table and the key. */
static int read_tags(sqlq_db *db, const sqlq__sub_plan *plan, struct action_jobs jobs[]) {
  const char *params[1] = {plan->table};
  sqlq__stmt *st = NULL;
  int rc = sqlq__my_run(db, MY_SQL_SUB_TAGS, 1, params, NULL, &st);
  if (rc == SQLQ_OK) {
    while ((rc = sqlq__my_fetch(db, st)) == SQLQ__ROW) {
      const my_col *tag = &st->cols[1];
      int images = st->cols[2].ival != 0;
      size_t k = kind_of(st->cols[0].buf, st->cols[0].len);
      if (k == N_KINDS || !(plan->actions & kinds[k].bit)) continue;
      sqlq__buf *b = &jobs[k].rows;
      sqlq__buf_add(b, b->len ? ", (" : "(");
      add_string(b, tag->buf, tag->len);
      sqlq__buf_add(b, ", LEFT(CONCAT(");
      add_string(b, plan->table, strlen(plan->table));
      sqlq__buf_addf(b, ", ' ', sqlq_pk), 255), %s)", images ? "sqlq_images" : "sqlq_bare");
      *(images ? &jobs[k].images : &jobs[k].bare) = 1;
    }
  }
  if (st) db->driver->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* Commit the subscription rows, then run the DDL script, holding the
** table's lock meanwhile. */
static int run_ddl(sqlq_db *db, const sqlq__sub_plan *plan, const char *script, long wait_s) {
  mysql_db *m = MY(db);
  char lock[48];
  snprintf(lock, sizeof lock, "sqlq:%s", plan->base);
  double seconds = (double)wait_s;
  long long got = 0;
  int rc = sqlq__my_refuse_on_galera(db, m->conn, "subscriptions", GET_LOCK_LOCAL);
  if (rc == SQLQ_OK)
    rc = sqlq__my_run_on_aux(db, m->conn, "SELECT GET_LOCK(?, ?)", lock, &seconds, &got);
  if (rc == SQLQ_OK && got != 1)
    return sqlq__error(db, SQLQ_BUSY, "another subscriber of table '%s' did not finish in %ld s",
                       plan->table, wait_s);
  if (rc != SQLQ_OK) return rc;
  m->tx_watch = 0; /* the COMMIT and the DDL end it here */
  rc = sqlq__my_query(db, m->conn, "COMMIT", "COMMIT");
  if (rc == SQLQ_OK) rc = sqlq__my_query(db, m->conn, script, "making the subscription triggers");
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  sqlq__my_run_on_aux(db, m->conn, "DO RELEASE_LOCK(?)", lock, NULL, NULL);
  sqlq__restore_error(db, &saved);
  return rc;
}

int sqlq__my_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan) {
  long wait_s = db->busy_timeout < 1 ? 1L : (long)ceil(db->busy_timeout);
  struct action_jobs jobs[N_KINDS];
  memset(jobs, 0, sizeof jobs);
  int rc = plan->actions ? read_tags(db, plan, jobs) : SQLQ_OK;
  sqlq__buf b = {NULL, 0, 0, 0};
  for (size_t k = 0; k < N_KINDS; k++) {
    if (jobs[k].rows.len)
      add_trigger(&b, plan, k, &jobs[k], wait_s);
    else
      sqlq__buf_addf(&b, "DROP TRIGGER IF EXISTS `%s_%c`;", plan->base, kinds[k].suffix);
  }
  int oom = b.oom;
  for (size_t k = 0; k < N_KINDS; k++) {
    oom |= jobs[k].rows.oom;
    sqlq__buf_free(&jobs[k].rows);
  }
  if (rc == SQLQ_OK && oom) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  if (rc == SQLQ_OK) rc = run_ddl(db, plan, b.p, wait_s);
  sqlq__buf_free(&b);
  return rc;
}
