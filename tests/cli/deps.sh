# tests/cli/deps.sh -- sqlq push --after: a fan-out/fan-in batch from the
# shell, the waiting state in sqlq jobs, and garbage lists of ids (one line,
# exit 64 or 65, nothing stored).
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

# Fan out three jobs, fan in one after them all.
ids=$(for part in a b c; do sq push parts "$part"; done | paste -sd,)
run "push --after" 0 sq push --after "$ids" merge "merge a, b and c"
merge=$(cat "$tmp/out")
run "jobs lists it waiting" 0 sq jobs --state waiting merge
expect_out_has "waiting" "waiting"
run "jobs --json" 0 sq jobs --json merge
expect_out_has "state waiting" '"state":"waiting"'
expect_out_has "no run_at yet" '"run_at":null'
run "stats count it as scheduled" 0 sq stats --json merge
expect_out_has "scheduled" '"ready":0,"scheduled":1'
run "the parts run" 0 timeout 20 "$SQLQ" --url "$url" work --drain parts -- true
run "then the merge is ready" 0 sq jobs --json merge
expect_out_has "ready" '"state":"ready"'
expect_out_has "its id" "\"id\":$merge"
run "and runs" 0 timeout 20 "$SQLQ" --url "$url" work --drain merge -- true
run "once" 0 sq jobs --json merge
expect_out "gone" "[]"

# --lines: every line waits; a job that finished already is not waited for.
first=$(sq push parts x)
run "push --lines --after" 0 sq push --lines --after "$first,$merge" fan < <(printf 'one\ntwo\n')
expect_out "two jobs" "2 jobs"
expect_eq "both wait" "$(sq jobs --state waiting fan | wc -l)" 3

# Garbage: one line, exit 64 (65 for a job that does not exist), nothing stored.
stored() { sq jobs --json garbage; }
baseline=$(stored)
refused "--after empty" 64 sq push --after "" garbage x
refused "--after 0" 64 sq push --after 0 garbage x
refused "--after negative" 64 sq push --after -3 garbage x
refused "--after a word" 64 sq push --after one garbage x
refused "--after an empty item" 64 sq push --after "1,,2" garbage x
refused "--after a trailing comma" 64 sq push --after "1," garbage x
refused "--after past int64" 64 sq push --after 99999999999999999999 garbage x
refused "--after too many" 64 sq push --after "$(yes 1 | head -n 10001 | paste -sd,)" garbage x
refused "--after a job that never was" 65 sq push --after 1,999999 garbage x
expect_err_has "it names the job" "job 999999 does not exist"
run "--after repeated ids" 0 sq push --after "$first,$first,$first" dups x
run "jobs --state garbage" 64 sq jobs --state waitin fan
expect_error_line "a bad state is one line"

finish
