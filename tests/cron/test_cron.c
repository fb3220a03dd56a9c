/*
** test_cron.c -- unit tests of the parser of schedule specs and of their
** next ticks (src/cron.c, src/tz.c), across the DST changes of several
** zones.  The program links the library's objects, to reach these
** internal functions.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sqlq_cron.h"

/* "YYYY-MM-DD HH:MM" (UTC) as seconds since the epoch. */
static int64_t utc(const char *text) {
  struct tm tm = {0};
  const char *end = strptime(text, "%Y-%m-%d %H:%M", &tm);
  assert_non_null(end);
  return (int64_t)timegm(&tm);
}

/* Seconds as "YYYY-MM-DD HH:MM" (UTC) into buf. */
static const char *show(int64_t t, char buf[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(buf, 32, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

/* One spec in one zone from one time, with the UTC times of its next
** ticks (NULL-terminated; "none" when the spec has no next tick). */
struct expect {
  const char *spec;
  const char *zone;
  const char *from;
  const char *ticks[8];
};

static void check_ticks(const struct expect *e) {
  sqlq__cron c;
  sqlq__tz *tz;
  char err[256];
  if (sqlq__cron_parse(e->spec, &c, err, sizeof err) != SQLQ_OK)
    fail_msg("'%s' does not parse: %s", e->spec, err);
  if (sqlq__tz_load(e->zone, &tz, err, sizeof err) != SQLQ_OK)
    fail_msg("zone %s: %s", e->zone, err);
  int64_t t = utc(e->from);
  for (int i = 0; e->ticks[i]; i++) {
    int64_t next = 0;
    char got[32];
    int rc = sqlq__cron_next(&c, tz, t, &next);
    if (strcmp(e->ticks[i], "none") == 0) {
      if (rc != SQLQ_NOTFOUND) fail_msg("'%s': expected no tick, got %s", e->spec, show(next, got));
      break;
    }
    if (rc != SQLQ_OK)
      fail_msg("'%s' in %s: no tick %d, expected %s", e->spec, e->zone, i, e->ticks[i]);
    if (next != utc(e->ticks[i]))
      fail_msg("'%s' in %s tick %d: got %s UTC, expected %s UTC", e->spec, e->zone, i,
               show(next, got), e->ticks[i]);
    t = next;
  }
  sqlq__tz_free(tz);
}

static void run_table(const struct expect *table, size_t n) {
  for (size_t i = 0; i < n; i++) check_ticks(&table[i]);
}
#define RUN_TABLE(t) run_table((t), sizeof(t) / sizeof((t)[0]))

/* Fields, lists, ranges, steps, names and macros in UTC. */
static void ticks_utc(void **state) {
  (void)state;
  static const struct expect table[] = {
    {"* * * * *", "UTC", "2026-01-01 00:00", {"2026-01-01 00:01", "2026-01-01 00:02"}},
    {"*/15 * * * *",
     "UTC",
     "2026-01-01 00:07",
     {"2026-01-01 00:15", "2026-01-01 00:30", "2026-01-01 00:45", "2026-01-01 01:00"}},
    {"5/20 * * * *",
     "UTC",
     "2026-01-01 00:00",
     {"2026-01-01 00:05", "2026-01-01 00:25", "2026-01-01 00:45", "2026-01-01 01:05"}},
    {"0 9-17/4 * * *",
     "UTC",
     "2026-01-01 10:00",
     {"2026-01-01 13:00", "2026-01-01 17:00", "2026-01-02 09:00"}},
    {"30 8 * * MON-FRI",
     "UTC",
     "2026-11-27 09:00", /* a Friday */
     {"2026-11-30 08:30", "2026-12-01 08:30"}},
    {"0 0 * * 7", "UTC", "2026-11-26 00:00", {"2026-11-29 00:00", "2026-12-06 00:00"}},
    {"0 0 * * sun", "UTC", "2026-11-26 00:00", {"2026-11-29 00:00"}},
    {"0 12 * jan,Jul *", "UTC", "2026-01-31 13:00", {"2026-07-01 12:00"}},
    {"1,2,3 4 5 6 *",
     "UTC",
     "2026-01-01 00:00",
     {"2026-06-05 04:01", "2026-06-05 04:02", "2026-06-05 04:03", "2027-06-05 04:01"}},
    /* Both day fields restricted: either matches (13th or a Friday). */
    {"0 0 13 * FRI",
     "UTC",
     "2026-11-01 00:00",
     {"2026-11-06 00:00", "2026-11-13 00:00", "2026-11-20 00:00"}},
    /* A '*' day field: both must match (every Friday). */
    {"0 0 */1 * FRI", "UTC", "2026-11-01 00:00", {"2026-11-06 00:00", "2026-11-13 00:00"}},
    {"0 0 31 * *", "UTC", "2026-01-31 00:00", {"2026-03-31 00:00", "2026-05-31 00:00"}},
    {"0 0 29 2 *", "UTC", "2026-01-01 00:00", {"2028-02-29 00:00", "2032-02-29 00:00"}},
    {"0 0 30 2 *", "UTC", "2026-01-01 00:00", {"none"}},
    {"0 0 31 4,6,9,11 *", "UTC", "2026-01-01 00:00", {"none"}},
    {"@hourly", "UTC", "2026-01-01 00:00", {"2026-01-01 01:00"}},
    {"@daily", "UTC", "2026-01-01 00:00", {"2026-01-02 00:00"}},
    {"@midnight", "UTC", "2026-01-01 00:01", {"2026-01-02 00:00"}},
    {"@weekly", "UTC", "2026-11-26 00:00", {"2026-11-29 00:00"}},
    {"@monthly", "UTC", "2026-11-26 00:00", {"2026-12-01 00:00"}},
    {"@yearly", "UTC", "2026-11-26 00:00", {"2027-01-01 00:00"}},
    {"@annually", "UTC", "2026-11-26 00:00", {"2027-01-01 00:00"}},
    {"@every 1h", "UTC", "2026-01-01 00:00", {"2026-01-01 01:00", "2026-01-01 02:00"}},
    /* Intervals count from the epoch, in UTC whatever the zone. */
    {"@every 1d", "Europe/Paris", "2026-03-28 12:00", {"2026-03-29 00:00", "2026-03-30 00:00"}},
  };
  RUN_TABLE(table);
  /* Seconds, which the table's times do not show. */
  sqlq__cron c;
  char err[256];
  assert_int_equal(sqlq__cron_parse("  @EVERY 1m30s ", &c, err, sizeof err), SQLQ_OK);
  assert_int_equal(c.every, 90);
  int64_t next;
  assert_int_equal(sqlq__cron_next(&c, NULL, utc("2026-01-01 00:00"), &next), SQLQ_OK);
  assert_int_equal(next, utc("2026-01-01 00:00") + 90);
  assert_int_equal(sqlq__cron_next(&c, NULL, next, &next), SQLQ_OK);
  assert_int_equal(next, utc("2026-01-01 00:03"));
  assert_int_equal(sqlq__cron_parse("@every 2d3h4m5s", &c, err, sizeof err), SQLQ_OK);
  assert_int_equal(c.every, 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
}

/* Across DST changes: a gap ticks late by the gap's length (merged with
** a tick already there), an overlap ticks once, at its first occurrence. */
static void ticks_dst(void **state) {
  (void)state;
  static const struct expect table[] = {
    /* Paris springs forward at 01:00 UTC on 2026-03-29 (02:00 CET -> 03:00 CEST). */
    {"30 2 * * *",
     "Europe/Paris",
     "2026-03-28 00:00",
     {"2026-03-28 01:30", "2026-03-29 01:30", "2026-03-30 00:30"}},
    {"*/30 * * * *",
     "Europe/Paris",
     "2026-03-29 00:00",
     {"2026-03-29 00:30", "2026-03-29 01:00", "2026-03-29 01:30", "2026-03-29 02:00"}},
    {"0 * * * *",
     "Europe/Paris",
     "2026-03-28 23:30",
     {"2026-03-29 00:00", "2026-03-29 01:00", "2026-03-29 02:00"}},
    /* From inside the hour the clock skipped, 02:30 still comes, at 03:30. */
    {"30 2 * * *", "Europe/Paris", "2026-03-29 01:10", {"2026-03-29 01:30", "2026-03-30 00:30"}},
    {"36 2 31 3 *", "Europe/Paris", "2244-03-31 01:20", {"2244-03-31 01:36"}},
    /* Paris falls back at 01:00 UTC on 2026-10-25 (03:00 CEST -> 02:00 CET). */
    {"0 * * * *",
     "Europe/Paris",
     "2026-10-24 23:30",
     {"2026-10-25 00:00", "2026-10-25 02:00", "2026-10-25 03:00"}},
    {"30 2 * * *", "Europe/Paris", "2026-10-24 12:00", {"2026-10-25 00:30", "2026-10-26 01:30"}},
    /* New York: 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT -> 01:00 EST. */
    {"30 2 * * *",
     "America/New_York",
     "2026-03-07 12:00",
     {"2026-03-08 07:30", "2026-03-09 06:30"}},
    {"30 1 * * *",
     "America/New_York",
     "2026-10-31 12:00",
     {"2026-11-01 05:30", "2026-11-02 06:30"}},
    /* Sydney (southern hemisphere): 2026-04-05 03:00 AEDT -> 02:00 AEST. */
    {"30 2 * * *",
     "Australia/Sydney",
     "2026-04-03 12:00",
     {"2026-04-03 15:30", "2026-04-04 15:30", "2026-04-05 16:30"}},
    /* Lord Howe moves by half an hour: 2026-10-04 02:00 -> 02:30 (+10:30 -> +11). */
    {"15 2 * * *",
     "Australia/Lord_Howe",
     "2026-10-02 12:00",
     {"2026-10-02 15:45", "2026-10-03 15:45", "2026-10-04 15:15"}},
    /* 02:20 is skipped, ticks at 02:50; 02:40 is not skipped and ticks first. */
    {"20,40 2 * * *",
     "Australia/Lord_Howe",
     "2026-10-03 12:00",
     {"2026-10-03 15:40", "2026-10-03 15:50", "2026-10-04 15:20", "2026-10-04 15:40"}},
    /* Samoa skipped 2011-12-30 entirely (UTC-10 -> UTC+14): its noon
    ** ticks a day late, on the noon of the 31st, once. */
    {"0 12 * * *",
     "Pacific/Apia",
     "2011-12-28 12:00",
     {"2011-12-28 22:00", "2011-12-29 22:00", "2011-12-30 22:00", "2011-12-31 22:00"}},
    {"0 9 * * *", "Asia/Kolkata", "2026-01-01 00:00", {"2026-01-01 03:30"}},
    /* Past the files' transitions (2037), the footer's rules apply. */
    {"0 3 * * *", "Europe/Paris", "2060-03-27 12:00", {"2060-03-28 01:00", "2060-03-29 01:00"}},
    {"0 3 * * *", "America/Sao_Paulo", "2060-01-01 00:00", {"2060-01-01 06:00"}},
  };
  RUN_TABLE(table);
}

/* The offsets agree with the C library's for every zone tried, from 1906
** to 2103, ten hours and some seconds apart. */
static void offsets_agree_with_libc(void **state) {
  (void)state;
  static const char *const zones[] = {"Europe/Paris",     "America/New_York",
                                      "Australia/Sydney", "Australia/Lord_Howe",
                                      "Asia/Kolkata",     "America/Sao_Paulo",
                                      "Pacific/Apia",     "Europe/London",
                                      "America/Santiago", "Africa/Casablanca",
                                      "Asia/Tehran",      "Pacific/Chatham",
                                      "Etc/GMT+5",        "UTC"};
  for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
    sqlq__tz *tz;
    char err[256];
    if (sqlq__tz_load(zones[z], &tz, err, sizeof err) != SQLQ_OK) fail_msg("%s", err);
    setenv("TZ", zones[z], 1);
    tzset();
    for (int64_t t = -2000000000LL; t < 4200000000LL; t += 36007) {
      time_t tt = (time_t)t;
      struct tm lt;
      localtime_r(&tt, &lt);
      if (lt.tm_gmtoff != sqlq__tz_offset(tz, t))
        fail_msg("%s at %lld: libc says %ld, we say %lld", zones[z], (long long)t, lt.tm_gmtoff,
                 (long long)sqlq__tz_offset(tz, t));
    }
    sqlq__tz_free(tz);
  }
  unsetenv("TZ");
}

/* Bad specs: refused with a message that names what is wrong. */
static void bad_specs(void **state) {
  (void)state;
  static const struct {
    const char *spec;
    const char *says;
  } table[] = {
    {"", "empty"},
    {"* * * *", "five fields"},
    {"* * * * * *", "five fields"},
    {"60 * * * *", "minute field: values go from 0 to 59"},
    {"* 24 * * *", "hour field"},
    {"* * 0 * *", "day of the month field"},
    {"* * 32 * *", "day of the month field"},
    {"* * * 13 *", "month field"},
    {"* * * * 8", "day of the week field"},
    {"5-1 * * * *", "a range from 5 down to 1"},
    {"*/0 * * * *", "a step must be a number from 1"},
    {"1, * * * *", "a list ends with ','"},
    {",1 * * * *", "expected a number"},
    {"1-* * * * *", "a range needs an end"},
    {"* * * FOO *", "month field: expected"},
    {"* * * JANUARY *", "month field"},
    {"* * * * MON-", "a range needs an end"},
    {"1x * * * *", "unexpected character"},
    {"99999999999999999999 * * * *", "minute field"},
    {"@every", "unknown macro"},
    {"@every ", "@every needs an interval"},
    {"@every 0s", "at least 1s"},
    {"@every 10", "each number needs a unit"},
    {"@every 10y", "each number needs a unit"},
    {"@every 3661d", "over 3660 days"},
    {"@every 99999999999999999999999s", "over 3660 days"},
    {"@every 1s x", "unexpected text"},
    {"@reboot", "unknown macro"},
    {"@daily 5", "unknown macro"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    sqlq__cron c;
    char err[256] = "";
    if (sqlq__cron_parse(table[i].spec, &c, err, sizeof err) != SQLQ_MISUSE)
      fail_msg("'%s' was accepted", table[i].spec);
    if (strstr(err, table[i].says) == NULL)
      fail_msg("'%s': message '%s' does not say '%s'", table[i].spec, err, table[i].says);
  }
  char long_spec[300];
  memset(long_spec, '*', sizeof long_spec - 1);
  long_spec[sizeof long_spec - 1] = '\0';
  sqlq__cron c;
  char err[256];
  assert_int_equal(sqlq__cron_parse(long_spec, &c, err, sizeof err), SQLQ_MISUSE);
  assert_int_equal(sqlq__cron_parse(NULL, &c, err, sizeof err), SQLQ_MISUSE);
}

/* Zone names: what is not a name of the database is refused, and so is
** a name that would leave it. */
static void bad_zones(void **state) {
  (void)state;
  static const char *const names[] = {
    "",        "Nowhere/Land", "../etc/passwd", "/etc/localtime", "Europe/../UTC", "Europe//Paris",
    "Europe/", ".hidden",      "Europe/Pa ris", "right/UTC",      "zone.tab",      "Europe",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    sqlq__tz *tz = (sqlq__tz *)1;
    char err[256] = "";
    if (sqlq__tz_load(names[i], &tz, err, sizeof err) != SQLQ_MISUSE)
      fail_msg("zone '%s' was accepted", names[i]);
    assert_null(tz);
    assert_true(strlen(err) > 0);
  }
  sqlq__tz *tz = (sqlq__tz *)1;
  char err[256];
  assert_int_equal(sqlq__tz_load(NULL, &tz, err, sizeof err), SQLQ_MISUSE);
}

/* Whatever the spec, the next tick comes in bounded time and after the
** time given, from any start from 1970 to 2200. */
static void next_is_bounded(void **state) {
  (void)state;
  static const char *const specs[] = {"0 0 30 2 *", "0 0 31 2 MON", "59 23 31 12 *",
                                      "0 0 29 2 *", "* * * * *",    "0 0 1 1 *"};
  sqlq__tz *tz;
  char err[256];
  assert_int_equal(sqlq__tz_load("Europe/Paris", &tz, err, sizeof err), SQLQ_OK);
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    sqlq__cron c;
    assert_int_equal(sqlq__cron_parse(specs[i], &c, err, sizeof err), SQLQ_OK);
    for (int64_t t = 0; t < 7258118400LL; t += 86400LL * 997 + 4321) {
      int64_t next = 0;
      int rc = sqlq__cron_next(&c, tz, t, &next);
      assert_true(rc == SQLQ_OK || rc == SQLQ_NOTFOUND);
      if (rc == SQLQ_OK) assert_true(next > t);
    }
  }
  sqlq__tz_free(tz);
  sqlq__cron c;
  int64_t next;
  assert_int_equal(sqlq__cron_parse("* * * * *", &c, err, sizeof err), SQLQ_OK);
  assert_int_equal(sqlq__cron_next(&c, NULL, -1, &next), SQLQ_NOTFOUND);
  assert_int_equal(sqlq__cron_next(&c, NULL, 253402300799LL, &next), SQLQ_NOTFOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(ticks_utc),
    cmocka_unit_test(ticks_dst),
    cmocka_unit_test(offsets_agree_with_libc),
    cmocka_unit_test(bad_specs),
    cmocka_unit_test(bad_zones),
    cmocka_unit_test(next_is_bounded),
  };
  return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
