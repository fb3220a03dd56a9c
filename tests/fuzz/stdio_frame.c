/*
** stdio_frame.c -- fuzz the parser of the answers of `sqlq work --stdio`
** handlers (src/cli/stdio_frame.c, docs/protocol.md).
**
** The input is one line a handler wrote, any bytes.  What must hold:
**   - stdio_parse_answer() returns 0 or -1, never reads past the line;
**   - a refusal's reason is non-empty printable ASCII (it quotes nothing
**     of the line, whose bytes may be anything);
**   - an accepted answer is of a known kind, with an id above 0 for every
**     kind but hello, a protocol above 0 for hello, a delay or backoff of
**     -1 (not given) or in [0, 3.2e9], and a NUL-terminated error text;
**   - and the sanitizers' checks.
*/
#include <stdlib.h>
#include <string.h>

#include "cli/stdio_frame.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy of exactly size bytes, so that ASan catches a read past it. */
  char *line = malloc(size > 0 ? size : 1), why[200];
  stdio_answer a;
  int rc;
  if (line == NULL) return 0;
  memcpy(line, data, size);
  rc = stdio_parse_answer(line, size, &a, why, sizeof why);
  FZ_CHECK(rc == 0 || rc == -1, "stdio_parse_answer returned %d", rc);
  if (rc != 0) {
    size_t i, n = strlen(why);
    FZ_CHECK(n > 0, "an empty reason");
    for (i = 0; i < n; i++) {
      FZ_CHECK(why[i] >= 0x20 && why[i] < 0x7f, "the reason has byte 0x%02x",
               (unsigned char)why[i]);
    }
  } else if (a.kind == STDIO_HELLO) {
    FZ_CHECK(a.protocol > 0, "hello with protocol %d", a.protocol);
  } else {
    FZ_CHECK(a.kind == STDIO_ACK || a.kind == STDIO_FAIL || a.kind == STDIO_RELEASE ||
               a.kind == STDIO_TOUCH,
             "kind %d", (int)a.kind);
    FZ_CHECK(a.id > 0, "id %lld", (long long)a.id);
    FZ_CHECK(a.seconds == -1 || (a.seconds >= 0 && a.seconds <= 3.2e9), "seconds %g", a.seconds);
    FZ_CHECK(memchr(a.error, '\0', sizeof a.error) != NULL, "error text not terminated");
  }
  free(line);
  return 0;
}
