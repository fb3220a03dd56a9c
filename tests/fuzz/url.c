/*
** url.c -- fuzz the URL parser (src/url.c) and its redaction, and
** sqlq_open() on the URLs it may open here.
**
** The input is the URL's text (up to its first NUL).  What must hold:
**   - sqlq__url_parse() gives SQLQ_OK or SQLQ_MISUSE; a refusal's message
**     is printable ASCII (it never quotes the URL, whose bytes may be
**     anything);
**   - a parsed URL has a lower-case scheme, and its redacted text parses
**     again into the same parts, but with "***" as the password (when the
**     URL has one, even an empty one) and as the value of every option
**     whose decoded key names a secret; redacting that text changes it no
**     more;
**   - sqlq_open() agrees with the parser (SQLQ_MISUSE for what it
**     refuses), its handle's redacted URL is the parser's, and its message
**     never holds a secret (the password, a secret option's value) unless
**     that text is also in a part that messages may name (the path, the
**     host, the user, an option's key);
**   - and the sanitizers' checks.
** sqlq_open() runs only where it can neither reach the network nor write
** outside a scratch directory (the working directory while it runs,
** emptied after each input): sqlite URLs whose path is :memory: or a plain file name, and
** schemes that no driver serves (then SQLQ_UNAVAILABLE).  Other URLs are
** only parsed.
*/
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fuzz.h"
#include "sqlq_int.h"


/* The documented rule (src/url.c): a key that speaks of a password,
** passphrase, secret or token, in any case, holds a secret. */
static int secret_key(const char *key) {
  char *lower = strdup(key);
  FZ_CHECK(lower != NULL, "out of memory");
  for (char *p = lower; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
  int secret = strstr(lower, "pass") || strstr(lower, "pwd") || strstr(lower, "secret") ||
               strstr(lower, "token");
  free(lower);
  return secret;
}

static int same(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* The redacted text parses into u's parts with the secrets hidden. */
static void check_redacted(const sqlq__url *u) {
  sqlq__url r;
  char err[256];
  int rc = sqlq__url_parse(u->redacted, &r, err, sizeof err);
  FZ_CHECK(rc == SQLQ_OK, "the redacted URL does not parse: %s", err);
  FZ_CHECK(same(r.scheme, u->scheme) && same(r.user, u->user) && same(r.host, u->host) &&
             r.port == u->port && same(r.path, u->path) && r.n_opts == u->n_opts,
           "the redacted URL has other parts");
  FZ_CHECK(u->password ? same(r.password, "***") : r.password == NULL,
           "the redacted URL shows its password");
  for (int i = 0; i < u->n_opts; i++) {
    FZ_CHECK(strcmp(r.opts[i].key, u->opts[i].key) == 0, "option %d has another key", i);
    FZ_CHECK(strcmp(r.opts[i].value, secret_key(u->opts[i].key) ? "***" : u->opts[i].value) == 0,
             "option %d ('%s') has another value, or shows a secret", i, u->opts[i].key);
  }
  FZ_CHECK(strcmp(r.redacted, u->redacted) == 0, "redacting the redacted URL changed it");
  sqlq__url_free(&r);
}

/* Could s be taken for words of a message?  Secrets with a byte no message
** of sqlq's has are surely not. */
static int distinctive(const char *s) {
  if (strlen(s) < 4) return 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p >= 0x80 || strchr("!#$+<>^|~{}", *p)) return 1;
  return 0;
}

/* Whether secret is in a part of u that messages may name. */
static int named_part(const sqlq__url *u, const char *secret) {
  if ((u->user && strstr(u->user, secret)) || (u->host && strstr(u->host, secret)) ||
      (u->path && strstr(u->path, secret)) || strstr(u->scheme, secret))
    return 1;
  for (int i = 0; i < u->n_opts; i++)
    if (strstr(u->opts[i].key, secret)) return 1;
  return 0;
}

static void check_message(const sqlq__url *u, const char *msg) {
  if (u->password && distinctive(u->password) && !named_part(u, u->password))
    FZ_CHECK(strstr(msg, u->password) == NULL, "the message shows the password: %s", msg);
  for (int i = 0; i < u->n_opts; i++) {
    const char *v = u->opts[i].value;
    if (secret_key(u->opts[i].key) && distinctive(v) && !named_part(u, v))
      FZ_CHECK(strstr(msg, v) == NULL, "the message shows option %s: %s", u->opts[i].key, msg);
  }
}

/* May sqlq_open() run on u here (see the top)? */
static int may_open(const sqlq__url *u) {
  static const char *const served[] = {"postgres", "postgresql", "mysql", "mariadb", "firebird"};
  if (strcmp(u->scheme, "sqlite") == 0)
    return u->host == NULL && u->path &&
           (strcmp(u->path, ":memory:") == 0 ||
            (strlen(u->path) <= 40 &&
             strspn(u->path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                             "QRSTUVWXYZ0123456789._-") == strlen(u->path)));
  for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
    if (strcmp(u->scheme, served[i]) == 0) return 0;
  return 1;
}

/* Open text in the scratch directory and close it again, leaving nothing
** there; the message is checked against u's secrets. */
static void open_in_scratch(const char *text, const sqlq__url *u) {
  int back = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  FZ_CHECK(back >= 0 && chdir(fz_scratch_dir()) == 0, "cannot enter the scratch directory");
  sqlq_db *db = NULL;
  int rc = sqlq_open(text, NULL, &db);
  FZ_CHECK(rc == SQLQ_OK || rc == SQLQ_MISUSE || rc == SQLQ_UNAVAILABLE, "sqlq_open gave %s (%s)",
           sqlq_status_name(rc), sqlq_errmsg(db));
  FZ_CHECK(strcmp(u->scheme, "sqlite") == 0 || rc == SQLQ_UNAVAILABLE,
           "sqlq_open of scheme %s gave %s", u->scheme, sqlq_status_name(rc));
  FZ_CHECK(strcmp(sqlq_url_redacted(db), u->redacted) == 0, "the handle's redacted URL differs");
  check_message(u, sqlq_errmsg(db));
  sqlq_close(db);
  DIR *d = opendir(".");
  FZ_CHECK(d != NULL, "cannot read the scratch directory");
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      FZ_CHECK(unlink(e->d_name) == 0 || rmdir(e->d_name) == 0, "cannot remove %s", e->d_name);
    }
  closedir(d);
  FZ_CHECK(fchdir(back) == 0, "cannot go back to the working directory");
  close(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  FZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';

  sqlq__url u;
  char err[256] = "";
  int rc = sqlq__url_parse(text, &u, err, sizeof err);
  FZ_CHECK(rc == SQLQ_OK || rc == SQLQ_MISUSE, "url_parse gave %s", sqlq_status_name(rc));
  if (rc != SQLQ_OK) {
    for (const unsigned char *p = (const unsigned char *)err; *p; p++)
      FZ_CHECK(*p >= 0x20 && *p < 0x7f, "the parser's message is not printable ASCII: %s", err);
    FZ_CHECK(err[0] != '\0', "a refusal without a message");
    sqlq_db *db = NULL;
    FZ_CHECK(sqlq_open(text, NULL, &db) == SQLQ_MISUSE, "sqlq_open took what the parser refused");
    sqlq_close(db);
    free(text);
    return 0;
  }
  for (const char *s = u.scheme; *s; s++)
    FZ_CHECK(*s < 'A' || *s > 'Z', "the scheme '%s' is not lower case", u.scheme);
  FZ_CHECK(u.redacted != NULL && strlen(u.redacted) <= size + 3 * (1 + (size_t)u.n_opts),
           "the redacted URL is missing or too long");
  check_redacted(&u);
  if (may_open(&u)) open_in_scratch(text, &u);
  sqlq__url_free(&u);
  free(text);
  return 0;
}
