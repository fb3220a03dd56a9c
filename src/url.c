/*
** url.c -- parse database URLs.
**
** Two forms are accepted:
**   scheme:OPAQUE[?query]                        (sqlite:PATH, sqlite::memory:)
**   scheme://[user[:password]@][host][:port][/path][?query]
** In the second form the path keeps its leading '/': "postgres://h/db" has
** path "/db" and "firebird://h//var/db.fdb" has path "//var/db.fdb"; each
** driver reads it as its backend's documents say.  User, password, path and
** query parts are percent-decoded.  The password is never copied into any
** message: url->redacted is the text with "***" in place of the password
** (even an empty one) and of the value of every option whose key, once
** decoded, names a secret (is_secret_key), so that "pass%77ord=" is hidden
** as surely as "password=".  Parse errors never quote the URL's text.
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_int.h"

/* Copy n bytes of s, percent-decoding them.  Returns NULL on a bad escape
** or a decoded NUL (*bad set), or when memory runs out (*bad clear). */
static char *decode(const char *s, size_t n, int *bad) {
  char *out = malloc(n + 1), *o = out;
  *bad = 0;
  if (out == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') {
      *o++ = s[i];
      continue;
    }
    if (i + 2 >= n) {
      *bad = 1;
      break;
    }
    if (!isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2])) {
      *bad = 1;
      break;
    }
    char hex[3] = {s[i + 1], s[i + 2], 0};
    long v = strtol(hex, NULL, 16);
    if (v == 0) {
      *bad = 1;
      break;
    }
    *o++ = (char)v;
    i += 2;
  }
  if (*bad) {
    free(out);
    return NULL;
  }
  *o = '\0';
  return out;
}

/* Whether the option named key (percent-decoded) holds a secret: any key
** that speaks of a password, passphrase, secret or token, in any case
** (libpq's password and sslpassword among them).  A few harmless ones, such
** as passfile, are hidden too: better one path too many than one secret. */
static int is_secret_key(const char *key) {
  static const char *const words[] = {"pass", "pwd", "secret", "token"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcasestr(key, words[i])) return 1;
  return 0;
}

/* A part of the URL's text that the redacted copy replaces with "***". */
typedef struct span {
  const char *start, *end;
} span;

/* Parse the query string q (without '?') into url->opts; the values of
** secret options go on spans (room for one per option). */
static int parse_query(const char *q, sqlq__url *url, span *spans, size_t *n_spans, char *err,
                       size_t es) {
  size_t count = 1;
  for (const char *p = q; *p; p++) count += (*p == '&');
  url->opts = calloc(count, sizeof *url->opts);
  if (url->opts == NULL) return SQLQ_NOMEM;
  const char *p = q;
  while (*p) {
    const char *end = strchr(p, '&');
    if (end == NULL) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (end == p) {
      p = *end ? end + 1 : end;
      continue;
    }
    if (eq == NULL || eq == p) {
      /* Not quoted: the text may be a secret typed in the wrong place. */
      snprintf(err, es, "URL option %d is not of the form key=value", url->n_opts + 1);
      return SQLQ_MISUSE;
    }
    int bad;
    sqlq__url_opt *o = &url->opts[url->n_opts];
    o->key = decode(p, (size_t)(eq - p), &bad);
    if (o->key == NULL) goto fail;
    o->value = decode(eq + 1, (size_t)(end - eq - 1), &bad);
    if (o->value == NULL) {
      free(o->key); /* not counted in n_opts yet, so url_free would miss it */
      o->key = NULL;
      goto fail;
    }
    if (is_secret_key(o->key)) spans[(*n_spans)++] = (span){eq + 1, end};
    url->n_opts++;
    p = *end ? end + 1 : end;
    continue;
  fail:
    if (!bad) return SQLQ_NOMEM;
    snprintf(err, es, "URL option has a bad percent escape");
    return SQLQ_MISUSE;
  }
  return SQLQ_OK;
}

/* A copy of text in which each of the n spans (in text order, apart, maybe
** empty) is replaced by "***". */
static char *redact(const char *text, const span *spans, size_t n) {
  size_t len = strlen(text);
  char *out = malloc(len + 3 * n + 1), *o = out;
  if (out == NULL) return NULL;
  const char *p = text;
  for (size_t i = 0; i < n; i++) {
    memcpy(o, p, (size_t)(spans[i].start - p));
    o += spans[i].start - p;
    memcpy(o, "***", 3);
    o += 3;
    p = spans[i].end;
  }
  memcpy(o, p, (size_t)(text + len - p) + 1);
  return out;
}

int sqlq__url_parse(const char *text, sqlq__url *url, char *err, size_t es) {
  memset(url, 0, sizeof *url);
  if (text == NULL || text[0] == '\0') {
    snprintf(err, es, "database URL is empty");
    return SQLQ_MISUSE;
  }
  const char *colon = strchr(text, ':');
  size_t slen = colon ? (size_t)(colon - text) : 0;
  int scheme_ok = slen > 0 && isalpha((unsigned char)text[0]);
  for (size_t i = 0; scheme_ok && i < slen; i++) {
    unsigned char c = (unsigned char)text[i];
    scheme_ok = isalnum(c) || c == '+' || c == '-' || c == '.';
  }
  if (!scheme_ok) {
    snprintf(err, es, "database URL has no scheme: expected sqlite:PATH or scheme://...");
    return SQLQ_MISUSE;
  }
  url->scheme = strndup(text, slen);
  if (url->scheme == NULL) return SQLQ_NOMEM;
  for (char *s = url->scheme; *s; s++) *s = (char)tolower((unsigned char)*s);

  const char *rest = colon + 1;
  const char *query = strchr(rest, '?');
  const char *body_end = query ? query : rest + strlen(rest);
  int bad = 0, rc = SQLQ_NOMEM;
  /* The password's span, then one per query option at most. */
  size_t n_spans = 0, room = 2;
  for (const char *p = query; p && *p; p++) room += (*p == '&');
  span *spans = malloc(room * sizeof *spans);
  if (spans == NULL) goto fail;

  if (strncmp(rest, "//", 2) == 0) {
    const char *auth = rest + 2;
    const char *auth_end = auth;
    while (auth_end < body_end && *auth_end != '/') auth_end++;
    const char *at = NULL;
    for (const char *p = auth; p < auth_end; p++)
      if (*p == '@') at = p;
    const char *hostp = auth;
    if (at == NULL && memchr(auth, ':', (size_t)(auth_end - auth)) &&
        memchr(auth_end, '@', (size_t)(body_end - auth_end))) {
      /* "u:12/34@host": a password with a '/' that was not encoded.  Read
      ** as written, 12 would be a port and the password part of a path
      ** that messages print; refuse, without quoting the URL. */
      snprintf(err, es,
               "database URL has an '@' after its host: percent-encode a '/' in "
               "the user name or password as %%2F");
      rc = SQLQ_MISUSE;
      goto fail;
    }
    if (at) {
      const char *c = memchr(auth, ':', (size_t)(at - auth));
      const char *uend = c ? c : at;
      if (uend > auth && (url->user = decode(auth, (size_t)(uend - auth), &bad)) == NULL)
        goto decode_fail;
      if (c) {
        spans[n_spans++] = (span){c + 1, at};
        if ((url->password = decode(c + 1, (size_t)(at - c - 1), &bad)) == NULL) goto decode_fail;
      }
      hostp = at + 1;
    }
    const char *port_colon = NULL;
    if (*hostp == '[') {
      const char *rb = memchr(hostp, ']', (size_t)(auth_end - hostp));
      if (rb == NULL) {
        snprintf(err, es, "database URL has an unclosed '[' in its host");
        rc = SQLQ_MISUSE;
        goto fail;
      }
      if ((url->host = strndup(hostp + 1, (size_t)(rb - hostp - 1))) == NULL) goto fail;
      if (rb + 1 < auth_end) {
        if (rb[1] != ':') {
          snprintf(err, es, "database URL has text after its IPv6 host");
          rc = SQLQ_MISUSE;
          goto fail;
        }
        port_colon = rb + 1;
      }
    } else {
      port_colon = memchr(hostp, ':', (size_t)(auth_end - hostp));
      const char *hend = port_colon ? port_colon : auth_end;
      if (hend > hostp) {
        if ((url->host = decode(hostp, (size_t)(hend - hostp), &bad)) == NULL) goto decode_fail;
      }
    }
    if (port_colon) {
      const char *ps = port_colon + 1;
      long port = 0;
      int ok = ps < auth_end && auth_end - ps <= 5;
      for (const char *p = ps; ok && p < auth_end; p++) {
        ok = isdigit((unsigned char)*p);
        port = port * 10 + (*p - '0');
      }
      if (!ok || port < 1 || port > 65535) {
        snprintf(err, es, "database URL has a bad port: expected 1 to 65535");
        rc = SQLQ_MISUSE;
        goto fail;
      }
      url->port = (int)port;
    }
    if (auth_end < body_end &&
        (url->path = decode(auth_end, (size_t)(body_end - auth_end), &bad)) == NULL)
      goto decode_fail;
  } else if (body_end > rest) {
    if ((url->path = decode(rest, (size_t)(body_end - rest), &bad)) == NULL) goto decode_fail;
  }
  if (query && (rc = parse_query(query + 1, url, spans, &n_spans, err, es)) != SQLQ_OK) goto fail;
  if ((url->redacted = redact(text, spans, n_spans)) == NULL) {
    rc = SQLQ_NOMEM;
    goto fail;
  }
  free(spans);
  return SQLQ_OK;

decode_fail:
  if (bad) {
    snprintf(err, es, "database URL has a bad percent escape");
    rc = SQLQ_MISUSE;
  }
fail:
  free(spans);
  sqlq__url_free(url);
  return rc;
}

void sqlq__url_free(sqlq__url *url) {
  if (url == NULL) return;
  free(url->scheme);
  free(url->user);
  if (url->password) {
    memset(url->password, 0, strlen(url->password));
    free(url->password);
  }
  free(url->host);
  free(url->path);
  for (int i = 0; i < url->n_opts; i++) {
    free(url->opts[i].key);
    free(url->opts[i].value);
  }
  free(url->opts);
  free(url->redacted);
  memset(url, 0, sizeof *url);
}

const char *sqlq__url_option(const sqlq__url *url, const char *key) {
  for (int i = url->n_opts - 1; i >= 0; i--)
    if (strcmp(url->opts[i].key, key) == 0) return url->opts[i].value;
  return NULL;
}

int sqlq__url_switch(sqlq_db *db, const sqlq__url *url, const char *key, int *on) {
  const char *v = sqlq__url_option(url, key);
  if (v == NULL) return SQLQ_OK;
  if (strcmp(v, "on") && strcmp(v, "off"))
    return sqlq__error(db, SQLQ_MISUSE, "URL option %s must be on or off", key);
  *on = strcmp(v, "on") == 0;
  return SQLQ_OK;
}

int sqlq__url_seconds(sqlq_db *db, const sqlq__url *url, const char *key, double min, double max,
                      double *seconds) {
  const char *v = sqlq__url_option(url, key);
  if (v == NULL) return SQLQ_OK;
  char *end;
  double s = strtod(v, &end);
  if (*v == '\0' || *end || !(s >= min && s <= max))
    return sqlq__error(db, SQLQ_MISUSE, "URL option %s must be %g to %g seconds", key, min, max);
  *seconds = s;
  return SQLQ_OK;
}
