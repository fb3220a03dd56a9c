# tests/cli/admin.sh -- sqlq stats, jobs, retry, pause, resume, purge.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

run "stats of an empty database" 0 sq stats
queues_only
golden "empty stats table" admin_stats_empty.txt
run "stats --json of an empty database" 0 sq stats --json
queues_only
expect_out "no queues" '{"queues":[]}'

# Two dead jobs, one scheduled, one ready.
sq push -a 1 jobs dead-1 >/dev/null
sq push -a 1 jobs dead-2 >/dev/null
run "make dead jobs" 0 timeout 20 "$SQLQ" --url "$url" work --drain jobs -- false
later=$(sq push -d 3600 jobs later)
sq push -p 3 jobs ready >/dev/null
sq push other x >/dev/null

run "stats" 0 sq stats
queues_only
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
queues_only
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

# Names that a plain-SQL writer gave control characters (sqlq makes none):
# stats and subscriptions show them escaped, as jobs shows payloads, and
# never send the terminal an escape sequence; such a queue can be purged.
evil=$'evil\e]0;owned\a\e[31m'
shown='evil\x1b]0;owned\x07\x1b[31m'
app_db=${url#sqlite:}
run "a queue and a subscription by plain SQL" 0 sqlite3 "$app_db" \
  "INSERT INTO sqlq_jobs (queue, payload) VALUES ('$evil', x'00');
   INSERT INTO sqlq_subscriptions (table_name, action, tag) VALUES ('t$evil', 'insert', '$evil')"
# expect_out_plain NAME: the last stdout holds no control character but
# the newlines.
expect_out_plain() {
  checks=$((checks + 1))
  ! tr -d '\n' <"$tmp/out" | grep -q '[[:cntrl:]]' || fail "$1: the output holds control characters"
}
run "stats of a queue named with escapes" 0 sq stats
expect_out_plain "stats"
expect_out_has "stats shows the name escaped" "$shown"
run "stats --json of a queue named with escapes" 0 sq stats --json
expect_out_plain "stats --json"
run "subscriptions of a table and tag named with escapes" 0 sq subscriptions
expect_out_plain "subscriptions"
expect_out_has "subscriptions shows the names escaped" "t$shown  $shown"
run "subscriptions --json" 0 sq subscriptions --json
expect_out_plain "subscriptions --json"
run "purge a queue named with escapes" 0 sq purge "$evil"
expect_out "its job is purged" "1 jobs purged"
expect_eq "no job of it is left" "$(sqlite3 "$app_db" "SELECT count(*) FROM sqlq_jobs WHERE queue = '$evil'")" 0
run "other commands refuse the name" 64 sq pause "$evil"
expect_error_line "the refusal is one line"

finish
