/*
** firebird_sub.c -- the triggers of table subscriptions on Firebird 3.
**
** Each action with subscribers gets a PSQL trigger, AFTER INSERT, UPDATE or
** DELETE, named plan->base + "_i", "_u" or "_d" (quoted: the names keep
** their lower case), on the table that plan->on means (RELATION_OF in
** firebird_sql.c: the name as stored, else its upper-case form).  When it
** fires, the trigger walks the subscriptions of the table and action in
** sqlq_subscriptions, in the order of their tags, and enqueues one job per
** subscription with a plain INSERT INTO sqlq_jobs: the triggers of
** sqlq_jobs (migration 1) fill in the times and the claim rank, and post
** the queue's event, which wakes the tag's workers at commit.  With no
** subscription row the trigger writes nothing.  The events of one
** transaction get increasing ids from the identity column, in firing order.
**
** The payload is JSON put together by concatenation into a UTF8 text BLOB
** (docs/subscriptions.md): numbers as Firebird casts them to text,
** BOOLEAN as true or false, text through sqlq_json_text(), bytes (a BLOB
** other than text, or text in CHARACTER SET OCTETS) through
** sqlq_json_bytes(), other types (dates and times) as the text Firebird
** casts them to.  The key and the clock are worked out once per row, at
** the first subscription; the row images once, at the first subscription
** that wants them.  The group key is the table's name, a space and the
** "pk" object, cut by sqlq_json_key() to 255 bytes.
**
** Names in the JSON: the table's as subscribed; a column's as stored,
** except that a name Firebird stores in upper case because it was written
** without quotes (a regular identifier: A-Z, 0-9, _ and $) is written in
** lower case, as it is typed: `CREATE TABLE t (language_id ...)` gives
** "language_id", not "LANGUAGE_ID".
**
** A trigger's description (COMMENT ON TRIGGER) is the subscribed name,
** which SUB_TRIGGERS reports as the trigger's table while that name still
** means the table the trigger is on.  Each trigger is granted what it
** does (insert jobs, read the subscriptions, call the JSON functions), so
** that a user who may write the table needs no right on sqlq's tables;
** the subscriber must be able to grant that (own sqlq's schema).
**
** Quoting: identifiers are double-quoted with quotes doubled, literals
** single-quoted with quotes doubled (Firebird gives the backslash no
** meaning); the table name compared with sqlq_subscriptions is a hex
** literal, which is bytes, as the column is.  DDL runs in the core's
** transaction and takes effect at its commit: a trigger made in a
** transaction does not fire for writes of that same transaction.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firebird_int.h"

static const struct {
  unsigned bit;
  const char *action; /* as in sqlq_subscriptions.action and the payload */
  const char *event;  /* the trigger's event */
  char suffix;
} kinds[] = {
  {SQLQ_ON_INSERT, "insert", "INSERT", 'i'},
  {SQLQ_ON_UPDATE, "update", "UPDATE", 'u'},
  {SQLQ_ON_DELETE, "delete", "DELETE", 'd'},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* What a trigger may do whoever writes its table: the writer needs no
** right on sqlq's tables. */
static const char *const grants[] = {
  "INSERT ON sqlq_jobs",
  "SELECT ON sqlq_subscriptions",
  "EXECUTE ON FUNCTION sqlq_json_text",
  "EXECUTE ON FUNCTION sqlq_json_bytes",
  "EXECUTE ON FUNCTION sqlq_json_key",
};
#define N_GRANTS (sizeof grants / sizeof grants[0])

/* A column of the table, from SUB_COLUMNS: the plan's, with the JSON kind
** of its values ('n' number, 'b' boolean, 's' text, 'x' bytes, 't' other). */
typedef struct column {
  const sqlq__sub_column *col;
  char kind;
} column;

/* Append the text s as a string literal. */
static void add_literal(sqlq__buf *b, const char *s) {
  sqlq__buf_quote(b, s, '\'');
}

/* Append the JSON text of the string s, as a string literal. */
static void add_json_literal(sqlq__buf *b, const char *s) {
  sqlq__buf j = {NULL, 0, 0, 0};
  sqlq__buf_add(&j, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') sqlq__buf_add(&j, "\\");
    if (*p < 0x20)
      sqlq__buf_addf(&j, "\\u%04x", *p);
    else
      sqlq__buf_addn(&j, (const char *)p, 1);
  }
  sqlq__buf_add(&j, "\"");
  if (j.oom)
    b->oom = 1;
  else
    add_literal(b, j.p);
  sqlq__buf_free(&j);
}

/* The name of a column in the JSON: lower case when Firebird stores it in
** upper case for being written without quotes.  Into out (size bytes). */
static void json_name(const char *name, char *out, size_t size) {
  int regular = name[0] >= 'A' && name[0] <= 'Z';
  for (const char *p = name; *p && regular; p++)
    regular = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '$';
  size_t i = 0;
  for (; name[i] && i + 1 < size; i++)
    out[i] = regular && name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
  out[i] = '\0';
}

/* Append `"name":` and the JSON of column c of row (NEW or OLD). */
static void add_member(sqlq__buf *b, const char *row, const column *c) {
  char name[256];
  json_name(c->col->name, name, sizeof name);
  sqlq__buf_add(b, " || ");
  add_json_literal(b, name);
  sqlq__buf_add(b, " || ':' || ");
  sqlq__buf r = {NULL, 0, 0, 0};
  sqlq__buf_addf(&r, "%s.", row);
  sqlq__buf_quote(&r, c->col->name, '"');
  const char *v = r.oom ? "NULL" : r.p;
  switch (c->kind) {
  case 'n':
    sqlq__buf_addf(b, "COALESCE(CAST(%s AS VARCHAR(64)), 'null')", v);
    break;
  case 'b':
    sqlq__buf_addf(b,
                   "CASE WHEN %s IS NULL THEN CAST('null' AS VARCHAR(5)) WHEN %s THEN"
                   " CAST('true' AS VARCHAR(5)) ELSE CAST('false' AS VARCHAR(5)) END",
                   v, v);
    break;
  case 'x':
    sqlq__buf_addf(b, "sqlq_json_bytes(%s)", v);
    break;
  case 's':
    sqlq__buf_addf(b, "sqlq_json_text(%s)", v);
    break;
  default:
    sqlq__buf_addf(b, "sqlq_json_text(CAST(%s AS VARCHAR(64)))", v);
    break;
  }
  if (r.oom) b->oom = 1;
  sqlq__buf_free(&r);
}

/* Append the JSON object of the columns of row: the primary key's, in key
** order, when pk_only, else every column in table order. */
static void add_object(sqlq__buf *b, const column *cols, size_t n, const char *row, int pk_only) {
  const char *sep = "'{'";
  for (size_t place = 1; place <= (pk_only ? n : 1); place++) {
    for (size_t i = 0; i < n; i++) {
      if (pk_only && (size_t)cols[i].col->pk != place) continue;
      sqlq__buf_add(b, sep);
      sep = " || ','";
      add_member(b, row, &cols[i]);
    }
  }
  sqlq__buf_add(b, " || '}'");
}

/* Append the statements that make the trigger of kinds[k] and describe
** it, on the table stored as relation. */
static void add_trigger(sqlq__buf *b, const sqlq__sub_plan *plan, const char *relation,
                        const column *cols, size_t k) {
  const char *key_row = kinds[k].bit == SQLQ_ON_DELETE ? "OLD" : "NEW";
  sqlq__buf_addf(b, "RECREATE TRIGGER \"%s_%c\" FOR ", plan->base, kinds[k].suffix);
  sqlq__buf_quote(b, relation, '"');
  sqlq__buf_addf(b,
                 " ACTIVE AFTER %s POSITION 32000 AS"
                 " DECLARE tag VARCHAR(128) CHARACTER SET OCTETS;"
                 " DECLARE with_rows SMALLINT;"
                 " DECLARE pk BLOB SUB_TYPE TEXT CHARACTER SET UTF8;"
                 " DECLARE head BLOB SUB_TYPE TEXT CHARACTER SET UTF8;"
                 " DECLARE img BLOB SUB_TYPE TEXT CHARACTER SET UTF8;"
                 " DECLARE gk VARCHAR(255) CHARACTER SET OCTETS;"
                 " DECLARE ts VARCHAR(24);"
                 " BEGIN"
                 " FOR SELECT tag, with_rows FROM sqlq_subscriptions WHERE table_name = x'",
                 kinds[k].event);
  for (const unsigned char *p = (const unsigned char *)plan->table; *p; p++)
    sqlq__buf_addf(b, "%02x", *p);
  sqlq__buf_addf(b,
                 "' AND action = '%s' ORDER BY tag INTO :tag, :with_rows DO"
                 " BEGIN"
                 " IF (head IS NULL) THEN"
                 " BEGIN"
                 " pk = ",
                 kinds[k].action);
  add_object(b, cols, plan->n_cols, key_row, 1);
  sqlq__buf_add(b, "; ts = CAST(CURRENT_TIMESTAMP AS VARCHAR(24));"
                   " head = '{\"table\":' || ");
  add_json_literal(b, plan->table);
  sqlq__buf_addf(b,
                 " || ',\"action\":\"%s\",\"pk\":' || pk || ',\"at\":\"'"
                 " || SUBSTRING(ts FROM 1 FOR 10) || 'T' || SUBSTRING(ts FROM 12 FOR 13)"
                 " || '00Z\"'; gk = sqlq_json_key(",
                 kinds[k].action);
  add_literal(b, plan->table);
  sqlq__buf_add(b, " || ' ' || pk); END");
  if (plan->rows) {
    sqlq__buf_add(b, " IF (with_rows <> 0 AND img IS NULL) THEN img = ''");
    if (kinds[k].bit != SQLQ_ON_DELETE) {
      sqlq__buf_add(b, " || ',\"new\":' || ");
      add_object(b, cols, plan->n_cols, "NEW", 0);
    }
    if (kinds[k].bit != SQLQ_ON_INSERT) {
      sqlq__buf_add(b, " || ',\"old\":' || ");
      add_object(b, cols, plan->n_cols, "OLD", 0);
    }
    sqlq__buf_add(b, ";");
  }
  sqlq__buf_add(b, " INSERT INTO sqlq_jobs (queue, group_key, payload) VALUES (:tag, :gk,"
                   " IIF(:with_rows <> 0, :head || COALESCE(:img, ''), :head) || '}');"
                   " END END" FB_SEP);
  sqlq__buf_addf(b, "COMMENT ON TRIGGER \"%s_%c\" IS ", plan->base, kinds[k].suffix);
  add_literal(b, plan->table);
  sqlq__buf_add(b, FB_SEP);
  for (size_t i = 0; i < N_GRANTS; i++)
    sqlq__buf_addf(b, "GRANT %s TO TRIGGER \"%s_%c\"" FB_SEP, grants[i], plan->base,
                   kinds[k].suffix);
}

/* The actions whose triggers exist (anywhere), by SUB_TRIGGERS. */
static int existing(sqlq_db *db, const sqlq__sub_plan *plan, unsigned *acts) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  size_t base_len = strlen(plan->base);
  *acts = 0;
  int rc = d->prepare(db, SQLQ__SQL_SUB_TRIGGERS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, plan->base);
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    size_t len = 0;
    const char *name = d->column_blob(st, 0, &len);
    for (size_t k = 0; name && k < N_KINDS; k++)
      if (len == base_len + 2 && name[base_len] == '_' && name[base_len + 1] == kinds[k].suffix)
        *acts |= kinds[k].bit;
  }
  d->reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

/* The kind of each of the plan's columns and the table's stored name
** (malloc'ed into *relation), from SUB_COLUMNS on plan->on. */
static int read_kinds(sqlq_db *db, const sqlq__sub_plan *plan, column *cols, char **relation) {
  const sqlq__driver *d = db->driver;
  sqlq__stmt *st;
  size_t n = 0;
  *relation = NULL;
  int rc = d->prepare(db, SQLQ__SQL_SUB_COLUMNS, &st);
  if (rc != SQLQ_OK) return rc;
  d->bind_text(st, 1, plan->on);
  while ((rc = d->step(db, st)) == SQLQ__ROW) {
    size_t len = 0, klen = 0, rlen = 0;
    const char *name = d->column_blob(st, 0, &len);
    const char *kind = d->column_blob(st, 3, &klen);
    const char *rel = d->column_blob(st, 4, &rlen);
    if (n == plan->n_cols || name == NULL || klen != 1 || rel == NULL ||
        strlen(plan->cols[n].name) != len || memcmp(plan->cols[n].name, name, len) != 0) {
      rc = SQLQ_BUSY;
      break;
    }
    cols[n].col = &plan->cols[n];
    cols[n].kind = kind[0];
    n++;
    if (*relation == NULL && (*relation = strndup(rel, rlen)) == NULL) {
      rc = SQLQ_NOMEM;
      break;
    }
  }
  d->reset(st);
  if (rc == SQLQ__DONE && n != plan->n_cols) rc = SQLQ_BUSY;
  if (rc == SQLQ_BUSY)
    return sqlq__error(db, SQLQ_BUSY, "table '%s' changed while its triggers were being made",
                       plan->table);
  if (rc == SQLQ_NOMEM) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

int sqlq__fb_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan) {
  unsigned have = 0;
  int rc = existing(db, plan, &have);
  if (rc != SQLQ_OK) return rc;
  column *cols = NULL;
  char *relation = NULL;
  if (plan->actions) {
    if ((cols = calloc(plan->n_cols, sizeof *cols)) == NULL)
      return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    rc = read_kinds(db, plan, cols, &relation);
  }
  sqlq__buf b = {NULL, 0, 0, 0};
  sqlq__buf_add(&b, ""); /* nothing to do is the empty script */
  for (size_t k = 0; rc == SQLQ_OK && k < N_KINDS; k++) {
    if (plan->actions & kinds[k].bit)
      add_trigger(&b, plan, relation, cols, k);
    else if (have & kinds[k].bit)
      sqlq__buf_addf(&b, "DROP TRIGGER \"%s_%c\"" FB_SEP, plan->base, kinds[k].suffix);
  }
  if (rc == SQLQ_OK)
    rc = b.oom ? sqlq__error(db, SQLQ_NOMEM, "out of memory") : db->driver->exec(db, b.p);
  sqlq__buf_free(&b);
  free(cols);
  free(relation);
  return rc;
}
