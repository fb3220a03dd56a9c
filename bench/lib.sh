# bench/lib.sh -- helpers shared by bench/run-*.sh, sourced after they set
# RUNS (runs per figure) and bench_name (the name progress lines carry).

# Print a line of progress on stderr.
say() { echo "$bench_name: $*" >&2; }

# repeat CMD...: run CMD $RUNS times; each run prints one JSON object.
# A script that defines a function before_run has it called before each.
repeat() {
  local i
  for ((i = 1; i <= RUNS; i++)); do
    say "  run $i/$RUNS: ${*##*/}"
    if declare -F before_run >/dev/null; then before_run; fi
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

# machine LINE...: the "## Machine" section: the host, then the given lines
# (the database's own), then the runs per figure and the load average.
machine() {
  echo "## Machine"
  echo
  echo "- CPUs: $(nproc) ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1))"
  echo "- Memory: $(free -h 2>/dev/null | awk '/^Mem:/ {print $2}')"
  echo "- Kernel: $(uname -sr)"
  printf '%s\n' "$@"
  echo "- Runs per figure: $RUNS (median shown)"
  echo "- Load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  echo
}

# A throwaway database for a run (bench/run-hold.sh, run-soak.sh), which
# sets here, tmp (a temporary directory) and, for a server, port first:
# throwaway_start BACKEND starts tests/servers/BACKEND.sh on port, or for
# sqlite names the file $tmp/bench.db, and sets url; throwaway_stop stops
# the server again (nothing for sqlite, or before a start).
throwaway_start() {
  if [[ $1 == sqlite ]]; then
    url="sqlite:$tmp/bench.db"
    return
  fi
  throwaway_server="$here/../tests/servers/$1.sh"
  bash "$throwaway_server" start "$port" >&2
  url=$(bash "$throwaway_server" url "$port")
}
throwaway_stop() {
  [[ -z ${throwaway_server:-} ]] || bash "$throwaway_server" stop "$port" >&2 || true
}
