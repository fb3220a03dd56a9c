# tests/cli/admin.sh -- sqlq stats, jobs, retry, pause, resume, purge.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

run "stats of an empty database" 0 sq stats
golden "empty stats table" admin_stats_empty.txt
run "stats --json of an empty database" 0 sq stats --json
expect_out "no queues" '{"queues":[]}'

# Two dead jobs, one scheduled, one ready.
sq push -a 1 jobs dead-1 >/dev/null
sq push -a 1 jobs dead-2 >/dev/null
run "make dead jobs" 0 timeout 20 "$SQLQ" --url "$url" work --drain jobs -- false
later=$(sq push -d 3600 jobs later)
sq push -p 3 jobs ready >/dev/null
sq push other x >/dev/null

run "stats" 0 sq stats
golden "stats table" admin_stats.txt
run "jobs --state dead" 0 sq jobs --state dead jobs
mask_times
golden "dead jobs" admin_dead.txt
run "jobs --state ready" 0 sq jobs --state ready --json jobs
expect_eq "ready jobs" "$(grep -o '"payload":"[^"]*"' "$tmp/out")" '"payload":"ready"'

# pause and resume show in stats.
run "pause" 0 sq pause jobs
expect_out "pause is silent" ""
run "stats of a paused queue" 0 sq stats --json jobs
expect_out "paused" '{"queues":[{"queue":"jobs","ready":1,"scheduled":1,"running":0,"dead":2,"paused":true}]}'
run "pause an empty queue" 0 sq pause fresh
run "a paused queue without jobs is listed" 0 sq stats
golden "stats with paused queues" admin_stats_paused.txt
run "resume" 0 sq resume jobs
run "resume an empty queue" 0 sq resume fresh
run "stats after resume" 0 sq stats --json jobs
expect_out "resumed" '{"queues":[{"queue":"jobs","ready":1,"scheduled":1,"running":0,"dead":2,"paused":false}]}'

# retry by id (a scheduled job becomes ready now) and --dead.
run "retry ID" 0 sq retry jobs "$later"
expect_out "one retried" "1 jobs retried"
run "retry --dead" 0 sq retry --dead jobs
expect_out "two retried" "2 jobs retried"
run "retry --dead again" 0 sq retry --dead jobs
expect_out "none left dead" "0 jobs retried"
run "retry an unknown id" 0 sq retry jobs 999999
expect_out "unknown ids change nothing" "0 jobs retried"
run "stats after retry" 0 sq stats --json jobs
expect_out "all ready" '{"queues":[{"queue":"jobs","ready":4,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
run "retried jobs have fresh attempts" 0 sq jobs jobs
mask_times
golden "retried jobs" admin_retried.txt

# purge removes every job of one queue only.
run "purge" 0 sq purge jobs
expect_out "purge count" "4 jobs purged"
run "purge again" 0 sq purge jobs
expect_out "nothing left to purge" "0 jobs purged"
run "stats after purge" 0 sq stats --json jobs
expect_out "the purged queue is empty" '{"queues":[{"queue":"jobs","ready":0,"scheduled":0,"running":0,"dead":0,"paused":false}]}'
run "stats of another queue after purge" 0 sq stats --json other
expect_out "the other queue is intact" '{"queues":[{"queue":"other","ready":1,"scheduled":0,"running":0,"dead":0,"paused":false}]}'

finish
