# tests/cli/serve.bash -- sourced after lib.sh (and a backend's
# *_database.bash) by the `sqlq serve` tests: helpers to start and stop the
# server and to make requests, then, when serve_backend_tests is called,
# what every backend must pass: /metrics passes `promtool check metrics`
# and its numbers move while a worker runs; the JSON API lists queues and
# jobs, retries a dead job, retries every dead job, pauses and resumes a
# queue and cancels a running job, and the database changed each time.
# Needs curl and promtool (Debian's prometheus).  Nothing asserts a time:
# every wait polls, up to 20 s.

command -v curl >/dev/null || { echo "FAIL: curl is not installed"; exit 1; }

# serve_start ARGS...: start `sqlq serve --listen 127.0.0.1:0 ARGS...` (an
# ARGS --listen comes later and wins) on $url in the background, under the
# command $SQLQ_TEST_SERVE_VALGRIND when set (valgrind_cli_serve*); once it
# listens, $serve_pid is its pid and $base its http://ADDR:PORT.
serve_start() {
  rm -f "$tmp/serve.out" # not the last server's line, before the new one truncates it
  # shellcheck disable=SC2086 # the command's words
  ${SQLQ_TEST_SERVE_VALGRIND:-} "$SQLQ" --url "$url" serve --listen 127.0.0.1:0 "$@" >"$tmp/serve.out" 2>"$tmp/serve.err" &
  serve_pid=$!
  bg_pids+=("$serve_pid")
  local tries=200
  until grep -q '^listening on http://' "$tmp/serve.out" 2>/dev/null || [ $tries -le 0 ] ||
    ! alive "$serve_pid"; do
    sleep 0.1
    tries=$((tries - 1))
  done
  base=$(sed -n 's|^listening on \(http://.*\)/$|\1|p' "$tmp/serve.out")
  [ -n "$base" ] || { fail "serve did not start: $(head -c 300 "$tmp/serve.err")"; finish; }
}

# serve_stop [SIGNAL]: stop the server with SIGTERM (or SIGNAL); it must
# exit 0 with nothing on stderr.
serve_stop() {
  kill -"${1:-TERM}" "$serve_pid"
  if ! wait_gone 20 "$serve_pid"; then
    fail "serve did not exit after SIG${1:-TERM}"
    kill -9 "$serve_pid"
  fi
  wait "$serve_pid"
  expect_eq "serve exits 0 after SIG${1:-TERM}" $? 0
  expect_eq "serve's stderr is empty" "$(cat "$tmp/serve.err")" ""
}

# http NAME STATUS METHOD PATH [CURL ARGS...]: request PATH of the server
# with METHOD; the status must be STATUS.  The body is in $tmp/body, the
# headers in $tmp/headers.
http() {
  local name=$1 want=$2 method=$3 path=$4 got
  shift 4
  got=$(curl -s -g -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "$@" \
    "$base$path")
  expect_eq "$name: HTTP status" "$got" "$want"
}

# act NAME STATUS PATH [CURL ARGS...]: POST PATH as a same-origin action.
act() {
  local name=$1 want=$2 path=$3
  shift 3
  http "$name" "$want" POST "$path" -H 'X-Sqlq-Csrf: 1' "$@"
}

# expect_body_has NAME TEXT: the body of the last request contains TEXT.
expect_body_has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$tmp/body" || fail "$1: body lacks '$2': $(head -c 300 "$tmp/body")"
}

# metric NAME_AND_LABELS: its value in a scrape of /metrics now.
metric() {
  curl -s "$base/metrics" | grep -v '^#' | grep -F "$1 " | head -n 1 | sed 's/.* //'
}

# wait_metric NAME_AND_LABELS TEST VALUE: poll until the metric's value
# compares so (-lt, -ge or -eq) with VALUE; returns non-zero after 20 s.
wait_metric() {
  local tries=200 v ok
  while [ $tries -gt 0 ]; do
    v=$(metric "$1")
    v=${v%%.*}
    case $2 in
    -lt) ok=$((${v:-0} < $3)) ;;
    -ge) ok=$((${v:-0} >= $3)) ;;
    *) ok=$((${v:-0} == $3)) ;;
    esac
    if [ -n "$v" ] && [ "$ok" = 1 ]; then
      return 0
    fi
    sleep 0.1
    tries=$((tries - 1))
  done
  return 1
}

# sum_field: the sum of the numbers after the colons of its input lines
# ("finished":3).
sum_field() {
  awk -F: '{ s += $2 } END { print s + 0 }'
}

# expect_promtool NAME: /metrics passes `promtool check metrics`.
expect_promtool() {
  checks=$((checks + 1))
  curl -s "$base/metrics" >"$tmp/metrics"
  if ! promtool check metrics <"$tmp/metrics" >"$tmp/promtool" 2>&1; then
    fail "$1: promtool check metrics: $(head -c 500 "$tmp/promtool" | tr '\n' '|')"
  fi
}

serve_backend_tests() {
  command -v promtool >/dev/null || { fail "promtool is not installed (apt-get install prometheus)"; return; }
  local i id
  sq init >/dev/null
  for i in $(seq 1 40); do
    sq push serve-q "job $i" >/dev/null
  done
  sq push -a 1 serve-dead 'will die' >/dev/null
  sq push -a 1 serve-dead 'will die too' >/dev/null
  sq work --drain serve-dead -- false 2>/dev/null
  serve_start

  # /metrics: valid, and it moves while a worker works.
  expect_promtool "before the worker"
  expect_eq "40 ready jobs" "$(metric 'sqlq_queue_jobs{queue="serve-q",state="ready"}')" 40
  expect_eq "2 dead jobs" "$(metric 'sqlq_queue_jobs{queue="serve-dead",state="dead"}')" 2
  expect_eq "the database answers" "$(metric 'sqlq_up')" 1
  start_worker "$tmp/worker.err" serve-q -- sh -c 'cat >/dev/null; sleep 0.05'
  checks=$((checks + 1))
  wait_metric 'sqlq_queue_jobs{queue="serve-q",state="ready"}' -lt 40 ||
    fail "the ready count did not move while the worker ran"
  expect_promtool "while the worker runs"
  checks=$((checks + 1))
  wait_metric 'sqlq_queue_jobs{queue="serve-q",state="ready"}' -eq 0 ||
    fail "the worker did not drain the queue"
  # The counters, from sqlq_counts: the worker writes its counts every 5 s
  # while it waits for more jobs, each push and the dead worker theirs at exit.
  checks=$((checks + 1))
  wait_metric 'sqlq_jobs_finished_total{queue="serve-q"}' -eq 40 ||
    fail "finished did not reach 40 while the worker ran: $(metric 'sqlq_jobs_finished_total{queue="serve-q"}')"
  expect_eq "enqueued counts the 40 pushes" "$(metric 'sqlq_jobs_enqueued_total{queue="serve-q"}')" 40
  expect_eq "dead counts the 2 jobs out of attempts" "$(metric 'sqlq_jobs_dead_total{queue="serve-dead"}')" 2
  expect_eq "no failed attempt with attempts left" "$(metric 'sqlq_jobs_failed_total{queue="serve-dead"}')" 0
  expect_eq "the lag histogram counts the 40 claims" \
    "$(metric 'sqlq_job_lag_seconds_count{queue="serve-q"}')" 40
  expect_eq "its +Inf bucket too" "$(metric 'sqlq_job_lag_seconds_bucket{queue="serve-q",le="+Inf"}')" 40
  local claims
  claims=$(metric 'sqlq_claim_duration_seconds_count{queue="serve-q"}')
  checks=$((checks + 1))
  [ "${claims:-0}" -ge 1 ] || fail "the claim histogram counts no claim: '$claims'"
  expect_promtool "with the counters"
  checks=$((checks + 1))
  wait_metric 'sqlq_job_ids_total' -ge 42 || fail "sqlq_job_ids_total is not 42 or more: $(metric sqlq_job_ids_total)"
  # More jobs while the worker still runs: the counters move on.
  for i in $(seq 41 45); do
    sq push serve-q "job $i" >/dev/null
  done
  checks=$((checks + 1))
  wait_metric 'sqlq_jobs_finished_total{queue="serve-q"}' -eq 45 ||
    fail "finished did not move from 40 to 45: $(metric 'sqlq_jobs_finished_total{queue="serve-q"}')"
  checks=$((checks + 1))
  wait_metric 'sqlq_claim_duration_seconds_count{queue="serve-q"}' -ge $((claims + 1)) ||
    fail "the claim histogram's count did not grow from $claims"
  expect_eq "the lag histogram counts 45" "$(metric 'sqlq_job_lag_seconds_count{queue="serve-q"}')" 45
  stop_worker "$worker"
  expect_promtool "after the worker"

  # The history of a queue: 60 minutes, the last one now, every count.
  http "history" 200 GET /api/v1/queues/serve-q/history
  expect_body_has "history" '{"queue":"serve-q","minutes":[{"t":'
  expect_eq "60 minutes" "$(grep -o '"t":' "$tmp/body" | wc -l)" 60
  expect_eq "the minutes' finished add up to 45" \
    "$(grep -o '"finished":[0-9]*' "$tmp/body" | sum_field)" 45
  expect_eq "the minutes' enqueued add up to 45" \
    "$(grep -o '"enqueued":[0-9]*' "$tmp/body" | sum_field)" 45
  local last age
  last=$(grep -o '"t":[0-9]*' "$tmp/body" | tail -n 1 | cut -d: -f2)
  age=$(($(date +%s) - ${last:-0}))
  checks=$((checks + 1))
  if [ "$age" -lt 0 ] || [ "$age" -ge 120 ]; then
    fail "the last minute of the history is not this one: $last"
  fi
  http "the history of dead jobs" 200 GET /api/v1/queues/serve-dead/history
  expect_eq "the minutes' dead add up to 2" \
    "$(grep -o '"dead":[0-9]*' "$tmp/body" | sum_field)" 2
  http "the history of a queue without counts" 200 GET /api/v1/queues/nothing-here/history
  expect_eq "is 60 minutes of zeros" "$(grep -o '"finished":0,"failed":0,"dead":0,"enqueued":0' "$tmp/body" | wc -l)" 60
  http "history takes no query string" 400 GET '/api/v1/queues/serve-q/history?minutes=5'
  expect_body_has "history takes no query string" '"error":'
  http "history of a queue name too long" 400 GET "/api/v1/queues/$(printf 'q%.0s' $(seq 300))/history"
  expect_body_has "history of a queue name too long" '"error":'
  http "history below a queue's history" 404 GET /api/v1/queues/serve-q/history/more
  act "POST history" 404 /api/v1/queues/serve-q/history
  expect_body_has "POST history" '"error":'

  # The API: queues and jobs.
  http "queues" 200 GET /api/v1/queues
  expect_body_has "queues" '"queue":"serve-dead","ready":0,"scheduled":0,"running":0,"dead":2,"paused":false,"oldest_ready_age":null'
  expect_body_has "the backend" '"backend":"'
  http "one queue" 200 GET /api/v1/queues/serve-dead
  expect_body_has "one queue" '{"queue":"serve-dead","ready":0,"scheduled":0,"running":0,"dead":2'
  http "a queue without jobs" 200 GET /api/v1/queues/nothing-here
  expect_body_has "a queue without jobs" '"ready":0,"scheduled":0,"running":0,"dead":0'
  http "dead jobs" 200 GET '/api/v1/queues/serve-dead/jobs?state=dead&limit=1'
  expect_body_has "dead jobs" '"state":"dead"'
  expect_body_has "dead jobs: the payload as text" '"payload":"will die"'
  expect_body_has "dead jobs: the last error" '"last_error":"exit status 1"'
  expect_eq "limit=1 gives one job" "$(grep -o '"id":' "$tmp/body" | wc -l)" 1
  id=$(grep -o '"id":[0-9]*' "$tmp/body" | head -n 1 | cut -d: -f2)
  http "health" 200 GET /api/v1/health
  expect_body_has "health" '{"health":[{"name":"'

  # Actions, each seen in the database.
  act "retry one dead job" 200 "/api/v1/queues/serve-dead/jobs/$id/retry"
  expect_body_has "retry one dead job" '{"retried":1}'
  run "stats after the retry" 0 sq stats --json serve-dead
  expect_out_has "one ready, one dead" '"ready":1,"scheduled":0,"running":0,"dead":1'
  act "retry every dead job" 200 /api/v1/queues/serve-dead/retry-dead
  expect_body_has "retry every dead job" '{"retried":1}'
  run "stats after retry-dead" 0 sq stats --json serve-dead
  expect_out_has "two ready, none dead" '"ready":2,"scheduled":0,"running":0,"dead":0'
  # Delete: a dead job goes, a ready one stays.
  sq push -a 1 serve-del 'to delete' >/dev/null
  sq push serve-del 'to keep' >/dev/null
  sq work --drain -c 1 serve-del -- sh -c 'test "$(cat)" = "to keep"' 2>/dev/null
  sq push serve-del 'ready' >/dev/null
  http "the dead job to delete" 200 GET '/api/v1/queues/serve-del/jobs?state=dead'
  id=$(grep -o '"id":[0-9]*' "$tmp/body" | head -n 1 | cut -d: -f2)
  act "delete a ready job" 200 /api/v1/queues/serve-del/delete -H 'Content-Type: application/json' \
    -d "{\"ids\":[$((id + 2))]}"
  expect_body_has "a ready job is not deleted" '{"deleted":0}'
  act "delete the dead job" 200 "/api/v1/queues/serve-del/jobs/${id:-0}/delete"
  expect_body_has "delete the dead job" '{"deleted":1}'
  run "stats after the delete" 0 sq stats --json serve-del
  expect_out_has "none dead, one ready" '"ready":1,"scheduled":0,"running":0,"dead":0'
  act "pause" 200 /api/v1/queues/serve-dead/pause
  run "stats after pause" 0 sq stats --json serve-dead
  expect_out_has "paused" '"paused":true'
  expect_eq "paused in /metrics" "$(metric 'sqlq_queue_paused{queue="serve-dead"}')" 1
  act "resume" 200 /api/v1/queues/serve-dead/resume
  run "stats after resume" 0 sq stats --json serve-dead
  expect_out_has "not paused" '"paused":false'

  # Cancel a running job: a worker runs it until told (exec: the SIGTERM
  # of the lost lease ends the sleep, which would hold ctest's pipe open).
  sq push serve-slow 'long' >/dev/null
  start_worker "$tmp/slow.err" serve-slow -- sh -c 'cat >/dev/null; exec sleep 60'
  local tries=200
  until http "running jobs" 200 GET '/api/v1/queues/serve-slow/jobs?state=running' 2>/dev/null &&
    grep -q '"state":"running"' "$tmp/body" || [ $tries -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  id=$(grep -o '"id":[0-9]*' "$tmp/body" | head -n 1 | cut -d: -f2)
  checks=$((checks + 1))
  [ -n "$id" ] || fail "no running job to cancel"
  act "cancel the running job" 200 "/api/v1/jobs/${id:-0}/cancel"
  expect_body_has "cancel the running job" '{"cancelled":1}'
  expect_eq "the cancel counts a dead job" "$(metric 'sqlq_jobs_dead_total{queue="serve-slow"}')" 1
  run "the cancelled job is dead" 0 sq jobs --state dead --json serve-slow
  expect_out_has "cancelled" '"last_error":"cancelled"'
  stop_worker "$worker"

  serve_stop

  # --count-limit: the API's counts stop there and say so; /metrics counts
  # every job.
  for i in 1 2 3; do sq push serve-many "job $i" >/dev/null; done
  serve_start --count-limit 2
  http "counts stop at the limit" 200 GET /api/v1/queues/serve-many
  expect_body_has "counts stop at the limit" '"ready":2,'
  expect_body_has "the counts that stopped" '"more":["ready"]'
  expect_body_has "the limit" '"count_limit":2'
  http "every queue" 200 GET /api/v1/queues
  expect_body_has "every queue: the limit" '"count_limit":2,'
  expect_body_has "every queue: stopped" '"queue":"serve-many","ready":2,'
  expect_eq "metrics count every job" "$(metric 'sqlq_queue_jobs{queue="serve-many",state="ready"}')" 3
  serve_stop
}
