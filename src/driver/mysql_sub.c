/*
** mysql_sub.c -- the triggers of table subscriptions on MariaDB.
**
** Each action with subscribers gets one AFTER ... FOR EACH ROW trigger
** whose one statement, an INSERT ... SELECT, enqueues a job per
** subscription of the table and action (looked up in sqlq_subscriptions as
** it fires, in the order of their tags: the ORDER BY makes the statement
** deterministic).  The jobs take their ids from sqlq_job_ids through the
** trigger sqlq_jobs_id (migration 3 of mysql_sql.c), since under
** statement-based replication a trigger that inserts into a table with an
** AUTO_INCREMENT column is logged as unsafe.  The event's time is the
** statement's clock (UNIX_TIMESTAMP() and NOW(6), which the binary log
** carries), formatted in UTC without any time zone.
**
** A trigger keeps the sql_mode it was created under, and a plain client
** may run another: every string the trigger text embeds (the table's and
** the columns' names) is a hex literal with a charset introducer, which
** reads the same under any mode, and every identifier is backquoted with
** its backquotes doubled.
**
** DDL commits the open transaction.  The subscription rows, which the
** core wrote in it, are committed first, and the triggers made after, under
** a lock per table (GET_LOCK on the session) that makes concurrent
** subscribers of one table take turns: each one's plan, read after the
** previous one committed (SUB_ACTIONS locks what it reads), includes the
** previous one's actions, and its DDL runs after the previous one's.  A
** trigger is replaced in one statement (CREATE OR REPLACE), never dropped
** and made again, so the table has no moment without it.  When the DDL
** fails, the rows stay: `sqlq subscriptions` shows the missing trigger
** (status no-trigger), and subscribing again makes it.
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

/* Append s as a utf8mb4 string literal in hex. */
static void add_string(sqlq__buf *b, const char *s) {
  sqlq__buf_add(b, "_utf8mb4 X'");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) sqlq__buf_addf(b, "%02x", *p);
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
      add_string(b, plan->cols[i].name);
      sqlq__buf_add(b, ", ");
      add_value(b, row, &plan->cols[i]);
    }
  }
  sqlq__buf_add(b, ")");
}

/* The payload of kind k: with the row images when rows is set. */
static void add_payload(sqlq__buf *b, const sqlq__sub_plan *plan, size_t k, int rows) {
  sqlq__buf_addf(b, "JSON_OBJECT('table', e.tbl, 'action', '%s', 'pk', JSON_EXTRACT(e.pk, '$'),"
                    " 'at', e.at", kinds[k].action);
  if (rows && kinds[k].bit != SQLQ_ON_DELETE) {
    sqlq__buf_add(b, ", 'new', ");
    add_object(b, plan, "NEW", 0);
  }
  if (rows && kinds[k].bit != SQLQ_ON_INSERT) {
    sqlq__buf_add(b, ", 'old', ");
    add_object(b, plan, "OLD", 0);
  }
  sqlq__buf_add(b, ")");
}

/* The statement that makes the trigger of kind k, waiting at most
** wait_s seconds for the table's metadata lock. */
static void add_trigger(sqlq__buf *b, const sqlq__sub_plan *plan, size_t k, long wait_s) {
  sqlq__buf_addf(b, "SET STATEMENT lock_wait_timeout = %ld FOR CREATE OR REPLACE TRIGGER"
                    " `%s_%c` AFTER %s ON ", wait_s, plan->base, kinds[k].suffix, kinds[k].event);
  sqlq__buf_quote(b, plan->table, '`');
  sqlq__buf_add(b, " FOR EACH ROW INSERT INTO sqlq_jobs (queue, group_key, payload)"
                   " SELECT s.tag, LEFT(CONCAT(e.tbl, ' ', e.pk), 255), JSON_COMPACT(");
  if (plan->rows) {
    sqlq__buf_add(b, "IF(s.with_rows, ");
    add_payload(b, plan, k, 1);
    sqlq__buf_add(b, ", ");
    add_payload(b, plan, k, 0);
    sqlq__buf_add(b, ")");
  } else {
    add_payload(b, plan, k, 0);
  }
  sqlq__buf_add(b, ") FROM (SELECT ");
  add_string(b, plan->table);
  sqlq__buf_add(b, " AS tbl, JSON_COMPACT(");
  add_object(b, plan, kinds[k].bit == SQLQ_ON_DELETE ? "OLD" : "NEW", 1);
  sqlq__buf_add(b, ") AS pk, " AT_UTC " AS at) AS e JOIN sqlq_subscriptions s ON s.table_name = e.tbl");
  sqlq__buf_addf(b, " AND s.action = '%s' ORDER BY s.tag;", kinds[k].action);
}

int sqlq__my_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan) {
  mysql_db *m = MY(db);
  long wait_s = db->busy_timeout < 1 ? 1L : (long)ceil(db->busy_timeout);
  sqlq__buf b = {NULL, 0, 0, 0};
  for (size_t k = 0; k < N_KINDS; k++) {
    if (plan->actions & kinds[k].bit)
      add_trigger(&b, plan, k, wait_s);
    else
      sqlq__buf_addf(&b, "DROP TRIGGER IF EXISTS `%s_%c`;", plan->base, kinds[k].suffix);
  }
  if (b.oom) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  char lock[48];
  snprintf(lock, sizeof lock, "sqlq:%s", plan->base);
  double seconds = (double)wait_s;
  long long got = 0;
  int rc = sqlq__my_run_on_aux(db, m->conn, "SELECT GET_LOCK(?, ?)", lock, &seconds, &got);
  if (rc == SQLQ_OK && got != 1)
    rc = sqlq__error(db, SQLQ_BUSY, "another subscriber of table '%s' did not finish in %ld s",
                     plan->table, wait_s);
  if (rc == SQLQ_OK) {
    rc = sqlq__my_query(db, m->conn, "COMMIT", "COMMIT");
    if (rc == SQLQ_OK) rc = sqlq__my_query(db, m->conn, b.p, "making the subscription triggers");
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    sqlq__my_run_on_aux(db, m->conn, "DO RELEASE_LOCK(?)", lock, NULL, NULL);
    sqlq__restore_error(db, &saved);
  }
  sqlq__buf_free(&b);
  return rc;
}
