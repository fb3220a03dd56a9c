/*
** db.c -- opening and closing handles (the driver of the URL's scheme and
** the URL's options), statements, transactions and the wake-ups their
** commits owe, and schema migrations.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sqlq_int.h"

/* URL schemes of every backend sqlq knows, built in this copy or not.  The
** one use of backend names in the core, and only for sqlq_open()'s message
** when no driver of this build takes the scheme: a known scheme says
** "backend not built", any other "unknown URL scheme".  Which driver opens
** a URL is the drivers' own lists of schemes (find_driver). */
static const struct {
  const char *scheme;
  const char *backend;
} known_schemes[] = {
  {"sqlite", "SQLite"},       {"postgres", "PostgreSQL"},   {"postgresql", "PostgreSQL"},
  {"mysql", "MySQL/MariaDB"}, {"mariadb", "MySQL/MariaDB"}, {"firebird", "Firebird"},
};

static void forget_wakes(sqlq_db *db);

/* Seconds between the flushes of a handle's counts, unless the URL
** option counts_flush says otherwise (counts.c). */
#define COUNTS_FLUSH_S 5.0

static const sqlq__driver *find_driver(const char *scheme) {
  for (const sqlq__driver *const *d = sqlq__drivers; *d; d++)
    for (const char *const *s = (*d)->schemes; *s; s++)
      if (strcmp(*s, scheme) == 0) return *d;
  return NULL;
}

static int no_driver(sqlq_db *db, const char *scheme) {
  for (size_t i = 0; i < sizeof known_schemes / sizeof *known_schemes; i++)
    if (strcmp(known_schemes[i].scheme, scheme) == 0)
      return sqlq__error(db, SQLQ_UNAVAILABLE,
                         "backend not built: this sqlq has no %s support (URL scheme '%s')",
                         known_schemes[i].backend, scheme);
  return sqlq__error(
    db, SQLQ_UNAVAILABLE,
    "unknown URL scheme '%.40s': expected sqlite, postgres, mysql, mariadb or firebird", scheme);
}

/* Is key one of drv's own URL options? */
static int driver_option(const sqlq__driver *drv, const char *key) {
  for (const char *const *o = drv->options; *o; o++)
    if (strcmp(*o, key) == 0) return 1;
  return 0;
}

/* Refuse an option that neither the core nor drv reads, naming the known
** ones. */
static int unknown_option(sqlq_db *db, const sqlq__driver *drv, const char *key) {
  char known[256] = "payload_limit, history, busy_timeout, lanes, counts, counts_flush";
  size_t len = strlen(known);
  for (const char *const *o = drv->options; *o && len < sizeof known; o++)
    len += (size_t)snprintf(known + len, sizeof known - len, ", %s", *o);
  return sqlq__error(db, SQLQ_MISUSE, "unknown URL option '%.40s' for %s (known: %s)", key,
                     drv->name, known);
}

/* Apply the URL's options over the caller's; the driver reads its own. */
static int apply_url_options(sqlq_db *db, const sqlq__driver *drv, const sqlq__url *url) {
  for (int i = 0; i < url->n_opts; i++) {
    const char *k = url->opts[i].key, *v = url->opts[i].value;
    char *end;
    if (strcmp(k, "payload_limit") == 0) {
      unsigned long long n = strtoull(v, &end, 10);
      if (*v == '\0' || *end || *v == '-' || n == 0 || n > (1ull << 31))
        return sqlq__error(db, SQLQ_MISUSE,
                           "URL option payload_limit must be 1 to 2147483648 bytes");
      db->payload_limit = (size_t)n;
    } else if (strcmp(k, "history") == 0) {
      if (strcmp(v, "0") && strcmp(v, "1"))
        return sqlq__error(db, SQLQ_MISUSE, "URL option history must be 0 or 1");
      db->keep_history = v[0] == '1';
    } else if (strcmp(k, "busy_timeout") == 0) {
      double s = strtod(v, &end);
      if (*v == '\0' || *end || !(s >= 0 && s <= 86400))
        return sqlq__error(db, SQLQ_MISUSE, "URL option busy_timeout must be 0 to 86400 seconds");
      db->busy_timeout = s;
    } else if (strcmp(k, "lanes") == 0) {
      if (strcmp(v, "auto") && strcmp(v, "on") && strcmp(v, "off"))
        return sqlq__error(db, SQLQ_MISUSE, "URL option lanes must be auto, on or off");
      db->lanes_mode = v[1] == 'u'   ? SQLQ__LANES_AUTO
                       : v[1] == 'n' ? SQLQ__LANES_ON
                                     : SQLQ__LANES_OFF;
    } else if (strcmp(k, "counts") == 0) {
      if (strcmp(v, "on") && strcmp(v, "off"))
        return sqlq__error(db, SQLQ_MISUSE, "URL option counts must be on or off");
      db->counts.off = v[1] == 'f';
    } else if (strcmp(k, "counts_flush") == 0) {
      double s = strtod(v, &end);
      if (*v == '\0' || *end || !(s >= 0.01 && s <= 3600))
        return sqlq__error(db, SQLQ_MISUSE, "URL option counts_flush must be 0.01 to 3600 seconds");
      db->counts.every_ns = (int64_t)(s * 1e9);
    } else if (strcmp(k, "lock_lease") == 0) {
      double s = strtod(v, &end);
      if (*v == '\0' || *end || !(s >= 0.5 && s <= 86400))
        return sqlq__error(db, SQLQ_MISUSE, "URL option lock_lease must be 0.5 to 86400 seconds");
      db->lock_lease_s = s;
    } else if (!driver_option(drv, k)) {
      return unknown_option(db, drv, k);
    }
  }
  return SQLQ_OK;
}

SQLQ__API int sqlq_open(const char *url_text, const sqlq_options *opts, sqlq_db **out) {
  sqlq_db *db = calloc(1, sizeof *db);
  *out = db;
  if (db == NULL) return SQLQ_NOMEM;
  db->wake_fd = -1;
  sqlq_options o;
  int rc = sqlq__read_options(db, opts, sizeof o, &o, "sqlq_options");
  if (rc != SQLQ_OK) return rc;
  db->payload_limit = o.payload_limit ? o.payload_limit : 1024 * 1024;
  db->keep_history = o.keep_history;
  db->deps = -1;
  if (!(o.busy_timeout >= 0 && o.busy_timeout <= 86400))
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_options.busy_timeout must be 0 to 86400 seconds");
  db->busy_timeout = o.busy_timeout > 0 ? o.busy_timeout : 5.0;
  sqlq__counts_open(db, 0, COUNTS_FLUSH_S);

  sqlq__url url;
  char err[256];
  rc = sqlq__url_parse(url_text, &url, err, sizeof err);
  if (rc != SQLQ_OK) return sqlq__error(db, rc, "%s", rc == SQLQ_NOMEM ? "out of memory" : err);
  db->url_redacted = strdup(url.redacted);
  db->url_text = strdup(url_text);
  db->lock_lease_s = SQLQ__LOCK_LEASE_S;
  const sqlq__driver *drv = find_driver(url.scheme);
  if (db->url_redacted == NULL || db->url_text == NULL)
    rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  else if (drv == NULL)
    rc = no_driver(db, url.scheme);
  else if ((rc = apply_url_options(db, drv, &url)) == SQLQ_OK) {
    db->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (db->wake_fd < 0)
      rc = sqlq__error(db, SQLQ_ERROR, "cannot make an eventfd");
    else {
      db->driver = drv;
      rc = drv->open(db, &url);
    }
  }
  sqlq__url_free(&url);
  if (rc == SQLQ_OK) sqlq__clear_error(db);
  return rc;
}

SQLQ__API void sqlq_close(sqlq_db *db) {
  if (db == NULL) return;
  while (db->locks) sqlq_unlock(db->locks);
  sqlq__release_xact_locks(db);
  sqlq_close(db->lease_db);
  if (db->driver && db->in_user_tx) {
    db->driver->rollback(db);
    db->in_user_tx = 0;
    sqlq__counts_end_tx(db, 0);
  }
  sqlq__counts_close(db);
  if (db->driver) db->driver->close(db);
  if (db->wake_fd >= 0) close(db->wake_fd);
  forget_wakes(db);
  sqlq__cursors_free(db);
  free(db->ident);
  free(db->url_redacted);
  if (db->url_text) memset(db->url_text, 0, strlen(db->url_text));
  free(db->url_text);
  free(db);
}

SQLQ__API size_t sqlq_payload_limit(const sqlq_db *db) {
  return db ? db->payload_limit : 0;
}

SQLQ__API const char *sqlq_backend(const sqlq_db *db) {
  return db && db->driver ? db->driver->name : "none";
}

SQLQ__API const char *sqlq_url_redacted(const sqlq_db *db) {
  return db && db->url_redacted ? db->url_redacted : "";
}

SQLQ__API void *sqlq_native_handle(sqlq_db *db) {
  return db && db->driver ? db->driver->native(db) : NULL;
}

size_t sqlq__array_rows(const sqlq_db *db, size_t n) {
  size_t max = db->driver->array_rows_max;
  return max && max < n ? max : n;
}

/* ---------------------------------------------------------------------
** Transactions and wake-ups owed at commit.
*/

void sqlq__owe_wake(sqlq_db *db, const char *channel, int n) {
  struct sqlq__wake *w = db->pending;
  while (w && strcmp(w->channel, channel) != 0) w = w->next;
  if (w == NULL) {
    w = calloc(1, sizeof *w);
    if (w == NULL || (w->channel = strdup(channel)) == NULL) {
      free(w);
      db->pending_all = 1;
      return;
    }
    w->next = db->pending;
    db->pending = w;
  }
  if (n == SQLQ__WAKE_ALL || w->jobs == SQLQ__WAKE_ALL)
    w->jobs = SQLQ__WAKE_ALL;
  else
    w->jobs = n > 1000000 - w->jobs ? 1000000 : w->jobs + n;
}

void sqlq__owe_local_wake(sqlq_db *db) {
  db->pending_local = 1;
}

static void forget_wakes(sqlq_db *db) {
  while (db->pending) {
    struct sqlq__wake *w = db->pending;
    db->pending = w->next;
    free(w->channel);
    free(w);
  }
  db->pending_all = 0;
  db->pending_local = 0;
}

/* Before a commit: tell other processes, for drivers that send the
** notification with the commit. */
static int notify_at_commit(sqlq_db *db) {
  const sqlq__driver *d = db->driver;
  if (!(d->traits & SQLQ__TRAIT_NOTIFY_AT_COMMIT) || d->notify == NULL) return SQLQ_OK;
  for (struct sqlq__wake *w = db->pending; w; w = w->next) {
    int rc = d->notify(db, w->channel, w->jobs);
    if (rc != SQLQ_OK) return rc;
  }
  return SQLQ_OK;
}

/* After a commit: wake this process's waiters and tell other processes,
** for drivers whose notification follows the commit. */
static void pay_wakes(sqlq_db *db) {
  const sqlq__driver *d = db->driver;
  int after = d->notify && !(d->traits & SQLQ__TRAIT_NOTIFY_AT_COMMIT);
  int all = db->pending_local || db->pending_all;
  if (all) sqlq__wake_local(db->ident, NULL, 0);
  for (struct sqlq__wake *w = db->pending; w; w = w->next) {
    if (!all) sqlq__wake_local(db->ident, w->channel, w->jobs);
    if (after) d->notify(db, w->channel, w->jobs);
  }
  forget_wakes(db);
}

/* Roll back the open transaction after the failure rc (recorded on db),
** forget its wake-ups, and return rc with its message, whatever the
** rollback said. */
static int abandon(sqlq_db *db, int rc) {
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  db->driver->rollback(db);
  forget_wakes(db);
  sqlq__restore_error(db, &saved);
  db->errcode = rc;
  return rc;
}

/* Commit the open transaction and pay the wake-ups it owes; on failure,
** roll back and forget them. */
static int commit_and_wake(sqlq_db *db) {
  int rc = notify_at_commit(db);
  if (rc == SQLQ_OK) rc = db->driver->commit(db);
  if (rc != SQLQ_OK) return abandon(db, rc);
  pay_wakes(db);
  return SQLQ_OK;
}

/* The caller, a public entry point, has run sqlq__enter(). */
int sqlq__in_tx(sqlq_db *db, unsigned kind, int (*fn)(sqlq_db *db, void *arg), void *arg) {
  int rc;
  sqlq__clear_error(db);
  if (db->in_user_tx) return fn(db, arg);
  for (int attempt = 1;; attempt++) {
    db->tx_retryable = 0;
    if ((rc = db->driver->begin(db, kind)) != SQLQ_OK) return rc;
    rc = fn(db, arg);
    /* SQLQ_STALE and SQLQ_PAUSED report on work that was done correctly. */
    if (rc == SQLQ_OK || rc == SQLQ_STALE || rc == SQLQ_PAUSED) {
      int crc = commit_and_wake(db);
      if (crc == SQLQ_OK) return rc;
      rc = crc;
    } else {
      rc = abandon(db, rc);
    }
    if (!db->tx_retryable || attempt == SQLQ__TX_ATTEMPTS) return rc;
    sqlq__clear_error(db);
  }
}

SQLQ__API int sqlq_begin(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (db->in_user_tx)
    return sqlq__error(db, SQLQ_MISUSE, "a transaction is already open on this handle");
  sqlq__clear_error(db);
  if ((rc = db->driver->begin(db, SQLQ__TX_WRITE)) == SQLQ_OK) db->in_user_tx = 1;
  return rc;
}

SQLQ__API int sqlq_commit(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (!db->in_user_tx) return sqlq__error(db, SQLQ_MISUSE, "no transaction is open on this handle");
  sqlq__clear_error(db);
  rc = commit_and_wake(db);
  db->in_user_tx = 0;
  sqlq__release_xact_locks(db);
  sqlq__counts_end_tx(db, rc == SQLQ_OK);
  return rc;
}

SQLQ__API int sqlq_rollback(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (!db->in_user_tx) return sqlq__error(db, SQLQ_MISUSE, "no transaction is open on this handle");
  sqlq__clear_error(db);
  rc = db->driver->rollback(db);
  forget_wakes(db);
  db->in_user_tx = 0;
  sqlq__release_xact_locks(db);
  sqlq__counts_end_tx(db, 0);
  return rc;
}

/* ---------------------------------------------------------------------
** Schema migrations.
*/

int sqlq__schema_version(sqlq_db *db, int *version) {
  int64_t v = 0; /* NULL reads as 0 */
  sqlq__query q = {.sql = SQLQ__SQL_SCHEMA_VERSION, .row = sqlq__read_int64, .arg = &v};
  int rc = sqlq__query_run(db, &q, NULL, 0);
  *version = (int)v;
  return rc;
}

static int read_version_tx(sqlq_db *db, void *arg) {
  return sqlq__schema_version(db, arg);
}

/* How long a handle trusts that its database has no dependencies. */
#define DEPS_LOOK_NS 1000000000LL

int sqlq__deps_on(sqlq_db *db, int *on) {
  int64_t now = db->deps == 0 ? sqlq__monotonic_ns() : 0;
  if (db->deps == 1 || (db->deps == 0 && now - db->deps_seen_ns < DEPS_LOOK_NS)) {
    *on = db->deps;
    return SQLQ_OK;
  }
  int version = 0;
  int rc = sqlq__in_tx(db, SQLQ__TX_READ, read_version_tx, &version);
  if (rc != SQLQ_OK) return rc;
  db->deps = *on = version >= SQLQ__DEPS_VERSION;
  db->deps_seen_ns = db->deps ? 0 : sqlq__monotonic_ns();
  return SQLQ_OK;
}

static int migrate(sqlq_db *db, void *arg) {
  int *version = arg, rc;
  const sqlq__driver *d = db->driver;
  if (d->init && (rc = d->init(db)) != SQLQ_OK) return rc;
  if ((rc = d->exec(db, d->sql[SQLQ__SQL_SCHEMA_TABLE])) != SQLQ_OK) return rc;
  if ((rc = sqlq__schema_version(db, version)) != SQLQ_OK) return rc;
  if (*version > SQLQ_SCHEMA_VERSION)
    return sqlq__error(
      db, SQLQ_SCHEMA,
      "the database has schema version %d, newer than this sqlq (%d): upgrade sqlq", *version,
      SQLQ_SCHEMA_VERSION);
  for (int v = *version + 1; v <= SQLQ_SCHEMA_VERSION && d->migrations[v - 1]; v++) {
    if ((rc = d->exec(db, d->migrations[v - 1])) != SQLQ_OK) return rc;
    sqlq__query q = {.sql = SQLQ__SQL_SCHEMA_RECORD};
    if ((rc = sqlq__run(db, &q, SQLQ__INT(v))) != SQLQ_OK) return rc;
    *version = v;
  }
  return SQLQ_OK;
}

SQLQ__API int sqlq_init(sqlq_db *db, int *version_out) {
  int version = 0;
  int rc = sqlq__enter(db);
  if (rc != SQLQ_OK) return rc;
  if (db->in_user_tx)
    return sqlq__error(db, SQLQ_MISUSE, "sqlq_init cannot run inside a transaction");
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, migrate, &version);
  if (version_out) *version_out = version;
  return rc;
}
