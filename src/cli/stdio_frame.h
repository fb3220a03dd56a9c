/*
** stdio_frame.h -- the framing of `sqlq work --stdio` (docs/protocol.md):
** JSON lines between the worker and its handler processes.  The worker
** writes a hello line and one line per job; the handler writes a hello
** line and one line per answer.  This file turns a job into its line and
** a handler's line into an answer, checking everything the protocol says
** of it; work_stdio.c does the rest.  Pure functions, no I/O.
*/
#ifndef SQLQ_CLI_STDIO_FRAME_H
#define SQLQ_CLI_STDIO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "sqlq.h"

/* The version of the protocol this worker speaks. */
#define STDIO_PROTOCOL 1

/* The longest line a handler may write, newline excluded, in bytes: an
** answer is small (an error text is kept to 4096 bytes). */
#define STDIO_LINE_MAX 65536

/* The longest error text kept from a fail answer, as sqlq_fail() keeps. */
#define STDIO_ERROR_MAX 4096

/* What a handler's line says. */
enum stdio_kind { STDIO_HELLO, STDIO_ACK, STDIO_FAIL, STDIO_RELEASE, STDIO_TOUCH };

/* One parsed line of a handler.  Fields a kind does not have are zero. */
typedef struct stdio_answer {
  enum stdio_kind kind;
  int protocol; /* hello: the version the handler speaks */
  int64_t id;   /* the others: the job's id and its claim's token */
  int64_t token;
  double seconds;                  /* fail: "backoff", release: "delay"; -1 when not given */
  int dead;                        /* fail: "dead": true */
  char error[STDIO_ERROR_MAX + 1]; /* fail: "error", cut to STDIO_ERROR_MAX bytes */
} stdio_answer;

/* Parse the len bytes of line (no newline; any bytes) into *out.  Returns
** 0, or -1 with a short reason (printable text that quotes nothing of the
** line) in why (why_size bytes). */
int stdio_parse_answer(const char *line, size_t len, stdio_answer *out, char *why, size_t why_size);

/* The most bytes stdio_job_line() writes for job, with queue_json the
** queue's name as a JSON string of queue_json_len bytes. */
size_t stdio_job_line_size(const sqlq_job *job, size_t queue_json_len);

/* Write the line (newline included, no NUL) of job into out, which has
** room for stdio_job_line_size() bytes.  Returns its length. */
size_t stdio_job_line(char *out, const sqlq_job *job, const char *queue_json);

/* Write the worker's hello line (newline included, NUL-terminated) into
** out (size bytes), for handler number handler (from 1) of a worker on
** the queue whose name as a JSON string is queue_json, with window jobs in
** flight at most, leases of lease seconds and jobs that must be answered
** within timeout seconds of their claim (0: no limit).  Returns its
** length, or 0 when it does not fit. */
size_t stdio_hello_line(char *out, size_t size, const char *queue_json, int handler, int window,
                        double lease, double timeout);

/* The room stdio_cancel_line() needs. */
#define STDIO_CANCEL_LINE_SIZE 96

/* Write the line (newline included, NUL-terminated) that tells a handler
** that the job id, whose claim's token is token, was cancelled into out
** (STDIO_CANCEL_LINE_SIZE bytes).  Returns its length. */
size_t stdio_cancel_line(char *out, int64_t id, int64_t token);

#endif /* SQLQ_CLI_STDIO_FRAME_H */
