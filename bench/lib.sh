# bench/lib.sh -- helpers shared by bench/run-*.sh, sourced after they set
# RUNS (runs per figure) and bench_name (the name progress lines carry).

# Print a line of progress on stderr.
say() { echo "$bench_name: $*" >&2; }

# repeat CMD...: run CMD $RUNS times; each run prints one JSON object.
repeat() {
  local i
  for ((i = 1; i <= RUNS; i++)); do
    say "  run $i/$RUNS: ${*##*/}"
    "$@"
  done
}

# median RUNS_JSON KEY: the median over the runs of KEY (a dotted path such
# as latency_ms.p50), printed with the given number of decimals (arg 3).
median() {
  python3 -c '
import json, statistics, sys
key, decimals = sys.argv[1].split("."), int(sys.argv[2])
values = []
for line in sys.stdin:
    if line.strip():
        v = json.loads(line)
        for k in key:
            v = v[k]
        values.append(v)
m = statistics.median(values)
print(f"{m:,.{decimals}f}")
' "$2" "${3:-0}" <<<"$1"
}

# check COND: PASS or FAIL for a Python boolean expression.
check() { python3 -c "print('PASS' if ($1) else 'FAIL')"; }

# Strip the thousands separators median() prints.
num() { echo "${1//,/}"; }

