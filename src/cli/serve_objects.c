/*
** serve_objects.c -- the resources of `sqlq serve`'s API, version 1, that
** are not a queue's jobs: what the dashboard's pages of schedules, limits,
** rings, pools and subscriptions show, and what the server is.  Each
** object has the shape that the CLI's --json prints (admin_json.c).
**
**   GET /api/v1/server                     backend, version, read-only
**   GET /api/v1/schedules                  `sqlq cron list --json`, without payloads
**   GET /api/v1/limits                     `sqlq limit --json Q` of every queue
**   GET /api/v1/subscriptions              `sqlq subscriptions --json`
**   GET /api/v1/rings/R?since=SEQ&limit=N  `sqlq ring read --json`
**   GET /api/v1/pools/P                    `sqlq pool list --json`
**   GET /api/v1/locks?limit=N              `sqlq locks --json`, or why not
**   GET /api/v1/rings?after=R&limit=N      `sqlq ring list --json`
**   GET /api/v1/pools?after=P&limit=N      `sqlq pool list --json` (no NAME)
**
** Every answer is bounded: a ring read and the lists of locks, rings
** and pools take at most SERVE_LIMIT_MAX entries; the others list what the database holds of a kind that stays
** small (schedules, subscriptions, a pool's items, the queues' limits).
*/
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

/* GET /api/v1/server: what the dashboard needs to know of this server.
** Never the database's URL. */
static void get_server(serve_ctx *ctx, serve_reply *r) {
  serve_reply_json(
    r, json_pack("{s:s,s:s,s:b,s:b}", "backend", sqlq_backend(ctx->db), "version", sqlq_version(),
                 "read_only", ctx->read_only, "token", ctx->token != NULL));
}

/* GET /api/v1/schedules.  A schedule's payload is the payload of jobs of
** its queue, which no one asked for here: it is left out. */
static void get_schedules(serve_ctx *ctx, serve_reply *r) {
  sqlq_schedule *all = NULL;
  size_t n = 0, i;
  int rc = sqlq_cron_list(ctx->db, &all, &n);
  json_t *array;
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "cron list");
    return;
  }
  array = json_array();
  for (i = 0; array != NULL && i < n; i++) {
    json_t *o = cli_schedule_json(&all[i]);
    json_object_del(o, "payload");
    json_object_del(o, "payload_base64");
    json_array_append_new(array, o);
  }
  sqlq_schedules_free(all, n);
  serve_reply_json(r, json_pack("{s:o}", "schedules", array));
}

/* GET /api/v1/limits: the limits of every queue that sqlq_stats() knows,
** five library calls each. */
static void get_limits(serve_ctx *ctx, serve_reply *r) {
  static const cli_limits unset = {-1, -1, 0, -1, -1};
  sqlq_queue_stats *st = NULL;
  size_t n = 0, i;
  int rc = sqlq_stats(ctx->db, NULL, &st, &n);
  json_t *array = json_array();
  for (i = 0; rc == SQLQ_OK && array != NULL && i < n; i++) {
    cli_limits l = {0, 0, 0, 1, 0};
    if ((rc = cli_limits_apply(ctx->db, st[i].queue, &unset, &l)) == SQLQ_OK) {
      json_array_append_new(array, cli_limits_json(st[i].queue, &l));
    }
  }
  sqlq_queue_stats_free(st, n);
  if (rc != SQLQ_OK) {
    json_decref(array);
    serve_reply_failure(ctx, r, rc, "limit");
    return;
  }
  serve_reply_json(r, json_pack("{s:o}", "limits", array));
}

/* GET /api/v1/subscriptions */
static void get_subscriptions(serve_ctx *ctx, serve_reply *r) {
  sqlq_subscription *subs = NULL;
  size_t n = 0, i;
  int rc = sqlq_subscriptions(ctx->db, &subs, &n);
  json_t *array;
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "subscriptions");
    return;
  }
  array = json_array();
  for (i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_subscription_json(&subs[i]));
  }
  sqlq_subscriptions_free(subs, n);
  serve_reply_json(r, json_pack("{s:o}", "subscriptions", array));
}

/* GET /api/v1/rings/R?since=SEQ&limit=N: the entries above SEQ (default
** 0: from the oldest kept), at most N (1 to SERVE_LIMIT_MAX, default
** SERVE_LIMIT_DEFAULT), oldest first. */
static void get_ring(serve_ctx *ctx, const serve_target *t, const char *ring, serve_reply *r) {
  sqlq_ring_entry *entries = NULL;
  size_t n = 0, i;
  int64_t since = 0, limit = SERVE_LIMIT_DEFAULT;
  int dup_since, dup_limit, rc;
  const char *s = serve_param(t, "since", &dup_since);
  const char *l = serve_param(t, "limit", &dup_limit);
  json_t *array;
  for (i = 0; i < t->n_params; i++) {
    if (strcmp(t->keys[i], "since") != 0 && strcmp(t->keys[i], "limit") != 0) {
      serve_reply_error(r, 400, "unknown parameter (since, limit)");
      return;
    }
  }
  if (dup_since || dup_limit) {
    serve_reply_error(r, 400, "a parameter is given twice");
    return;
  }
  if (s != NULL && strcmp(s, "0") != 0 && serve_parse_id(s, INT64_MAX, &since) != 0) {
    serve_reply_error(r, 400, "since must be a whole number >= 0");
    return;
  }
  if (l != NULL && serve_parse_id(l, SERVE_LIMIT_MAX, &limit) != 0) {
    serve_reply_error(r, 400, "limit must be a whole number from 1 to 500");
    return;
  }
  rc = sqlq_ring_read(ctx->db, ring, since, (size_t)limit, &entries, &n);
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "ring read");
    return;
  }
  array = json_array();
  for (i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_ring_entry_json(&entries[i]));
  }
  sqlq_ring_entries_free(entries, n);
  serve_reply_json(r, json_pack("{s:o,s:o}", "ring", cli_json_text(ring), "entries", array));
}

/* GET /api/v1/pools/P: its items in the order they are handed out.  The
** holders' tokens are not shown. */
static void get_pool(serve_ctx *ctx, const char *pool, serve_reply *r) {
  sqlq_pool_item *items = NULL;
  size_t n = 0, i;
  int rc = sqlq_pool_list(ctx->db, pool, &items, &n);
  json_t *array;
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "pool list");
    return;
  }
  array = json_array();
  for (i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_pool_item_json(&items[i], 0));
  }
  sqlq_pool_items_free(items, n);
  serve_reply_json(r, json_pack("{s:o,s:o}", "pool", cli_json_text(pool), "items", array));
}

/* Read the parameters of a listing, after (when allowed) and limit
** (1 to SERVE_LIMIT_MAX, default SERVE_LIMIT_DEFAULT), into *after and
** *limit; on a bad one, reply 400 and return -1. */
static int list_params(const serve_target *t, int allow_after, const char **after, size_t *limit,
                       serve_reply *r) {
  int dup_after = 0, dup_limit = 0;
  int64_t v = SERVE_LIMIT_DEFAULT;
  const char *l = serve_param(t, "limit", &dup_limit);
  *after = allow_after ? serve_param(t, "after", &dup_after) : NULL;
  const char *why = NULL;
  for (size_t i = 0; i < t->n_params && why == NULL; i++) {
    if (strcmp(t->keys[i], "limit") != 0 && !(allow_after && strcmp(t->keys[i], "after") == 0)) {
      why = allow_after ? "unknown parameter (after, limit)" : "unknown parameter (limit)";
    }
  }
  if (why == NULL && (dup_after || dup_limit)) {
    why = "a parameter is given twice";
  } else if (why == NULL && l != NULL && serve_parse_id(l, SERVE_LIMIT_MAX, &v) != 0) {
    why = "limit must be a whole number from 1 to 500";
  }
  if (why != NULL) {
    serve_reply_error(r, 400, why);
    return -1;
  }
  *limit = (size_t)v;
  return 0;
}

/* GET /api/v1/locks?limit=N: the named locks held now.  A backend that
** cannot list them answers {"locks":[],"unavailable":WHY}, for the
** dashboard to say why. */
static void get_locks(serve_ctx *ctx, const serve_target *t, serve_reply *r) {
  sqlq_lock_info *locks = NULL;
  size_t n = 0, limit;
  const char *after;
  if (list_params(t, 0, &after, &limit, r) != 0) return;
  int rc = sqlq_locks(ctx->db, limit, &locks, &n);
  if (rc == SQLQ_UNAVAILABLE) {
    serve_reply_json(
      r, json_pack("{s:[],s:o}", "locks", "unavailable", cli_json_text(sqlq_errmsg(ctx->db))));
    return;
  }
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "locks");
    return;
  }
  json_t *array = json_array();
  for (size_t i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_lock_info_json(&locks[i], NULL));
  }
  sqlq_lock_infos_free(locks, n);
  serve_reply_json(r, json_pack("{s:o,s:b}", "locks", array, "more", n == limit));
}

/* GET /api/v1/rings?after=R&limit=N: the rings by name after R. */
static void get_rings(serve_ctx *ctx, const serve_target *t, serve_reply *r) {
  sqlq_ring_info *rings = NULL;
  size_t n = 0, limit;
  const char *after;
  if (list_params(t, 1, &after, &limit, r) != 0) return;
  int rc = sqlq_rings(ctx->db, after, limit, &rings, &n);
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "ring list");
    return;
  }
  json_t *array = json_array();
  for (size_t i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_ring_info_json(&rings[i]));
  }
  sqlq_ring_infos_free(rings, n);
  serve_reply_json(r, json_pack("{s:o,s:b}", "rings", array, "more", n == limit));
}

/* GET /api/v1/pools?after=P&limit=N: the pools by name after P. */
static void get_pools(serve_ctx *ctx, const serve_target *t, serve_reply *r) {
  sqlq_pool_info *pools = NULL;
  size_t n = 0, limit;
  const char *after;
  if (list_params(t, 1, &after, &limit, r) != 0) return;
  int rc = sqlq_pools(ctx->db, after, limit, &pools, &n);
  if (rc != SQLQ_OK) {
    serve_reply_failure(ctx, r, rc, "pool list");
    return;
  }
  json_t *array = json_array();
  for (size_t i = 0; array != NULL && i < n; i++) {
    json_array_append_new(array, cli_pool_info_json(&pools[i]));
  }
  sqlq_pool_infos_free(pools, n);
  serve_reply_json(r, json_pack("{s:o,s:b}", "pools", array, "more", n == limit));
}

int serve_api_objects(serve_ctx *ctx, const serve_target *t, int post, serve_reply *r) {
  const char *const *seg = t->segments;
  size_t n = t->n_segments;
  int ring = n == 4 && strcmp(seg[2], "rings") == 0;
  int list = n == 3 && (strcmp(seg[2], "locks") == 0 || strcmp(seg[2], "rings") == 0 ||
                        strcmp(seg[2], "pools") == 0);
  if (n < 3 || n > 4 || post) {
    return 0;
  }
  if (list) {
    (seg[2][0] == 'l' ? get_locks : seg[2][0] == 'r' ? get_rings : get_pools)(ctx, t, r);
  } else if (t->n_params > 0 && !ring) {
    serve_reply_error(r, 400, "this resource takes no query string");
  } else if (n == 3 && strcmp(seg[2], "server") == 0) {
    get_server(ctx, r);
  } else if (n == 3 && strcmp(seg[2], "schedules") == 0) {
    get_schedules(ctx, r);
  } else if (n == 3 && strcmp(seg[2], "limits") == 0) {
    get_limits(ctx, r);
  } else if (n == 3 && strcmp(seg[2], "subscriptions") == 0) {
    get_subscriptions(ctx, r);
  } else if (ring) {
    get_ring(ctx, t, seg[3], r);
  } else if (n == 4 && strcmp(seg[2], "pools") == 0) {
    get_pool(ctx, seg[3], r);
  } else {
    return 0;
  }
  return 1;
}
