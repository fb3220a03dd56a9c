/*
** main.c -- runs every group of the conformance suite.
**
** Usage: sqlq_conformance [PATTERN]
** PATTERN, when given, is a cmocka test filter ("lease_*") that selects
** the tests to run by name.  The database is taken from SQLQ_TEST_URL (see
** harness.h).  The exit status is 0 when every test passed, 1 otherwise.
*/
#include <stdio.h>

#include "harness.h"

/* One group of the suite. */
typedef int (*group_fn)(void);

int main(int argc, char **argv) {
  static const group_fn groups[] = {
    run_schema_tests, run_enqueue_tests,     run_claim_tests,        run_admin_tests,
    run_wait_tests,   run_concurrency_tests, run_lock_tests,         run_input_tests,
    run_ring_tests,   run_pool_tests,        run_subscription_tests, run_batch_tests,
    run_cron_tests,   run_retention_tests,   run_limit_tests,        run_deps_tests,
    run_rate_tests,   run_cancel_tests,      run_fair_tests,         run_counts_tests,
    run_list_tests,
  };
  size_t i;
  int failed = 0;
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  for (i = 0; i < sizeof groups / sizeof groups[0]; i++) failed += groups[i]();
  printf("conformance (%s): %d test(s) failed\n", fx_backend_label(), failed);
  return failed == 0 ? 0 : 1;
}
