/*
** sqlq_int.h -- internal declarations shared by the core and the drivers.
**
** Tiers: `sqlq_` is the public API, `sqlq__` is internal to the library,
** plain static names stay inside one file.
**
** The core (the .c files of src/) holds all queue logic; it names backends
** only in src/db.c's list of known URL schemes (for "backend not built").
** A backend is one `const struct sqlq__driver` (src/driver/NAME*.c) whose
** differences from the others are data -- the text of each SQL statement in
** its dialect -- or a method, for the operations whose shape differs between
** backends: opening and closing, transactions, statements, waiting and
** waking, named locks, the triggers of table subscriptions, and, with a
** core default, claim, pool pick and id reservation.
**
** What a backend can do is said one way: a NULL entry of sql[] is a
** statement the dialect lacks (the calls that need it answer
** SQLQ_UNAVAILABLE, or the core does the work another way, as each
** statement's comment says), and a NULL method is an operation the driver
** leaves to the core's default or lacks (as each method's comment says).
** There are no capability bits: the flags of sqlq__driver.traits
** (SQLQ__TRAIT_*) are not things a backend can or cannot do but how its
** database behaves, which the core must work with.
*/
#ifndef SQLQ_INT_H
#define SQLQ_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sqlq.h"

#define SQLQ__API __attribute__((visibility("default")))

/* Room for a handle's error message, with its NUL. */
#define SQLQ__ERRMSG_SIZE 512

/* ---------------------------------------------------------------------
** Parsed URLs.
*/

/* One key=value option from a URL's query string, percent-decoded. */
typedef struct sqlq__url_opt {
  char *key;
  char *value;
} sqlq__url_opt;

/*
** A parsed database URL.  Every string is owned by the struct and freed by
** sqlq__url_free().  For `scheme:PATH` URLs (sqlite:PATH) only scheme, path
** and the options are set.  For `scheme://...` URLs, user, password, host,
** port and path (the part after the first '/' following the authority,
** percent-decoded) are set when present.
*/
typedef struct sqlq__url {
  char *scheme;
  char *user;     /* NULL when absent */
  char *password; /* NULL when absent; never printed */
  char *host;     /* NULL when absent; with several hosts, their names
                      joined by commas */
  int port;       /* 0 when absent or with several hosts */
  char *ports;    /* with several hosts, their ports joined by commas (an
                      empty entry where a host has none); else NULL */
  int n_hosts;    /* entries in the authority's host list (0 for
                      scheme:PATH URLs, 1 for a single host, even empty) */
  char *path;     /* NULL when absent */
  sqlq__url_opt *opts;
  int n_opts;
  char *redacted; /* the URL with the password and the values of secret
                      options (by decoded key) replaced by "***" */
} sqlq__url;

/* Parse text into *url.  Returns SQLQ_OK, SQLQ_MISUSE with a message in
** err (err_size bytes) for malformed text, or SQLQ_NOMEM. */
int sqlq__url_parse(const char *text, sqlq__url *url, char *err, size_t err_size);
void sqlq__url_free(sqlq__url *url);
/* SQLQ_OK when url names one host at most; else SQLQ_MISUSE recorded on
** db (for the drivers that connect to one server only). */
int sqlq__url_one_host(sqlq_db *db, const sqlq__url *url);
/* The value of option key, or NULL. */
const char *sqlq__url_option(const sqlq__url *url, const char *key);
/* Read option key, when the URL has it, as on or off into *on (1 or 0), or
** as a number of seconds from min to max into *seconds; leave the output
** alone when the option is absent.  Records SQLQ_MISUSE, naming the option
** and what it takes, for any other value. */
int sqlq__url_switch(sqlq_db *db, const sqlq__url *url, const char *key, int *on);
int sqlq__url_seconds(sqlq_db *db, const sqlq__url *url, const char *key, double min, double max,
                      double *seconds);

/* ---------------------------------------------------------------------
** The driver interface.
*/

/* Statements every dialect provides, as SQL text.  Parameters are written
** $1, $2, ... in every dialect (a driver whose client library wants another
** placeholder rewrites them at prepare time); a number may be used more
** than once.  The comment on each names its parameters and result columns.
** Times are integer microseconds since the epoch on the database's clock;
** parameters named *_us that are durations are added to that clock in SQL. */
enum sqlq__sql_id {
  SQLQ__SQL_SCHEMA_TABLE,   /* script: create the version table if missing */
  SQLQ__SQL_SCHEMA_VERSION, /* -> version (one row, NULL when no schema) */
  SQLQ__SQL_SCHEMA_RECORD,  /* $1 version */
  SQLQ__SQL_ENQUEUE,        /* $1 queue $2 priority $3 delay_us $4 max_attempts
                                $5 dedupe_key $6 group_key $7 payload
                                -> id; when the dedupe key is taken by an
                                unfinished job, no row (ON CONFLICT DO
                                NOTHING), or step returns SQLQ__CONSTRAINT.
                                A dialect with last_insert_id returns no
                                row: a job stored, whose id that gives, or
                                SQLQ__CONSTRAINT */
  SQLQ__SQL_DEDUPE_LOOKUP,  /* $1 queue $2 dedupe_key -> id */
  SQLQ__SQL_QUEUE_REGISTER, /* $1 queue: known from now on (stats list it;
                                SQLQ__CONSTRAINT when it was already);
                                NULL when the ENQUEUE statements do it */
  SQLQ__SQL_REAP,           /* $1 queue: expired leases back to ready, or
                                dead; NULL when CLAIM does it */
  SQLQ__SQL_PAUSED,         /* $1 queue -> paused, limited (1 when the
                                queue has a concurrency limit); no row:
                                neither */
  SQLQ__SQL_CLAIM,          /* $1 queue $2 token $3 lease_us $4 limit
                                $5 counted (0/1)
                                -> id, priority, run_at, attempts, max_attempts,
                                   created_at, lease_until, group_key,
                                   dedupe_key, payload; no rows when the
                                   queue is paused, nor when it has a
                                   concurrency limit and counted is 0 (the
                                   core then claims with LIMIT_LOCK) */
  SQLQ__SQL_ACK,            /* $1 id $2 token; deletes when held */
  SQLQ__SQL_HISTORY_COPY,   /* $1 id $2 token; copies to history when held */
  SQLQ__SQL_FAIL_PEEK,      /* $1 id $2 token -> attempts, max_attempts, queue */
  SQLQ__SQL_FAIL,           /* $1 id $2 token $3 dead(0/1) $4 delay_us $5 error */
  SQLQ__SQL_RELEASE,        /* $1 id $2 token $3 delay_us -> queue */
  SQLQ__SQL_RELEASE_ROW,    /* optional, for a dialect whose RELEASE returns
                                no row: its parameters -> RELEASE's row, run
                                after RELEASE changed a row */
  SQLQ__SQL_TOUCH,          /* $1 id $2 token $3 lease_us -> lease_until */
  SQLQ__SQL_TOUCH_ROW,      /* optional, as RELEASE_ROW for TOUCH */
  SQLQ__SQL_NEXT_DUE,       /* $1 queue -> paused, run_at_in_us, lease_in_us
                                (each NULL when none; *_in_us relative to now) */
  SQLQ__SQL_PAUSE_SET,      /* $1 queue $2 paused(0/1) */
  SQLQ__SQL_STATS,          /* $1 queue or NULL -> queue, ready, scheduled,
                                running, dead, paused; ordered by queue */
  SQLQ__SQL_SUMMARY,        /* $1 queue or NULL $2 limit -> queue, ready,
                                scheduled, running, dead (each at most
                                $2 + 1), paused, oldest ready job's age
                                (us, NULL when none); ordered by queue */
  SQLQ__SQL_LIST,           /* $1 queue $2 state filter (0 all, SQLQ_STATE_*)
                                $3 limit (-1 all) -> id, state (SQLQ_STATE_*),
                                priority, attempts, max_attempts, run_at,
                                created_at, lease_until, dedupe_key,
                                group_key, last_error, payload */
  SQLQ__SQL_RETRY_ID,       /* $1 queue $2 id */
  SQLQ__SQL_RETRY_DEAD,     /* $1 queue */
  SQLQ__SQL_PURGE,          /* $1 queue */
  SQLQ__SQL_DELETE_DEAD_ID, /* $1 queue $2 id: the job if it is dead and no
                               job waits for it (schema version 7) */
  /* Batch statements over arrays, for dialects that bind them (the others
  ** leave these NULL, and the core runs the one-row statements instead). */
  SQLQ__SQL_ENQUEUE_ARRAY,     /* $1 queue $2 priority[] $3 delay_us[]
                                $4 max_attempts[] $5 group_key[] $6 payload[]
                                -> id of each job, in the arrays' order */
  SQLQ__SQL_ACK_ARRAY,         /* $1 id[] $2 token[] -> id of each job deleted */
  SQLQ__SQL_ACK_HISTORY_ARRAY, /* as ACK_ARRAY, copying each job to history */
  /* Rings (schema version 2: a dialect without them leaves these NULL, and
  ** the ring and pool calls answer SQLQ_UNAVAILABLE). */
  SQLQ__SQL_RING_CREATE,      /* $1 ring $2 capacity; nothing (or
                                SQLQ__CONSTRAINT) when it exists */
  SQLQ__SQL_RING_INFO,        /* $1 ring -> capacity, last seq (0: none yet);
                                no row when there is no such ring */
  SQLQ__SQL_RING_ADVANCE,     /* $1 ring $2 count -> first seq, capacity: takes
                                the next count sequence numbers, holding the
                                ring's row until the transaction ends; no row
                                when there is no such ring */
  SQLQ__SQL_RING_ADVANCE_ROW, /* optional, as RELEASE_ROW for RING_ADVANCE */
  SQLQ__SQL_RING_STORE,       /* $1 ring $2 seq $3 capacity $4 payload: into
                                slot seq % capacity, over what was there */
  SQLQ__SQL_RING_PUSH,        /* optional, ADVANCE and STORE of one entry as
                                one statement: $1 ring $2 payload -> seq; no
                                row when there is no such ring */
  SQLQ__SQL_RING_READ,        /* $1 ring $2 since $3 limit (-1 all) -> seq,
                                at, payload of the entries above since,
                                ordered by seq */
  SQLQ__SQL_RING_CLEAR,       /* $1 ring: deletes its entries */
  SQLQ__SQL_RING_DROP,        /* $1 ring: deletes the ring's row (run before
                                RING_CLEAR, in the same transaction) */
  /* Pools (schema version 2). */
  SQLQ__SQL_POOL_ADD,     /* $1 pool $2 item; changes() 0, or
                                SQLQ__CONSTRAINT, when there */
  SQLQ__SQL_POOL_REMOVE,  /* $1 pool $2 item */
  SQLQ__SQL_POOL_LIST,    /* $1 pool -> id, item, last_used, uses,
                                held_until (NULL when free), in the order
                                POOL_NEXT hands them out */
  SQLQ__SQL_POOL_NEXT,    /* $1 pool $2 hold_us (0: no hold) $3 token
                                -> id, item, last_used, uses, held_until:
                                the free item least recently used (ties: the
                                lowest id), stamped with max(now, the pool's
                                newest stamp + 1), its uses counted, held with
                                the token when hold_us > 0; no row when no item
                                is free.  Concurrent callers get different
                                items while any is free, in LRU order. */
  SQLQ__SQL_POOL_COUNT,   /* $1 pool $2 item or NULL -> items of the pool
                                (that one item when given) */
  SQLQ__SQL_POOL_RELEASE, /* $1 pool $2 item $3 token: frees the item when
                                held with the token */
  /* Subscriptions (schema version 3). */
  SQLQ__SQL_SUB_COLUMNS,  /* $1 table -> name, pk, binary: every column of
                                the table in the default schema, in table
                                order; pk is the column's 1-based place in
                                the primary key (0: not in it), binary 1 when
                                its values are bytes; no rows when there is
                                no such table */
  SQLQ__SQL_SUB_ADD,      /* $1 table $2 action ('insert', 'update' or
                                'delete') $3 tag $4 rows (0/1): records one
                                action of a subscription, replacing its rows
                                flag when it is there (the core registers the
                                queue with QUEUE_REGISTER when the dialect
                                has it; else SUB_ADD must) */
  SQLQ__SQL_SUB_REMOVE,   /* $1 table $2 tag: deletes every action of
                                the subscription */
  SQLQ__SQL_SUB_ACTIONS,  /* $1 table -> action, rows: of every
                                subscription of the table */
  SQLQ__SQL_SUB_LIST,     /* -> table, tag, action, rows, created_at of
                                every subscription, ordered by table, tag */
  SQLQ__SQL_SUB_TRIGGERS, /* $1 base (see sqlq__sub_plan) -> name, table
                                of each trigger of the default schema whose
                                name starts with base */
  /* Schedules of periodic jobs (schema version 4).  Times in
  ** microseconds since the epoch; next_run and last_run are ticks. */
  SQLQ__SQL_CRON_NOW,     /* -> the database's clock now */
  SQLQ__SQL_CRON_ADD,     /* $1 name $2 spec $3 zone $4 queue $5 payload
                                $6 missed $7 next_run: a new schedule
                                (SQLQ__CONSTRAINT when the name is taken) */
  SQLQ__SQL_CRON_REMOVE,  /* $1 name */
  SQLQ__SQL_CRON_PAUSE,   /* $1 name: paused */
  SQLQ__SQL_CRON_RESUME,  /* $1 name $2 next_run: not paused, from next_run */
  SQLQ__SQL_CRON_LIST,    /* $1 name or NULL (all) -> name, spec, zone,
                                queue, payload, missed, paused (0/1),
                                next_run, last_run (NULL: none), ordered
                                by name */
  SQLQ__SQL_CRON_DUE,     /* $1 now -> name, spec, zone, queue, payload,
                                missed, paused (0), next_run, last_run of
                                every schedule not paused whose next_run
                                <= now, ordered by next_run, name */
  SQLQ__SQL_CRON_ADVANCE, /* $1 name $2 old next_run $3 new next_run
                                $4 last_run (0: unchanged): changes
                                the row only while its next_run is the old
                                one (the compare-and-set of a tick) */
  SQLQ__SQL_CRON_NEXT,    /* -> the earliest next_run of the schedules
                                not paused (NULL: none) */
  /* Retention (schema version 5).  A cut (at, id) stands for the history
  ** rows of a queue with (finished_at, id) <= (at, id), in that order. */
  SQLQ__SQL_RETENTION_SET,  /* $1 queue $2 keep_for_us $3 keep_count (each 0:
                                no limit, stored as NULL) */
  SQLQ__SQL_RETENTION_GET,  /* $1 queue -> keep_for_us, keep_count (each NULL
                                when no limit), now; no row when the queue
                                is unknown */
  SQLQ__SQL_HISTORY_NEWEST, /* $1 queue $2 offset -> finished_at, id of the
                                queue's history row that has offset rows
                                after it; no row when there are fewer */
  SQLQ__SQL_HISTORY_OLDEST, /* $1 queue $2 offset -> finished_at, id of the
                                row that has offset rows before it */
  SQLQ__SQL_HISTORY_PRUNE,  /* $1 queue $2 at $3 id: deletes the rows of the
                                cut (at, id), without LIMIT (the core bounds
                                the cut by HISTORY_OLDEST) */
  SQLQ__SQL_HISTORY_INDEX,  /* optional: makes sqlq_jobs_history_age when it
                                is missing, for a dialect whose migration
                                leaves it to the first retention set (its
                                upkeep slows every ack that keeps history);
                                NULL when the migration makes it */
  SQLQ__SQL_HISTORY_LIST,   /* $1 queue $2 state (SQLQ_STATE_DONE) $3 limit
                                (-1 all) -> LIST's columns of the queue's
                                history rows: run_at is finished_at,
                                lease_until and last_error NULL; newest
                                first (finished_at DESC, id DESC) */
  /* Concurrency limits (schema version 6; see docs/schema.md). */
  SQLQ__SQL_LIMIT_SET,     /* $1 queue $2 max_running (0: none, stored as
                                NULL) */
  SQLQ__SQL_LIMIT_GET,     /* $1 queue -> max_running (NULL: none); no row
                                when the queue is unknown */
  SQLQ__SQL_LIMIT_LOCK,    /* $1 queue -> max_running, holding the queue's
                                row until the transaction ends (the core
                                runs it in a SQLQ__TX_WAITS transaction);
                                no row, and no lock, when the queue has no
                                limit */
  SQLQ__SQL_LIMIT_RUNNING, /* $1 queue -> how many of its jobs run with a
                                lease that has not expired, counted after
                                LIMIT_LOCK took its lock (so that it sees
                                the claims of the holder before) */
  /* The statements that name max_running, as a database below schema
  ** version 6 (which has no concurrency limits) needs them. */
  SQLQ__SQL_CLAIM_UNLIMITED,    /* as CLAIM, without $5 */
  SQLQ__SQL_PAUSED_UNLIMITED,   /* as PAUSED; limited is 0 */
  SQLQ__SQL_NEXT_DUE_UNLIMITED, /* as NEXT_DUE */
  /* Dependencies (schema version 7).  A job that waits for others is
  ** ready with run_at = SQLQ__WAITING_AT + its delay in microseconds, and
  ** waits = how many of them have not succeeded; a job others wait for has
  ** awaited = how many dependents were enqueued after it (NULL: none), and
  ** sqlq_deps has a row (job_id, after_id) for each dependent and job it
  ** waits for.  The *_FREE twins of the ack statements are the statements
  ** themselves, leaving alone a job whose awaited is set. */
  SQLQ__SQL_ACK_FREE,
  SQLQ__SQL_HISTORY_COPY_FREE,
  SQLQ__SQL_ACK_ARRAY_FREE,         /* NULL when ACK_ARRAY is */
  SQLQ__SQL_ACK_HISTORY_ARRAY_FREE, /* NULL when ACK_HISTORY_ARRAY is */
  SQLQ__SQL_DEPS_AWAIT,             /* $1 id: counts one more dependent of
                                       the job, in any state (the row stays
                                       locked until the transaction ends);
                                       no row changed when there is none */
  SQLQ__SQL_DEPS_ADD,               /* $1 job_id $2 after_id */
  SQLQ__SQL_DEPS_HOLD,              /* $1 id $2 waits $3 delay_us: the job
                                       waits */
  SQLQ__SQL_DEPS_RELEASE,           /* $1 id of a job that succeeded: each
                                       dependent's waits counts one down, and
                                       one that waited for it last is ready,
                                       due after its delay */
  SQLQ__SQL_DEPS_READY,             /* $1 id -> queue, count of the
                                       dependents RELEASE made ready */
  SQLQ__SQL_DEPS_DONE,              /* $1 id: deletes its sqlq_deps rows */
  SQLQ__SQL_DEPS_KILL,              /* $1 queue: each waiting dependent of a
                                       job of the queue becomes dead, its
                                       last_error naming the lowest such id */
  SQLQ__SQL_DEPS_FORGET,            /* $1 queue: deletes the sqlq_deps rows
                                       of the queue's jobs, either side */
  /* Rate limits (schema version SQLQ__RATES_VERSION; see docs/schema.md).
  ** A rate of N starts per period keeps N rows of sqlq_rate_starts, the
  ** queue's slots (queue, slot, started_at), ordered by (started_at,
  ** slot): the N latest starts.  A slot never used has its own number as
  ** started_at, a time long past, so that no two of them tie: the ranges
  ** of RATE_STAMP and RATE_PRUNE then read as many index entries as they
  ** change, not all the slots that tie at 0. */
  SQLQ__SQL_RATE_SET,    /* $1 queue $2 max_starts $3 period_us (0 0: none,
                            stored as NULL) */
  SQLQ__SQL_RATE_GET,    /* $1 queue -> rate_max, rate_period (NULL: none),
                            how many slots the queue has; no row when the
                            queue is unknown */
  SQLQ__SQL_RATE_GROW,   /* $1 queue $2 count (1 to SQLQ__RATE_GROW_ROWS):
                            adds count slots never used, numbered after
                            the queue's highest */
  SQLQ__SQL_RATE_NEWEST, /* $1 queue $2 offset -> started_at, slot of the
                            ($2+1)-th newest slot */
  SQLQ__SQL_RATE_PRUNE,  /* $1 queue $2 started_at $3 slot: deletes the
                            slots before ($2, $3) in slot order */
  SQLQ__SQL_RATE_FREE,   /* $1 queue $2 period_us $3 limit -> started_at,
                            slot of the free slots (started at or before
                            now - period), oldest first, at most $3; run
                            after LIMIT_LOCK_RATES took its lock, reading
                            the newest commits as LIMIT_RUNNING does */
  SQLQ__SQL_RATE_STAMP,  /* $1 queue $2 started_at $3 slot: the slots at or
                            before ($2, $3) in slot order start now */
  /* The statements that name max_running on a database with rate limits:
  ** "limited" is max_running or rate_max set. */
  SQLQ__SQL_CLAIM_RATES,      /* as CLAIM */
  SQLQ__SQL_PAUSED_RATES,     /* as PAUSED */
  SQLQ__SQL_NEXT_DUE_RATES,   /* as NEXT_DUE; a ready job of a queue whose
                                 rate has no free slot is due when its
                                 oldest slot frees */
  SQLQ__SQL_LIMIT_LOCK_RATES, /* as LIMIT_LOCK -> max_running (NULL: none),
                                 rate_max, rate_period (NULL: none); no row,
                                 and no lock, when the queue has neither */
  /* Cancellation (schema version 9; the text is shared, cancel_sql.h). */
  SQLQ__SQL_CANCEL_PEEK,   /* $1 id -> queue of the job when it is ready or
                                running; no row otherwise */
  SQLQ__SQL_CANCEL,        /* $1 id: a ready or running job becomes dead,
                                cancelled (cancelled_at, last_error), its
                                token and lease cleared */
  SQLQ__SQL_UNCANCEL_ID,   /* $1 queue $2 id: after RETRY_ID, the job made
                                ready is no longer marked cancelled */
  SQLQ__SQL_UNCANCEL_DEAD, /* $1 queue: before RETRY_DEAD, its dead jobs
                                are no longer marked cancelled */
  /* Per-group limits (schema version SQLQ__GROUPS_VERSION): the *_GROUPS
  ** twins of the statements that name the limits columns start at most the
  ** queue's group_running (NULL: 1) jobs of a group at once (the others,
  ** one), and "limited" is max_running, rate_max or fair set. */
  SQLQ__SQL_GROUP_LIMIT_SET, /* $1 queue $2 group_running (1: the default,
                                stored as NULL) */
  SQLQ__SQL_GROUP_LIMIT_GET, /* $1 queue -> group_running (1 when unset);
                                no row when the queue is unknown */
  SQLQ__SQL_CLAIM_GROUPS,    /* as CLAIM */
  SQLQ__SQL_PAUSED_GROUPS,   /* as PAUSED */
  SQLQ__SQL_NEXT_DUE_GROUPS, /* as NEXT_DUE_RATES */
  /* Fair queues (schema version SQLQ__GROUPS_VERSION; see docs/schema.md, "Fair claiming").
  ** A tenant is (grouped, key): (1, group_key) for the jobs of a group,
  ** (0, '') for the jobs without one.  A fair queue counts as limited in
  ** PAUSED_GROUPS and CLAIM_GROUPS: its claims take FAIR_LOCK's lock and run the
  ** statements below. */
  SQLQ__SQL_FAIR_SET,        /* $1 queue $2 fair (0/1): off also forgets
                                the queue's tenants */
  SQLQ__SQL_FAIR_FORGET,     /* $1 queue: deletes its sqlq_groups rows */
  SQLQ__SQL_FAIR_GET,        /* $1 queue -> fair (0/1); no row when the
                                queue is unknown */
  SQLQ__SQL_FAIR_LOCK,       /* $1 queue -> served (the queue's last
                                sequence number, 0: none), group_running
                                (1 unless set), holding the queue's row
                                until the transaction ends (in a
                                SQLQ__TX_WAITS transaction); no row, and no
                                lock, when the queue is not fair or is
                                paused (CLAIM then says so) */
  SQLQ__SQL_FAIR_REAP,       /* as REAP, for a dialect whose CLAIM reaps
                                (NULL when REAP is there) */
  SQLQ__SQL_FAIR_TENANTS,    /* $1 queue -> grouped, key, served (0: never)
                                of every tenant with a ready job due,
                                ordered by served, grouped, key */
  SQLQ__SQL_FAIR_PICK_GROUP, /* $1 queue $2 key $3 group_running $4 n
                                -> ids of the first n by (priority DESC,
                                run_at, id) of the due ready jobs among
                                the group's first group_running unfinished
                                jobs by id */
  SQLQ__SQL_FAIR_PICK_FREE,  /* $1 queue $2 n -> ids of the first n due
                                ready jobs without a group key, in claim
                                order */
  SQLQ__SQL_FAIR_TAKE,       /* $1 id $2 token $3 lease_us: claims the job
                                when it is ready -> CLAIM's columns */
  SQLQ__SQL_FAIR_TAKE_ROW,   /* optional, as RELEASE_ROW for FAIR_TAKE */
  SQLQ__SQL_FAIR_SERVE,      /* $1 queue $2 grouped $3 key $4 served: the
                                tenant's sequence number */
  SQLQ__SQL_FAIR_SERVED,     /* $1 queue $2 served: the queue's last
                                sequence number */
  /* Health (sqlq_health(), health.c; no schema version: it reads the
  ** server's monitoring views). */
  SQLQ__SQL_HEALTH, /* -> name, value, unit, threshold, holder (NULL:
                        unknown or nobody), started_at (microseconds,
                        NULL: unknown), detail (NULL: none): one row per
                        item of docs/health.md, in one statement; NULL
                        for a driver with the health method */
  /* Claim lanes (from the driver's lanes_version; see cursor.c,
  ** and the dialect's CLAIM_LANES).  A dialect whose claim would walk the old row
  ** versions a long-held snapshot keeps has these; NULL in the others,
  ** which claim with CLAIM_GROUPS and wait with NEXT_DUE_GROUPS. */
  SQLQ__SQL_CLAIM_LANES,    /* as CLAIM_GROUPS, $6 cursor (text, NULL:
                                none: scan every lane from its start)
                                -> CLAIM's columns and a cursor column,
                                NULL in the job rows, then one last row
                                whose id is NULL and whose cursor is the
                                one the next claim of the queue passes */
  SQLQ__SQL_NEXT_DUE_LANES, /* as NEXT_DUE_GROUPS, $2 cursor (as above) */
  /* Counts of what handles did (schema version SQLQ__COUNTS_VERSION,
  ** table sqlq_counts; counts.c).  A row is (minute, queue, writer): one
  ** handle's counts of one queue in one minute, written only by it. */
  SQLQ__SQL_COUNTS_INSERT, /* $1 minute $2 queue $3 writer $4 enqueued
                              $5 finished $6 failed $7 dead $8 detail (the
                              lock counts and histograms as text, see
                              counts.c): a new row (no row changed, or
                              SQLQ__CONSTRAINT, when it is there) */
  SQLQ__SQL_COUNTS_UPDATE, /* the same parameters: sets the row's counts
                              to them (no row changed when there is none) */
  SQLQ__SQL_COUNTS_PRUNE,  /* $1 minute: deletes the rows before it */
  SQLQ__SQL_COUNTS_READ,   /* $1 queue or NULL (all) $2 minute -> minute,
                              queue, writer, enqueued, finished, failed,
                              dead, detail of the rows from that minute on */
  SQLQ__SQL_COUNTS_IDS,    /* -> the last job id the database handed out
                              (0: none yet): every job inserted, by anyone,
                              on any queue (no schema version: it reads the
                              id sequence of sqlq_jobs) */
  /* Named locks as leases (lease.c; schema version SQLQ__LEASES_VERSION),
  ** each one autocommit statement.  $1 is the lock name's key, $2 the
  ** holder's token, $3 the lease in microseconds from the database's now. */
  SQLQ__SQL_LEASE_TAKE,    /* $1 key $2 token $3 lease_us -> fence: the
                              lock, when nobody holds it or its holder's
                              lease has run out, held with the token until
                              now + lease_us, its fence one more than the
                              last holder's; no row when another holds it */
  SQLQ__SQL_LEASE_RENEW,   /* $1 key $2 token $3 lease_us -> fence: the
                              holder's lease runs until now + lease_us; no
                              row when the lock is not held with the token
                              (another took it over) */
  SQLQ__SQL_LEASE_RELEASE, /* $1 key $2 token: frees the lock when it is
                              held with the token */
  /* Listing (list.c; sqlq_locks, sqlq_rings, sqlq_pools).  Names sort as
  ** bytes; $1 of RING_LIST and POOL_LIST is NULL or the name to list
  ** after, $2 the limit. */
  SQLQ__SQL_LOCK_LIST_CHECK, /* optional -> why the server cannot list its
                                named locks now (text); no row when it can */
  SQLQ__SQL_LOCK_LIST,       /* $1 limit -> name (NULL: not kept), key
                                (NULL: the hash of the name), pid (NULL:
                                unknown), holder (NULL: unknown),
                                since_at (NULL: unknown), of each named
                                lock a session holds; NULL for a driver
                                with the lock_list method or that cannot
                                list its locks */
  SQLQ__SQL_LEASE_LIST,      /* $1 limit -> key, expires_at, fence of each
                                lease held and not run out (schema version
                                SQLQ__LEASES_VERSION); NULL without leases */
  SQLQ__SQL_RING_LIST,       /* $1 after $2 limit -> name, capacity,
                                last seq, created_at */
  SQLQ__SQL_POOL_LIST_ALL,   /* $1 after $2 limit -> pool, items, held now,
                                newest last_used (0: never) */
  SQLQ__SQL_COUNT
};

/* The run_at from which a ready job waits for others (schema version 7):
** about the year 128,000, far past any delay (SQLQ__SECONDS_MAX), so that
** the claims, which take jobs whose run_at has come, never take it. */
#define SQLQ__WAITING_AT 4000000000000000000LL
#define SQLQ__WAITING_SQL "4000000000000000000"

/* The schema version from which a database has leases (sqlq_leases on
** PostgreSQL; version 13 is another change's). */
#define SQLQ__LEASES_VERSION 14

/* The schema version from which a database has dependencies. */
#define SQLQ__DEPS_VERSION 7

/* The schema version from which a database has cancellation. */
#define SQLQ__CANCEL_VERSION 9

/* The channel on which the workers of queue hear of cancellations
** (sqlq_cancel, sqlq_wait_lost): "\x1Ecncl:" and the queue's name, at
** most SQLQ__CANCEL_CHANNEL_SIZE bytes with its NUL; as long as a ring's
** channel, which MariaDB's wake procedure takes. */
#define SQLQ__CANCEL_CHANNEL_SIZE (SQLQ_QUEUE_NAME_MAX + 8)
const char *sqlq__cancel_channel(const char *queue, char *buf);

/* The schema version of db's database (0: none), read in the caller's
** transaction. */
int sqlq__schema_version(sqlq_db *db, int *version);

/* Traits of a backend's database (sqlq__driver.traits): how it behaves,
** not what it can do (see the top of this file). */
#define SQLQ__TRAIT_NOTIFY_AT_COMMIT 0x01 /* notify is called before the commit */
#define SQLQ__TRAIT_DDL_COMMITS \
  0x02 /* creating a trigger commits the open
                                             transaction (MariaDB) */

/* Kinds of transaction, for sqlq__driver.begin: SQLQ__TX_READ, or
** SQLQ__TX_WRITE with any of the hints after it, which a driver may ignore. */
#define SQLQ__TX_READ 0x00  /* only reads */
#define SQLQ__TX_WRITE 0x01 /* writes, durable once committed */
/* The first statement is the only one that writes, and nothing after it
** needs it undone: the driver may commit it as it runs, and run the rest
** (reads) outside any transaction. */
#define SQLQ__TX_SINGLE 0x02
/* Losing the commit in a crash of the database server only makes work run
** again (a claim, an ack, a failure, a release: a job's token fences its
** worker), so the driver need not wait for the commit to be durable. */
#define SQLQ__TX_LAZY 0x04
/* The transaction takes a row lock that others hold for the length of
** theirs (a limited claim's queue row): the driver waits for it, up to the
** busy timeout, even in a SQLQ__TX_LAZY transaction. */
#define SQLQ__TX_WAITS 0x08

/*
** What the triggers of a subscribed table must do, for
** sqlq__driver.sub_triggers.  The core owns every pointer.
*/
#define SQLQ__SUB_TRIGGER_BASE "sqlq_sub_"
typedef struct sqlq__sub_column {
  const char *name; /* as the database stores it: quote it in SQL */
  int pk;           /* 1-based place in the primary key; 0: not in it */
  int binary;       /* values are bytes: "\\x" + hex in JSON */
} sqlq__sub_column;
typedef struct sqlq__sub_plan {
  const char *table; /* the subscribed table, in the default schema
                         (validated text without control characters, but
                         quote it): the payloads' "table" and the
                         subscriptions' table_name */
  const char *on;    /* the table the triggers go on: table, or after a
                         rename the table's new name */
  /* "sqlq_sub_" and 16 lower-case hex digits of the table name's hash: the
  ** triggers (and functions) of the table are named base + "_i", "_u" and
  ** "_d", for insert, update and delete. */
  char base[32];
  unsigned actions;             /* SQLQ_ON_* that have a subscriber: one trigger each */
  int rows;                     /* some subscriber wants row images */
  const sqlq__sub_column *cols; /* every column, in table order */
  size_t n_cols;
} sqlq__sub_plan;

/* A prepared statement of a driver.  Opaque to the core. */
typedef struct sqlq__stmt sqlq__stmt;

/* Results of sqlq__driver.step(), besides the public status codes.
** SQLQ__CONSTRAINT: the statement violated a unique key, and the database
** undid that statement only: the error is recorded on db as any other
** (db->errcode), the transaction goes on, and the statement is ready for
** reset.  A driver whose database aborts the whole transaction then
** returns the error instead (its dialect avoids the violation with ON
** CONFLICT DO NOTHING).  The core reads it as "already there" where a
** statement's comment allows it (ENQUEUE, QUEUE_REGISTER, RING_CREATE,
** POOL_ADD), and as the error recorded everywhere else. */
#define SQLQ__ROW 100
#define SQLQ__DONE 101
#define SQLQ__CONSTRAINT 102

/* The items sqlq_health() gathers (health.c): an array the core owns. */
typedef struct sqlq__health {
  sqlq_health_item *items;
  size_t n, cap;
} sqlq__health;

/* Append a copy of an item to h (holder and detail may be NULL; over is
** worked out from value and threshold).  SQLQ_NOMEM recorded on db when
** memory runs out. */
int sqlq__health_add(sqlq_db *db, sqlq__health *h, const char *name, int64_t value,
                     const char *unit, int64_t threshold, const char *holder, int64_t started_at_us,
                     const char *detail);

/* The named locks sqlq_locks() gathers (list.c): an array the core owns,
** and the most it takes. */
typedef struct sqlq__lock_list {
  sqlq_lock_info *items;
  size_t n, cap;
  size_t limit;
} sqlq__lock_list;

/* Append a copy of a lock to l (name NULL: not known; holder may be
** NULL).  SQLQ_NOMEM recorded on db when memory runs out. */
int sqlq__lock_list_add(sqlq_db *db, sqlq__lock_list *l, const void *name, size_t name_len,
                        int64_t key, int64_t pid, const char *holder, int64_t since_at_us,
                        int64_t expires_at_us, int64_t fence);

/* A named lock held by a driver.  Opaque to the core. */
typedef struct sqlq__lockstate sqlq__lockstate;

/*
** The methods of a backend.  Every method that can fail returns a status
** code and, on failure, records the reason with sqlq__error() on db.
** Methods are called with a db whose driver state (db->driver_data) was made by
** open; no method but close is called after a failed open.
*/
typedef struct sqlq__driver {
  const char *name;           /* "sqlite" */
  const char *const *schemes; /* URL schemes served, NULL-terminated */
  const char *const *options; /* URL options the driver reads, NULL-terminated */
  unsigned traits;            /* SQLQ__TRAIT_* */
  const char *const *sql;     /* SQLQ__SQL_COUNT statements */
  /* The most elements (jobs) one *_ARRAY statement takes: a server's
  ** limit (placeholders of a statement, the length of a packed array) or
  ** what keeps one statement's cost in bounds; 0: no limit.  The core
  ** splits a larger batch into statements of at most this many, all in
  ** the batch's one transaction. */
  size_t array_rows_max;
  /* The most bytes of payloads and group keys one ENQUEUE_ARRAY statement
  ** may carry (a server refuses packets over its limit); 0: no limit.
  ** A batch with a statement's worth over it takes the one-row
  ** statement. */
  size_t array_bytes_max;
  /* Migrations: migrations[v-1] upgrades schema version v-1 to v, for v
  ** from 1 up to SQLQ_SCHEMA_VERSION or the first NULL entry, whichever
  ** comes first: a dialect still without a step stops below the library's
  ** version (and leaves the statements of the later versions NULL).  Each
  ** is a script of several statements. */
  const char *const *migrations;
  /* The schema version from which the dialect's CLAIM_LANES and
  ** NEXT_DUE_LANES may run (the tables and triggers they rely on are
  ** there): 11 on PostgreSQL, 12 on MariaDB and Firebird.  A dialect
  ** without those statements names the version from which its database
  ** is as current as the others' (the handle then stops rereading its
  ** schema version; see sqlq__limits_known). */
  int lanes_version;

  /* Connect to url and set db->driver_data.  May read db->opts.  Sets db->ident to
  ** a malloc'ed string naming the database (two handles on the same
  ** database get equal idents), used to wake waiters of this process. */
  int (*open)(sqlq_db *db, const sqlq__url *url);
  /* Disconnect and free db->driver_data.  Called once, also after a failed open. */
  void (*close)(sqlq_db *db);

  /* Run a script of statements without parameters or results. */
  int (*exec)(sqlq_db *db, const char *script);
  /* Get the database ready for sqlq_init's schema scripts, first thing
  ** in sqlq_init's write transaction (Firebird: create the database file
  ** when it is missing; MariaDB: take the lock that makes concurrent
  ** inits take turns, until the transaction ends).  May be NULL. */
  int (*init)(sqlq_db *db);
  /* Transactions.  begin opens a transaction of the given kind
  ** (SQLQ__TX_*): with SQLQ__TX_WRITE set it will write (the backend may
  ** take its write lock at once). */
  int (*begin)(sqlq_db *db, unsigned kind);
  int (*commit)(sqlq_db *db);
  int (*rollback)(sqlq_db *db);

  /* Return the prepared statement for sql[id], prepared once per
  ** connection and cached; the statement stays owned by the driver.  It is
  ** reset and its bindings cleared: bind, then step until SQLQ__DONE or an
  ** error, then call reset. */
  int (*prepare)(sqlq_db *db, int id, sqlq__stmt **out);
  /* Bind parameter i (1-based).  Text and blobs are copied or must stay
  ** valid until reset, whichever the driver documents: the core keeps them
  ** valid until reset. */
  int (*bind_int64)(sqlq__stmt *st, int i, int64_t v);
  int (*bind_text)(sqlq__stmt *st, int i, const char *s); /* s NULL: SQL NULL */
  int (*bind_blob)(sqlq__stmt *st, int i, const void *p, size_t n);
  /* Bind an array of n values to parameter i; only for drivers whose
  ** dialect has the *_ARRAY statements.  The driver copies the values (or,
  ** for text and blobs, may keep pointers: the core keeps them valid until
  ** reset).  A NULL element of a text array is SQL NULL. */
  int (*bind_int64_array)(sqlq__stmt *st, int i, const int64_t *v, size_t n);
  int (*bind_text_array)(sqlq__stmt *st, int i, const char *const *v, size_t n);
  int (*bind_blob_array)(sqlq__stmt *st, int i, const void *const *p, const size_t *len, size_t n);
  /* Execute or advance: SQLQ__ROW with a row available, SQLQ__DONE, or an
  ** error status. */
  int (*step)(sqlq_db *db, sqlq__stmt *st);
  /* Columns of the current row (0-based).  Pointers stay valid until the
  ** next step or reset. */
  int (*column_is_null)(sqlq__stmt *st, int i);
  int64_t (*column_int64)(sqlq__stmt *st, int i);
  const void *(*column_blob)(sqlq__stmt *st, int i, size_t *len);
  /* Rows changed by the last step of st (for INSERT/UPDATE/DELETE). */
  int64_t (*changes)(sqlq_db *db, sqlq__stmt *st);
  /* The id of the row the last INSERT on db's connection stored, for a
  ** dialect whose ENQUEUE returns no row (see SQLQ__SQL_ENQUEUE); NULL in
  ** the others. */
  int64_t (*last_insert_id)(sqlq_db *db);
  void (*reset)(sqlq__stmt *st);

  /*
  ** Operations that are one statement for the core but more for some
  ** dialects.  Each is given the statement prepared and bound, before its
  ** first step; each may be NULL, and the core's default then is to step
  ** the statement as any other.
  **
  ** Run st, sql[SQLQ__SQL_CLAIM], so that its steps then return the jobs
  ** claimed, with their rows as CLAIM's comment says (MariaDB: a pick and
  ** an UPDATE, in a transaction of their own outside the core's).
  */
  int (*claim)(sqlq_db *db, sqlq__stmt *st);
  /* Run st, sql[SQLQ__SQL_POOL_NEXT], so that its steps then return the
  ** item picked (MariaDB: five statements, as above). */
  int (*pool_next)(sqlq_db *db, sqlq__stmt *st);
  /* Give st, sql[SQLQ__SQL_ENQUEUE_ARRAY] with its jobs' arrays bound,
  ** the ids of its jobs (MariaDB: taken from a counter at once, bound as
  ** $7).  NULL: the statement numbers the rows it inserts. */
  int (*take_ids)(sqlq_db *db, sqlq__stmt *st);

  /*
  ** Wake-ups travel on channels: a queue's channel is its name; other
  ** things waited for have names with a control character, which no queue
  ** name holds (a ring's is "\x1Ering:" and its name, see ring.c).
  **
  ** Get ready to wait on channel: called before each check of whether what
  ** is waited for is there, so that any commit after the check is seen by
  ** wait.
  */
  int (*wait_prepare)(sqlq_db *db, const char *channel);
  /*
  ** Block until the database may have changed for channel (a commit by
  ** another connection), until wake_fd is readable, or until deadline_ns
  ** (CLOCK_MONOTONIC; -1: none).  Returns SQLQ_OK on a possible change or a
  ** readable wake_fd, SQLQ_TIMEOUT at the deadline.  Spurious returns are
  ** allowed; missed commits are not.
  */
  int (*wait)(sqlq_db *db, const char *channel, int wake_fd, int64_t deadline_ns);
  /* Tell waiters of other processes that channel has n new ready jobs (n
  ** 0: its next due time changed; n SQLQ__WAKE_ALL: every waiter should
  ** look).  Called once per channel per transaction: just before the commit
  ** when traits has SQLQ__TRAIT_NOTIFY_AT_COMMIT (the driver then sends the
  ** notification once the commit succeeds, and a failure here rolls the
  ** transaction back), else just after the commit (the result is ignored).
  ** May be NULL when wait needs no help. */
  int (*notify)(sqlq_db *db, const char *channel, int n);

  /* Named locks: lock, unlock and lock_check, all NULL when the backend
  ** has none (sqlq_lock answers SQLQ_MISUSE).
  ** Take the named lock whose 64-bit key is key (name, name_len are given
  ** too for backends that use names natively).  timeout_s < 0: for ever,
  ** 0: try once.  SQLQ_BUSY when not had in time. */
  int (*lock)(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s,
              sqlq__lockstate **out);
  /* Release and free a lock taken by lock.  A lock found lost (by
  ** lock_check) must not release anything another session holds now. */
  void (*unlock)(sqlq_db *db, sqlq__lockstate *ls);
  /* Confirm that the lock is still held, by deadline_ns (CLOCK_MONOTONIC)
  ** at the latest: SQLQ_OK, or SQLQ_LOCK_LOST recorded with the reason
  ** when it is not held or cannot be confirmed by then (see
  ** sqlq_lock_check).  A session that did not answer in time is closed:
  ** the locks it held are lost, and lock opens a new one. */
  int (*lock_check)(sqlq_db *db, sqlq__lockstate *ls, int64_t deadline_ns);
  /* Take the named lock until the open write transaction ends, as lock
  ** does otherwise; a timeout must leave the transaction usable.  May be
  ** NULL: the core then holds a lock from lock until the transaction ends. */
  int (*lock_xact)(sqlq_db *db, uint64_t key, const void *name, size_t name_len, double timeout_s);

  /*
  ** Make the subscription triggers of plan->table what plan says: drop
  ** every trigger (and function) named plan->base + "_i", "_u" and "_d"
  ** that exists, then create one per action in plan->actions (none: only
  ** drop).  The trigger of an action enqueues, for each row it sees, one
  ** job per subscription row (SQLQ__SQL_SUB_ADD) of the table and action,
  ** as the plain-SQL INSERT of docs/schema.md does, in queue tag, with the
  ** payload and group key of docs/subscriptions.md, row images only for
  ** subscriptions whose rows flag is set, and the same wake-ups as
  ** any other client's jobs.  Runs in the core's write transaction;
  ** SQLQ__TRAIT_DDL_COMMITS drivers commit it.  The core runs SUB_REMOVE
  ** before SUB_ACTIONS in every change of a table's subscriptions, so that
  ** a dialect may serialise the changes of one table there (a lock until
  ** the transaction ends).  When the table is gone
  ** (plan->n_cols is 0, plan->cols NULL), plan->actions is 0: drop what is
  ** left, wherever it is (a renamed table keeps its triggers).  NULL when
  ** the dialect has no subscriptions.
  */
  int (*sub_triggers)(sqlq_db *db, const sqlq__sub_plan *plan);

  /* Add the items of sqlq_health() to h with sqlq__health_add, for a
  ** backend whose health is not one statement (SQLite: file sizes and the
  ** WAL-index).  Called outside any transaction.  NULL: the core runs
  ** sql[SQLQ__SQL_HEALTH]. */
  int (*health)(sqlq_db *db, struct sqlq__health *h);

  /* Add the named locks held now to l with sqlq__lock_list_add, at most
  ** l->limit of them, for a backend whose locks are not rows of a
  ** statement (SQLite: bytes of a file).  NULL: the core runs
  ** sql[SQLQ__SQL_LOCK_LIST], and a backend with neither cannot list its
  ** locks (SQLQ_UNAVAILABLE). */
  int (*lock_list)(sqlq_db *db, struct sqlq__lock_list *l);
  /* The number sqlq_lock_key() reports for a name of 64-bit key key,
  ** when it is not the key itself (SQLite: the byte locked).  May be
  ** NULL. */
  int64_t (*lock_key)(uint64_t key);

  /* The client library's own connection handle (sqlite3 *, PGconn *, ...). */
  void *(*native)(sqlq_db *db);
} sqlq__driver;

/* The drivers of this build (NULL-terminated) and the schemes that are
** known but whose driver this build lacks. */
extern const sqlq__driver *const sqlq__drivers[];

/* ---------------------------------------------------------------------
** The handle.
*/

/* The count of a wake-up that is for every waiter of a channel (a ring's
** followers all want each new entry), not for one per job. */
#define SQLQ__WAKE_ALL (-1)

/* A channel whose waiters are owed a wake-up at commit, and how many jobs
** the transaction made ready there (0: none now, but its timers changed;
** SQLQ__WAKE_ALL: wake them all). */
struct sqlq__wake {
  char *channel;
  int jobs;
  struct sqlq__wake *next;
};

/* Named locks as leases (lease.c), for handles whose sessions cannot hold
** locks (sqlq_db.lease_locks). */
struct sqlq__lease;
int sqlq__lease_lock(sqlq_db *db, uint64_t key, double timeout_s, struct sqlq__lease **out);
int sqlq__lease_check(sqlq_db *db, struct sqlq__lease *ls, int64_t deadline_ns);
void sqlq__lease_unlock(sqlq_db *db, struct sqlq__lease *ls);

struct sqlq_lock {
  sqlq_db *db;
  sqlq__lockstate *ls;          /* the driver's, or NULL */
  struct sqlq__lease *lease;    /* a lease (lease.c), or NULL */
  char lost[SQLQ__ERRMSG_SIZE]; /* why it was found lost; "" while held */
  struct sqlq_lock **list;      /* the db's list it is on */
  struct sqlq_lock *next;       /* the db's list of held locks */
  struct sqlq_lock *prev;
};

/* What a handle counted of one queue (counts.c): the columns of a row
** of sqlq_counts. */
typedef struct sqlq__tally {
  int64_t enqueued, finished, failed, dead, locks, lock_busy, lock_us;
  int64_t claim_us, claims[SQLQ_LATENCY_BUCKETS];
  int64_t lag_us, lags[SQLQ_LATENCY_BUCKETS];
} sqlq__tally;

/* One queue a handle counts for ("" for named locks): what it counted
** since its last flush (pending), in the caller's open transaction (tx,
** added to pending at its commit), and its row of sqlq_counts as last
** written (row, of minute; stored once the row is in the table). */
typedef struct sqlq__counted {
  char *queue;
  sqlq__tally pending, tx, row;
  int64_t minute;
  int stored, dirty, tx_dirty;
} sqlq__counted;

/* A job claimed through a handle, and the queue (index of
** sqlq__counts.queues) its ack is counted for. */
typedef struct sqlq__claimed {
  int64_t id; /* 0: a free slot */
  uint32_t queue;
} sqlq__claimed;

/* A handle's counts (counts.c). */
typedef struct sqlq__counts {
  int off;               /* the URL option counts=off */
  int64_t writer;        /* its rows' writer: random, never 0 */
  int64_t every_ns;      /* between flushes */
  int64_t flush_at_ns;   /* CLOCK_MONOTONIC; 0: nothing to flush */
  int64_t pruned_minute; /* the minute of the last prune */
  sqlq__counted *queues;
  size_t n, cap, last;
  sqlq__claimed *claimed; /* open addressing by id, linear probing */
  size_t n_claimed, cap_claimed;
} sqlq__counts;

/* A queue whose claims go by lanes (cursor.c): its cursor as the dialect
** returned it (owned by the handle; NULL: none yet), and when its claims
** started to go by lanes (CLOCK_MONOTONIC; 0: a free place). */
#define SQLQ__CURSORS 4
#define SQLQ__CLAIM_SIZES 8
typedef struct sqlq__cursor {
  char queue[SQLQ_QUEUE_NAME_MAX + 1];
  char *text;
  int64_t started_ns;
} sqlq__cursor;

struct sqlq_db {
  const sqlq__driver *driver;
  void *driver_data; /* the driver's state of this connection */
  char *ident;       /* names the database, for local wake-ups */
  char *url_redacted;
  size_t payload_limit;
  int keep_history;
  /* With keep_history: when sqlq_claim() prunes history next
  ** (CLOCK_MONOTONIC; 0: at the next claim).  See sqlq__prune_due. */
  int64_t prune_at_ns;
  /* Whether the database has dependencies (schema version 7), so that
  ** acks must leave jobs others wait for to sqlq__deps_release: -1 not
  ** known yet; 0 not, looked at last at deps_seen_ns (CLOCK_MONOTONIC);
  ** 1 yes.  See sqlq__deps_on. */
  int deps;
  int64_t deps_seen_ns;
  double busy_timeout;
  int in_user_tx; /* sqlq_begin() is open */
  /* Wake-ups owed at the next commit: one entry per channel (queue or
  ** ring) that is owed one.  pending_all is set when an entry could not be recorded
  ** (out of memory): then every waiter of this process is woken. */
  struct sqlq__wake *pending;
  int pending_all;
  int pending_local; /* wake this process's waiters of every queue */
  /* eventfd: written by sqlq_interrupt() and by local wake-ups; watched
  ** by sqlq_wait().  interrupted tells the two apart. */
  int wake_fd;
  atomic_int interrupted;
  struct sqlq_lock *locks;      /* locks held through this handle */
  struct sqlq_lock *xact_locks; /* held until the transaction ends (for
                                   drivers without lock_xact) */
  int errcode;
  char errmsg[SQLQ__ERRMSG_SIZE];
  /* Set by a driver with the error it records when the database rolled
  ** the whole transaction back as a deadlock's victim: running it again
  ** may succeed (see sqlq__in_tx). */
  int tx_retryable;
  /* The queue whose last claim through this handle found a concurrency
  ** limit ("": none): its next claim goes straight to the limited claim,
  ** and an ack wakes one of its waiters (see claim.c).  A hint only: the
  ** claim's SQL decides. */
  char limited_queue[SQLQ_QUEUE_NAME_MAX + 1];
  /* What limits the database has (SQLQ__LIMITS_*: concurrency limits
  ** from schema version 6, rate limits from SQLQ__RATES_VERSION, per-group
  ** limits and fair queues from SQLQ__GROUPS_VERSION): the claim and the
  ** wait choose their statements by it (see sqlq__limits_sql), and when it
  ** was last found short of the latest (CLOCK_MONOTONIC; 0: not looked
  ** yet).  See sqlq__limits_schema. */
  int limits_schema;
  int64_t limits_checked_ns;
  /* The database is at the driver's lanes_version or later (claim
  ** lanes, where the dialect has them), read with limits_schema. */
  int lanes;
  /* The queues whose claims through this handle go by lanes, the fastest
  ** plain claim it made of each size class and the moving average of what
  ** its plain claims took beyond those (cursor.c). */
  sqlq__cursor cursors[SQLQ__CURSORS];
  int64_t claim_fastest_ns[SQLQ__CLAIM_SIZES], claim_excess_ns;
  /* The URL option lanes: SQLQ__LANES_AUTO (the default), _ON or _OFF. */
  int lanes_mode;
  /* What the handle counted and has not yet written (counts.c). */
  sqlq__counts counts;
  /* Named locks are leases (lease.c), not the driver's: set by the
  ** driver's open when its sessions cannot hold a lock (a transaction
  ** pooler between the handle and its server).  lock_lease_s is a lease's
  ** length (URL option lock_lease); lease_db the handle the leases' statements run
  ** on (opened at the first lease, closed with db), opened from url_text,
  ** the URL as given (with its password: wiped when db is closed). */
  int lease_locks;
  double lock_lease_s;
  sqlq_db *lease_db;
  char *url_text;
  /* When not 0, the monotonic time by which the statement being run must
  ** have answered: a driver that can bound a call (PostgreSQL through a
  ** pooler) closes a session that did not, and the call fails with
  ** SQLQ_TIMEOUT.  Set around a lease's renewal. */
  int64_t call_deadline_ns;
};

/* The length of a lease when the URL does not say (lock_lease). */
#define SQLQ__LOCK_LEASE_S 30.0

/* The schema versions that brought concurrency limits, rate limits, and
** per-group limits with fair queues. */
#define SQLQ__LIMITS_VERSION 6
#define SQLQ__RATES_VERSION 8
#define SQLQ__GROUPS_VERSION 10
/* The schema version that brought sqlq_counts (counts.c). */
#define SQLQ__COUNTS_VERSION 13

/* The values of db->limits_schema: what limits the database has, each
** level with those of the levels before it. */
enum { SQLQ__LIMITS_NONE, SQLQ__LIMITS_CONCURRENCY, SQLQ__LIMITS_RATES, SQLQ__LIMITS_GROUPS };

/* The most slots one RATE_GROW statement adds (Firebird's recursion
** depth bounds the rows a statement generates). */
#define SQLQ__RATE_GROW_ROWS 1000

/* Of a family of statements that name the limits columns, the one for
** db's schema: unlimited below version 6, concurrency below
** SQLQ__RATES_VERSION, rates below SQLQ__GROUPS_VERSION, groups from it
** on. */
int sqlq__limits_sql(const sqlq_db *db, int unlimited, int concurrency, int rates, int groups);

/* A slot of a queue's rate (a row of sqlq_rate_starts): its place in slot
** order. */
typedef struct sqlq__slot {
  int64_t started_at, slot;
} sqlq__slot;

/* Slots read, in v[0..n), v grown with sqlq__grow (the owner frees v). */
typedef struct sqlq__slots {
  sqlq__slot *v;
  size_t n, cap;
} sqlq__slots;

/* Read into s the free slots of queue's rate of period_us, oldest first,
** at most max, after LIMIT_LOCK_RATES took the queue's lock. */
int sqlq__rate_free(sqlq_db *db, const char *queue, int64_t period_us, int max, sqlq__slots *s);

/* The slots of queue up to last (in slot order) start now: the starts of
** the jobs a claim took in the free slots that it read. */
int sqlq__rate_stamp(sqlq_db *db, const char *queue, const sqlq__slot *last);

/* Set db->limits_schema and db->lanes: once the database is found to have
** per-group limits and claim lanes (the latest), for good; until then, by
** reading its schema version again
** at most once a second, so that a database upgraded by `sqlq init` under
** a running worker has its limits enforced within a second.  Runs inside a
** transaction.  Returns SQLQ_OK or the read's error. */
int sqlq__limits_schema(sqlq_db *db);

/* A fair queue's claim (fair.c): what FAIR_LOCK read. */
typedef struct sqlq__fair {
  int fair;              /* the queue is fair (FAIR_LOCK gave its row) */
  int64_t served;        /* the queue's last sequence number */
  int64_t group_running; /* its per-group limit */
} sqlq__fair;

/* How a fair claim takes a job: its token and lease, and the reader of
** each job's row (CLAIM's columns), with its argument. */
typedef struct sqlq__fair_take {
  int64_t token, lease_us;
  int (*row)(sqlq_db *db, sqlq__stmt *st, void *arg);
  void *arg;
} sqlq__fair_take;

/* Run FAIR_LOCK for queue into *f: f->fair 0 when the queue is not fair
** (and nothing was locked).  Inside the claim's transaction. */
int sqlq__fair_lock(sqlq_db *db, const char *queue, sqlq__fair *f);

/* Claim up to max jobs of the fair queue f (locked by sqlq__fair_lock) in
** turns across its tenants, handing each job's row to t->row; *n_out
** receives how many.  See docs/schema.md, "Fair claiming". */
int sqlq__fair_claim(sqlq_db *db, const char *queue, sqlq__fair *f, int max,
                     const sqlq__fair_take *t, int *n_out);

/* The values of db->lanes_mode. */
enum { SQLQ__LANES_AUTO, SQLQ__LANES_ON, SQLQ__LANES_OFF };

/* Claim cursors (cursor.c).  Whether db's claims and waits may go by
** lanes: the database has claim lanes and the dialect has CLAIM_LANES. */
int sqlq__lanes(const sqlq_db *db);
/* Whether queue's claims and waits go by lanes now; *text receives the
** cursor to pass (owned by db, valid until the next call on db's cursors;
** NULL: none yet, scan every lane from its start). */
int sqlq__cursor_get(sqlq_db *db, const char *queue, const char **text);
/* Keep text (malloc'd; db takes it over) as queue's cursor, returned by
** its claim by lanes. */
void sqlq__cursor_put(sqlq_db *db, const char *queue, char *text);

/* A plain claim of queue took jobs jobs and took_ns: when claims are slow
** for their size, its claims go by lanes from now on (cursor.c). */
void sqlq__claim_took(sqlq_db *db, const char *queue, int jobs, int64_t took_ns);

/* Free db's cursors. */
void sqlq__cursors_free(sqlq_db *db);

/* Whether db->limits_schema needs no reading now (sqlq__limits_schema
** would not read the schema version). */
int sqlq__limits_known(const sqlq_db *db);

/* Record an error on db: its status and formatted text.  Returns status. */
int sqlq__error(sqlq_db *db, int status, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/* Clear the error state of db. */
void sqlq__clear_error(sqlq_db *db);

/* The prologue of every public call on a handle: SQLQ_MISUSE when db is
** NULL (nothing is recorded: there is no handle) or failed to open (the
** reason is recorded on db); else clears db's error and returns SQLQ_OK. */
int sqlq__enter(sqlq_db *db);

/* A public limit on how many rows to return (0: all) as the int the
** statements bind (0: all, also for a limit past INT_MAX). */
int sqlq__limit(size_t limit);

/* The longest duration a call takes, in seconds (about 100 years): far
** from overflowing int64_t microseconds or monotonic nanoseconds. */
#define SQLQ__SECONDS_MAX 3.2e9
/* SQLQ_OK when seconds is a number from 0 (zero_ok) or above 0 (not
** zero_ok) to SQLQ__SECONDS_MAX; else SQLQ_MISUSE, recorded on db with
** what (e.g. "lease") as the name of the value. */
int sqlq__check_seconds(sqlq_db *db, double seconds, int zero_ok, const char *what);

/* Copy a caller's options struct opts (NULL: every default), whose first
** member size_t size says how many bytes it has, into out, a struct of
** this library of known bytes: the fields past size are zero (their
** defaults).  SQLQ_MISUSE, recorded on db with what (the struct's name),
** for a size below sizeof(size_t) or for non-zero bytes past known (an
** option of a newer library).  See SQLQ_OPTIONS_INIT in sqlq.h. */
int sqlq__read_options(sqlq_db *db, const void *opts, size_t known, void *out, const char *what);

/* An error recorded on a handle, kept aside while cleanup that may record
** errors of its own runs, then put back. */
typedef struct sqlq__saved_error {
  int code;
  char msg[SQLQ__ERRMSG_SIZE];
} sqlq__saved_error;
void sqlq__save_error(const sqlq_db *db, sqlq__saved_error *saved);
void sqlq__restore_error(sqlq_db *db, const sqlq__saved_error *saved);

/* Microseconds from a number of seconds, rounded, saturating. */
int64_t sqlq__seconds_to_us(double s);
/* CLOCK_MONOTONIC now, in nanoseconds. */
int64_t sqlq__monotonic_ns(void);
/* CLOCK_MONOTONIC seconds from now, in nanoseconds: at most about 100
** years ahead (a longer time saturates, so that no sum overflows); now for
** a time that is not positive or not a number. */
int64_t sqlq__monotonic_after(double seconds);
/* The timeout for poll() until the monotonic time deadline_ns: -1 for
** none (deadline_ns < 0), else milliseconds rounded up, capped at 2e9. */
int sqlq__poll_ms(int64_t deadline_ns);

/* TCP keepalives of the sessions that hold named locks: a dead link is
** dropped after SQLQ__KEEPIDLE_S seconds idle and SQLQ__KEEPCNT probes
** SQLQ__KEEPINTVL_S seconds apart, or after SQLQ__USER_TIMEOUT_MS of data
** left unacknowledged; the probes also keep firewalls and NAT from
** forgetting an idle connection.  sqlq__keepalive sets them on a socket
** (nothing on one that is not TCP). */
#define SQLQ__KEEPIDLE_S 30
#define SQLQ__KEEPINTVL_S 10
#define SQLQ__KEEPCNT 3
#define SQLQ__USER_TIMEOUT_MS 30000
void sqlq__keepalive(int fd);

/* Pacing of the attempts to open a lost connection again: after a failed
** attempt, the next waits for a pause that doubles from 50 ms up to 2 s;
** a successful one resets the pause. */
typedef struct sqlq__backoff {
  int64_t retry_at_ns; /* CLOCK_MONOTONIC; 0: at once */
  int64_t pause_ns;    /* after the last failure; 0: none failed */
} sqlq__backoff;
/* Nanoseconds until the next attempt may be made (0: now). */
int64_t sqlq__backoff_wait_ns(const sqlq__backoff *b);
/* Record the outcome of an attempt. */
void sqlq__backoff_result(sqlq__backoff *b, int ok);

/* qsort()/bsearch() order of int64_t values (job ids). */
int sqlq__id_order(const void *a, const void *b);

/* A malloc'ed copy of ids[0..n) (n >= 1) into *out, sorted, without
** repeats, their number into *n_out; SQLQ_NOMEM recorded when memory runs
** out.  The caller frees *out. */
int sqlq__id_set(sqlq_db *db, const int64_t *ids, size_t n, int64_t **out, size_t *n_out);

/* Validate text that names something: 1..max bytes, no control
** characters, valid UTF-8; what names it in the message ("ring name").
** Records SQLQ_MISUSE on db when bad (NULL is bad too). */
int sqlq__check_text(sqlq_db *db, const char *text, size_t max, const char *what);
/* Validate a queue name (sqlq__check_text() with SQLQ_QUEUE_NAME_MAX). */
int sqlq__check_queue(sqlq_db *db, const char *queue);
/* Validate the name of a queue that may be in the database: as
** sqlq__check_queue(), but control characters are allowed (the library
** makes no such queue; a plain-SQL writer may). */
int sqlq__check_stored_queue(sqlq_db *db, const char *queue);
/* Validate an optional key (NULL is fine): 1..SQLQ_KEY_MAX bytes of clean
** UTF-8; what names it in the message ("dedupe key"). */
int sqlq__check_key(sqlq_db *db, const char *key, const char *what);

/* Length of the valid UTF-8 sequence at s (n > 0 bytes available), or 0
** when the bytes there are not one: bad lead or continuation bytes, an
** overlong form, a surrogate, or a code point past U+10FFFF. */
size_t sqlq__utf8_seq(const unsigned char *s, size_t n);

/* A fresh random token (claims, pool holds): 63 random bits, never 0. */
int64_t sqlq__new_token(void);

/* 64-bit FNV-1a of a byte string: the stable key of a lock name. */
uint64_t sqlq__hash64(const void *p, size_t n);

/* A growing string (strbuf.c).  Zero-initialise; after any call, p is
** NUL-terminated text unless oom is set (memory ran out: later calls do
** nothing).  Free with sqlq__buf_free(). */
typedef struct sqlq__buf {
  char *p;
  size_t len, cap;
  int oom;
} sqlq__buf;
void sqlq__buf_add(sqlq__buf *b, const char *s);
void sqlq__buf_addn(sqlq__buf *b, const char *s, size_t n);
void sqlq__buf_addf(sqlq__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s between two q characters, each q inside it doubled: an SQL
** string literal (q '\'') or a quoted identifier (q '"' or '`'). */
void sqlq__buf_quote(sqlq__buf *b, const char *s, char q);
void sqlq__buf_free(sqlq__buf *b);

/* Run fn(db, arg) inside a transaction: the caller's when one is open,
** else a new one of the given kind (SQLQ__TX_*), committed on success and
** rolled back on failure.  A transaction of its own that the database
** chose as a deadlock's victim (the driver sets db->tx_retryable) runs
** again, up to SQLQ__TX_ATTEMPTS times in all: fn must start afresh each
** time, resetting whatever it fills in arg. */
#define SQLQ__TX_ATTEMPTS 8
int sqlq__in_tx(sqlq_db *db, unsigned kind, int (*fn)(sqlq_db *db, void *arg), void *arg);

/* Note that the current transaction made n jobs of queue ready, or (n 0)
** changed when its next job comes due, or (n SQLQ__WAKE_ALL) changed what
** every waiter of the channel queue waits for, so that those waiters are
** woken when the transaction commits. */
void sqlq__owe_wake(sqlq_db *db, const char *queue, int n);

/* Note that the current transaction finished jobs, which may let the next
** job of a FIFO group run: waiters of this process are woken at commit.
** (Other processes see the commit itself.) */
void sqlq__owe_local_wake(sqlq_db *db);

/* Wake handles of this process that wait on the database named ident:
** every one when channel is NULL, else at most max(n, 1) of those waiting
** on channel (n: the jobs it got), or all of those when n is
** SQLQ__WAKE_ALL. */
void sqlq__wake_local(const char *ident, const char *channel, int n);

/* A check of whether what a waiter waits for is there, run in a read
** transaction: sets *due_in_us to 0 when it is there now, to the
** microseconds until it will be (a delayed job), or to -1 when only a
** commit can bring it; or returns an error status, which ends the wait. */
typedef int (*sqlq__wait_check)(sqlq_db *db, void *arg, int64_t *due_in_us);

/* Sleep until check says that what is waited for is there (SQLQ_OK),
** until deadline_ns on the monotonic clock (-1: none; SQLQ_TIMEOUT, with
** no message recorded: the caller says what did not come), or until
** sqlq_interrupt() (SQLQ_INTERRUPTED).  Wakes on a commit of this process
** that owed channel a wake-up, on the driver's signal of other processes'
** commits, and when check's due time comes; check runs again after each
** wake-up.  channel is the caller's and must stay valid meanwhile. */
int sqlq__wait_on(sqlq_db *db, const char *channel, sqlq__wait_check check, void *arg,
                  int64_t deadline_ns);

/* The monotonic deadline timeout seconds from now (-1 when timeout < 0),
** or SQLQ_MISUSE recorded when timeout is not a number. */
int sqlq__deadline(sqlq_db *db, double timeout, int64_t *deadline_ns);


/* Release the locks held until the end of the transaction that just
** ended on db. */
void sqlq__release_xact_locks(sqlq_db *db);

/* The most elements of one array statement of db's driver, for a batch
** of n: n itself when the driver has no limit (see array_rows_max). */
size_t sqlq__array_rows(const sqlq_db *db, size_t n);

/* Prepare sql[id] of db's driver (cached per connection).  A statement
** the dialect lacks is SQLQ_UNAVAILABLE. */
int sqlq__prepare(sqlq_db *db, int id, sqlq__stmt **out);

/* ---------------------------------------------------------------------
** Running a statement (stmt.c): the one way the core runs sql[id].
*/

/* A typed argument of a statement: $1, $2, ... in the order given.  The
** caller owns what p points at, until the run returns. */
typedef struct sqlq__arg {
  enum {
    SQLQ__ARG_INT,
    SQLQ__ARG_TEXT,  /* p NULL: SQL NULL */
    SQLQ__ARG_BLOB,  /* n bytes at p */
    SQLQ__ARG_INTS,  /* the arrays: n elements, for the *_ARRAY statements */
    SQLQ__ARG_TEXTS, /* a NULL element is SQL NULL */
    SQLQ__ARG_BLOBS  /* element k: lens[k] bytes */
  } type;
  int64_t i;
  const void *p;
  const size_t *lens;
  size_t n;
} sqlq__arg;
#define SQLQ__INT(v) ((sqlq__arg){.type = SQLQ__ARG_INT, .i = (v)})
#define SQLQ__TEXT(s) ((sqlq__arg){.type = SQLQ__ARG_TEXT, .p = (s)})
#define SQLQ__BLOB(b, len) ((sqlq__arg){.type = SQLQ__ARG_BLOB, .p = (b), .n = (len)})
#define SQLQ__INTS(v, count) ((sqlq__arg){.type = SQLQ__ARG_INTS, .p = (v), .n = (count)})
#define SQLQ__TEXTS(v, count) ((sqlq__arg){.type = SQLQ__ARG_TEXTS, .p = (v), .n = (count)})
#define SQLQ__BLOBS(v, l, count) \
  ((sqlq__arg){.type = SQLQ__ARG_BLOBS, .p = (v), .lens = (l), .n = (count)})

/* Read the row st stands on into arg: SQLQ_OK to go on to the next row,
** SQLQ__DONE to read no more (the run succeeds), or an error status (the
** run's result, recorded on db by the reader). */
typedef int (*sqlq__row_fn)(sqlq_db *db, sqlq__stmt *st, void *arg);

/* One run of a statement: what to run (set by the caller) and what it did
** (set by the run). */
#define SQLQ__Q_CHANGES 0x01 /* count the rows changed, when it returned none */
#define SQLQ__Q_TAKEN \
  0x02 /* a unique key violated (SQLQ__CONSTRAINT) is
                                "already there": taken set, no error */
typedef struct sqlq__query {
  int sql;          /* SQLQ__SQL_* */
  sqlq__row_fn row; /* called for each row; NULL: rows are only counted */
  void *arg;        /* row's */
  unsigned flags;   /* SQLQ__Q_* */
  /* A driver method (claim, pool_next, take_ids) called with the statement
  ** bound, before its first step; NULL: none. */
  int (*start)(sqlq_db *db, sqlq__stmt *st);
  /* A *_ROW statement, or 0: when the dialect has it and the statement
  ** changed rows but returned none, it runs next with the same arguments,
  ** and its rows are read as the statement's. */
  int then;
  size_t rows;     /* rows read */
  int64_t changes; /* with SQLQ__Q_CHANGES (0 when taken) */
  int taken;       /* with SQLQ__Q_TAKEN */
} sqlq__query;

/* Prepare q->sql (SQLQ_UNAVAILABLE when the dialect lacks it), bind the n
** arguments, step through its rows handing each to q->row, and reset it.
** Returns SQLQ_OK or an error status recorded on db. */
int sqlq__query_run(sqlq_db *db, sqlq__query *q, const sqlq__arg *args, size_t n);
#define SQLQ__ARGS(...) \
  (const sqlq__arg[]){__VA_ARGS__}, sizeof((const sqlq__arg[]){__VA_ARGS__}) / sizeof(sqlq__arg)
/* sqlq__run(db, q, SQLQ__TEXT(queue), SQLQ__INT(id), ...) */
#define sqlq__run(db, q, ...) sqlq__query_run(db, q, SQLQ__ARGS(__VA_ARGS__))

/* A row reader: column 0 as the int64_t at arg (0 for SQL NULL). */
int sqlq__read_int64(sqlq_db *db, sqlq__stmt *st, void *arg);

/* A malloc'ed copy of the bytes of column i of st's row, with a NUL after
** them, into *out ("" for SQL NULL), and their length into *len_out when
** not NULL; SQLQ_NOMEM recorded when memory runs out. */
int sqlq__column_text(sqlq_db *db, sqlq__stmt *st, int i, char **out, size_t *len_out);

/* Copy the queue name in column i of st's row into queue (room for
** SQLQ_QUEUE_NAME_MAX + 1 bytes), NUL-terminated, cut to
** SQLQ_QUEUE_NAME_MAX bytes (a plain-SQL producer's name may be longer);
** "" for SQL NULL. */
void sqlq__column_queue(sqlq_db *db, sqlq__stmt *st, int i, char *queue);

/* Make room in the array *items of *cap elements of size bytes for
** element n (a row reader's next row), doubling it from 8 when full. */
int sqlq__grow(sqlq_db *db, void **items, size_t *cap, size_t n, size_t size);

/* Record queue's name (QUEUE_REGISTER), when the dialect does that apart
** from ENQUEUE, so that stats list it even when it is empty. */
int sqlq__register_queue(sqlq_db *db, const char *queue);

/* Store one job of queue (a valid name) as sqlq_enqueue() does, spec
** already checked, inside the caller's write transaction: the queue is
** registered and its waiters are owed a wake-up.  *id receives the job's
** id, or the unfinished job's that holds its dedupe key (*duplicate 1). */
int sqlq__enqueue_in_tx(sqlq_db *db, const char *queue, const sqlq_job_spec *spec, int64_t *id,
                        int *duplicate);

/* Run statement sql, which takes $1 queue and, when id is not NULL, $2 id,
** and returns no rows.  When changes is not NULL, add the number of rows
** the statement changed to *changes. */
int sqlq__run_for_queue(sqlq_db *db, int sql, const char *queue, const int64_t *id,
                        int64_t *changes);

/* Whether db's database has dependencies (schema version 7), into *on:
** read once, and while it has not, again at most once a second (a
** database upgraded under a running worker).  An error reading it is the
** caller's (then *on is not set). */
int sqlq__deps_on(sqlq_db *db, int *on);

/* In the caller's write transaction, make job id, just stored with
** delay_us, wait for the jobs after[0..n) (n >= 1, sorted, no repeats)
** that are still in sqlq_jobs; SQLQ_NOTFOUND when one is as high as id. */
int sqlq__deps_wait(sqlq_db *db, int64_t id, const int64_t *after, size_t n, int64_t delay_us);

/* In the caller's write transaction, after job id succeeded (its row was
** deleted by an ack): its dependents that waited for it last become
** ready, their queues' waiters are owed a wake-up, and its sqlq_deps rows
** go (deps.c). */
int sqlq__deps_release(sqlq_db *db, int64_t id);

/* In the caller's write transaction, before the jobs of queue are
** deleted without succeeding (a purge): their waiting dependents become
** dead, and their sqlq_deps rows go. */
int sqlq__deps_purge(sqlq_db *db, const char *queue);

/* The pruning a handle that keeps history does as it claims from queue
** (retain.c): one batch when db->prune_at_ns has come, outside any
** transaction of the caller's.  Its errors are dropped, leaving db's error
** state as it was. */
void sqlq__prune_due(sqlq_db *db, const char *queue);

/* ---------------------------------------------------------------------
** Counts (counts.c).  Each is called by a public call after its work
** committed (or inside the caller's transaction, whose commit adds the
** counts); none fails or records an error: memory that runs out loses a
** count.
*/
void sqlq__count_enqueued(sqlq_db *db, const char *queue, size_t n);
/* A claim of queue that took took_ns and returned jobs[0..n), leased for
** lease_us (so that lease_until - lease_us is the database's clock). */
void sqlq__count_claim(sqlq_db *db, const char *queue, const sqlq_job *jobs, size_t n,
                       int64_t took_ns, int64_t lease_us);
/* Job id, claimed through db, finished (acked), or left db's hands
** (released): its ack is counted for its queue; one not claimed through
** db is not counted. */
void sqlq__count_finished(sqlq_db *db, int64_t id);
void sqlq__count_forget(sqlq_db *db, int64_t id);
/* Job id of queue failed, and became dead or will run again. */
void sqlq__count_failed(sqlq_db *db, int64_t id, const char *queue, int dead);
/* Jobs of queue became dead without failing (cancelled). */
void sqlq__count_dead(sqlq_db *db, const char *queue, size_t n);
/* A named-lock acquisition that took took_ns and ended in rc. */
void sqlq__count_lock(sqlq_db *db, int64_t took_ns, int rc);
/* The caller's transaction ended: committed (its counts are added) or
** rolled back (dropped). */
void sqlq__counts_end_tx(sqlq_db *db, int committed);
/* Write the counts when their flush is due (never inside the caller's
** transaction); errors are dropped, leaving db's error state as it was. */
void sqlq__counts_flush_due(sqlq_db *db);
/* When the next flush is due (CLOCK_MONOTONIC; -1: none is owed). */
int64_t sqlq__counts_due_ns(const sqlq_db *db);
/* Set up db's counts (at open): counts_off from the URL option, every
** flush_s seconds. */
void sqlq__counts_open(sqlq_db *db, int off, double flush_s);
/* Flush what is owed and free db's counts (at close). */
void sqlq__counts_close(sqlq_db *db);

#endif /* SQLQ_INT_H */
