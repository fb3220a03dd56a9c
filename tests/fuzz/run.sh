#!/usr/bin/env bash
# tests/fuzz/run.sh -- fuzz one harness for a bounded time, as the tests
# fuzz_NAME do (tests/fuzz/CMakeLists.txt):
#
#   bash tests/fuzz/run.sh FUZZER SEED_DIR SECONDS [DICT]
#
# libFuzzer first runs every input of SEED_DIR (so a reproducer kept there
# fails at once), then fuzzes for SECONDS, writing what it finds to a
# temporary directory (the seed corpus is only read).  Exits 0 when nothing
# was found; else non-zero, after printing the finding, its input in
# base64 and how to reproduce it.  Any crash, sanitizer report (ASan,
# UBSan), leak, broken invariant (the harness aborts), input slower than
# 30 s or memory over 4 GiB counts.
set -uo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 FUZZER SEED_DIR SECONDS [DICT]" >&2
  exit 64
fi
fuzzer=$1 seeds=$2 seconds=$3 dict=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/findings"

args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
      -artifact_prefix="$work/findings/")
[ -n "$dict" ] && args+=(-dict="$dict")

ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$fuzzer" "${args[@]}" "$work/corpus" "$seeds" >"$work/log" 2>&1
code=$?
# A slow unit (over 10 s, under the 30 s timeout) is reported, not a finding.
found=$(find "$work/findings" -type f ! -name 'slow-unit-*' | head -n 1)
if [ "$code" -eq 0 ] && [ -z "$found" ]; then
  grep -E '^(stat::|#[0-9]+ +DONE)' "$work/log"
  echo "$(basename "$fuzzer"): no finding in $seconds s"
  exit 0
fi
tail -n 120 "$work/log"
echo "$(basename "$fuzzer"): FAILED (exit $code)"
if [ -n "$found" ]; then
  echo "the input, in base64 ($(basename "$found")):"
  base64 -w 76 "$found"
  echo "reproduce: save it as a file F (base64 -d) and run $fuzzer F"
fi
exit 1
