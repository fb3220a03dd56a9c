/*
** tz.c -- time zones of the system's tz database, for schedules.
**
** The C library offers local time only for the one zone of the process
** (TZ), so the library reads the zone's TZif file itself (RFC 8536): the
** version 2+ data block of 64-bit transition times, and for times after
** the last transition the footer's POSIX TZ string ("CET-1CEST,M3.5.0,
** M10.5.0/3").  Files with leap seconds ("right/...") are refused: their
** times are not Unix times.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sqlq_cron.h"

/* The largest TZif file read (the biggest in tzdata is under 4 KiB). */
#define TZ_FILE_MAX (256 * 1024)

/* A rule of a POSIX TZ string: the day DST starts or ends, and the local
** time of day (seconds) it does. */
struct rule {
  char kind; /* 'J' (Jn: 1-365, no Feb 29), 'D' (n: 0-365), 'M' (Mm.w.d) */
  int n, m, w, d;
  int64_t time;
};

struct sqlq__tz {
  size_t n_trans;
  int64_t *trans;     /* the UTC times of the transitions, ascending */
  int32_t *trans_off; /* the offset from each transition on */
  int32_t first_off;  /* before the first transition */
  int has_footer;     /* the POSIX string gives times after the last */
  int has_dst;        /* ... with daylight saving time by rules */
  int64_t std_off, dst_off;
  struct rule start, end;
};

#define fail sqlq__cron_fail

/* A zone name is a relative path of the tz database: letters, digits and
** "/_+-." without a component that begins with '.'. */
static int name_ok(const char *name) {
  size_t len = strlen(name);
  if (len == 0 || len > SQLQ__TZ_NAME_MAX || name[0] == '/') return 0;
  for (size_t i = 0; i < len; i++) {
    char ch = name[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             strchr("/_+-.", ch);
    if (!ok || (ch == '.' && (i == 0 || name[i - 1] == '/'))) return 0;
    if (ch == '/' && (i + 1 == len || name[i + 1] == '/')) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------------
** POSIX TZ strings.
*/

/* Read [+-]hh[:mm[:ss]] at *p (hours up to max_h) into *v seconds. */
static int read_hms(const char **p, int max_h, int64_t *v) {
  const char *s = *p;
  int sign = 1;
  if (*s == '+' || *s == '-') sign = *s++ == '-' ? -1 : 1;
  int64_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    if (i > 0 && *s != ':') break;
    if (i > 0) s++;
    if (*s < '0' || *s > '9') return 0;
    int64_t n = 0;
    while (*s >= '0' && *s <= '9' && n < 1000) n = n * 10 + (*s++ - '0');
    parts[i] = n;
  }
  if (parts[0] > max_h || parts[1] > 59 || parts[2] > 59) return 0;
  *v = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  *p = s;
  return 1;
}

/* Skip a zone abbreviation: <...> or three or more letters. */
static int skip_abbr(const char **p) {
  const char *s = *p;
  if (*s == '<') {
    const char *e = strchr(s, '>');
    if (e == NULL) return 0;
    *p = e + 1;
    return 1;
  }
  while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) s++;
  if (s - *p < 3) return 0;
  *p = s;
  return 1;
}

static int read_int(const char **p, int lo, int hi, int *v) {
  const char *s = *p;
  int n = 0;
  if (*s < '0' || *s > '9') return 0;
  while (*s >= '0' && *s <= '9' && n <= hi) n = n * 10 + (*s++ - '0');
  if (n < lo || n > hi) return 0;
  *v = n;
  *p = s;
  return 1;
}

static int read_rule(const char **p, struct rule *r) {
  const char *s = *p;
  r->time = 7200;
  if (*s == 'J') {
    s++;
    r->kind = 'J';
    if (!read_int(&s, 1, 365, &r->n)) return 0;
  } else if (*s == 'M') {
    s++;
    r->kind = 'M';
    if (!read_int(&s, 1, 12, &r->m) || *s++ != '.' || !read_int(&s, 1, 5, &r->w) || *s++ != '.' ||
        !read_int(&s, 0, 6, &r->d))
      return 0;
  } else {
    r->kind = 'D';
    if (!read_int(&s, 0, 365, &r->n)) return 0;
  }
  if (*s == '/' && (s++, !read_hms(&s, 167, &r->time))) return 0;
  *p = s;
  return 1;
}

/* Parse the footer's TZ string s (NUL-terminated) into tz. */
static int parse_posix(const char *s, sqlq__tz *tz) {
  int64_t off;
  if (!skip_abbr(&s) || !read_hms(&s, 24, &off)) return 0;
  tz->std_off = -off; /* POSIX counts west of Greenwich */
  tz->has_footer = 1;
  if (*s == '\0') return 1;
  if (!skip_abbr(&s)) return 0;
  tz->has_dst = 1;
  tz->dst_off = tz->std_off + 3600;
  if (*s && *s != ',') {
    if (!read_hms(&s, 24, &off)) return 0;
    tz->dst_off = -off;
  }
  if (*s == '\0') s = ",M3.2.0,M11.1.0"; /* the US rules, as glibc assumes */
  return *s++ == ',' && read_rule(&s, &tz->start) && *s++ == ',' && read_rule(&s, &tz->end) &&
         *s == '\0';
}

static int leap_year(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to the first of January of year y. */
static int64_t days_to_year(int64_t y) {
  struct tm t = {.tm_year = (int)(y - 1900), .tm_mday = 1};
  return (int64_t)timegm(&t) / 86400;
}

/* The UTC time at which rule r takes effect in year y, its time of day
** being local time at offset off. */
static int64_t rule_time(const struct rule *r, int64_t y, int64_t off) {
  static const int month_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int64_t day = 0; /* of the year, from 0 */
  if (r->kind == 'J') {
    day = r->n - 1 + (leap_year(y) && r->n >= 60);
  } else if (r->kind == 'D') {
    day = r->n;
  } else {
    for (int m = 1; m < r->m; m++) day += month_days[m - 1] + (m == 2 && leap_year(y));
    int64_t wday_first = (days_to_year(y) + day + 4) % 7; /* 1970-01-01 was a Thursday */
    if (wday_first < 0) wday_first += 7;
    int64_t mday = (r->d - wday_first + 7) % 7 + (r->w - 1) * 7;
    int len = month_days[r->m - 1] + (r->m == 2 && leap_year(y));
    while (mday >= len) mday -= 7;
    day += mday;
  }
  return (days_to_year(y) + day) * 86400 + r->time - off;
}

/* The offset at t by the POSIX rules. */
static int64_t posix_offset(const sqlq__tz *tz, int64_t t) {
  if (!tz->has_dst) return tz->std_off;
  time_t local = (time_t)(t + tz->std_off);
  struct tm tm;
  if (gmtime_r(&local, &tm) == NULL) return tz->std_off;
  int64_t y = tm.tm_year + 1900;
  int64_t start = rule_time(&tz->start, y, tz->std_off);
  int64_t end = rule_time(&tz->end, y, tz->dst_off);
  int dst = start < end ? t >= start && t < end : !(t >= end && t < start);
  return dst ? tz->dst_off : tz->std_off;
}

/* ---------------------------------------------------------------------
** TZif files.
*/

static int64_t be(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  return n == 4 ? (int64_t)(int32_t)v : (int64_t)v;
}

/* The six counts of a header at p: isut, isstd, leap, time, type, char. */
static void counts(const unsigned char *p, int64_t c[6]) {
  for (int i = 0; i < 6; i++) c[i] = be(p + 20 + 4 * i, 4);
}

/* Bytes of a data block of the given counts with times of tsize bytes. */
static int64_t block_size(const int64_t c[6], int tsize) {
  return c[3] * tsize + c[3] + c[4] * 6 + c[5] + c[2] * (tsize + 4) + c[1] + c[0];
}

/* Read the TZif file's bytes (n of them) into tz. */
static int parse_tzif(const unsigned char *b, size_t n, sqlq__tz *tz, char *err, size_t err_size) {
  int64_t c[6];
  if (n < 44 || memcmp(b, "TZif", 4) != 0 || b[4] < '2')
    return fail(err, err_size, "not a TZif file of version 2 or later");
  counts(b, c);
  for (int i = 0; i < 6; i++)
    if (c[i] < 0 || c[i] > TZ_FILE_MAX) return fail(err, err_size, "a damaged TZif file");
  size_t at = 44 + (size_t)block_size(c, 4);
  if (at + 44 > n || memcmp(b + at, "TZif", 4) != 0)
    return fail(err, err_size, "a damaged TZif file");
  counts(b + at, c);
  at += 44;
  for (int i = 0; i < 6; i++)
    if (c[i] < 0 || c[i] > TZ_FILE_MAX) return fail(err, err_size, "a damaged TZif file");
  if (c[2] > 0) return fail(err, err_size, "the zone counts leap seconds, which schedules do not");
  if (c[4] < 1 || at + (size_t)block_size(c, 8) > n)
    return fail(err, err_size, "a damaged TZif file");
  const unsigned char *times = b + at, *idx = times + c[3] * 8, *types = idx + c[3];
  tz->n_trans = (size_t)c[3];
  tz->trans = malloc((tz->n_trans + 1) * sizeof *tz->trans);
  tz->trans_off = malloc((tz->n_trans + 1) * sizeof *tz->trans_off);
  if (tz->trans == NULL || tz->trans_off == NULL) return SQLQ_NOMEM;
  tz->first_off = (int32_t)be(types, 4);
  for (size_t i = 0; i < tz->n_trans; i++) {
    tz->trans[i] = be(times + 8 * i, 8);
    if (idx[i] >= c[4] || (i > 0 && tz->trans[i] <= tz->trans[i - 1]))
      return fail(err, err_size, "a damaged TZif file");
    tz->trans_off[i] = (int32_t)be(types + 6 * idx[i], 4);
  }
  /* The footer: "\n" TZ string "\n"; an empty string means none. */
  const char *foot = (const char *)b + at + block_size(c, 8);
  const char *end = (const char *)b + n;
  if (foot < end && *foot == '\n') {
    const char *nl = memchr(foot + 1, '\n', (size_t)(end - foot - 1));
    char posix[128];
    size_t len = nl ? (size_t)(nl - foot - 1) : 0;
    if (nl && len > 0 && len < sizeof posix) {
      memcpy(posix, foot + 1, len);
      posix[len] = '\0';
      if (!parse_posix(posix, tz)) return fail(err, err_size, "the zone's rule does not parse");
    }
  }
  return SQLQ_OK;
}

/* The file of zone name into a malloc'ed buffer *out of *n bytes. */
static int read_zone_file(const char *name, unsigned char **out, size_t *n, char *err,
                          size_t err_size) {
  const char *dir = getenv("TZDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
  FILE *f = fopen(path, "rb");
  if (f == NULL) return fail(err, err_size, "time zone '%s' is not in the tz database", name);
  unsigned char *b = malloc(TZ_FILE_MAX);
  size_t got = b ? fread(b, 1, TZ_FILE_MAX, f) : 0;
  fclose(f);
  if (b == NULL) return SQLQ_NOMEM;
  *out = b;
  *n = got;
  return SQLQ_OK;
}

void sqlq__tz_free(sqlq__tz *tz) {
  if (tz == NULL) return;
  free(tz->trans);
  free(tz->trans_off);
  free(tz);
}

int sqlq__tz_load(const char *name, sqlq__tz **out, char *err, size_t err_size) {
  *out = NULL;
  if (name == NULL || !name_ok(name))
    return fail(err, err_size, "a time zone name is a name of the tz database (Europe/Paris)");
  sqlq__tz *tz = calloc(1, sizeof *tz);
  if (tz == NULL) return SQLQ_NOMEM;
  if (strcmp(name, "UTC") == 0) {
    tz->has_footer = 1;
    *out = tz;
    return SQLQ_OK;
  }
  unsigned char *b = NULL;
  size_t n = 0;
  int rc = read_zone_file(name, &b, &n, err, err_size);
  if (rc == SQLQ_OK) rc = parse_tzif(b, n, tz, err, err_size);
  if (rc == SQLQ_MISUSE && strncmp(err, "time zone", 9) != 0) {
    char why[256];
    snprintf(why, sizeof why, "%s", err);
    fail(err, err_size, "time zone '%s': %s", name, why);
  }
  free(b);
  if (rc == SQLQ_NOMEM) snprintf(err, err_size, "out of memory");
  if (rc != SQLQ_OK) {
    sqlq__tz_free(tz);
    return rc;
  }
  *out = tz;
  return SQLQ_OK;
}

int64_t sqlq__tz_offset(const sqlq__tz *tz, int64_t t) {
  if (tz == NULL) return 0;
  if (tz->n_trans == 0 || t < tz->trans[0])
    return tz->n_trans == 0 && tz->has_footer ? posix_offset(tz, t) : tz->first_off;
  if (t >= tz->trans[tz->n_trans - 1] && tz->has_footer) return posix_offset(tz, t);
  size_t lo = 0, hi = tz->n_trans; /* the last transition at or before t */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (tz->trans[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return tz->trans_off[lo];
}
