# tests/crash/fb_login_refused.sh -- a Firebird server that comes back
# refusing logins for a while does not stop `sqlq work`.  A server that has
# just started listens before its security database is open, and until then
# fails every login with "Error occurred during login, please check server
# firebird.log for details"; a worker that reattached then used to exit
# ("wait: firebird: cannot attach to ...: Error occurred during login").
# Here the server is restarted with its security database moved away, so
# that it refuses logins that way until the file is back: the waiting
# worker must keep trying, and run a job pushed once logins work again.
#
# Whether the worker tried while logins were refused is read from
# Firebird's log (SQLQ_TEST_FB_LOG, as in tests/servers/firebird.sh), where
# the server notes each failure to open the instance's security database.
#
# Needs SQLQ_TEST_FB_URL, SQLQ_TEST_FB_SERVER and SQLQ_TEST_FB_PORT (set by
# tests/CMakeLists.txt for the firebird fixture) and isql-fb.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../cli/fb_database.bash"

security=/tmp/sqlq-test-fb-$SQLQ_TEST_FB_PORT/root/security3.fdb
fb_log=${SQLQ_TEST_FB_LOG:-/var/log/firebird/firebird3.0.log}
[ -f "$security" ] || [ -f "$security.away" ] || die "no security database at $security"
[ -r "$fb_log" ] || die "cannot read Firebird's log $fb_log"
q="refused-$$"

# refusals: how many times the log says the security database could not be
# opened.
refusals() {
  grep -cF "\"$security\"" "$fb_log"
}
# put_back: the security database where the server looks for it.
put_back() {
  [ ! -e "$security.away" ] || mv "$security.away" "$security"
}

# A run killed before it put the file back left it away.
put_back
sq init >/dev/null || die "init"
"$SQLQ" --url "$url" work "$q" -- sh -c 'cat >>"$0"; echo >>"$0"' "$tmp/runs" >"$tmp/worker.log" 2>&1 &
worker=$!
bg_pids+=("$worker")
sq push "$q" first >/dev/null || die "push"
wait_for_file "$tmp/runs" 30 || die "the worker ran no job: $(cat "$tmp/worker.log")"
pass "the worker runs jobs, and waits for more"

before=$(refusals)
mv "$security" "$security.away" || die "cannot move $security away"
trap 'put_back; fb_database_drop' EXIT
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
$SQLQ_TEST_FB_SERVER restart "$SQLQ_TEST_FB_PORT" || die "the server did not restart"
tries=0
until [ "$(refusals)" -ge $((before + 3)) ]; do
  alive "$worker" || die "the worker died: $(cat "$tmp/worker.log")"
  tries=$((tries + 1))
  [ "$tries" -lt 900 ] || die "the server refused no logins in 90 s ($(refusals) refusals, $before before)"
  sleep 0.1
done
alive "$worker" || die "the worker died: $(cat "$tmp/worker.log")"
pass "the worker outlived $(($(refusals) - before)) refused logins"

put_back
push_until_stored "$url" "$q" second ||
  die "cannot push once logins work again: $(tail -n 3 "$tmp/producer.log")"
tries=0
until grep -qx second "$tmp/runs"; do
  alive "$worker" || die "the worker died: $(cat "$tmp/worker.log")"
  tries=$((tries + 1))
  [ "$tries" -lt 900 ] || die "the worker did not run the job pushed after the refusals in 90 s: $(cat "$tmp/worker.log")"
  sleep 0.1
done
pass "the worker ran the job pushed once logins worked again"
kill -TERM "$worker"
wait "$worker" || die "the worker exited $? on SIGTERM: $(cat "$tmp/worker.log")"
