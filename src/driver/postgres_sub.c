/*
** postgres_sub.c -- the triggers of table subscriptions on PostgreSQL.
**
** Each action with subscribers gets a PL/pgSQL function and an AFTER ...
** FOR EACH ROW trigger, both named plan->base + "_i", "_u" or "_d", in
** the default schema (current_schema()).  When it fires, the function
** enqueues with one INSERT ... SELECT a job per subscription of the table
** and action (looked up in sqlq_subscriptions, in the order of their
** tags), exactly as a plain-SQL producer would: the jobs' times come from
** the columns' defaults, and the statement-level trigger on sqlq_jobs
** (migration 1) sends the NOTIFY that wakes the tags' waiting workers.
**
** The payload is JSON text put together by concatenation, so that it is
** as compact as the other backends' (`{"table":...,"pk":{...},...}`): the
** table's name and the key's column names are JSON strings written here,
** the values come from to_json() and the row images from row_to_json(),
** which turn bytea into "\\x" and lower-case hex and keep non-ASCII text
** as it is.  The group key is the table's name, a space and the "pk"
** object's text, cut to 255 characters.
**
** Rights: the functions are SECURITY INVOKER, as triggers are by default:
** they run as the role that writes the table, which needs INSERT on
** sqlq_jobs and SELECT on sqlq_subscriptions.  They must not run as the
** role that subscribed: to_json() and row_to_json() call the cast to json
** of a type that is not built in, a function of whoever made the type, so
** a table's owner with a column of a type of its own would run code as the
** subscriber (tests/cli/pg_subscribe_owner.sh).  Their search_path is fixed
** to the default schema (then pg_temp), and they name sqlq's tables with
** that schema, so no search_path or temporary table of the writer's can
** redirect them; bytea_output is fixed too, so that the row images never
** depend on the writer's session.
**
** Quoting: every identifier is double-quoted (a quote inside doubled), and
** every literal is an E'' string with its quotes and backslashes doubled,
** which reads the same whatever standard_conforming_strings says.  The
** body is dollar-quoted with a tag that does not occur in it.
*/
#include <stdio.h>
#include <string.h>

#include "postgres_int.h"

static const struct {
  unsigned bit;
  const char *action; /* as in sqlq_subscriptions.action and the payload */
  const char *event;  /* the trigger's event */
  const char *row;    /* the row whose key the event carries */
} kinds[] = {
  {SQLQ_ON_INSERT, "insert", "INSERT", "NEW"},
  {SQLQ_ON_UPDATE, "update", "UPDATE", "NEW"},
  {SQLQ_ON_DELETE, "delete", "DELETE", "OLD"},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* Append s as an SQL string literal that means s under either setting of
** standard_conforming_strings: E'...' with ' and \ doubled. */
static void add_literal(sqlq__buf *b, const char *s) {
  sqlq__buf_add(b, "E'");
  for (const char *p = s; *p; p++) {
    if (*p == '\'' || *p == '\\') sqlq__buf_addn(b, p, 1);
    sqlq__buf_addn(b, p, 1);
  }
  sqlq__buf_add(b, "'");
}

/* Append s as a JSON string, escaped as PostgreSQL's own JSON output
** escapes text (quote, backslash, control characters). */
static void add_json_string(sqlq__buf *b, const char *s) {
  sqlq__buf_add(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      sqlq__buf_add(b, "\\\"");
      break;
    case '\\':
      sqlq__buf_add(b, "\\\\");
      break;
    case '\b':
      sqlq__buf_add(b, "\\b");
      break;
    case '\f':
      sqlq__buf_add(b, "\\f");
      break;
    case '\n':
      sqlq__buf_add(b, "\\n");
      break;
    case '\r':
      sqlq__buf_add(b, "\\r");
      break;
    case '\t':
      sqlq__buf_add(b, "\\t");
      break;
    default:
      if (*p < 0x20)
        sqlq__buf_addf(b, "\\u%04x", *p);
      else
        sqlq__buf_addn(b, (const char *)p, 1);
    }
  }
  sqlq__buf_add(b, "\"");
}

/* Append s as a JSON string inside an SQL literal. */
static void add_json_literal(sqlq__buf *b, const char *s) {
  sqlq__buf j = {NULL, 0, 0, 0};
  add_json_string(&j, s);
  if (j.oom)
    b->oom = 1;
  else
    add_literal(b, j.p);
  sqlq__buf_free(&j);
}

/* Append schema.name, both quoted. */
static void add_qualified(sqlq__buf *b, const char *schema, const char *name) {
  sqlq__buf_quote(b, schema, '"');
  sqlq__buf_add(b, ".");
  sqlq__buf_quote(b, name, '"');
}

/* Append the FROM and WHERE clauses that find the subscriptions (s) of
** the table and kinds[k]'s action. */
static void add_subscriptions(sqlq__buf *b, const sqlq__sub_plan *plan, const char *schema,
                              size_t k) {
  sqlq__buf_add(b, " FROM ");
  add_qualified(b, schema, "sqlq_subscriptions");
  sqlq__buf_add(b, " s WHERE s.table_name = ");
  add_literal(b, plan->table);
  sqlq__buf_addf(b, " AND s.action = '%s'", kinds[k].action);
}

/* The body of the function of kinds[k]: the "pk" object's text of the
** row, the clock, then one job per subscription. */
static void add_body(sqlq__buf *b, const sqlq__sub_plan *plan, const char *schema, size_t k) {
  const char *row = kinds[k].row;
  sqlq__buf_add(b, "DECLARE v_pk text := '{'");
  int first = 1;
  for (int place = 1; (size_t)place <= plan->n_cols; place++) {
    for (size_t i = 0; i < plan->n_cols; i++) {
      if (plan->cols[i].pk != place) continue;
      sqlq__buf_add(b, first ? " || " : " || ',' || ");
      first = 0;
      add_json_literal(b, plan->cols[i].name);
      sqlq__buf_addf(b, " || ':' || to_json(%s.", row);
      sqlq__buf_quote(b, plan->cols[i].name, '"');
      sqlq__buf_add(b, ")::text");
    }
  }
  sqlq__buf_add(b, " || '}';"
                   " v_at text := to_char(clock_timestamp() AT TIME ZONE 'UTC',"
                   " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"');"
                   " BEGIN INSERT INTO ");
  add_qualified(b, schema, "sqlq_jobs");
  sqlq__buf_add(b, " (queue, group_key, payload) SELECT s.tag, left(");
  add_literal(b, plan->table);
  sqlq__buf_add(b, " || ' ' || v_pk, 255), convert_to('{\"table\":' || ");
  add_json_literal(b, plan->table);
  sqlq__buf_addf(b, " || ',\"action\":\"%s\",\"pk\":' || v_pk || ',\"at\":\"' || v_at || '\"'",
                 kinds[k].action);
  if (plan->rows) {
    sqlq__buf_add(b, " || CASE WHEN s.with_rows THEN ''");
    if (kinds[k].bit != SQLQ_ON_DELETE)
      sqlq__buf_add(b, " || ',\"new\":' || row_to_json(NEW)::text");
    if (kinds[k].bit != SQLQ_ON_INSERT)
      sqlq__buf_add(b, " || ',\"old\":' || row_to_json(OLD)::text");
    sqlq__buf_add(b, " ELSE '' END");
  }
  sqlq__buf_add(b, " || '}', 'UTF8')");
  add_subscriptions(b, plan, schema, k);
  sqlq__buf_add(b, " ORDER BY s.tag;");
  /* The trigger on sqlq_jobs keeps quiet in a transaction where the
  ** library enqueued too (sqlq_begin()), whose COMMIT announces only its
  ** own queues: the tags are announced here then. */
  sqlq__buf_add(b, " IF current_setting('sqlq.library', true) = 'on' THEN PERFORM pg_notify(");
  add_qualified(b, schema, "sqlq_channel");
  sqlq__buf_add(b, "(s.tag), '1')");
  add_subscriptions(b, plan, schema, k);
  sqlq__buf_add(b, "; END IF; RETURN NULL; END");
}

/* Append the function and the trigger of kinds[k]. */
static void add_trigger(sqlq__buf *b, const sqlq__sub_plan *plan, const char *schema, size_t k,
                        const char *name) {
  sqlq__buf body = {NULL, 0, 0, 0};
  add_body(&body, plan, schema, k);
  /* A dollar-quote tag that the body does not hold ends only the body. */
  char tag[32];
  for (int n = 0;; n++) {
    snprintf(tag, sizeof tag, "$sqlq_body%d$", n);
    if (body.oom || strstr(body.p, tag) == NULL) break;
  }
  if (body.oom) b->oom = 1;
  sqlq__buf_add(b, "CREATE FUNCTION ");
  add_qualified(b, schema, name);
  sqlq__buf_add(b, "() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER SET search_path = ");
  sqlq__buf_quote(b, schema, '"');
  sqlq__buf_addf(b, ", pg_temp SET bytea_output = hex AS %s", tag);
  if (!body.oom) sqlq__buf_add(b, body.p);
  sqlq__buf_addf(b, "%s; CREATE TRIGGER ", tag);
  sqlq__buf_quote(b, name, '"');
  sqlq__buf_addf(b, " AFTER %s ON ", kinds[k].event);
  add_qualified(b, schema, plan->on);
  sqlq__buf_add(b, " FOR EACH ROW EXECUTE FUNCTION ");
  add_qualified(b, schema, name);
  sqlq__buf_add(b, "();");
  sqlq__buf_free(&body);
}

/* The name of the default schema, into out (size bytes). */
static int default_schema(sqlq_db *db, char *out, size_t size) {
  int rc = sqlq__pg_begin_now(db);
  if (rc != SQLQ_OK) return rc;
  PGconn *conn = sqlq__pg_conn(db);
  PGresult *r = PQexec(conn, "SELECT current_schema()");
  if (PQresultStatus(r) != PGRES_TUPLES_OK)
    rc = sqlq__pg_error(db, conn, r, "current_schema()");
  else if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0))
    rc = sqlq__error(db, SQLQ_SCHEMA, "postgres: no schema of the search_path exists");
  else
    snprintf(out, size, "%s", PQgetvalue(r, 0, 0));
  PQclear(r);
  return rc;
}

int sqlq__pg_sub_triggers(sqlq_db *db, const sqlq__sub_plan *plan) {
  char schema[128];
  int rc = default_schema(db, schema, sizeof schema);
  if (rc != SQLQ_OK) return rc;
  sqlq__buf b = {NULL, 0, 0, 0};
  char name[40];
  /* CASCADE drops the trigger too, wherever its table now is. */
  for (size_t k = 0; k < N_KINDS; k++) {
    snprintf(name, sizeof name, "%s_%c", plan->base, kinds[k].action[0]);
    sqlq__buf_add(&b, "DROP FUNCTION IF EXISTS ");
    add_qualified(&b, schema, name);
    sqlq__buf_add(&b, "() CASCADE;");
  }
  for (size_t k = 0; k < N_KINDS; k++) {
    snprintf(name, sizeof name, "%s_%c", plan->base, kinds[k].action[0]);
    if (plan->actions & kinds[k].bit) add_trigger(&b, plan, schema, k, name);
  }
  rc = b.oom ? sqlq__error(db, SQLQ_NOMEM, "out of memory") : db->driver->exec(db, b.p);
  sqlq__buf_free(&b);
  return rc;
}
