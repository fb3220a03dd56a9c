/*
** serve_parse.c -- what `sqlq serve` reads of a request by itself: the
** request target (path and query string, split and percent-decoded here,
** not by libmicrohttpd, so that one parser decides and the fuzzer of
** tests/fuzz/serve.c reaches it), an action's JSON body, the token, the
** Host header; and the JSON of an error answer.  Nothing here touches the
** network or the database.
*/
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/* Decode the n bytes of s into out (room for n + 1), '+' as a space when
** plus is set (the query string).  Returns the length, or -1 for a bad or
** NUL escape. */
static long decode(const char *s, size_t n, int plus, char *out) {
  size_t i, o = 0;
  for (i = 0; i < n; i++) {
    if (s[i] == '%') {
      int hi, lo;
      if (n - i < 3) {
        return -1; /* fewer than two characters follow */
      }
      hi = hex_digit(s[i + 1]);
      lo = hex_digit(s[i + 2]);
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
        return -1;
      }
      out[o++] = (char)(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '\0') {
      return -1;
    } else {
      out[o++] = plus && s[i] == '+' ? ' ' : s[i];
    }
  }
  out[o] = '\0';
  return (long)o;
}

int serve_parse_target(const char *raw, size_t len, serve_target *t, const char **why) {
  const char *q = memchr(raw, '?', len);
  size_t path_len = q ? (size_t)(q - raw) : len, i, start;
  char *o = t->buf;
  t->n_segments = 0;
  t->n_params = 0;
  if (len > SERVE_MAX_TARGET) {
    *why = "the request target is too long";
    return -1;
  }
  if (path_len == 0 || raw[0] != '/') {
    *why = "the path must start with '/'";
    return -1;
  }
  /* Segments: between the slashes; a trailing slash ends the path. */
  for (start = 1; start < path_len; start = i + 1) {
    long n;
    for (i = start; i < path_len && raw[i] != '/'; i++) {}
    if (i == start) {
      *why = "the path has an empty segment";
      return -1;
    }
    if (t->n_segments == SERVE_MAX_SEGMENTS) {
      *why = "the path has too many segments";
      return -1;
    }
    if ((n = decode(raw + start, i - start, 0, o)) < 0) {
      *why = "the path has a bad percent escape";
      return -1;
    }
    if (strcmp(o, ".") == 0 || strcmp(o, "..") == 0) {
      *why = "the path has a '.' or '..' segment";
      return -1;
    }
    t->segments[t->n_segments++] = o;
    o += n + 1;
  }
  if (q == NULL) {
    return 0;
  }
  /* Parameters: KEY[=VALUE] separated by '&'; empty ones are skipped. */
  for (start = path_len + 1; start <= len; start = i + 1) {
    const char *eq;
    long n;
    for (i = start; i < len && raw[i] != '&'; i++) {}
    if (i == start) {
      continue;
    }
    if (t->n_params == SERVE_MAX_PARAMS) {
      *why = "the query string has too many parameters";
      return -1;
    }
    eq = memchr(raw + start, '=', i - start);
    if ((n = decode(raw + start, (eq ? (size_t)(eq - raw) : i) - start, 1, o)) < 0) {
      *why = "the query string has a bad percent escape";
      return -1;
    }
    t->keys[t->n_params] = o;
    o += n + 1;
    if ((n = eq ? decode(eq + 1, (size_t)(raw + i - eq - 1), 1, o) : decode("", 0, 1, o)) < 0) {
      *why = "the query string has a bad percent escape";
      return -1;
    }
    t->values[t->n_params++] = o;
    o += n + 1;
  }
  return 0;
}

const char *serve_param(const serve_target *t, const char *key, int *dup) {
  const char *found = NULL;
  size_t i;
  *dup = 0;
  for (i = 0; i < t->n_params; i++) {
    if (strcmp(t->keys[i], key) == 0) {
      if (found != NULL) {
        *dup = 1;
      }
      found = t->values[i];
    }
  }
  return found;
}

int serve_parse_id(const char *s, int64_t max, int64_t *out) {
  int64_t v = 0;
  size_t i;
  if (s[0] == '\0' || strlen(s) > 19) {
    return -1;
  }
  for (i = 0; s[i] != '\0'; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (max - (s[i] - '0')) / 10) {
      return -1;
    }
    v = v * 10 + (s[i] - '0');
  }
  if (v < 1) {
    return -1;
  }
  *out = v;
  return 0;
}

int serve_parse_body(const char *body, size_t len, serve_body *b, const char **why) {
  json_error_t error;
  json_t *root, *ids, *v;
  const char *key;
  size_t i;
  b->n_ids = 0;
  if (len == 0) {
    return 0;
  }
  if (len > SERVE_MAX_BODY) {
    *why = "the body is too large";
    return -1;
  }
  root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &error);
  if (root == NULL || !json_is_object(root)) {
    json_decref(root);
    *why = "the body is not a JSON object";
    return -1;
  }
  json_object_foreach(root, key, v) {
    if (strcmp(key, "ids") != 0) {
      json_decref(root);
      *why = "the body has a key other than \"ids\"";
      return -1;
    }
  }
  ids = json_object_get(root, "ids");
  if (ids != NULL &&
      (!json_is_array(ids) || json_array_size(ids) == 0 || json_array_size(ids) > SERVE_MAX_IDS)) {
    json_decref(root);
    *why = "\"ids\" must be an array of 1 to 1000 job ids";
    return -1;
  }
  json_array_foreach(ids, i, v) {
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
      json_decref(root);
      b->n_ids = 0;
      *why = "a job id must be a whole number >= 1";
      return -1;
    }
    b->ids[b->n_ids++] = (int64_t)json_integer_value(v);
  }
  json_decref(root);
  return 0;
}

int serve_equal_secret(const char *a, size_t n, const char *b, size_t m) {
  /* Every byte of the longer is read, each against a byte of the other
  ** (or 0 past its end), and the lengths are folded in. */
  size_t i, len = n > m ? n : m;
  unsigned diff = n != m;
  for (i = 0; i < len; i++) {
    unsigned char x = i < n ? (unsigned char)a[i] : 0;
    unsigned char y = i < m ? (unsigned char)b[i] : 0;
    diff |= (unsigned)(x ^ y);
  }
  return diff == 0;
}

int serve_host_is_local(const char *host) {
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  size_t i;
  if (host == NULL) {
    return 0;
  }
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    size_t n = strlen(names[i]);
    if (strncmp(host, names[i], n) == 0 &&
        (host[n] == '\0' || (host[n] == ':' && host[n + 1] != '\0' &&
                             strspn(host + n + 1, "0123456789") == strlen(host + n + 1)))) {
      return 1;
    }
  }
  return 0;
}

int serve_reply_error(serve_reply *r, unsigned status, const char *message) {
  json_t *o = json_object();
  json_object_set_new(o, "error", cli_json_text(message));
  r->status = status;
  r->content_type = "application/json";
  r->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
  json_decref(o);
  r->len = r->body ? strlen(r->body) : 0;
  return r->body ? 0 : -1;
}

unsigned serve_http_status(int status) {
  switch (status) {
  case SQLQ_MISUSE:
  case SQLQ_TOOBIG:
    return 400;
  case SQLQ_NOTFOUND:
    return 404;
  case SQLQ_STALE:
  case SQLQ_PAUSED:
    return 409;
  case SQLQ_BUSY:
  case SQLQ_UNAVAILABLE:
  case SQLQ_SCHEMA:
  case SQLQ_TIMEOUT:
    return 503;
  default:
    return 500;
  }
}
