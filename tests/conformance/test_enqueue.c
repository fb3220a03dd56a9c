/*
** test_enqueue.c -- enqueueing: payloads, priority, delay, dedupe keys,
** FIFO groups and batches.
*/
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Claim exactly one job and check that its payload is these bytes and is
** NUL-terminated; returns the job's id after acking it. */
static int64_t claim_and_check_payload(const fixture *f, const void *bytes, size_t len) {
  sqlq_job *jobs = NULL;
  int64_t id;
  size_t n = 0;
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 1, NULL, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].payload_len, len);
  assert_non_null(jobs[0].payload);
  if (len > 0) assert_memory_equal(jobs[0].payload, bytes, len);
  assert_int_equal(jobs[0].payload[len], 0);
  id = jobs[0].id;
  assert_ok(f->db, sqlq_ack(f->db, id, jobs[0].token));
  sqlq_jobs_free(jobs, n);
  return id;
}

/* Enqueue bytes (len of them) and return the status; stores the id. */
static int push_bytes(const fixture *f, sqlq_db *db, const void *bytes, size_t len, int64_t *id) {
  sqlq_job_spec spec = {0};
  spec.payload = bytes;
  spec.payload_len = len;
  return sqlq_enqueue(db, f->queue, &spec, id, NULL);
}

/* Every field of a claimed job is what was enqueued, and an ack removes it. */
static void enqueue_claim_ack_roundtrip(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  sqlq_claim_options co = SQLQ_OPTIONS_INIT(sqlq_claim_options);
  sqlq_job *jobs = NULL;
  int64_t id;
  size_t n = 0;
  spec.payload = "hello";
  spec.payload_len = 5;
  spec.priority = 3;
  spec.max_attempts = 7;
  spec.dedupe_key = "dk";
  spec.group_key = "gk";
  id = fx_push_spec(f->db, f, &spec);
  fx_assert_counts(f->db, f, 1, 0, 0, 0);

  co.lease = 30;
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 1, &co, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].id, id);
  assert_string_equal(jobs[0].queue, f->queue);
  assert_int_equal(jobs[0].payload_len, 5);
  assert_memory_equal(jobs[0].payload, "hello", 6);
  assert_int_equal(jobs[0].priority, 3);
  assert_int_equal(jobs[0].attempts, 1);
  assert_int_equal(jobs[0].max_attempts, 7);
  assert_string_equal(jobs[0].dedupe_key, "dk");
  assert_string_equal(jobs[0].group_key, "gk");
  assert_true(jobs[0].created_at_us > 0);
  assert_true(jobs[0].run_at_us >= jobs[0].created_at_us);
  /* The lease was asked for 30 s: it ends at least 29 s after the job became due. */
  assert_true(jobs[0].lease_until_us >= jobs[0].run_at_us + 29000000);
  fx_assert_counts(f->db, f, 0, 0, 1, 0);

  assert_ok(f->db, sqlq_ack(f->db, id, jobs[0].token));
  fx_assert_counts(f->db, f, 0, 0, 0, 0);
  assert_int_equal(fx_count(f->db, f, 0), 0);
  /* A second ack finds the job no longer held. */
  assert_status(f->db, sqlq_ack(f->db, id, jobs[0].token), SQLQ_STALE);
  sqlq_jobs_free(jobs, n);
}

/* Unset fields take their documented defaults. */
static void spec_defaults(void **state) {
  fixture *f = *state;
  sqlq_job *jobs = NULL;
  size_t n = 0;
  fx_push(f->db, f, "x", 0);
  assert_ok(f->db, sqlq_claim(f->db, f->queue, 1, NULL, &jobs, &n));
  assert_int_equal(n, 1);
  assert_int_equal(jobs[0].max_attempts, SQLQ_DEFAULT_MAX_ATTEMPTS);
  assert_int_equal(jobs[0].priority, 0);
  assert_null(jobs[0].dedupe_key);
  assert_null(jobs[0].group_key);
  assert_true(jobs[0].lease_until_us > jobs[0].run_at_us);
  sqlq_jobs_free(jobs, n);
}

/* Payloads come back byte for byte, NUL bytes included. */
static void payload_binary_safe(void **state) {
  fixture *f = *state;
  unsigned char bytes[512];
  size_t i;
  for (i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i & 0xff);
  assert_ok(f->db, push_bytes(f, f->db, bytes, sizeof bytes, NULL));
  claim_and_check_payload(f, bytes, sizeof bytes);
  assert_ok(f->db, push_bytes(f, f->db, "\0\0\0", 3, NULL));
  claim_and_check_payload(f, "\0\0\0", 3);
}

/* A payload of exactly the limit (1 MiB) is accepted whole. */
static void payload_of_exactly_limit_accepted(void **state) {
  fixture *f = *state;
  unsigned char *big = fx_pattern(FX_MIB);
  assert_ok(f->db, push_bytes(f, f->db, big, FX_MIB, NULL));
  claim_and_check_payload(f, big, FX_MIB);
  free(big);
}

/* One byte over the limit is refused with SQLQ_TOOBIG and nothing is stored. */
static void payload_over_limit_refused(void **state) {
  fixture *f = *state;
  unsigned char *big = fx_pattern(FX_MIB + 1);
  int64_t kept = fx_push(f->db, f, "kept", 0), id = -7;
  assert_status(f->db, push_bytes(f, f->db, big, FX_MIB + 1, &id), SQLQ_TOOBIG);
  assert_int_equal(sqlq_errcode(f->db), SQLQ_TOOBIG);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  assert_int_equal(claim_and_check_payload(f, "kept", 4), kept);
  free(big);
}

/* The limit can be set by option or URL, and the URL wins. */
static void payload_limit_options(void **state) {
  fixture *f = *state;
  sqlq_options opts = SQLQ_OPTIONS_INIT(sqlq_options);
  sqlq_db *db = NULL;
  opts.payload_limit = 8;
  assert_ok(db, fx_open_with(f, NULL, &opts, &db));
  assert_ok(db, push_bytes(f, db, "12345678", 8, NULL));
  assert_status(db, push_bytes(f, db, "123456789", 9, NULL), SQLQ_TOOBIG);
  sqlq_close(db);

  db = NULL;
  assert_ok(db, fx_open_with(f, "payload_limit=16", &opts, &db));
  assert_ok(db, push_bytes(f, db, "0123456789abcdef", 16, NULL));
  assert_status(db, push_bytes(f, db, "0123456789abcdefg", 17, NULL), SQLQ_TOOBIG);
  sqlq_close(db);
  assert_int_equal(fx_count(f->db, f, 0), 2);
}

/* An empty payload, given as NULL or as a pointer, is a valid job. */
static void empty_payload(void **state) {
  fixture *f = *state;
  assert_ok(f->db, push_bytes(f, f->db, NULL, 0, NULL));
  claim_and_check_payload(f, NULL, 0);
  assert_ok(f->db, push_bytes(f, f->db, "ignored", 0, NULL));
  claim_and_check_payload(f, NULL, 0);
}

/* Higher priority runs first; equal priorities run in id order. */
static void priority_order(void **state) {
  fixture *f = *state;
  static const int prio[] = {0, 5, -3, 10, 5};
  int64_t ids[5], got[5];
  size_t i;
  for (i = 0; i < 5; i++) ids[i] = fx_push(f->db, f, "p", prio[i]);
  assert_int_equal(fx_claim_ids(f->db, f, 5, 30, got), 5);
  assert_int_equal(got[0], ids[3]);
  assert_int_equal(got[1], ids[1]);
  assert_int_equal(got[2], ids[4]);
  assert_int_equal(got[3], ids[0]);
  assert_int_equal(got[4], ids[2]);
}

/* Many jobs of one priority are claimed in id order, batch after batch. */
static void ties_broken_by_id(void **state) {
  enum { N = 60, CHUNK = 7 };
  fixture *f = *state;
  int64_t ids[N], got[CHUNK];
  int i, n, seen = 0;
  for (i = 0; i < N; i++) ids[i] = fx_push(f->db, f, "tie", 1);
  for (i = 1; i < N; i++) assert_true(ids[i] > ids[i - 1]);
  while ((n = fx_claim_ids(f->db, f, CHUNK, 30, got)) > 0) {
    for (i = 0; i < n; i++) assert_int_equal(got[i], ids[seen + i]);
    seen += n;
  }
  assert_int_equal(seen, N);
}

/* A delayed job is not claimable before its delay, is scheduled meanwhile,
** and is claimed once due. */
static void delayed_job_not_claimed_before_due(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  double t0 = fx_now();
  claimed c;
  int64_t id;
  spec.delay = 0.2;
  id = fx_push_spec(f->db, f, &spec);
  c = fx_claim_one(f->db, f, 30);
  /* A claim may only succeed if 0.2 s really passed. */
  if (c.id != 0) assert_true(fx_now() - t0 >= 0.2);
  {
    found fd = fx_find(f->db, f, id);
    assert_non_null(fd.job);
    assert_true(fd.job->run_at_us - fd.job->created_at_us >= 190000);
    fx_found_free(&fd);
  }
  if (c.id == 0) c = fx_wait_claim(f->db, f, 20);
  assert_int_equal(c.id, id);
  assert_true(fx_now() - t0 >= 0.19);
}

/* A dedupe key folds enqueues into the unfinished job that holds it; once
** that job is finished (acked or dead) the key is free again. */
static void dedupe_key(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  int64_t first = 0, id = 0;
  int dup = -1;
  claimed c;
  sqlq_fail_options dead = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  spec.payload = "d";
  spec.payload_len = 1;
  spec.dedupe_key = "same";
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &first, &dup));
  assert_int_equal(dup, 0);
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &id, &dup));
  assert_int_equal(dup, 1);
  assert_int_equal(id, first);
  assert_int_equal(fx_count(f->db, f, 0), 1);

  /* Running still holds the key. */
  c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, first);
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &id, &dup));
  assert_int_equal(dup, 1);
  assert_int_equal(id, first);

  /* Acked: a new job is accepted. */
  assert_ok(f->db, sqlq_ack(f->db, c.id, c.token));
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &id, &dup));
  assert_int_equal(dup, 0);
  assert_true(id > first);

  /* Dead: a new job is accepted too. */
  c = fx_claim_one(f->db, f, 30);
  dead.dead = 1;
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, "boom", &dead));
  first = id;
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &id, &dup));
  assert_int_equal(dup, 0);
  assert_true(id > first);
}

/* Dedupe keys belong to one queue. */
static void dedupe_key_scoped_to_queue(void **state) {
  fixture *f = *state;
  sqlq_job_spec spec = {0};
  char other[128];
  int64_t a = 0, b = 0;
  int dup = -1;
  spec.dedupe_key = "k";
  fx_name(f, "other", other, sizeof other);
  assert_ok(f->db, sqlq_enqueue(f->db, f->queue, &spec, &a, &dup));
  assert_ok(f->db, sqlq_enqueue(f->db, other, &spec, &b, &dup));
  assert_int_equal(dup, 0);
  assert_true(a != b);
  assert_ok(f->db, sqlq_purge(f->db, other, NULL));
}

/* Enqueue a job of group g with this priority. */
static int64_t push_grouped(const fixture *f, const char *group, int priority) {
  sqlq_job_spec spec = {0};
  spec.group_key = group;
  spec.priority = priority;
  return fx_push_spec(f->db, f, &spec);
}

/* Two jobs of one group are never claimed together, by any handle; the
** second (even with a higher priority) comes only after the first is
** acked.  Jobs outside the group are not held up. */
static void fifo_group_one_at_a_time(void **state) {
  fixture *f = *state;
  int64_t a = push_grouped(f, "g", 0), b = push_grouped(f, "g", 10);
  int64_t loose = fx_push(f->db, f, "loose", 0);
  sqlq_db *other = fx_open(f);
  claimed first = fx_claim_one(f->db, f, 30);
  assert_int_equal(first.id, a);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, loose);
  assert_int_equal(fx_claim_one(other, f, 30).id, 0);
  fx_assert_counts(f->db, f, 1, 0, 2, 0);
  assert_ok(f->db, sqlq_ack(f->db, first.id, first.token));
  assert_int_equal(fx_claim_one(other, f, 30).id, b);
  sqlq_close(other);
}

/* The group's next job follows only once the first is finished, and a
** failed first job is retried before the second. */
static void fifo_group_order_survives_failure(void **state) {
  fixture *f = *state;
  sqlq_fail_options now = SQLQ_OPTIONS_INIT(sqlq_fail_options);
  now.retry_now = 1;
  int64_t a = push_grouped(f, "g", 0), b = push_grouped(f, "g", 0);
  claimed c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, a);
  assert_int_equal(fx_claim_one(f->db, f, 30).id, 0);
  assert_ok(f->db, sqlq_fail(f->db, c.id, c.token, "again", &now));
  c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, a);
  assert_int_equal(c.attempt, 2);
  assert_ok(f->db, sqlq_ack(f->db, c.id, c.token));
  c = fx_claim_one(f->db, f, 30);
  assert_int_equal(c.id, b);
}

/* A batch gets ids in the order of its specs, all stored. */
static void batch_ids_in_order(void **state) {
  enum { N = 5 };
  fixture *f = *state;
  sqlq_job_spec specs[N];
  int64_t ids[N], got[N];
  size_t i;
  memset(specs, 0, sizeof specs);
  for (i = 0; i < N; i++) {
    specs[i].payload = "b";
    specs[i].payload_len = 1;
  }
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N, ids));
  for (i = 1; i < N; i++) assert_true(ids[i] > ids[i - 1]);
  assert_int_equal(fx_claim_ids(f->db, f, N, 30, got), N);
  assert_memory_equal(got, ids, sizeof ids);
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N, NULL));
  assert_int_equal(fx_count(f->db, f, 0), 2 * N);
}

/* Every field of every job of a batch survives the batch statement:
** payloads with separators, NUL bytes and none at all, one longer than a
** row holds inline, group keys present and absent, priorities and attempts. */
static void batch_fields_round_trip(void **state) {
  enum { N = 6 };
  fixture *f = *state;
  static const char *const groups[N] = {NULL, "g,1;", NULL, "g2", "\xc3\xa9t\xc3\xa9", NULL};
  unsigned char *big = fx_pattern(5000);
  const void *payloads[N] = {"a,b;c", "", "\0;\0,", big, "-", ";;"};
  const size_t lens[N] = {5, 0, 4, 5000, 1, 2};
  sqlq_job_spec specs[N];
  int64_t ids[N];
  memset(specs, 0, sizeof specs);
  for (int i = 0; i < N; i++) {
    specs[i].payload = payloads[i];
    specs[i].payload_len = lens[i];
    specs[i].group_key = groups[i];
    specs[i].priority = -i;
    specs[i].max_attempts = 3 + i;
  }
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, N, ids));
  sqlq_job *jobs = NULL;
  size_t n = 0;
  assert_ok(f->db, sqlq_claim(f->db, f->queue, N, NULL, &jobs, &n));
  assert_int_equal(n, N);
  for (int i = 0; i < N; i++) {
    assert_int_equal(jobs[i].id, ids[i]);
    assert_int_equal(jobs[i].priority, -i);
    assert_int_equal(jobs[i].max_attempts, 3 + i);
    assert_int_equal(jobs[i].payload_len, lens[i]);
    if (lens[i]) assert_memory_equal(jobs[i].payload, payloads[i], lens[i]);
    if (groups[i])
      assert_string_equal(jobs[i].group_key, groups[i]);
    else
      assert_null(jobs[i].group_key);
  }
  sqlq_jobs_free(jobs, n);
  free(big);
}

/* A batch holding one bad spec stores nothing: an oversized payload gives
** SQLQ_TOOBIG, a negative max_attempts SQLQ_MISUSE. */
static void batch_all_or_nothing(void **state) {
  fixture *f = *state;
  unsigned char *big = fx_pattern(FX_MIB + 1);
  sqlq_job_spec specs[3];
  int64_t ids[3];
  memset(specs, 0, sizeof specs);
  fx_push(f->db, f, "kept", 0);
  specs[1].payload = big;
  specs[1].payload_len = FX_MIB + 1;
  assert_status(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, 3, ids), SQLQ_TOOBIG);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  specs[1].payload_len = 1;
  specs[2].max_attempts = -1;
  assert_status(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, 3, ids), SQLQ_MISUSE);
  assert_int_equal(fx_count(f->db, f, 0), 1);
  free(big);
}

/* Two specs of one batch with one dedupe key become one job. */
static void batch_dedupe_within_batch(void **state) {
  fixture *f = *state;
  sqlq_job_spec specs[3];
  int64_t ids[3];
  memset(specs, 0, sizeof specs);
  specs[0].dedupe_key = "twice";
  specs[2].dedupe_key = "twice";
  assert_ok(f->db, sqlq_enqueue_batch(f->db, f->queue, specs, 3, ids));
  assert_int_equal(ids[2], ids[0]);
  assert_true(ids[1] != ids[0]);
  assert_int_equal(fx_count(f->db, f, 0), 2);
}

int run_enqueue_tests(void) {
  const struct CMUnitTest tests[] = {
    FX_TEST(enqueue_claim_ack_roundtrip),
    FX_TEST(spec_defaults),
    FX_TEST(payload_binary_safe),
    FX_TEST(payload_of_exactly_limit_accepted),
    FX_TEST(payload_over_limit_refused),
    FX_TEST(payload_limit_options),
    FX_TEST(empty_payload),
    FX_TEST(priority_order),
    FX_TEST(ties_broken_by_id),
    FX_TEST(delayed_job_not_claimed_before_due),
    FX_TEST(dedupe_key),
    FX_TEST(dedupe_key_scoped_to_queue),
    FX_TEST(fifo_group_one_at_a_time),
    FX_TEST(fifo_group_order_survives_failure),
    FX_TEST(batch_ids_in_order),
    FX_TEST(batch_fields_round_trip),
    FX_TEST(batch_all_or_nothing),
    FX_TEST(batch_dedupe_within_batch),
  };
  return FX_RUN_GROUP("enqueue", tests);
}
