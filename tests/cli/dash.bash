# tests/cli/dash.bash -- sourced after lib.sh, serve.bash (and a
# backend's *_database.bash) by the dashboard's tests, dash.sh (SQLite) and
# pg_dash.sh: dash_backend_tests drives `sqlq serve`'s dashboard in headless
# Chromium (tests/cli/dash_cdp.py, through the DevTools protocol): each
# page loads without a script error or CSP violation; a dead job is
# retried and one deleted, a queue paused and resumed, a running job
# cancelled by the page's buttons, and the database is read with the CLI
# after each; a lock held by a background `sqlq lock`, a ring and a pool
# are listed on their pages, and a ring's name there leads to its entries.  Screenshots of the main pages are written to
# $SQLQ_TEST_SCREENSHOTS (default: dash-screenshots/ in the directory ctest
# runs it from, the build's tests/; pg_dash.sh: dash-screenshots-pg/).
# Then the dashboard's files and the API endpoints the pages use get
# garbage (4xx with a message, the server still up).  Needs chromium,
# python3-websocket and curl (scripts/install-deps.sh).

# garbage NAME STATUS METHOD PATH [CURL ARGS...]: as http, and the answer is
# the JSON {"error":MESSAGE} with a message.
garbage() {
  http "$@"
  checks=$((checks + 1))
  grep -qE '^\{"error":"[^"]+' "$tmp/body" || fail "$1: no error message: $(head -c 200 "$tmp/body")"
}

dash_backend_tests() {
  local py=/usr/bin/python3 i tries code ro_base ro_pid shots lock_pid lock_key
  command -v chromium >/dev/null || { fail "chromium is not installed (apt-get install chromium)"; finish; }
  "$py" -c 'import websocket' 2>/dev/null ||
    { fail "python3-websocket is not installed (apt-get install python3-websocket)"; finish; }

  sq init >/dev/null
  for i in $(seq 1 12); do
    sq push -k "key-$i" dash-q "job $i" >/dev/null
  done
  sq push dash-q '<img src=x onerror=alert(1)>' >/dev/null
  printf '\000\001\377binary' | sq push dash-bin >/dev/null
  for i in 1 2 3; do
    sq push -a 1 dash-dead "doomed $i" >/dev/null
  done
  sq work --drain dash-dead -- sh -c 'echo "it broke <b>badly</b>" >&2; exit 3' 2>/dev/null
  sq cron add dash-nightly '0 3 * * *' dash-q 'the secret payload' >/dev/null
  sq ring create dash-ring 10 >/dev/null
  sq ring push dash-ring 'entry one' >/dev/null
  sq ring push dash-ring 'entry two' >/dev/null
  sq pool add dash-pool key-a key-b >/dev/null
  sq pool add dash-pool2 key-c >/dev/null
  # A lock held by another process: listed with its key (the name too
  # where the backend keeps it), which `sqlq locks NAME` names.
  "$SQLQ" --url "$url" lock dash-lock -- sleep 600 2>"$tmp/lock.err" &
  lock_pid=$!
  bg_pids+=("$lock_pid")
  tries=200
  until sq locks --json dash-lock 2>/dev/null | grep -q '"name":"dash-lock"' || [ $tries -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  lock_key=$(sq locks --json dash-lock | grep -o '"name":"dash-lock","key":"[-0-9]*"' | grep -o '[-0-9]*"$' | tr -d '"')
  checks=$((checks + 1))
  [ -n "$lock_key" ] || fail "sqlq locks does not list the held lock dash-lock: $(sq locks --json 2>&1)"
  sq push dash-slow 'long' >/dev/null
  # exec: the SIGTERM of the cancelled job's lost lease ends the sleep.
  start_worker "$tmp/slow.err" dash-slow -- sh -c 'cat >/dev/null; exec sleep 60'
  tries=200
  until sq jobs --state running --json dash-slow 2>/dev/null | grep -q '"state":"running"' ||
    [ $tries -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done

  serve_start --read-only
  ro_base=$base
  ro_pid=$serve_pid
  serve_start
  shots=${SQLQ_TEST_SCREENSHOTS:-$PWD/${dash_shots:-dash-screenshots}}
  checks=$((checks + 1))
  SQLQ_TEST_LOCK_KEY=$lock_key SQLQ_TEST_DB_URL=$url SQLQ_TEST_BACKEND=${url%%:*} "$py" "$(dirname "$0")/dash_cdp.py" "$base" "$ro_base" "$shots" \
    >"$tmp/cdp.out" 2>&1
  code=$?
  grep '^FAIL' "$tmp/cdp.out"
  if [ $code != 0 ]; then
    fail "dash_cdp.py exited $code: $(grep -v '^ok:' "$tmp/cdp.out" | tail -n 15 | tr '\n' '|')"
  fi
  checks=$((checks + $(grep -c '^ok:' "$tmp/cdp.out")))
  stop_worker "$worker"

  # The dashboard's files: GET only, no query string, nothing else under /dash/.
  http "the page" 200 GET /
  grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self';" \
    "$tmp/headers" || fail "the page lacks the pages' CSP: $(tr '\r\n' '  ' <"$tmp/headers")"
  checks=$((checks + 1))
  expect_body_has "the page loads its script" '<script src="/dash/dash.js" defer></script>'
  http "the script" 200 GET /dash/dash.js
  grep -qi '^Content-Type: text/javascript' "$tmp/headers" || fail "dash.js is not text/javascript"
  checks=$((checks + 1))
  http "the style" 200 GET /dash/dash.css
  garbage "no such file" 404 GET /dash/nope.js
  garbage "index.html only as /" 404 GET /dash/index.html
  garbage "a dot file" 404 GET /dash/.hidden
  garbage "a deeper path" 404 GET /dash/a/b
  garbage "a traversal" 400 GET /dash/../etc/passwd --path-as-is
  garbage "an encoded traversal" 400 GET /dash/%2e%2e/etc --path-as-is
  garbage "the page with a query string" 400 GET '/?x=1'
  expect_body_has "the page with a query string: a message" '"error":'
  garbage "POST to the page" 405 POST / -H 'X-Sqlq-Csrf: 1'
  garbage "POST to a file" 405 POST /dash/dash.js -H 'X-Sqlq-Csrf: 1'

  # The API the pages use: garbage parameters and names.
  http "server" 200 GET /api/v1/server
  expect_body_has "server" "\"backend\":\"${url%%:*}"
  expect_body_has "server shows no URL" '"read_only":false'
  checks=$((checks + 1))
  grep -qF -e "$url" -e "${url##*/}" "$tmp/body" && fail "/api/v1/server shows the database's URL"
  garbage "server with a query" 400 GET '/api/v1/server?x=1'
  http "schedules" 200 GET /api/v1/schedules
  expect_body_has "schedules" '"name":"dash-nightly"'
  checks=$((checks + 1))
  grep -q 'secret' "$tmp/body" && fail "/api/v1/schedules shows a payload"
  garbage "POST schedules" 404 POST /api/v1/schedules -H 'X-Sqlq-Csrf: 1'
  http "limits" 200 GET /api/v1/limits
  expect_body_has "limits" '{"queue":"dash-q","concurrency":null,"rate":null,"per_group":1,"fair":false}'
  http "subscriptions" 200 GET /api/v1/subscriptions
  expect_body_has "subscriptions" '{"subscriptions":[]}'
  http "a ring" 200 GET '/api/v1/rings/dash-ring?since=1&limit=5'
  expect_body_has "a ring" '"entries":[{"seq":2,'
  http "the rings" 200 GET /api/v1/rings
  expect_body_has "the rings" '{"rings":[{"name":"dash-ring","capacity":10,"entries":2,"last_seq":2,'
  http "the rings after one" 200 GET '/api/v1/rings?after=dash-ring&limit=1'
  expect_body_has "the rings after one" '{"rings":[],"more":false}'
  garbage "the rings, limit 0" 400 GET '/api/v1/rings?limit=0'
  garbage "the rings, limit 501" 400 GET '/api/v1/rings?limit=501'
  garbage "the rings, limit twice" 400 GET '/api/v1/rings?limit=1&limit=2'
  garbage "the rings, unknown parameter" 400 GET '/api/v1/rings?since=1'
  garbage "the rings, after a control character" 400 GET '/api/v1/rings?after=%01'
  garbage "the rings, after a long name" 400 GET "/api/v1/rings?after=$(printf 'r%.0s' $(seq 1 300))"
  garbage "POST the rings" 404 POST /api/v1/rings -H 'X-Sqlq-Csrf: 1'
  garbage "no such ring" 404 GET /api/v1/rings/nope
  garbage "a ring, bad since" 400 GET '/api/v1/rings/dash-ring?since=-1'
  garbage "a ring, since too big" 400 GET '/api/v1/rings/dash-ring?since=99999999999999999999'
  garbage "a ring, limit 0" 400 GET '/api/v1/rings/dash-ring?limit=0'
  garbage "a ring, limit 501" 400 GET '/api/v1/rings/dash-ring?limit=501'
  garbage "a ring, since twice" 400 GET '/api/v1/rings/dash-ring?since=1&since=2'
  garbage "a ring, unknown parameter" 400 GET '/api/v1/rings/dash-ring?state=dead'
  expect_body_has "a ring, unknown parameter: a message" 'unknown parameter'
  garbage "a ring, bad name" 400 GET "/api/v1/rings/$(printf 'x%.0s' $(seq 1 300))"
  http "a pool" 200 GET /api/v1/pools/dash-pool
  expect_body_has "a pool" '"item":"key-a"'
  checks=$((checks + 1))
  grep -q '"token"' "$tmp/body" && fail "/api/v1/pools shows tokens"
  garbage "no such pool" 404 GET /api/v1/pools/nope
  garbage "a pool with a query" 400 GET '/api/v1/pools/dash-pool?x=1'
  http "the pools" 200 GET '/api/v1/pools?limit=1'
  expect_body_has "the pools" '{"pools":[{"name":"dash-pool","items":2,"held":0,"last_used":null}],"more":true}'
  http "the pools after one" 200 GET '/api/v1/pools?after=dash-pool'
  expect_body_has "the pools after one" '{"pools":[{"name":"dash-pool2","items":1,'
  garbage "the pools, limit x" 400 GET '/api/v1/pools?limit=x'
  garbage "the pools, after twice" 400 GET '/api/v1/pools?after=a&after=b'
  garbage "the pools, after invalid UTF-8" 400 GET '/api/v1/pools?after=%ff'
  garbage "the pools, unknown parameter" 400 GET '/api/v1/pools?x=1'
  http "the locks" 200 GET /api/v1/locks
  expect_body_has "the locks" "\"key\":\"$lock_key\""
  garbage "the locks, after" 400 GET '/api/v1/locks?after=a'
  garbage "the locks, limit 0" 400 GET '/api/v1/locks?limit=0'
  garbage "the locks, deeper" 404 GET /api/v1/locks/dash-lock
  garbage "a pool, bad name" 400 GET "/api/v1/pools/$(printf 'p%.0s' $(seq 1 300))"
  garbage "a pool, deeper" 404 GET /api/v1/pools/dash-pool/items
  garbage "schedules with a query" 400 GET '/api/v1/schedules?name=x'
  garbage "limits with a query" 400 GET '/api/v1/limits?queue=dash-q'
  garbage "subscriptions with a query" 400 GET '/api/v1/subscriptions?x'
  http "search by id" 200 GET '/api/v1/queues/dash-q/jobs?search=1'
  expect_body_has "search by id" '"id":1,'
  http "search by key" 200 GET '/api/v1/queues/dash-q/jobs?search=key-1&limit=2'
  expect_eq "search by key, limit 2" "$(grep -o '"id":' "$tmp/body" | wc -l)" 2
  http "search, no match" 200 GET '/api/v1/queues/dash-q/jobs?search=no-such-key'
  expect_body_has "search, no match" '{"jobs":[]}'
  garbage "search empty" 400 GET '/api/v1/queues/dash-q/jobs?search='
  garbage "search too long" 400 GET "/api/v1/queues/dash-q/jobs?search=$(printf 'k%.0s' $(seq 1 257))"
  garbage "search twice" 400 GET '/api/v1/queues/dash-q/jobs?search=a&search=b'
  garbage "search with a NUL" 400 GET '/api/v1/queues/dash-q/jobs?search=a%00b'
  http "still up" 200 GET /api/v1/queues

  # Released: gone from the list.
  kill -TERM "$lock_pid"
  wait "$lock_pid"
  http "the locks once released" 200 GET /api/v1/locks
  checks=$((checks + 1))
  grep -q "\"key\":\"$lock_key\"" "$tmp/body" && fail "the released lock is still listed"

  serve_stop
  serve_pid=$ro_pid
  serve_stop
}
