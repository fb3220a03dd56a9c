/*
** beanstalk.c -- beanstalkd in the measurement of bench/peers/harness.mjs
** (the same as `sqlq bench`), through beanstalkd's text protocol on TCP.
**
** Usage: beanstalk PORT JOBS WORKERS SAMPLES
**
** One producer and W worker threads, each with its own connection to
** 127.0.0.1:PORT.  The producer puts N jobs one at a time (the protocol
** has no batch put); each worker loops on reserve-with-timeout and
** delete.  Each job's 16-byte body starts with its enqueue time
** (CLOCK_REALTIME, microseconds, decimal).  Then K latency samples: put one
** job, wait until it is deleted, pause 1 ms.  Prints one JSON line with
** the keys of `sqlq bench --json` (batch 1); exits 1 with a message on
** stderr when anything fails.
*/
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The state the producer and the workers share. */
static struct {
  int port;
  atomic_int latency_phase; /* 0: throughput, 1: latency samples */
  atomic_int ready;         /* workers connected */
  atomic_long done;         /* throughput jobs deleted */
  atomic_long lat_done;     /* latency jobs deleted */
  atomic_long last_done_ns; /* CLOCK_MONOTONIC of the latest delete */
  double *lat_us;           /* latency samples, microseconds */
  long n_lat;
} g;

static void die(const char *what) {
  fprintf(stderr, "beanstalk: %s\n", what);
  exit(1);
}

static long long clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A connection with a small read buffer: replies are read line by line. */
typedef struct conn {
  int fd;
  char buf[4096];
  size_t len;
} conn;

static void conn_open(conn *c) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g.port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  c->len = 0;
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0)
    die("cannot connect");
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void conn_send(conn *c, const char *s, size_t n) {
  while (n > 0) {
    ssize_t k = write(c->fd, s, n);
    if (k <= 0)
      die("write failed");
    s += k;
    n -= (size_t)k;
  }
}

/* Read one reply line ending in \r\n into line (without it).  The bytes
** after it stay buffered. */
static void conn_line(conn *c, char *line, size_t cap) {
  for (;;) {
    char *end = memmem(c->buf, c->len, "\r\n", 2);
    if (end) {
      size_t n = (size_t)(end - c->buf);
      if (n >= cap)
        die("reply too long");
      memcpy(line, c->buf, n);
      line[n] = 0;
      c->len -= n + 2;
      memmove(c->buf, end + 2, c->len);
      return;
    }
    if (c->len == sizeof c->buf)
      die("reply too long");
    ssize_t k = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (k <= 0)
      die("connection closed");
    c->len += (size_t)k;
  }
}

/* put one job stamped now and read INSERTED. */
static void put_job(conn *c) {
  char body[24], cmd[64], line[128];
  /* 16 digits: microseconds since the epoch until the year 2286. */
  int len = snprintf(body, sizeof body, "%016lld", clock_ns(CLOCK_REALTIME) / 1000);
  int n = snprintf(cmd, sizeof cmd, "put 0 0 60 %d\r\n%s\r\n", len, body);
  conn_send(c, cmd, (size_t)n);
  conn_line(c, line, sizeof line);
  if (strncmp(line, "INSERTED ", 9) != 0)
    die(line);
}

/* A worker: reserve (timing out after 1 s, then again), take the
** latency sample when in that phase, delete, count; return after deleting
** a job whose body is "stop". */
static void *worker(void *arg) {
  (void)arg;
  conn c;
  char line[128], body[128], cmd[64];
  conn_open(&c);
  atomic_fetch_add(&g.ready, 1);
  for (;;) {
    conn_send(&c, "reserve-with-timeout 1\r\n", 24);
    conn_line(&c, line, sizeof line);
    long long now_us = clock_ns(CLOCK_REALTIME) / 1000;
    unsigned long long id;
    int bytes;
    if (strncmp(line, "TIMED_OUT", 9) == 0 || strncmp(line, "DEADLINE_SOON", 13) == 0)
      continue;
    if (sscanf(line, "RESERVED %llu %d", &id, &bytes) != 2)
      die(line);
    conn_line(&c, body, sizeof body);
    int lat = atomic_load(&g.latency_phase);
    int n = snprintf(cmd, sizeof cmd, "delete %llu\r\n", id);
    conn_send(&c, cmd, (size_t)n);
    conn_line(&c, line, sizeof line);
    if (strcmp(line, "DELETED") != 0)
      die(line);
    if (strcmp(body, "stop") == 0)
      break;
    if (lat) {
      long k = atomic_load(&g.lat_done);
      if (k < g.n_lat)
        g.lat_us[k] = (double)(now_us - atoll(body));
      atomic_fetch_add(&g.lat_done, 1);
    } else {
      atomic_store(&g.last_done_ns, clock_ns(CLOCK_MONOTONIC));
      atomic_fetch_add(&g.done, 1);
    }
  }
  close(c.fd);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile q of the n sorted samples, in ms. */
static double rank_ms(const double *v, long n, double q) {
  long i = (long)(q * (double)n + 0.999999) - 1;
  if (i < 0)
    i = 0;
  if (i >= n)
    i = n - 1;
  return v[i] / 1000.0;
}

int main(int argc, char **argv) {
  if (argc != 5)
    die("usage: beanstalk PORT JOBS WORKERS SAMPLES");
  g.port = atoi(argv[1]);
  long jobs = atol(argv[2]), workers = atol(argv[3]);
  g.n_lat = atol(argv[4]);
  if (jobs < 1 || workers < 1 || workers > 64 || g.n_lat < 0)
    die("bad arguments");
  g.lat_us = calloc((size_t)g.n_lat + 1, sizeof *g.lat_us);
  pthread_t th[64];
  for (long i = 0; i < workers; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  while (atomic_load(&g.ready) < workers)
    usleep(100);

  conn p;
  conn_open(&p);
  long long t0 = clock_ns(CLOCK_MONOTONIC);
  for (long i = 0; i < jobs; i++)
    put_job(&p);
  long long t1 = clock_ns(CLOCK_MONOTONIC);
  while (atomic_load(&g.done) < jobs)
    usleep(50);
  long long t2 = atomic_load(&g.last_done_ns);

  atomic_store(&g.latency_phase, 1);
  for (long i = 0; i < g.n_lat; i++) {
    put_job(&p);
    while (atomic_load(&g.lat_done) <= i)
      usleep(20);
    usleep(1000);
  }
  /* One "stop" job a worker ends them, each taking exactly one, so that
  ** none is left in the tube for the next run. */
  for (long i = 0; i < workers; i++) {
    char line[64];
    conn_send(&p, "put 0 0 60 4\r\nstop\r\n", 20);
    conn_line(&p, line, sizeof line);
  }
  for (long i = 0; i < workers; i++)
    pthread_join(th[i], NULL);
  close(p.fd);

  qsort(g.lat_us, (size_t)g.n_lat, sizeof *g.lat_us, cmp_double);
  printf("{\"backend\": \"beanstalkd\", \"jobs\": %ld, \"workers\": %ld, \"batch\": 1, "
         "\"enqueue_per_s\": %.0f, \"jobs_per_s\": %.0f, \"latency_ms\": ",
         jobs, workers, (double)jobs / ((double)(t1 - t0) / 1e9),
         (double)jobs / ((double)(t2 - t0) / 1e9));
  if (g.n_lat > 0)
    printf("{\"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f}}\n", rank_ms(g.lat_us, g.n_lat, 0.5),
           rank_ms(g.lat_us, g.n_lat, 0.9), rank_ms(g.lat_us, g.n_lat, 0.99));
  else
    printf("{\"p50\": null, \"p90\": null, \"p99\": null}}\n");
  return 0;
}
