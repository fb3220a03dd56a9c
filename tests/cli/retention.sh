# tests/cli/retention.sh -- sqlq jobs --state done, sqlq retention and sqlq
# prune: finished jobs in history, a queue's retention, pruning, and garbage
# input (one line, exit 64, nothing changed).
. "$(dirname "$0")/lib.sh"

sq init >/dev/null
hurl="$url?history=1"

# Five jobs finished by a worker that keeps history, one by one that does not.
for i in 1 2 3 4 5; do sq push jobs "done-$i" >/dev/null; done
run "finish with history" 0 timeout 20 "$SQLQ" --url "$hurl" work --drain jobs -- true
sq push jobs forgotten >/dev/null
run "finish without history" 0 timeout 20 "$SQLQ" --url "$url" work --drain jobs -- true

run "jobs --state done" 0 sq jobs --state done jobs
expect_eq "five done jobs and the header" "$(wc -l <"$tmp/out")" 6
expect_out_has "the time is when it finished" "finished_at"
expect_eq "newest first" "$(sed -n 2p "$tmp/out" | grep -o 'done-[0-9]')" "done-5"
run "jobs --state done --json --limit 2" 0 sq jobs --state done --json --limit 2 jobs
expect_eq "two as JSON, newest first" "$(grep -o '"payload":"[^"]*"' "$tmp/out" | tr '\n' ' ')" \
  '"payload":"done-5" "payload":"done-4" '
expect_out_has "state done" '"state":"done"'
expect_out_has "finished_at" '"finished_at":"'
run "the other states do not list them" 0 sq jobs --json jobs
expect_out "no unfinished jobs" "[]"

# The setting: none at first, then each limit on its own.
run "retention unset" 0 sq retention --json jobs
expect_out "no limits" '{"queue":"jobs","keep_seconds":null,"keep_count":null}'
# On SQLite, acks that keep history maintain no index for pruning until a
# queue has a retention (its upkeep costs them a quarter of their rate).
index_of_history() {
  sqlite3 "$tmp/t.db" "SELECT name FROM sqlite_master WHERE name = 'sqlq_jobs_history_age'"
}
expect_eq "no index for pruning before a retention" "$(index_of_history)" ""
run "retention --keep 0 makes no index" 0 sq retention --keep 0 jobs
expect_eq "still no index" "$(index_of_history)" ""
run "retention --keep 7d" 0 sq retention --keep 7d jobs
expect_eq "the first retention makes the index" "$(index_of_history)" "sqlq_jobs_history_age"
golden "retention table" retention_table.txt
run "retention --keep-count 3" 0 sq retention --keep-count 3 --json jobs
expect_out "both limits" '{"queue":"jobs","keep_seconds":604800,"keep_count":3}'
run "retention --keep 1.5" 0 sq retention --keep 1.5 --json jobs
expect_out "fractions of seconds" '{"queue":"jobs","keep_seconds":1.5,"keep_count":3}'
run "retention --keep 0" 0 sq retention --keep 0 --json jobs
expect_out "no limit of age" '{"queue":"jobs","keep_seconds":null,"keep_count":3}'

# prune keeps the three newest.
run "prune" 0 sq prune jobs
expect_out "two pruned" "2 jobs pruned"
run "done after prune" 0 sq jobs --state done --json jobs
expect_eq "the newest three stay" "$(grep -o '"payload":"[^"]*"' "$tmp/out" | tr '\n' ' ')" \
  '"payload":"done-5" "payload":"done-4" "payload":"done-3" '
run "prune again" 0 sq prune --batch 1 jobs
expect_out "nothing left to prune" "0 jobs pruned"
run "prune a queue without retention" 0 sq prune other
expect_out "nothing pruned" "0 jobs pruned"

# A worker that keeps history prunes as it claims.
sq retention --keep-count 1 jobs >/dev/null
sq push jobs done-6 >/dev/null
run "a worker prunes" 0 timeout 20 "$SQLQ" --url "$hurl" work --drain jobs -- true
run "done after the worker" 0 sq jobs --state done --json jobs
# It pruned before its first claim (done-5 stays then, until a later prune).
expect_out_has "the job it finished stays" '"payload":"done-6"'
expect_eq "the older ones went" "$(grep -c 'done-[34]' "$tmp/out")" 0

# Garbage: one line, exit 64, the setting unchanged.
baseline=$(sq retention --json jobs)
stored() { sq retention --json jobs; }
refused "negative keep" 64 sq retention --keep -1 jobs
expect_err_has "the value is named" "-1"
refused "keep without a number" 64 sq retention --keep d jobs
refused "keep with a bad unit" 64 sq retention --keep 7x jobs
refused "keep that is not a number" 64 sq retention --keep nan jobs
refused "keep past 100 years" 64 sq retention --keep 99999999999w jobs
refused "empty keep" 64 sq retention --keep '' jobs
refused "negative keep-count" 64 sq retention --keep-count -5 jobs
refused "keep-count not a number" 64 sq retention --keep-count many jobs
refused "keep-count too large" 64 sq retention --keep-count 1000000001 jobs
refused "retention without a queue" 64 sq retention --keep 1d
refused "retention of two queues" 64 sq retention jobs other
refused "retention of an empty queue name" 64 sq retention --keep 1d ''
refused "unknown retention flag" 64 sq retention --forever jobs
refused "prune batch 0" 64 sq prune --batch 0 jobs
refused "prune batch too large" 64 sq prune --batch 100001 jobs
refused "prune without a queue" 64 sq prune
refused "unknown state" 64 sq jobs --state finished jobs
expect_err_has "the states are named" "done"

finish
