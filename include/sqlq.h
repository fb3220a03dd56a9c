/*
** sqlq.h -- a durable job queue, named locks, wake-ups, rings and pools
** inside the SQL database an application already runs.
**
** The whole public API of libsqlq is in this file.  Conventions:
**
**   - Every handle is opaque and comes in an _open/_close or _new/_free
**     pair.  Every destructor accepts NULL.
**   - Every function that can fail returns an int status code (SQLQ_OK on
**     success).  The English text of the last error on a handle is
**     returned by sqlq_errmsg(); it never contains a password.
**   - A handle (sqlq_db) is one database connection.  It may be used by one
**     thread at a time; different threads use different handles.  The only
**     exception is sqlq_interrupt(), which any thread or signal handler may
**     call at any time.
**   - Strings are NUL-terminated UTF-8 unless a length is given; payloads
**     and lock names are byte strings with an explicit length and may hold
**     any byte, NUL included.
**   - Times are given in seconds as doubles at the API (fractions allowed)
**     and stored in the database as integer microseconds since the Unix
**     epoch, taken from the database's clock.  A field that holds such a
**     point in time ends in _at_us or _until_us; a duration in seconds
**     has no suffix (lease, delay, backoff, hold, timeout).
**   - Sizes, lengths and numbers of elements (of an array passed in or
**     returned, of the jobs a call changed, a limit on how many to return)
**     are size_t.  Attributes of a job or an item stored in the database
**     (priority, attempts, uses, the counts of sqlq_stats()) are int or
**     int64_t like the column they come from.
**   - Every array the library returns has its own free function, named
**     after its element type (sqlq_jobs_free() for sqlq_job, ...), that
**     takes the array and its number of elements and accepts NULL.
**   - Options structs (sqlq_options, sqlq_claim_options,
**     sqlq_fail_options) begin with a size_t size member, which the caller
**     sets to sizeof the struct, best with SQLQ_OPTIONS_INIT().  Every
**     other field is zero by default, and a zero field takes its default.
**     See SQLQ_OPTIONS_INIT below and docs/api.md for how they grow.
*/
#ifndef SQLQ_H
#define SQLQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SQLQ_VERSION_MAJOR 1
#define SQLQ_VERSION_MINOR 1
#define SQLQ_VERSION_PATCH 0
#define SQLQ_VERSION "1.1.0"
#define SQLQ_VERSION_NUMBER 1001000 /* major*1000000 + minor*1000 + patch */

/* The version of the library the program runs with (SQLQ_VERSION and
** SQLQ_VERSION_NUMBER of the library, which may be newer than the header
** the program was compiled with).  The string is static. */
const char *sqlq_version(void);
int sqlq_version_number(void);

/*
** An options struct with its size member set and every other field zero
** (the defaults):
**     sqlq_claim_options o = SQLQ_OPTIONS_INIT(sqlq_claim_options);
**     o.lease = 60;
** The library reads the first size bytes of the struct: a field a caller
** compiled against an older, shorter struct does not have takes its
** default, as a zero field does.  A size of 0 (a struct zeroed without
** this macro) is refused with SQLQ_MISUSE, so is a size below
** sizeof(size_t), and so are non-zero bytes beyond the fields this
** library knows (an option of a newer library it cannot honour).
*/
#define SQLQ_OPTIONS_INIT(type) \
  { .size = sizeof(type) }

/* The version of the schema this library creates and understands.  The
** schema is a public contract, documented in docs/schema.md. */
#define SQLQ_SCHEMA_VERSION 15

/*
** Status codes.  Every public function that can fail returns one of these.
** Native codes of the database (SQLSTATE, errno, SQLite result codes) are
** mapped into this list and never returned raw; the text of the native
** error is kept in sqlq_errmsg().
*/
#define SQLQ_OK 0          /* success */
#define SQLQ_ERROR 1       /* internal error or unexpected database error */
#define SQLQ_MISUSE 2      /* bad argument: empty or over-long name, bad URL */
#define SQLQ_TOOBIG 3      /* a payload or a name is over its limit */
#define SQLQ_NOTFOUND 4    /* no such job, lock, queue, ring or pool item */
#define SQLQ_STALE 5       /* the claim token is no longer the job's: refused */
#define SQLQ_BUSY 6        /* a lock is held elsewhere, or the database is busy */
#define SQLQ_TIMEOUT 7     /* sqlq_wait() reached its timeout with no job */
#define SQLQ_INTERRUPTED 8 /* sqlq_wait() was cut short by sqlq_interrupt() */
#define SQLQ_UNAVAILABLE 9 /* cannot reach the database, or backend not built */
#define SQLQ_NOMEM 10      /* out of memory */
#define SQLQ_SCHEMA 11     /* schema missing (run sqlq init) or newer than this library */
#define SQLQ_PAUSED 12     /* the queue is paused: claims return no job */
#define SQLQ_LOCK_LOST 13  /* a held lock is lost, or could not be confirmed in time */

/* The English name of a status code ("SQLQ_STALE"), never NULL. */
const char *sqlq_status_name(int status);

/* ---------------------------------------------------------------------
** Opening a database.
*/

/* A connection to one database.  Opaque. */
typedef struct sqlq_db sqlq_db;

/*
** Options for sqlq_open().  Initialise the struct with SQLQ_OPTIONS_INIT
** and set what you need: every zero field takes its default.  Options
** given in the URL's query string (see below) override these.
*/
typedef struct sqlq_options {
  size_t size; /* sizeof(sqlq_options): see SQLQ_OPTIONS_INIT */
  /* Largest payload sqlq_enqueue() accepts, in bytes.  0 means the default
  ** of 1 MiB (1048576).  A larger payload is refused with SQLQ_TOOBIG. */
  size_t payload_limit;
  /* Non-zero: sqlq_ack() copies each job into the history table
  ** (sqlq_jobs_history) before deleting it. */
  int keep_history;
  /* How long a statement waits for a database lock held by another
  ** connection before failing with SQLQ_BUSY, in seconds.  0 means the
  ** default of 5 seconds; more than 86400, a negative value or NaN is
  ** refused (SQLQ_MISUSE). */
  double busy_timeout;
} sqlq_options;

/*
** Open the database named by url and return a handle in *out.
**
** URL forms:
**   sqlite:PATH              a SQLite file, created when missing
**   sqlite::memory:          a private in-memory SQLite database
**   postgres://USER:PASS@HOST:PORT/DB?opts     (also postgresql://)
**   mysql://USER:PASS@HOST:PORT/DB?opts        (also mariadb://)
**   firebird://USER:PASS@HOST:PORT/DB
** URL options (after '?', '&'-separated): payload_limit=BYTES,
** history=0|1, busy_timeout=SECONDS, and for SQLite sync=off|normal|full.
**
** opts may be NULL for the defaults; a bad opts->size fails the open
** with SQLQ_MISUSE.  Opening does not create the schema;
** sqlq_init() does.
**
** Every descriptor a handle opens (sockets, database files, on every
** backend, also when it connects again) is close-on-exec: a program
** started with exec() inherits no session of the handle.  A thread that
** forks and execs while another thread's handle connects may still pass
** the new socket on, on backends whose client library opens it without
** the flag (MariaDB, Firebird): the driver sets it right after.
**
** Like sqlite3_open(), *out is set to a handle even when opening fails
** (unless memory ran out), so that sqlq_errmsg(*out) can say why; the
** caller owns that handle and must pass it to sqlq_close().  A scheme this
** build has no driver for fails with SQLQ_UNAVAILABLE ("backend not
** built"); an unknown scheme also fails with SQLQ_UNAVAILABLE; a URL that
** cannot be parsed fails with SQLQ_MISUSE.
**
** A database server that goes away after the handle opened (it restarts
** or stops, the network breaks, it refuses connections or logins while it
** starts or shuts down) makes calls fail with SQLQ_UNAVAILABLE; the handle
** connects again by itself at a later call, no more often than a pause
** allows that doubles from 50 ms up to 2 s after each failed attempt.  A
** transaction open when the connection was lost is gone (the call that
** finds out fails with SQLQ_UNAVAILABLE).  sqlq_wait() waits through such
** an outage, until its timeout.
*/
int sqlq_open(const char *url, const sqlq_options *opts, sqlq_db **out);

/* Close the connection, release every lock still held through it and free
** the handle.  Accepts NULL. */
void sqlq_close(sqlq_db *db);

/* The text of the most recent error on db, or "not an error".  The string
** belongs to db and is valid until the next call on db.  db may be NULL
** (then the text says so). */
const char *sqlq_errmsg(const sqlq_db *db);

/* The status code of the most recent error on db (SQLQ_OK if none). */
int sqlq_errcode(const sqlq_db *db);

/* The largest payload sqlq_enqueue() accepts on db, in bytes: the
** payload_limit option or URL option, else 1 MiB. */
size_t sqlq_payload_limit(const sqlq_db *db);

/* The name of the backend behind db ("sqlite", "postgres", ...).  The
** string is static. */
const char *sqlq_backend(const sqlq_db *db);

/* The URL db was opened with, with any password replaced by "***".  The
** string belongs to db. */
const char *sqlq_url_redacted(const sqlq_db *db);

/*
** Create the schema, or upgrade it to SQLQ_SCHEMA_VERSION.  Idempotent:
** running it again on a current schema changes nothing.  Returns
** SQLQ_SCHEMA if the database holds a newer schema than this library
** knows.  *version_out, when not NULL, receives the schema version now in
** place.
*/
int sqlq_init(sqlq_db *db, int *version_out);

/* ---------------------------------------------------------------------
** Enqueueing.
*/

/* Longest queue name, in bytes.  Queue names are 1 to this many bytes of
** UTF-8 text without control characters. */
#define SQLQ_QUEUE_NAME_MAX 128

/* Longest dedupe or group key, in bytes.  Keys are 1 to this many bytes of
** UTF-8 text without control characters; others are refused with
** SQLQ_MISUSE. */
#define SQLQ_KEY_MAX 255

/* Default number of attempts before a failing job becomes dead. */
#define SQLQ_DEFAULT_MAX_ATTEMPTS 25

/*
** One job to enqueue.  Zero-initialise and set what you need.
** The struct is read during the call only; the caller keeps ownership of
** every pointer in it.
*/
typedef struct sqlq_job_spec {
  const void *payload; /* payload bytes; may be NULL when payload_len is 0 */
  size_t payload_len;
  int priority;     /* higher runs first; default 0 */
  double delay;     /* seconds before the job may run; default 0 */
  int max_attempts; /* 0 means SQLQ_DEFAULT_MAX_ATTEMPTS */
  /* Optional.  While a job with the same dedupe key is unfinished (ready,
  ** scheduled or running) in the same queue, enqueueing another returns
  ** the first job's id and stores nothing. */
  const char *dedupe_key;
  /* Optional.  Jobs of one queue that share a group key run one at a time
  ** (or as many as sqlq_group_limit_set() lets), starting in the order
  ** they were enqueued. */
  const char *group_key;
} sqlq_job_spec;

/*
** Enqueue one job on queue and return its id in *id_out (may be NULL).
** When a dedupe key matched an unfinished job, *id_out is that job's id and
** *duplicate_out (may be NULL) is set to 1; otherwise 0.
**
** If the caller has opened a transaction with sqlq_begin(), the job is
** part of it and becomes visible at sqlq_commit(); otherwise it commits at
** once.  Waiting workers of this process are woken at commit.
*/
int sqlq_enqueue(sqlq_db *db, const char *queue, const sqlq_job_spec *spec, int64_t *id_out,
                 int *duplicate_out);

/*
** Enqueue n jobs on queue in one transaction (or in the caller's open
** transaction).  ids, when not NULL, must have room for n ids and receives
** them in the order of specs; a job folded into a duplicate gets that
** job's id.  Either all n jobs are stored or none, whatever n (a batch
** larger than one statement of the backend takes is sent as several).
*/
int sqlq_enqueue_batch(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n,
                       int64_t *ids);

/* The most jobs one job may wait for (sqlq_enqueue_after()). */
#define SQLQ_AFTER_MAX 10000

/*
** Dependencies (libsqlq 1.1, schema version 7).  Enqueue n jobs on queue,
** as sqlq_enqueue_batch() does, each of which waits until every job of
** after[0..n_after) has succeeded (was acked) before it becomes ready; its
** delay, if any, counts from then.  A fan-in job after a batch: enqueue
** the batch, then one job after all of its ids, in one transaction
** (sqlq_begin()) or not.
**
** after holds 1 to SQLQ_AFTER_MAX ids, in any order; repeated ids count
** once; an id below 1 is SQLQ_MISUSE.  A job whose dedupe key an unfinished
** job holds is not stored, as in sqlq_enqueue_batch(): its id is that
** job's, which waits for what it waited for.
** A job of after that is no longer in the queue's table (sqlq_jobs)
** succeeded already (or was purged: see below), and is not waited for;
** when none is left to wait for, the job is ready at once.  An id that no
** job had when the first of the n jobs was stored (as high as its own, or
** higher) is SQLQ_NOTFOUND, and nothing is stored.  The jobs after may be
** on any queue.
**
** While it waits, a job is listed in state SQLQ_STATE_WAITING
** (sqlq_list()), counted as scheduled by sqlq_stats(), keeps its place in
** its FIFO group (later jobs of its group wait for it), and no claim takes
** it.  sqlq_retry() with its id makes it ready at once, whatever it waits
** for.  When a job it waits for dies (out of attempts), it keeps waiting:
** should that job succeed after sqlq_retry(), it runs.  When a job it waits
** for is deleted without succeeding (sqlq_purge() of its queue), it
** becomes dead, and its last_error names that job.
**
** A database below schema version 7 answers SQLQ_SCHEMA ("run sqlq
** init").  A handle that met such a database notices the upgrade within a
** second; until then its acks do not let dependents run, so upgrade before
** the first dependent is enqueued (or restart the workers).
*/
int sqlq_enqueue_after(sqlq_db *db, const char *queue, const sqlq_job_spec *specs, size_t n,
                       const int64_t *after, size_t n_after, int64_t *ids);

/* ---------------------------------------------------------------------
** Claiming and finishing jobs.
*/

/*
** A claimed job.  The library owns the memory of the array returned by
** sqlq_claim() and of every pointer in it, until sqlq_jobs_free().
*/
typedef struct sqlq_job {
  int64_t id;                   /* unique, monotonic job id */
  int64_t token;                /* the claim token: present it to ack/fail/release/touch */
  const char *queue;            /* queue name */
  const unsigned char *payload; /* payload bytes, NUL-terminated for convenience */
  size_t payload_len;
  int priority;
  int attempts; /* attempts so far, this one included (counted from 1) */
  int max_attempts;
  int64_t run_at_us;      /* when it became due, microseconds since the epoch */
  int64_t created_at_us;  /* when it was enqueued */
  int64_t lease_until_us; /* when the lease ends unless touched */
  const char *group_key;  /* NULL when none */
  const char *dedupe_key; /* NULL when none */
} sqlq_job;

/* Options for sqlq_claim().  Initialise with SQLQ_OPTIONS_INIT; every zero
** field takes its default. */
typedef struct sqlq_claim_options {
  size_t size;  /* sizeof(sqlq_claim_options): see SQLQ_OPTIONS_INIT */
  double lease; /* lease length in seconds; 0: the default of 30; < 0 or NaN: SQLQ_MISUSE */
} sqlq_claim_options;

/*
** Claim up to max jobs (1 to 100000) of queue that are due, in the order
** priority (descending), run_at, id, and lease them.  On SQLQ_OK,
** *jobs_out receives an array of *n_out jobs in that order (*n_out may be
** 0, then *jobs_out is NULL); free it with sqlq_jobs_free().  opts may be
** NULL for the defaults.  A job whose lease expired
** before it was finished is claimable again (its attempt was counted);
** one that expires on its last attempt becomes dead.  A paused queue yields
** no jobs and the status SQLQ_PAUSED.
**
** Each claim gives the job a new token.  No job is ever handed to two
** claimers at once while its lease runs.
*/
int sqlq_claim(sqlq_db *db, const char *queue, size_t max, const sqlq_claim_options *opts,
               sqlq_job **jobs_out, size_t *n_out);

/* Free an array returned by sqlq_claim().  Accepts NULL. */
void sqlq_jobs_free(sqlq_job *jobs, size_t n);

/*
** A reference to one claimed job, for the batch calls.
*/
typedef struct sqlq_job_ref {
  int64_t id;
  int64_t token;
} sqlq_job_ref;

/*
** Finish a job: delete it (after copying it to the history table when
** keep_history is set).  Returns SQLQ_STALE, and changes nothing, when the
** job is no longer held with this token (its lease expired and it was
** claimed again, or it was purged).
*/
int sqlq_ack(sqlq_db *db, int64_t id, int64_t token);

/*
** Ack n jobs in one transaction.  Jobs whose token is stale are left as they
** are; *acked_out (may be NULL) receives the number actually acked.
** Returns SQLQ_STALE if any was stale, after acking all the others.  n may
** be any number: a batch larger than one statement of the backend takes
** is sent as several, in the one transaction.
*/
int sqlq_ack_batch(sqlq_db *db, const sqlq_job_ref *refs, size_t n, size_t *acked_out);

/* Options for sqlq_fail().  Initialise with SQLQ_OPTIONS_INIT; every zero
** field takes its default. */
typedef struct sqlq_fail_options {
  size_t size; /* sizeof(sqlq_fail_options): see SQLQ_OPTIONS_INIT */
  /* Base of the exponential retry backoff, in seconds: the k-th failed
  ** attempt waits about backoff * 2^(k-1), with +-25% jitter, capped at one
  ** day.  0 means the default of 1 second; a negative value or NaN is
  ** SQLQ_MISUSE. */
  double backoff;
  /* Non-zero: the job is ready again at once, without backoff. */
  int retry_now;
  /* Non-zero: the job becomes dead now, whatever attempts remain. */
  int dead;
} sqlq_fail_options;

/*
** Record a failed attempt.  error (may be NULL) is kept with the job, cut
** to 4096 bytes.  If attempts remain, the job is scheduled again after the
** backoff; otherwise it becomes dead.  Returns SQLQ_STALE, changing
** nothing, when the token is stale.  opts may be NULL for the defaults.
*/
int sqlq_fail(sqlq_db *db, int64_t id, int64_t token, const char *error,
              const sqlq_fail_options *opts);

/*
** Give the job back without counting the attempt: it becomes ready again
** after delay seconds (0: at once).  Returns SQLQ_STALE for a stale token.
*/
int sqlq_release(sqlq_db *db, int64_t id, int64_t token, double delay);

/*
** Extend the lease of a job to lease seconds from now.  Returns SQLQ_STALE
** for a stale token.  *lease_until_out (may be NULL) receives the new end.
*/
int sqlq_touch(sqlq_db *db, int64_t id, int64_t token, double lease, int64_t *lease_until_out);

/*
** Cancellation (libsqlq 1.1, schema version 9).  In one transaction, each
** job of ids[0..n) that is ready (due, scheduled, or waiting for other
** jobs) or running becomes dead, cancelled: its cancelled_at column is set
** to the database's clock, last_error to "cancelled", and its claim token
** and lease are cleared, so that the ack, fail, release and touch of the
** worker that runs it answer SQLQ_STALE, and no claim takes it again.  Ids
** of jobs that are dead already, finished, or unknown (any int64_t value)
** are no error and change nothing; an id repeated counts once.
** *cancelled_out (may be NULL) receives the number of jobs cancelled.
** n may be 0; ids may be NULL only then.
**
** A cancelled job is a dead job like any other: sqlq_retry() makes it ready
** again (and no longer cancelled), sqlq_purge() deletes it.  Its FIFO
** group's next job may run, a concurrency limit's slot it held is free,
** and the jobs that wait for it (sqlq_enqueue_after()) keep waiting, as
** for any dead job.
**
** The workers that ran the running jobs are told: after the commit, the
** cancel wakes every sqlq_wait_lost() of each queue concerned, in every
** process, through the backend's wake-up channel (docs/waking.md).
**
** A database below schema version 9 answers SQLQ_SCHEMA ("run sqlq init").
*/
int sqlq_cancel(sqlq_db *db, const int64_t *ids, size_t n, size_t *cancelled_out);

/*
** Block until at least one of the jobs refs[0..n) of queue is no longer
** held with its claim token (cancelled by sqlq_cancel(), or finished or
** taken back by anyone else), then return SQLQ_OK with lost_out[i] (an
** array of n, may be NULL) set to 1 for each job no longer held and 0 for
** the others.  Returns SQLQ_OK at once when one is lost already.
**
** The wait ends early on a sqlq_cancel() of a job of queue committed by
** any process (each backend's own wake-up, docs/waking.md; MariaDB's
** plain-SQL writers are seen within its wake_interval), then looks again
** at the n jobs (one query each).  timeout is in seconds, negative for
** ever; SQLQ_TIMEOUT at the timeout, SQLQ_INTERRUPTED after
** sqlq_interrupt().  n may be 0 (nothing can be lost: it waits for the
** timeout or the interrupt).  A worker runs it on a handle of its own
** beside the one it claims with, while its jobs run.
*/
int sqlq_wait_lost(sqlq_db *db, const char *queue, const sqlq_job_ref *refs, size_t n,
                   double timeout, int *lost_out);

/* ---------------------------------------------------------------------
** Waiting for work without polling.
*/

/*
** Block until queue may have a due job, then return SQLQ_OK; the caller
** then claims (another worker may have been faster, so a claim can still
** come back empty).  Returns SQLQ_OK at once when a job is already due.
**
** The wait ends early on: an enqueue committed by this process; a commit by
** another process (each backend has its own mechanism, see docs/waking.md);
** the earliest run_at of a scheduled job, or the earliest lease expiry of a
** running one, coming due.  timeout is in seconds; a negative timeout waits
** for ever.  Returns SQLQ_TIMEOUT at the timeout and SQLQ_INTERRUPTED when
** sqlq_interrupt() was called.
*/
int sqlq_wait(sqlq_db *db, const char *queue, double timeout);

/*
** Make the current or next sqlq_wait() on db return SQLQ_INTERRUPTED.
** Safe to call from any thread and from a signal handler.
*/
void sqlq_interrupt(sqlq_db *db);

/* ---------------------------------------------------------------------
** Queue administration.
*/

/* Pause a queue (claims return SQLQ_PAUSED) or resume it. */
int sqlq_pause(sqlq_db *db, const char *queue);
int sqlq_resume(sqlq_db *db, const char *queue);

/* The most a concurrency limit may be. */
#define SQLQ_MAX_RUNNING_MAX 1000000

/*
** Limit queue to at most max_running jobs running at once, across every
** worker of every host (0: no limit; more than SQLQ_MAX_RUNNING_MAX, or
** negative, is SQLQ_MISUSE).  The claim enforces it: a claim takes at most
** the free slots, max_running less the jobs of the queue whose lease has
** not expired, so a job whose lease expires frees its slot.  Jobs already
** running when the limit is set or lowered keep running; claims wait until
** the count is below the limit.  The setting is the queue's, in
** sqlq_queues, for every handle.  See docs/schema.md, "Concurrency limits".
*/
int sqlq_concurrency_set(sqlq_db *db, const char *queue, int64_t max_running);

/* The concurrency limit of queue into *max_running_out: 0 when it has
** none, also for a queue that the database does not know. */
int sqlq_concurrency_get(sqlq_db *db, const char *queue, int64_t *max_running_out);

/* The most starts a rate limit may allow per period, and its longest
** period (a year), in microseconds. */
#define SQLQ_RATE_MAX_STARTS_MAX 100000
#define SQLQ_RATE_PERIOD_MAX_US INT64_C(31622400000000)

/*
** Limit queue to at most max_starts claims of its jobs (starts: first
** runs, retries and re-claims of expired leases alike) in any period of
** period_us microseconds on the database's clock, across every worker of
** every host: a sliding window, exact (docs/schema.md, "Rate limits").
** max_starts 0 removes the limit (period_us is then ignored); more than
** SQLQ_RATE_MAX_STARTS_MAX, negative, or a period outside 1 to
** SQLQ_RATE_PERIOD_MAX_US is SQLQ_MISUSE.  The claim enforces it: a claim
** takes at most the starts left in the window, and nothing when none is
** (no job, not an error); sqlq_wait() sleeps until the window's oldest
** start leaves it.  A change keeps the latest starts: they count against
** the new rate.  It combines with a concurrency limit: a claim takes at
** most what both allow.  The setting is the queue's, in sqlq_queues and
** sqlq_rate_starts, for every handle.  SQLQ_SCHEMA on a database below the
** schema version that brought rate limits (`sqlq init` upgrades it).
*/
int sqlq_rate_set(sqlq_db *db, const char *queue, int64_t max_starts, int64_t period_us);

/* The rate limit of queue into *max_starts_out and *period_us_out (either
** may be NULL): 0 and 0 when it has none, also for a queue that the
** database does not know. */
int sqlq_rate_get(sqlq_db *db, const char *queue, int64_t *max_starts_out, int64_t *period_us_out);
/*
** Let at most per_group jobs of one group key of queue run at once, across
** every worker of every host (libsqlq 1.1; 1, the default, makes each group
** FIFO: one job at a time; below 1 or above SQLQ_MAX_RUNNING_MAX is
** SQLQ_MISUSE).  A group's jobs still start in id order: a job may start
** while fewer than per_group of the earlier jobs of its group are ready or
** running.  Jobs without a group key are not affected.  The claim enforces
** it; the setting is the queue's, in sqlq_queues.  A database below schema
** version 10 answers SQLQ_SCHEMA.  See docs/schema.md, "Per-group limits".
*/
int sqlq_group_limit_set(sqlq_db *db, const char *queue, int64_t per_group);

/* The per-group limit of queue into *per_group_out: 1 unless set, also for
** a queue that the database does not know (libsqlq 1.1). */
int sqlq_group_limit_get(sqlq_db *db, const char *queue, int64_t *per_group_out);

/*
** Make queue fair (fair 1) or not (0; anything else is SQLQ_MISUSE)
** (libsqlq 1.1).  A fair queue's claims take its jobs round-robin across
** tenants instead of in the order (priority, run_at, id): a tenant is the
** jobs of one group key, and the jobs without a group key are one more.
** Each job a claim takes is the best job by (priority DESC, run_at, id)
** of the tenant served longest ago (never: first; ties by group key, the
** jobs without one first) among those with a job that may start, so one
** tenant's many jobs do not starve another's few, and priority applies
** within a tenant.  A claim returns its jobs in the order it took them.
** Per-group, concurrency and rate limits still apply: a fair queue's
** tenants usually get a large per-group limit (sqlq_group_limit_set()).  Its claims take turns on the
** queue's row, as a limited queue's do.  Setting it off forgets the
** tenants' turns.  A database below schema version 10 answers SQLQ_SCHEMA.
** See docs/schema.md, "Fair claiming".
*/
int sqlq_fair_set(sqlq_db *db, const char *queue, int fair);

/* Whether queue is fair, into *fair_out: 0 unless set, also for a queue
** that the database does not know (libsqlq 1.1). */
int sqlq_fair_get(sqlq_db *db, const char *queue, int *fair_out);

/* Counts for one queue. */
typedef struct sqlq_queue_stats {
  char queue[SQLQ_QUEUE_NAME_MAX + 1];
  int64_t ready;     /* due now */
  int64_t scheduled; /* waiting for their run_at */
  int64_t running;   /* leased to a worker */
  int64_t dead;      /* out of attempts */
  int paused;
} sqlq_queue_stats;

/*
** Counts per queue.  queue may be NULL for every queue known to the
** database (any queue that has jobs or was paused).  *stats_out receives an
** array of *n_out entries sorted by queue name; free it with
** sqlq_queue_stats_free().
*/
int sqlq_stats(sqlq_db *db, const char *queue, sqlq_queue_stats **stats_out, size_t *n_out);

/* Free an array returned by sqlq_stats().  Accepts NULL. */
void sqlq_queue_stats_free(sqlq_queue_stats *stats, size_t n);

/* The counts of one queue that sqlq_summary() gives (libsqlq 1.1).  A
** count that reached the call's limit is that limit and has its bit
** (SQLQ_MORE_READY, ...) set in more: there are at least that many. */
typedef struct sqlq_queue_summary {
  char queue[SQLQ_QUEUE_NAME_MAX + 1];
  int64_t ready;     /* due now */
  int64_t scheduled; /* waiting for their run_at (or for other jobs) */
  int64_t running;   /* leased to a worker */
  int64_t dead;      /* out of attempts */
  unsigned more;     /* SQLQ_MORE_* bits: the counts that stopped at the limit */
  int paused;
  /* How long the longest-waiting ready job has been due, in microseconds
  ** of the database's clock (0 and up), or -1 when no job is due. */
  int64_t oldest_ready_age_us;
} sqlq_queue_summary;

#define SQLQ_MORE_READY 1u
#define SQLQ_MORE_SCHEDULED 2u
#define SQLQ_MORE_RUNNING 4u
#define SQLQ_MORE_DEAD 8u

/*
** Counts per queue, bounded (libsqlq 1.1): what sqlq_stats() counts, each
** count stopping at limit (1 to SQLQ_SUMMARY_LIMIT_MAX), and the age of the
** longest-waiting ready job.  Each count reads at most limit + 1 index
** entries and the queues are found by walking the indexes from one queue
** name to the next, so the call costs the same on a queue of 10^7 jobs as
** on one of limit: it is what a dashboard refreshing every few seconds
** should call.  queue may be NULL for every queue known to the database
** (any queue that has jobs or was paused).  *out receives an array of
** *n_out entries sorted by queue name (bytewise); free it with
** sqlq_queue_summaries_free().  One statement, one snapshot where the
** backend gives statements one.
*/
int sqlq_summary(sqlq_db *db, const char *queue, int64_t limit, sqlq_queue_summary **out,
                 size_t *n_out);
#define SQLQ_SUMMARY_LIMIT_MAX 1000000000

/* Free an array returned by sqlq_summary().  Accepts NULL. */
void sqlq_queue_summaries_free(sqlq_queue_summary *summaries, size_t n);

/* One measure of what holds a database's queues back (libsqlq 1.1): see
** sqlq_health() and docs/health.md.  Every string is owned by the array
** it is in and freed by sqlq_health_items_free(). */
typedef struct sqlq_health_item {
  char *name;            /* "oldest_xmin_age", "wal_bytes", ...: one of
                            docs/health.md's, never NULL */
  int64_t value;         /* the measure now, in unit */
  char *unit;            /* "s", "bytes", "rows", "frames", "transactions" */
  int64_t threshold;     /* the default limit past which it holds the
                            queue back (0: none) */
  int over;              /* 1 when value is over threshold */
  char *holder;          /* who holds it (a process id, a user, an
                            application, a client address, a slot), or
                            NULL when unknown or nobody */
  int64_t started_at_us; /* when the holder began (0: unknown) */
  char *detail;          /* more, in words (what kind of holder, an age in
                            transactions), or NULL */
} sqlq_health_item;

/*
** What holds the database's queues back, as read now: the age and holder
** of the oldest snapshot (PostgreSQL), the history list and the oldest
** transaction (MariaDB), the size of the WAL and the frames a reader keeps
** a checkpoint from (SQLite), the gaps between the oldest and the next
** transaction (Firebird), and the size of sqlq's tables.  The items and
** their default thresholds differ by backend and are listed in
** docs/health.md; an item over its threshold is not an error.  The read
** is one query in a read transaction of its own, or in the caller's
** transaction (sqlq_begin()) when one is open, whose snapshot it leaves
** out of what it reports (on SQLite: a few system calls, no transaction
** and no checkpoint).  It
** needs the server's monitoring views (PostgreSQL shows
** the holders of other users only to members of pg_read_all_stats;
** MariaDB's INNODB_* views need the PROCESS privilege).  *items_out
** receives an array of *n_out items in a fixed order per backend; free it
** with sqlq_health_items_free().  Returns SQLQ_OK or an error status, and
** then *items_out is NULL and *n_out 0.
*/
int sqlq_health(sqlq_db *db, sqlq_health_item **items_out, size_t *n_out);

/* Free an array returned by sqlq_health(), strings and all.  Accepts NULL. */
void sqlq_health_items_free(sqlq_health_item *items, size_t n);

/* ---------------------------------------------------------------------
** Counts of what the handles did (libsqlq 1.1, schema version 13).
**
** Each handle counts, in memory, the jobs it enqueued, finished (acked),
** failed (an attempt failed and the job will run again) and made dead
** (its last attempt failed, it was failed dead, or it was cancelled), per
** queue; how long its claims took and how long each job it claimed had
** been due (the wake-up latency), as histograms; and its named-lock
** acquisitions.  Every few seconds (5, or the URL option
** counts_flush=SECONDS), at a call of the handle or while it waits, and
** when it closes, it writes them into the row of table sqlq_counts that
** belongs to it, to its queue and to the current minute by its host's
** clock: one UPDATE per queue with counts, an INSERT when a minute
** starts, in a transaction of its own; rows older than two hours are
** deleted once a minute.  No row is shared by two handles, so the
** counts add no contention and no per-job write.  Counts of calls inside
** a transaction the caller opened wait for its commit (a rollback drops
** them).  Jobs that plain SQL inserts are not counted as enqueued.  The
** URL option counts=off turns the counting off; a database below schema
** version 13 is not written to.  docs/serve.md has the details.
*/

/* The histograms have this many buckets; bucket i holds the durations
** up to sqlq_latency_bound(i) seconds and above bucket i-1's bound (the
** last: above 300 s). */
#define SQLQ_LATENCY_BUCKETS 17

/* The upper bound of bucket i in seconds: 0.001, 0.0025, 0.005, 0.01,
** 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, then
** INFINITY for the last bucket and for any i out of range. */
double sqlq_latency_bound(int i);

/* One row of sqlq_counts: what one handle did in one minute on one
** queue.  queue is owned by the array (freed by
** sqlq_minute_counts_free()); "" for the counts that belong to no queue
** (named locks). */
typedef struct sqlq_minute_counts {
  char *queue;
  int64_t minute_at; /* the minute's start, Unix seconds by the writer's clock */
  int64_t writer;    /* the writing handle's random id */
  int64_t enqueued;  /* jobs stored by sqlq_enqueue*() and schedules (no duplicates) */
  int64_t finished;  /* jobs acked by the handle that claimed them */
  int64_t failed;    /* attempts failed with attempts left */
  int64_t dead;      /* jobs that became dead (failed, or cancelled) */
  int64_t locks;     /* named-lock acquisitions tried */
  int64_t lock_busy; /* of which not had in time (SQLQ_BUSY) */
  int64_t lock_us;   /* microseconds spent in them */
  int64_t claim_us;  /* microseconds spent in claims */
  int64_t claims[SQLQ_LATENCY_BUCKETS]; /* claims (sqlq_claim() calls that
                                           succeeded) by duration */
  int64_t lag_us;                       /* sum of the lags below */
  int64_t lags[SQLQ_LATENCY_BUCKETS];   /* jobs claimed, by the time from
                                           when they were due to the claim,
                                           by the database's clock */
} sqlq_minute_counts;

/*
** Read the rows of sqlq_counts of queue (NULL: of every queue, and "")
** whose minute_at >= since_s, into *counts_out, an array of *n_out rows
** ordered by queue (bytes), minute_at and writer; free it with
** sqlq_minute_counts_free().  A database below schema version 13 gives
** SQLQ_SCHEMA.  Another handle's counts are there once it flushed them
** (every few seconds).
*/
int sqlq_counts(sqlq_db *db, const char *queue, int64_t since_s, sqlq_minute_counts **counts_out,
                size_t *n_out);

/* Free an array returned by sqlq_counts().  Accepts NULL. */
void sqlq_minute_counts_free(sqlq_minute_counts *counts, size_t n);

/*
** The last job id the database handed out, into *id_out (0: none yet):
** read from sqlq_jobs' id sequence, so it counts every job inserted on any
** queue, by the library or by plain SQL (which the counts above do not),
** and also, on PostgreSQL and Firebird, the ids of inserts rolled back.
** Its growth is how many jobs were inserted.  One read; any schema
** version.
*/
int sqlq_last_job_id(sqlq_db *db, int64_t *id_out);

/*
** Write the handle's counts to sqlq_counts now, rather than at its next
** flush.  SQLQ_OK when there was nothing to write, when counting is off
** or when the database has no sqlq_counts (then the counts are dropped);
** else the write's error (the counts are kept for the next flush).  Not
** inside a transaction of the caller's (SQLQ_MISUSE).
*/
int sqlq_counts_flush(sqlq_db *db);

/* Job states as stored in the state column. */
#define SQLQ_STATE_READY 1 /* ready, due or scheduled */
#define SQLQ_STATE_RUNNING 2
#define SQLQ_STATE_DEAD 3
#define SQLQ_STATE_SCHEDULED 4 /* filter only: ready but not due yet */
#define SQLQ_STATE_DONE 5      /* filter only (1.1): finished, kept in history */
#define SQLQ_STATE_WAITING 6   /* (1.1) ready but waiting for other jobs to succeed */

/* One row of sqlq_list(). */
typedef struct sqlq_job_info {
  int64_t id;
  int state; /* SQLQ_STATE_*; READY rows not yet due say SCHEDULED, and
                 those waiting for other jobs WAITING (1.1) */
  int priority;
  int attempts;
  int max_attempts;
  int64_t run_at_us; /* 0 when WAITING */
  int64_t created_at_us;
  int64_t lease_until_us; /* 0 when not running */
  char *dedupe_key;       /* NULL when none */
  char *group_key;        /* NULL when none */
  char *last_error;       /* NULL when none */
  unsigned char *payload; /* NUL-terminated copy */
  size_t payload_len;
} sqlq_job_info;

/*
** List jobs of queue in claim order, at most limit (0: all), optionally
** only those in state (0 for all states).  Free the array with
** sqlq_job_infos_free().
**
** With state SQLQ_STATE_DONE (libsqlq 1.1, schema version 5), the jobs of
** queue that were finished by a handle keeping history (keep_history) and
** are still in sqlq_jobs_history, newest finished first (ties: the higher
** id first).  In those, run_at_us is when the job finished, lease_until_us
** is 0 and last_error NULL.  State 0 lists unfinished and dead jobs only,
** as in 1.0.
*/
int sqlq_list(sqlq_db *db, const char *queue, int state, size_t limit, sqlq_job_info **jobs_out,
              size_t *n_out);

/* Free an array returned by sqlq_list().  Accepts NULL. */
void sqlq_job_infos_free(sqlq_job_info *jobs, size_t n);

/*
** Make jobs of queue ready to run now with a fresh count of attempts.  With
** ids (n of them) only those jobs, which may be dead or scheduled; with
** ids NULL, every dead job of the queue.  *count_out (may be NULL) receives
** the number of jobs changed.  A dead job whose dedupe key is now held by a
** newer unfinished job stays dead.
*/
int sqlq_retry(sqlq_db *db, const char *queue, const int64_t *ids, size_t n, size_t *count_out);

/*
** Delete the dead jobs ids[0..n) of queue for good, in one transaction,
** without a copy in history (libsqlq 1.1).  An id of a job that is not
** dead, of another queue's or of no job is no error and changes nothing;
** nor is a dead job that other jobs wait for (sqlq_enqueue_after())
** deleted: it stays for sqlq_retry() or sqlq_purge(), so that they do not
** wait for ever.  *deleted_out (may be NULL) receives how many were
** deleted.  n may be 0; ids may be NULL only then.  A database below
** schema version 7 answers SQLQ_SCHEMA ("run sqlq init").
*/
int sqlq_delete_dead(sqlq_db *db, const char *queue, const int64_t *ids, size_t n,
                     size_t *deleted_out);

/* Delete every job of queue, in every state.  The tokens of running jobs
** become stale.  *count_out (may be NULL) receives the number deleted.
** queue may hold control characters, which no other call takes, so that a
** queue that a plain-SQL writer named so can be emptied. */
int sqlq_purge(sqlq_db *db, const char *queue, size_t *count_out);

/* ---------------------------------------------------------------------
** Retention of finished jobs (libsqlq 1.1, schema version 5).
**
** A handle opened with keep_history (URL option history=1) copies each job
** it acks into sqlq_jobs_history.  A queue's retention bounds what history
** keeps of it: a finished job is pruned once it finished more than
** keep_for seconds ago, or once keep_count jobs of its queue finished after
** it (by finished_at, then id), whichever comes first.  Without retention
** history keeps every job, as in 1.0.  Dead jobs are not finished: they stay
** in sqlq_jobs until sqlq_retry() or sqlq_purge(), whatever the retention.
**
** Pruning deletes at most a batch of rows per statement, each in a short
** transaction of its own, so no statement runs long however large the
** backlog.  A handle that keeps history prunes the queue it claims from by
** itself: in sqlq_claim(), before the claim, one batch of
** SQLQ_PRUNE_BATCH rows at most, once a second, and at every claim while
** the previous batch came back full (so pruning keeps pace with the acks).
** A failed prune does not fail the claim and leaves its error state
** alone (it is tried again a second later after SQLQ_BUSY, a minute later
** after another error, such as a schema older than version 5), and none
** runs inside a transaction of the caller's (sqlq_begin()).
** sqlq_history_prune() prunes on demand.
*/

/* The rows one prune batch deletes when no other size is asked for, and
** the most it may be asked for. */
#define SQLQ_PRUNE_BATCH 1000
#define SQLQ_PRUNE_BATCH_MAX 100000

/* The largest keep_count. */
#define SQLQ_KEEP_COUNT_MAX 1000000000

/*
** Set the retention of queue: keep_for in seconds (fractions allowed; 0:
** no limit of age), keep_count jobs (0: no limit of number); both 0: keep
** every finished job.  A negative, NaN or over-large value (keep_for past
** about 100 years, keep_count past SQLQ_KEEP_COUNT_MAX) is SQLQ_MISUSE.
** The setting is the queue's, in sqlq_queues, for every handle.
*/
int sqlq_retention_set(sqlq_db *db, const char *queue, double keep_for, int64_t keep_count);

/* The retention of queue into *keep_for_out (seconds) and *keep_count_out
** (either may be NULL); 0 where there is no limit, also for a queue that
** the database does not know. */
int sqlq_retention_get(sqlq_db *db, const char *queue, double *keep_for_out,
                       int64_t *keep_count_out);

/*
** Prune one batch: delete from history at most max jobs of queue (0:
** SQLQ_PRUNE_BATCH; more than SQLQ_PRUNE_BATCH_MAX is SQLQ_MISUSE) that
** its retention no longer keeps, oldest first, in one short transaction.
** *pruned_out (may be NULL) receives how many; a batch of max means more
** may be left: call again.  A queue without retention prunes nothing.
** SQLQ_BUSY (nothing pruned) when a concurrent prune of the queue holds the
** rows: call again.
*/
int sqlq_history_prune(sqlq_db *db, const char *queue, size_t max, size_t *pruned_out);

/* ---------------------------------------------------------------------
** Transactions, so that a job commits with the caller's own writes.
*/

/* Open a write transaction on db.  Jobs enqueued until sqlq_commit() are
** part of it.  Nesting is refused with SQLQ_MISUSE. */
int sqlq_begin(sqlq_db *db);
int sqlq_commit(sqlq_db *db);
int sqlq_rollback(sqlq_db *db);

/*
** The client library's connection behind db: a sqlite3 * for SQLite (and a
** PGconn *, MYSQL * or isc_db_handle * for the other backends), so that the
** application can write its own rows in the transaction of a job.  The
** handle stays owned by db.  Use it only between sqlq_begin() and
** sqlq_commit() or sqlq_rollback() on db, from the thread that called
** sqlq_begin(): for SQLite, every handle of a process opened on one file
** shares one connection, and sqlq_begin() gives db its turn on it; for
** PostgreSQL, the transaction's BEGIN (which sqlq otherwise sends with its
** first statement) is sent now, and NULL is returned when that fails.
*/
void *sqlq_native_handle(sqlq_db *db);

/* ---------------------------------------------------------------------
** Named locks: a mutex shared by every process that opens the database.
*/

/* A held lock.  Opaque. */
typedef struct sqlq_lock sqlq_lock;

/* Longest lock name, in bytes.  Names are 1 byte to this; any byte. */
#define SQLQ_LOCK_NAME_MAX (1024 * 1024)

/*
** Take the lock called name (name_len bytes, any byte values).  timeout is
** in seconds: 0 tries once, a negative value waits for ever, fractions are
** allowed.  On success *lock_out receives the held lock; free it with
** sqlq_unlock().  Returns SQLQ_BUSY when the lock was not had in time.
**
** The lock is released when it is unlocked, when db is closed, or when
** the holding process dies, however it dies.  A child created by fork()
** shares the hold of its parent (the lock is free again only when both are
** gone); a program started with exec() does not inherit it.  Two handles
** of one process exclude each other like two processes.  Where the lock
** is a lease (sqlq_lock_lease(): through a transaction pooler), a holder
** that dies frees it when its lease runs out, and a child does not share
** it.
*/
int sqlq_lock_acquire(sqlq_db *db, const void *name, size_t name_len, double timeout,
                      sqlq_lock **lock_out);

/*
** Take the lock called name until the transaction open on db (sqlq_begin())
** ends: it is released when the transaction commits or rolls back, and not
** before.  name, name_len and timeout are as for sqlq_lock_acquire(); a
** lock not had in time is SQLQ_BUSY and leaves the transaction usable.
** SQLQ_MISUSE when no transaction is open.  On PostgreSQL this is
** pg_advisory_xact_lock() in the transaction's own session, which works
** through PgBouncer's transaction pooling (session locks do not); there a
** handle's session lock and its transaction lock on one name exclude each
** other, as they live in two sessions.
*/
int sqlq_lock_xact(sqlq_db *db, const void *name, size_t name_len, double timeout);

/*
** Check that lock is still held.  SQLQ_OK means it certainly is: the
** session that took it answered within timeout seconds (SQLite: the lock
** file is still the one locked).  SQLQ_LOCK_LOST, with the reason in
** sqlq_errmsg() of the lock's db, means it may no longer be: its session
** ended (the server restarted, the session was killed or timed out, the
** network dropped it), it gave no answer within timeout seconds (a
** partitioned network, a hung server), or the lock file was removed or
** replaced.  Another holder may already have the lock: stop the work it
** protects.  Once lost, a lock stays lost (every later check says so);
** release it with sqlq_unlock() as any other.
**
** Bounds.  The call returns within about timeout seconds (fractions
** allowed, > 0; else SQLQ_MISUSE) however the server or the network
** behaves; a lock that cannot be confirmed by then is reported lost, even
** though the server may still hold it for a while (then nobody else has
** it either: reporting it lost errs on the safe side).  A loss that
** happened before the call is always reported, so a caller that checks
** every I seconds learns of a loss at most I + timeout seconds after it.
** Nothing is noticed between checks.
**
** The locks of one handle share one session (SQLite: one file), so when
** a check finds the session gone, or closes it because it did not answer,
** every lock of the handle taken before is lost with it; a lock taken
** later gets a new session.  While a handle holds a lock, its lock session
** is kept alive: server-side idle and statement timeouts are turned off
** for it and TCP keepalives are on (see each backend's page in docs/).
*/
int sqlq_lock_check(sqlq_lock *lock, double timeout);

/*
** The length in seconds of lock's lease, when it is one; 0 when a session
** holds it.  A handle whose sessions cannot hold a lock (PostgreSQL
** through a transaction pooler such as PgBouncer: docs/scale.md) keeps
** its locks as leases, rows of the database with a holder and a time of
** expiry: the lock is held only while sqlq_lock_check() renews its lease
** before it runs out, and a holder that dies or stops checking loses it
** that long after its last renewal (the URL option lock_lease, 30 s by
** default).  A caller that stops its work within S seconds of a failed
** check keeps the lock's promise when it checks every I seconds with a
** timeout of T seconds and I + 2T + S is less than the lease.  A child
** created by fork() does not share a lease.
*/
double sqlq_lock_lease(const sqlq_lock *lock);

/*
** The fencing token of lock when it is a lease (sqlq_lock_lease() > 0):
** a number that grows by one each time the lock is taken, so that every
** holder's is higher than those of the holders before it.  A resource that
** remembers the highest token it has been given refuses the writes of an
** earlier holder that still runs after its lease ran out.  0 for a lock
** that a session holds.
*/
int64_t sqlq_lock_fence(const sqlq_lock *lock);

/* Release a lock and free the handle.  Accepts NULL.  sqlq_close() on the
** db a lock was taken through releases and frees the locks still held, so
** after it their handles must not be used. */
void sqlq_unlock(sqlq_lock *lock);

/* ---------------------------------------------------------------------
** Rings: fixed-size FIFO logs.  A ring holds the newest `capacity` entries
** pushed into it; once full, each push overwrites the oldest entry in the
** same short transaction.  Entries are numbered from 1 in each ring, in
** the order their pushes commit, without gaps or repeats, however many
** processes push at once.  Ring names follow the rules of queue names.
** (Schema version 2.)
*/

/* Largest capacity of a ring, in entries. */
#define SQLQ_RING_CAPACITY_MAX 1000000000

/*
** Create the ring called ring holding at most capacity entries (1 to
** SQLQ_RING_CAPACITY_MAX; others are SQLQ_MISUSE).  Creating a ring that
** exists with the same capacity changes nothing and succeeds; with another
** capacity it is SQLQ_MISUSE and the ring is left as it is.
*/
int sqlq_ring_create(sqlq_db *db, const char *ring, size_t capacity);

/*
** Push one entry of payload_len bytes (any bytes; at most sqlq_payload_limit(),
** else SQLQ_TOOBIG) into ring, and return its sequence number in *seq_out
** (may be NULL).  SQLQ_NOTFOUND when the ring does not exist.  Inside a
** transaction opened with sqlq_begin(), the entry commits with it (and the
** ring's other pushers wait for that commit).  Followers (sqlq_ring_wait())
** are woken at commit.
*/
int sqlq_ring_push(sqlq_db *db, const char *ring, const void *payload, size_t payload_len,
                   int64_t *seq_out);

/*
** Push n entries in one transaction, in the order given: entry i is
** payloads[i], lens[i] bytes.  They get consecutive sequence numbers, the
** first of which goes to *first_seq_out (may be NULL).  Either all are
** stored or none; when n exceeds the capacity, only the newest `capacity`
** remain, as if pushed one by one.  The caller keeps the arrays.
*/
int sqlq_ring_push_batch(sqlq_db *db, const char *ring, const void *const *payloads,
                         const size_t *lens, size_t n, int64_t *first_seq_out);

/* One entry of a ring.  The library owns the memory of the array returned
** by sqlq_ring_read() and of every payload in it, until
** sqlq_ring_entries_free(). */
typedef struct sqlq_ring_entry {
  int64_t seq;                  /* its sequence number, from 1 */
  int64_t pushed_at_us;         /* when it was pushed, microseconds since the epoch */
  const unsigned char *payload; /* payload bytes, NUL-terminated for convenience */
  size_t payload_len;
} sqlq_ring_entry;

/*
** Read the entries of ring whose sequence number is above since (0: from
** the oldest), oldest first, at most limit (0: all), from one
** consistent snapshot of the ring.  *entries_out receives an array of
** *n_out entries (NULL when none); free it with sqlq_ring_entries_free().
** Entries overwritten before the read are gone: the first entry returned
** may then be past since + 1.  SQLQ_NOTFOUND when the ring does not exist.
*/
int sqlq_ring_read(sqlq_db *db, const char *ring, int64_t since, size_t limit,
                   sqlq_ring_entry **entries_out, size_t *n_out);

/* Free an array returned by sqlq_ring_read().  Accepts NULL. */
void sqlq_ring_entries_free(sqlq_ring_entry *entries, size_t n);

/*
** Block until ring holds an entry above sequence number since, then
** return SQLQ_OK (at once when it already does).  Wakes up like
** sqlq_wait(): on a push committed by this process, on another process's
** commit (see docs/waking.md), never by polling.  timeout is in seconds, a
** negative one waits for ever; SQLQ_TIMEOUT at the timeout,
** SQLQ_INTERRUPTED after sqlq_interrupt(), SQLQ_NOTFOUND when the ring
** does not exist or is dropped while waiting.
*/
int sqlq_ring_wait(sqlq_db *db, const char *ring, int64_t since, double timeout);

/* Delete ring and its entries.  SQLQ_NOTFOUND when it does not exist. */
int sqlq_ring_drop(sqlq_db *db, const char *ring);

/* ---------------------------------------------------------------------
** Pools: fair rotation over a set of items (API keys, proxies, accounts).
** sqlq_pool_next() hands out the least recently used free item and stamps
** it in the same transaction with the database's clock in microseconds
** (one microsecond past the pool's newest stamp when the clock has not
** moved on), so that items take turns however fast they are asked for;
** ties go to the item added first.  Pool names follow the rules of queue
** names; a pool exists while it has items.  (Schema version 2.)
*/

/* Longest pool item, in bytes.  Items are 1 to this many bytes of UTF-8
** text without control characters. */
#define SQLQ_POOL_ITEM_MAX 1024

/* One item of a pool.  The library owns the memory of the arrays returned
** by sqlq_pool_list() and sqlq_pool_next() and of every string in them,
** until sqlq_pool_items_free(). */
typedef struct sqlq_pool_item {
  int64_t id; /* unique, in the order items were added */
  const char *item;
  int64_t last_used_at_us; /* when last handed out, 0 when never */
  int64_t uses;            /* how often it was handed out */
  int64_t held_until_us;   /* while held: when the hold ends; 0 when free */
  int64_t token;           /* from sqlq_pool_next() with a hold: present it to
                             sqlq_pool_release(); 0 otherwise */
} sqlq_pool_item;

/* Add item to pool.  *added_out (may be NULL) is 1, or 0 when the pool
** had it already (then nothing changes). */
int sqlq_pool_add(sqlq_db *db, const char *pool, const char *item, int *added_out);

/* Remove item from pool, held or not.  SQLQ_NOTFOUND when it is not there. */
int sqlq_pool_remove(sqlq_db *db, const char *pool, const char *item);

/*
** List the items of pool in the order sqlq_pool_next() would hand them
** out (held items included).  *items_out receives an array of *n_out
** items; free it with sqlq_pool_items_free().  SQLQ_NOTFOUND when the pool
** has no items.
*/
int sqlq_pool_list(sqlq_db *db, const char *pool, sqlq_pool_item **items_out, size_t *n_out);

/*
** Hand out the least recently used free item of pool and stamp it, in one
** transaction.  Concurrent callers never get the same item while another
** is free.  With hold > 0 (seconds), the item is held: no one else gets it
** until sqlq_pool_release() with its token, or until the hold ends; hold
** 0 hands it out without holding it.  *item_out receives an array of one
** item; free it with sqlq_pool_items_free(item, 1).  SQLQ_NOTFOUND when
** the pool has no items, SQLQ_BUSY when every item is held.
*/
int sqlq_pool_next(sqlq_db *db, const char *pool, double hold, sqlq_pool_item **item_out);

/*
** End the hold of item that sqlq_pool_next() gave with token.  SQLQ_STALE,
** changing nothing, when the item is no longer held with this token (it
** was released, or its hold ended and it was handed out again);
** SQLQ_NOTFOUND when the pool has no such item.
*/
int sqlq_pool_release(sqlq_db *db, const char *pool, const char *item, int64_t token);

/* Free an array returned by sqlq_pool_list() or sqlq_pool_next().
** Accepts NULL. */
void sqlq_pool_items_free(sqlq_pool_item *items, size_t n);

/* ---------------------------------------------------------------------
** Table subscriptions: row changes of an application's table become jobs.
**
** sqlq_subscribe() installs triggers on the table; from the commit on,
** each matching INSERT, UPDATE or DELETE of a row -- made by any client,
** with plain SQL too -- enqueues one job in the queue named by the tag, in
** the writer's transaction (a rolled-back write leaves no job).  Several
** tags may subscribe to one table; each gets its own job per change.  An
** action no tag subscribes to has no trigger and writes nothing.
**
** The job's payload is a JSON object:
**   {"table":"languages","action":"insert","pk":{"language_id":1},
**    "at":"2026-11-23T14:50:00.123456Z"}
** "pk" holds the primary-key columns of the row (the new row's, or for a
** delete the old row's); "at" is the database's clock when the trigger
** fired, in UTC.  With row images, an insert adds "new", a delete "old"
** and an update both: objects of every column (a binary value as a string
** "\x" followed by its bytes in lower-case hex).  The job's FIFO group is
** the table and the key, so that the events of one row run in the order
** they happened, one at a time, while other rows' events run in parallel.
** Job ids number the events of a table in the order their triggers fired.
** (Schema version 3.)
*/

/* Actions of sqlq_subscribe(), or'ed together. */
#define SQLQ_ON_INSERT 0x1
#define SQLQ_ON_UPDATE 0x2
#define SQLQ_ON_DELETE 0x4
/* Flags of sqlq_subscribe(). */
#define SQLQ_SUB_ROWS 0x1 /* payloads carry the row images "new" and "old" */

/* Longest table name sqlq_subscribe() takes, in bytes. */
#define SQLQ_TABLE_NAME_MAX 63

/*
** Subscribe tag (a queue name) to the actions (SQLQ_ON_*, at least one)
** on table, a table of the connection's default schema whose name is
** given as it is stored (case matters, no quotes).  A tag that already
** subscribes to the table gets exactly these actions and flags from now
** on.  SQLQ_NOTFOUND when there is no such table; SQLQ_MISUSE when it has
** no primary key, or for a bad name or action.  On a backend whose DDL
** commits by itself (MariaDB) this may not run inside sqlq_begin().
*/
int sqlq_subscribe(sqlq_db *db, const char *table, unsigned actions, const char *tag,
                   unsigned flags);

/* End tag's subscription to table; the last one removes the table's
** triggers, wherever they are.  Works on a table that was dropped or
** renamed.  SQLQ_NOTFOUND when tag
** does not subscribe to table. */
int sqlq_unsubscribe(sqlq_db *db, const char *table, const char *tag);

/* What sqlq_subscriptions() says of a subscription's triggers. */
#define SQLQ_SUB_ACTIVE 0   /* the table and its triggers are there */
#define SQLQ_SUB_NO_TABLE 1 /* the table is gone (dropped) */
#define SQLQ_SUB_NO_TRIGGER \
  2 /* the table is there without its triggers
                                  (it was dropped and made again): subscribe
                                  again */
#define SQLQ_SUB_MOVED \
  3 /* the triggers are on another table (this
                                  one was renamed): its changes still come,
                                  under the subscribed name */

/* One subscription.  The library owns the strings until
** sqlq_subscriptions_free(). */
typedef struct sqlq_subscription {
  const char *table;
  const char *tag;
  unsigned actions;      /* SQLQ_ON_* */
  unsigned flags;        /* SQLQ_SUB_* */
  int64_t created_at_us; /* when subscribed, microseconds since the epoch */
  int status;            /* SQLQ_SUB_ACTIVE, SQLQ_SUB_NO_TABLE, ... */
} sqlq_subscription;

/* Every subscription, ordered by table then tag, into *subs_out (*n_out
** entries); free it with sqlq_subscriptions_free(). */
int sqlq_subscriptions(sqlq_db *db, sqlq_subscription **subs_out, size_t *n_out);

/* Free an array returned by sqlq_subscriptions().  Accepts NULL. */
void sqlq_subscriptions_free(sqlq_subscription *subs, size_t n);

/* ---------------------------------------------------------------------
** Periodic jobs (schema version 4; libsqlq 1.1).
**
** A schedule enqueues one job, with its payload, in its queue at each
** tick of its spec.  The ticks are enqueued by scheduling passes,
** sqlq_cron_tick(), which any number of processes may run at once against
** one database: exactly one job per tick, whoever runs them.  (A pass
** advances the schedule's next tick with a compare-and-set in the same
** transaction as the job; the job also carries the dedupe key
** "cron:NAME:TICK", TICK being the tick's time in microseconds since the
** epoch.)  Times come from the database's clock.
**
** A spec is five crontab fields, "MIN HOUR DAY-OF-MONTH MONTH
** DAY-OF-WEEK" (lists, ranges, steps, names such as JAN and MON; when both
** day fields are restricted a day matches either), a macro (@yearly,
** @annually, @monthly, @weekly, @daily, @midnight, @hourly) or an
** interval "@every 30s" (units s, m, h and d, combined as in "1h30m"),
** which ticks at the multiples of the interval since the Unix epoch.  A
** crontab spec ticks in the schedule's time zone, a name of the system's
** tz database: a wall time skipped by a DST change ticks as late as the
** change is long, and a wall time that happens twice ticks the first time.
** docs/cron.md says it all.
*/

/* Longest schedule name, spec and zone name, in bytes. */
#define SQLQ_CRON_NAME_MAX 128
#define SQLQ_CRON_SPEC_MAX 256
#define SQLQ_CRON_ZONE_MAX 64

/* What a pass that comes late does with the ticks it missed
** (sqlq_schedule.missed): a number from 1 to SQLQ_CRON_MISSED_MAX enqueues
** at most that many, the latest ones. */
#define SQLQ_CRON_SKIP 0   /* only a tick at most SQLQ_CRON_GRACE seconds late */
#define SQLQ_CRON_ONCE 1   /* the latest tick, however late */
#define SQLQ_CRON_ALL (-1) /* every tick, the oldest first */
#define SQLQ_CRON_MISSED_MAX 1000
#define SQLQ_CRON_GRACE 60

/*
** A schedule.  For sqlq_cron_add() the caller fills name, spec, zone
** (NULL: "UTC"), queue, payload and missed, and keeps ownership of every
** pointer; the other fields are ignored.  sqlq_cron_list() fills them all;
** the library owns those strings and payloads until sqlq_schedules_free().
*/
typedef struct sqlq_schedule {
  const char *name;  /* 1 to SQLQ_CRON_NAME_MAX bytes of UTF-8 text */
  const char *spec;  /* see above; at most SQLQ_CRON_SPEC_MAX bytes */
  const char *zone;  /* "Europe/Paris"; NULL for sqlq_cron_add() is "UTC" */
  const char *queue; /* the queue of its jobs */
  const void *payload;
  size_t payload_len;
  int missed;         /* SQLQ_CRON_SKIP (the default), _ONCE, _ALL or 1..MAX */
  int paused;         /* 1 when paused */
  int64_t next_at_us; /* its next tick, microseconds since the epoch */
  int64_t last_at_us; /* the latest tick it enqueued a job for; 0: none yet */
} sqlq_schedule;

/*
** Add the schedule s, or replace the one of that name: its next tick is
** the first after now, whatever the old one's was, and it is not paused.
** SQLQ_MISUSE, with the reason in sqlq_errmsg(), for a bad name, queue,
** spec (also one that never ticks, such as "0 0 30 2 *"), zone (one the tz
** database lacks too) or missed; SQLQ_TOOBIG for a payload over the
** handle's limit.
*/
int sqlq_cron_add(sqlq_db *db, const sqlq_schedule *s);

/* Remove, pause or resume the schedule called name; SQLQ_NOTFOUND when
** there is none.  A paused schedule enqueues nothing; resumed, it ticks
** from now on: the ticks it missed while paused are not run. */
int sqlq_cron_remove(sqlq_db *db, const char *name);
int sqlq_cron_pause(sqlq_db *db, const char *name);
int sqlq_cron_resume(sqlq_db *db, const char *name);

/* Every schedule, ordered by name, into *schedules_out (*n_out of them);
** free it with sqlq_schedules_free(). */
int sqlq_cron_list(sqlq_db *db, sqlq_schedule **schedules_out, size_t *n_out);

/* Free an array returned by sqlq_cron_list().  Accepts NULL. */
void sqlq_schedules_free(sqlq_schedule *schedules, size_t n);

/*
** Run one scheduling pass at the time now_at_us (microseconds since the
** epoch; 0: the database's clock now, which is what a scheduler passes --
** other times are for tests and replays): for each schedule not paused
** whose next tick has come, enqueue the jobs of the ticks due, as its
** missed policy says (a pass more than one tick late "missed" the earlier
** ones), and advance its next tick past now_at_us.  At most
** SQLQ_CRON_MISSED_MAX jobs per schedule per pass: under SQLQ_CRON_ALL, a
** long backlog takes several passes, the oldest ticks first.  Ticks over
** 31 days late are dropped, except under SQLQ_CRON_ALL.  Each schedule is
** its own transaction (or the caller's, inside sqlq_begin()).
**
** *enqueued_out (may be NULL) receives the number of jobs this pass
** enqueued; *next_at_us_out (may be NULL) the earliest next tick of the
** schedules not paused (0: none), for the caller to sleep until then (a
** schedule added meanwhile by someone else may come sooner: look again at
** least every few seconds).  A schedule whose stored spec or zone no longer
** parses (edited with SQL, or a zone gone from the tz database) is left as
** it is: the pass does the others, then returns SQLQ_MISUSE naming it.
*/
int sqlq_cron_tick(sqlq_db *db, int64_t now_at_us, size_t *enqueued_out, int64_t *next_at_us_out);

/* ---------------------------------------------------------------------
** Listing what is there (libsqlq 1.1): the named locks held now, the
** rings and the pools, for dashboards and operators.  Each call reads in
** one statement or a read transaction of its own (in the caller's
** transaction when sqlq_begin() opened one), returns at most limit
** entries (1 to SQLQ_LIST_MAX; else SQLQ_MISUSE), and on failure leaves
** *out NULL and *n_out 0.  NULL for an out pointer is SQLQ_MISUSE.
*/

/* The most entries one listing call returns. */
#define SQLQ_LIST_MAX 10000

/* One named lock held now, as sqlq_locks() reads it.  The library owns the
** name and the strings until sqlq_lock_infos_free(). */
typedef struct sqlq_lock_info {
  const unsigned char *name; /* the name when the backend keeps it (MariaDB:
                                a name that GET_LOCK takes as it is, see
                                docs/mysql.md), NUL-terminated for
                                convenience; NULL when it keeps only a key */
  size_t name_len;           /* its length in bytes (0 when NULL) */
  int64_t key;               /* what the backend locks, the same number that
                                sqlq_lock_key() gives for the name */
  int64_t pid;               /* the holder's session on the server
                                (PostgreSQL: its backend pid; MariaDB: its
                                connection id); 0 when unknown */
  const char *holder;        /* who holds it, in words (application, user,
                                client address), or NULL when unknown */
  int64_t since_at_us;       /* when the holder's session began: the lock
                                was taken then or later; 0 when unknown */
  int64_t expires_at_us;     /* a lease (sqlq_lock_lease()): when it runs
                                out unless renewed; 0 for a session's lock */
  int64_t fence;             /* a lease's fencing token; 0 otherwise */
} sqlq_lock_info;

/*
** The named locks held right now in db's database, by any process, into
** *locks_out, an array of *n_out entries ordered by name (bytes; the
** locks whose name is unknown last) then key; free it with
** sqlq_lock_infos_free().  What the backend can say differs (docs/serve.md, "Locks, rings
** and pools"):
**   PostgreSQL: every session advisory lock of the database (pg_locks):
**     key, holder's pid, application, user, client address and session
**     start; no name (the server keeps only the key); and, from schema
**     version 14, the leases of sqlq_leases not run out (key, expiry,
**     fence).  Other users' sessions show their pid but no holder unless
**     the reader is a member of pg_read_all_stats.
**   MariaDB: the user-level locks of the whole server
**     (information_schema.METADATA_LOCK_INFO): name or key, connection
**     id, user and client host.  It needs the server's metadata_lock_info
**     plugin (INSTALL SONAME 'metadata_lock_info'): without it the call
**     answers SQLQ_UNAVAILABLE saying so.
**   SQLite: the locked bytes of the sidecar file (key only: no name, no
**     holder; the kernel does not tell who holds an open-file-description
**     lock).
**   Firebird: cannot list its locks (a held lock is a row locked by a
**     transaction, which the server does not show): SQLQ_UNAVAILABLE.
** A program other than sqlq that takes advisory locks (PostgreSQL) or
** GET_LOCK locks (MariaDB) on the server has them listed too.
*/
int sqlq_locks(sqlq_db *db, size_t limit, sqlq_lock_info **locks_out, size_t *n_out);

/* Free an array returned by sqlq_locks().  Accepts NULL. */
void sqlq_lock_infos_free(sqlq_lock_info *locks, size_t n);

/*
** The key that db's backend locks for the lock called name (name_len
** bytes, 1 to SQLQ_LOCK_NAME_MAX), into *key_out: the number sqlq_locks()
** reports in sqlq_lock_info.key, so that a caller can tell which listed
** lock is a name it knows.  It is the name's 64-bit FNV-1a hash (as a
** signed number), except on SQLite, where it is the byte of the sidecar
** file locked.  No database access.
*/
int sqlq_lock_key(sqlq_db *db, const void *name, size_t name_len, int64_t *key_out);

/* One ring, as sqlq_rings() lists it.  The library owns name until
** sqlq_ring_infos_free(). */
typedef struct sqlq_ring_info {
  const char *name;
  int64_t capacity;      /* entries it keeps at most */
  int64_t entries;       /* entries it holds now: min(last_seq, capacity) */
  int64_t last_seq;      /* the sequence number of its newest entry (0: none) */
  int64_t created_at_us; /* when it was created */
} sqlq_ring_info;

/*
** The rings whose names sort after after (bytes; NULL or "": from the
** first), at most limit of them, ordered by name, into *rings_out
** (*n_out entries; free with sqlq_ring_infos_free()).  A database below
** schema version 2 has none.  To list them all, call again with after the
** last name returned until fewer than limit come back.
*/
int sqlq_rings(sqlq_db *db, const char *after, size_t limit, sqlq_ring_info **rings_out,
               size_t *n_out);

/* Free an array returned by sqlq_rings().  Accepts NULL. */
void sqlq_ring_infos_free(sqlq_ring_info *rings, size_t n);

/* One pool, as sqlq_pools() lists it.  The library owns name until
** sqlq_pool_infos_free(). */
typedef struct sqlq_pool_info {
  const char *name;
  int64_t items;           /* how many items it has (at least 1) */
  int64_t held;            /* of which held now */
  int64_t last_used_at_us; /* when an item of it was last handed out (0: never) */
} sqlq_pool_info;

/* The pools whose names sort after after, as sqlq_rings() lists rings. */
int sqlq_pools(sqlq_db *db, const char *after, size_t limit, sqlq_pool_info **pools_out,
               size_t *n_out);

/* Free an array returned by sqlq_pools().  Accepts NULL. */
void sqlq_pool_infos_free(sqlq_pool_info *pools, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SQLQ_H */
