# tests/cli/dlopen.sh -- the client libraries of PostgreSQL, MariaDB and
# Firebird are loaded when a URL of their scheme is opened, not at start
# (CMake option SQLQ_DLOPEN, on by default), and a missing one fails the
# open with exit 69 and one line naming its soname and Debian package (and
# one that lacks a function the driver calls, with one line naming it).
#
# The environment says what the build has: SQLQ_TEST_DLOPEN (ON or OFF)
# and SQLQ_TEST_CLIENTS, a list of backend:soname:package of the backends
# built.  The loader's test-only variable SQLQ_TEST_LIBDIR (src/dl.c) makes
# it open DIR/soname: an empty directory is a machine without the package,
# and the real dlopen fails; a directory with a link to the real library
# loads it as usual.  Which shared objects a run loads is read from the
# dynamic loader's own trace (LD_DEBUG=files).
. "$(dirname "$0")/lib.sh"

sq init >/dev/null

# loaded_objects CMD...: the "file=NAME" lines of the shared objects that
# CMD's process loaded, by the dynamic loader's trace.
loaded_objects() {
  LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" "$@" >/dev/null 2>&1
  cat "$tmp"/ld.* 2>/dev/null | grep -o 'file=[^ ]*' | sort -u
  rm -f "$tmp"/ld.*
}

# A URL of each backend that fails at once after the library is loaded.
unreachable_url() {
  case $1 in
  postgres) echo "postgres://nobody@127.0.0.1:1/x" ;;
  mysql) echo "mysql://nobody@127.0.0.1:1/x" ;;
  firebird) echo "firebird://127.0.0.1:1/x" ;;
  esac
}

# soname_path SONAME: where the system's loader finds SONAME.
soname_path() {
  ldconfig -p | awk -v so="$1" '$1 == so { print $NF; exit }'
}

mkdir "$tmp/empty" "$tmp/real"
for client in $SQLQ_TEST_CLIENTS; do
  IFS=: read -r backend soname package <<<"$client"
  start=$(loaded_objects "$SQLQ" --version)
  sqlite=$(loaded_objects sq push q x)
  other=$(loaded_objects "$SQLQ" --url "$(unreachable_url "$backend")" stats)
  if [ "$SQLQ_TEST_DLOPEN" = ON ]; then
    expect_eq "--version does not load $soname" "$(grep -c "file=$soname" <<<"$start")" 0
    expect_eq "a SQLite command does not load $soname" "$(grep -c "file=$soname" <<<"$sqlite")" 0
    expect_eq "a $backend URL loads $soname" "$(grep -c "file=$soname" <<<"$other")" 1

    run "$backend: library missing" 69 env SQLQ_TEST_LIBDIR="$tmp/empty" \
      "$SQLQ" --url "$(unreachable_url "$backend")" stats
    expect_error_line "$backend: library missing"
    expect_err_has "$backend: the soname is named" "$soname"
    expect_err_has "$backend: the package is named" "package $package"

    # Another library under that soname (libsqlite3): it opens, but lacks
    # the client's functions, and the open says which.
    mkdir "$tmp/wrong-$backend"
    ln -s "$(soname_path libsqlite3.so.0)" "$tmp/wrong-$backend/$soname"
    run "$backend: wrong library" 69 env SQLQ_TEST_LIBDIR="$tmp/wrong-$backend" \
      "$SQLQ" --url "$(unreachable_url "$backend")" stats
    expect_error_line "$backend: wrong library"
    expect_err_has "$backend: a missing function is named" "client library lacks"

    # The same path with the library there: the open gets as far as the
    # network, so the failure above was the library's absence alone.
    ln -s "$(soname_path "$soname")" "$tmp/real/$soname"
    run "$backend: library found" 69 env SQLQ_TEST_LIBDIR="$tmp/real" \
      "$SQLQ" --url "$(unreachable_url "$backend")" stats
    expect_err_lacks "$backend: library found is no load error" "cannot load"
  else
    expect_eq "linked: --version loads $soname" "$(grep -c "file=$soname" <<<"$start")" 1
  fi
done
run "SQLite still works" 0 sq stats

# libmicrohttpd (SQLQ_TEST_SERVE=ON: sqlq serve is built) is loaded by
# `sqlq serve` alone, when it starts.
if [ "${SQLQ_TEST_SERVE:-OFF}" = ON ]; then
  mhd=libmicrohttpd.so.12
  if [ "$SQLQ_TEST_DLOPEN" = ON ]; then
    expect_eq "--version does not load $mhd" "$(loaded_objects "$SQLQ" --version | grep -c "file=$mhd")" 0
  fi
  "$SQLQ" --url "$url" serve --listen 127.0.0.1:0 >"$tmp/serve.out" 2>&1 &
  serve_pid=$!
  bg_pids+=("$serve_pid")
  checks=$((checks + 1))
  wait_for_file "$tmp/serve.out" 20 || fail "serve did not start"
  expect_eq "serve loads $mhd" "$(grep -c "/$mhd" "/proc/$serve_pid/maps" | grep -c '^[1-9]')" 1
  kill -TERM "$serve_pid"
  wait "$serve_pid"
  expect_eq "serve exits 0" $? 0
  if [ "$SQLQ_TEST_DLOPEN" = ON ]; then
    run "serve: $mhd missing" 69 env SQLQ_TEST_LIBDIR="$tmp/empty" "$SQLQ" --url "$url" serve \
      --listen 127.0.0.1:0
    expect_error_line "serve: $mhd missing"
    expect_err_has "serve: the soname is named" "$mhd"
    expect_err_has "serve: the package is named" "package libmicrohttpd12"
    mkdir "$tmp/wrong-serve"
    ln -s "$(soname_path libsqlite3.so.0)" "$tmp/wrong-serve/$mhd"
    run "serve: wrong library" 69 env SQLQ_TEST_LIBDIR="$tmp/wrong-serve" "$SQLQ" --url "$url" \
      serve --listen 127.0.0.1:0
    expect_error_line "serve: wrong library"
    expect_err_has "serve: a missing function is named" "lacks MHD_"
  fi
fi

finish
