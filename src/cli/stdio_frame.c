/*
** stdio_frame.c -- the lines of the `sqlq work --stdio` protocol: jobs
** out, answers in.  The contract is in stdio_frame.h, the protocol in
** docs/protocol.md.
*/
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stdio_frame.h"

/* The longest delay or backoff an answer may ask for, in seconds: what
** sqlq_release() takes (sqlq_fail() caps its backoff at one day itself). */
#define SECONDS_MAX 3.2e9

static int refuse(char *why, size_t why_size, const char *fmt, const char *arg) {
  snprintf(why, why_size, fmt, arg);
  return -1;
}

/* Read the job's id and token of the answer o into out. */
static int parse_ref(json_t *o, stdio_answer *out, char *why, size_t why_size) {
  json_t *id = json_object_get(o, "id"), *token = json_object_get(o, "token");
  const char *t;
  char *end;
  if (!json_is_integer(id) || json_integer_value(id) <= 0) {
    return refuse(why, why_size, "%s has no \"id\" that is a whole number above 0",
                  json_string_value(json_object_get(o, "type")));
  }
  out->id = json_integer_value(id);
  t = json_string_value(token);
  if (t == NULL || *t < '0' || *t > '9') {
    return refuse(why, why_size, "%s has no \"token\" that is a string of digits",
                  json_string_value(json_object_get(o, "type")));
  }
  errno = 0;
  out->token = (int64_t)strtoll(t, &end, 10);
  if (*end != '\0' || errno != 0) {
    return refuse(why, why_size, "%s has no \"token\" that is a string of digits",
                  json_string_value(json_object_get(o, "type")));
  }
  return 0;
}

/* Read the optional number of seconds called name of o into *out (-1 when
** absent). */
static int parse_seconds(json_t *o, const char *name, double *out, char *why, size_t why_size) {
  json_t *v = json_object_get(o, name);
  *out = -1;
  if (v == NULL) {
    return 0;
  }
  if (!json_is_number(v) || !(json_number_value(v) >= 0) || json_number_value(v) > SECONDS_MAX) {
    return refuse(why, why_size, "\"%s\" is not a number of seconds in [0, 3.2e9]", name);
  }
  *out = json_number_value(v);
  return 0;
}

/* Read the fields of a fail answer o into out. */
static int parse_fail(json_t *o, stdio_answer *out, char *why, size_t why_size) {
  json_t *error = json_object_get(o, "error"), *dead = json_object_get(o, "dead");
  if (error != NULL && !json_is_string(error)) {
    return refuse(why, why_size, "%s", "\"error\" is not a string");
  }
  if (dead != NULL && !json_is_boolean(dead)) {
    return refuse(why, why_size, "%s", "\"dead\" is not true or false");
  }
  out->dead = json_is_true(dead);
  snprintf(out->error, sizeof out->error, "%s", error != NULL ? json_string_value(error) : "");
  return parse_seconds(o, "backoff", &out->seconds, why, why_size);
}

/* Read the answer object o into out. */
static int parse_object(json_t *o, stdio_answer *out, char *why, size_t why_size) {
  static const struct {
    const char *name;
    enum stdio_kind kind;
  } kinds[] = {{"ack", STDIO_ACK},
               {"fail", STDIO_FAIL},
               {"release", STDIO_RELEASE},
               {"touch", STDIO_TOUCH},
               {"hello", STDIO_HELLO}};
  const char *type = json_string_value(json_object_get(o, "type"));
  size_t i;
  if (type == NULL) {
    return refuse(why, why_size, "%s", "the line has no \"type\" string");
  }
  for (i = 0; i < sizeof kinds / sizeof kinds[0] && strcmp(type, kinds[i].name) != 0; i++) {}
  if (i == sizeof kinds / sizeof kinds[0]) {
    return refuse(why, why_size, "%s", "unknown \"type\"");
  }
  out->kind = kinds[i].kind;
  out->seconds = -1;
  if (out->kind == STDIO_HELLO) {
    json_t *p = json_object_get(o, "protocol");
    if (!json_is_integer(p) || json_integer_value(p) < 1 || json_integer_value(p) > INT32_MAX) {
      return refuse(why, why_size, "%s",
                    "hello has no \"protocol\" that is a whole number above 0");
    }
    out->protocol = (int)json_integer_value(p);
    return 0;
  }
  if (parse_ref(o, out, why, why_size) != 0) {
    return -1;
  }
  if (out->kind == STDIO_FAIL) {
    return parse_fail(o, out, why, why_size);
  }
  return out->kind == STDIO_RELEASE ? parse_seconds(o, "delay", &out->seconds, why, why_size) : 0;
}

int stdio_parse_answer(const char *line, size_t len, stdio_answer *out, char *why,
                       size_t why_size) {
  json_error_t err;
  json_t *o;
  int rc;
  memset(out, 0, sizeof *out);
  o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
  if (!json_is_object(o)) {
    snprintf(why, why_size, "not a JSON object (%s at byte %d)",
             o == NULL ? "bad JSON" : "another JSON value", o == NULL ? err.position : 0);
    json_decref(o);
    return -1;
  }
  rc = parse_object(o, out, why, why_size);
  json_decref(o);
  return rc;
}

/* The fixed part of a job's line: its text without the queue and the
** payload, with room for the largest numbers. */
static const char job_format[] =
  "{\"type\":\"job\",\"id\":%" PRId64 ",\"token\":\"%" PRId64 "\",\"attempt\":%d,"
  "\"deadline\":%" PRId64 ".%06" PRId64 ",\"queue\":%s,\"payload\":\"";

size_t stdio_job_line_size(const sqlq_job *job, size_t queue_json_len) {
  return sizeof job_format + 4 * 21 + 11 + queue_json_len + CLI_BASE64_SIZE(job->payload_len) + 3;
}

size_t stdio_job_line(char *out, const sqlq_job *job, const char *queue_json) {
  int64_t until = job->lease_until_us > 0 ? job->lease_until_us : 0;
  size_t n = (size_t)sprintf(out, job_format, job->id, job->token, job->attempts, until / 1000000,
                             until % 1000000, queue_json);
  n += cli_base64(job->payload, job->payload_len, out + n);
  memcpy(out + n, "\"}\n", 3);
  return n + 3;
}

size_t stdio_hello_line(char *out, size_t size, const char *queue_json, int handler, int window,
                        double lease, double timeout) {
  int n = snprintf(out, size,
                   "{\"type\":\"hello\",\"protocol\":%d,\"sqlq\":\"%s\",\"queue\":%s,"
                   "\"handler\":%d,\"window\":%d,\"lease\":%.17g,\"timeout\":%.17g}\n",
                   STDIO_PROTOCOL, sqlq_version(), queue_json, handler, window, lease, timeout);
  return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

size_t stdio_cancel_line(char *out, int64_t id, int64_t token) {
  int n =
    snprintf(out, STDIO_CANCEL_LINE_SIZE,
             "{\"type\":\"cancel\",\"id\":%" PRId64 ",\"token\":\"%" PRId64 "\"}\n", id, token);
  return n > 0 ? (size_t)n : 0;
}
