/*
** firebird_stmt.c -- statements of the Firebird driver on XSQLDA.
**
** The dialect writes parameters $1, $2, ...; DSQL takes `?` only, so the
** text is rewritten at prepare time, remembering which parameter each `?`
** stands for.  A statement is prepared on its first run in an attachment
** (DSQL prepares within a transaction) and kept until the attachment ends.
**
** Inputs are bound as the values are, not as described: integers as
** SQL_INT64, text and bytes as SQL_VARYING (the server converts), and
** bytes for a BLOB parameter longer than a VARYING holds as a blob written
** first.  Outputs: numbers come as SQL_INT64, text as SQL_VARYING, BLOBs as
** ids whose bytes are read when the column is asked for.
**
** A statement that is not a SELECT runs at once; its RETURNING values (a
** singleton, isc_dsql_execute2) are the statement's one row, except when
** they are all NULL: Firebird returns NULLs when no row matched, and
** every RETURNING of the dialect includes a NOT NULL column.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "firebird_int.h"

/* The most bytes a VARYING parameter takes; longer bytes go as a blob. */
#define VARYING_MAX 32765

/* Rewrite $N to ?, outside quotes, recording N-1 for each mark. */
static char *rewrite(sqlq_db *db, sqlq__stmt *st, const char *sql) {
  size_t n = strlen(sql);
  char *out = malloc(n + 1), *o = out;
  if (out == NULL) {
    sqlq__error(db, SQLQ_NOMEM, "out of memory");
    return NULL;
  }
  char quote = 0;
  st->n_marks = 0;
  for (const char *s = sql; *s;) {
    if (quote) {
      if (*s == quote) quote = 0;
      *o++ = *s++;
    } else if (*s == '\'' || *s == '"') {
      quote = *s;
      *o++ = *s++;
    } else if (*s == '$' && s[1] >= '1' && s[1] <= '9') {
      int p = 0;
      for (s++; *s >= '0' && *s <= '9'; s++) p = p * 10 + (*s - '0');
      if (p > FB_MAX_PARAMS || st->n_marks == FB_MAX_MARKS) {
        free(out);
        sqlq__error(db, SQLQ_ERROR, "firebird: statement %d has too many parameters", st->id);
        return NULL;
      }
      st->marks[st->n_marks++] = (unsigned char)(p - 1);
      *o++ = '?';
    } else {
      *o++ = *s++;
    }
  }
  *o = '\0';
  return out;
}

static XSQLDA *new_sqlda(int n) {
  XSQLDA *da = calloc(1, XSQLDA_LENGTH(n));
  if (da) {
    da->version = SQLDA_VERSION1;
    da->sqln = (short)n;
  }
  return da;
}

/* Give each output column a buffer of the type it is fetched as. */
static int setup_output(sqlq_db *db, sqlq__stmt *st) {
  XSQLDA *da = st->out;
  size_t size = 0;
  for (int i = 0; i < da->sqld; i++) {
    XSQLVAR *v = &da->sqlvar[i];
    switch (v->sqltype & ~1) {
    case SQL_SHORT:
    case SQL_LONG:
    case SQL_INT64:
    case SQL_DOUBLE:
    case SQL_FLOAT:
    case SQL_D_FLOAT:
    case SQL_BOOLEAN:
      v->sqltype = SQL_INT64 | 1;
      v->sqlscale = 0;
      v->sqllen = 8;
      break;
    case SQL_BLOB:
      v->sqltype = SQL_BLOB | 1;
      v->sqllen = sizeof(ISC_QUAD);
      break;
    case SQL_TEXT:
    case SQL_VARYING:
      v->sqltype = SQL_VARYING | 1;
      break;
    default: /* dates and the like: as text */
      v->sqltype = SQL_VARYING | 1;
      v->sqlsubtype = 0;
      v->sqllen = 64;
      break;
    }
    size += ((size_t)v->sqllen + 2 + 7) & ~(size_t)7;
  }
  st->out_buf = malloc(size ? size : 1);
  st->out_ind = calloc((size_t)da->sqld + 1, sizeof *st->out_ind);
  st->cols = calloc((size_t)da->sqld + 1, sizeof *st->cols);
  if (!st->out_buf || !st->out_ind || !st->cols)
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  size_t at = 0;
  for (int i = 0; i < da->sqld; i++) {
    XSQLVAR *v = &da->sqlvar[i];
    v->sqldata = st->out_buf + at;
    v->sqlind = &st->out_ind[i];
    at += ((size_t)v->sqllen + 2 + 7) & ~(size_t)7;
    st->cols[i].inline_col = -1;
  }
  for (int i = 0; i < da->sqld; i++) {
    const XSQLVAR *v = &da->sqlvar[i];
    if ((v->sqltype & ~1) != SQL_BLOB) continue;
    for (int j = 0; j < da->sqld; j++) {
      const XSQLVAR *w = &da->sqlvar[j];
      if ((w->sqltype & ~1) == SQL_VARYING && w->sqlname_length == v->sqlname_length + 7 &&
          memcmp(w->sqlname, v->sqlname, (size_t)v->sqlname_length) == 0 &&
          memcmp(w->sqlname + v->sqlname_length, "_INLINE", 7) == 0)
        st->cols[i].inline_col = j;
    }
  }
  return SQLQ_OK;
}

static int prepare_now(sqlq_db *db, sqlq__stmt *st) {
  fb_db *f = FB(db);
  const char *sql = db->driver->sql[st->id];
  char *text = rewrite(db, st, sql);
  if (text == NULL) return db->errcode;
  ISC_STATUS_ARRAY s;
  int rc = SQLQ_OK;
  if (isc_dsql_allocate_statement(s, &f->att, &st->h) ||
      isc_dsql_prepare(s, &f->tr, &st->h, 0, text, 3, NULL)) {
    rc = sqlq__fb_error(db, s, "prepare");
  }
  free(text);
  if (rc != SQLQ_OK) {
    sqlq__fb_forget(st);
    return rc;
  }
  char item = isc_info_sql_stmt_type, buf[16];
  if (isc_dsql_sql_info(s, &st->h, 1, &item, sizeof buf, buf))
    return sqlq__fb_error(db, s, "prepare");
  short len = (short)isc_vax_integer(buf + 1, 2);
  st->type = (int)isc_vax_integer(buf + 3, len);
  if ((st->in = new_sqlda(FB_MAX_MARKS)) == NULL)
    return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  if (isc_dsql_describe_bind(s, &st->h, 1, st->in)) return sqlq__fb_error(db, s, "prepare");
  if (st->in->sqld != st->n_marks)
    return sqlq__error(db, SQLQ_ERROR, "firebird: statement %d has %d marks, %d parameters", st->id,
                       st->n_marks, st->in->sqld);
  for (int k = 0; k < st->n_marks; k++) {
    st->in_types[k] = (short)(st->in->sqlvar[k].sqltype & ~1);
    st->in_subtypes[k] = st->in->sqlvar[k].sqlsubtype;
  }
  XSQLDA *out = new_sqlda(16);
  if (out == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  if (isc_dsql_describe(s, &st->h, 1, out)) {
    free(out);
    return sqlq__fb_error(db, s, "prepare");
  }
  if (out->sqld > out->sqln) {
    int n = out->sqld;
    free(out);
    if ((out = new_sqlda(n)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    if (isc_dsql_describe(s, &st->h, 1, out)) {
      free(out);
      return sqlq__fb_error(db, s, "prepare");
    }
  }
  if (out->sqld == 0) {
    free(out);
    return SQLQ_OK;
  }
  st->out = out;
  return setup_output(db, st);
}

int sqlq__fb_prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  fb_db *f = FB(db);
  if (db->driver->sql[id] == NULL)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "this operation is not available on Firebird yet");
  sqlq__stmt *st = &f->stmts[id];
  sqlq__fb_reset(st);
  *out = st;
  return SQLQ_OK;
}

static int bind(sqlq__stmt *st, int i, fb_value v) {
  if (i < 1 || i > FB_MAX_PARAMS) return SQLQ_MISUSE;
  free(st->vals[i - 1].owned);
  st->vals[i - 1] = v;
  return SQLQ_OK;
}

int sqlq__fb_bind_int64(sqlq__stmt *st, int i, int64_t v) {
  return bind(st, i, (fb_value){.kind = FB_INT, .i = v});
}

int sqlq__fb_bind_text(sqlq__stmt *st, int i, const char *s) {
  if (s == NULL) return bind(st, i, (fb_value){.kind = FB_NULL});
  return bind(st, i, (fb_value){.kind = FB_BYTES, .p = s, .n = strlen(s)});
}

int sqlq__fb_bind_blob(sqlq__stmt *st, int i, const void *p, size_t n) {
  return bind(st, i, (fb_value){.kind = FB_BYTES, .p = p ? p : "", .n = n});
}

/* Arrays are packed into bytes that the dialect's EXECUTE BLOCKs take
** apart (firebird_sql.c):
** - integers: each in decimal followed by a comma ("5,-2,");
** - text and bytes: the lengths, each followed by a comma ("-" for a
**   NULL), then ";", then the bytes of every element one after another
**   ("3,-,2,;abcxy"). */
static int bind_packed(sqlq__stmt *st, int i, sqlq__buf *b) {
  if (b->oom) {
    sqlq__buf_free(b);
    return SQLQ_NOMEM;
  }
  int rc = bind(st, i, (fb_value){.kind = FB_BYTES, .p = b->p, .n = b->len, .owned = b->p});
  if (rc != SQLQ_OK) sqlq__buf_free(b);
  return rc;
}

int sqlq__fb_bind_int64_array(sqlq__stmt *st, int i, const int64_t *v, size_t n) {
  sqlq__buf b = {0};
  sqlq__buf_add(&b, "");
  for (size_t k = 0; k < n; k++) sqlq__buf_addf(&b, "%lld,", (long long)v[k]);
  return bind_packed(st, i, &b);
}

int sqlq__fb_bind_blob_array(sqlq__stmt *st, int i, const void *const *p, const size_t *len,
                             size_t n) {
  sqlq__buf b = {0};
  sqlq__buf_add(&b, "");
  for (size_t k = 0; k < n; k++) {
    if (p[k])
      sqlq__buf_addf(&b, "%zu,", len[k]);
    else
      sqlq__buf_add(&b, "-,");
  }
  sqlq__buf_add(&b, ";");
  for (size_t k = 0; k < n; k++)
    if (p[k]) sqlq__buf_addn(&b, p[k], len[k]);
  return bind_packed(st, i, &b);
}

int sqlq__fb_bind_text_array(sqlq__stmt *st, int i, const char *const *v, size_t n) {
  size_t *len = malloc((n ? n : 1) * sizeof *len);
  if (len == NULL) return SQLQ_NOMEM;
  for (size_t k = 0; k < n; k++) len[k] = v[k] ? strlen(v[k]) : 0;
  int rc = sqlq__fb_bind_blob_array(st, i, (const void *const *)v, len, n);
  free(len);
  return rc;
}

/* Write bytes as a new blob of the open transaction; *id names it. */
static int write_blob(sqlq_db *db, const char *p, size_t n, ISC_QUAD *id) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY s;
  isc_blob_handle bh = 0;
  memset(id, 0, sizeof *id);
  if (isc_create_blob2(s, &f->att, &f->tr, &bh, id, 0, NULL)) return sqlq__fb_error(db, s, "blob");
  for (size_t at = 0; at < n;) {
    unsigned short part = n - at > 32768 ? 32768 : (unsigned short)(n - at);
    if (isc_put_segment(s, &bh, part, p + at)) {
      int rc = sqlq__fb_error(db, s, "blob");
      isc_cancel_blob(s, &bh);
      return rc;
    }
    at += part;
  }
  if (isc_close_blob(s, &bh)) return sqlq__fb_error(db, s, "blob");
  return SQLQ_OK;
}

/* Lay out the input variables for the values bound. */
static int bind_inputs(sqlq_db *db, sqlq__stmt *st) {
  size_t size = 0;
  for (int k = 0; k < st->n_marks; k++) {
    const fb_value *v = &st->vals[st->marks[k]];
    if (v->kind == FB_UNSET)
      return sqlq__error(db, SQLQ_ERROR, "firebird: statement %d: parameter %d not bound", st->id,
                         st->marks[k] + 1);
    size_t n = v->kind == FB_BYTES ? (v->n > VARYING_MAX ? sizeof(ISC_QUAD) : v->n + 2) : 8;
    size += ((n + 7) & ~(size_t)7) + 8;
  }
  if (size > st->in_cap) {
    char *nb = realloc(st->in_buf, size);
    if (nb == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    st->in_buf = nb;
    st->in_cap = size;
  }
  size_t at = 0;
  for (int k = 0; k < st->n_marks; k++) {
    const fb_value *v = &st->vals[st->marks[k]];
    XSQLVAR *var = &st->in->sqlvar[k];
    short *ind = (short *)(st->in_buf + at);
    at += 8;
    char *data = st->in_buf + at;
    var->sqlind = ind;
    var->sqldata = data;
    var->sqlscale = 0;
    *ind = 0;
    if (v->kind == FB_NULL) {
      *ind = -1;
      var->sqltype = (short)(st->in_types[k] | 1);
      var->sqlsubtype = st->in_subtypes[k];
      continue;
    }
    if (v->kind == FB_INT) {
      var->sqltype = SQL_INT64 | 1;
      var->sqllen = 8;
      memcpy(data, &v->i, 8);
      at += 8;
      continue;
    }
    if (v->n > VARYING_MAX) {
      if (st->in_types[k] != SQL_BLOB)
        return sqlq__error(db, SQLQ_TOOBIG, "firebird: a value of %zu bytes is too long here",
                           v->n);
      ISC_QUAD id;
      int rc = write_blob(db, v->p, v->n, &id);
      if (rc != SQLQ_OK) return rc;
      var->sqltype = SQL_BLOB | 1;
      var->sqllen = sizeof id;
      var->sqlsubtype = st->in_subtypes[k];
      memcpy(data, &id, sizeof id);
      at += 8;
      continue;
    }
    int text = st->in_types[k] == SQL_TEXT || st->in_types[k] == SQL_VARYING;
    var->sqltype = SQL_VARYING | 1;
    var->sqllen = (short)v->n;
    var->sqlsubtype = text ? st->in_subtypes[k] : 1; /* OCTETS into a blob or a number */
    unsigned short len = (unsigned short)v->n;
    memcpy(data, &len, 2);
    memcpy(data + 2, v->p, v->n);
    at += ((v->n + 2 + 7) & ~(size_t)7);
  }
  return SQLQ_OK;
}

static int all_null(const sqlq__stmt *st) {
  for (int i = 0; i < st->out->sqld; i++)
    if (st->out_ind[i] == 0) return 0;
  return 1;
}

static void forget_blobs(sqlq__stmt *st) {
  if (st->out == NULL) return;
  for (int i = 0; i < st->out->sqld; i++) {
    free(st->cols[i].blob);
    st->cols[i].blob = NULL;
    st->cols[i].blob_read = 0;
  }
}

static int execute(sqlq_db *db, sqlq__stmt *st) {
  fb_db *f = FB(db);
  int rc = sqlq__fb_need_tx(db);
  if (rc == SQLQ_OK && st->h == 0) rc = prepare_now(db, st);
  if (rc == SQLQ_OK) rc = bind_inputs(db, st);
  if (rc != SQLQ_OK) return rc;
  ISC_STATUS_ARRAY s;
  XSQLDA *in = st->n_marks ? st->in : NULL;
  st->executed = 1;
  if (st->type == isc_info_sql_stmt_select || st->type == isc_info_sql_stmt_select_for_upd) {
    if (isc_dsql_execute(s, &f->tr, &st->h, 1, in)) return sqlq__fb_error(db, s, "query");
    st->cursor_open = 1;
    return SQLQ_OK;
  }
  if (isc_dsql_execute2(s, &f->tr, &st->h, 1, in, st->out)) {
    if (sqlq__fb_has(s, isc_unique_key_violation) || sqlq__fb_has(s, isc_no_dup)) {
      /* The failed statement undid itself and the transaction goes on:
      ** whatever else the status says, it is no reason to run it again. */
      int retryable = db->tx_retryable;
      sqlq__fb_error(db, s, "statement");
      db->tx_retryable = retryable;
      st->changes = 0;
      st->done = 1;
      return SQLQ__CONSTRAINT;
    }
    return sqlq__fb_error(db, s, "statement");
  }
  if (st->out && !all_null(st))
    st->singleton_row = 1;
  else
    st->done = 1;
  return SQLQ_OK;
}

int sqlq__fb_step(sqlq_db *db, sqlq__stmt *st) {
  if (!st->executed) {
    int rc = execute(db, st);
    if (rc != SQLQ_OK) return rc;
  }
  if (st->done) return SQLQ__DONE;
  forget_blobs(st);
  if (st->singleton_row) {
    st->singleton_row = 0;
    st->done = 1;
    return SQLQ__ROW;
  }
  ISC_STATUS_ARRAY s;
  ISC_STATUS r = isc_dsql_fetch(s, &st->h, 1, st->out);
  if (r == 0) return SQLQ__ROW;
  st->done = 1;
  if (r == 100) return SQLQ__DONE;
  return sqlq__fb_error(db, s, "fetch");
}

static int is_null(const sqlq__stmt *st, int i) {
  return st->out == NULL || i < 0 || i >= st->out->sqld || st->out_ind[i] != 0;
}

int sqlq__fb_column_is_null(sqlq__stmt *st, int i) {
  if (!is_null(st, i)) return 0;
  return st->out == NULL || i < 0 || i >= st->out->sqld || is_null(st, st->cols[i].inline_col);
}

int64_t sqlq__fb_column_int64(sqlq__stmt *st, int i) {
  if (sqlq__fb_column_is_null(st, i)) return 0;
  XSQLVAR *v = &st->out->sqlvar[i];
  if ((v->sqltype & ~1) == SQL_INT64) {
    int64_t x;
    memcpy(&x, v->sqldata, 8);
    return x;
  }
  size_t len;
  const char *p = sqlq__fb_column_blob(st, i, &len);
  return p ? strtoll(p, NULL, 10) : 0;
}

/* Read a BLOB column's bytes into cols[i]. */
static const void *read_blob(sqlq__stmt *st, int i, size_t *len) {
  fb_db *f = st->fb;
  fb_col *c = &st->cols[i];
  ISC_STATUS_ARRAY s;
  isc_blob_handle bh = 0;
  ISC_QUAD id;
  memcpy(&id, st->out->sqlvar[i].sqldata, sizeof id);
  if (isc_open_blob2(s, &f->att, &f->tr, &bh, &id, 0, NULL)) return NULL;
  size_t cap = 256, n = 0;
  char *buf = malloc(cap + 1);
  for (;;) {
    if (buf == NULL) break;
    if (cap - n < 32768) {
      size_t ncap = cap * 2 > n + 32768 ? cap * 2 : n + 32768;
      char *nb = realloc(buf, ncap + 1);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap = ncap;
    }
    unsigned short got = 0;
    ISC_STATUS r = isc_get_segment(s, &bh, &got, 32768, buf + n);
    n += got;
    if (r == isc_segstr_eof) break;
    if (r != 0 && r != isc_segment) {
      free(buf);
      buf = NULL;
    }
  }
  isc_close_blob(s, &bh);
  if (buf == NULL) return NULL;
  buf[n] = '\0';
  c->blob = buf;
  c->blob_len = n;
  c->blob_read = 1;
  *len = n;
  return buf;
}

const void *sqlq__fb_column_blob(sqlq__stmt *st, int i, size_t *len) {
  *len = 0;
  if (sqlq__fb_column_is_null(st, i)) return NULL;
  XSQLVAR *v = &st->out->sqlvar[i];
  fb_col *c = &st->cols[i];
  if (c->blob_read) {
    *len = c->blob_len;
    return c->blob;
  }
  switch (v->sqltype & ~1) {
  case SQL_VARYING: {
    unsigned short n;
    memcpy(&n, v->sqldata, 2);
    *len = n;
    return v->sqldata + 2;
  }
  case SQL_BLOB:
    if (!is_null(st, c->inline_col)) return sqlq__fb_column_blob(st, c->inline_col, len);
    return read_blob(st, i, len);
  case SQL_INT64: {
    int64_t x;
    memcpy(&x, v->sqldata, 8);
    char num[24];
    int n = snprintf(num, sizeof num, "%lld", (long long)x);
    if ((c->blob = strdup(num)) == NULL) return NULL;
    c->blob_len = (size_t)n;
    c->blob_read = 1;
    *len = c->blob_len;
    return c->blob;
  }
  default:
    return NULL;
  }
}

int64_t sqlq__fb_changes(sqlq_db *db, sqlq__stmt *st) {
  (void)db;
  if (st->changes >= 0) return st->changes;
  if (st->h == 0 || !st->executed) return 0;
  char item = isc_info_sql_records, buf[64];
  ISC_STATUS_ARRAY s;
  if (isc_dsql_sql_info(s, &st->h, 1, &item, sizeof buf, buf) || buf[0] != isc_info_sql_records)
    return 0;
  int64_t n = 0;
  for (const char *p = buf + 3; p < buf + sizeof buf - 7 && *p != isc_info_end;) {
    char kind = *p++;
    short len = (short)isc_vax_integer(p, 2);
    p += 2;
    if (kind == isc_info_req_insert_count || kind == isc_info_req_update_count ||
        kind == isc_info_req_delete_count)
      n += isc_vax_integer(p, len);
    p += len;
  }
  st->changes = n;
  return n;
}

void sqlq__fb_reset(sqlq__stmt *st) {
  if (st->cursor_open) {
    ISC_STATUS_ARRAY s;
    isc_dsql_free_statement(s, &st->h, DSQL_close);
    st->cursor_open = 0;
  }
  forget_blobs(st);
  for (int i = 0; i < FB_MAX_PARAMS; i++) free(st->vals[i].owned);
  memset(st->vals, 0, sizeof st->vals);
  st->executed = 0;
  st->singleton_row = 0;
  st->done = 0;
  st->changes = -1;
}

void sqlq__fb_forget(sqlq__stmt *st) {
  ISC_STATUS_ARRAY s;
  forget_blobs(st);
  if (st->h && st->fb->att) isc_dsql_free_statement(s, &st->h, DSQL_drop);
  st->h = 0;
  st->cursor_open = 0;
  free(st->in);
  free(st->in_buf);
  free(st->out);
  free(st->out_buf);
  free(st->out_ind);
  free(st->cols);
  st->in = st->out = NULL;
  st->in_buf = st->out_buf = NULL;
  st->out_ind = NULL;
  st->cols = NULL;
  st->in_cap = 0;
}

int sqlq__fb_exec_one(sqlq_db *db, const char *sql, size_t len) {
  fb_db *f = FB(db);
  int rc = sqlq__fb_need_tx(db);
  if (rc != SQLQ_OK) return rc;
  char *text = strndup(sql, len);
  if (text == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  ISC_STATUS_ARRAY s;
  rc = SQLQ_OK;
  if (isc_dsql_execute_immediate(s, &f->att, &f->tr, 0, text, 3, NULL))
    rc = sqlq__fb_error(db, s, "script");
  free(text);
  return rc;
}
