/*
** serve.c -- fuzz what `sqlq serve` parses of a request by itself
** (src/cli/serve_parse.c): the request target (path and query string),
** an action's JSON body, the Host header and the token's comparison.
**
** Input: one byte that picks what the rest is, then the bytes:
**   0  a request target: serve_parse_target(); when it parses, every
**      segment is non-empty, neither "." nor ".." and holds no NUL before
**      its end, there are at most SERVE_MAX_SEGMENTS of them and
**      SERVE_MAX_PARAMS parameters, and serve_param() finds each key (the
**      last value of a repeated one);
**   1  a body: serve_parse_body(); when it parses, 0 to SERVE_MAX_IDS ids,
**      each >= 1; a refusal has a message;
**   2  a Host header (up to its first NUL): serve_host_is_local() accepts
**      only 127.0.0.1, localhost or [::1], with a port of digits or none;
**   3  two secrets split at the first NUL: serve_equal_secret() says equal
**      exactly when memcmp() does;
**   4  an id: serve_parse_id() gives a number from 1 to the maximum, whose
**      decimal text is the input;
** and the sanitizers' checks throughout.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/serve.h"
#include "fuzz.h"

static void target(const char *p, size_t n) {
  static serve_target t;
  const char *why = NULL;
  size_t i;
  if (serve_parse_target(p, n, &t, &why) != 0) {
    FZ_CHECK(why != NULL && why[0] != '\0', "a refused target has no message");
    return;
  }
  FZ_CHECK(t.n_segments <= SERVE_MAX_SEGMENTS, "too many segments");
  FZ_CHECK(t.n_params <= SERVE_MAX_PARAMS, "too many parameters");
  for (i = 0; i < t.n_segments; i++) {
    FZ_CHECK(t.segments[i][0] != '\0', "segment %zu is empty", i);
    FZ_CHECK(strcmp(t.segments[i], ".") != 0 && strcmp(t.segments[i], "..") != 0,
             "segment %zu is a dot segment", i);
  }
  for (i = 0; i < t.n_params; i++) {
    int dup = 0;
    const char *v = serve_param(&t, t.keys[i], &dup);
    FZ_CHECK(v != NULL, "parameter %zu is not found", i);
  }
}

static void body(const char *p, size_t n) {
  static serve_body b;
  const char *why = NULL;
  size_t i;
  if (serve_parse_body(p, n, &b, &why) != 0) {
    FZ_CHECK(why != NULL && why[0] != '\0', "a refused body has no message");
    return;
  }
  FZ_CHECK(b.n_ids <= SERVE_MAX_IDS, "too many ids");
  FZ_CHECK(n > 0 || b.n_ids == 0, "an empty body has ids");
  for (i = 0; i < b.n_ids; i++) {
    FZ_CHECK(b.ids[i] >= 1, "id %zu is %" PRId64, i, b.ids[i]);
  }
}

static void host(const char *p, size_t n) {
  char *s = strndup(p, n);
  FZ_CHECK(s != NULL, "out of memory");
  if (serve_host_is_local(s)) {
    const char *colon = s[0] == '[' ? strchr(s, ']') : s;
    FZ_CHECK(colon != NULL, "a local host without its ']'");
    colon = strchr(colon, ':');
    size_t name = colon ? (size_t)(colon - s) : strlen(s);
    FZ_CHECK((name == 9 && strncmp(s, "127.0.0.1", 9) == 0) ||
               (name == 9 && strncmp(s, "localhost", 9) == 0) ||
               (name == 5 && strncmp(s, "[::1]", 5) == 0),
             "'%s' is taken as local", s);
    FZ_CHECK(
      colon == NULL || (colon[1] != '\0' && strspn(colon + 1, "0123456789") == strlen(colon + 1)),
      "'%s' has a bad port", s);
  }
  free(s);
}

static void secret(const char *p, size_t n) {
  const char *nul = memchr(p, '\0', n);
  size_t a = nul ? (size_t)(nul - p) : n / 2, b = n - a - (nul ? 1 : 0);
  const char *q = p + a + (nul ? 1 : 0);
  int want = a == b && memcmp(p, q, a) == 0;
  FZ_CHECK(serve_equal_secret(p, a, q, b) == want, "equal_secret disagrees with memcmp");
}

static void id(const char *p, size_t n) {
  char *s = strndup(p, n), text[32];
  int64_t v = 0;
  FZ_CHECK(s != NULL, "out of memory");
  if (serve_parse_id(s, 500, &v) == 0) {
    FZ_CHECK(v >= 1 && v <= 500, "id %" PRId64 " out of range", v);
    snprintf(text, sizeof text, "%" PRId64, v);
    FZ_CHECK(strcmp(text, s) == 0 || (s[0] == '0' && strtoll(s, NULL, 10) == v),
             "'%s' parsed as %" PRId64, s, v);
  }
  if (serve_parse_id(s, INT64_MAX, &v) == 0) {
    FZ_CHECK(v >= 1, "id %" PRId64 " below 1", v);
  }
  free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data + 1;
  if (size == 0) {
    return 0;
  }
  switch (data[0] % 5) {
  case 0:
    target(p, size - 1);
    break;
  case 1:
    body(p, size - 1);
    break;
  case 2:
    host(p, size - 1);
    break;
  case 3:
    secret(p, size - 1);
    break;
  default:
    id(p, size - 1);
    break;
  }
  return 0;
}
