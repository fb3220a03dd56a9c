# tests/cli/health.bash -- sourced after lib.sh (and a backend's
# *_database.bash) by the health tests: a real holder (a client of the
# backend's own tool, kept in a transaction) makes `sqlq stats` name it,
# and the item it holds grows as jobs are pushed.  The caller defines
#   hold_client    execs the client (so that its pid is $hold_pid),
#                  statements on stdin, rows on stdout
#   hold_sql       the statements that open the transaction and print the
#                  holder's id (a line of its own)
#   item           the item the holder holds (and that grows with writes)
# and then calls `health_check HOLDER_PATTERN`, where HOLDER_PATTERN is a
# grep -E pattern that the item's holder must match ($holder_id is the
# line the client printed, $hold_pid the client's process id).
# Nothing here asserts a time: every wait polls, up to 10 s.

# The JSON object of health item $1 in `sqlq stats --json` (empty when it
# is missing).
health_item() {
  sq stats --json | grep -o "{\"name\":\"$1\"[^}]*}"
}
item_value() {
  printf '%s\n' "$1" | sed -n 's/.*"value":\([0-9]*\).*/\1/p'
}
item_holder() {
  printf '%s\n' "$1" | sed -n 's/.*"holder":"\([^"]*\)".*/\1/p'
}

# health_items NAME...: in a new database with one job, `sqlq stats --json`
# lists each item NAME.
health_items() {
  local name
  sq init >/dev/null
  sq push health-q first >/dev/null
  run "stats without a queue has the health" 0 sq stats --json
  for name in "$@"; do
    expect_out_has "$name is there" "{\"name\":\"$name\","
  done
}

hold_start() {
  mkfifo "$tmp/hold"
  hold_client <"$tmp/hold" >"$tmp/hold.out" 2>&1 &
  hold_pid=$!
  exec 7>"$tmp/hold"
  printf '%s\n' "$hold_sql" >&7
  local tries=100
  until [ -s "$tmp/hold.out" ] || [ $tries -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  holder_id=$(grep -Eo '[0-9]+' "$tmp/hold.out" | head -n 1)
}

hold_stop() {
  exec 7>&-
  wait "$hold_pid" 2>/dev/null
}

# health_check HOLDER_PATTERN
health_check() {
  local pattern=$1 got="" first="" now="" tries=100
  until [ -n "$got" ] && item_holder "$got" | grep -Eq "$pattern"; do
    [ $tries -gt 0 ] || break
    sq push health-q x >/dev/null # SQLite's reader holds frames written after it began
    sleep 0.1
    tries=$((tries - 1))
    got=$(health_item "$item")
  done
  checks=$((checks + 1))
  item_holder "$got" | grep -Eq "$pattern" ||
    fail "$item names the holder: got '$got', expected a holder matching '$pattern'"
  first=$(item_value "$got")
  # At least 2 too, for the checks of --warn ITEM=1 below (an age in
  # seconds may take that long).
  tries=100
  until [ -n "$now" ] && [ "$now" -gt "${first:-0}" ] && [ "$now" -ge 2 ]; do
    [ $tries -gt 0 ] || break
    sq push health-q x >/dev/null
    sleep 0.1
    tries=$((tries - 1))
    now=$(item_value "$(health_item "$item")")
  done
  checks=$((checks + 1))
  [ -n "$now" ] && [ "$now" -gt "${first:-0}" ] ||
    fail "$item grows while the holder holds: $first, then $now"
  run "stats names the holder in its table" 0 sq stats
  expect_out_has "the health table lists $item" "$item"
  run "an item over a --warn limit warns" 0 sq stats --warn "$item=1"
  expect_err_has "the warning names $item" "sqlq: warning: $item is "
  checks=$((checks + 1))
  [ "$(grep -c . "$tmp/err")" = 1 ] || fail "one warning line: $(cat "$tmp/err")"
  run "stats --json with a --warn limit" 0 sq stats --json --warn "$item=1"
  expect_out_has "over in JSON" "\"name\":\"$item\""
  expect_out_has "the limit in JSON" '"threshold":1,"over":true'
  hold_stop
}
