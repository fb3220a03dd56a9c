/*
** cron.c -- fuzz the parser of schedule specs and their next tick
** (src/cron.c, src/tz.c).
**
** The input: one byte that picks a time zone of a fixed list, four bytes
** of a start time, then the spec's text (up to its first NUL).  What must
** hold:
**   - sqlq__cron_parse() gives SQLQ_OK or SQLQ_MISUSE, and a refusal's
**     message is printable ASCII (it never quotes the spec);
**   - a parsed calendar spec has every set non-empty and within its range;
**   - sqlq__cron_next() gives SQLQ_OK or SQLQ_NOTFOUND, in bounded time
**     (libFuzzer's -timeout catches a loop), and three ticks in a row
**     each come after the one before, so that a scheduler always moves on;
**   - asked again from one second before a tick it gives that tick (the
**     tick is the first after any time between its predecessor and it);
**   - a tick of a calendar spec in UTC falls on a whole minute that the
**     spec matches;
**   - and the sanitizers' checks.
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "sqlq_cron.h"

static const char *const zones[] = {
  "UTC",          "Europe/Paris", "America/New_York", "Australia/Lord_Howe",
  "Pacific/Apia", "Asia/Kolkata", "America/Santiago", "Nowhere/Land"};
#define N_ZONES (sizeof zones / sizeof zones[0])

static void check_message(const char *err) {
  FZ_CHECK(*err != '\0', "a refusal without a message");
  for (const char *p = err; *p; p++)
    FZ_CHECK(*p >= 0x20 && *p < 0x7f, "a message with a byte that is not printable ASCII");
}

static void check_sets(const sqlq__cron *c) {
  if (c->every > 0) {
    FZ_CHECK(c->every <= SQLQ__CRON_EVERY_MAX, "an interval over the maximum");
    return;
  }
  FZ_CHECK(c->minutes != 0 && c->minutes >> 60 == 0, "bad minutes");
  FZ_CHECK(c->hours != 0 && c->hours >> 24 == 0, "bad hours");
  FZ_CHECK(c->mdays != 0 && (c->mdays & 1) == 0, "bad days of the month");
  FZ_CHECK(c->months != 0 && (c->months & 1) == 0 && c->months >> 13 == 0, "bad months");
  FZ_CHECK(c->wdays != 0 && c->wdays >> 7 == 0, "bad days of the week");
}

/* A tick of c in UTC matches c. */
static void check_utc_match(const sqlq__cron *c, int64_t t) {
  time_t tt = (time_t)t;
  struct tm tm;
  FZ_CHECK(gmtime_r(&tt, &tm) != NULL, "a tick out of range");
  FZ_CHECK(t % 60 == 0, "a tick that is not a whole minute");
  FZ_CHECK((c->minutes >> tm.tm_min) & 1, "a tick on a minute the spec does not match");
  FZ_CHECK((c->hours >> tm.tm_hour) & 1, "a tick on an hour the spec does not match");
  FZ_CHECK((c->months >> (tm.tm_mon + 1)) & 1, "a tick in a month the spec does not match");
  int mday = (c->mdays >> tm.tm_mday) & 1, wday = (c->wdays >> tm.tm_wday) & 1;
  FZ_CHECK(c->mday_star || c->wday_star ? mday && wday : mday || wday,
           "a tick on a day the spec does not match");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_input in = {data, size};
  const char *zone = zones[fz_byte(&in) % N_ZONES];
  int64_t start = (int64_t)fz_u32(&in) * 2; /* 1970 to 2242 */
  char *spec = fz_string(&in, 255);
  sqlq__cron c;
  char err[256] = "";
  int rc = sqlq__cron_parse(spec, &c, err, sizeof err);
  FZ_CHECK(rc == SQLQ_OK || rc == SQLQ_MISUSE, "parse returned %s", sqlq_status_name(rc));
  if (rc != SQLQ_OK) {
    check_message(err);
    free(spec);
    return 0;
  }
  check_sets(&c);
  sqlq__tz *tz = NULL;
  rc = sqlq__tz_load(zone, &tz, err, sizeof err);
  FZ_CHECK(rc == SQLQ_OK || (rc == SQLQ_MISUSE && strcmp(zone, "Nowhere/Land") == 0), "zone %s: %s",
           zone, err);
  if (rc == SQLQ_OK) {
    int64_t t = start;
    for (int i = 0; i < 3; i++) {
      int64_t next = 0, again = 0;
      rc = sqlq__cron_next(&c, tz, t, &next);
      FZ_CHECK(rc == SQLQ_OK || rc == SQLQ_NOTFOUND, "next returned %s", sqlq_status_name(rc));
      if (rc != SQLQ_OK) break;
      FZ_CHECK(next > t, "a next tick %lld not after %lld", (long long)next, (long long)t);
      FZ_CHECK(sqlq__cron_next(&c, tz, next - 1, &again) == SQLQ_OK && again == next,
               "the tick %lld is not the next after one second before it", (long long)next);
      if (c.every == 0 && strcmp(zone, "UTC") == 0) check_utc_match(&c, next);
      t = next;
    }
  } else {
    check_message(err);
  }
  sqlq__tz_free(tz);
  free(spec);
  return 0;
}
