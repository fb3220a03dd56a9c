# tests/cli/my_ring.sh -- the ring tests (ring.bash) on a fresh MariaDB
# database (my_database.bash); first, a push wakes every follower with KILL
# QUERY, also of a ring with the longest name: with a wake interval of an
# hour, a follower it left out would not see the entry before the test
# gives up; and a push that calls no wake-up is seen within the wake
# interval.  Needs SQLQ_TEST_MY_URL and SQLQ_TEST_MY_PORT (set by
# tests/CMakeLists.txt for the mariadb fixture) and the mariadb client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/my_database.bash"

sq init >/dev/null
long=$(printf 'w%.0s' $(seq 128))
for ring in wake "$long"; do
  sq ring create "$ring" 4 >/dev/null
  for i in 1 2 3; do
    "$SQLQ" --url "$url?wake_interval=3600" ring read --follow "$ring" >"$tmp/follow$i" 2>&1 &
    bg_pids+=("$!")
  done
  sleep 1
  sq ring push "$ring" "for all" >/dev/null
  for i in 1 2 3; do
    wait_for_file "$tmp/follow$i" 10
    expect_eq "follower $i of ring ${ring:0:8} woke" "$(cat "$tmp/follow$i")" "for all"
    rm -f "$tmp/follow$i"
  done
done

# A push that calls no sqlq_wake (wake=poll; or plain SQL) reaches a
# follower when its wait statement looks again: the statement ends when the
# ring's counter moved since the follower's last check.
sq ring create quiet 4 >/dev/null
"$SQLQ" --url "$url?wake_interval=0.2" ring read --follow quiet >"$tmp/follow" 2>&1 &
bg_pids+=("$!")
sleep 1
"$SQLQ" --url "$url?wake=poll" ring push quiet "unannounced" >/dev/null
wait_for_file "$tmp/follow" 10
expect_eq "an unannounced push reaches the follower" "$(cat "$tmp/follow")" "unannounced"

. "$(dirname "$0")/ring.bash"
