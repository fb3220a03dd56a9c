# tests/cli/bench.sh -- `sqlq bench`: bad flags are usage errors, and a
# small run (threads, several producers, processes) reports every job.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run "init" 0 sq init

for bad in "--workers 0" "--workers 65" "--producers 0" "--producers 65" "--producers x" \
  "--batch 0" "--jobs -1" "--payload 7" "--latency-samples -1" "--nonsense" "--jobs"; do
  # shellcheck disable=SC2086
  run "bench $bad" 64 sq bench $bad
  expect_error_line "bench $bad"
done
run "bench bad queue" 64 sq bench --queue ""
expect_error_line "bench bad queue"

# jobs_per_s JSON: the figure, checked to be a positive number.
positive() {
  python3 -c 'import json,sys; v=json.load(sys.stdin); sys.exit(0 if v[sys.argv[1]] > 0 else 1)' "$1" <"$tmp/out"
}
member() {
  python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <"$tmp/out"
}

run "two producers" 0 sq bench --jobs 2000 --workers 2 --producers 2 --batch 10 --latency-samples 5 --json
checks=$((checks + 1))
positive jobs_per_s || fail "two producers: no throughput in $(cat "$tmp/out")"
expect_eq "two producers: producers" "$(member producers)" 2
expect_eq "two producers: jobs" "$(member jobs)" 2000

run "processes" 0 sq bench --jobs 500 --workers 2 --processes --batch 1 --latency-samples 3 --json
expect_eq "processes: producers" "$(member producers)" 1
expect_eq "processes: flag" "$(member processes)" True

run "text" 0 sq bench --jobs 300 --producers 3 --latency-samples 0
checks=$((checks + 1))
grep -q '^producers    3$' "$tmp/out" || fail "text: no producers line in $(cat "$tmp/out")"

# The benchmark's own queue is left empty; other queues are untouched.
run "stats" 0 sq stats --json bench
case "$(cat "$tmp/out")" in
  *'"ready":0,"scheduled":0,"running":0,"dead":0'* | '[]') checks=$((checks + 1)) ;;
  *) fail "bench left jobs behind: $(cat "$tmp/out")" ;;
esac
finish
