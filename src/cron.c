/*
** cron.c -- the specs of periodic jobs: parsing them and finding their
** next tick (see sqlq_cron.h).
**
** The five fields follow Vixie cron: minute (0-59), hour (0-23), day of
** the month (1-31), month (1-12 or JAN-DEC), day of the week (0-7 or
** SUN-SAT, 0 and 7 both Sunday).  A field is a comma-separated list of
** items; an item is '*', a number or name, or a range a-b, each with an
** optional step /n; "a/n" is short for a-max/n.  Names are
** case-insensitive.  When both day fields are restricted (neither begins
** with '*'), a day matches when either matches; otherwise both must.
*/
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sqlq_cron.h"

/* One field of a calendar spec: its range and names. */
struct field {
  const char *what;
  int min, max;
  const char *const *names; /* names[i] is value min + i; NULL: none */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"};

static const struct field fields[5] = {
  {"minute", 0, 59, NULL},
  {"hour", 0, 23, NULL},
  {"day of the month", 1, 31, NULL},
  {"month", 1, 12, month_names},
  {"day of the week", 0, 7, day_names},
};

static const struct {
  const char *name;
  const char *spec;
} macros[] = {
  {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
  {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
  {"@hourly", "0 * * * *"},
};

int sqlq__cron_fail(char *err, size_t err_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, err_size, fmt, ap);
  va_end(ap);
  return SQLQ_MISUSE;
}

#define fail sqlq__cron_fail

/* Read a number or (when f has names) a three-letter name at *p into *v,
** advancing *p; 0 when there is none. */
static int read_value(const char **p, const struct field *f, long *v) {
  const char *s = *p;
  if (isdigit((unsigned char)*s)) {
    long n = 0;
    while (isdigit((unsigned char)*s) && n < 100000) n = n * 10 + (*s++ - '0');
    if (isdigit((unsigned char)*s)) return 0;
    *v = n;
    *p = s;
    return 1;
  }
  for (int i = 0; f->names && i <= f->max - f->min; i++)
    if (strncasecmp(s, f->names[i], 3) == 0 && !isalpha((unsigned char)s[3])) {
      *v = f->min + i;
      *p = s + 3;
      return 1;
    }
  return 0;
}

/* Parse one field (len bytes at s) into the bit set *bits. */
static int parse_field(const char *s, size_t len, const struct field *f, uint64_t *bits, char *err,
                       size_t err_size) {
  const char *end = s + len;
  *bits = 0;
  while (s < end) {
    long lo, hi, step = 1;
    int single = 0;
    if (*s == '*') {
      lo = f->min, hi = f->max, s++;
    } else if (read_value(&s, f, &lo)) {
      hi = lo, single = *s != '-';
      if (*s == '-' && (s++, !read_value(&s, f, &hi)))
        return fail(err, err_size, "%s field: a range needs an end", f->what);
    } else {
      return fail(err, err_size, "%s field: expected a number, a name or '*'", f->what);
    }
    if (*s == '/') {
      s++;
      if (!read_value(&s, &(struct field){0}, &step) || step < 1)
        return fail(err, err_size, "%s field: a step must be a number from 1", f->what);
      if (single) hi = f->max; /* "a/n" */
    }
    if (lo < f->min || lo > f->max || hi > f->max)
      return fail(err, err_size, "%s field: values go from %d to %d", f->what, f->min, f->max);
    if (lo > hi)
      return fail(err, err_size, "%s field: a range from %ld down to %ld", f->what, lo, hi);
    for (long v = lo; v <= hi; v += step) *bits |= (uint64_t)1 << v;
    if (s < end && *s != ',')
      return fail(err, err_size, "%s field: unexpected character after an item", f->what);
    if (s < end && ++s == end)
      return fail(err, err_size, "%s field: a list ends with ','", f->what);
  }
  return SQLQ_OK;
}

/* Parse the text after "@every" (leading blanks skipped): number-unit
** pairs, added up. */
static int parse_every(const char *s, int64_t *every, char *err, size_t err_size) {
  static const char units[] = "smhd";
  static const int64_t unit_s[] = {1, 60, 3600, 86400};
  int64_t total = 0;
  while (*s == ' ' || *s == '\t') s++;
  if (*s == '\0') return fail(err, err_size, "@every needs an interval such as 30s");
  while (*s && *s != ' ' && *s != '\t') {
    int64_t n = 0;
    if (!isdigit((unsigned char)*s)) return fail(err, err_size, "@every: expected a number");
    for (; isdigit((unsigned char)*s); s++)
      if (n <= SQLQ__CRON_EVERY_MAX) n = n * 10 + (*s - '0'); /* past it: too big anyway */
    const char *u = *s ? strchr(units, *s) : NULL;
    if (u == NULL) return fail(err, err_size, "@every: each number needs a unit, s, m, h or d");
    s++;
    if (n > SQLQ__CRON_EVERY_MAX) n = SQLQ__CRON_EVERY_MAX + 1;
    total += n * unit_s[u - units];
    if (total > SQLQ__CRON_EVERY_MAX)
      return fail(err, err_size, "@every: the interval is over %ld days",
                  (long)(SQLQ__CRON_EVERY_MAX / 86400));
  }
  while (*s == ' ' || *s == '\t') s++;
  if (*s) return fail(err, err_size, "@every: unexpected text after the interval");
  if (total < 1) return fail(err, err_size, "@every: the interval must be at least 1s");
  *every = total;
  return SQLQ_OK;
}

/* Parse five blank-separated fields. */
static int parse_fields(const char *s, sqlq__cron *c, char *err, size_t err_size) {
  uint64_t bits[5];
  int n = 0;
  while (1) {
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '\0') break;
    size_t len = strcspn(s, " \t");
    if (n == 5) break;
    if (n == 2) c->mday_star = *s == '*';
    if (n == 4) c->wday_star = *s == '*';
    int rc = parse_field(s, len, &fields[n], &bits[n], err, err_size);
    if (rc != SQLQ_OK) return rc;
    n++;
    s += len;
  }
  if (n != 5 || *s)
    return fail(err, err_size, "a spec has five fields (minute hour day month weekday)");
  c->minutes = bits[0];
  c->hours = (uint32_t)bits[1];
  c->mdays = (uint32_t)bits[2];
  c->months = (uint16_t)bits[3];
  c->wdays = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f); /* 7 is Sunday */
  return SQLQ_OK;
}

int sqlq__cron_parse(const char *text, sqlq__cron *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (text == NULL || *text == '\0') return fail(err, err_size, "the spec is empty");
  if (strlen(text) > 256) return fail(err, err_size, "the spec is over %d bytes", 256);
  while (*text == ' ' || *text == '\t') text++;
  if (strncasecmp(text, "@every", 6) == 0 && (text[6] == ' ' || text[6] == '\t'))
    return parse_every(text + 6, &out->every, err, err_size);
  if (*text == '@') {
    size_t len = strcspn(text, " \t");
    const char *rest = text + len + strspn(text + len, " \t");
    for (size_t i = 0; *rest == '\0' && i < sizeof macros / sizeof macros[0]; i++)
      if (strlen(macros[i].name) == len && strncasecmp(text, macros[i].name, len) == 0)
        return parse_fields(macros[i].spec, out, err, err_size);
    return fail(err, err_size,
                "unknown macro: use @yearly, @monthly, @weekly, @daily, @hourly or @every");
  }
  return parse_fields(text, out, err, err_size);
}

/* ---------------------------------------------------------------------
** The next tick.
*/

/* The local time (seconds) of year/mon/mday hour:00, with timegm()'s
** normalisation of days past the month's end. */
static int64_t local_at(const struct tm *tm, int mon, int mday, int hour) {
  struct tm t = {.tm_year = tm->tm_year, .tm_mon = mon, .tm_mday = mday, .tm_hour = hour};
  return (int64_t)timegm(&t);
}

static int day_matches(const sqlq__cron *c, const struct tm *tm) {
  int mday = (c->mdays >> tm->tm_mday) & 1, wday = (c->wdays >> tm->tm_wday) & 1;
  return c->mday_star || c->wday_star ? mday && wday : mday || wday;
}

/* The first local minute at or after from (a whole minute) that c
** matches, before limit, into *out; SQLQ_NOTFOUND when there is none.
** Each turn moves to the next month, day, hour or minute that may match,
** so the turns are bounded by the minutes, hours and days before limit. */
static int next_local(const sqlq__cron *c, int64_t from, int64_t limit, int64_t *out) {
  int64_t t = from;
  while (t < limit) {
    time_t tt = (time_t)t;
    struct tm tm;
    if (gmtime_r(&tt, &tm) == NULL) return SQLQ_NOTFOUND;
    if (!((c->months >> (tm.tm_mon + 1)) & 1))
      t = local_at(&tm, tm.tm_mon + 1, 1, 0);
    else if (!day_matches(c, &tm))
      t = local_at(&tm, tm.tm_mon, tm.tm_mday + 1, 0);
    else if (!((c->hours >> tm.tm_hour) & 1))
      t = local_at(&tm, tm.tm_mon, tm.tm_mday, tm.tm_hour + 1);
    else if (!((c->minutes >> tm.tm_min) & 1))
      t += 60;
    else {
      *out = t;
      return SQLQ_OK;
    }
  }
  return SQLQ_NOTFOUND;
}

/* The UTC time of the local time l in tz: its first occurrence, or, in
** a gap, l with the offset in force before the gap; *late receives how
** much later than l that is in the gap (the gap's length), else 0. */
static int64_t local_to_utc(const sqlq__tz *tz, int64_t l, int64_t *late) {
  /* The offsets a day either side: no zone changes twice in two days. */
  int64_t oa = sqlq__tz_offset(tz, l - 86400), ob = sqlq__tz_offset(tz, l + 86400);
  int64_t ua = l - oa, ub = l - ob;
  int a_ok = sqlq__tz_offset(tz, ua) == oa, b_ok = sqlq__tz_offset(tz, ub) == ob;
  *late = a_ok || b_ok ? 0 : ob - oa;
  if (a_ok && b_ok) return ua < ub ? ua : ub;
  return b_ok ? ub : ua;
}

/* The year 9999 ends: timegm() and gmtime_r() are safe before it. */
#define YEAR_9999_END ((int64_t)253402300800)

int sqlq__cron_next(const sqlq__cron *c, const sqlq__tz *tz, int64_t after, int64_t *next) {
  if (after < 0 || after >= YEAR_9999_END - SQLQ__CRON_HORIZON - 2 * 86400) return SQLQ_NOTFOUND;
  if (c->every > 0) {
    *next = (after / c->every + 1) * c->every;
    return SQLQ_OK;
  }
  /* From the wall time of after at the smaller of the offsets of now and
  ** a day ago: a wall time of a gap just behind ticks after the gap. */
  int64_t off = sqlq__tz_offset(tz, after), before = sqlq__tz_offset(tz, after - 86400);
  int64_t local = after + (before < off ? before : off);
  int64_t from = (local >= 0 ? local / 60 : (local - 59) / 60) * 60 + 60;
  int64_t limit = from + SQLQ__CRON_HORIZON;
  /* A wall time that ticks at or before `after` came already (or the clock
  ** fell back past it): try the next.  Each turn moves from on, so the
  ** turns are bounded by the minutes before limit. */
  while (next_local(c, from, limit, &local) == SQLQ_OK) {
    int64_t late, first = local_to_utc(tz, local, &late);
    if (first > after) {
      /* A wall time of a gap ticks late: one after it, within the gap's
      ** length, may tick sooner (a half-hour gap, 02:20 and 02:40). */
      for (int64_t l = local + 60, end = local + late, unused;
           l < end && next_local(c, l, end, &l) == SQLQ_OK; l += 60) {
        int64_t t = local_to_utc(tz, l, &unused);
        if (t > after && t < first) first = t;
      }
      *next = first;
      return SQLQ_OK;
    }
    from = local + 60;
  }
  return SQLQ_NOTFOUND;
}
