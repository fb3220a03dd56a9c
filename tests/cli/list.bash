# tests/cli/list.bash -- the body of the listing tests, sourced by list.sh
# (SQLite), pg_list.sh, my_list.sh and fb_list.sh after lib.sh, with $url a
# database without the schema yet.  `sqlq locks` lists a lock that another
# process holds (named by its NAME where the backend keeps only its key),
# and not once it is released; `sqlq ring list` and `sqlq pool list`
# without NAME list rings and pools by name, in pages; garbage arguments
# are refused with one "sqlq: " line and exit 64.

sq init >/dev/null
stored() { sq ring list --json; sq pool list --json; }

backend=${url%%:*}
"$SQLQ" --url "$url" lock list-lock -- sleep 600 2>"$tmp/lock.err" &
lock_pid=$!
bg_pids+=("$lock_pid")
if [ "$backend" = firebird ]; then
  # Firebird cannot list its locks (a row locked by a transaction).
  sleep 0.5
  run "locks on firebird" 69 sq locks
  expect_error_line "locks on firebird"
  expect_err_has "locks on firebird says why" "cannot list"
else
  tries=200
  until sq locks list-lock 2>/dev/null | grep -q '^list-lock ' || [ $tries -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  run "locks" 0 sq locks list-lock
  expect_out_has "locks: a header" "name"
  expect_out_has "locks: the held lock, by its name" "list-lock "
  run "locks --json" 0 sq locks --json list-lock
  expect_out_has "locks --json" '"name":"list-lock","key":"'
  if [ "$backend" = sqlite ]; then
    expect_out_has "locks --json: no holder on SQLite" '"pid":null,"holder":null'
  else
    checks=$((checks + 1))
    grep -qE '"name":"list-lock","key":"[-0-9]+","pid":[0-9]+,"holder":"' "$tmp/out" ||
      fail "locks --json: no holder: $(cat "$tmp/out")"
  fi
  run "locks --limit 1" 0 sq locks --limit 1 --json
  expect_eq "locks --limit 1: one lock" "$(grep -o '"key":' "$tmp/out" | wc -l)" 1
fi
kill -TERM "$lock_pid"
wait "$lock_pid" 2>/dev/null
if [ "$backend" != firebird ]; then
  run "locks once released" 0 sq locks --json list-lock
  checks=$((checks + 1))
  grep -q '"name":"list-lock"' "$tmp/out" && fail "the released lock is still listed: $(cat "$tmp/out")"
fi

sq ring create list-b 2 >/dev/null
sq ring create list-a 5 >/dev/null
for p in one two three; do sq ring push list-b "$p" >/dev/null; done
sq pool add list-p k1 k2 >/dev/null
sq pool add list-q k3 >/dev/null
sq pool next --hold 60 list-p >/dev/null

run "ring list" 0 sq ring list
expect_eq "ring list" "$(awk '{print $1, $2, $3, $4}' "$tmp/out" | tr '\n' '|')" \
  "ring capacity entries last_seq|list-a 5 0 0|list-b 2 2 3|"
run "ring list --after --limit" 0 sq ring list --json --after list-a --limit 1
mask_times
expect_out "ring list --json" '[{"name":"list-b","capacity":2,"entries":2,"last_seq":3,"created_at":"TIME"}]'
run "ring list after the last" 0 sq ring list --json --after list-b
expect_out "ring list after the last" '[]'
run "pool list" 0 sq pool list
expect_eq "pool list" "$(awk '{print $1, $2, $3}' "$tmp/out" | tr '\n' '|')" \
  "pool items held|list-p 2 1|list-q 1 0|"
run "pool list --json --limit 1" 0 sq pool list --json --limit 1
mask_times
expect_out "pool list --json" '[{"name":"list-p","items":2,"held":1,"last_used":"TIME"}]'
run "pool list --after" 0 sq pool list --json --after list-p
expect_out "pool list --after" '[{"name":"list-q","items":1,"held":0,"last_used":null}]'
run "pool list NAME still lists its items" 0 sq pool list list-q
expect_out_has "pool list NAME" "k3"

baseline=$(stored)
refused "locks --limit 0" 64 sq locks --limit 0
refused "locks --limit 10001" 64 sq locks --limit 10001
refused "locks --limit x" 64 sq locks --limit x
refused "locks --limit empty" 64 sq locks --limit ''
refused "locks --after" 64 sq locks --after a
refused "locks with an empty NAME" 64 sq locks ''
refused "locks --bogus" 64 sq locks --bogus
refused "ring list NAME" 64 sq ring list list-a
refused "ring list --after empty" 64 sq ring list --after ''
refused "ring list --after a control character" 64 sq ring list --after "$(printf 'a\001')"
refused "ring list --after a long name" 64 sq ring list --after "$(printf 'r%.0s' $(seq 1 200))"
refused "ring list --limit 0" 64 sq ring list --limit 0
refused "ring list --limit -1" 64 sq ring list --limit -1
refused "ring list --since" 64 sq ring list --since 1
refused "pool list --limit with NAME" 64 sq pool list --limit 5 list-p
refused "pool list --after with NAME" 64 sq pool list --after a list-p
refused "pool list two NAMEs" 64 sq pool list list-p list-q
refused "pool list --limit 99999" 64 sq pool list --limit 99999
refused "pool list --after invalid UTF-8" 64 sq pool list --after "$(printf '\377')"
refused "pool list --hold" 64 sq pool list --hold 5
finish
