/*
** sqlq_cron.h -- the specs of periodic jobs (cron.c) and the time zones
** they tick in (tz.c): internal to the library, used by schedule.c and by
** the fuzzing harness and the unit tests of the parser.
**
** Times are whole seconds since the Unix epoch (UTC) unless named local:
** a local time is the wall-clock time of a zone, counted as if that zone
** were UTC (so that gmtime_r() and timegm() take it apart and put it back
** together).  Messages written into err are printable ASCII and never
** quote the text parsed.
*/
#ifndef SQLQ_CRON_H
#define SQLQ_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "sqlq.h"

/* Write the formatted reason into err (err_size bytes); returns
** SQLQ_MISUSE. */
int sqlq__cron_fail(char *err, size_t err_size, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* A parsed spec.  For a calendar spec every set is non-empty. */
typedef struct sqlq__cron {
  int64_t every;           /* @every: seconds between ticks; 0: a calendar spec */
  uint64_t minutes;        /* bit m: minute m (0-59) matches */
  uint32_t hours;          /* bit h: hour h (0-23) */
  uint32_t mdays;          /* bit d: day of the month d (1-31) */
  uint16_t months;         /* bit m: month m (1-12) */
  uint8_t wdays;           /* bit d: day of the week d (0 Sunday - 6 Saturday) */
  unsigned char mday_star; /* the day-of-month field began with '*' */
  unsigned char wday_star; /* the day-of-week field began with '*' */
} sqlq__cron;

/* The longest @every interval: about ten years. */
#define SQLQ__CRON_EVERY_MAX ((int64_t)3660 * 86400)

/* Parse text, a five-field crontab line ("*\/5 9-17 * * MON-FRI"), a macro
** (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly) or an
** interval ("@every 90s", "@every 1h30m": units s, m, h, d), into *out.
** SQLQ_OK, or SQLQ_MISUSE with the reason in err (err_size bytes). */
int sqlq__cron_parse(const char *text, sqlq__cron *out, char *err, size_t err_size);

/* A time zone of the system's tz database (TZif files under $TZDIR, else
** /usr/share/zoneinfo).  Opaque; owned by the caller of sqlq__tz_load. */
typedef struct sqlq__tz sqlq__tz;

/* Longest zone name, in bytes. */
#define SQLQ__TZ_NAME_MAX 64

/* Load the zone called name ("Europe/Paris"; "UTC" needs no file) into
** *out, to be freed with sqlq__tz_free().  SQLQ_OK; SQLQ_MISUSE with the
** reason in err for a bad name, a zone the database does not have, or a
** file that is not a TZif file of version 2 or later; SQLQ_NOMEM. */
int sqlq__tz_load(const char *name, sqlq__tz **out, char *err, size_t err_size);
void sqlq__tz_free(sqlq__tz *tz);

/* Seconds east of UTC of the zone's wall clock at UTC time t (tz NULL:
** UTC). */
int64_t sqlq__tz_offset(const sqlq__tz *tz, int64_t t);

/* How far ahead sqlq__cron_next() looks, in seconds: past it, a spec that
** matches no day ("0 0 30 2 *") has no next tick. */
#define SQLQ__CRON_HORIZON ((int64_t)10 * 366 * 86400)

/*
** The first tick of c strictly after the UTC time after, into *next.
** An @every spec ticks at the multiples of its interval since the epoch,
** whatever the zone.  A calendar spec ticks at the minutes whose wall
** time in tz it matches, with these choices where the wall clock jumps:
**   - a wall time the clock skips (spring forward) ticks at the instant
**     it would be had the clock not jumped, i.e. as late as the jump is
**     long (02:30 in a gap of an hour ticks at 03:30 of the new time); a
**     tick that would land on a time already past or taken is dropped;
**   - a wall time the clock shows twice (fall back) ticks once, at its
**     first occurrence.
** SQLQ_OK, or SQLQ_NOTFOUND when no tick comes within SQLQ__CRON_HORIZON
** (or before the year 9999).  Runs in bounded time whatever c is.  tz
** NULL is UTC.
*/
int sqlq__cron_next(const sqlq__cron *c, const sqlq__tz *tz, int64_t after, int64_t *next);

#endif /* SQLQ_CRON_H */
