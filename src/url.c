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

/* Parse one entry of the host list, [s, end): a host name (percent-decoded),
** or an IPv6 address in brackets, then maybe ':' and a port.  Sets *host
** (NULL for an empty name; the caller frees it) and *port (0 when absent);
** on an error, *host is NULL. */
static int parse_host(const char *s, const char *end, char **host, int *port, char *err,
                      size_t es) {
  const char *port_colon = NULL;
  int bad = 0;
  *host = NULL;
  *port = 0;
  if (s < end && *s == '[') {
    const char *rb = memchr(s, ']', (size_t)(end - s));
    if (rb == NULL) {
      snprintf(err, es, "database URL has an unclosed '[' in its host");
      return SQLQ_MISUSE;
    }
    if ((*host = strndup(s + 1, (size_t)(rb - s - 1))) == NULL) return SQLQ_NOMEM;
    if (rb + 1 < end) {
      if (rb[1] != ':') {
        snprintf(err, es, "database URL has text after its IPv6 host");
        free(*host);
        *host = NULL;
        return SQLQ_MISUSE;
      }
      port_colon = rb + 1;
    }
  } else {
    port_colon = memchr(s, ':', (size_t)(end - s));
    const char *hend = port_colon ? port_colon : end;
    if (hend > s && (*host = decode(s, (size_t)(hend - s), &bad)) == NULL) {
      if (!bad) return SQLQ_NOMEM;
      snprintf(err, es, "database URL has a bad percent escape");
      return SQLQ_MISUSE;
    }
  }
  if (port_colon) {
    const char *ps = port_colon + 1;
    long n = 0;
    int ok = ps < end && end - ps <= 5;
    for (const char *p = ps; ok && p < end; p++) {
      ok = isdigit((unsigned char)*p);
      n = n * 10 + (*p - '0');
    }
    if (!ok || n < 1 || n > 65535) {
      snprintf(err, es, "database URL has a bad port: expected 1 to 65535");
      free(*host);
      *host = NULL;
      return SQLQ_MISUSE;
    }
    *port = (int)n;
  }
  return SQLQ_OK;
}

/* Parse the host part [s, end) of the authority into url: one entry, or
** several separated by commas (PostgreSQL's host lists, which libpq tries
** in turn).  With several, url->host joins the names with commas,
** url->ports the ports (empty where absent), and url->n_hosts counts them;
** every entry needs a name, which may not hold a comma once decoded. */
static int parse_hosts(const char *s, const char *end, sqlq__url *url, char *err, size_t es) {
  size_t n = 1, len = (size_t)(end - s);
  int in_brackets = 0;
  for (const char *p = s; p < end; p++) {
    in_brackets = *p == '[' ? 1 : *p == ']' ? 0 : in_brackets;
    n += *p == ',' && !in_brackets;
  }
  if (n == 1) {
    url->n_hosts = 1;
    return parse_host(s, end, &url->host, &url->port, err, es);
  }
  /* The joined names and ports are no longer than the text they came from. */
  char *hosts = calloc(1, len + 1), *ports = calloc(1, len + 7 * n + 1);
  int rc = hosts && ports ? SQLQ_OK : SQLQ_NOMEM;
  const char *p = s;
  for (size_t i = 0; rc == SQLQ_OK && i < n; i++) {
    const char *q = p;
    for (in_brackets = 0; q < end && (*q != ',' || in_brackets); q++)
      in_brackets = *q == '[' ? 1 : *q == ']' ? 0 : in_brackets;
    char *host;
    int port;
    if ((rc = parse_host(p, q, &host, &port, err, es)) != SQLQ_OK) break;
    if (host == NULL || *host == '\0' || strchr(host, ',')) {
      snprintf(err, es,
               "database URL has an empty host, or a comma in a host name, in its list "
               "of hosts");
      rc = SQLQ_MISUSE;
    } else {
      if (i) {
        strcat(hosts, ",");
        strcat(ports, ",");
      }
      strcat(hosts, host);
      if (port) sprintf(ports + strlen(ports), "%d", port);
    }
    free(host);
    p = q + 1;
  }
  if (rc != SQLQ_OK) {
    free(hosts);
    free(ports);
    return rc;
  }
  url->host = hosts;
  url->ports = ports;
  url->n_hosts = (int)n;
  return SQLQ_OK;
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
    if (at == NULL && auth_end > auth && memchr(auth, ':', (size_t)(auth_end - auth)) &&
        body_end > auth_end && memchr(auth_end, '@', (size_t)(body_end - auth_end))) {
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
    if ((rc = parse_hosts(hostp, auth_end, url, err, es)) != SQLQ_OK) goto fail;
    rc = SQLQ_NOMEM;
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
  free(url->ports);
  free(url->path);
  for (int i = 0; i < url->n_opts; i++) {
    free(url->opts[i].key);
    free(url->opts[i].value);
  }
  free(url->opts);
  free(url->redacted);
  memset(url, 0, sizeof *url);
}

int sqlq__url_one_host(sqlq_db *db, const sqlq__url *url) {
  if (url->n_hosts <= 1) return SQLQ_OK;
  return sqlq__error(db, SQLQ_MISUSE, "database URL names several hosts: only postgres URLs may");
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
