# tests/cli/my_init_race.sh -- several `sqlq init` at once upgrade a
# MariaDB database of schema version 11 to 12 while workers claim and a
# producer pushes: one of them makes version 12's tables and triggers
# (mysql.c, my_init: the init lock, then the version read again), the
# others find version 12; no claim fails (CI once saw "Unknown trigger has
# an error in its body: 'Query was empty'" (1064) while every init that
# found version 10 re-made the trigger with CREATE OR REPLACE), each
# trigger exists once and version 12 is recorded once.  Three rounds.
# Runs on a database of its own (my_database.bash); needs the mariadb
# client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

q=race
sq() { "$SQLQ" --url "$url" "$@"; }
# Undo versions 13 (sqlq_counts) and 12.
undo_12() {
  my_sql "DROP TABLE sqlq_counts; DELETE FROM sqlq_schema WHERE version = 13;
          DROP TRIGGER sqlq_jobs_lane; DROP TRIGGER sqlq_jobs_moved;
          DROP TABLE sqlq_lanes, sqlq_lane_moves;
          DELETE FROM sqlq_schema WHERE version >= 12;" || fail "undo version 12"
}
run "init" 0 sq init
total=0
for round in 1 2 3; do
  undo_12
  run "round $round: version 11" 0 my_sql "SELECT max(version) FROM sqlq_schema"
  expect_out "round $round: the database is at version 11" 11
  workers=()
  for lanes in on auto; do
    "$SQLQ" --url "$url?lanes=$lanes" work "$q" -- sh -c 'cat >> "$0"; echo >> "$0"' "$tmp/done" \
      2>"$tmp/worker-$round-$lanes.err" &
    workers+=("$!")
    bg_pids+=("$!")
  done
  for i in $(seq 30); do sq push "$q" "$round.$i" >/dev/null || fail "push $round.$i"; done &
  producer=$!
  sleep 0.3
  inits=()
  for i in 1 2 3 4; do
    sq init >"$tmp/init-$i.out" 2>"$tmp/init-$i.err" &
    inits+=("$!")
  done
  for i in 1 2 3 4; do
    wait "${inits[$((i - 1))]}"
    expect_eq "round $round: init $i exits 0 ($(cat "$tmp/init-$i.err"))" $? 0
  done
  wait "$producer" || fail "round $round: the producer failed"
  total=$((total + 30))
  wait_for_lines "$tmp/done" "$total"
  expect_eq "round $round: every job ran" "$(cat "$tmp/done" | wc -l)" "$total"
  for w in "${workers[@]}"; do stop_worker "$w"; done
  for lanes in on auto; do
    expect_eq "round $round: the lanes=$lanes worker saw no error" \
      "$(cat "$tmp/worker-$round-$lanes.err")" ""
  done
  expect_eq "round $round: version 12 is recorded once" \
    "$(my_sql "SELECT count(*) FROM sqlq_schema WHERE version = 12")" 1
  expect_eq "round $round: each trigger exists once" \
    "$(my_sql "SELECT trigger_name FROM information_schema.TRIGGERS
      WHERE trigger_schema = DATABASE() AND trigger_name IN ('sqlq_jobs_lane', 'sqlq_jobs_moved')
      ORDER BY trigger_name" | tr '\n' ,)" "sqlq_jobs_lane,sqlq_jobs_moved,"
done
finish
