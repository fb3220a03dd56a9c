/*
** params.c -- every statement of a server dialect names only parameters
** its driver can bind.  PostgreSQL's statement holds the values of $1 to
** $PG_MAX_PARAMS in fixed arrays, and its bind methods refuse a slot past
** them (SQLQ_MISUSE) rather than write past the arrays; MariaDB's
** rewriting of $N into `?` takes $1 to $MY_MAX_PARAMS.  Both refuse at run
** time, on a user's call: this test reads the statement texts themselves,
** so that a statement that names one more parameter fails here first.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "dialects.h"

/* The highest N of the $N the text names (0 when none). */
static int highest_param(const char *text) {
  int highest = 0;
  for (const char *p = text; *p; p++) {
    if (*p != '$' || p[1] < '0' || p[1] > '9') continue;
    int n = (int)strtol(p + 1, NULL, 10);
    if (n > highest) highest = n;
  }
  return highest;
}

/* Every statement of sql (count of them, NULL where the dialect has none)
** names at most max parameters; and a text with $N past it is seen. */
static void check_dialect(const char *const *sql, int count, int max) {
  for (int i = 0; i < count; i++) {
    if (sql[i] == NULL) continue;
    int n = highest_param(sql[i]);
    if (n > max) fail_msg("statement %d names $%d, past $%d: %.120s", i, n, max, sql[i]);
  }
  assert_int_equal(highest_param("SELECT $1, $12, $3"), 12);
  assert_int_equal(highest_param("SELECT '$' || x"), 0);
}

#if SQLQ_TEST_HAVE_POSTGRES
static void postgres_statements(void **state) {
  int count = 0, max = 0;
  const char *const *sql = dialect_postgres(&count, &max);
  (void)state;
  assert_true(count > 100 && max == 8);
  check_dialect(sql, count, max);
}
#endif

#if SQLQ_TEST_HAVE_MYSQL
static void mysql_statements(void **state) {
  int count = 0, max = 0;
  const char *const *sql = dialect_mysql(&count, &max);
  (void)state;
  assert_true(count > 100 && max == 10);
  check_dialect(sql, count, max);
}
#endif

static void texts_read(void **state) {
  (void)state;
  check_dialect(NULL, 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(texts_read),
#if SQLQ_TEST_HAVE_POSTGRES
    cmocka_unit_test(postgres_statements),
#endif
#if SQLQ_TEST_HAVE_MYSQL
    cmocka_unit_test(mysql_statements),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
