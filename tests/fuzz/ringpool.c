/*
** ringpool.c -- fuzz ring names, capacities and payloads, and pool names
** and items, on SQLite.
**
** One in-memory SQLite database for the whole run (payload limit 512
** bytes), with a bystander ring and pool made at the start.  Each input
** is a ring (name, capacity, up to 7 payloads pushed one by one or as one
** batch) and a pool (name, up to 5 items, some repeated, handed out with
** or without holds).  What must happen:
**   - every call refuses a name the oracle (fz_valid_text()) finds bad,
**     and a capacity outside 1..SQLQ_RING_CAPACITY_MAX, with SQLQ_MISUSE;
**     a payload over the limit with SQLQ_TOOBIG, and a refused batch
**     stores nothing;
**   - creating the ring again with its capacity changes nothing, with
**     another is SQLQ_MISUSE;
**   - pushes are numbered 1, 2, ... and a read gives back the newest
**     `capacity` payloads byte-identical, numbered without a gap, also
**     from a later sequence number and with a limit;
**   - adding an item twice adds it once; the list gives the items in the
**     order they were added; as many turns as there are items hand out
**     each exactly once (held: then the pool is SQLQ_BUSY), a release
**     needs the hold's token and works once; removing works once;
**   - a dropped ring and an emptied pool are SQLQ_NOTFOUND, and the
**     bystanders are as they were.
*/
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define PAYLOAD_LIMIT 512
#define MAX_ENTRIES 7
#define MAX_ITEMS 5

static sqlq_db *db;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  db = fz_open_init("sqlite::memory:", PAYLOAD_LIMIT);
  FZ_STATUS(db, sqlq_ring_create(db, "bystander", 2), SQLQ_OK);
  for (int i = 0; i < 3; i++) FZ_STATUS(db, sqlq_ring_push(db, "bystander", "b", 1, NULL), SQLQ_OK);
  FZ_STATUS(db, sqlq_pool_add(db, "bystander", "b", NULL), SQLQ_OK);
  return 0;
}

/* The bystanders: the ring's entries 2 and 3, the pool's one item. */
static void check_bystanders(void) {
  sqlq_ring_entry *e = NULL;
  size_t n = 0;
  FZ_STATUS(db, sqlq_ring_read(db, "bystander", 0, 0, &e, &n), SQLQ_OK);
  FZ_CHECK(n == 2 && e[0].seq == 2 && e[1].seq == 3, "the bystander ring changed");
  sqlq_ring_entries_free(e, n);
  sqlq_pool_item *items = NULL;
  FZ_STATUS(db, sqlq_pool_list(db, "bystander", &items, &n), SQLQ_OK);
  FZ_CHECK(n == 1 && strcmp(items[0].item, "b") == 0 && items[0].uses == 0,
           "the bystander pool changed");
  sqlq_pool_items_free(items, n);
}

/* ---------------------------------------------------------------------
** Rings.
*/

static const int64_t capacities[8] = {
  1, 2, 3, 5, 0, -1, SQLQ_RING_CAPACITY_MAX, (int64_t)SQLQ_RING_CAPACITY_MAX + 1};

/* Read the ring from since with limit and check what comes against the
** last of the total pushes (payloads[seq - 1] is entry seq's). */
static void check_read(const char *ring, int64_t capacity, unsigned char **payloads, size_t *lens,
                       int64_t total, int64_t since, int limit) {
  sqlq_ring_entry *e = NULL;
  size_t n = 0;
  FZ_STATUS(db, sqlq_ring_read(db, ring, since, (size_t)limit, &e, &n), SQLQ_OK);
  int64_t first = total - capacity + 1;
  if (first <= since) first = since + 1;
  if (first < 1) first = 1;
  int64_t want = total - first + 1;
  if (want < 0) want = 0;
  if (limit > 0 && want > limit) want = limit;
  FZ_CHECK((int64_t)n == want,
           "read %zu entries from %lld (limit %d) of %lld in capacity %lld, "
           "expected %lld",
           n, (long long)since, limit, (long long)total, (long long)capacity, (long long)want);
  for (size_t i = 0; i < n; i++) {
    int64_t seq = first + (int64_t)i;
    FZ_CHECK(e[i].seq == seq, "entry %zu is number %lld, expected %lld", i, (long long)e[i].seq,
             (long long)seq);
    FZ_CHECK(e[i].payload_len == lens[seq - 1] &&
               memcmp(e[i].payload, payloads[seq - 1], lens[seq - 1]) == 0 &&
               e[i].payload[e[i].payload_len] == '\0',
             "entry %lld came back with another payload", (long long)seq);
  }
  sqlq_ring_entries_free(e, n);
}

static void fuzz_ring(fz_input *in) {
  char *ring = fz_string(in, 140);
  uint8_t shape = fz_byte(in);
  int64_t capacity = capacities[shape & 7];
  int n = (shape >> 3) % (MAX_ENTRIES + 1), batch = shape & 0x80;
  unsigned char *payloads[MAX_ENTRIES];
  size_t lens[MAX_ENTRIES];
  for (int i = 0; i < n; i++) payloads[i] = fz_bytes(in, (size_t)fz_byte(in) * 3, &lens[i]);
  int name_ok = fz_valid_text(ring, SQLQ_QUEUE_NAME_MAX) && strcmp(ring, "bystander") != 0;
  int cap_ok = capacity >= 1 && capacity <= SQLQ_RING_CAPACITY_MAX;
  if (strcmp(ring, "bystander") == 0) goto done;

  int rc = sqlq_ring_create(db, ring, (size_t)capacity);
  FZ_CHECK(rc == (name_ok && cap_ok ? SQLQ_OK : SQLQ_MISUSE), "ring_create gave %s (%s)",
           sqlq_status_name(rc), sqlq_errmsg(db));
  if (rc != SQLQ_OK) {
    FZ_STATUS(db, sqlq_ring_push(db, ring, "x", 1, NULL), name_ok ? SQLQ_NOTFOUND : SQLQ_MISUSE);
    goto done;
  }
  FZ_STATUS(db, sqlq_ring_create(db, ring, (size_t)capacity), SQLQ_OK);
  FZ_STATUS(db, sqlq_ring_create(db, ring, capacity == 1 ? 2 : 1), SQLQ_MISUSE);

  /* The payloads that were stored, in order. */
  unsigned char *kept[MAX_ENTRIES];
  size_t kept_lens[MAX_ENTRIES];
  int64_t total = 0;
  if (batch && n > 0) {
    int too_big = 0;
    for (int i = 0; i < n; i++) too_big |= lens[i] > PAYLOAD_LIMIT;
    int64_t first = 0;
    FZ_STATUS(
      db, sqlq_ring_push_batch(db, ring, (const void *const *)payloads, lens, (size_t)n, &first),
      too_big ? SQLQ_TOOBIG : SQLQ_OK);
    if (!too_big) {
      FZ_CHECK(first == 1, "a batch into a new ring began at %lld", (long long)first);
      for (int i = 0; i < n; i++) {
        kept[total] = payloads[i];
        kept_lens[total++] = lens[i];
      }
    }
  } else {
    for (int i = 0; i < n; i++) {
      int64_t seq = 0;
      int ok = lens[i] <= PAYLOAD_LIMIT;
      FZ_STATUS(db, sqlq_ring_push(db, ring, payloads[i], lens[i], &seq),
                ok ? SQLQ_OK : SQLQ_TOOBIG);
      if (!ok) continue;
      FZ_CHECK(seq == total + 1, "push %d got number %lld after %lld", i, (long long)seq,
               (long long)total);
      kept[total] = payloads[i];
      kept_lens[total++] = lens[i];
    }
  }
  check_read(ring, capacity, kept, kept_lens, total, 0, 0);
  check_read(ring, capacity, kept, kept_lens, total, fz_byte(in) % 8, fz_byte(in) % 4);
  FZ_STATUS(db, sqlq_ring_drop(db, ring), SQLQ_OK);
  FZ_STATUS(db, sqlq_ring_drop(db, ring), SQLQ_NOTFOUND);
  sqlq_ring_entry *e = NULL;
  size_t got = 0;
  FZ_STATUS(db, sqlq_ring_read(db, ring, 0, 0, &e, &got), SQLQ_NOTFOUND);
done:
  for (int i = 0; i < n; i++) free(payloads[i]);
  free(ring);
}

/* ---------------------------------------------------------------------
** Pools.
*/

/* Hand out every item once: items[0..n) are the distinct ones. */
static void check_turns(const char *pool, char **items, int n, int hold) {
  int seen[MAX_ITEMS] = {0};
  int64_t tokens[MAX_ITEMS] = {0};
  for (int turn = 0; turn < n; turn++) {
    sqlq_pool_item *it = NULL;
    FZ_STATUS(db, sqlq_pool_next(db, pool, hold ? 3600 : 0, &it), SQLQ_OK);
    int i = 0;
    while (i < n && strcmp(items[i], it->item) != 0) i++;
    FZ_CHECK(i < n && !seen[i], "turn %d handed out '%s' again or from nowhere", turn, it->item);
    FZ_CHECK((it->token != 0) == hold && (it->held_until_us != 0) == hold && it->uses == 1,
             "turn %d: token %lld, held until %lld, uses %lld", turn, (long long)it->token,
             (long long)it->held_until_us, (long long)it->uses);
    seen[i] = 1;
    tokens[i] = it->token;
    sqlq_pool_items_free(it, 1);
  }
  if (!hold) return;
  sqlq_pool_item *it = NULL;
  FZ_STATUS(db, sqlq_pool_next(db, pool, 3600, &it), SQLQ_BUSY);
  FZ_CHECK(it == NULL, "a busy pool handed out an item");
  for (int i = 0; i < n; i++) {
    FZ_STATUS(db, sqlq_pool_release(db, pool, items[i], tokens[i] ^ 1), SQLQ_STALE);
    FZ_STATUS(db, sqlq_pool_release(db, pool, items[i], tokens[i]), SQLQ_OK);
    FZ_STATUS(db, sqlq_pool_release(db, pool, items[i], tokens[i]), SQLQ_STALE);
  }
}

static void fuzz_pool(fz_input *in) {
  char *pool = fz_string(in, 140);
  uint8_t shape = fz_byte(in);
  int n = shape % (MAX_ITEMS + 1), hold = (shape & 0x80) != 0;
  char *items[MAX_ITEMS], *distinct[MAX_ITEMS];
  int n_distinct = 0;
  for (int i = 0; i < n; i++) {
    /* A short string, or now and then a long one (up to 1275 bytes). */
    uint8_t how = fz_byte(in);
    if (i > 0 && (how & 0x80))
      items[i] = strdup(items[i - 1]);
    else
      items[i] = (how & 0x40) ? fz_string(in, 255)
                              : (char *)fz_bytes(in, (size_t)how * 20 + 1000, &(size_t){0});
    FZ_CHECK(items[i] != NULL, "out of memory");
  }
  int name_ok = fz_valid_text(pool, SQLQ_QUEUE_NAME_MAX);
  if (strcmp(pool, "bystander") == 0) goto done;
  for (int i = 0; i < n; i++) {
    int ok = name_ok && fz_valid_text(items[i], SQLQ_POOL_ITEM_MAX), added = -1, fresh = 1;
    for (int k = 0; k < n_distinct; k++) fresh &= strcmp(distinct[k], items[i]) != 0;
    int rc = sqlq_pool_add(db, pool, items[i], &added);
    FZ_CHECK(rc == (ok ? SQLQ_OK : SQLQ_MISUSE), "pool_add of item %d gave %s (%s)", i,
             sqlq_status_name(rc), sqlq_errmsg(db));
    if (!ok) continue;
    FZ_CHECK(added == fresh, "pool_add of item %d said added %d", i, added);
    if (fresh) distinct[n_distinct++] = items[i];
  }
  sqlq_pool_item *list = NULL;
  size_t got = 0;
  int rc = sqlq_pool_list(db, pool, &list, &got);
  FZ_CHECK(rc == (!name_ok     ? SQLQ_MISUSE
                  : n_distinct ? SQLQ_OK
                               : SQLQ_NOTFOUND),
           "pool_list gave %s (%s)", sqlq_status_name(rc), sqlq_errmsg(db));
  FZ_CHECK((int)got == n_distinct, "pool_list gave %zu items of %d", got, n_distinct);
  for (size_t i = 0; i < got; i++)
    FZ_CHECK(strcmp(list[i].item, distinct[i]) == 0 && list[i].uses == 0 &&
               list[i].last_used_at_us == 0 && list[i].held_until_us == 0,
             "pool_list item %zu is '%s'", i, list[i].item);
  sqlq_pool_items_free(list, got);
  if (n_distinct == 0) goto done;
  check_turns(pool, distinct, n_distinct, hold);
  for (int i = 0; i < n_distinct; i++) {
    FZ_STATUS(db, sqlq_pool_remove(db, pool, distinct[i]), SQLQ_OK);
    FZ_STATUS(db, sqlq_pool_remove(db, pool, distinct[i]), SQLQ_NOTFOUND);
  }
  FZ_STATUS(db, sqlq_pool_list(db, pool, &list, &got), SQLQ_NOTFOUND);
done:
  for (int i = 0; i < n; i++) free(items[i]);
  free(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_input in = {data, size};
  fuzz_ring(&in);
  fuzz_pool(&in);
  check_bystanders();
  return 0;
}
