/*
** serve_api.c -- the JSON API of `sqlq serve`, version 1, under /api/v1/
** (docs/serve.md lists it).  Queues, jobs and health items have the shape
** that `sqlq stats --json` and `sqlq jobs --json` print (admin_json.c).
**
**   GET  /api/v1/queues                      every queue's counts
**   GET  /api/v1/queues/Q                    one queue's counts
**   GET  /api/v1/queues/Q/jobs?state=S&limit=N
**   GET  /api/v1/queues/Q/history            the last hour's counts (serve_counts.c)
**   GET  /api/v1/health                      the database's health items
**   POST /api/v1/queues/Q/pause | resume | retry-dead
**   POST /api/v1/queues/Q/retry | delete     body {"ids":[ID,...]}
**   POST /api/v1/queues/Q/jobs/ID/retry | delete
**   POST /api/v1/jobs/ID/cancel
**
** Each answer is one library call or a few bounded ones (a listing takes
** at most SERVE_LIMIT_MAX jobs; a queue's oldest ready job is one listing of
** one job), never a scan the caller did not bound.
*/
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

void serve_reply_json(serve_reply *r, json_t *value) {
  r->body =
    value ? json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
  json_decref(value);
  if (r->body == NULL) {
    serve_reply_error(r, 500, "out of memory");
    return;
  }
  r->status = 200;
  r->content_type = "application/json";
  r->len = strlen(r->body);
}

void serve_reply_failure(serve_ctx *ctx, serve_reply *r, int rc, const char *what) {
  char message[512];
  snprintf(message, sizeof message, "%s: %s", what, sqlq_errmsg(ctx->db));
  serve_reply_error(r, serve_http_status(rc), message);
}

/* A queue's summary as the API gives it: the counts, "oldest_ready_age"
** (seconds, null when no job is due) and "more", the names of the counts
** that stopped at the limit (there are more jobs than that). */
static json_t *summary_json(const sqlq_queue_summary *q) {
  static const char *const names[] = {"ready", "scheduled", "running", "dead"};
  static const unsigned bits[] = {SQLQ_MORE_READY, SQLQ_MORE_SCHEDULED, SQLQ_MORE_RUNNING,
                                  SQLQ_MORE_DEAD};
  const int64_t counts[] = {q->ready, q->scheduled, q->running, q->dead};
  json_t *o = json_object(), *more = json_array();
  size_t k;
  json_object_set_new(o, "queue", cli_json_text(q->queue));
  for (k = 0; k < 4; k++) {
    json_object_set_new(o, names[k], json_integer(counts[k]));
    if (q->more & bits[k]) json_array_append_new(more, json_string(names[k]));
  }
  json_object_set_new(o, "paused", json_boolean(q->paused));
  json_object_set_new(
    o, "oldest_ready_age",
    q->oldest_ready_age_us >= 0 ? json_real((double)q->oldest_ready_age_us / 1e6) : json_null());
  json_object_set_new(o, "more", more);
  return o;
}

/* GET /api/v1/queues[/Q]: each queue's summary (summary_json()), its
** counts stopping at --count-limit, whose value "count_limit" gives;
** one statement whatever the queues' length. */
static void get_queues(serve_ctx *ctx, const char *queue, serve_reply *r) {
  sqlq_queue_summary *s = NULL, zero;
  size_t n = 0, i;
  int rc = sqlq_summary(ctx->db, queue, ctx->count_limit, &s, &n);
  json_t *queues;
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "summary");
    return;
  }
  if (queue != NULL) {
    /* A queue without jobs is a queue with zero of each. */
    memset(&zero, 0, sizeof zero);
    snprintf(zero.queue, sizeof zero.queue, "%s", queue);
    zero.oldest_ready_age_us = -1;
    json_t *one = summary_json(n > 0 ? &s[0] : &zero);
    json_object_set_new(one, "count_limit", json_integer(ctx->count_limit));
    serve_reply_json(r, one);
  } else {
    queues = json_array();
    for (i = 0; queues != NULL && i < n; i++) json_array_append_new(queues, summary_json(&s[i]));
    serve_reply_json(r, json_pack("{s:s,s:I,s:o}", "backend", sqlq_backend(ctx->db), "count_limit",
                                  (json_int_t)ctx->count_limit, "queues", queues));
  }
  sqlq_queue_summaries_free(s, n);
}

/* Whether job j is one that search (SERVE_MAX_SEARCH bytes at most) names:
** its id, written in decimal, or a part of its dedupe key. */
static int job_matches(const sqlq_job_info *j, const char *search) {
  char id[24];
  snprintf(id, sizeof id, "%" PRId64, j->id);
  return strcmp(id, search) == 0 || (j->dedupe_key != NULL && strstr(j->dedupe_key, search));
}

/* GET /api/v1/queues/Q/jobs?state=S&limit=N&search=T.  With a search, the
** jobs listed are the first SERVE_LIMIT_MAX of the state in claim order,
** and of those the first N that T names (job_matches()): a bounded look,
** not a search of the whole queue. */
static void get_jobs(serve_ctx *ctx, const serve_target *t, const char *queue, serve_reply *r) {
  sqlq_job_info *jobs = NULL;
  size_t n = 0, i;
  int64_t limit = SERVE_LIMIT_DEFAULT;
  int state = 0, dup_state, dup_limit, dup_search, rc;
  const char *s = serve_param(t, "state", &dup_state);
  const char *l = serve_param(t, "limit", &dup_limit);
  const char *search = serve_param(t, "search", &dup_search);
  json_t *array;
  for (i = 0; i < t->n_params; i++) {
    if (strcmp(t->keys[i], "state") != 0 && strcmp(t->keys[i], "limit") != 0 &&
        strcmp(t->keys[i], "search") != 0) {
      serve_reply_error(r, 400, "unknown parameter (state, limit, search)");
      return;
    }
  }
  if (search != NULL && (search[0] == '\0' || strlen(search) > SERVE_MAX_SEARCH)) {
    serve_reply_error(r, 400, "search must be 1 to 256 bytes: a job id or a part of a dedupe key");
    return;
  }
  if (dup_state || dup_limit || dup_search) {
    serve_reply_error(r, 400, "a parameter is given twice");
    return;
  }
  if (s != NULL && (state = cli_parse_state(s)) < 0) {
    serve_reply_error(r, 400, "unknown state (ready, scheduled, waiting, running, dead, done)");
    return;
  }
  if (l != NULL && serve_parse_id(l, SERVE_LIMIT_MAX, &limit) != 0) {
    serve_reply_error(r, 400, "limit must be a whole number from 1 to 500");
    return;
  }
  rc = sqlq_list(ctx->db, queue, state, search ? SERVE_LIMIT_MAX : (size_t)limit, &jobs, &n);
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "list");
    return;
  }
  array = json_array();
  for (i = 0; array != NULL && i < n && json_array_size(array) < (size_t)limit; i++) {
    if (search == NULL || job_matches(&jobs[i], search)) {
      json_array_append_new(array, cli_job_json(&jobs[i]));
    }
  }
  sqlq_job_infos_free(jobs, n);
  serve_reply_json(r, json_pack("{s:o}", "jobs", array));
}

/* GET /api/v1/health */
static void get_health(serve_ctx *ctx, serve_reply *r) {
  sqlq_health_item *items = NULL;
  size_t n = 0;
  int rc = sqlq_health(ctx->db, &items, &n);
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "health");
    return;
  }
  serve_reply_json(r, json_pack("{s:o}", "health", cli_health_json(items, n)));
  sqlq_health_items_free(items, n);
}

/* Set r to {KEY:count} after the action what returned rc. */
static void reply_count(serve_ctx *ctx, serve_reply *r, int rc, const char *what, const char *key,
                        size_t count) {
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, what);
  } else {
    serve_reply_json(r, json_pack("{s:I}", key, (json_int_t)count));
  }
}

/* POST /api/v1/queues/Q/retry or delete with ids (n of them): retry the
** dead or scheduled jobs, or delete the dead ones. */
static void post_jobs(serve_ctx *ctx, const char *queue, const char *action, const int64_t *ids,
                      size_t n, serve_reply *r) {
  size_t count = 0;
  int rc;
  if (strcmp(action, "retry") == 0) {
    rc = sqlq_retry(ctx->db, queue, ids, n, &count);
    reply_count(ctx, r, rc, "retry", "retried", count);
  } else {
    rc = sqlq_delete_dead(ctx->db, queue, ids, n, &count);
    reply_count(ctx, r, rc, "delete", "deleted", count);
  }
}

/* POST /api/v1/queues/Q/ACTION, or /api/v1/queues/Q/jobs/ID/ACTION (id > 0). */
static void post_queue(serve_ctx *ctx, const char *queue, const char *action, int64_t id,
                       const serve_body *body, serve_reply *r) {
  int jobs = strcmp(action, "retry") == 0 || strcmp(action, "delete") == 0;
  size_t count = 0;
  int rc;
  if (body->n_ids > 0 && (id > 0 || !jobs)) {
    serve_reply_error(r, 400, "only POST .../retry and .../delete take ids");
  } else if (id > 0) {
    if (jobs) {
      post_jobs(ctx, queue, action, &id, 1, r);
    } else {
      serve_reply_error(r, 404, "no such action on a job (retry, delete)");
    }
  } else if (jobs) {
    if (body->n_ids == 0) {
      serve_reply_error(r, 400, "POST .../retry and .../delete need a body {\"ids\":[ID,...]}");
    } else {
      post_jobs(ctx, queue, action, body->ids, body->n_ids, r);
    }
  } else if (strcmp(action, "pause") == 0 || strcmp(action, "resume") == 0) {
    int pause = action[0] == 'p';
    rc = pause ? sqlq_pause(ctx->db, queue) : sqlq_resume(ctx->db, queue);
    if (rc != SQLQ_OK) {
      serve_reply_failure(ctx, r, rc, action);
    } else {
      serve_reply_json(r, json_pack("{s:o,s:b}", "queue", cli_json_text(queue), "paused", pause));
    }
  } else if (strcmp(action, "retry-dead") == 0) {
    rc = sqlq_retry(ctx->db, queue, NULL, 0, &count);
    reply_count(ctx, r, rc, "retry", "retried", count);
  } else {
    serve_reply_error(r, 404,
                      "no such action on a queue (pause, resume, retry, retry-dead, delete)");
  }
}

void serve_api(serve_ctx *ctx, const serve_target *t, int post, const serve_body *body,
               serve_reply *r) {
  const char *const *seg = t->segments;
  size_t n = t->n_segments;
  int64_t id = 0;
  if (n < 3 || strcmp(seg[1], "v1") != 0) {
    serve_reply_error(r, 404, "no such API (see /api/v1/)");
    return;
  }
  if (serve_api_objects(ctx, t, post, r)) {
    return; /* serve_objects.c's */
  }
  if (t->n_params > 0 && !(n == 5 && strcmp(seg[4], "jobs") == 0 && !post)) {
    serve_reply_error(r, 400, "this resource takes no query string");
    return;
  }
  if (n == 3 && strcmp(seg[2], "queues") == 0 && !post) {
    get_queues(ctx, NULL, r);
  } else if (n == 3 && strcmp(seg[2], "health") == 0 && !post) {
    get_health(ctx, r);
  } else if (n == 4 && strcmp(seg[2], "queues") == 0 && !post) {
    get_queues(ctx, seg[3], r);
  } else if (n == 5 && strcmp(seg[2], "queues") == 0 && strcmp(seg[4], "jobs") == 0 && !post) {
    get_jobs(ctx, t, seg[3], r);
  } else if (n == 5 && strcmp(seg[2], "queues") == 0 && strcmp(seg[4], "history") == 0 && !post) {
    serve_history(ctx, seg[3], r);
  } else if (n == 5 && strcmp(seg[2], "queues") == 0 && post) {
    post_queue(ctx, seg[3], seg[4], 0, body, r);
  } else if (n == 7 && strcmp(seg[2], "queues") == 0 && strcmp(seg[4], "jobs") == 0 && post) {
    if (serve_parse_id(seg[5], INT64_MAX, &id) != 0) {
      serve_reply_error(r, 400, "a job id must be a whole number >= 1");
    } else {
      post_queue(ctx, seg[3], seg[6], id, body, r);
    }
  } else if (n == 5 && strcmp(seg[2], "jobs") == 0 && strcmp(seg[4], "cancel") == 0 && post) {
    size_t count = 0;
    if (body->n_ids > 0) {
      serve_reply_error(r, 400, "only POST .../retry and .../delete take ids");
    } else if (serve_parse_id(seg[3], INT64_MAX, &id) != 0) {
      serve_reply_error(r, 400, "a job id must be a whole number >= 1");
    } else {
      int rc = sqlq_cancel(ctx->db, &id, 1, &count);
      reply_count(ctx, r, rc, "cancel", "cancelled", count);
    }
  } else {
    serve_reply_error(r, 404, "no such resource (see docs/serve.md)");
  }
}
