/*
** test_cron.c -- periodic jobs: schedules added, listed, paused, resumed
** and removed; scheduling passes at given times (sqlq_cron_tick()'s
** injectable clock) that enqueue exactly one job per tick, also with five
** schedulers at once whose jobs are consumed as they come (so that the
** dedupe key alone, which covers unfinished jobs only, could not hide a
** second job for a tick); the missed-run policies; and refusals of bad
** input.  Schedules are named after the fixture's queue and removed at
** the end; assertions look at the fixture's queues only, since a pass
** runs every schedule of the database.
*/
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define US 1000000

/* Add a schedule name of spec on queue with policy missed and payload
** text; returns its first tick. */
static int64_t add(sqlq_db *db, const char *name, const char *spec, const char *queue, int missed,
                   const char *payload) {
  sqlq_schedule s = {.name = name,
                     .spec = spec,
                     .queue = queue,
                     .payload = payload,
                     .payload_len = payload ? strlen(payload) : 0,
                     .missed = missed};
  assert_ok(db, sqlq_cron_add(db, &s));
  sqlq_schedule *all = NULL;
  size_t n = 0;
  int64_t next = 0;
  assert_ok(db, sqlq_cron_list(db, &all, &n));
  for (size_t i = 0; i < n; i++)
    if (strcmp(all[i].name, name) == 0) next = all[i].next_at_us;
  sqlq_schedules_free(all, n);
  assert_true(next > 0);
  return next;
}

/* The schedule called name, copied into *out (strings not kept); 0 when
** there is none. */
static int find(sqlq_db *db, const char *name, sqlq_schedule *out) {
  sqlq_schedule *all = NULL;
  size_t n = 0;
  int found = 0;
  assert_ok(db, sqlq_cron_list(db, &all, &n));
  for (size_t i = 0; i < n; i++)
    if (strcmp(all[i].name, name) == 0) {
      *out = all[i];
      out->name = out->spec = out->zone = out->queue = NULL;
      out->payload = NULL;
      found = 1;
    }
  sqlq_schedules_free(all, n);
  return found;
}

/* The ticks (microseconds) of the jobs of queue, from their dedupe keys
** "cron:NAME:TICK", in id order, into ticks (room for max); returns how
** many jobs the queue has. */
static size_t job_ticks(sqlq_db *db, const char *queue, const char *name, int64_t *ticks,
                        size_t max) {
  sqlq_job_info *jobs = NULL;
  size_t n = 0, k = 0;
  char prefix[256];
  snprintf(prefix, sizeof prefix, "cron:%s:", name);
  assert_ok(db, sqlq_list(db, queue, 0, 0, &jobs, &n));
  for (size_t i = 0; i < n; i++) {
    assert_non_null(jobs[i].dedupe_key);
    assert_memory_equal(jobs[i].dedupe_key, prefix, strlen(prefix));
    if (k < max) ticks[k++] = strtoll(jobs[i].dedupe_key + strlen(prefix), NULL, 10);
  }
  sqlq_job_infos_free(jobs, n);
  return n;
}

/* A schedule is stored as given, listed with its next tick, replaced by
** an add of the same name, and removed. */
static void cron_add_list_remove(void **state) {
  fixture *f = *state;
  char name[128];
  sqlq_schedule s = {0}, got;
  fx_name(f, "cron", name, sizeof name);
  s.name = name;
  s.spec = "*/5 * * * *";
  s.zone = "Europe/Paris";
  s.queue = f->queue;
  s.payload = "hello\0world";
  s.payload_len = 11;
  s.missed = 3;
  assert_ok(f->db, sqlq_cron_add(f->db, &s));
  sqlq_schedule *all = NULL;
  size_t n = 0, i, at = (size_t)-1;
  assert_ok(f->db, sqlq_cron_list(f->db, &all, &n));
  for (i = 0; i < n; i++)
    if (strcmp(all[i].name, name) == 0) at = i;
  assert_true(at < n);
  assert_string_equal(all[at].spec, "*/5 * * * *");
  assert_string_equal(all[at].zone, "Europe/Paris");
  assert_string_equal(all[at].queue, f->queue);
  assert_int_equal(all[at].payload_len, 11);
  assert_memory_equal(all[at].payload, "hello\0world", 11);
  assert_int_equal(all[at].missed, 3);
  assert_int_equal(all[at].paused, 0);
  assert_int_equal(all[at].last_at_us, 0);
  /* A whole five minutes, at most five minutes ahead of the database's clock. */
  assert_int_equal(all[at].next_at_us % (300 * (int64_t)US), 0);
  sqlq_schedules_free(all, n);

  s.spec = "@every 1h";
  s.zone = NULL;
  s.missed = SQLQ_CRON_ALL;
  assert_ok(f->db, sqlq_cron_add(f->db, &s));
  assert_true(find(f->db, name, &got));
  assert_int_equal(got.missed, SQLQ_CRON_ALL);
  assert_int_equal(got.next_at_us % (3600 * (int64_t)US), 0);

  assert_ok(f->db, sqlq_cron_remove(f->db, name));
  assert_false(find(f->db, name, &got));
  assert_status(f->db, sqlq_cron_remove(f->db, name), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_cron_pause(f->db, name), SQLQ_NOTFOUND);
  assert_status(f->db, sqlq_cron_resume(f->db, name), SQLQ_NOTFOUND);
}

/* A pass at a tick enqueues its job, with the schedule's payload and the
** tick's dedupe key, and moves the next tick on; a second pass at the same
** time enqueues nothing. */
static void cron_tick_enqueues_once(void **state) {
  fixture *f = *state;
  char name[128];
  fx_name(f, "cron", name, sizeof name);
  int64_t first = add(f->db, name, "@every 1s", f->queue, SQLQ_CRON_ALL, "tick");
  size_t enqueued = 99;
  int64_t next = 0, tick = 0;
  assert_ok(f->db, sqlq_cron_tick(f->db, first - 1, &enqueued, &next));
  assert_int_equal(fx_count(f->db, f, 0), 0);
  assert_ok(f->db, sqlq_cron_tick(f->db, first, &enqueued, &next));
  assert_true(enqueued >= 1);
  assert_true(next > 0 && next <= first + US);
  assert_int_equal(job_ticks(f->db, f->queue, name, &tick, 1), 1);
  assert_int_equal(tick, first);
  claimed c = fx_claim_one(f->db, f, 30);
  assert_true(c.id > 0);
  assert_ok(f->db, sqlq_ack(f->db, c.id, c.token));
  /* The job is gone: the dedupe key guards nothing now, the schedule does. */
  assert_ok(f->db, sqlq_cron_tick(f->db, first, &enqueued, NULL));
  assert_int_equal(fx_count(f->db, f, 0), 0);
  sqlq_schedule got;
  assert_true(find(f->db, name, &got));
  assert_int_equal(got.next_at_us, first + US);
  assert_int_equal(got.last_at_us, first);
  assert_ok(f->db, sqlq_cron_tick(f->db, first + US + 500000, &enqueued, NULL));
  assert_int_equal(job_ticks(f->db, f->queue, name, &tick, 1), 1);
  assert_int_equal(tick, first + US);
  assert_ok(f->db, sqlq_cron_remove(f->db, name));
}

/* One policy's schedule: "@every 10s" on its own queue. */
struct policy_case {
  int missed;
  int64_t late;   /* the pass comes this many seconds after the first tick */
  size_t jobs;    /* and enqueues this many */
  int64_t oldest; /* seconds after the first tick of the oldest job */
};

/* A pass 95 s after the first tick of "@every 10s" finds ten ticks due:
** all enqueues the ten, once the latest, 3 the latest three, skip the
** latest (5 s late, within the grace); with ticks of ten minutes, a pass
** two minutes past the latest tick enqueues nothing under skip. */
static void cron_missed_policies(void **state) {
  fixture *f = *state;
  static const struct policy_case cases[] = {
    {SQLQ_CRON_ALL, 95, 10, 0},  {SQLQ_CRON_ONCE, 95, 1, 90},  {3, 95, 3, 70},
    {SQLQ_CRON_SKIP, 95, 1, 90}, {SQLQ_CRON_SKIP, 1320, 0, 0}, {SQLQ_CRON_ONCE, 1320, 1, 1200},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct policy_case *pc = &cases[i];
    char name[128], queue[128], suffix[16];
    int64_t ticks[16];
    snprintf(suffix, sizeof suffix, "p%zu", i);
    fx_name(f, suffix, name, sizeof name);
    fx_name(f, suffix, queue, sizeof queue);
    int64_t step = pc->late > 100 ? 600 : 10;
    int64_t first =
      add(f->db, name, step == 10 ? "@every 10s" : "@every 10m", queue, pc->missed, NULL);
    assert_ok(f->db, sqlq_cron_tick(f->db, first + pc->late * US, NULL, NULL));
    size_t n = job_ticks(f->db, queue, name, ticks, 16);
    if (n != pc->jobs) fail_msg("case %zu: %zu jobs, expected %zu", i, n, pc->jobs);
    for (size_t k = 0; k < n; k++)
      assert_int_equal(ticks[k], first + (pc->oldest + (int64_t)k * step) * US);
    sqlq_schedule got;
    assert_true(find(f->db, name, &got));
    /* The next tick is the first after the pass, whatever was enqueued. */
    assert_true(got.next_at_us > first + pc->late * US);
    assert_true(got.next_at_us <= first + (pc->late + step) * US);
    assert_ok(f->db, sqlq_cron_remove(f->db, name));
    size_t purged = 0;
    assert_ok(f->db, sqlq_purge(f->db, queue, &purged));
  }
}

/* Under all, a backlog over SQLQ_CRON_MISSED_MAX ticks takes more than one
** pass, the oldest ticks first, none twice. */
static void cron_all_backlog(void **state) {
  fixture *f = *state;
  char name[128];
  fx_name(f, "cron", name, sizeof name);
  int64_t first = add(f->db, name, "@every 1s", f->queue, SQLQ_CRON_ALL, NULL);
  int64_t now = first + (int64_t)SQLQ_CRON_MISSED_MAX * US;
  assert_ok(f->db, sqlq_cron_tick(f->db, now, NULL, NULL));
  assert_int_equal(fx_count(f->db, f, 0), SQLQ_CRON_MISSED_MAX);
  sqlq_schedule got;
  assert_true(find(f->db, name, &got));
  assert_int_equal(got.next_at_us, now);
  assert_ok(f->db, sqlq_cron_tick(f->db, now, NULL, NULL));
  assert_int_equal(fx_count(f->db, f, 0), SQLQ_CRON_MISSED_MAX + 1);
  assert_ok(f->db, sqlq_cron_tick(f->db, now, NULL, NULL));
  assert_int_equal(fx_count(f->db, f, 0), SQLQ_CRON_MISSED_MAX + 1);
  assert_ok(f->db, sqlq_cron_remove(f->db, name));
}

/* A paused schedule enqueues nothing; resumed, it ticks from now on. */
static void cron_pause_resume(void **state) {
  fixture *f = *state;
  char name[128];
  fx_name(f, "cron", name, sizeof name);
  int64_t first = add(f->db, name, "@every 1s", f->queue, SQLQ_CRON_ALL, NULL);
  assert_ok(f->db, sqlq_cron_pause(f->db, name));
  sqlq_schedule got;
  assert_true(find(f->db, name, &got));
  assert_int_equal(got.paused, 1);
  assert_ok(f->db, sqlq_cron_tick(f->db, first + 50 * (int64_t)US, NULL, NULL));
  assert_int_equal(fx_count(f->db, f, 0), 0);
  assert_ok(f->db, sqlq_cron_resume(f->db, name));
  assert_true(find(f->db, name, &got));
  assert_int_equal(got.paused, 0);
  /* From the database's clock now, not from the time of the pass above. */
  assert_true(got.next_at_us >= first && got.next_at_us < first + 50 * (int64_t)US);
  assert_ok(f->db, sqlq_cron_tick(f->db, got.next_at_us, NULL, NULL));
  assert_int_equal(fx_count(f->db, f, 0), 1);
  assert_ok(f->db, sqlq_cron_remove(f->db, name));
}

/* Bad input is refused and stores nothing. */
static void cron_bad_input(void **state) {
  fixture *f = *state;
  char name[128];
  fx_name(f, "cron", name, sizeof name);
  static const struct {
    const char *spec, *zone;
    int missed;
    int status;
  } cases[] = {
    {"* * * *", NULL, 0, SQLQ_MISUSE},
    {"61 * * * *", NULL, 0, SQLQ_MISUSE},
    {"@every 0s", NULL, 0, SQLQ_MISUSE},
    {"0 0 30 2 *", NULL, 0, SQLQ_MISUSE},
    {"* * * * *", "Nowhere/Land", 0, SQLQ_MISUSE},
    {"* * * * *", "../../etc/passwd", 0, SQLQ_MISUSE},
    {"* * * * *", NULL, -2, SQLQ_MISUSE},
    {"* * * * *", NULL, SQLQ_CRON_MISSED_MAX + 1, SQLQ_MISUSE},
    {"", NULL, 0, SQLQ_MISUSE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sqlq_schedule s = {.name = name,
                       .spec = cases[i].spec,
                       .zone = cases[i].zone,
                       .queue = f->queue,
                       .missed = cases[i].missed};
    assert_status(f->db, sqlq_cron_add(f->db, &s), cases[i].status);
  }
  sqlq_schedule s = {.name = name, .spec = "* * * * *", .queue = f->queue};
  s.name = "";
  assert_status(f->db, sqlq_cron_add(f->db, &s), SQLQ_MISUSE);
  s.name = name;
  s.queue = "bad\nqueue";
  assert_status(f->db, sqlq_cron_add(f->db, &s), SQLQ_MISUSE);
  s.queue = f->queue;
  s.payload_len = 3;
  assert_status(f->db, sqlq_cron_add(f->db, &s), SQLQ_MISUSE);
  unsigned char *big = fx_pattern(FX_MIB + 1);
  s.payload = big;
  s.payload_len = FX_MIB + 1;
  assert_status(f->db, sqlq_cron_add(f->db, &s), SQLQ_TOOBIG);
  free(big);
  assert_status(f->db, sqlq_cron_add(f->db, NULL), SQLQ_MISUSE);
  assert_status(f->db, sqlq_cron_tick(f->db, -1, NULL, NULL), SQLQ_MISUSE);
  sqlq_schedule got;
  assert_false(find(f->db, name, &got));
}

/* ---------------------------------------------------------------------
** Five schedulers at once.
*/

#define SCHEDULERS 5
#define SCHEDULES 4
#define TICKS 100

struct race {
  const fixture *f;
  char names[SCHEDULES][128];
  int64_t first;
  pthread_barrier_t barrier;
  pthread_mutex_t lock;
  int count[SCHEDULES][TICKS]; /* jobs seen per schedule and tick */
  int bad;                     /* jobs of no tick of the run */
  size_t enqueued;             /* the passes' own count */
  char error[512];             /* the first failure of a thread; "" when none */
  atomic_int done;             /* the schedulers are done: the consumer stops */
};

/* Record the first failure of a thread (cmocka's assertions belong to
** the main thread); returns rc. */
static int failed(struct race *r, sqlq_db *db, int rc, const char *what) {
  if (rc == SQLQ_OK) return rc;
  pthread_mutex_lock(&r->lock);
  if (r->error[0] == '\0')
    snprintf(r->error, sizeof r->error, "%s: %s: %s", what, sqlq_status_name(rc), sqlq_errmsg(db));
  pthread_mutex_unlock(&r->lock);
  return rc;
}

/* Count the job whose dedupe key is key. */
static void count_job(struct race *r, const char *key) {
  int at = -1;
  int64_t tick = -1;
  for (int i = 0; key && i < SCHEDULES; i++) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "cron:%s:", r->names[i]);
    if (strncmp(key, prefix, strlen(prefix)) == 0) {
      at = i;
      tick = (strtoll(key + strlen(prefix), NULL, 10) - r->first) / US;
    }
  }
  pthread_mutex_lock(&r->lock);
  if (at >= 0 && tick >= 0 && tick < TICKS)
    r->count[at][tick]++;
  else
    r->bad++;
  pthread_mutex_unlock(&r->lock);
}

/* rc = call, tried again while it answers SQLQ_BUSY, up to 10 times: a
** transient answer, after which a scheduler or worker tries again as `sqlq
** work` does at its next pass (under valgrind, one of the five schedulers
** held SQLite's write lock past the 5 s busy timeout once in CI). */
#define RETRY_BUSY(rc, call) \
  do { \
    int tries_ = 0; \
    while (((rc) = (call)) == SQLQ_BUSY && ++tries_ < 10) {} \
  } while (0)

/* Take every job of the queue there is now, count each and ack it:
** consumed at once, a job leaves no dedupe key behind. */
static int consume(sqlq_db *db, struct race *r, size_t *taken) {
  sqlq_job *jobs = NULL;
  size_t n = 0;
  int rc;
  RETRY_BUSY(rc, sqlq_claim(db, r->f->queue, TICKS, NULL, &jobs, &n));
  rc = failed(r, db, rc, "claim");
  for (size_t i = 0; i < n && rc == SQLQ_OK; i++) {
    count_job(r, jobs[i].dedupe_key);
    RETRY_BUSY(rc, sqlq_ack(db, jobs[i].id, jobs[i].token));
    rc = failed(r, db, rc, "ack");
  }
  sqlq_jobs_free(jobs, n);
  if (taken) *taken = n;
  return rc;
}

/* A worker that consumes the jobs while the schedulers run, so that a
** tick's job is often gone before another scheduler's pass could store it
** again.  It pauses for a millisecond after a claim that found nothing,
** as a worker waits: claiming in a tight loop, it held SQLite's write lock
** nearly all the time under valgrind, which runs one thread at a time, and
** starved the schedulers. */
static void *consumer(void *arg) {
  struct race *r = arg;
  sqlq_db *db = NULL;
  int rc = fx_open_with(r->f, NULL, NULL, &db);
  failed(r, db, rc, "open");
  while (rc == SQLQ_OK && !atomic_load(&r->done)) {
    size_t taken = 0;
    rc = consume(db, r, &taken);
    if (rc == SQLQ_OK && taken == 0) nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  sqlq_close(db);
  return NULL;
}

static void *scheduler(void *arg) {
  struct race *r = arg;
  sqlq_db *db = NULL;
  int rc = fx_open_with(r->f, NULL, NULL, &db);
  failed(r, db, rc, "open");
  for (int k = 0; k < TICKS; k++) {
    size_t enqueued = 0;
    pthread_barrier_wait(&r->barrier); /* every thread waits TICKS times, failed or not */
    if (rc != SQLQ_OK) continue;
    RETRY_BUSY(rc, sqlq_cron_tick(db, r->first + (int64_t)k * US + US / 2, &enqueued, NULL));
    rc = failed(r, db, rc, "tick");
    pthread_mutex_lock(&r->lock);
    r->enqueued += enqueued;
    pthread_mutex_unlock(&r->lock);
    if (rc == SQLQ_OK) rc = consume(db, r, NULL);
  }
  sqlq_close(db);
  return NULL;
}

/* Add the race's schedules, "@every 1s", all with the same first tick. */
static void add_race_schedules(const fixture *f, struct race *r) {
  for (int attempt = 0; attempt < 5; attempt++) {
    int64_t first[SCHEDULES];
    int same = 1;
    for (int i = 0; i < SCHEDULES; i++) {
      char suffix[16];
      snprintf(suffix, sizeof suffix, "race%d", i);
      fx_name(f, suffix, r->names[i], sizeof r->names[i]);
      first[i] = add(f->db, r->names[i], "@every 1s", f->queue, SQLQ_CRON_ALL, NULL);
      same = same && first[i] == first[0];
    }
    r->first = first[0];
    if (same) return;
  }
  fail_msg("the first ticks of schedules added within a second differ, five times over");
}

/* Five schedulers run the passes of the same 100 ticks of four schedules
** at the same time, while they and a worker consume the jobs as they
** come: exactly one job per schedule and tick.  (Each pass reads the due
** schedules first and then advances them one by one, so that a pass that
** read a schedule before another pass advanced it often comes to it after
** that tick's job was consumed: then only the compare-and-set stands
** between the tick and a second job.) */
static void cron_five_schedulers(void **state) {
  fixture *f = *state;
  struct race *r = calloc(1, sizeof *r);
  assert_non_null(r);
  r->f = f;
  add_race_schedules(f, r);
  pthread_barrier_init(&r->barrier, NULL, SCHEDULERS);
  pthread_mutex_init(&r->lock, NULL);
  pthread_t threads[SCHEDULERS], worker;
  assert_int_equal(pthread_create(&worker, NULL, consumer, r), 0);
  for (int i = 0; i < SCHEDULERS; i++)
    assert_int_equal(pthread_create(&threads[i], NULL, scheduler, r), 0);
  for (int i = 0; i < SCHEDULERS; i++) assert_int_equal(pthread_join(threads[i], NULL), 0);
  atomic_store(&r->done, 1);
  assert_int_equal(pthread_join(worker, NULL), 0);
  if (r->error[0]) fail_msg("%s", r->error);
  assert_ok(f->db, consume(f->db, r, NULL));
  int dup = 0, miss = 0;
  for (int i = 0; i < SCHEDULES; i++)
    for (int k = 0; k < TICKS; k++) {
      dup += r->count[i][k] > 1;
      miss += r->count[i][k] == 0;
    }
  if (dup || miss || r->bad)
    fail_msg("%d tick(s) with more than one job, %d with none, %d stray job(s)", dup, miss, r->bad);
  assert_true(r->enqueued >= SCHEDULES * TICKS);
  for (int i = 0; i < SCHEDULES; i++) {
    sqlq_schedule got;
    assert_true(find(f->db, r->names[i], &got));
    assert_int_equal(got.next_at_us, r->first + (int64_t)TICKS * US);
    assert_ok(f->db, sqlq_cron_remove(f->db, r->names[i]));
  }
  pthread_barrier_destroy(&r->barrier);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

int run_cron_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(cron_add_list_remove), FX_TEST(cron_tick_enqueues_once), FX_TEST(cron_missed_policies),
    FX_TEST(cron_all_backlog),     FX_TEST(cron_pause_resume),       FX_TEST(cron_bad_input),
    FX_TEST(cron_five_schedulers),
  };
  return fx_run_group_from("schedules", 4, tests, sizeof tests / sizeof tests[0]);
}
