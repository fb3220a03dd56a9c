/*
** fuzz.h -- what the fuzzing harnesses of tests/fuzz share.
**
** Each harness is one file that defines the libFuzzer entry points
** LLVMFuzzerTestOneInput() (and LLVMFuzzerInitialize() when it sets
** something up once).  With -DSQLQ_FUZZ=ON (clang) each is linked with
** libFuzzer into fuzz_NAME; in the other builds each is linked with
** replay.c into replay_NAME, which runs the inputs of the seed corpus
** once, so that every reproducer kept there is a regression test of the
** normal and the sanitizer builds too.
**
** A harness checks its invariants with FZ_CHECK(), which prints what was
** wrong and aborts: libFuzzer then reports the input as a crash.
*/
#ifndef SQLQ_FUZZ_H
#define SQLQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "sqlq.h"

/* The libFuzzer entry points every harness defines (Initialize is
** optional: replay.c calls it when it is there). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "fuzz invariant broken: " + the message on stderr and abort(). */
void fz_fail(const char *file, int line, const char *fmt, ...)
  __attribute__((format(printf, 3, 4), noreturn));
#define FZ_CHECK(cond, ...) \
  do { \
    if (!(cond)) fz_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
/* FZ_CHECK() that a library call returned want, naming the call, both
** statuses and the handle's message. */
#define FZ_STATUS(db, call, want) \
  do { \
    int fz_got_ = (call); \
    FZ_CHECK(fz_got_ == (want), "%s returned %s, expected %s (%s)", #call, \
             sqlq_status_name(fz_got_), sqlq_status_name(want), sqlq_errmsg(db)); \
  } while (0)

/* The input, read front to back.  Past its end every read gives zeros and
** empty strings, so that any input decodes into something. */
typedef struct fz_input {
  const uint8_t *p;
  size_t n;
} fz_input;

uint8_t fz_byte(fz_input *in);
uint32_t fz_u32(fz_input *in);
/* A malloc'ed NUL-terminated string of the next bytes: its length is one
** byte of the input (0 to max_len); a NUL among the bytes ends the string
** early, as it would for a C caller.  Never NULL (aborts when memory ran
** out). */
char *fz_string(fz_input *in, size_t max_len);
/* The next len bytes (fewer at the end of the input) into a malloc'ed
** buffer with a NUL after them; *got receives how many. */
unsigned char *fz_bytes(fz_input *in, size_t len, size_t *got);

/* The oracle of sqlq's names (queue, ring and pool names, keys, pool
** items, table names): 1 to max bytes of valid UTF-8 without an ASCII
** control character.  Written apart from the library's check (it asks the
** C library's UTF-8 decoder), so that the two can disagree. */
int fz_valid_text(const char *s, size_t max);
/* Whether the n bytes at s are valid UTF-8 without a NUL; control
** characters are fine. */
int fz_valid_utf8(const char *s, size_t n);

/* A private temporary directory, made on first use and removed (with
** everything in it) at exit. */
const char *fz_scratch_dir(void);

/* Open url with the payload limit (0: the default), asserting success, and
** create the schema. */
sqlq_db *fz_open_init(const char *url, size_t payload_limit);

/* The counts of queue on db (all zero when the queue is unknown). */
sqlq_queue_stats fz_stats(sqlq_db *db, const char *queue);

#endif /* SQLQ_FUZZ_H */
