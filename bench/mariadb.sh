# bench/mariadb.sh -- helpers shared by bench/run-mariadb.sh and
# bench/run-mariadb-wake.sh, sourced after bench/lib.sh once they set SQLQ,
# IDLE_S (seconds per idle window) and MY_PORT.  Starts a throwaway MariaDB
# server (tests/servers/mariadb.sh, InnoDB's durable defaults:
# innodb_flush_log_at_trx_commit = 1) on 127.0.0.1:$MY_PORT, stopped at
# exit, and exports its URL as SQLQ_URL (schema created).

server="$here/../tests/servers/mariadb.sh"
bash "$server" start "$MY_PORT" >&2
trap 'bash "$server" stop "$MY_PORT" >&2' EXIT
SQLQ_URL=$(bash "$server" url "$MY_PORT")
export SQLQ_URL
"$SQLQ" init >/dev/null

# my_sql SQL: one value from the server, as root.
my_sql() { bash "$server" sql "$MY_PORT" "$1"; }

# questions: the statements clients have sent the server so far.
questions() { my_sql "SHOW GLOBAL STATUS LIKE 'Questions'" | cut -f2; }

# idle_cost WAITERS [URL_OPTIONS]: the statements per second and per waiter
# that WAITERS idle `sqlq work` processes send over IDLE_S s, less those of
# as long a window without them (this script's own look included).
idle_cost() {
  local n=$1 opts=${2:-} q0 q1 q2 q3 i pids=()
  q0=$(questions)
  sleep "$IDLE_S"
  q1=$(questions)
  for ((i = 0; i < n; i++)); do
    "$SQLQ" --url "$SQLQ_URL${opts:+?$opts}" work bench-idle -- true 2>/dev/null &
    pids+=("$!")
  done
  sleep 2
  q2=$(questions)
  sleep "$IDLE_S"
  q3=$(questions)
  kill "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  python3 -c "print(f'{max(0, ($q3 - $q2) - ($q1 - $q0)) / $IDLE_S / $n:.3f}')"
}
