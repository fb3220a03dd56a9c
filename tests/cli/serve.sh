# tests/cli/serve.sh -- `sqlq serve` on SQLite: /metrics checked by
# promtool while a worker runs, the JSON API and its actions (serve.bash);
# then a database of schema version 12, without sqlq_counts: /metrics is
# up without the counters, the history answers 503.  The safety checks are
# serve_safe.sh's.  Needs the sqlite3 shell.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve.bash"
serve_backend_tests

url="sqlite:$tmp/v12.db"
sq init >/dev/null
sqlite3 -bail "$tmp/v12.db" "DROP TABLE sqlq_counts; DELETE FROM sqlq_schema WHERE version = 13;" ||
  fail "undo version 13"
sq push v12-q "on version 12" >/dev/null
serve_start
expect_promtool "version 12"
expect_eq "version 12: the database answers" "$(metric 'sqlq_up')" 1
expect_eq "version 12: the depth is there" "$(metric 'sqlq_queue_jobs{queue="v12-q",state="ready"}')" 1
checks=$((checks + 1))
! grep -q '^sqlq_jobs_finished_total' "$tmp/metrics" || fail "version 12 has counters"
expect_eq "version 12: the last job id is there" "$(metric 'sqlq_job_ids_total')" 1
http "version 12: the history" 503 GET /api/v1/queues/v12-q/history
expect_body_has "version 12: the history says why" 'sqlq init'
serve_stop
finish
