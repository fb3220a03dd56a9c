/*
** schedule.c -- periodic jobs: sqlq_cron_add() and the other calls on
** schedules, and the scheduling pass sqlq_cron_tick().
**
** A schedule is a row of sqlq_schedules whose next_run is its next tick.
** A pass reads the rows that are due (a snapshot, outside any write), works
** out in C which ticks to enqueue and the next tick after them, and then,
** for each schedule, in one write transaction: moves next_run from the
** value it read to the new one with a compare-and-set (CRON_ADVANCE), and
** only when that changed the row, enqueues the ticks' jobs.  Of several
** passes that read the same next_run, one wins the compare-and-set; the
** others change nothing and enqueue nothing.  Each job also carries the
** dedupe key "cron:NAME:TICK", a second guard while it is unfinished.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlq_cron.h"
#include "sqlq_int.h"

#define US 1000000
/* Ticks further back than this are dropped, except under SQLQ_CRON_ALL,
** so that a late pass looks at a bounded number of them. */
#define LOOKBACK_S ((int64_t)31 * 86400)
/* The next tick of a spec that has none: the end of the year 9999. */
#define NEVER_S ((int64_t)253402300800)

/* The common checks of every call; SQLQ_UNAVAILABLE when the dialect has
** no schedules (its schema stops below version 4). */
static int check_db(sqlq_db *db) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK && db->driver->sql[SQLQ__SQL_CRON_ADD] == NULL)
    rc = sqlq__error(db, SQLQ_UNAVAILABLE, "the %s backend has no schedules", db->driver->name);
  return rc;
}

static int check_name(sqlq_db *db, const char *name) {
  int rc = check_db(db);
  return rc == SQLQ_OK ? sqlq__check_text(db, name, SQLQ_CRON_NAME_MAX, "schedule name") : rc;
}

static int no_schedule(sqlq_db *db, const char *name) {
  return sqlq__error(db, SQLQ_NOTFOUND, "there is no schedule '%s'", name);
}

/* The database's clock into *now_us. */
static int db_now(sqlq_db *db, int64_t *now_us) {
  sqlq__query q = {.sql = SQLQ__SQL_CRON_NOW, .row = sqlq__read_int64, .arg = now_us};
  return sqlq__query_run(db, &q, NULL, 0);
}

/* A schedule's spec and zone, parsed. */
struct plan {
  sqlq__cron cron;
  sqlq__tz *tz; /* owned: free with sqlq__tz_free() */
};

/* Parse the spec and load the zone of schedule name into *p.  Records
** SQLQ_MISUSE naming the schedule, or SQLQ_NOMEM. */
static int load_plan(sqlq_db *db, const char *name, const char *spec, const char *zone,
                     struct plan *p) {
  char err[256];
  p->tz = NULL;
  int rc = sqlq__cron_parse(spec, &p->cron, err, sizeof err);
  if (rc == SQLQ_OK) rc = sqlq__tz_load(zone, &p->tz, err, sizeof err);
  return rc == SQLQ_OK ? SQLQ_OK : sqlq__error(db, rc, "schedule '%s': %s", name, err);
}

/* The first tick of p after t (seconds), or NEVER_S. */
static int64_t tick_after(const struct plan *p, int64_t t) {
  int64_t next;
  return sqlq__cron_next(&p->cron, p->tz, t, &next) == SQLQ_OK ? next : NEVER_S;
}

/* Seconds of microseconds, rounded down. */
static int64_t seconds_of(int64_t us) {
  return us >= 0 ? us / US : -((-us + US - 1) / US);
}

/* ---------------------------------------------------------------------
** Rows: name, spec, zone, queue, payload, missed, paused, next_run,
** last_run (LIST and DUE).
*/

struct rows {
  const char *name; /* LIST's filter; NULL: all */
  int64_t now_us;   /* DUE's time; 0: the database's clock */
  sqlq_schedule *items;
  size_t n, cap;
};

SQLQ__API void sqlq_schedules_free(sqlq_schedule *schedules, size_t n) {
  if (schedules == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free((void *)schedules[i].name);
    free((void *)schedules[i].spec);
    free((void *)schedules[i].zone);
    free((void *)schedules[i].queue);
    free((void *)schedules[i].payload);
  }
  free(schedules);
}

static int add_row(sqlq_db *db, sqlq__stmt *st, void *arg) {
  struct rows *r = arg;
  const sqlq__driver *d = db->driver;
  int rc = sqlq__grow(db, (void **)&r->items, &r->cap, r->n, sizeof *r->items);
  if (rc != SQLQ_OK) return rc;
  sqlq_schedule *s = &r->items[r->n];
  memset(s, 0, sizeof *s);
  char **texts[] = {(char **)&s->name, (char **)&s->spec, (char **)&s->zone, (char **)&s->queue,
                    (char **)&s->payload};
  for (int i = 0; i < 5 && rc == SQLQ_OK; i++)
    rc = sqlq__column_text(db, st, i, texts[i], i == 4 ? &s->payload_len : NULL);
  r->n++; /* freed with the others, whatever it holds */
  s->missed = (int)d->column_int64(st, 5);
  s->paused = d->column_int64(st, 6) != 0;
  s->next_at_us = d->column_int64(st, 7);
  s->last_at_us = d->column_is_null(st, 8) ? 0 : d->column_int64(st, 8);
  return rc;
}

static int list_tx(sqlq_db *db, void *arg) {
  struct rows *r = arg;
  sqlq_schedules_free(r->items, r->n);
  r->items = NULL;
  r->n = r->cap = 0;
  sqlq__query q = {.sql = SQLQ__SQL_CRON_LIST, .row = add_row, .arg = r};
  return sqlq__run(db, &q, SQLQ__TEXT(r->name));
}

static int due_tx(sqlq_db *db, void *arg) {
  struct rows *r = arg;
  sqlq_schedules_free(r->items, r->n);
  r->items = NULL;
  r->n = r->cap = 0;
  int rc = r->now_us ? SQLQ_OK : db_now(db, &r->now_us);
  sqlq__query q = {.sql = SQLQ__SQL_CRON_DUE, .row = add_row, .arg = r};
  return rc == SQLQ_OK ? sqlq__run(db, &q, SQLQ__INT(r->now_us)) : rc;
}

SQLQ__API int sqlq_cron_list(sqlq_db *db, sqlq_schedule **schedules_out, size_t *n_out) {
  *schedules_out = NULL;
  *n_out = 0;
  int rc = check_db(db);
  if (rc != SQLQ_OK) return rc;
  struct rows r = {0};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, list_tx, &r);
  if (rc != SQLQ_OK) {
    sqlq_schedules_free(r.items, r.n);
    return rc;
  }
  *schedules_out = r.items;
  *n_out = r.n;
  return SQLQ_OK;
}

/* ---------------------------------------------------------------------
** Add, remove, pause, resume.
*/

/* What one call on one schedule works on. */
struct one {
  const sqlq_schedule *s; /* add's */
  const char *name;
  const char *zone;
  struct plan plan;
  int64_t changes;
};

/* The first tick of o's plan after the database's clock now, in
** microseconds, into *next_us; SQLQ_MISUSE when the spec never ticks. */
static int first_tick(sqlq_db *db, struct one *o, int64_t *next_us) {
  int64_t now_us = 0;
  int rc = db_now(db, &now_us);
  if (rc != SQLQ_OK) return rc;
  int64_t next = tick_after(&o->plan, seconds_of(now_us));
  if (next == NEVER_S)
    return sqlq__error(db, SQLQ_MISUSE, "schedule '%s': the spec never ticks", o->name);
  *next_us = next * US;
  return SQLQ_OK;
}

static int add_tx(sqlq_db *db, void *arg) {
  struct one *o = arg;
  const sqlq_schedule *s = o->s;
  int64_t next_us = 0;
  int rc = first_tick(db, o, &next_us);
  sqlq__query del = {.sql = SQLQ__SQL_CRON_REMOVE};
  if (rc == SQLQ_OK) rc = sqlq__run(db, &del, SQLQ__TEXT(s->name));
  sqlq__query q = {.sql = SQLQ__SQL_CRON_ADD};
  if (rc == SQLQ_OK)
    rc = sqlq__run(db, &q, SQLQ__TEXT(s->name), SQLQ__TEXT(s->spec), SQLQ__TEXT(o->zone),
                   SQLQ__TEXT(s->queue), SQLQ__BLOB(s->payload ? s->payload : "", s->payload_len),
                   SQLQ__INT(s->missed), SQLQ__INT(next_us));
  return rc;
}

static int check_schedule(sqlq_db *db, const sqlq_schedule *s) {
  if (s == NULL) return sqlq__error(db, SQLQ_MISUSE, "schedule is NULL");
  int rc = check_name(db, s->name);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, s->queue);
  if (rc == SQLQ_OK) rc = sqlq__check_text(db, s->spec, SQLQ_CRON_SPEC_MAX, "schedule spec");
  if (rc != SQLQ_OK) return rc;
  if (s->payload == NULL && s->payload_len > 0)
    return sqlq__error(db, SQLQ_MISUSE, "payload is NULL but its length is %zu", s->payload_len);
  if (s->payload_len > db->payload_limit)
    return sqlq__error(db, SQLQ_TOOBIG, "payload of %zu bytes is over the limit of %zu bytes",
                       s->payload_len, db->payload_limit);
  if (s->missed < SQLQ_CRON_ALL || s->missed > SQLQ_CRON_MISSED_MAX)
    return sqlq__error(db, SQLQ_MISUSE,
                       "missed is %d: it takes SQLQ_CRON_ALL (-1), SQLQ_CRON_SKIP (0) or a "
                       "number of ticks from 1 to %d",
                       s->missed, SQLQ_CRON_MISSED_MAX);
  return SQLQ_OK;
}

SQLQ__API int sqlq_cron_add(sqlq_db *db, const sqlq_schedule *s) {
  int rc = sqlq__enter(db);
  if (rc == SQLQ_OK) rc = check_schedule(db, s);
  if (rc != SQLQ_OK) return rc;
  struct one o = {.s = s, .name = s->name, .zone = s->zone ? s->zone : "UTC"};
  if ((rc = load_plan(db, s->name, s->spec, o.zone, &o.plan)) == SQLQ_OK)
    rc = sqlq__in_tx(db, SQLQ__TX_WRITE, add_tx, &o);
  sqlq__tz_free(o.plan.tz);
  return rc;
}

/* Run sql, which takes $1 name, on o's schedule: SQLQ_NOTFOUND when it
** changed no row. */
static int name_tx(sqlq_db *db, int sql, struct one *o) {
  sqlq__query q = {.sql = sql, .flags = SQLQ__Q_CHANGES};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(o->name));
  return rc == SQLQ_OK && q.changes == 0 ? no_schedule(db, o->name) : rc;
}

static int remove_tx(sqlq_db *db, void *arg) {
  return name_tx(db, SQLQ__SQL_CRON_REMOVE, arg);
}

static int pause_tx(sqlq_db *db, void *arg) {
  return name_tx(db, SQLQ__SQL_CRON_PAUSE, arg);
}

/* Resume: the next tick counts from now. */
static int resume_tx(sqlq_db *db, void *arg) {
  struct one *o = arg;
  struct rows r = {.name = o->name};
  int64_t next_us = 0;
  int rc = list_tx(db, &r);
  if (rc == SQLQ_OK && r.n == 0) rc = no_schedule(db, o->name);
  sqlq__tz_free(o->plan.tz);
  o->plan.tz = NULL;
  if (rc == SQLQ_OK) rc = load_plan(db, o->name, r.items[0].spec, r.items[0].zone, &o->plan);
  if (rc == SQLQ_OK) rc = first_tick(db, o, &next_us);
  sqlq__query q = {.sql = SQLQ__SQL_CRON_RESUME};
  if (rc == SQLQ_OK) rc = sqlq__run(db, &q, SQLQ__TEXT(o->name), SQLQ__INT(next_us));
  sqlq_schedules_free(r.items, r.n);
  return rc;
}

/* Run fn on the schedule called name in a write transaction. */
static int on_name(sqlq_db *db, const char *name, int (*fn)(sqlq_db *, void *)) {
  int rc = check_name(db, name);
  if (rc != SQLQ_OK) return rc;
  struct one o = {.name = name};
  rc = sqlq__in_tx(db, SQLQ__TX_WRITE, fn, &o);
  sqlq__tz_free(o.plan.tz);
  return rc;
}

SQLQ__API int sqlq_cron_remove(sqlq_db *db, const char *name) {
  return on_name(db, name, remove_tx);
}

SQLQ__API int sqlq_cron_pause(sqlq_db *db, const char *name) {
  return on_name(db, name, pause_tx);
}

SQLQ__API int sqlq_cron_resume(sqlq_db *db, const char *name) {
  return on_name(db, name, resume_tx);
}

/* ---------------------------------------------------------------------
** The scheduling pass.
*/

/* What a pass does with one due schedule. */
struct advance {
  const sqlq_schedule *s;
  int64_t ticks[SQLQ_CRON_MISSED_MAX]; /* seconds, oldest first */
  size_t n;
  int64_t next;    /* the new next tick, seconds */
  size_t enqueued; /* jobs stored (not folded into a duplicate) */
};

/* Fill a->ticks with the ticks of s that a pass at now (seconds) enqueues
** under s's policy, and a->next with the first tick after the last one
** looked at.  Bounded: at most SQLQ_CRON_MISSED_MAX ticks under
** SQLQ_CRON_ALL, and otherwise those of the last LOOKBACK_S seconds (of an
** interval, only as many as are kept). */
static void due_ticks(const struct plan *p, const sqlq_schedule *s, int64_t now,
                      struct advance *a) {
  size_t keep = s->missed == SQLQ_CRON_ALL ? SQLQ_CRON_MISSED_MAX
                : s->missed > 0            ? (size_t)s->missed
                                           : 1;
  int64_t t = seconds_of(s->next_at_us), seen = 0;
  if (s->missed != SQLQ_CRON_ALL) {
    int64_t from = p->cron.every ? now - (int64_t)keep * p->cron.every : now - LOOKBACK_S;
    if (from >= t) t = tick_after(p, from);
  }
  for (; t <= now && !(s->missed == SQLQ_CRON_ALL && seen == (int64_t)keep); seen++) {
    a->ticks[seen % keep] = t;
    t = tick_after(p, t);
  }
  a->next = t;
  /* The ring a->ticks holds the last keep ticks: put the oldest first. */
  a->n = seen < (int64_t)keep ? (size_t)seen : keep;
  if ((size_t)seen > keep) {
    int64_t ordered[SQLQ_CRON_MISSED_MAX];
    for (size_t i = 0; i < keep; i++) ordered[i] = a->ticks[(seen + i) % keep];
    memcpy(a->ticks, ordered, keep * sizeof *ordered);
  }
  if (s->missed == SQLQ_CRON_SKIP && a->n == 1 && now - a->ticks[0] > SQLQ_CRON_GRACE) a->n = 0;
}

/* One schedule's compare-and-set and, when it won, its jobs. */
static int advance_tx(sqlq_db *db, void *arg) {
  struct advance *a = arg;
  const sqlq_schedule *s = a->s;
  a->enqueued = 0;
  sqlq__query q = {.sql = SQLQ__SQL_CRON_ADVANCE, .flags = SQLQ__Q_CHANGES};
  int rc = sqlq__run(db, &q, SQLQ__TEXT(s->name), SQLQ__INT(s->next_at_us), SQLQ__INT(a->next * US),
                     SQLQ__INT(a->n ? a->ticks[a->n - 1] * US : 0));
  if (rc != SQLQ_OK || q.changes == 0) return rc; /* another pass took these ticks */
  for (size_t i = 0; i < a->n && rc == SQLQ_OK; i++) {
    char key[SQLQ_CRON_NAME_MAX + 32];
    snprintf(key, sizeof key, "cron:%s:%" PRId64, s->name, a->ticks[i] * US);
    sqlq_job_spec spec = {.payload = s->payload, .payload_len = s->payload_len, .dedupe_key = key};
    int64_t id = 0;
    int duplicate = 0;
    rc = sqlq__enqueue_in_tx(db, s->queue, &spec, &id, &duplicate);
    a->enqueued += !duplicate;
  }
  return rc;
}

/* Run the pass of one due schedule, s, at now (seconds); adds the jobs
** it stored to *enqueued. */
static int run_schedule(sqlq_db *db, const sqlq_schedule *s, int64_t now, size_t *enqueued) {
  struct plan p;
  int rc = load_plan(db, s->name, s->spec, s->zone, &p);
  if (rc == SQLQ_OK) rc = sqlq__check_queue(db, s->queue);
  struct advance *a = rc == SQLQ_OK ? malloc(sizeof *a) : NULL;
  if (rc == SQLQ_OK && a == NULL) rc = sqlq__error(db, SQLQ_NOMEM, "out of memory");
  if (rc == SQLQ_OK) {
    a->s = s;
    due_ticks(&p, s, now, a);
    rc = sqlq__in_tx(db, SQLQ__TX_WRITE, advance_tx, a);
    if (rc == SQLQ_OK) *enqueued += a->enqueued;
    if (rc == SQLQ_OK) sqlq__count_enqueued(db, s->queue, a->enqueued);
  }
  free(a);
  sqlq__tz_free(p.tz);
  return rc;
}

static int next_tx(sqlq_db *db, void *arg) {
  sqlq__query q = {.sql = SQLQ__SQL_CRON_NEXT, .row = sqlq__read_int64, .arg = arg};
  return sqlq__query_run(db, &q, NULL, 0);
}

SQLQ__API int sqlq_cron_tick(sqlq_db *db, int64_t now_at_us, size_t *enqueued_out,
                             int64_t *next_at_us_out) {
  if (enqueued_out) *enqueued_out = 0;
  if (next_at_us_out) *next_at_us_out = 0;
  int rc = check_db(db);
  if (rc != SQLQ_OK) return rc;
  if (now_at_us < 0 || now_at_us >= (NEVER_S - SQLQ__CRON_HORIZON) * US)
    return sqlq__error(db, SQLQ_MISUSE, "now_at_us %" PRId64 " is out of range", now_at_us);
  struct rows r = {.now_us = now_at_us};
  size_t enqueued = 0;
  sqlq__saved_error first = {SQLQ_OK, ""};
  rc = sqlq__in_tx(db, SQLQ__TX_READ, due_tx, &r);
  /* A schedule that fails is left as it is; the others still run. */
  for (size_t i = 0; rc == SQLQ_OK && i < r.n; i++) {
    int one = run_schedule(db, &r.items[i], seconds_of(r.now_us), &enqueued);
    if (one != SQLQ_OK && one != SQLQ_MISUSE) rc = one;
    if (one == SQLQ_MISUSE && first.code == SQLQ_OK) sqlq__save_error(db, &first);
  }
  sqlq_schedules_free(r.items, r.n);
  int64_t next_us = 0;
  if (rc == SQLQ_OK) rc = sqlq__in_tx(db, SQLQ__TX_READ, next_tx, &next_us);
  if (enqueued_out) *enqueued_out = enqueued;
  sqlq__counts_flush_due(db);
  if (rc == SQLQ_OK && next_at_us_out) *next_at_us_out = next_us;
  if (rc == SQLQ_OK && first.code != SQLQ_OK) {
    sqlq__restore_error(db, &first);
    rc = first.code;
  }
  return rc;
}
