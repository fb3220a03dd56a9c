/*
** common.c -- helpers of the fuzzing harnesses (see fuzz.h).
*/
#include <ftw.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "fuzz.h"

void fz_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "fuzz invariant broken at %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

uint8_t fz_byte(fz_input *in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}

uint32_t fz_u32(fz_input *in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | fz_byte(in);
  return v;
}

unsigned char *fz_bytes(fz_input *in, size_t len, size_t *got) {
  if (len > in->n) len = in->n;
  unsigned char *s = malloc(len + 1);
  FZ_CHECK(s != NULL, "out of memory");
  if (len) memcpy(s, in->p, len);
  s[len] = '\0';
  in->p += len;
  in->n -= len;
  *got = len;
  return s;
}

char *fz_string(fz_input *in, size_t max_len) {
  size_t len = fz_byte(in) % (max_len + 1), got;
  return (char *)fz_bytes(in, len, &got);
}

/* Whether the n bytes at s are UTF-8 without a NUL (and, unless controls,
** without an ASCII control character). */
static int utf8_ok(const char *s, size_t n, int controls) {
  static locale_t utf8;
  if (utf8 == (locale_t)0) {
    utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    FZ_CHECK(utf8 != (locale_t)0, "no C.UTF-8 locale");
  }
  locale_t old = uselocale(utf8);
  mbstate_t st;
  memset(&st, 0, sizeof st);
  int ok = 1;
  for (size_t i = 0; ok && i < n;) {
    wchar_t wc;
    size_t k = mbrtowc(&wc, s + i, n - i, &st);
    /* glibc decodes the 5- and 6-byte forms of old, up to 0x7fffffff: past
    ** U+10FFFF is not UTF-8 any more. */
    ok = k != (size_t)-1 && k != (size_t)-2 && k != 0 && wc <= 0x10ffff &&
         (controls || (wc >= 0x20 && wc != 0x7f));
    if (ok) i += k;
  }
  uselocale(old);
  return ok;
}

int fz_valid_text(const char *s, size_t max) {
  size_t n = strlen(s);
  return n > 0 && n <= max && utf8_ok(s, n, 0);
}

int fz_valid_utf8(const char *s, size_t n) {
  return utf8_ok(s, n, 1);
}

static char scratch[256];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void remove_scratch(void) {
  if (scratch[0]) nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_scratch_dir(void) {
  if (scratch[0]) return scratch;
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch, sizeof scratch, "%s/sqlq-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  FZ_CHECK(mkdtemp(scratch) != NULL, "cannot make a directory in %s", scratch);
  atexit(remove_scratch);
  return scratch;
}

sqlq_db *fz_open_init(const char *url, size_t payload_limit) {
  sqlq_options opts = {.size = sizeof(sqlq_options), .payload_limit = payload_limit};
  sqlq_db *db = NULL;
  FZ_STATUS(db, sqlq_open(url, &opts, &db), SQLQ_OK);
  FZ_STATUS(db, sqlq_init(db, NULL), SQLQ_OK);
  return db;
}

sqlq_queue_stats fz_stats(sqlq_db *db, const char *queue) {
  sqlq_queue_stats *s = NULL, out;
  size_t n = 0;
  FZ_STATUS(db, sqlq_stats(db, queue, &s, &n), SQLQ_OK);
  FZ_CHECK(n <= 1, "stats of one queue gave %zu rows", n);
  memset(&out, 0, sizeof out);
  if (n == 1) out = s[0];
  sqlq_queue_stats_free(s, n);
  return out;
}
