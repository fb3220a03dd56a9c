# tests/cli/ga_database.bash -- sourced after lib.sh by the Galera tests:
# creates a fresh database on the three-node cluster of the fixture
# "galera" (on node 1; the cluster replicates it), sets urls (an array of
# the three nodes' URLs of it) and url (node 1's), and drops it at exit.
# Defines `ga_sql N SQL`, which runs SQL on that database on node N (1 to
# 3) and prints its rows as tab-separated lines without a header, and
# `ga_conflicts`, the cluster's count so far of transactions that lost
# their certification or were aborted for a replicated one (the sum over
# the nodes of wsrep_local_cert_failures and wsrep_local_bf_aborts).
# Needs SQLQ_TEST_GA_URLS, SQLQ_TEST_GA_SERVER and SQLQ_TEST_GA_PORT.

[ -n "${SQLQ_TEST_GA_URLS:-}" ] || { echo "FAIL: SQLQ_TEST_GA_URLS is not set"; exit 1; }
[ -n "${SQLQ_TEST_GA_SERVER:-}" ] || { echo "FAIL: SQLQ_TEST_GA_SERVER is not set"; exit 1; }
[ -n "${SQLQ_TEST_GA_PORT:-}" ] || { echo "FAIL: SQLQ_TEST_GA_PORT is not set"; exit 1; }

ga_database="sqlq_test_$$"
ga_root() {
  $SQLQ_TEST_GA_SERVER sql "$SQLQ_TEST_GA_PORT" "$1" "$2"
}
ga_root 1 "CREATE DATABASE $ga_database" || { echo "FAIL: cannot create database $ga_database"; exit 1; }
urls=()
for node_url in $SQLQ_TEST_GA_URLS; do
  urls+=("${node_url%/*}/$ga_database")
done
url=${urls[0]}

ga_sql() {
  ga_root "$1" "USE $ga_database; $2"
}

ga_conflicts() {
  local n sum=0 v
  for n in 1 2 3; do
    v=$(ga_root "$n" "SELECT SUM(VARIABLE_VALUE) FROM information_schema.GLOBAL_STATUS
      WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')")
    sum=$((sum + v))
  done
  echo "$sum"
}

ga_database_cleanup() {
  cleanup
  ga_root 1 "DROP DATABASE IF EXISTS $ga_database"
}
trap ga_database_cleanup EXIT
