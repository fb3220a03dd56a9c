/*
** firebird_wait.c -- wake-ups of the Firebird driver: POST_EVENT and
** isc_que_events.
**
** Each channel has an event, 'sqlq_' || HASH(channel) (FB_SQL_EVENT_NAME).
** The triggers of firebird_sql.c post a queue's event whenever one of its
** jobs may have become claimable, whoever wrote the row; notify posts the
** events of the other channels (rings), which only the library touches.
** Firebird delivers a posted event when the posting transaction commits,
** and not at all when it rolls back.
**
** A waiting handle registers its channel's event with isc_que_events on an
** attachment of its own, the events attachment, not on the main one: when
** isc_que_events fails (the server could not open its auxiliary port, the
** one RemoteAuxPort fixes), the attachment it was called on is broken too
** (seen: every later statement on it failed with "Error writing data to the
** connection"), and the main attachment must survive that.
**
** A registration is one-shot: its callback comes once, with the event's
** count so far, and the request is then queued again with the buffer that
** isc_event_counts updated; a post in between makes the new request call
** back at once, so nothing is lost between callbacks.  The first callback
** of a fresh registration comes at once with the count of earlier posts (the
** priming round): it announces nothing and is only queued again.
** wait_prepare queues the request before the core's check, so that a commit
** after the check always calls back; a registration is kept while the
** handle waits on the same channel, and made anew for another one.
**
** Callbacks run on a thread of the client library, and may come after
** isc_cancel_events: through a server, the cancel itself calls back once
** more, with no counts; embedded, a delivery may be under way.  So a
** callback's argument is not a pointer but the number of its request,
** looked up under a mutex in the process's list of registrations; a request
** no longer on the list (cancelled, or its handle closed) is ignored.  The
** callback copies the counts and writes the registration's eventfd, which
** wait watches beside the handle's own.
**
** When events cannot be had (the URL option events=off, or the attachment
** or isc_que_events failed), a waiter looks again every poll_interval
** seconds (URL option, 1 by default); a failed registration is tried again
** after RETRY_S.  When the server goes away, no callback comes: a server
** stopped with SIGTERM closes the attachments' own connections at once,
** but keeps each events connection open, and does not exit until its
** client closes it (seen: a restart took 28 s with one idle waiter, under
** 2 s without).  So a sleeping waiter pings its events attachment every
** PING_S; a ping that fails gives the events up, which closes their
** connection and lets such a server stop, and wakes the waiter, whose
** look then finds the main attachment lost and attaches again.  A waiter
** with events also looks every RECHECK_S, for posts that were lost.
*/
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "firebird_int.h"

/* Seconds a waiter with events sleeps at most between looks. */
#define RECHECK_S 30
/* Seconds between attempts at events after a failed one. */
#define RETRY_S 60
/* Seconds between pings of the events attachment while a waiter sleeps. */
#define PING_S 2

/* The events of one handle.  The fields after `shared` are the callback's
** too, and read and written under reg_lock only. */
struct fb_events {
  isc_db_handle att;      /* the events attachment, 0 when none */
  isc_db_handle main_att; /* the main attachment it serves */
  int64_t retry_at_ns;    /* after a failure: no attempt before this */
  char *channel;          /* the channel registered (owned), or NULL */
  ISC_UCHAR *ev, *res;    /* isc_event_block's buffers (isc_free) */
  short len;              /* their length */
  ISC_LONG que_id;        /* isc_que_events' id of the queued request */
  int primed;             /* the registration's first callback came */
  int aux_cloexec;        /* att's auxiliary connection is close-on-exec */
  int efd;                /* eventfd written by each callback */
  struct fb_events *next; /* the process's list */
  /* shared: */
  uintptr_t req;   /* number of the queued request; 0: none */
  int fired;       /* that request called back */
  int fired_empty; /* ... without counts (cancelled or lost) */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fb_events *registry;
static uintptr_t last_req;

/* The callback of every request: req is the request's number. */
static void on_event(void *arg, ISC_USHORT len, const ISC_UCHAR *updated) {
  uintptr_t req = (uintptr_t)arg;
  pthread_mutex_lock(&reg_lock);
  for (struct fb_events *e = registry; e; e = e->next) {
    if (e->req != req || e->fired) continue;
    e->fired = 1;
    e->fired_empty = updated == NULL || len != (ISC_USHORT)e->len;
    if (!e->fired_empty) memcpy(e->res, updated, len);
    uint64_t one = 1;
    ssize_t w;
    do w = write(e->efd, &one, sizeof one);
    while (w < 0 && errno == EINTR);
    break;
  }
  pthread_mutex_unlock(&reg_lock);
}

/* Queue e's request with its buffers.  Returns whether it was queued. */
static int queue_request(struct fb_events *e) {
  pthread_mutex_lock(&reg_lock);
  if (++last_req == 0) ++last_req;
  uintptr_t req = last_req;
  e->req = req;
  e->fired = 0;
  pthread_mutex_unlock(&reg_lock);
  ISC_STATUS_ARRAY st;
  /* The first request of an attachment opens its connection to the
  ** server's auxiliary port, without close-on-exec (see firebird.c). */
  sqlq__fb_fds fds = {NULL, -1};
  if (!e->aux_cloexec) sqlq__fb_fds_note(&fds);
  ISC_STATUS r = isc_que_events(st, &e->att, &e->que_id, e->len, e->ev, on_event, (void *)req);
  if (!e->aux_cloexec) {
    sqlq__fb_fds_cloexec_new(&fds);
    e->aux_cloexec = r == 0;
  }
  if (r == 0) return 1;
  pthread_mutex_lock(&reg_lock);
  e->req = 0;
  pthread_mutex_unlock(&reg_lock);
  return 0;
}

/* Cancel e's request, if one is queued and has not called back.  Any
** callback it still makes is ignored. */
static void cancel_request(struct fb_events *e) {
  pthread_mutex_lock(&reg_lock);
  int queued = e->req != 0 && !e->fired;
  e->req = 0;
  pthread_mutex_unlock(&reg_lock);
  if (queued) {
    ISC_STATUS_ARRAY st;
    isc_cancel_events(st, &e->att, &e->que_id);
  }
}

static void drain(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) > 0) {}
}

/* Forget the registration: the request, the buffers, the channel. */
static void unregister(struct fb_events *e) {
  cancel_request(e);
  if (e->ev) isc_free((ISC_SCHAR *)e->ev);
  if (e->res) isc_free((ISC_SCHAR *)e->res);
  e->ev = e->res = NULL;
  free(e->channel);
  e->channel = NULL;
  e->primed = 0;
  drain(e->efd);
}

/* Give the events attachment up after a failure: waiters poll until
** RETRY_S from now. */
static void give_up(struct fb_events *e) {
  unregister(e);
  if (e->att) {
    ISC_STATUS_ARRAY st;
    isc_detach_database(st, &e->att);
    e->att = 0;
  }
  e->retry_at_ns = sqlq__monotonic_ns() + RETRY_S * INT64_C(1000000000);
}

/* Take the callback of e's request if it came: update the counts and
** queue the request again.  Returns 1 when it announced a post, 0 when
** there was none (or only the priming round's), -1 when the events were
** lost (then they are given up). */
static int take_callback(struct fb_events *e) {
  ISC_ULONG counts[ISC_STATUS_LENGTH] = {0};
  drain(e->efd);
  pthread_mutex_lock(&reg_lock);
  int fired = e->req != 0 && e->fired, empty = e->fired_empty;
  if (fired && !empty) isc_event_counts(counts, e->len, e->ev, e->res);
  if (fired) e->req = 0;
  pthread_mutex_unlock(&reg_lock);
  if (!fired) return 0;
  if (empty || !queue_request(e)) {
    give_up(e);
    return -1;
  }
  int posted = e->primed && counts[0] > 0;
  e->primed = 1;
  return posted;
}

/* Put the name of channel's event (up to 25 characters) in name. */
static int event_name(sqlq_db *db, const char *channel, char name[32]) {
  const sqlq__driver *d = db->driver;
  int rc = d->begin(db, SQLQ__TX_READ);
  if (rc != SQLQ_OK) return rc;
  sqlq__stmt *st;
  rc = sqlq__fb_prepare(db, FB_SQL_EVENT_NAME, &st);
  if (rc == SQLQ_OK) {
    sqlq__fb_bind_text(st, 1, channel);
    rc = sqlq__fb_step(db, st);
    size_t len = 0;
    const char *p = rc == SQLQ__ROW ? sqlq__fb_column_blob(st, 0, &len) : NULL;
    if (p && len > 0 && len < 32) {
      memcpy(name, p, len);
      name[len] = '\0';
      rc = SQLQ_OK;
    } else if (rc == SQLQ__ROW || rc == SQLQ__DONE) {
      rc = sqlq__error(db, SQLQ_ERROR, "firebird: no event name for a channel");
    }
    sqlq__fb_reset(st);
  }
  if (rc == SQLQ_OK) return d->commit(db);
  sqlq__saved_error saved;
  sqlq__save_error(db, &saved);
  d->rollback(db);
  sqlq__restore_error(db, &saved);
  return rc;
}

/* Make db's events state, on the process's list. */
static struct fb_events *events_of(sqlq_db *db) {
  fb_db *f = FB(db);
  if (f->events) return f->events;
  struct fb_events *e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  if ((e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    free(e);
    return NULL;
  }
  pthread_mutex_lock(&reg_lock);
  e->next = registry;
  registry = e;
  pthread_mutex_unlock(&reg_lock);
  f->events = e;
  return e;
}

/* Register channel's event on the events attachment (made when there is
** none).  A failure of events is no error: the waiter polls.  Looking up
** the event's name may reattach a lost main attachment, which frees e
** (sqlq__fb_forget_wait): then this wait polls, and the next one starts
** afresh. */
static int register_channel(sqlq_db *db, struct fb_events *e, const char *channel) {
  char name[32];
  int rc = event_name(db, channel, name);
  if (rc != SQLQ_OK) return rc;
  if (FB(db)->events == NULL) return SQLQ_OK; /* e is freed */
  unregister(e);
  if ((e->channel = strdup(channel)) == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  long len = isc_event_block(&e->ev, &e->res, 1, name);
  if (len <= 0 || len > 32767 || e->ev == NULL || e->res == NULL) {
    give_up(e);
    return SQLQ_OK;
  }
  e->len = (short)len;
  if (e->att == 0) {
    sqlq__saved_error saved;
    sqlq__save_error(db, &saved);
    rc = sqlq__fb_attach(db, &e->att);
    e->aux_cloexec = 0;
    sqlq__restore_error(db, &saved);
    if (rc != SQLQ_OK) e->att = 0;
  }
  if (e->att == 0 || !queue_request(e)) give_up(e);
  return SQLQ_OK;
}

int sqlq__fb_wait_prepare(sqlq_db *db, const char *channel) {
  fb_db *f = FB(db);
  if (f->events_off || f->att == 0) return SQLQ_OK;
  struct fb_events *e = events_of(db);
  if (e == NULL) return SQLQ_OK; /* out of memory or descriptors: poll */
  if (e->main_att != f->att) {
    /* A new main attachment: start afresh. */
    give_up(e);
    e->main_att = f->att;
    e->retry_at_ns = 0;
  }
  if (e->att == 0 && sqlq__monotonic_ns() < e->retry_at_ns) return SQLQ_OK;
  if (e->att && e->channel && strcmp(e->channel, channel) == 0) {
    take_callback(e);
    return SQLQ_OK;
  }
  return register_channel(db, e, channel);
}

/* Sleep on wake_fd until the deadline or for poll_interval. */
static int poll_once(fb_db *f, int wake_fd, int64_t deadline_ns) {
  int64_t until = sqlq__monotonic_ns() + (int64_t)(f->poll_interval * 1e9);
  int timed = deadline_ns >= 0 && deadline_ns <= until;
  struct pollfd p = {.fd = wake_fd, .events = POLLIN};
  int r = poll(&p, 1, sqlq__poll_ms(timed ? deadline_ns : until));
  if (r == 0 && timed) return SQLQ_TIMEOUT;
  return SQLQ_OK;
}

/* Whether the server still answers on e's attachment (one round trip). */
static int answers(struct fb_events *e) {
  static const ISC_SCHAR items[] = {isc_info_attachment_id};
  ISC_SCHAR buf[32];
  ISC_STATUS_ARRAY st;
  return isc_database_info(st, &e->att, (short)sizeof items, items, (short)sizeof buf, buf) == 0;
}

int sqlq__fb_wait(sqlq_db *db, const char *channel, int wake_fd, int64_t deadline_ns) {
  fb_db *f = FB(db);
  struct fb_events *e = f->events;
  if (e == NULL || e->att == 0 || e->channel == NULL || strcmp(e->channel, channel) != 0)
    return poll_once(f, wake_fd, deadline_ns);
  int64_t recheck = sqlq__monotonic_ns() + RECHECK_S * INT64_C(1000000000);
  int timed = deadline_ns >= 0 && deadline_ns <= recheck;
  int64_t until = timed ? deadline_ns : recheck;
  for (;;) {
    int64_t ping = sqlq__monotonic_ns() + PING_S * INT64_C(1000000000);
    struct pollfd fds[2] = {{.fd = wake_fd, .events = POLLIN}, {.fd = e->efd, .events = POLLIN}};
    int r = poll(fds, 2, sqlq__poll_ms(ping < until ? ping : until));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return sqlq__error(db, SQLQ_ERROR, "firebird: poll failed: %s", strerror(errno));
    if (r == 0 && sqlq__monotonic_ns() < until) {
      if (answers(e)) continue;
      give_up(e);
      return SQLQ_OK;
    }
    if (r == 0) return timed ? SQLQ_TIMEOUT : SQLQ_OK;
    if (fds[0].revents) return SQLQ_OK;
    /* A post, or events lost (look, and poll from now on). */
    if (take_callback(e) != 0) return SQLQ_OK;
  }
}

int sqlq__fb_notify(sqlq_db *db, const char *channel, int n) {
  (void)n; /* an event carries no count: every waiter looks */
  /* A queue's event is posted by the triggers (queue names hold no control
  ** character; other channels start with one). */
  if ((unsigned char)channel[0] >= 0x20) return SQLQ_OK;
  sqlq__stmt *st;
  int rc = sqlq__fb_prepare(db, FB_SQL_POST, &st);
  if (rc != SQLQ_OK) return rc;
  sqlq__fb_bind_text(st, 1, channel);
  rc = sqlq__fb_step(db, st);
  sqlq__fb_reset(st);
  return rc == SQLQ__DONE ? SQLQ_OK : rc;
}

void sqlq__fb_forget_wait(sqlq_db *db) {
  fb_db *f = FB(db);
  struct fb_events *e = f->events;
  if (e == NULL) return;
  /* Off the list first: a callback from now on finds nothing. */
  pthread_mutex_lock(&reg_lock);
  for (struct fb_events **p = &registry; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  pthread_mutex_unlock(&reg_lock);
  give_up(e);
  close(e->efd);
  free(e);
  f->events = NULL;
}
