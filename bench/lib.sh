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

# Before-and-after runs (run-limits.sh, run-counts.sh): two builds of sqlq,
# each side on a database of its own (BEFORE's library refuses the newer
# schema AFTER's makes).
#
# ab_start BEFORE_SQLQ AFTER_SQLQ: $BEFORE and $AFTER, $RUNS (default 5), a
# temporary directory $dir (for SQLite files) and a throwaway PostgreSQL
# server on $PG_PORT (default 25440), both removed at exit; $pg_url is
# AFTER's database there, $pg_before BEFORE's.
ab_start() {
  local server="$here/../tests/servers/postgres.sh"
  BEFORE=${1:?usage: $bench_name BEFORE_SQLQ AFTER_SQLQ}
  AFTER=${2:?usage: $bench_name BEFORE_SQLQ AFTER_SQLQ}
  RUNS=${RUNS:-5}
  PG_PORT=${PG_PORT:-25440}
  dir=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/sqlq-$bench_name.XXXXXX")
  bash "$server" start "$PG_PORT" >&2
  # shellcheck disable=SC2064 # the port and directory of now
  trap "bash '$server' stop '$PG_PORT' >&2; rm -rf '$dir'" EXIT
  pg_url=$(bash "$server" url "$PG_PORT")
  psql -XAtq "$pg_url" -c "CREATE DATABASE sqlq_before"
  pg_before=${pg_url%/*}/sqlq_before
}

# ab_row BACKEND "SIDE[:BASE]..." URL URL_BEFORE ARGS...: the sides of one
# figure, alternating, RUNS times, each run by the script's function
# ab_side SIDE URL URL_BEFORE ARGS... (printing one JSON object), on a
# vacuumed sqlq_jobs on PostgreSQL; prints the Markdown table row
# "| BACKEND | `sqlq ARGS` | median | median (/BASE's) | ...", in jobs/s.
ab_row() {
  local backend=$1 specs=$2 url=$3 url_before=$4 i spec side row
  shift 4
  local -A out=() m=()
  for ((i = 1; i <= RUNS; i++)); do
    for spec in $specs; do
      side=${spec%%:*}
      say "  run $i/$RUNS $side: $*"
      if [[ $url == postgres* ]]; then
        psql -XAtq "$url" -c "VACUUM sqlq_jobs" 2>/dev/null || true
        psql -XAtq "$url_before" -c "VACUUM sqlq_jobs" 2>/dev/null || true
      fi
      out[$side]+=$(ab_side "$side" "$url" "$url_before" "$@")$'\n'
      say "    $side: $(median "$(tail -n 1 <<<"${out[$side]%$'\n'}")" jobs_per_s) jobs/s"
    done
  done
  row="| $backend | \`sqlq $*\`"
  for spec in $specs; do
    side=${spec%%:*}
    m[$side]=$(num "$(median "${out[$side]}" jobs_per_s)")
  done
  for spec in $specs; do
    side=${spec%%:*}
    row+=$(python3 -c 'import sys; v = float(sys.argv[1]); b = sys.argv[2]
print(f" | {v:,.0f}" + (f" ({v / float(b):.2f})" if b else ""))' "${m[$side]}" \
      "$([[ $spec == *:* ]] && echo "${m[${spec#*:}]}")")
  done
  echo "$row |"
}

# ab_figures "SIDE[:BASE]...": the four figures of a before-and-after
# (ab_row), under the table head the script printed: SQLite and PostgreSQL,
# batches of 100 and of 1.
ab_figures() {
  local s=$1 common=(--latency-samples 0 --json)
  ab_row SQLite "$s" "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 100000 --workers 2 --batch 100 "${common[@]}"
  ab_row SQLite "$s" "sqlite:$dir/a.db" "sqlite:$dir/b.db" bench --jobs 10000 --workers 2 --producers 2 --batch 1 "${common[@]}"
  ab_row PostgreSQL "$s" "$pg_url" "$pg_before" bench --jobs 50000 --workers 4 --batch 100 "${common[@]}"
  ab_row PostgreSQL "$s" "$pg_url" "$pg_before" bench --jobs 10000 --workers 4 --producers 4 --batch 1 "${common[@]}"
}
