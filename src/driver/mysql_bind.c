/*
** mysql_bind.c -- parameters: the rewriting of $N to `?`, and the values
** bound to a statement, one each or an array each.
**
** A statement's text names parameters $1..$10.  Its placeholders are
** marks: each says which parameter it takes, and, inside a section written
** [[...]], which element of that parameter's array.  A section is repeated
** once per element of the arrays bound, joined by commas (a section
** written [[|...]]: by " OR ", for a condition per element), so that an
** array statement is prepared for the number of rows it is run with (and
** prepared again when that changes).  Statements without a section take
** one value per parameter.
*/
#include <stdlib.h>
#include <string.h>

#include "mysql_int.h"

/* Append the marks and the text of text[0..len) to *out, with $N written
** `?`; elem is the element the marks of a section take (0: none). */
static int put_marks(sqlq_db *db, sqlq__stmt *st, const char *text, size_t len, size_t elem,
                     char **out) {
  char quote = 0;
  char *o = *out;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (c == '$' && i + 1 < len && text[i + 1] >= '1' && text[i + 1] <= '9') {
      int p = text[++i] - '0';
      if (i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '9') p = p * 10 + text[++i] - '0';
      if (p > MY_MAX_PARAMS || (i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '9'))
        return sqlq__error(db, SQLQ_ERROR, "mysql: statement %d has too many parameters", st->id);
      if (st->n_marks == st->cap_marks) {
        size_t cap = st->cap_marks ? st->cap_marks * 2 : 16;
        my_mark *nm = realloc(st->marks, cap * sizeof *nm);
        if (nm == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
        st->marks = nm;
        st->cap_marks = cap;
      }
      st->marks[st->n_marks].param = (unsigned char)(p - 1);
      st->marks[st->n_marks++].elem = elem;
      *o++ = '?';
      continue;
    }
    *o++ = c;
  }
  *out = o;
  return SQLQ_OK;
}

char *sqlq__my_statement_text(sqlq_db *db, sqlq__stmt *st, size_t rows) {
  const char *text = sqlq__mysql_sql[st->id];
  /* Each section grows to rows copies and their joints. */
  size_t size = strlen(text) + 1;
  for (const char *s = strstr(text, "[["); s; s = strstr(s + 2, "[["))
    size += (strstr(s, "]]") - s + 4) * (rows ? rows : 1);
  char *sql = malloc(size), *o = sql;
  if (sql == NULL) {
    sqlq__error(db, SQLQ_NOMEM, "out of memory");
    return NULL;
  }
  st->n_marks = 0;
  int rc = SQLQ_OK;
  for (const char *p = text; rc == SQLQ_OK && *p;) {
    const char *open = strstr(p, "[[");
    const char *plain_end = open ? open : p + strlen(p);
    rc = put_marks(db, st, p, (size_t)(plain_end - p), 0, &o);
    if (open == NULL || rc != SQLQ_OK) break;
    const char *body = open + 2, *close = strstr(body, "]]");
    int ors = *body == '|';
    body += ors;
    for (size_t k = 0; rc == SQLQ_OK && k < rows; k++) {
      if (k && ors) {
        memcpy(o, " OR ", 4);
        o += 4;
      } else if (k) {
        *o++ = ',';
      }
      rc = put_marks(db, st, body, (size_t)(close - body), k + 1, &o);
    }
    p = close + 2;
  }
  *o = '\0';
  if (rc != SQLQ_OK) {
    free(sql);
    return NULL;
  }
  return sql;
}

int sqlq__my_is_array(const sqlq__stmt *st) {
  return strstr(sqlq__mysql_sql[st->id], "[[") != NULL;
}

static MYSQL_BIND *param(sqlq__stmt *st, int i) {
  if (i > st->n_params) st->n_params = i;
  MYSQL_BIND *b = &st->params[i - 1];
  memset(b, 0, sizeof *b);
  return b;
}

int sqlq__my_bind_int64(sqlq__stmt *st, int i, int64_t v) {
  MYSQL_BIND *b = param(st, i);
  st->ints[i - 1] = v;
  b->buffer_type = MYSQL_TYPE_LONGLONG;
  b->buffer = &st->ints[i - 1];
  return SQLQ_OK;
}

static int bind_bytes(sqlq__stmt *st, int i, enum enum_field_types type, const void *p, size_t n) {
  MYSQL_BIND *b = param(st, i);
  if (p == NULL) {
    b->buffer_type = MYSQL_TYPE_NULL;
    return SQLQ_OK;
  }
  st->lens[i - 1] = (unsigned long)n;
  b->buffer_type = type;
  b->buffer = (void *)p;
  b->buffer_length = (unsigned long)n;
  b->length = &st->lens[i - 1];
  return SQLQ_OK;
}

int sqlq__my_bind_text(sqlq__stmt *st, int i, const char *s) {
  return bind_bytes(st, i, MYSQL_TYPE_STRING, s, s ? strlen(s) : 0);
}

int sqlq__my_bind_blob(sqlq__stmt *st, int i, const void *p, size_t n) {
  return bind_bytes(st, i, MYSQL_TYPE_BLOB, n ? p : "", n);
}

/* The array of parameter i, emptied, for n elements. */
static void free_array(my_array *a) {
  free(a->ints);
  free(a->ptrs);
  free(a->lens);
  memset(a, 0, sizeof *a);
}

static my_array *array(sqlq__stmt *st, int i, enum enum_field_types type, size_t n) {
  param(st, i);
  my_array *a = &st->arrays[i - 1];
  free_array(a);
  a->set = 1;
  a->type = type;
  a->n = n;
  return a;
}

void sqlq__my_free_arrays(sqlq__stmt *st) {
  for (int i = 0; i < MY_MAX_PARAMS; i++) free_array(&st->arrays[i]);
}

int sqlq__my_bind_int64_array(sqlq__stmt *st, int i, const int64_t *v, size_t n) {
  my_array *a = array(st, i, MYSQL_TYPE_LONGLONG, n);
  if (n && (a->ints = malloc(n * sizeof *a->ints)) == NULL) return SQLQ_NOMEM;
  for (size_t k = 0; k < n; k++) a->ints[k] = v[k];
  return SQLQ_OK;
}

/* Text and blob elements: the pointers and lengths are copied; the bytes
** stay the caller's until reset, as for bind_text. */
static int bind_bytes_array(sqlq__stmt *st, int i, enum enum_field_types type, const void *const *p,
                            const size_t *len, size_t n) {
  my_array *a = array(st, i, type, n);
  if (n && ((a->ptrs = malloc(n * sizeof *a->ptrs)) == NULL ||
            (a->lens = malloc(n * sizeof *a->lens)) == NULL))
    return SQLQ_NOMEM;
  for (size_t k = 0; k < n; k++) {
    a->ptrs[k] = p[k];
    a->lens[k] = p[k] == NULL ? 0 : (unsigned long)(len ? len[k] : strlen(p[k]));
  }
  return SQLQ_OK;
}

int sqlq__my_bind_text_array(sqlq__stmt *st, int i, const char *const *v, size_t n) {
  return bind_bytes_array(st, i, MYSQL_TYPE_STRING, (const void *const *)v, NULL, n);
}

int sqlq__my_bind_blob_array(sqlq__stmt *st, int i, const void *const *p, const size_t *len,
                             size_t n) {
  return bind_bytes_array(st, i, MYSQL_TYPE_BLOB, p, len, n);
}

size_t sqlq__my_array_rows(const sqlq__stmt *st) {
  for (int i = 0; i < st->n_params; i++)
    if (st->arrays[i].set) return st->arrays[i].n;
  return 0;
}

/* The value of one mark, into b. */
static void bind_mark(sqlq__stmt *st, const my_mark *mk, MYSQL_BIND *b) {
  memset(b, 0, sizeof *b);
  b->buffer_type = MYSQL_TYPE_NULL;
  if (mk->param >= st->n_params) return;
  const my_array *a = &st->arrays[mk->param];
  if (mk->elem == 0 || !a->set) {
    *b = st->params[mk->param];
    return;
  }
  size_t k = mk->elem - 1;
  if (a->type == MYSQL_TYPE_LONGLONG) {
    b->buffer_type = MYSQL_TYPE_LONGLONG;
    b->buffer = &a->ints[k];
  } else if (a->ptrs[k] != NULL) {
    b->buffer_type = a->type;
    b->buffer = (void *)(a->lens[k] ? a->ptrs[k] : "");
    b->buffer_length = a->lens[k];
    b->length = &a->lens[k];
  }
}

int sqlq__my_bind_marks(sqlq_db *db, sqlq__stmt *st) {
  if (st->n_marks == 0) return SQLQ_OK;
  if (st->n_binds < st->n_marks) {
    MYSQL_BIND *nb = realloc(st->binds, st->n_marks * sizeof *nb);
    if (nb == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
    st->binds = nb;
    st->n_binds = st->n_marks;
  }
  for (size_t k = 0; k < st->n_marks; k++) bind_mark(st, &st->marks[k], &st->binds[k]);
  return mysql_stmt_bind_param(st->ms, st->binds) ? sqlq__my_error(db, MY(db)->conn, st->ms, "bind")
                                                  : SQLQ_OK;
}
