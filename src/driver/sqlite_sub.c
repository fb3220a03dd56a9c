/*
** sqlite_sub.c -- the triggers of table subscriptions on SQLite.
**
** Each action with subscribers gets an AFTER ... FOR EACH ROW trigger that
** enqueues, with one INSERT ... SELECT, a job per subscription of the
** table and action (looked up in sqlq_subscriptions as it fires, in the
** order of their tags).  The trigger calls built-in functions only, so
** that a plain sqlite3 client writing the table needs nothing of sqlq:
** the jobs' times come from the columns' defaults, and the payload is
** built with json_object().  SQLite's JSON cannot hold a blob, so a blob
** value becomes the text "\x" and its bytes in hex.
*/
#include <string.h>

#include "sqlite_int.h"

static const struct {
  unsigned bit;
  const char *action; /* as in sqlq_subscriptions.action and the payload */
  char suffix;
  const char *event; /* the trigger's event */
} kinds[] = {
  {SQLQ_ON_INSERT, "insert", 'i', "INSERT"},
  {SQLQ_ON_UPDATE, "update", 'u', "UPDATE"},
  {SQLQ_ON_DELETE, "delete", 'd', "DELETE"},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* The value of column col of row (NEW or OLD), fit for json_object(). */
static void add_value(sqlq__buf *b, const char *row, const char *col) {
  sqlq__buf_addf(b, "CASE WHEN typeof(%s.", row);
  sqlq__buf_quote(b, col, '"');
  sqlq__buf_addf(b, ") = 'blob' THEN '\\x' || lower(hex(%s.", row);
  sqlq__buf_quote(b, col, '"');
  sqlq__buf_addf(b, ")) ELSE %s.", row);
  sqlq__buf_quote(b, col, '"');
  sqlq__buf_add(b, " END");
}

/* json_object() of the columns of row: the primary key's, in key order,
** when pk_only, else every column in table order. */
static void add_object(sqlq__buf *b, const sqlq__sub_plan *plan, const char *row, int pk_only) {
  int first = 1;
  sqlq__buf_add(b, "json_object(");
  if (pk_only) {
    for (int place = 1; (size_t)place <= plan->n_cols; place++) {
      for (size_t i = 0; i < plan->n_cols; i++) {
        if (plan->cols[i].pk != place) continue;
        if (!first) sqlq__buf_add(b, ", ");
        first = 0;
        sqlq__buf_quote(b, plan->cols[i].name, '\'');
        sqlq__buf_add(b, ", ");
        add_value(b, row, plan->cols[i].name);
      }
    }
  } else {
    for (size_t i = 0; i < plan->n_cols; i++) {
      if (!first) sqlq__buf_add(b, ", ");
      first = 0;
      sqlq__buf_quote(b, plan->cols[i].name, '\'');
      sqlq__buf_add(b, ", ");
      add_value(b, row, plan->cols[i].name);
    }
  }
  sqlq__buf_add(b, ")");
}

/* The head of the payload, shared by the payloads with and without rows. */
static void add_head(sqlq__buf *b, const char *action) {
  sqlq__buf_addf(b, "json_object('table', e.tbl, 'action', '%s', 'pk', json(e.pk), 'at', e.at",
                 action);
}

static void add_trigger(sqlq__buf *b, const sqlq__sub_plan *plan, size_t k) {
  const char *key_row = kinds[k].bit == SQLQ_ON_DELETE ? "OLD" : "NEW";
  sqlq__buf_addf(b, "CREATE TRIGGER \"%s_%c\" AFTER %s ON ", plan->base, kinds[k].suffix,
                 kinds[k].event);
  sqlq__buf_quote(b, plan->on, '"');
  sqlq__buf_add(b, " FOR EACH ROW BEGIN INSERT INTO sqlq_jobs (queue, group_key, payload)"
                   " SELECT s.tag, substr(e.tbl || ' ' || e.pk, 1, 255), CASE WHEN s.with_rows"
                   " THEN ");
  add_head(b, kinds[k].action);
  if (kinds[k].bit != SQLQ_ON_DELETE) {
    sqlq__buf_add(b, ", 'new', ");
    add_object(b, plan, "NEW", 0);
  }
  if (kinds[k].bit != SQLQ_ON_INSERT) {
    sqlq__buf_add(b, ", 'old', ");
    add_object(b, plan, "OLD", 0);
  }
  sqlq__buf_add(b, ") ELSE ");
  add_head(b, kinds[k].action);
  sqlq__buf_add(b, ") END FROM (SELECT ");
  sqlq__buf_quote(b, plan->table, '\'');
  sqlq__buf_add(b, " AS tbl, ");
  add_object(b, plan, key_row, 1);
  sqlq__buf_addf(b,
                 " AS pk, strftime('%%Y-%%m-%%dT%%H:%%M:%%f', 'now') || '000Z' AS at) AS e"
                 " JOIN sqlq_subscriptions s ON s.table_name = e.tbl AND s.action = '%s'"
                 " ORDER BY s.tag; END;",
                 kinds[k].action);
}

int sqlq__sqlite_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan) {
  sqlq__buf b = {NULL, 0, 0, 0};
  for (size_t k = 0; k < N_KINDS; k++)
    sqlq__buf_addf(&b, "DROP TRIGGER IF EXISTS \"%s_%c\";", plan->base, kinds[k].suffix);
  for (size_t k = 0; k < N_KINDS; k++)
    if (plan->actions & kinds[k].bit) add_trigger(&b, plan, k);
  int rc = b.oom ? sqlq__error(db, SQLQ_NOMEM, "out of memory") : db->driver->exec(db, b.p);
  sqlq__buf_free(&b);
  return rc;
}
