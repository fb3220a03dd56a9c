/*
** cli.h -- shared declarations of the sqlq command-line tool.
**
** The tool uses the public API (sqlq.h) only.  Each command lives in its own
** file as one function `int cmd_NAME(const cli_global *g, int argc, char **argv)`
** that returns the process exit code (sysexits).  argv[0] is the command's
** name; the command parses its own flags with getopt_long.  The helpers
** declared here are shared by the commands, one concern a file (named in
** each section below); running other programs is guardian.h's.  `sqlq
** bench` lives in src/bench/ and uses these helpers too.
*/
#ifndef SQLQ_CLI_H
#define SQLQ_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "sqlq.h"

/* sysexits(3) codes, spelled out so the tool needs no sysexits.h. */
#define EXIT_USAGE 64       /* EX_USAGE: bad flag, bad argument */
#define EXIT_DATAERR 65     /* EX_DATAERR: payload over the limit, bad data */
#define EXIT_UNAVAILABLE 69 /* EX_UNAVAILABLE: database down, backend not built */
#define EXIT_SOFTWARE 70    /* EX_SOFTWARE: internal error */
#define EXIT_TEMPFAIL 75    /* EX_TEMPFAIL: lock not had, database busy */

/* Options that come before the command name. */
typedef struct cli_global {
  const char *url; /* --url, else $SQLQ_URL, else "sqlite:sqlq.db" */
} cli_global;

/* ---------------------------------------------------------------------
** Failures: one line on stderr and a sysexits code (errors.c).
*/

/* Print "sqlq: " + the formatted message + newline on stderr, as one line:
** control characters in the message are printed as '?'. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The exit code for a library status (SQLQ_MISUSE -> 64, SQLQ_TOOBIG -> 65,
** SQLQ_UNAVAILABLE -> 69, SQLQ_BUSY/SQLQ_TIMEOUT -> 75, ...). */
int cli_exit_code(int status);

/* Open g->url.  On failure print one line (the library's message, which
** never holds a password) and return NULL with *exit_code set. */
sqlq_db *cli_open(const cli_global *g, int *exit_code);

/* Report a failed library call on db in one line and return its exit code.
** what names the action ("push", "claim", ...). */
int cli_fail(sqlq_db *db, int status, const char *what);

/* End a command's one library call: report rc (from the call `what` on db)
** when it failed, close db, and return the exit code. */
int cli_done(sqlq_db *db, int rc, const char *what);

/* Print "sqlq: CMD: " + the formatted message + a pointer to CMD --help in
** one line on stderr and return EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------------
** The words of a command line (args.c).
*/

struct option;

/* getopt_long() for a command called cmd, with opterr off: a bad flag or a
** flag missing its value is reported in one line, and '?' is returned (the
** caller then returns EXIT_USAGE).  shortopts must start with ':'.
** Otherwise returns like getopt_long(). */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *longopts);

/* cli_getopt() for the subcommands of a command that share one option
** table, each taking the options whose letters are in allowed: --help (letter
** 'h') prints usage, and a bad option, or one not allowed, is reported in
** one line.  Returns the next allowed option's letter, -1 after the last,
** or 0 when the command must return *exit_code (0 after the help). */
int cli_getopt_allowed(const char *cmd, const char *usage, const char *allowed, int argc,
                       char **argv, const char *shortopts, const struct option *longopts,
                       int *exit_code);

/* Parse the value of cmd's --limit flag, a whole number >= 1, into *out.
** Returns 0, or prints one line and returns EXIT_USAGE. */
int cli_parse_limit(const char *cmd, const char *s, long long *out);

/* Parse a non-negative number of seconds (fractions allowed) into *out.
** Returns 0 on success, -1 on garbage. */
int cli_parse_seconds(const char *s, double *out);

/* Parse a duration ("90", "1.5h", "7d": seconds, or a number of the unit
** w, d, h, m or s) into seconds.  Returns 0 or -1. */
int cli_parse_duration(const char *s, double *out);

/* Write seconds as a duration in its largest whole unit ("7d", "90m") or
** in seconds with up to six decimals; "-" for 0 (no limit). */
void cli_format_duration(double seconds, char *out, size_t size);

/* Parse a rate "N/PERIOD" (N starts, 0 to SQLQ_RATE_MAX_STARTS_MAX, per a
** duration PERIOD of 1 microsecond to SQLQ_RATE_PERIOD_MAX_US, "100/1s",
** "10/m"), or "0" (no rate), into *max_starts and *period_us (0 when N
** is).  Returns 0 or -1. */
int cli_parse_rate(const char *s, int64_t *max_starts, int64_t *period_us);

/* Write a rate as "N/PERIOD" ("100/1s"), "-" when max_starts is 0. */
void cli_format_rate(int64_t max_starts, int64_t period_us, char *out, size_t size);

/* Parse a whole number in [min, max] into *out.  Returns 0 or -1. */
int cli_parse_int(const char *s, long long min, long long max, long long *out);

/* Parse the n job ids args[0..n) (whole numbers >= 1) into a new array
** *ids_out, which the caller frees.  Returns 0, or prints one line naming
** cmd and returns EXIT_USAGE (a bad id) or EXIT_SOFTWARE. */
int cli_parse_ids(const char *cmd, char **args, int n, int64_t **ids_out);

/* Check a queue name before any database work: 1 to SQLQ_QUEUE_NAME_MAX
** bytes.  Returns 0, or prints one line and returns EXIT_USAGE. */
int cli_check_queue(const char *cmd, const char *queue);

/* ---------------------------------------------------------------------
** Stdin (read_stdin.c).
*/

/* Read all of stdin into a malloc'ed buffer (NUL-terminated, length in
** *len).  Stops with an error past limit bytes (returns NULL, *len =
** limit + 1).  The caller frees the buffer. */
unsigned char *cli_read_stdin(size_t limit, size_t *len);

/* ---------------------------------------------------------------------
** Time (clock.c).
*/

/* CLOCK_MONOTONIC in nanoseconds, and in seconds: for timeouts and
** durations, which a change of the wall clock does not move. */
int64_t cli_monotonic_ns(void);
double cli_monotonic_s(void);

/* CLOCK_REALTIME in microseconds since the epoch: for times that other
** processes compare with theirs. */
int64_t cli_realtime_us(void);

/* Sleep us microseconds (>= 0), through interrupting signals. */
void cli_sleep_us(long us);

/* The CLOCK_MONOTONIC time seconds (>= 0; more than 100 years counts as
** 100 years) from now, for pthread_cond_timedwait() on a condition
** variable whose clock is CLOCK_MONOTONIC. */
struct timespec cli_deadline(double seconds);

/* ---------------------------------------------------------------------
** The environment of the commands the tool runs (command_env.c); running
** them is guardian.h's.
*/

/* The environment of the commands that sqlq work and sqlq lock run, for
** cli_spawn_guarded(): the caller's environment without SQLQ_URL (which may
** hold a password) and without the variables listed in names (a
** NULL-terminated list, or NULL); then SQLQ_URL set to g->url, the URL the
** tool opened, when pass_url is set; then one entry per name, for the
** caller to set before each spawn: *slots (unless slots is NULL) points at
** the first of them, all NULL until set; then the terminating NULL.  One
** free() of the result releases what this allocated; the inherited entries
** are the caller's environment strings, not copies, so the caller must not
** change its environment while it uses the result.  NULL when memory ran
** out. */
char **cli_command_env(const cli_global *g, int pass_url, const char *const *names, char ***slots);

/* ---------------------------------------------------------------------
** Scheduling passes in a thread (cron_thread.c).
*/

/* A thread that runs sqlq_cron_tick() on a connection of its own to g's
** database, about once a second and at each tick, until cli_cron_stop().
** It takes no signals.  Its failures are printed in one line each, headed
** by who (the command), and do not stop it.  A worker's thread (worker
** set) reports neither SQLQ_UNAVAILABLE (the worker says that) nor
** SQLQ_SCHEMA: a database below schema version 4 has no schedules, the
** worker works on it all the same, and schedules once `sqlq init` has
** upgraded it. */
typedef struct cli_cron cli_cron;
/* Open the connection and start the thread; NULL, after one line on
** stderr, with *exit_code set, when either fails. */
cli_cron *cli_cron_start(const cli_global *g, const char *who, int worker, int *exit_code);
/* Stop the thread (after the pass it is in), close its connection and free
** c.  Accepts NULL. */
void cli_cron_stop(cli_cron *c);

/* ---------------------------------------------------------------------
** Text tables (table.c).
*/

/* A text table printed with columns padded to their widest cell.  Cells are
** copied; the caller keeps ownership of what it passes in. */
typedef struct cli_table {
  size_t ncols;
  size_t ncells; /* cells used, header included */
  size_t cap;
  char **cells;
} cli_table;

/* Start a table whose first row is the ncols strings of header. */
int cli_table_init(cli_table *t, size_t ncols, const char *const *header);
/* Append one row of t->ncols strings.  Returns 0, or -1 if memory ran out. */
int cli_table_add(cli_table *t, const char *const *row);
/* End the table of command cmd: when ok (every row was added), print it on
** stdout, cells separated by two spaces, the last column not padded; then
** free it.  Returns 0, or EXIT_SOFTWARE after one line on stderr when ok is
** false or memory ran out. */
int cli_table_finish(cli_table *t, int ok, const char *cmd);

/* ---------------------------------------------------------------------
** Commands made of subcommands (subcommand.c).
*/

/* One subcommand of a command: `int fn(g, argc, argv)` with argv[0] the
** subcommand's name, returning the exit code like a command. */
typedef struct cli_sub {
  const char *name;
  int (*fn)(const cli_global *g, int argc, char **argv);
} cli_sub;

/* Run the subcommand of command cmd named by argv[1] (one of the n of
** subs), or print usage for --help.  A missing or unknown subcommand is
** reported in one line and gives EXIT_USAGE. */
int cli_subcommand(const cli_global *g, const char *cmd, const char *usage, const cli_sub *subs,
                   size_t n, int argc, char **argv);

/* ---------------------------------------------------------------------
** Formatting (format.c).
*/

/* Size of a buffer for cli_format_time(). */
#define CLI_TIME_SIZE 48

/* Write microseconds since the epoch as ISO-8601 UTC into out
** (CLI_TIME_SIZE bytes), with the microseconds when micros is set. */
void cli_format_time(int64_t us, int micros, char *out);

/* Write len bytes of p into out as printable ASCII: a backslash, \n, \t,
** \r and every byte outside 0x20..0x7e are escaped.  Stops before max
** bytes of output and ends with "..." when cut.  out needs max + 4 bytes.
** Returns the length written. */
size_t cli_escape(const unsigned char *p, size_t len, size_t max, char *out);

/* Room for a name read from the database (a queue's, a table's) as
** cli_name() writes it: every byte of a longest queue name escaped. */
#define CLI_NAME_SIZE (SQLQ_QUEUE_NAME_MAX * 4 + 4)

/* Write the name s into out (CLI_NAME_SIZE bytes) escaped as
** cli_escape() does, for a table on a terminal: a name a plain-SQL writer
** gave control characters cannot drive the terminal.  Returns out. */
const char *cli_name(const char *s, char *out);

/* jansson's value type, so that this header needs no jansson.h. */
struct json_t;

/* A new JSON string for s, JSON null for NULL.  Text that is not UTF-8 is
** given with \xHH escapes.  NULL when memory ran out. */
struct json_t *cli_json_text(const char *s);

/* Room for the standard base64 encoding of len bytes, its NUL included. */
#define CLI_BASE64_SIZE(len) (((len) + 2) / 3 * 4 + 1)

/* Write the standard base64 encoding of len bytes of p, NUL-terminated,
** into out (CLI_BASE64_SIZE(len) bytes).  Returns its length. */
size_t cli_base64(const unsigned char *p, size_t len, char *out);

/* A new JSON string of the standard base64 encoding of len bytes of p. */
struct json_t *cli_json_base64(const unsigned char *p, size_t len);

/* Set the payload of len bytes on the JSON object o: as "payload" (a
** string) when it is UTF-8, else as "payload_base64". */
void cli_json_set_payload(struct json_t *o, const unsigned char *p, size_t len);

/* The name of a job state SQLQ_STATE_* ("ready", "dead", ...; "unknown"
** for another number), and the state of a name, or -1 (admin_json.c). */
const char *cli_state_name(int state);
int cli_parse_state(const char *name);

/* The JSON of `sqlq stats --json` and `sqlq jobs --json`, new values
** (NULL when memory ran out) that the caller owns (admin_json.c): an array
** of the n queues' counts, an array of the n health items, one job. */
struct json_t *cli_stats_json(const sqlq_queue_stats *st, size_t n);
struct json_t *cli_health_json(const sqlq_health_item *items, size_t n);
struct json_t *cli_job_json(const sqlq_job_info *j);

/* A JSON time (cli_format_time(), with microseconds when micros), JSON
** null for 0 (never, none), a new value (admin_json.c). */
struct json_t *cli_json_time(int64_t us, int micros);

/* The JSON of `sqlq cron list --json`, `sqlq ring read --json`, `sqlq pool
** list --json` (with_token: `pool next --json`) and `sqlq subscriptions
** --json`, one object each, which `sqlq serve`'s API serves as well
** (admin_json.c; cli_subscription_json() is cmd_subscribe.c's, beside its
** table of action names).  New values, NULL when memory ran out. */
struct json_t *cli_schedule_json(const sqlq_schedule *s);
struct json_t *cli_ring_entry_json(const sqlq_ring_entry *e);
struct json_t *cli_pool_item_json(const sqlq_pool_item *it, int with_token);

/* Listing (cmd_list.c).  The JSON of one entry of `sqlq locks --json`
** (known_name: the NAME given whose key it is, or NULL), `sqlq ring list
** --json` and `sqlq pool list --json` without NAME, which `sqlq serve`'s
** API serves as well; new values, NULL when memory ran out. */
struct json_t *cli_lock_info_json(const sqlq_lock_info *l, const char *known_name);
struct json_t *cli_ring_info_json(const sqlq_ring_info *r);
struct json_t *cli_pool_info_json(const sqlq_pool_info *p);
/* Parse a listing's --limit (1 to SQLQ_LIST_MAX) into *out; else print
** the usage error of cmd and return EXIT_USAGE. */
int cli_parse_list_limit(const char *cmd, const char *s, size_t *out);
/* The flags of a listing of rings or pools: --after NAME, --limit N,
** --json, --help. */
typedef struct cli_list_flags {
  const char *after; /* NULL: from the first */
  size_t limit;
  int json;
  int paged; /* --after or --limit given */
} cli_list_flags;
/* Parse them for cmd into *f (usage is printed for --help).  Returns -1
** to go on, else the exit code. */
int cli_list_args(const char *cmd, const char *usage, int argc, char **argv, cli_list_flags *f);
/* Print the rings or pools whose names sort after after (NULL: from the
** first), at most limit, as a table or JSON; returns the exit code. */
int cli_list_rings(const cli_global *g, const char *after, size_t limit, int json);
int cli_list_pools(const cli_global *g, const char *after, size_t limit, int json);
struct json_t *cli_subscription_json(const sqlq_subscription *s);

/* The policy of missed ticks as `cron add --missed` takes it ("skip",
** "once", "all" or a number, written into out), admin_json.c. */
const char *cli_cron_policy_text(int missed, char out[16]);

/* The limits of a queue, as read back (0 where there is none), or as asked
** for (-1: left as it is). */
typedef struct cli_limits {
  int64_t concurrency, max_starts, period_us, per_group;
  int fair;
} cli_limits;

/* Set the limits of queue asked for in set (each -1: left as it is; the
** rate's period goes with max_starts), then read them all into out: five
** library calls when nothing is set.  A database below the schema version
** of a setting shows its default, unless it was asked for (cmd_limit.c). */
int cli_limits_apply(sqlq_db *db, const char *queue, const cli_limits *set, cli_limits *out);

/* The JSON of `sqlq limit --json QUEUE` (admin_json.c). */
struct json_t *cli_limits_json(const char *queue, const cli_limits *l);

/* Print value (which this takes; NULL means memory ran out) compact, keys
** in insertion order, and a newline.  Returns the exit code. */
int cli_print_json(struct json_t *value);

/* The tool: `sqlq [--url URL] COMMAND [ARGS...]` with argv[0] the
** program's name; returns the process exit code.  It may be called again
** in the same process (getopt starts afresh each time).  It reads the
** environment (SQLQ_URL); `work`, `lock`, `bench` and `ring read --follow`
** install signal handlers and start threads or processes. */
int cli_main(int argc, char **argv);

/* The commands. */
int cmd_init(const cli_global *g, int argc, char **argv);
int cmd_push(const cli_global *g, int argc, char **argv);
int cmd_work(const cli_global *g, int argc, char **argv);
int cmd_cron(const cli_global *g, int argc, char **argv);
int cmd_work_stdio(const cli_global *g, int argc, char **argv); /* work_stdio.c */
int cmd_stats(const cli_global *g, int argc, char **argv);
int cmd_jobs(const cli_global *g, int argc, char **argv);
int cmd_retry(const cli_global *g, int argc, char **argv);
int cmd_cancel(const cli_global *g, int argc, char **argv);
int cmd_pause(const cli_global *g, int argc, char **argv);
int cmd_resume(const cli_global *g, int argc, char **argv);
int cmd_purge(const cli_global *g, int argc, char **argv);
int cmd_retention(const cli_global *g, int argc, char **argv); /* cmd_retention.c */
int cmd_prune(const cli_global *g, int argc, char **argv);     /* cmd_retention.c */
int cmd_limit(const cli_global *g, int argc, char **argv);
int cmd_lock(const cli_global *g, int argc, char **argv);
int cmd_bench(const cli_global *g, int argc, char **argv); /* src/bench/ */
int cmd_ring(const cli_global *g, int argc, char **argv);
int cmd_pool(const cli_global *g, int argc, char **argv);
int cmd_locks(const cli_global *g, int argc, char **argv); /* cmd_list.c */
int cmd_subscribe(const cli_global *g, int argc, char **argv);
int cmd_unsubscribe(const cli_global *g, int argc, char **argv);
int cmd_subscriptions(const cli_global *g, int argc, char **argv);
int cmd_serve(const cli_global *g, int argc, char **argv); /* cmd_serve.c, serve_*.c */

#endif /* SQLQ_CLI_H */
