/*
** read_stdin.c -- reading all of a command's stdin (a payload) into
** memory, up to a limit.
*/
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

unsigned char *cli_read_stdin(size_t limit, size_t *len) {
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap + 1);
  *len = 0;
  while (buf != NULL) {
    ssize_t got;
    if (n == cap) {
      unsigned char *bigger = realloc(buf, cap * 2 + 1);
      if (bigger == NULL) {
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    got = read(STDIN_FILENO, buf + n, cap - n);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      break;
    }
    if (got == 0) {
      buf[n] = '\0';
      *len = n;
      return buf;
    }
    n += (size_t)got;
    if (n > limit) {
      *len = limit + 1;
      break;
    }
  }
  free(buf);
  return NULL;
}
