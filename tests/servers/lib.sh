# tests/servers/lib.sh -- helpers shared by the throwaway-server scripts
# (postgres.sh, mariadb.sh), sourced after they set `prog` (their name, for
# messages) and define `usage`.

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
