/*
** util.c -- small helpers of the core and the drivers: time and deadlines,
** hashing, tokens, UTF-8 and name validation, socket keepalives, the order
** of job ids, and the pacing of reconnects (sqlq__backoff).
*/
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "sqlq_int.h"

int64_t sqlq__seconds_to_us(double s) {
  if (!(s == s)) return 0;               /* NaN */
  if (s >= 9.2e12) return INT64_MAX / 2; /* about 290,000 years */
  if (s <= -9.2e12) return -(INT64_MAX / 2);
  return (int64_t)llround(s * 1e6);
}

int64_t sqlq__monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sqlq__keepalive(int fd) {
  const int on = 1, idle = SQLQ__KEEPIDLE_S, intvl = SQLQ__KEEPINTVL_S, cnt = SQLQ__KEEPCNT;
  const unsigned user_timeout = SQLQ__USER_TIMEOUT_MS;
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) != 0) return;
  /* A socket that is not TCP refuses these: nothing to do. */
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
}

int64_t sqlq__monotonic_after(double seconds) {
  /* SQLQ__SECONDS_MAX added to the clock's few years since boot stays far
  ** from INT64_MAX nanoseconds. */
  double ns = !(seconds > 0)                ? 0
              : seconds > SQLQ__SECONDS_MAX ? SQLQ__SECONDS_MAX * 1e9
                                            : seconds * 1e9;
  return sqlq__monotonic_ns() + (int64_t)ns;
}

uint64_t sqlq__hash64(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

size_t sqlq__utf8_seq(const unsigned char *s, size_t n) {
  size_t len;
  uint32_t cp;
  if (s[0] < 0x80) return 1;
  if ((s[0] & 0xE0) == 0xC0) {
    len = 2;
    cp = s[0] & 0x1F;
  } else if ((s[0] & 0xF0) == 0xE0) {
    len = 3;
    cp = s[0] & 0x0F;
  } else if ((s[0] & 0xF8) == 0xF0) {
    len = 4;
    cp = s[0] & 0x07;
  } else
    return 0;
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* Check that text holds valid UTF-8, without control characters unless
** controls is set. */
static int clean_text(const char *text, size_t n, int controls) {
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < n;) {
    if (!controls && (s[i] < 0x20 || s[i] == 0x7F)) return 0;
    size_t k = sqlq__utf8_seq(s + i, n - i);
    if (k == 0) return 0;
    i += k;
  }
  return 1;
}

int sqlq__check_text(sqlq_db *db, const char *text, size_t max, const char *what) {
  if (text == NULL || text[0] == '\0') return sqlq__error(db, SQLQ_MISUSE, "%s is empty", what);
  size_t n = strnlen(text, max + 1);
  if (n > max) return sqlq__error(db, SQLQ_MISUSE, "%s is longer than %zu bytes", what, max);
  if (!clean_text(text, n, 0))
    return sqlq__error(db, SQLQ_MISUSE, "%s holds a control character or invalid UTF-8", what);
  return SQLQ_OK;
}

int sqlq__check_queue(sqlq_db *db, const char *queue) {
  return sqlq__check_text(db, queue, SQLQ_QUEUE_NAME_MAX, "queue name");
}

int sqlq__check_stored_queue(sqlq_db *db, const char *queue) {
  size_t n = queue ? strnlen(queue, SQLQ_QUEUE_NAME_MAX + 1) : 0;
  if (n == 0 || n > SQLQ_QUEUE_NAME_MAX) return sqlq__check_queue(db, queue);
  if (!clean_text(queue, n, 1))
    return sqlq__error(db, SQLQ_MISUSE, "queue name is not valid UTF-8");
  return SQLQ_OK;
}

int sqlq__check_key(sqlq_db *db, const char *key, const char *what) {
  return key == NULL ? SQLQ_OK : sqlq__check_text(db, key, SQLQ_KEY_MAX, what);
}

int64_t sqlq__new_token(void) {
  uint64_t t = 0;
  while (t == 0) {
    if (getrandom(&t, sizeof t, 0) != (ssize_t)sizeof t) t = (uint64_t)sqlq__monotonic_ns();
    t &= UINT64_C(0x7fffffffffffffff);
  }
  return (int64_t)t;
}

int sqlq__poll_ms(int64_t deadline_ns) {
  if (deadline_ns < 0) return -1;
  int64_t d = deadline_ns - sqlq__monotonic_ns();
  if (d <= 0) return 0;
  return d / 1000000 >= 2000000000 ? 2000000000 : (int)((d + 999999) / 1000000);
}

int sqlq__id_order(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int sqlq__id_set(sqlq_db *db, const int64_t *ids, size_t n, int64_t **out, size_t *n_out) {
  int64_t *v = malloc(n * sizeof *v);
  if (v == NULL) return sqlq__error(db, SQLQ_NOMEM, "out of memory");
  memcpy(v, ids, n * sizeof *v);
  qsort(v, n, sizeof *v, sqlq__id_order);
  size_t k = 1;
  for (size_t i = 1; i < n; i++)
    if (v[i] != v[k - 1]) v[k++] = v[i];
  *out = v;
  *n_out = k;
  return SQLQ_OK;
}

#define BACKOFF_FIRST_NS 50000000LL
#define BACKOFF_MAX_NS 2000000000LL

int64_t sqlq__backoff_wait_ns(const sqlq__backoff *b) {
  int64_t d = b->retry_at_ns - sqlq__monotonic_ns();
  return d > 0 ? d : 0;
}

void sqlq__backoff_result(sqlq__backoff *b, int ok) {
  if (ok) {
    b->pause_ns = 0;
    b->retry_at_ns = 0;
    return;
  }
  b->pause_ns = b->pause_ns ? b->pause_ns * 2 : BACKOFF_FIRST_NS;
  if (b->pause_ns > BACKOFF_MAX_NS) b->pause_ns = BACKOFF_MAX_NS;
  b->retry_at_ns = sqlq__monotonic_ns() + b->pause_ns;
}
