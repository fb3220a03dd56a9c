/*
** queue.c -- fuzz payloads and names through enqueue, claim, release and
** ack on SQLite.
**
** One in-memory SQLite database for the whole run (payload limit 512
** bytes), with a bystander queue made at the start.  Each input is a queue
** name, up to 6 job specs (payload, priority, delay, max attempts, dedupe
** and group keys, any of them bad), enqueued one by one or as one batch,
** then rounds of claims of up to N jobs, each claimed job acked (twice),
** left running, released or acked with the round's others in one batch
** (twice).  A model of the queue says what must happen:
**   - an enqueue succeeds exactly when the oracle finds the queue name and
**     every spec valid (fz_valid_text() for names and keys; payload at
**     most the limit; delay 0 to 3.2e9 s; max attempts >= 0), and a
**     refused batch stores nothing;
**   - a dedupe key of an unfinished job gives that job's id back;
**   - a claim returns exactly min(N, due) of the due jobs whose group has
**     no earlier unfinished job, none of them twice, each byte-identical
**     to its spec (queue, payload, priority, keys, max attempts), attempt
**     1 (a release does not count), with priorities no lower than any due
**     job it left;
**   - an ack, or a batch ack, succeeds once, then is SQLQ_STALE (the batch
**     acking none); the queue's counts match
**     the model after the rounds, and its purge deletes what is left;
**   - the bystander queue is exactly as it was.
** Delays are 0 or at least an hour, so no job comes due during a run.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define PAYLOAD_LIMIT 512
#define MAX_JOBS 6

static sqlq_db *db;
static sqlq_queue_stats bystander;

/* One job of the model. */
typedef struct job {
  sqlq_job_spec spec;
  int64_t id;
  enum { UNSTORED, READY, SCHEDULED, RUNNING, GONE } state;
  int duplicate; /* folded into an earlier job: not a job of its own */
} job;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  db = fz_open_init("sqlite::memory:", PAYLOAD_LIMIT);
  sqlq_job_spec spec = {.payload = "b", .payload_len = 1, .group_key = "g", .dedupe_key = "d"};
  FZ_STATUS(db, sqlq_enqueue(db, "bystander", &spec, NULL, NULL), SQLQ_OK);
  spec.dedupe_key = NULL;
  FZ_STATUS(db, sqlq_enqueue(db, "bystander", &spec, NULL, NULL), SQLQ_OK);
  spec.delay = 3600;
  FZ_STATUS(db, sqlq_enqueue(db, "bystander", &spec, NULL, NULL), SQLQ_OK);
  bystander = fz_stats(db, "bystander");
  return 0;
}

static const double delays[8] = {0, 0, 0, 3600, 3.2e9, -1, NAN, 3.3e9};

/* Decode one spec; keys may repeat the previous job's (prev), so that
** dedupe keys and groups meet. */
static void read_spec(fz_input *in, job *j, const job *prev) {
  uint8_t flags = fz_byte(in);
  sqlq_job_spec *s = &j->spec;
  s->priority = (int)fz_u32(in);
  s->delay = delays[(flags >> 2) & 7];
  uint8_t attempts = fz_byte(in);
  s->max_attempts = attempts < 200 ? attempts % 30 : -(int)attempts;
  if (flags & 1)
    s->dedupe_key = prev && prev->spec.dedupe_key && (flags & 0x20) ? strdup(prev->spec.dedupe_key)
                                                                    : fz_string(in, 260);
  if (flags & 2)
    s->group_key = prev && prev->spec.group_key && (flags & 0x40) ? strdup(prev->spec.group_key)
                                                                  : fz_string(in, 260);
  size_t got;
  s->payload = fz_bytes(in, (size_t)fz_byte(in) * 3, &got);
  s->payload_len = got;
  FZ_CHECK((!(flags & 1) || s->dedupe_key) && (!(flags & 2) || s->group_key), "out of memory");
}

static int spec_valid(const sqlq_job_spec *s) {
  return s->payload_len <= PAYLOAD_LIMIT && s->max_attempts >= 0 && s->delay >= 0 &&
         s->delay <= 3.2e9 && (!s->dedupe_key || fz_valid_text(s->dedupe_key, SQLQ_KEY_MAX)) &&
         (!s->group_key || fz_valid_text(s->group_key, SQLQ_KEY_MAX));
}

static int unfinished(const job *j) {
  return !j->duplicate && j->state != UNSTORED && j->state != GONE;
}

/* The id an unfinished job with j's dedupe key holds among jobs[0..n), or
** 0. */
static int64_t dedupe_holder(const job *jobs, int n, const job *j) {
  for (int i = 0; j->spec.dedupe_key && i < n; i++)
    if (unfinished(&jobs[i]) && jobs[i].spec.dedupe_key &&
        strcmp(jobs[i].spec.dedupe_key, j->spec.dedupe_key) == 0)
      return jobs[i].id;
  return 0;
}

/* Record in the model that jobs[i] was stored and got id. */
static void stored(job *jobs, int i, int64_t id, int64_t *last_id) {
  int64_t holder = dedupe_holder(jobs, i, &jobs[i]);
  if (holder) {
    FZ_CHECK(id == holder, "job %d with a taken dedupe key got id %lld, not %lld", i, (long long)id,
             (long long)holder);
    jobs[i].duplicate = 1;
    return;
  }
  FZ_CHECK(id > *last_id, "job %d got id %lld after %lld", i, (long long)id, (long long)*last_id);
  *last_id = jobs[i].id = id;
  jobs[i].state = jobs[i].spec.delay > 0 ? SCHEDULED : READY;
}

/* Whether the model says job i may be claimed now. */
static int claimable(const job *jobs, int i) {
  if (jobs[i].duplicate || jobs[i].state != READY) return 0;
  for (int k = 0; jobs[i].spec.group_key && k < i; k++)
    if (unfinished(&jobs[k]) && jobs[k].spec.group_key &&
        strcmp(jobs[k].spec.group_key, jobs[i].spec.group_key) == 0)
      return 0;
  return 1;
}

static int same_text(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* Check a claimed job against its spec. */
static void check_claimed(const sqlq_job *c, const job *j, const char *queue) {
  const sqlq_job_spec *s = &j->spec;
  FZ_CHECK(strcmp(c->queue, queue) == 0, "job %lld came back in another queue", (long long)c->id);
  FZ_CHECK(c->payload_len == s->payload_len &&
             memcmp(c->payload, s->payload, s->payload_len) == 0 &&
             c->payload[c->payload_len] == '\0',
           "job %lld came back with another payload", (long long)c->id);
  FZ_CHECK(c->priority == s->priority && c->attempts == 1 &&
             c->max_attempts == (s->max_attempts ? s->max_attempts : SQLQ_DEFAULT_MAX_ATTEMPTS),
           "job %lld came back with priority %d attempt %d of %d", (long long)c->id, c->priority,
           c->attempts, c->max_attempts);
  FZ_CHECK(same_text(c->group_key, s->group_key) && same_text(c->dedupe_key, s->dedupe_key),
           "job %lld came back with other keys", (long long)c->id);
}

/* One claim of up to max jobs, checked against the model, then each
** claimed job acked, left running or released as the input says.
** Returns how many were claimed. */
static int claim_round(fz_input *in, const char *queue, job *jobs, int n) {
  int max = 1 + fz_byte(in) % 8, due = 0, lowest = 0;
  sqlq_job *got = NULL;
  size_t n_claimed = 0;
  FZ_STATUS(db, sqlq_claim(db, queue, (size_t)max, NULL, &got, &n_claimed), SQLQ_OK);
  int n_got = (int)n_claimed;
  for (int i = 0; i < n; i++) due += claimable(jobs, i);
  FZ_CHECK(n_got == (due < max ? due : max), "claimed %d of %d due jobs (at most %d)", n_got, due,
           max);
  int taken[MAX_JOBS] = {0};
  for (int c = 0; c < n_got; c++) {
    int i = 0;
    while (i < n && (jobs[i].duplicate || jobs[i].id != got[c].id)) i++;
    FZ_CHECK(i < n && claimable(jobs, i) && !taken[i], "claimed job %lld was not due",
             (long long)got[c].id);
    taken[i] = 1;
    check_claimed(&got[c], &jobs[i], queue);
    if (c == 0 || got[c].priority < lowest) lowest = got[c].priority;
  }
  for (int i = 0; i < n; i++)
    FZ_CHECK(taken[i] || !claimable(jobs, i) || jobs[i].spec.priority <= lowest,
             "a due job of priority %d was left for one of %d", jobs[i].spec.priority, lowest);
  sqlq_job_ref refs[MAX_JOBS];
  size_t n_refs = 0, acked = 0;
  for (int c = 0; c < n_got; c++) {
    int i = 0;
    while (jobs[i].duplicate || jobs[i].id != got[c].id) i++;
    jobs[i].state = RUNNING;
    switch (fz_byte(in) % 4) {
    case 0:
      FZ_STATUS(db, sqlq_ack(db, got[c].id, got[c].token), SQLQ_OK);
      FZ_STATUS(db, sqlq_ack(db, got[c].id, got[c].token), SQLQ_STALE);
      jobs[i].state = GONE;
      break;
    case 1:
      break;
    case 2:
      FZ_STATUS(db, sqlq_release(db, got[c].id, got[c].token, 0), SQLQ_OK);
      jobs[i].state = READY;
      break;
    default:
      refs[n_refs++] = (sqlq_job_ref){got[c].id, got[c].token};
      jobs[i].state = GONE;
    }
  }
  if (n_refs > 0) {
    FZ_STATUS(db, sqlq_ack_batch(db, refs, n_refs, &acked), SQLQ_OK);
    FZ_CHECK(acked == n_refs, "ack_batch acked %zu of %zu", acked, n_refs);
    FZ_STATUS(db, sqlq_ack_batch(db, refs, n_refs, &acked), SQLQ_STALE);
    FZ_CHECK(acked == 0, "ack_batch acked %zu jobs again", acked);
  }
  sqlq_jobs_free(got, n_claimed);
  return n_got;
}

/* The queue's counts against the model, then its purge. */
static void check_end(const char *queue, const job *jobs, int n) {
  sqlq_queue_stats s = fz_stats(db, queue);
  int64_t ready = 0, scheduled = 0, running = 0;
  for (int i = 0; i < n; i++) {
    if (jobs[i].duplicate) continue;
    ready += jobs[i].state == READY;
    scheduled += jobs[i].state == SCHEDULED;
    running += jobs[i].state == RUNNING;
  }
  FZ_CHECK(s.ready == ready && s.scheduled == scheduled && s.running == running && s.dead == 0,
           "counts %lld/%lld/%lld/%lld, expected %lld/%lld/%lld/0", (long long)s.ready,
           (long long)s.scheduled, (long long)s.running, (long long)s.dead, (long long)ready,
           (long long)scheduled, (long long)running);
  size_t purged = 99;
  FZ_STATUS(db, sqlq_purge(db, queue, &purged), SQLQ_OK);
  FZ_CHECK((int64_t)purged == ready + scheduled + running, "purge deleted %zu", purged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_input in = {data, size};
  char *queue = fz_string(&in, 140);
  if (strcmp(queue, "bystander") == 0) {
    free(queue);
    return -1;
  }
  uint8_t shape = fz_byte(&in);
  int n = 1 + shape % MAX_JOBS, batch = shape & 0x80;
  job jobs[MAX_JOBS];
  memset(jobs, 0, sizeof jobs);
  for (int i = 0; i < n; i++) read_spec(&in, &jobs[i], i ? &jobs[i - 1] : NULL);

  int queue_ok = fz_valid_text(queue, SQLQ_QUEUE_NAME_MAX);
  int64_t ids[MAX_JOBS] = {0}, last_id = 0;
  sqlq_queue_stats before = fz_stats(db, queue_ok ? queue : "bystander");
  if (batch) {
    sqlq_job_spec specs[MAX_JOBS];
    int too_big = 0, all_ok = queue_ok;
    for (int i = 0; i < n; i++) {
      specs[i] = jobs[i].spec;
      all_ok = all_ok && spec_valid(&specs[i]);
      too_big |= specs[i].payload_len > PAYLOAD_LIMIT;
    }
    int rc = sqlq_enqueue_batch(db, queue, specs, (size_t)n, ids);
    FZ_CHECK(
      all_ok ? rc == SQLQ_OK : rc == SQLQ_MISUSE || (rc == SQLQ_TOOBIG && too_big && queue_ok),
      "a batch the oracle finds %s gave %s (%s)", all_ok ? "valid" : "invalid",
      sqlq_status_name(rc), sqlq_errmsg(db));
    for (int i = 0; rc == SQLQ_OK && i < n; i++) stored(jobs, i, ids[i], &last_id);
  } else {
    for (int i = 0; i < n; i++) {
      int ok = queue_ok && spec_valid(&jobs[i].spec), dup = -1;
      int rc = sqlq_enqueue(db, queue, &jobs[i].spec, &ids[i], &dup);
      FZ_CHECK(ok ? rc == SQLQ_OK : rc == SQLQ_MISUSE || (rc == SQLQ_TOOBIG && queue_ok),
               "a job the oracle finds %s gave %s (%s)", ok ? "valid" : "invalid",
               sqlq_status_name(rc), sqlq_errmsg(db));
      if (rc != SQLQ_OK) continue;
      FZ_CHECK(dup == (dedupe_holder(jobs, i, &jobs[i]) != 0), "duplicate_out %d is wrong", dup);
      stored(jobs, i, ids[i], &last_id);
    }
  }
  if (!queue_ok) {
    sqlq_queue_stats after = fz_stats(db, "bystander");
    FZ_CHECK(memcmp(&before, &after, sizeof before) == 0, "a refused enqueue changed something");
  } else {
    while (claim_round(&in, queue, jobs, n) > 0) {}
    check_end(queue, jobs, n);
  }
  sqlq_queue_stats now = fz_stats(db, "bystander");
  FZ_CHECK(memcmp(&now, &bystander, sizeof now) == 0, "the bystander queue changed");
  for (int i = 0; i < n; i++) {
    free((void *)jobs[i].spec.payload);
    free((void *)jobs[i].spec.dedupe_key);
    free((void *)jobs[i].spec.group_key);
  }
  free(queue);
  return 0;
}
