# tests/servers/lib.sh -- helpers shared by the throwaway-server scripts
# (postgres.sh, mariadb.sh, firebird.sh), sourced after they set `prog`
# (their name, for messages) and `timeout_s` (how long to wait for a server),
# and define `usage`.

# die MESSAGE: one line "PROG: MESSAGE" on stderr, exit 1.
die() {
  echo "$prog: $*" >&2
  exit 1
}

# check_port PORT: a TCP port number, else usage.
check_port() {
  if ! [[ $1 =~ ^[1-9][0-9]{0,4}$ ]] || [ "$1" -gt 65535 ]; then
    usage
  fi
}

# run_servers_as SYSTEM_USER PACKAGE: as root, the server runs as
# SYSTEM_USER (which PACKAGE creates), else as the current user.  Sets
# `owner` and defines `as_owner CMD...`, which runs CMD as the owner.
run_servers_as() {
  if [ "$(id -u)" -eq 0 ]; then
    id -u "$1" >/dev/null 2>&1 || die "running as root needs the '$1' system user (package $2)"
    owner=$1
    as_owner() { runuser -u "$owner" -- "$@"; }
    cd /  # the system user may not be allowed into the caller's directory
  else
    owner=$(id -un)
    as_owner() { "$@"; }
  fi
}

# wait_gone PID: wait up to timeout_s seconds until the process is gone;
# returns 1 when it is still there.
wait_gone() {
  local tries=$((timeout_s * 10))
  while [ -d "/proc/$1" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ ! -d "/proc/$1" ]
}

# start_failed WHAT LOG...: the last lines of each LOG that is not empty,
# then die: the server on $port did not WHAT (start, restart) in time.
start_failed() {
  local what=$1 file
  shift
  for file in "$@"; do
    if [ -s "$file" ]; then
      echo "--- last lines of $file:" >&2
      tail -n 20 "$file" >&2
    fi
  done
  die "the server on port $port did not $what (within ${timeout_s}s)"
}

# stop_server: stop the server of the directory $dir with the script's own
# `halt` (which returns when no server runs there), then remove $dir; 0 when
# $dir does not exist.  (postgres.sh, which stops with pg_ctl, has its own.)
stop_server() {
  [ -e "$dir" ] || return 0
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    die "$dir is not a directory; remove it"
  fi
  halt
  rm -rf "$dir" || die "cannot remove $dir"
}
