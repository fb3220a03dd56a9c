# tests/cli/fb_embedded.bash -- sourced after lib.sh (or tests/crash/lib.sh)
# by tests of an embedded Firebird database (firebird:PATH, the engine in
# each sqlq process) that several processes open at once: points $url at
# a file in $tmp that the test's `sqlq init` creates.  Several processes can
# open one file embedded only when the engine runs in Classic mode
# (ServerMode = Super, Debian's default, opens it for one process:
# "Database already opened with engine instance, incompatible with
# current"), so the test runs under a $FIREBIRD root of its own whose
# firebird.conf says ServerMode = Classic, with a FIREBIRD_LOCK directory
# shared by its processes; the engine's files are links to those of the
# fixture's instance (its `env` names its root).  Needs SQLQ_TEST_FB_SERVER
# and SQLQ_TEST_FB_PORT (set by tests/CMakeLists.txt for the firebird
# fixture).

[ -n "${SQLQ_TEST_FB_SERVER:-}" ] || { echo "FAIL: SQLQ_TEST_FB_SERVER is not set"; exit 1; }
# shellcheck disable=SC2086 # the server command is "bash SCRIPT"
instance_root=$($SQLQ_TEST_FB_SERVER env "$SQLQ_TEST_FB_PORT" | sed -n 's/^FIREBIRD=//p')
[ -d "$instance_root" ] || { echo "FAIL: no Firebird root in the fixture's env"; exit 1; }
mkdir "$tmp/root" "$tmp/lock" "$tmp/fbtmp"
for entry in plugins intl UDF firebird.msg plugins.conf; do
  ln -s "$(readlink -f "$instance_root/$entry")" "$tmp/root/$entry"
done
printf 'ServerMode = Classic\nTempDirectories = %s\n' "$tmp/fbtmp" >"$tmp/root/firebird.conf"
export FIREBIRD="$tmp/root" FIREBIRD_LOCK="$tmp/lock" FIREBIRD_TMP="$tmp/fbtmp"
url="firebird:$tmp/embedded.fdb"
