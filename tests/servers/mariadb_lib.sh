# tests/servers/mariadb_lib.sh -- helpers shared by the MariaDB server
# scripts (mariadb.sh, galera.sh), sourced after lib.sh once they set
# `sbindir` (the directory of mariadbd) and `owner`; the functions read the
# server's `dir` (its pid file mariadbd.pid is there) and `sock` (its unix
# socket), which the scripts set per server.

# admin ARGS...: the mariadb client as root over the server's socket.
admin() {
  mariadb --no-defaults --protocol=socket --socket="$sock" -uroot "$@"
}

# server_pid: the pid of the server of $dir, when it runs.
server_pid() {
  local pid
  [ -f "$dir/mariadbd.pid" ] || return 1
  pid=$(cat "$dir/mariadbd.pid" 2>/dev/null) || return 1
  case "$pid" in
    '' | *[!0-9]*) return 1 ;;
  esac
  [ -d "/proc/$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$sbindir/mariadbd" ] || return 1
  echo "$pid"
}

# install_db CNF [OPTIONS...]: mariadb-install-db on the configuration CNF,
# as the owner, with root authenticated normally and no test database;
# on failure prints its error lines first (its tail alone is its long
# generic advice), then its last lines, and returns 1.
install_db() {
  local cnf=$1 out
  shift
  if ! out=$(as_owner mariadb-install-db --defaults-file="$cnf" --user="$owner" \
    --auth-root-authentication-method=normal --skip-test-db "$@" 2>&1); then
    { printf '%s\n' "$out" | grep -m 10 -iE 'error|fatal|abort|denied|cannot|can.t' || true
      printf '%s\n' "$out" | tail -n 5; } >&2
    return 1
  fi
}
