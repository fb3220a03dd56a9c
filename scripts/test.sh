#!/usr/bin/env bash
# scripts/test.sh -- install the dependencies, then build and run every test
# three ways, fuzz, and check a distribution's build:
#
#   1. build-valgrind/  a normal build that also registers the valgrind tests
#                       (-DSQLQ_TEST_VALGRIND=ON); ctest runs every test but
#                       those and the CLI's scripts (cli_*), which run once,
#                       in phase 2
#   2. build-asan/      built with AddressSanitizer + UndefinedBehaviorSanitizer
#                       (-DSQLQ_SANITIZE=ON); ctest runs every test
#   3. build-valgrind/  phase 1's build, not built again: ctest runs the C
#                       test programs under valgrind (-L valgrind)
#   4. build-fuzz/      built by clang for libFuzzer with ASan + UBSan
#                       (-DSQLQ_FUZZ=ON); ctest runs each harness of
#                       tests/fuzz for SQLQ_FUZZ_SECONDS (default 40) from its
#                       seed corpus (-L fuzz; docs/fuzzing.md)
#   5. build-release/   a Release build with Debian's flags (dpkg-buildflags,
#                       hardening and LTO), which must give no warning; no
#                       test runs there (it counts as one test)
#
# Every build treats warnings as errors (-DSQLQ_WERROR=ON).  Phases 1 and 3
# share one build (compiled once, a few minutes of CI saved); none uses
# build/, so that a developer's plain `ctest` there never starts the slow
# valgrind tests.
#
# CI must finish within 45 minutes on a 2-CPU machine; with every test in
# both phases 1 and 2, the whole run took 68 (ci20, 2026-11-26).  The CLI's
# scripts check what the sqlq tool prints and stores, not its speed, so
# they run once, on the sanitizer build; phase 1 keeps the C programs, the
# crash and restart tests (whose races want full speed) and the bindings
# (which the sanitizer build cannot load).  A plain `ctest` in build/ still
# runs all of them.
#
# Exits non-zero if anything failed.  The last line is the total over all
# phases, "N passed, N failed", where a build that fails counts as one
# failed test.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

passed=0
failed=0
jobs=$(nproc 2>/dev/null || echo 2)
log_dir=$(mktemp -d)
trap 'rm -rf "$log_dir"' EXIT

# Print a phase banner.
banner() {
  printf '\n==> %s\n' "$*"
}

# Record one failure that is not a test (a build, the dependencies).
count_failure() {
  echo "test.sh: FAILED: $*" >&2
  failed=$((failed + 1))
}

# build DIR CMAKE_ARGS...: configure and build DIR, with warnings as errors;
# returns non-zero on error.
build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -DSQLQ_WERROR=ON "$@" && cmake --build "$dir" -j "$jobs"
}

# run_ctest DIR CTEST_ARGS...: run ctest in DIR and add its counts, taken
# from its "N% tests passed, N tests failed out of M" line, to the totals.
run_ctest() {
  local dir=$1 log line total nfailed
  shift
  log="$log_dir/ctest.log"
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" "$@") 2>&1 | tee "$log"
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    count_failure "ctest in $dir gave no summary"
    return
  fi
  # What each failure said, for the end of the run (CI shows only the
  # start and the end of a long output).
  grep -E '\*\*\*(Failed|Timeout|Exception)|\[  (FAILED|ERROR) |returned SQLQ_|^FAIL|Assertion|runtime error:|ERROR: AddressSanitizer|LeakSanitizer' \
    "$log" | cut -c1-300 >>"$log_dir/failures"
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  nfailed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  passed=$((passed + total - nfailed))
  failed=$((failed + nfailed))
}

banner "dependencies"
if ! bash scripts/install-deps.sh; then
  count_failure "scripts/install-deps.sh"
  echo "$passed passed, $failed failed"
  exit 1
fi

banner "1/5: normal build (build-valgrind/)"
normal_built=0
if build build-valgrind -DSQLQ_TESTS=ON -DSQLQ_SANITIZE=OFF -DSQLQ_TEST_VALGRIND=ON; then
  normal_built=1
  run_ctest build-valgrind -E '^cli_' -LE valgrind
else
  count_failure "the normal build"
fi

banner "2/5: ASan + UBSan build (build-asan/)"
if build build-asan -DSQLQ_TESTS=ON -DSQLQ_SANITIZE=ON -DSQLQ_TEST_VALGRIND=OFF; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build-asan
else
  count_failure "the sanitizer build"
fi

banner "3/5: valgrind over the C test programs (build-valgrind/, phase 1's build)"
if [ "$normal_built" -eq 1 ]; then
  run_ctest build-valgrind -L valgrind
fi

fuzz_seconds=${SQLQ_FUZZ_SECONDS:-40}
banner "4/5: libFuzzer harnesses, $fuzz_seconds s each, under ASan + UBSan (build-fuzz/)"
if build build-fuzz -DCMAKE_C_COMPILER=clang -DSQLQ_FUZZ=ON -DSQLQ_TESTS=OFF \
  -DSQLQ_FUZZ_SECONDS="$fuzz_seconds"; then
  run_ctest build-fuzz -L fuzz
else
  count_failure "the fuzzing build"
fi

banner "5/5: Release build with Debian's flags, no warning (build-release/)"
release_cflags=$(DEB_BUILD_MAINT_OPTIONS="hardening=+all optimize=+lto" dpkg-buildflags --get CFLAGS)
release_cppflags=$(DEB_BUILD_MAINT_OPTIONS="hardening=+all optimize=+lto" dpkg-buildflags --get CPPFLAGS)
release_ldflags=$(DEB_BUILD_MAINT_OPTIONS="hardening=+all optimize=+lto" dpkg-buildflags --get LDFLAGS)
if build build-release -DCMAKE_BUILD_TYPE=Release -DSQLQ_TESTS=OFF -DSQLQ_SANITIZE=OFF \
  -DSQLQ_TEST_VALGRIND=OFF "-DCMAKE_C_FLAGS=$release_cflags $release_cppflags" \
  "-DCMAKE_EXE_LINKER_FLAGS=$release_ldflags" "-DCMAKE_SHARED_LINKER_FLAGS=$release_ldflags"; then
  passed=$((passed + 1))
else
  count_failure "the Release build with Debian's flags"
fi

if [ -s "$log_dir/failures" ]; then
  banner "what the failures said (the first 60 lines; the whole output is above)"
  head -n 60 "$log_dir/failures"
fi
banner "summary"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
