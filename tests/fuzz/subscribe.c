/*
** subscribe.c -- fuzz the identifier quoting of the subscription triggers
** on SQLite: hostile table and column names.
**
** One in-memory SQLite database for the whole run, with a bystander table
** and queue made at the start.  Each input is a table name (up to 70
** bytes), 1 to 3 column names (up to 40 bytes of UTF-8, control characters
** allowed), which of them form the primary key and in what order, and the
** values of one row.  The harness makes the table with sqlite3 (through
** sqlq_native_handle(), quoting the names itself), subscribes the tag
** "events" to its inserts, updates and deletes with row images, inserts,
** updates and deletes the row, then unsubscribes and drops the table.
** What must happen:
**   - sqlq_subscribe() refuses a name the oracle finds bad (fz_valid_text()
**     with SQLQ_TABLE_NAME_MAX, or sqlq's own "sqlq_" prefix in any case)
**     with SQLQ_MISUSE, a table without a primary key with SQLQ_MISUSE, and
**     one that is not there with SQLQ_NOTFOUND; else it succeeds, so its
**     trigger SQL parsed;
**   - the triggers fire: exactly three jobs, insert, update and delete,
**     whose payloads are JSON naming the table and every column exactly,
**     with the key in key order and the values as written (text, integer,
**     NULL, or a blob as "\x" and lower-case hex);
**   - unsubscribing leaves no trigger and no subscription, and the
**     bystander table and queue are as they were.
*/
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"

#define MAX_COLS 3
#define TAG "events"

static sqlq_db *db;
static sqlq_queue_stats bystander_stats;

/* SQL on the native handle, inside sqlq_begin()/sqlq_commit(); returns
** SQLite's result code. */
static int app_sql(const char *sql) {
  FZ_STATUS(db, sqlq_begin(db), SQLQ_OK);
  sqlite3 *conn = sqlq_native_handle(db);
  FZ_CHECK(conn != NULL, "no native handle");
  int rc = sqlite3_exec(conn, sql, NULL, NULL, NULL);
  FZ_STATUS(db, rc == SQLITE_OK ? sqlq_commit(db) : sqlq_rollback(db), SQLQ_OK);
  return rc;
}

/* An integer the SQL text counts on the native handle. */
static long long app_count(const char *sql) {
  FZ_STATUS(db, sqlq_begin(db), SQLQ_OK);
  sqlite3_stmt *st = NULL;
  FZ_CHECK(sqlite3_prepare_v2(sqlq_native_handle(db), sql, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW,
           "cannot count: %s", sql);
  long long n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  FZ_STATUS(db, sqlq_commit(db), SQLQ_OK);
  return n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  db = fz_open_init("sqlite::memory:", 0);
  FZ_CHECK(app_sql("CREATE TABLE bystander (id integer PRIMARY KEY, v text);"
                   "INSERT INTO bystander VALUES (1, 'one'), (2, 'two')") == SQLITE_OK,
           "cannot make the bystander table");
  sqlq_job_spec spec = {.payload = "b", .payload_len = 1};
  FZ_STATUS(db, sqlq_enqueue(db, "bystander", &spec, NULL, NULL), SQLQ_OK);
  FZ_STATUS(db, sqlq_subscribe(db, "bystander", SQLQ_ON_DELETE, "bystander", 0), SQLQ_OK);
  bystander_stats = fz_stats(db, "bystander");
  return 0;
}

/* One value of the row: what is bound, and what its JSON must be. */
typedef struct value {
  int kind; /* 0 integer, 1 text, 2 blob, 3 NULL */
  long long i;
  unsigned char *bytes;
  size_t len;
} value;

static void read_value(fz_input *in, value *v) {
  v->kind = fz_byte(in) % 4;
  v->i = (long long)(int32_t)fz_u32(in);
  v->bytes = fz_bytes(in, fz_byte(in) % 24, &v->len);
  /* Text is UTF-8 (SQLite's JSON passes other bytes on as they are). */
  if (v->kind == 1 && !fz_valid_utf8((char *)v->bytes, v->len)) v->kind = 2;
}

static void bind_value(sqlite3_stmt *st, int i, const value *v) {
  switch (v->kind) {
  case 0:
    sqlite3_bind_int64(st, i, v->i);
    break;
  case 1:
    sqlite3_bind_text(st, i, (const char *)v->bytes, (int)v->len, SQLITE_STATIC);
    break;
  case 2:
    sqlite3_bind_blob(st, i, v->bytes, (int)v->len, SQLITE_STATIC);
    break;
  default:
    sqlite3_bind_null(st, i);
  }
}

/* Whether the JSON j is what value v must give. */
static int json_is(const json_t *j, const value *v) {
  switch (v->kind) {
  case 0:
    return json_is_integer(j) && json_integer_value(j) == v->i;
  case 1:
    return json_is_string(j) && json_string_length(j) == v->len &&
           memcmp(json_string_value(j), v->bytes, v->len) == 0;
  case 2: {
    char hex[2 + 2 * 24 + 1] = "\\x";
    for (size_t i = 0; i < v->len; i++) snprintf(hex + 2 + 2 * i, 3, "%02x", v->bytes[i]);
    return json_is_string(j) && strcmp(json_string_value(j), hex) == 0;
  }
  default:
    return json_is_null(j);
  }
}

/* The table of one input. */
typedef struct table {
  char *name;
  int n_cols;
  char *cols[MAX_COLS];
  int pk[MAX_COLS];    /* 1-based place in the key, 0: not in it */
  value row[MAX_COLS]; /* as inserted */
  int changed;         /* the column the update sets */
  value update;
} table;

/* Append s to b as an SQL identifier in double quotes. */
static void quote(char *b, size_t size, const char *s) {
  size_t n = strlen(b);
  if (n + 1 < size) b[n++] = '"';
  for (; *s && n + 2 < size; s++) {
    if (*s == '"') b[n++] = '"';
    b[n++] = *s;
  }
  if (n + 1 < size) b[n++] = '"';
  b[n < size ? n : size - 1] = '\0';
}

/* CREATE TABLE for t; its key's columns in their key order. */
static void create_sql(const table *t, char *sql, size_t size) {
  snprintf(sql, size, "CREATE TABLE ");
  quote(sql, size, t->name);
  strncat(sql, " (", size - strlen(sql) - 1);
  for (int i = 0; i < t->n_cols; i++) {
    if (i) strncat(sql, ", ", size - strlen(sql) - 1);
    quote(sql, size, t->cols[i]);
  }
  const char *sep = ", PRIMARY KEY (";
  for (int place = 1; place <= t->n_cols; place++)
    for (int i = 0; i < t->n_cols; i++)
      if (t->pk[i] == place) {
        strncat(sql, sep, size - strlen(sql) - 1);
        quote(sql, size, t->cols[i]);
        sep = ", ";
      }
  strncat(sql, strcmp(sep, ", ") == 0 ? "))" : ")", size - strlen(sql) - 1);
}

/* Run sql (with ?1.. bound to values) on the table through the native
** handle in a transaction of sqlq's. */
static void write_row(const char *sql, const value *values, int n) {
  FZ_STATUS(db, sqlq_begin(db), SQLQ_OK);
  sqlite3_stmt *st = NULL;
  FZ_CHECK(sqlite3_prepare_v2(sqlq_native_handle(db), sql, -1, &st, NULL) == SQLITE_OK,
           "cannot prepare %s", sql);
  for (int i = 0; i < n; i++) bind_value(st, i + 1, &values[i]);
  int rc = sqlite3_step(st);
  FZ_CHECK(rc == SQLITE_DONE, "%s failed: %s", sql, sqlite3_errmsg(sqlq_native_handle(db)));
  sqlite3_finalize(st);
  FZ_STATUS(db, sqlq_commit(db), SQLQ_OK);
}

/* Check that o holds exactly the columns of t (only the key's when
** key_only) with the values of row. */
static void check_object(const json_t *o, const table *t, const value *row, int key_only,
                         const char *what) {
  FZ_CHECK(json_is_object(o), "%s is not an object", what);
  size_t want = 0;
  for (int i = 0; i < t->n_cols; i++) {
    if (key_only && !t->pk[i]) continue;
    want++;
    const json_t *v = json_object_get(o, t->cols[i]);
    FZ_CHECK(v != NULL, "%s lacks column '%s'", what, t->cols[i]);
    FZ_CHECK(json_is(v, &row[i]), "%s has another value for '%s'", what, t->cols[i]);
  }
  FZ_CHECK(json_object_size(o) == want, "%s has %zu keys, expected %zu", what, json_object_size(o),
           want);
  if (!key_only) return;
  /* The key's columns come in key order. */
  const char *key;
  const json_t *v;
  int place = 1;
  json_object_foreach((json_t *)o, key, v) {
    int i = 0;
    while (i < t->n_cols && strcmp(t->cols[i], key) != 0) i++;
    FZ_CHECK(i < t->n_cols && t->pk[i] == place, "%s: key column '%s' out of order", what, key);
    place++;
  }
}

/* The three events of the row's insert, update and delete. */
static void check_events(const table *t) {
  value after[MAX_COLS];
  memcpy(after, t->row, sizeof after);
  after[t->changed] = t->update;
  sqlq_job_info *jobs = NULL;
  size_t n = 0;
  FZ_STATUS(db, sqlq_list(db, TAG, 0, 0, &jobs, &n), SQLQ_OK);
  FZ_CHECK(n == 3, "%zu events for one insert, update and delete", n);
  static const char *const actions[3] = {"insert", "update", "delete"};
  for (int k = 0; k < 3; k++) {
    /* sqlq_list() gives claim order; ids give the order of the events. */
    size_t j = 0;
    for (size_t i = 0; i < n; i++) j = jobs[i].id < jobs[j].id ? i : j;
    json_error_t error;
    json_t *p = json_loadb((const char *)jobs[j].payload, jobs[j].payload_len,
                           JSON_REJECT_DUPLICATES, &error);
    FZ_CHECK(p != NULL, "event %d is not JSON: %s: %.300s", k, error.text, jobs[j].payload);
    const json_t *tbl = json_object_get(p, "table"), *act = json_object_get(p, "action");
    FZ_CHECK(json_is_string(tbl) && strcmp(json_string_value(tbl), t->name) == 0,
             "event %d names another table", k);
    FZ_CHECK(json_is_string(act) && strcmp(json_string_value(act), actions[k]) == 0,
             "event %d is not a%s %s", k, k ? "" : "n", actions[k]);
    FZ_CHECK(json_is_string(json_object_get(p, "at")), "event %d has no time", k);
    check_object(json_object_get(p, "pk"), t, k == 0 ? t->row : after, 1, "pk");
    if (k < 2) check_object(json_object_get(p, "new"), t, k == 0 ? t->row : after, 0, "new");
    if (k > 0) check_object(json_object_get(p, "old"), t, k == 1 ? t->row : after, 0, "old");
    FZ_CHECK(json_object_size(p) == (k == 1 ? 6u : 5u), "event %d has other keys", k);
    FZ_CHECK(jobs[j].group_key != NULL, "event %d has no group", k);
    json_decref(p);
    jobs[j].id = INT64_MAX;
  }
  sqlq_job_infos_free(jobs, n);
}

/* Subscribe to t, write its row and check the events; the table exists
** when made is set. */
static void fuzz_table(table *t, int made) {
  int has_pk = 0;
  for (int i = 0; i < t->n_cols; i++) has_pk |= t->pk[i] != 0;
  int name_ok =
    fz_valid_text(t->name, SQLQ_TABLE_NAME_MAX) && strncasecmp(t->name, "sqlq_", 5) != 0;
  int want = !name_ok ? SQLQ_MISUSE : !made ? SQLQ_NOTFOUND : !has_pk ? SQLQ_MISUSE : SQLQ_OK;
  int rc = sqlq_subscribe(db, t->name, SQLQ_ON_INSERT | SQLQ_ON_UPDATE | SQLQ_ON_DELETE, TAG,
                          SQLQ_SUB_ROWS);
  FZ_CHECK(rc == want, "subscribe gave %s, expected %s (%s)", sqlq_status_name(rc),
           sqlq_status_name(want), sqlq_errmsg(db));
  if (rc != SQLQ_OK) return;

  char sql[1024];
  snprintf(sql, sizeof sql, "INSERT INTO ");
  quote(sql, sizeof sql, t->name);
  strncat(sql, " VALUES (?1, ?2, ?3", sizeof sql - strlen(sql) - 1);
  sql[strlen(sql) - 4 * (MAX_COLS - t->n_cols)] = '\0';
  strncat(sql, ")", sizeof sql - strlen(sql) - 1);
  write_row(sql, t->row, t->n_cols);
  snprintf(sql, sizeof sql, "UPDATE ");
  quote(sql, sizeof sql, t->name);
  strncat(sql, " SET ", sizeof sql - strlen(sql) - 1);
  quote(sql, sizeof sql, t->cols[t->changed]);
  strncat(sql, " = ?1", sizeof sql - strlen(sql) - 1);
  write_row(sql, &t->update, 1);
  snprintf(sql, sizeof sql, "DELETE FROM ");
  quote(sql, sizeof sql, t->name);
  write_row(sql, NULL, 0);
  check_events(t);

  FZ_STATUS(db, sqlq_unsubscribe(db, t->name, TAG), SQLQ_OK);
  FZ_STATUS(db, sqlq_unsubscribe(db, t->name, TAG), SQLQ_NOTFOUND);
  FZ_STATUS(db, sqlq_purge(db, TAG, NULL), SQLQ_OK);
  write_row(sql, NULL, 0);
  FZ_CHECK(fz_stats(db, TAG).ready == 0, "events after the unsubscribe");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_input in = {data, size};
  table t;
  memset(&t, 0, sizeof t);
  t.name = fz_string(&in, 70);
  uint8_t shape = fz_byte(&in);
  t.n_cols = 1 + shape % MAX_COLS;
  int usable = 1;
  for (int i = 0; i < t.n_cols; i++) {
    t.cols[i] = fz_string(&in, 40);
    usable &= fz_valid_utf8(t.cols[i], strlen(t.cols[i]));
    read_value(&in, &t.row[i]);
  }
  /* Key places: a permutation picked by the input, columns left out by
  ** its bits. */
  uint8_t keys = fz_byte(&in);
  int place = 1;
  for (int k = 0; k < t.n_cols; k++) {
    int i = (k + keys / 8) % t.n_cols;
    if (!(keys & (1 << k))) t.pk[i] = place++;
  }
  t.changed = fz_byte(&in) % t.n_cols;
  read_value(&in, &t.update);
  /* SQLite's own tables are not the harness's to make or drop. */
  usable &= fz_valid_utf8(t.name, strlen(t.name)) && strcmp(t.name, "bystander") != 0 &&
            strncasecmp(t.name, "sqlite_", 7) != 0;

  if (usable) {
    char sql[1024];
    create_sql(&t, sql, sizeof sql);
    int made = app_sql(sql) == SQLITE_OK;
    fuzz_table(&t, made);
    FZ_CHECK(app_count("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                       " AND tbl_name <> 'bystander'") == 0,
             "triggers are left behind");
    sqlq_subscription *subs = NULL;
    size_t n = 0;
    FZ_STATUS(db, sqlq_subscriptions(db, &subs, &n), SQLQ_OK);
    FZ_CHECK(n == 1 && strcmp(subs[0].table, "bystander") == 0, "%zu subscriptions are left", n);
    sqlq_subscriptions_free(subs, n);
    if (made) {
      char drop[600] = "DROP TABLE ";
      quote(drop, sizeof drop, t.name);
      FZ_CHECK(app_sql(drop) == SQLITE_OK, "cannot drop the table");
    }
    FZ_CHECK(
      app_count(
        "SELECT count(*) FROM bystander WHERE (id, v) IN (VALUES (1, 'one'), (2, 'two'))") == 2 &&
        app_count("SELECT count(*) FROM bystander") == 2,
      "the bystander table changed");
    sqlq_queue_stats s = fz_stats(db, "bystander");
    FZ_CHECK(memcmp(&s, &bystander_stats, sizeof s) == 0, "the bystander queue changed");
  }
  for (int i = 0; i < t.n_cols; i++) {
    free(t.cols[i]);
    free(t.row[i].bytes);
  }
  free(t.update.bytes);
  free(t.name);
  return usable ? 0 : -1;
}
