# tests/cli/command_env.sh -- the environment of the commands that sqlq work
# and sqlq lock run: the caller's, without SQLQ_URL (which may hold a
# password) unless --pass-url sets it to the URL in use, and for sqlq work
# with the job's variables set once each, whatever the caller's
# environment held under their names.
. "$(dirname "$0")/lib.sh"

sq init >/dev/null
export SQLQ_URL="postgres://u:hunter2@127.0.0.1:1/db" OTHER=kept
export SQLQ_JOB_ID=stale SQLQ_QUEUE=stale SQLQ_ATTEMPT=stale SQLQ_JOB_TOKEN=stale

# sh $show FILE: write the SQLQ_ variables and OTHER of the environment,
# sorted, to FILE.
show=$tmp/show.sh
echo 'env | grep -E "^(SQLQ_|OTHER=)" | sort >"$1"' >"$show"

id=$(sq push env x)
run "work" 0 timeout 20 "$SQLQ" --url "$url" work --drain env -- sh "$show" "$tmp/work-env"
expect_eq "work: no SQLQ_URL, the job's variables once each" "$(cat "$tmp/work-env")" "OTHER=kept
SQLQ_ATTEMPT=1
SQLQ_JOB_ID=$id
SQLQ_JOB_TOKEN=$(grep -o 'SQLQ_JOB_TOKEN=-\?[0-9]\+$' "$tmp/work-env" | cut -d= -f2)
SQLQ_QUEUE=env"
checks=$((checks + 1))
grep -qx 'SQLQ_JOB_TOKEN=-\?[0-9]\+' "$tmp/work-env" || fail "work: SQLQ_JOB_TOKEN is not a number"

sq push env y >/dev/null
run "work --pass-url" 0 timeout 20 "$SQLQ" --url "$url" work --pass-url --drain env -- \
  sh "$show" "$tmp/work-url"
expect_eq "work --pass-url: the URL in use" "$(grep '^SQLQ_URL=' "$tmp/work-url")" "SQLQ_URL=$url"
expect_eq "work --pass-url: one SQLQ_URL" "$(grep -c '^SQLQ_URL=' "$tmp/work-url")" 1

run "lock" 0 sq lock L -- sh "$show" "$tmp/lock-env"
expect_eq "lock: no SQLQ_URL" "$(grep -c '^SQLQ_URL=' "$tmp/lock-env")" 0
expect_eq "lock: the rest is kept" "$(grep -c '^OTHER=kept$' "$tmp/lock-env")" 1
run "lock --pass-url" 0 sq lock --pass-url L -- sh "$show" "$tmp/lock-url"
expect_eq "lock --pass-url: the URL in use" "$(grep '^SQLQ_URL=' "$tmp/lock-url")" "SQLQ_URL=$url"

# Without --url, the URL in use is $SQLQ_URL's.
export SQLQ_URL=$url
run "lock --pass-url without --url" 0 "$SQLQ" lock --pass-url L -- sh "$show" "$tmp/lock-default"
expect_eq "lock --pass-url: \$SQLQ_URL" "$(grep '^SQLQ_URL=' "$tmp/lock-default")" "SQLQ_URL=$url"

finish
