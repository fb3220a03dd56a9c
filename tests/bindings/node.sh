#!/bin/bash
# tests/bindings/node.sh build|test -- the Node.js package (bindings/node)
# under ctest.
#
# build: install the package's npm dependencies from its committed lock
#   file (npm ci, when node_modules is missing or older than the lock) and
#   build its addon against this build's libsqlq into SQLQ_NODE_BUILD_DIR,
#   unless the addon there is newer than the library and the sources.
# test: run the package's node --test suites with that addon, on the
#   database SQLQ_TEST_URL names (SQLite when unset).
# Environment (set by tests/CMakeLists.txt): SQLQ_INCLUDE_DIR, SQLQ_LIB_DIR,
# SQLQ_LIB_FILE (the library file, for the freshness test) and
# SQLQ_NODE_BUILD_DIR; in the sanitizer build SQLQ_NODE_SANITIZE (the
# compiler's flags for the addon) and SQLQ_NODE_PRELOAD (the sanitizers'
# runtimes, preloaded into node).
set -euo pipefail
pkg=$(cd "$(dirname "$0")/../../bindings/node" && pwd)
addon=$SQLQ_NODE_BUILD_DIR/build/Release/sqlq.node

fresh() {
  [ -f "$addon" ] || return 1
  local f
  for f in "$SQLQ_LIB_FILE" "$SQLQ_INCLUDE_DIR/sqlq.h" "$pkg/binding.gyp" "$pkg"/src/*; do
    [ "$addon" -nt "$f" ] || return 1
  done
}

case ${1:-} in
build)
  if [ ! -f "$pkg/node_modules/.package-lock.json" ] ||
    [ "$pkg/package-lock.json" -nt "$pkg/node_modules/.package-lock.json" ]; then
    (cd "$pkg" && npm ci --ignore-scripts --no-audit --no-fund)
  fi
  if fresh; then
    echo "node.sh: $addon is up to date"
  else
    # node-gyp would take a JOBS of the environment as make's -j.
    env -u JOBS CXXFLAGS="${SQLQ_NODE_SANITIZE:+$SQLQ_NODE_SANITIZE -fno-omit-frame-pointer}" \
      LDFLAGS="${SQLQ_NODE_SANITIZE:-}" node "$pkg/scripts/build.js" "--out=$SQLQ_NODE_BUILD_DIR"
  fi
  ;;
test)
  cd "$pkg"
  if [ -n "${SQLQ_NODE_PRELOAD:-}" ]; then export LD_PRELOAD=$SQLQ_NODE_PRELOAD; fi
  SQLQ_NODE_ADDON=$addon exec node --test --test-concurrency=1 --expose-gc test/*.test.js
  ;;
*)
  echo "usage: node.sh build|test" >&2
  exit 64
  ;;
esac
