/*
** firebird.c -- the Firebird backend: attachments, transactions, errors.
**
** One sqlq_db is one attachment.  `firebird://USER:PASS@HOST:PORT/ALIAS`
** attaches through a server as HOST/PORT:ALIAS, and a path after a second
** slash (`.../PORT//abs/file.fdb`) names the file; `firebird:PATH` opens the
** file embedded, the engine running inside the process.  User and password
** travel in the DPB, never in the connection string.  A database file that
** does not exist is created by `sqlq init` (the first statement init runs,
** SCHEMA_TABLE, creates it: see fb_exec), when the URL names a path.
**
** An attachment lost outside a transaction (the server restarted, the
** network broke) is made again at the next call that needs it, at most
** as often as sqlq__backoff allows: the statements prepared on the lost
** one are dropped, to be prepared again on the new one.  Within a
** transaction, losing it fails the call with SQLQ_UNAVAILABLE; the
** transaction is gone, and the call after its rollback attaches again.
**
** Transactions are READ COMMITTED RECORD_VERSION, so that readers never
** wait.  Writing ones wait for row locks up to the busy timeout, except the
** queue's own short transactions (SQLQ__TX_LAZY: claims, acks, failures),
** which do not wait at all: the claim steps over a job another claimer
** holds (see the claim in firebird_sql.c), and a conflict elsewhere makes
** the core run the transaction again (db->tx_retryable).  A limited
** queue's claim (SQLQ__TX_WAITS) waits, for its turn on the queue's row.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "firebird_int.h"

static const char *const schemes[] = {"firebird", NULL};
static const char *const options[] = {"connect_timeout", "events", "poll_interval", NULL};

/* ---------------------------------------------------------------------
** Errors.
*/

/* Whether any cluster of the status vector status matches: match is called
** with each cluster's type and a pointer to its value (which may read the
** clusters that follow), and want, which it may compare with. */
static int status_any(const ISC_STATUS *status,
                      int (*match)(ISC_STATUS arg, const ISC_STATUS *value, ISC_STATUS want),
                      ISC_STATUS want) {
  for (const ISC_STATUS *s = status; *s != isc_arg_end;) {
    ISC_STATUS arg = *s++;
    if (match(arg, s, want)) return 1;
    if (arg == isc_arg_cstring)
      s += 2;
    else
      s++;
  }
  return 0;
}

static int is_gdscode(ISC_STATUS arg, const ISC_STATUS *value, ISC_STATUS gdscode) {
  return arg == isc_arg_gds && *value == gdscode;
}

int sqlq__fb_has(const ISC_STATUS *status, ISC_STATUS gdscode) {
  return status_any(status, is_gdscode, gdscode);
}

/* Whether a cluster is the engine's "cannot update erased record" (isc_random
** with that text, not a code of its own): an UPDATE reached a row that a
** concurrent transaction deleted and committed after the statement read
** it (seen embedded: a claim's UPDATE of a job another worker had acked
** meanwhile).  Another transaction changed the row: a conflict. */
static int is_erased_meanwhile(ISC_STATUS arg, const ISC_STATUS *value, ISC_STATUS unused) {
  (void)unused;
  return arg == isc_arg_gds && *value == isc_random && value[1] == isc_arg_string &&
         strcmp((const char *)value[2], "cannot update erased record") == 0;
}

int sqlq__fb_conflict(const ISC_STATUS *status) {
  char state[FB_SQLSTATE_SIZE];
  fb_sqlstate(state, status);
  return sqlq__fb_has(status, isc_update_conflict) || sqlq__fb_has(status, isc_read_conflict) ||
         sqlq__fb_has(status, isc_lock_conflict) || sqlq__fb_has(status, isc_deadlock) ||
         sqlq__fb_has(status, isc_lock_timeout) || strcmp(state, "40001") == 0 ||
         status_any(status, is_erased_meanwhile, 0);
}

/* Whether a cluster is ENOENT from the OS, which embedded comes as a number
** and through a server as the server's text for it (isc_arg_interpreted). */
static int is_enoent(ISC_STATUS arg, const ISC_STATUS *value, ISC_STATUS unused) {
  (void)unused;
  return (arg == isc_arg_unix && *value == ENOENT) ||
         (arg == isc_arg_interpreted &&
          strcmp((const char *)*value, "No such file or directory") == 0);
}

/* Whether status says that the file does not exist: ENOENT after
** isc_io_open_err. */
static int no_such_file(const ISC_STATUS *status) {
  return sqlq__fb_has(status, isc_io_open_err) && status_any(status, is_enoent, 0);
}

/* Codes that say the attachment is gone or cannot be made now: the network
** (refused, reset, cut), a server or database that shuts down or is
** shut down, a handle the client library gave up, and the refusals of a
** server that is still starting.  A server that has just been started
** listens before it can check passwords: until its security database is
** open, a login fails with isc_login_error ("Error occurred during login,
** please check server firebird.log for details").  Wrong credentials
** (isc_login) and a database that cannot be opened (isc_io_error) are here
** too: on the first attach they fail sqlq_open() all the same, and later
** they are a server that came back not quite as it was, which may mend. */
static const ISC_STATUS lost_codes[] = {
  isc_network_error,
  isc_net_read_err,
  isc_net_write_err,
  isc_lost_db_connection,
  isc_conn_lost,
  isc_connect_reject,
  isc_bad_db_handle,
  isc_shutdown,
  isc_shutinprog,
  isc_att_shutdown,
  isc_net_server_shutdown,
  isc_unavailable,
  isc_login,
  isc_login_error,
  isc_io_error,
};

static int is_lost(const ISC_STATUS *status) {
  for (size_t i = 0; i < sizeof lost_codes / sizeof lost_codes[0]; i++)
    if (sqlq__fb_has(status, lost_codes[i])) return 1;
  return 0;
}

int sqlq__fb_error(sqlq_db *db, const ISC_STATUS *status, const char *doing) {
  char msg[SQLQ__ERRMSG_SIZE];
  size_t len = 0;
  const ISC_STATUS *v = status;
  char part[256];
  while (len < sizeof msg - 1 && fb_interpret(part, sizeof part, &v) > 0)
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", len ? "; " : "", part);
  if (len == 0) snprintf(msg, sizeof msg, "error %ld", (long)status[1]);
  if (sqlq__fb_conflict(status)) {
    db->tx_retryable = 1;
    return sqlq__error(db, SQLQ_BUSY, "%s: a row is locked by another transaction (%s)", doing,
                       msg);
  }
  /* A table, or a column of a later version (the library's statements
  ** name no other), that the schema lacks. */
  if ((sqlq__fb_has(status, isc_dsql_relation_err) && strstr(msg, "SQLQ_")) ||
      sqlq__fb_has(status, isc_dsql_field_err))
    return sqlq__error(db, SQLQ_SCHEMA,
                       "the database lacks (part of) the sqlq schema: run `sqlq init` (%s)", msg);
  if (is_lost(status)) {
    /* The attachment is to be made again (see ready()); an error of the
    ** lock attachment lands here too, which costs only a needless one. */
    if (FB(db)->att) FB(db)->lost = 1;
    return sqlq__error(db, SQLQ_UNAVAILABLE, "%s: %s", doing, msg);
  }
  return sqlq__error(db, SQLQ_ERROR, "%s: %s", doing, msg);
}

/* ---------------------------------------------------------------------
** Descriptors.  libfbclient opens its sockets, and the embedded engine its
** files, without close-on-exec (3.0.11 opens its socket with
** SOCK_CLOEXEC, then clears the flag with fcntl(F_SETFD, O_CLOEXEC)), so a program that the application starts
** would inherit them: `sqlq lock -- CMD` would hand its lock attachment's
** socket to CMD, and `sqlq work` its events connection to every command.
** So around each attach (and the first isc_que_events of an attachment,
** which opens the connection to the server's auxiliary port) the driver notes the descriptors
** open before and makes every new one close-on-exec after (a descriptor
** that another thread opens meanwhile gets the flag too).  Linux only:
** without /proc/self/fd nothing is done.
*/


/* Call fn(fd, arg) for each open descriptor but the listing's own; 0 when
** they cannot be listed. */
static int each_fd(void (*fn)(int fd, void *arg), void *arg) {
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) return 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    char *end;
    long fd = strtol(e->d_name, &end, 10);
    if (e->d_name[0] != '.' && *end == '\0' && fd >= 0 && fd < 1L << 30 && fd != dirfd(dir))
      fn((int)fd, arg);
  }
  closedir(dir);
  return 1;
}

static void note_fd(int fd, void *arg) {
  sqlq__fb_fds *s = arg;
  if (s->n < 0) return;
  if (fd >= s->n) {
    int n = (fd / 8 + 64) * 8;
    unsigned char *p = realloc(s->open, (size_t)n / 8);
    if (p == NULL) {
      s->n = -1;
      return;
    }
    memset(p + s->n / 8, 0, (size_t)(n - s->n) / 8);
    s->open = p;
    s->n = n;
  }
  s->open[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

void sqlq__fb_fds_note(sqlq__fb_fds *s) {
  s->open = NULL;
  s->n = 0;
  if (!each_fd(note_fd, s)) s->n = -1;
}

static void cloexec_if_new(int fd, void *arg) {
  const sqlq__fb_fds *s = arg;
  if (fd < s->n && (s->open[fd / 8] & (1u << (fd % 8)))) return;
  int flags = fcntl(fd, F_GETFD);
  if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

void sqlq__fb_fds_cloexec_new(sqlq__fb_fds *s) {
  if (s->n >= 0) each_fd(cloexec_if_new, s);
  free(s->open);
  s->open = NULL;
}

/* The TCP sockets opened since a note: the last one seen and how many. */
typedef struct new_sockets {
  const sqlq__fb_fds *since;
  int fd;
  int count;
} new_sockets;

static void count_if_new_socket(int fd, void *arg) {
  new_sockets *ns = arg;
  const sqlq__fb_fds *s = ns->since;
  if (fd < s->n && (s->open[fd / 8] & (1u << (fd % 8)))) return;
  int type = 0;
  socklen_t len = sizeof type;
  struct sockaddr_storage a;
  socklen_t alen = sizeof a;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM &&
      getsockname(fd, (struct sockaddr *)&a, &alen) == 0 &&
      (a.ss_family == AF_INET || a.ss_family == AF_INET6)) {
    ns->fd = fd;
    ns->count++;
  }
}

int sqlq__fb_fds_new_socket(sqlq__fb_fds *s) {
  new_sockets ns = {s, -1, 0};
  if (s->n >= 0) each_fd(count_if_new_socket, &ns);
  free(s->open);
  s->open = NULL;
  return ns.count == 1 ? fcntl(ns.fd, F_DUPFD_CLOEXEC, 0) : -1;
}

/* isc_attach_database, or isc_create_database when create is set, with
** the descriptors it opens made close-on-exec. */
static ISC_STATUS attach(ISC_STATUS *st, const char *dsn, isc_db_handle *att, short dpb_len,
                         const char *dpb, int create) {
  sqlq__fb_fds fds;
  sqlq__fb_fds_note(&fds);
  ISC_STATUS r = create ? isc_create_database(st, 0, dsn, att, dpb_len, dpb, 0)
                        : isc_attach_database(st, 0, dsn, att, dpb_len, dpb);
  sqlq__fb_fds_cloexec_new(&fds);
  return r;
}

/* ---------------------------------------------------------------------
** Attachments.
*/

static int dpb_add(char *dpb, int len, int cap, char tag, const char *s, size_t n) {
  if (n > 255 || len + 2 + (int)n > cap) return -1;
  dpb[len++] = tag;
  dpb[len++] = (char)n;
  memcpy(dpb + len, s, n);
  return len + (int)n;
}

static int dpb_add_int(char *dpb, int len, int cap, char tag, uint32_t v) {
  if (len + 6 > cap) return -1;
  dpb[len++] = tag;
  dpb[len++] = 4;
  for (int i = 0; i < 4; i++) dpb[len++] = (char)(v >> (8 * i));
  return len;
}

/* Build the DPB: user, password, UTF8 for text, dialect 3, the connect
** timeout; for creation also the database's character set and page size. */
static int build_dpb(sqlq_db *db, const sqlq__url *url, unsigned connect_timeout) {
  fb_db *f = FB(db);
  int cap = 1200, len = 0;
  char *dpb = malloc((size_t)cap);
  if (dpb == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  dpb[len++] = isc_dpb_version1;
  const char *user = url->user ? url->user : f->embedded ? "SYSDBA" : NULL;
  if (user) len = dpb_add(dpb, len, cap, isc_dpb_user_name, user, strlen(user));
  if (len > 0 && url->password)
    len = dpb_add(dpb, len, cap, isc_dpb_password, url->password, strlen(url->password));
  if (len > 0) len = dpb_add(dpb, len, cap, isc_dpb_lc_ctype, "UTF8", 4);
  if (len > 0) len = dpb_add_int(dpb, len, cap, isc_dpb_sql_dialect, 3);
  if (len > 0 && !f->embedded)
    len = dpb_add_int(dpb, len, cap, isc_dpb_connect_timeout, connect_timeout);
  if (len < 0) {
    free(dpb);
    return sqlq__error(db, SQLQ_MISUSE, "firebird URL: user or password longer than 255 bytes");
  }
  f->dpb = dpb;
  f->dpb_len = (short)len;
  return SQLQ_OK;
}

/* Record the failure in st to attach to (or create) db's database, naming
** the URL without its password. */
static int attach_error(sqlq_db *db, const ISC_STATUS *st, const char *what) {
  char doing[SQLQ__ERRMSG_SIZE / 2];
  snprintf(doing, sizeof doing, "firebird: cannot %s %s", what, db->url_redacted);
  return sqlq__fb_error(db, st, doing);
}

int sqlq__fb_attach(sqlq_db *db, isc_db_handle *out) {
  fb_db *f = FB(db);
  ISC_STATUS_ARRAY st;
  *out = 0;
  if (attach(st, f->dsn, out, f->dpb_len, f->dpb, 0)) return attach_error(db, st, "attach to");
  return SQLQ_OK;
}

/* Create the database file (sqlq init on a missing file): UTF8 text,
** 16 KiB pages, so that an index key holds a queue name and a dedupe key. */
static int create_database(sqlq_db *db) {
  fb_db *f = FB(db);
  char dpb[1300];
  memcpy(dpb, f->dpb, (size_t)f->dpb_len);
  int len = f->dpb_len;
  len = dpb_add(dpb, len, (int)sizeof dpb, isc_dpb_set_db_charset, "UTF8", 4);
  if (len > 0) len = dpb_add_int(dpb, len, (int)sizeof dpb, isc_dpb_page_size, 16384);
  ISC_STATUS_ARRAY st;
  if (len < 0) return sqlq__error(db, SQLQ_MISUSE, "firebird URL: user or password too long");
  if (attach(st, f->dsn, &f->att, (short)len, dpb, 1)) return attach_error(db, st, "create");
  return SQLQ_OK;
}

static int read_options(sqlq_db *db, fb_db *f, const sqlq__url *url, unsigned *connect_timeout) {
  double timeout = 10;
  int events = 1;
  f->poll_interval = 1.0;
  int rc = sqlq__url_seconds(db, url, "connect_timeout", 1, 3600, &timeout);
  if (rc == SQLQ_OK) rc = sqlq__url_switch(db, url, "events", &events);
  if (rc == SQLQ_OK) rc = sqlq__url_seconds(db, url, "poll_interval", 0.01, 60, &f->poll_interval);
  *connect_timeout = (unsigned)timeout;
  f->events_off = !events;
  return rc;
}

/* The connection string: HOST/PORT:DATABASE through a server, the path
** itself embedded. */
static int make_dsn(sqlq_db *db, fb_db *f, const sqlq__url *url) {
  const char *path = url->path;
  if (f->embedded) {
    if (path == NULL || *path == '\0')
      return sqlq__error(db, SQLQ_MISUSE, "firebird URL: no database file");
    f->dsn = strdup(path);
  } else {
    if (url->host == NULL || *url->host == '\0')
      return sqlq__error(db, SQLQ_MISUSE,
                         "firebird URL: no host (firebird://user:pass@host:port/database)");
    if (path == NULL || *path == '\0' || strcmp(path, "/") == 0)
      return sqlq__error(db, SQLQ_MISUSE,
                         "firebird URL: no database (an alias, or //absolute/path)");
    /* url.c keeps the slash after the authority: "/ALIAS" or "//abs/path". */
    const char *dbname = path[0] == '/' ? path + 1 : path;
    if (strpbrk(url->host, ":/") || strchr(dbname, '\n'))
      return sqlq__error(db, SQLQ_MISUSE, "firebird URL: bad host or database name");
    size_t n = strlen(url->host) + strlen(dbname) + 16;
    if ((f->dsn = malloc(n)) != NULL) {
      if (url->port)
        snprintf(f->dsn, n, "%s/%d:%s", url->host, url->port, dbname);
      else
        snprintf(f->dsn, n, "%s:%s", url->host, dbname);
    }
  }
  return f->dsn ? SQLQ_OK : sqlq__error(db, SQLQ_NOMEM, "out of memory");
}

static int fb_open(sqlq_db *db, const sqlq__url *url) {
  if (sqlq__dl_load(db, &sqlq__fb_lib) != SQLQ_OK) return db->errcode;
  fb_db *f = calloc(1, sizeof *f);
  if (f == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  db->driver_data = f;
  f->lock_sock = -1;
  for (int i = 0; i < FB_SQL_COUNT; i++) {
    f->stmts[i].id = i;
    f->stmts[i].fb = f;
  }
  f->embedded = url->host == NULL && strncmp(url->redacted, "firebird://", 11) != 0;
  unsigned connect_timeout;
  int rc = sqlq__url_one_host(db, url);
  if (rc == SQLQ_OK) rc = read_options(db, f, url, &connect_timeout);
  if (rc == SQLQ_OK) rc = make_dsn(db, f, url);
  if (rc == SQLQ_OK) rc = build_dpb(db, url, connect_timeout);
  if (rc != SQLQ_OK) return rc;
  ISC_STATUS_ARRAY st;
  if (attach(st, f->dsn, &f->att, f->dpb_len, f->dpb, 0)) {
    /* A missing file is made by sqlq init; anything else is an error now. */
    if (!no_such_file(st)) return attach_error(db, st, "attach to");
    f->att = 0;
  }
  size_t n = strlen(f->dsn) + 16;
  if ((db->ident = malloc(n)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  snprintf(db->ident, n, "firebird:%s", f->dsn);
  return SQLQ_OK;
}

static void fb_close(sqlq_db *db) {
  fb_db *f = FB(db);
  if (f == NULL) return;
  ISC_STATUS_ARRAY st;
  sqlq__fb_forget_wait(db);
  sqlq__fb_forget_locks(db);
  for (int i = 0; i < FB_SQL_COUNT; i++) sqlq__fb_forget(&f->stmts[i]);
  if (f->tr) isc_rollback_transaction(st, &f->tr);
  if (f->att) isc_detach_database(st, &f->att);
  free(f->dsn);
  free(f->dpb);
  free(f);
  db->driver_data = NULL;
}

static void *fb_native(sqlq_db *db) {
  return &FB(db)->att;
}

/* Drop what belonged to the lost attachment (its statements, its event
** registration, the handle) and attach again, paced by f->reattach.
** Within a transaction the call fails: the transaction died with the
** attachment, and the caller rolls it back first. */
static int reattach(sqlq_db *db) {
  fb_db *f = FB(db);
  if (f->tr)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "firebird: lost the attachment to %s in a transaction",
                       db->url_redacted);
  int64_t wait_ns = sqlq__backoff_wait_ns(&f->reattach);
  if (wait_ns > 0)
    return sqlq__error(db, SQLQ_UNAVAILABLE, "firebird: %s is unreachable; next try in %lld ms",
                       db->url_redacted, (long long)(wait_ns / 1000000));
  ISC_STATUS_ARRAY st;
  sqlq__fb_forget_wait(db);
  for (int i = 0; i < FB_SQL_COUNT; i++) sqlq__fb_forget(&f->stmts[i]);
  /* Detaching a lost attachment fails, and the handle is dead either way. */
  if (f->att && isc_detach_database(st, &f->att)) f->att = 0;
  int rc = sqlq__fb_attach(db, &f->att);
  f->lost = rc != SQLQ_OK;
  sqlq__backoff_result(&f->reattach, rc == SQLQ_OK);
  return rc;
}

int sqlq__fb_ready(sqlq_db *db) {
  return FB(db)->lost ? reattach(db) : SQLQ_OK;
}

/* Say that the database is missing (before sqlq init made it). */
static int missing(sqlq_db *db) {
  return sqlq__error(db, SQLQ_UNAVAILABLE,
                     "the Firebird database of %s does not exist: `sqlq init` creates it",
                     db->url_redacted);
}

/* ---------------------------------------------------------------------
** Transactions.
*/

int sqlq__fb_start(sqlq_db *db, isc_db_handle *att, double wait_s, isc_tr_handle *out) {
  char tpb[16];
  int n = 0;
  tpb[n++] = isc_tpb_version3;
  tpb[n++] = isc_tpb_write;
  tpb[n++] = isc_tpb_read_committed;
  tpb[n++] = isc_tpb_rec_version;
  if (wait_s == 0) {
    tpb[n++] = isc_tpb_nowait;
  } else {
    tpb[n++] = isc_tpb_wait;
    if (wait_s > 0) {
      uint32_t s = wait_s < 1 ? 1 : wait_s > 32767 ? 32767 : (uint32_t)ceil(wait_s);
      tpb[n++] = isc_tpb_lock_timeout;
      tpb[n++] = 4;
      for (int i = 0; i < 4; i++) tpb[n++] = (char)(s >> (8 * i));
    }
  }
  ISC_STATUS_ARRAY st;
  *out = 0;
  if (isc_start_transaction(st, out, 1, att, (unsigned short)n, tpb))
    return sqlq__fb_error(db, st, "cannot start a Firebird transaction");
  return SQLQ_OK;
}

/* How long a write transaction waits for a row lock: the busy timeout, or
** for ever when that is 0. */
static double write_wait(const sqlq_db *db) {
  return db->busy_timeout > 0 ? db->busy_timeout : -1;
}

static int fb_begin(sqlq_db *db, unsigned kind) {
  fb_db *f = FB(db);
  if (f->tr) return sqlq__error(db, SQLQ_MISUSE, "firebird: a transaction is already open");
  int rc = sqlq__fb_ready(db);
  if (rc != SQLQ_OK) return rc;
  if (f->att == 0) return SQLQ_OK; /* sqlq init creates the database first */
  double wait = (kind & SQLQ__TX_LAZY) && !(kind & SQLQ__TX_WAITS) ? 0 : write_wait(db);
  if (!(kind & SQLQ__TX_WRITE)) {
    char tpb[] = {isc_tpb_version3, isc_tpb_read, isc_tpb_read_committed, isc_tpb_rec_version,
                  isc_tpb_nowait};
    ISC_STATUS_ARRAY st;
    if (isc_start_transaction(st, &f->tr, 1, &f->att, (unsigned short)sizeof tpb, tpb))
      return sqlq__fb_error(db, st, "cannot start a Firebird transaction");
    return SQLQ_OK;
  }
  return sqlq__fb_start(db, &f->att, wait, &f->tr);
}

int sqlq__fb_need_tx(sqlq_db *db) {
  fb_db *f = FB(db);
  if (f->tr) return SQLQ_OK;
  int rc = sqlq__fb_ready(db);
  if (rc != SQLQ_OK) return rc;
  if (f->att == 0) return missing(db);
  return sqlq__fb_start(db, &f->att, write_wait(db), &f->tr);
}

static int end_tx(sqlq_db *db, int commit) {
  fb_db *f = FB(db);
  if (f->tr == 0) return SQLQ_OK;
  for (int i = 0; i < FB_SQL_COUNT; i++) sqlq__fb_reset(&f->stmts[i]);
  ISC_STATUS_ARRAY st;
  if (commit ? isc_commit_transaction(st, &f->tr) : isc_rollback_transaction(st, &f->tr)) {
    int rc = sqlq__fb_error(db, st, commit ? "commit" : "rollback");
    if (f->tr) {
      ISC_STATUS_ARRAY st2;
      isc_rollback_transaction(st2, &f->tr);
      f->tr = 0; /* the attachment is gone: forget the handle */
    }
    return rc;
  }
  return SQLQ_OK;
}

static int fb_commit(sqlq_db *db) {
  return end_tx(db, 1);
}

static int fb_rollback(sqlq_db *db) {
  return end_tx(db, 0);
}

/* ---------------------------------------------------------------------
** Scripts: statements separated by FB_SEP (firebird_sql.c), since PSQL
** bodies hold semicolons.
*/

/* Only sqlq init runs on a missing database: it creates it first. */
static int fb_init(sqlq_db *db) {
  if (FB(db)->att) return SQLQ_OK;
  int rc = create_database(db);
  return rc == SQLQ_OK ? fb_begin(db, SQLQ__TX_WRITE) : rc;
}

static int fb_exec(sqlq_db *db, const char *script) {
  if (FB(db)->att == 0) return missing(db);
  for (const char *s = script; *s;) {
    const char *end = strstr(s, FB_SEP);
    size_t len = end ? (size_t)(end - s) : strlen(s);
    int rc = sqlq__fb_exec_one(db, s, len);
    if (rc != SQLQ_OK) return rc;
    s += len + (end ? strlen(FB_SEP) : 0);
  }
  return SQLQ_OK;
}

static int fb_prepare(sqlq_db *db, int id, sqlq__stmt **out) {
  return sqlq__fb_prepare(db, id, out);
}

const sqlq__driver sqlq__driver_firebird = {
  .name = "firebird",
  .schemes = schemes,
  .options = options,
  .traits = SQLQ__TRAIT_NOTIFY_AT_COMMIT,
  .sql = sqlq__firebird_sql,
  /* Packed arrays travel as one VARCHAR each in the block (firebird_sql.c). */
  .array_rows_max = FB_ARRAY_ROWS_MAX,
  .array_bytes_max = FB_ARRAY_BYTES_MAX,
  .migrations = sqlq__firebird_migrations,
  .lanes_version = 12,
  .open = fb_open,
  .close = fb_close,
  .exec = fb_exec,
  .init = fb_init,
  .begin = fb_begin,
  .commit = fb_commit,
  .rollback = fb_rollback,
  .prepare = fb_prepare,
  .bind_int64 = sqlq__fb_bind_int64,
  .bind_text = sqlq__fb_bind_text,
  .bind_blob = sqlq__fb_bind_blob,
  .bind_int64_array = sqlq__fb_bind_int64_array,
  .bind_text_array = sqlq__fb_bind_text_array,
  .bind_blob_array = sqlq__fb_bind_blob_array,
  .step = sqlq__fb_step,
  .column_is_null = sqlq__fb_column_is_null,
  .column_int64 = sqlq__fb_column_int64,
  .column_blob = sqlq__fb_column_blob,
  .changes = sqlq__fb_changes,
  .reset = sqlq__fb_reset,
  .wait_prepare = sqlq__fb_wait_prepare,
  .wait = sqlq__fb_wait,
  .notify = sqlq__fb_notify,
  .lock = sqlq__fb_lock,
  .unlock = sqlq__fb_unlock,
  .lock_check = sqlq__fb_lock_check,
  .lock_xact = NULL,
  .sub_triggers = sqlq__fb_sub_triggers,
  .native = fb_native,
};
