#!/usr/bin/env bash
# scripts/demo.sh -- install the dependencies, build sqlq, and show the main
# job on the embedded SQLite default: a producer pushes 1000 jobs, four
# workers drain them, and `sqlq stats` is shown before and after.  Runs in
# a temporary directory that is removed at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

bash scripts/install-deps.sh
cmake -S . -B build -DSQLQ_WERROR=ON >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
sqlq="$root/build/sqlq"

demo_dir=$(mktemp -d)
trap 'rm -rf "$demo_dir"' EXIT
cd "$demo_dir"

# step TEXT COMMAND...: show TEXT as the command line typed, then run it.
step() {
  printf '\n$ %s\n' "$1"
  shift
  "$@"
}

# The database is sqlq.db in the current directory, the tool's default.
echo "In $demo_dir:"
step "sqlq init" "$sqlq" init
step "seq 1000 | sqlq push --lines demo" sh -c 'seq 1000 | "$0" push --lines demo' "$sqlq"
step "sqlq stats" "$sqlq" stats
start=$(date +%s.%N)
step "sqlq work -c 4 --drain demo -- sh -c 'cat >/dev/null'" \
  "$sqlq" work -c 4 --drain demo -- sh -c 'cat >/dev/null'
end=$(date +%s.%N)
step "sqlq stats" "$sqlq" stats
awk -v s="$start" -v e="$end" \
  'BEGIN { printf "\n1000 jobs drained by 4 workers in %.2f s (%.0f jobs/s, one process per job)\n", e - s, 1000 / (e - s) }'

# The same work through long-lived handlers: sqlq work --stdio feeds jobs to
# one Python process over its stdin (examples/handler.py, docs/protocol.md).
step "seq 20000 | sqlq push --lines demo" sh -c 'seq 20000 | "$0" push --lines demo' "$sqlq"
start=$(date +%s.%N)
step "sqlq work --stdio --drain demo -- python3 examples/handler.py" \
  "$sqlq" work --stdio --drain demo -- python3 "$root/examples/handler.py"
end=$(date +%s.%N)
step "sqlq stats" "$sqlq" stats
awk -v s="$start" -v e="$end" \
  'BEGIN { printf "\n20000 jobs drained by one Python handler in %.2f s (%.0f jobs/s, sqlq work --stdio)\n", e - s, 20000 / (e - s) }'
