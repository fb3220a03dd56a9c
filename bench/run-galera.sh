#!/usr/bin/env bash
# run-galera.sh -- sqlq bench on a three-node MariaDB Galera cluster beside
# one plain MariaDB server (docs/benchmarks.md, "MariaDB Galera").
#
# Usage: bench/run-galera.sh [PATH/TO/sqlq]
#
# Starts a three-node cluster (tests/servers/galera.sh, ports
# $GA_PORT..+11, default 25540) and a plain server (tests/servers/
# mariadb.sh, port $MY_PORT, default 25552), both with InnoDB's durable
# defaults, and runs each measurement RUNS times (default 3), alternating
# the plain server and the cluster run by run, so that the load of the
# machine falls on both alike.  Prints one line a run (figures and, on the
# cluster, the certification conflicts of the run: wsrep_local_cert_failures
# plus wsrep_local_bf_aborts over the nodes) on stderr, then the machine and
# the medians as a Markdown table on stdout:
#   (a) sqlq bench, JOBS jobs (default 20000), batch 100, 4 workers, on one
#       node
#   (b) batch 1: JOBS_B1 jobs (default 3000), 4 workers, 4 producers, on
#       one node
#   (c) a drain from three nodes: DRAIN jobs (default 6000) queued, then
#       three `sqlq bench --drain` (2 workers, batch 10) at once, one per
#       node (on the plain server, all three on it), timed until node 1
#       sees none ready or running
#   (d) three `sqlq bench` at once, one per node, each on a queue of its
#       own: JOBS_B1 jobs, batch 1, 2 workers, 2 producers (the sum of their
#       jobs/s); the queues share only the job id counter row sqlq_job_ids
# A bench call that stays in conflict after the library's attempts ends
# its process with error 1213: the runs count those (gave_up), and (d)
# then sums the benches that finished.
# Both servers are stopped at the end.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SQLQ=${1:-${SQLQ:-build/sqlq}}
RUNS=${RUNS:-3}
JOBS=${JOBS:-20000}
JOBS_B1=${JOBS_B1:-3000}
DRAIN=${DRAIN:-6000}
GA_PORT=${GA_PORT:-25540}
MY_PORT=${MY_PORT:-25552}

if [[ ! -x $SQLQ ]]; then
  echo "run-galera.sh: no sqlq binary at '$SQLQ' (build it, or pass its path)" >&2
  exit 64
fi
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
bench_name=run-galera.sh

galera="$here/../tests/servers/galera.sh"
mariadb="$here/../tests/servers/mariadb.sh"
work=$(mktemp -d)
bash "$galera" start "$GA_PORT" >&2
trap 'rm -rf "$work"; bash "$galera" stop "$GA_PORT" >&2; bash "$mariadb" stop "$MY_PORT" >&2' EXIT
bash "$mariadb" start "$MY_PORT" >&2
mapfile -t nodes < <(bash "$galera" url "$GA_PORT")
plain=$(bash "$mariadb" url "$MY_PORT")
"$SQLQ" --url "${nodes[0]}" init >/dev/null
"$SQLQ" --url "$plain" init >/dev/null

# conflicts: the cluster's certification conflicts so far.
conflicts() {
  local n sum=0 v
  for n in 1 2 3; do
    v=$(bash "$galera" sql "$GA_PORT" "$n" "SELECT SUM(VARIABLE_VALUE) FROM
      information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN
      ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS')")
    sum=$((sum + v))
  done
  echo "$sum"
}

# drain URL URL URL: queue DRAIN jobs through the first URL, then drain
# them with one `sqlq bench --drain` per URL at once; prints jobs/s, from
# the start until the first URL sees no job ready or running.  Each
# `bench --drain` counts the jobs ready at its start (all of them) and
# would wait for them all, so the three are stopped then.  Their errors
# (a call that stayed in conflict after the library's attempts) go to
# $work/errs.
drain() {
  local t0 t1 pids=() u
  seq 1 "$DRAIN" | "$SQLQ" --url "$1" push --lines bench-drain >/dev/null
  # Every node has them before the clock starts.
  for u in "$@"; do
    until [ "$(left "$u")" = "$DRAIN 0" ]; do sleep 0.1; done
  done
  t0=$(date +%s%N)
  for u in "$@"; do
    "$SQLQ" --url "$u" bench --drain --queue bench-drain --workers 2 --batch 10 --json \
      >/dev/null 2>>"$work/errs" &
    pids+=($!)
  done
  # When every drainer gave up, what they left is not drained: 0 jobs/s.
  until [ "$(left "$1")" = "0 0" ]; do
    if ! any_alive "${pids[@]}"; then
      echo 0
      return
    fi
    sleep 0.05
  done
  t1=$(date +%s%N)
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  python3 -c "print(round($DRAIN / (($t1 - $t0) / 1e9)))"
}

# any_alive PID...: whether one of the PIDs still runs.
any_alive() {
  local p
  for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done
  return 1
}

# left URL: the jobs of bench-drain ready and running, as URL's node sees
# them ("0 0" when the queue is gone).
left() {
  "$SQLQ" --url "$1" stats bench-drain 2>/dev/null |
    awk '$1 == "bench-drain" {r = $2; n = $4} END {print r + 0, n + 0}'
}

# three URL URL URL: one batch-1 bench per URL at once, each on a queue
# of its own; prints the sum of their jobs/s, of those that finished
# (their errors go to $work/errs).
three() {
  local k=0 u pids=()
  rm -f "$work"/three?
  for u in "$@"; do
    k=$((k + 1))
    "$SQLQ" --url "$u" bench --jobs "$JOBS_B1" --workers 2 --producers 2 --batch 1 --json \
      --latency-samples 0 --queue "bench-n$k" >"$work/three$k" 2>>"$work/errs" &
    pids+=($!)
  done
  for u in "${pids[@]}"; do wait "$u" || true; done
  cat "$work"/three? | python3 -c 'import json, sys
print(round(sum(json.loads(l)["jobs_per_s"] for l in sys.stdin if l.strip())))'
}

# gave_up: the bench calls given up in conflict since the last call (the
# lines of $work/errs naming error 1213), which are then cleared.
gave_up() {
  grep -c 'error 1213' "$work/errs" 2>/dev/null || true
  cat "$work/errs" >&2 2>/dev/null || true
  : >"$work/errs"
}

results=()
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 1; i <= RUNS; i++)); do
  for side in plain cluster; do
    if [ "$side" = plain ]; then u=$plain us=("$plain" "$plain" "$plain"); else u=${nodes[0]} us=("${nodes[@]}"); fi
    k0=$(conflicts)
    a=$("$SQLQ" --url "$u" bench --jobs "$JOBS" --workers 4 --batch 100 --json --latency-samples 0)
    k1=$(conflicts)
    b=$("$SQLQ" --url "$u" bench --jobs "$JOBS_B1" --workers 4 --producers 4 --batch 1 --json --latency-samples 0)
    k2=$(conflicts)
    gave_up >/dev/null
    c=$(drain "${us[@]}")
    k3=$(conflicts)
    gc=$(gave_up)
    d=$(three "${us[@]}")
    k4=$(conflicts)
    gd=$(gave_up)
    line=$(python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
k = [int(x) for x in sys.argv[9:]]
print(json.dumps({"side": sys.argv[3], "run": int(sys.argv[4]), "a": a["jobs_per_s"],
                  "b": b["jobs_per_s"], "c": int(sys.argv[5]), "d": int(sys.argv[6]),
                  "conflicts": {m: k[i + 1] - k[i] for i, m in enumerate("abcd")},
                  "gave_up": {"c": int(sys.argv[7]), "d": int(sys.argv[8])}}))
' "$a" "$b" "$side" "$i" "$c" "$d" "${gc:-0}" "${gd:-0}" "$k0" "$k1" "$k2" "$k3" "$k4")
    say "$line (load $(cut -d' ' -f1 /proc/loadavg))"
    results+=("$line")
  done
done
printf '%s\n' "${results[@]}" >&2

# The medians, as a Markdown table on stdout, after the machine section
# (its load average is the one before the runs).
machine "- MariaDB: $(bash "$mariadb" sql "$MY_PORT" "SELECT VERSION()"), galera-4: $(bash \
  "$galera" sql "$GA_PORT" 1 "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
  WHERE VARIABLE_NAME = 'WSREP_PROVIDER_VERSION'")" |
  sed "s|^- Load average before the runs: .*|- Load average before the runs: $load_before|"
printf '%s\n' "${results[@]}" | python3 -c '
import json, statistics, sys
jobs = {"a": int(sys.argv[1]), "b": int(sys.argv[2]), "c": int(sys.argv[3]), "d": 3 * int(sys.argv[2])}
rows = [json.loads(l) for l in sys.stdin if l.strip()]
def med(side, key):
    return statistics.median(r[key] for r in rows if r["side"] == side)
def conf(key):
    return statistics.median(r["conflicts"][key] for r in rows if r["side"] == "cluster")
jobs_a, jobs_b, jobs_c, jobs_d = (jobs[k] for k in "abcd")
names = {
    "a": f"(a) batch 100, 4 workers, one node: {jobs_a} jobs",
    "b": f"(b) batch 1, 4 producers, 4 workers, one node: {jobs_b} jobs",
    "c": f"(c) drain of {jobs_c} jobs, one bench --drain (2 workers, batch 10) per node",
    "d": f"(d) three batch-1 benches at once, one per node, a queue each: {jobs_d} jobs",
}
print("| jobs/s (median) | plain server | Galera, 3 nodes | ratio | conflicts a run (per job) |")
print("|---|---:|---:|---:|---:|")
for k in "abcd":
    p, c, n = med("plain", k), med("cluster", k), conf(k)
    print(f"| {names[k]} | {p:,.0f} | {c:,.0f} | {c / p:.2f}x | {n:,.0f} ({n / jobs[k]:.2f}) |")
print()
for side in ("plain", "cluster"):
    g = [r["gave_up"]["c"] + r["gave_up"]["d"] for r in rows if r["side"] == side]
    print(f"- {side}: bench processes that gave up a call in conflict (error 1213) in (c) and (d), a run: {g}")
' "$JOBS" "$JOBS_B1" "$DRAIN"
