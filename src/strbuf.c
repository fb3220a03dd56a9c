/*
** strbuf.c -- a growing string, for SQL text the drivers put together
** (the triggers of subscriptions).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* Make room for n more bytes and a NUL; sets b->oom when memory runs out. */
static int grow(sqlq__buf *b, size_t n) {
  if (b->oom) return 0;
  if (b->len + n + 1 <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (p == NULL) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void sqlq__buf_addn(sqlq__buf *b, const char *s, size_t n) {
  if (!grow(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void sqlq__buf_add(sqlq__buf *b, const char *s) {
  sqlq__buf_addn(b, s, strlen(s));
}

void sqlq__buf_addf(sqlq__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !grow(b, (size_t)n)) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void sqlq__buf_quote(sqlq__buf *b, const char *s, char q) {
  sqlq__buf_addn(b, &q, 1);
  for (const char *p = s; *p; p++) {
    const char *next = strchr(p, q);
    if (next == NULL) {
      sqlq__buf_add(b, p);
      break;
    }
    sqlq__buf_addn(b, p, (size_t)(next - p) + 1);
    sqlq__buf_addn(b, &q, 1);
    p = next;
  }
  sqlq__buf_addn(b, &q, 1);
}

void sqlq__buf_free(sqlq__buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}
