/*
** mariadb-kill-probe.c -- what interrupting waiting statements costs the
** killer, by what they wait in (bench/run-mariadb-wake.sh builds and runs
** it).
**
** Usage: mariadb-kill-probe PORT sleep|lock ROUNDS
**
** Four sessions, kept for every round as a worker keeps its session, send
** "SELECT /\*sqlq-wait:TAG*\/ 2 + SLEEP(5)" (sleep) or "... 2 + GET_LOCK(name,
** 5)" on a lock a fifth session holds (lock); after 100 ms a sixth calls
** sqlq_wake(queue, 4).  Prints one line per round: the milliseconds the
** CALL took and those until all four waiters had their answer.  Needs the
** sqlq schema in database sqlq, user sqlq, on 127.0.0.1:PORT.
*/
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAITERS 4

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static MYSQL *connect_to(unsigned port) {
  MYSQL *m = mysql_init(NULL);
  if (m == NULL || !mysql_real_connect(m, "127.0.0.1", "sqlq", NULL, "sqlq", port, NULL, 0)) {
    fprintf(stderr, "mariadb-kill-probe: %s\n", m ? mysql_error(m) : "out of memory");
    exit(1);
  }
  return m;
}

/* Run sql on m and drop its results; exit on an error. */
static void run(MYSQL *m, const char *sql) {
  if (mysql_query(m, sql) != 0) {
    fprintf(stderr, "mariadb-kill-probe: %s: %s\n", sql, mysql_error(m));
    exit(1);
  }
  do {
    MYSQL_RES *r = mysql_store_result(m);
    if (r) mysql_free_result(r);
  } while (mysql_next_result(m) == 0);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[2], "sleep") && strcmp(argv[2], "lock"))) {
    fprintf(stderr, "usage: mariadb-kill-probe PORT sleep|lock ROUNDS\n");
    return 64;
  }
  unsigned port = (unsigned)atoi(argv[1]);
  int lock = strcmp(argv[2], "lock") == 0, rounds = atoi(argv[3]);
  MYSQL *killer = connect_to(port), *holder = connect_to(port), *w[WAITERS];
  for (int i = 0; i < WAITERS; i++) w[i] = connect_to(port);
  run(killer, "SELECT 1");
  char tag[33] = "";
  if (mysql_query(killer, "SELECT MD5(CONCAT(DATABASE(), '/', 'probe'))") == 0) {
    MYSQL_RES *r = mysql_store_result(killer);
    MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
    if (row && row[0]) snprintf(tag, sizeof tag, "%s", row[0]);
    if (r) mysql_free_result(r);
  }
  if (lock) run(holder, "DO GET_LOCK('sqlq-probe-block', 0)");
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT /*sqlq-wait:%s*/ 2 + %s", tag,
           lock ? "GET_LOCK('sqlq-probe-block', 5)" : "SLEEP(5)");
  for (int k = 0; k < rounds; k++) {
    for (int i = 0; i < WAITERS; i++) mysql_send_query(w[i], sql, (unsigned long)strlen(sql));
    usleep(100000);
    double t0 = now_ms();
    run(killer, "CALL sqlq_wake('probe', 4)");
    double t1 = now_ms();
    for (int i = 0; i < WAITERS; i++) {
      mysql_read_query_result(w[i]);
      MYSQL_RES *r = mysql_store_result(w[i]);
      if (r) mysql_free_result(r);
    }
    printf("%.3f %.3f\n", t1 - t0, now_ms() - t0);
  }
  return 0;
}
