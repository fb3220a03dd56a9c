/*
** admin_json.c -- the JSON of queues, jobs, health items, schedules,
** limits, ring entries and pool items, as `sqlq stats --json`, `sqlq jobs
** --json`, `sqlq cron list --json`, `sqlq limit --json`, `sqlq ring read
** --json` and `sqlq pool list --json` print them and `sqlq serve`'s API
** (/api/v1/) serves them: one shape for both, built here once.
*/
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_state_name(int state) {
  switch (state) {
  case SQLQ_STATE_READY:
    return "ready";
  case SQLQ_STATE_SCHEDULED:
    return "scheduled";
  case SQLQ_STATE_RUNNING:
    return "running";
  case SQLQ_STATE_DEAD:
    return "dead";
  case SQLQ_STATE_DONE:
    return "done";
  case SQLQ_STATE_WAITING:
    return "waiting";
  default:
    return "unknown";
  }
}

/* The SQLQ_STATE_* called name, or -1. */
int cli_parse_state(const char *name) {
  static const int states[] = {SQLQ_STATE_READY, SQLQ_STATE_SCHEDULED, SQLQ_STATE_RUNNING,
                               SQLQ_STATE_DEAD,  SQLQ_STATE_DONE,      SQLQ_STATE_WAITING};
  size_t i;
  for (i = 0; i < sizeof states / sizeof states[0]; i++) {
    if (strcmp(cli_state_name(states[i]), name) == 0) {
      return states[i];
    }
  }
  return -1;
}

json_t *cli_stats_json(const sqlq_queue_stats *st, size_t n) {
  json_t *queues = json_array();
  size_t i;
  for (i = 0; queues != NULL && i < n; i++) {
    json_t *q = json_object();
    json_object_set_new(q, "queue", cli_json_text(st[i].queue));
    json_object_set_new(q, "ready", json_integer(st[i].ready));
    json_object_set_new(q, "scheduled", json_integer(st[i].scheduled));
    json_object_set_new(q, "running", json_integer(st[i].running));
    json_object_set_new(q, "dead", json_integer(st[i].dead));
    json_object_set_new(q, "paused", json_boolean(st[i].paused));
    json_array_append_new(queues, q);
  }
  return queues;
}

json_t *cli_health_json(const sqlq_health_item *items, size_t n) {
  json_t *array = json_array();
  char at[CLI_TIME_SIZE];
  size_t i;
  for (i = 0; array != NULL && i < n; i++) {
    const sqlq_health_item *h = &items[i];
    json_t *o = json_object();
    if (h->started_at_us != 0) {
      cli_format_time(h->started_at_us, 1, at);
    }
    json_object_set_new(o, "name", cli_json_text(h->name));
    json_object_set_new(o, "value", json_integer(h->value));
    json_object_set_new(o, "unit", cli_json_text(h->unit));
    json_object_set_new(o, "threshold", json_integer(h->threshold));
    json_object_set_new(o, "over", json_boolean(h->over));
    json_object_set_new(o, "holder", cli_json_text(h->holder));
    json_object_set_new(o, "started_at", h->started_at_us ? json_string(at) : json_null());
    json_object_set_new(o, "detail", cli_json_text(h->detail));
    json_array_append_new(array, o);
  }
  return array;
}

json_t *cli_job_json(const sqlq_job_info *j) {
  json_t *o = json_object();
  char run_at[CLI_TIME_SIZE], created_at[CLI_TIME_SIZE], lease_until[CLI_TIME_SIZE];
  cli_format_time(j->run_at_us, 1, run_at);
  cli_format_time(j->created_at_us, 1, created_at);
  if (j->lease_until_us != 0) {
    cli_format_time(j->lease_until_us, 1, lease_until);
  }
  json_object_set_new(o, "id", json_integer(j->id));
  json_object_set_new(o, "state", json_string(cli_state_name(j->state)));
  json_object_set_new(o, "priority", json_integer(j->priority));
  json_object_set_new(o, "attempts", json_integer(j->attempts));
  json_object_set_new(o, "max_attempts", json_integer(j->max_attempts));
  /* A finished job's time is when it finished. */
  json_object_set_new(o, j->state == SQLQ_STATE_DONE ? "finished_at" : "run_at",
                      j->run_at_us ? json_string(run_at) : json_null());
  json_object_set_new(o, "created_at", json_string(created_at));
  json_object_set_new(o, "lease_until", j->lease_until_us ? json_string(lease_until) : json_null());
  json_object_set_new(o, "dedupe_key", cli_json_text(j->dedupe_key));
  json_object_set_new(o, "group_key", cli_json_text(j->group_key));
  json_object_set_new(o, "last_error", cli_json_text(j->last_error));
  cli_json_set_payload(o, j->payload, j->payload_len);
  return o;
}

json_t *cli_json_time(int64_t us, int micros) {
  char text[CLI_TIME_SIZE];
  if (us == 0) {
    return json_null();
  }
  cli_format_time(us, micros, text);
  return json_string(text);
}

const char *cli_cron_policy_text(int missed, char out[16]) {
  if (missed == SQLQ_CRON_SKIP) return "skip";
  if (missed == SQLQ_CRON_ONCE) return "once";
  if (missed == SQLQ_CRON_ALL) return "all";
  snprintf(out, 16, "%d", missed);
  return out;
}

json_t *cli_schedule_json(const sqlq_schedule *s) {
  char policy[16];
  json_t *o = json_object();
  json_object_set_new(o, "name", cli_json_text(s->name));
  json_object_set_new(o, "spec", cli_json_text(s->spec));
  json_object_set_new(o, "zone", cli_json_text(s->zone));
  json_object_set_new(o, "queue", cli_json_text(s->queue));
  cli_json_set_payload(o, s->payload, s->payload_len);
  json_object_set_new(o, "missed", json_string(cli_cron_policy_text(s->missed, policy)));
  json_object_set_new(o, "paused", json_boolean(s->paused));
  json_object_set_new(o, "next", cli_json_time(s->next_at_us, 0));
  json_object_set_new(o, "last", cli_json_time(s->last_at_us, 0));
  return o;
}

json_t *cli_limits_json(const char *queue, const cli_limits *l) {
  json_t *o = json_object(), *rate = json_null();
  if (l->max_starts != 0) {
    rate = json_pack("{s:I,s:I}", "max_starts", (json_int_t)l->max_starts, "period_us",
                     (json_int_t)l->period_us);
  }
  json_object_set_new(o, "queue", cli_json_text(queue));
  json_object_set_new(o, "concurrency",
                      l->concurrency ? json_integer(l->concurrency) : json_null());
  json_object_set_new(o, "rate", rate);
  json_object_set_new(o, "per_group", json_integer(l->per_group));
  json_object_set_new(o, "fair", json_boolean(l->fair));
  return o;
}

json_t *cli_ring_entry_json(const sqlq_ring_entry *e) {
  json_t *o = json_object();
  json_object_set_new(o, "seq", json_integer(e->seq));
  json_object_set_new(o, "at", cli_json_time(e->pushed_at_us, 1));
  cli_json_set_payload(o, e->payload, e->payload_len);
  return o;
}

json_t *cli_pool_item_json(const sqlq_pool_item *it, int with_token) {
  json_t *o = json_object();
  json_object_set_new(o, "item", cli_json_text(it->item));
  json_object_set_new(o, "id", json_integer(it->id));
  json_object_set_new(o, "uses", json_integer(it->uses));
  json_object_set_new(o, "last_used", cli_json_time(it->last_used_at_us, 1));
  json_object_set_new(o, "held_until", cli_json_time(it->held_until_us, 1));
  if (with_token) {
    json_object_set_new(o, "token", it->token ? json_integer(it->token) : json_null());
  }
  return o;
}
