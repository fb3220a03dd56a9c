/*
** serve.h -- what the files of `sqlq serve` share (docs/serve.md).
**
**   cmd_serve.c      the command: flags, token, listener, signals
**   serve_http.c     libmicrohttpd: requests in, the checks every request
**                    passes (token, Host, CSRF, read-only), responses out
**   serve_parse.c    parsing the request line's path and query string and
**                    an action's body, without libmicrohttpd (fuzzed by
**                    tests/fuzz/serve.c)
**   serve_api.c      the JSON API under /api/v1/: queues and their jobs
**   serve_objects.c  the API's other resources: schedules, limits, rings,
**                    pools, subscriptions, the server itself
**   serve_dash.c     the dashboard: pages, style and script built into the
**                    binary from src/cli/dash/ (serve_assets.c, generated)
**   serve_metrics.c  /metrics in Prometheus' text format
**   serve_counts.c   the counters of /metrics and the history of the API,
**                    from the rows of sqlq_counts
**
** Every request is answered on libmicrohttpd's one internal thread, which
** alone uses the server's database handle: the handle is used by one thread
** at a time, as sqlq.h asks.
*/
#ifndef SQLQ_SERVE_H
#define SQLQ_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "sqlq.h"

/* The most path segments, query parameters and bytes of a body that a
** request may have; more is a 4xx. */
#define SERVE_MAX_SEGMENTS 8
#define SERVE_MAX_PARAMS 16
#define SERVE_MAX_BODY 65536
/* The longest raw request target (path and query) taken, in bytes. */
#define SERVE_MAX_TARGET 4096
/* The most jobs one listing returns, and how many when not asked. */
#define SERVE_LIMIT_MAX 500
#define SERVE_LIMIT_DEFAULT 100
/* Where the API's counts stop (sqlq_summary()) unless --count-limit says
** otherwise: a page polled every few seconds reads at most this many index
** entries per count. */
#define SERVE_COUNT_LIMIT 10000
/* The longest search text of a job listing, in bytes. */
#define SERVE_MAX_SEARCH 256
/* The most ids one retry body may hold. */
#define SERVE_MAX_IDS 1000

/* A request target split and decoded (serve_parse.c).  Every string is a
** NUL-terminated copy, percent-decoded, inside the struct's own buffer;
** a decoded NUL byte is refused, so each string is all of its segment. */
typedef struct serve_target {
  size_t n_segments;
  const char *segments[SERVE_MAX_SEGMENTS];
  size_t n_params;
  const char *keys[SERVE_MAX_PARAMS];
  const char *values[SERVE_MAX_PARAMS];
  char buf[SERVE_MAX_TARGET * 2 + 2];
} serve_target;

/* Parse the request target (the request line's second word: "/a/b%2Fc?x=1&y")
** of len bytes into *t.  Returns 0, or -1 with a message (static) in *why:
** no leading '/', longer than SERVE_MAX_TARGET, too many segments or
** parameters, a bad or NUL percent escape, an empty segment inside the path
** ("//"), a segment "." or "..".  A trailing '/' is ignored; a parameter
** without '=' has the value "". */
int serve_parse_target(const char *raw, size_t len, serve_target *t, const char **why);

/* The value of parameter key of t, or NULL when it is not there; *dup is
** set to 1 when it is there more than once (then the request is refused). */
const char *serve_param(const serve_target *t, const char *key, int *dup);

/* Parse the whole number s (1 to max, decimal digits only) into *out.
** Returns 0 or -1. */
int serve_parse_id(const char *s, int64_t max, int64_t *out);

/* What an action's body may say (serve_parse_body()). */
typedef struct serve_body {
  size_t n_ids; /* ids given as {"ids":[...]} (0: none) */
  int64_t ids[SERVE_MAX_IDS];
} serve_body;

/* Parse an action's body of len bytes: empty, or a JSON object whose only
** key may be "ids", an array of 1 to SERVE_MAX_IDS job ids (whole numbers
** >= 1).  Returns 0, or -1 with a message (static) in *why. */
int serve_parse_body(const char *body, size_t len, serve_body *b, const char **why);

/* Compare the n bytes of a with the m bytes of b in time that depends on
** their lengths only, never on where they differ.  Returns 1 when equal. */
int serve_equal_secret(const char *a, size_t n, const char *b, size_t m);

/* Whether a Host header names the listener by a loopback address or
** "localhost" (with or without a port): what a page of another site that
** a DNS rebinding points at 127.0.0.1 cannot send. */
int serve_host_is_local(const char *host);

/* An answer: status and a body the response takes (malloc'ed). */
typedef struct serve_reply {
  unsigned status;
  const char *content_type;
  char *body;
  size_t len;
  /* A dashboard asset (serve_dash.c): body is static data, not freed, and
  ** the answer gets the pages' content-security policy, which lets a page
  ** load this server's own script, style and images, and nothing else. */
  const unsigned char *asset;
} serve_reply;

/* Set r to status with the JSON body {"error":message} (message may hold
** any bytes: it is escaped).  Returns 0, or -1 when memory ran out. */
int serve_reply_error(serve_reply *r, unsigned status, const char *message);

/* The status of an answer for a library status: 400 for SQLQ_MISUSE and
** SQLQ_TOOBIG, 404 for SQLQ_NOTFOUND, 409 for SQLQ_STALE and SQLQ_PAUSED,
** 503 for SQLQ_BUSY, SQLQ_UNAVAILABLE, SQLQ_SCHEMA, SQLQ_TIMEOUT, else 500. */
unsigned serve_http_status(int status);

/* The counters /metrics shows, from the rows of sqlq_counts
** (serve_counts.c): the rows as the last scrape read them (seen, in the
** order of sqlq_counts()) and per queue the totals of what they grew by
** since this server started (totals, by queue; "" for named locks). */
typedef struct serve_counts {
  sqlq_minute_counts *seen;
  size_t n_seen;
  sqlq_minute_counts *totals;
  size_t n_totals;
} serve_counts;

/* The server's state that the handlers read (cmd_serve.c fills it). */
typedef struct serve_ctx {
  sqlq_db *db;
  int read_only;
  int64_t count_limit; /* where the API's counts stop (--count-limit) */
  const char *token;   /* NULL: none needed */
  size_t token_len;
  /* Counted by serve_http.c, shown by /metrics. */
  uint64_t requests;
  uint64_t refused; /* answered 4xx */
  uint64_t failed;  /* answered 5xx */
  serve_counts counts;
} serve_ctx;

/* Read the rows of sqlq_counts of the last minutes into ctx->counts,
** adding what they grew by to its totals.  Returns SQLQ_OK or
** sqlq_counts()'s status (SQLQ_SCHEMA: the database has no sqlq_counts). */
int serve_counts_read(serve_ctx *ctx);

/* Free what c holds. */
void serve_counts_free(serve_counts *c);

/* Answer GET /api/v1/queues/Q/history into *r (serve_counts.c). */
void serve_history(serve_ctx *ctx, const char *queue, serve_reply *r);

/* Set r to the JSON value (which this takes) with status 200, or to a 500
** when value is NULL or memory runs out (serve_api.c). */
struct json_t;
void serve_reply_json(serve_reply *r, struct json_t *value);

/* Answer a GET (post 0) or POST (post 1) of the API, whose target is t
** (its first segment "api"), into *r (serve_api.c).  body is the POST's,
** already checked by serve_parse_body(). */
void serve_api(serve_ctx *ctx, const serve_target *t, int post, const serve_body *body,
               serve_reply *r);

/* Set r to the failure rc of the library call what, with the library's
** message (serve_api.c). */
void serve_reply_failure(serve_ctx *ctx, serve_reply *r, int rc, const char *what);

/* Answer a GET of the API's resources other than queues, jobs and health
** (serve_objects.c) into *r.  Returns 1 when t named one of them, else 0
** and r is untouched. */
int serve_api_objects(serve_ctx *ctx, const serve_target *t, int post, serve_reply *r);

/* One file of the dashboard, built into the binary from src/cli/dash/
** (serve_assets.c, which CMake generates: scripts/embed_assets.cmake). */
typedef struct serve_asset {
  const char *name; /* "index.html", "dash.js", ... */
  const char *content_type;
  const unsigned char *data;
  size_t len;
} serve_asset;
extern const serve_asset serve_assets[];
extern const size_t serve_assets_count;

/* Answer a GET of the dashboard (serve_dash.c): "/" is its page, "/dash/NAME"
** a file of it.  Returns 1 when t named one of them, else 0 and r is
** untouched. */
int serve_dash(const serve_target *t, int post, serve_reply *r);

/* Answer GET /metrics into *r (serve_metrics.c). */
void serve_metrics(serve_ctx *ctx, serve_reply *r);

/* Start answering on the address given (an IPv4 or IPv6 address and a
** port; port 0: one the kernel picks), until serve_http_stop().  *port_out
** receives the port.  Returns NULL, with a message in why[why_size], when
** libmicrohttpd cannot listen there (serve_http.c). */
struct serve_http;
struct serve_http *serve_http_start(serve_ctx *ctx, const void *addr, size_t addr_len,
                                    unsigned *port_out, char *why, size_t why_size);
void serve_http_stop(struct serve_http *h);

#endif /* SQLQ_SERVE_H */
