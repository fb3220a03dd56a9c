# tests/cli/serve_safe.sh -- what keeps `sqlq serve` safe, on SQLite: any
# listener but 127.0.0.1 or ::1 needs a token (127.0.0.2 stands for one
# here) and every request there without it gets 401; the token comes from
# a file or $SQLQ_SERVE_TOKEN; actions need the CSRF header and are refused
# cross-site (Origin, Sec-Fetch-Site) and under --read-only (403), and
# change nothing then; without a token a foreign Host is refused (DNS
# rebinding); garbage targets, query strings, bodies and methods get a 4xx
# with a JSON message, and garbage on the socket does not stop the server;
# every answer has a Content-Security-Policy; SIGINT stops it cleanly; and
# garbage flags exit 64 (65 for a bad token) with one line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve.bash"

sq init >/dev/null
sq push safe-q 'secret payload' >/dev/null
stored() { queue_stats; }
baseline=$(stored)
token=0123456789abcdef-serve-test-token

# Flags.
for bad in "" x 127.0.0.1 127.0.0.1: 127.0.0.1:65536 127.0.0.1:-1 :8089 '[::1]8089' '[::1' \
  '::1:8089' 'localhost:8089' '300.1.1.1:80' '127.0.0.1:80x'; do
  refused "--listen '$bad'" 64 sq serve --listen "$bad"
done
refused "an argument" 64 sq serve extra
for bad in "" 0 -1 x 1.5 1000000001 99999999999999999999; do
  refused "--count-limit '$bad'" 64 sq serve --count-limit "$bad"
done
refused "--token on the command line" 64 sq serve --token "$token"
refused "a non-loopback listener without a token" 64 sq serve --listen 127.0.0.2:0
expect_err_has "it says why" "needs a token"
refused "a missing token file" 64 sq serve --token-file "$tmp/none"
printf 'short\n' >"$tmp/short"
refused "a short token" 65 sq serve --token-file "$tmp/short"
printf 'has space in the token\n' >"$tmp/space"
refused "a token with a space" 65 sq serve --token-file "$tmp/space"
SQLQ_SERVE_TOKEN=short refused "a short token in the environment" 65 sq serve
run "serve --help" 0 sq serve --help
expect_out_has "help names --read-only" "--read-only"
expect_out_has "help names --count-limit" "--count-limit"

# A non-loopback listener with a token from the environment: 401 without it.
SQLQ_SERVE_TOKEN=$token serve_start --listen 127.0.0.2:0
expect_eq "it listens on 127.0.0.2" "${base%:*}" "http://127.0.0.2"
http "no token" 401 GET /api/v1/queues
expect_body_has "no token: a JSON message" '{"error":"a token is needed'
grep -qi '^WWW-Authenticate: Bearer' "$tmp/headers" || fail "401 without WWW-Authenticate"
http "no token: /metrics" 401 GET /metrics
http "no token: a garbage target" 401 GET '/%zz/../x?%'
http "no token: a garbage method" 401 PATCH /api/v1/queues
http "no token: an action" 401 POST /api/v1/queues/safe-q/pause -H 'X-Sqlq-Csrf: 1'
http "a wrong token" 401 GET /api/v1/queues -H "Authorization: Bearer ${token}x"
http "a token cut short" 401 GET /api/v1/queues -H "Authorization: Bearer ${token%?}"
http "a token not Bearer" 401 GET /api/v1/queues -H "Authorization: Basic $token"
http "the token" 200 GET /api/v1/queues -H "Authorization: Bearer $token"
http "the token: /metrics" 200 GET /metrics -H "Authorization: Bearer $token"
expect_eq "nothing changed" "$(stored)" "$baseline"
serve_stop

# A token from a file, on loopback too: asked of every request.
printf '%s\n' "$token" >"$tmp/token"
serve_start --token-file "$tmp/token"
http "loopback with a token file: none given" 401 GET /api/v1/queues
http "the dashboard's page without the token" 401 GET /
http "the dashboard's script without the token" 401 GET /dash/dash.js
http "loopback with a token file: given" 200 GET /api/v1/queues -H "Authorization: Bearer $token"
serve_stop

# Loopback without a token.
serve_start
for path in /api/v1/queues /metrics /nowhere '/api/v1/queues?x=1' '/%zz' / /dash/dash.js \
  /dash/nope; do
  curl -s -o /dev/null -D "$tmp/headers" "$base$path"
  checks=$((checks + 1))
  grep -qi "^Content-Security-Policy: default-src 'none'" "$tmp/headers" ||
    fail "$path: no Content-Security-Policy"
done
http "a foreign Host" 403 GET /api/v1/queues -H 'Host: evil.example:8089'
http "localhost as Host" 200 GET /api/v1/queues -H 'Host: localhost:8089'

# CSRF: the header, then Origin and Sec-Fetch-Site.
http "an action without the CSRF header" 403 POST /api/v1/queues/safe-q/pause
http "a form post from another site" 403 POST /api/v1/queues/safe-q/pause \
  -H 'Origin: http://evil.example' -H 'Content-Type: application/x-www-form-urlencoded' -d 'a=b'
act "a cross-site action (Origin)" 403 /api/v1/queues/safe-q/pause -H 'Origin: http://evil.example'
act "a cross-site action (Origin null)" 403 /api/v1/queues/safe-q/pause -H 'Origin: null'
act "a cross-site action (Sec-Fetch-Site)" 403 /api/v1/queues/safe-q/pause -H 'Sec-Fetch-Site: cross-site'
act "a same-site action (Sec-Fetch-Site)" 403 /api/v1/queues/safe-q/pause -H 'Sec-Fetch-Site: same-site'
expect_eq "refused actions changed nothing" "$(stored)" "$baseline"
act "an https origin of another host" 403 /api/v1/queues/safe-q/pause \
  -H "Origin: https://evil.example"
act "a same-origin action" 200 /api/v1/queues/safe-q/pause -H "Origin: $base" \
  -H 'Sec-Fetch-Site: same-origin'
run "the queue is paused" 0 sq stats --json safe-q
expect_out_has "paused" '"paused":true'
act "resume" 200 /api/v1/queues/safe-q/resume
expect_eq "resumed" "$(stored)" "$baseline"

# Garbage: 4xx with a JSON message, the server still up.
for path in /nowhere /api /api/v1 /api/v2/queues /api/v1/nothing '/api//v1/queues' '/api/v1/../metrics' \
  '/api/v1/queues/%zz' '/api/v1/queues/%00' '/api/v1/queues/a%' '/api/v1/queues?x=1' \
  '/api/v1/queues/safe-q/jobs?state=bogus' '/api/v1/queues/safe-q/jobs?limit=0' \
  '/api/v1/queues/safe-q/jobs?limit=501' '/api/v1/queues/safe-q/jobs?limit=-1' \
  '/api/v1/queues/safe-q/jobs?limit=1x' '/api/v1/queues/safe-q/jobs?limit=99999999999999999999' \
  '/api/v1/queues/safe-q/jobs?state=dead&state=ready' '/api/v1/queues/safe-q/jobs?other=1' \
  '/metrics?x' "/api/v1/queues/$(head -c 300 /dev/zero | tr '\0' q)" \
  "/api/v1/queues/$(head -c 5000 /dev/zero | tr '\0' q)" '/a/b/c/d/e/f/g/h/i/j' \
  '/api/v1/queues/%C3%28' '/api/v1/queues/a%0Ab'; do
  code=$(curl -s -o "$tmp/body" -w '%{http_code}' "$base$path")
  checks=$((checks + 1))
  [[ $code == 4?? ]] || fail "GET '${path:0:60}': $code, not a 4xx"
  case $(head -c 9 "$tmp/body") in
  '{"error":'*) ;;
  *) [ "$(wc -c <"$tmp/body")" = 0 ] || fail "GET '${path:0:60}': no JSON message" ;;
  esac
done
for body in '' 'x' '[]' '{' '{"ids":[]}' '{"ids":[0]}' '{"ids":[-1]}' '{"ids":["1"]}' \
  '{"ids":[1.5]}' '{"ids":1}' '{"other":1}' '{"ids":[1],"ids":[2]}' \
  "{\"ids\":[$(seq -s, 1 1001)]}"; do
  act "retry body '${body:0:40}'" 400 /api/v1/queues/safe-q/retry -H 'Content-Type: application/json' \
    --data-binary "$body"
done
for body in '' '{"ids":[0]}' '{"ids":"1"}'; do
  act "delete body '$body'" 400 /api/v1/queues/safe-q/delete -H 'Content-Type: application/json' \
    --data-binary "$body"
done
act "a bad job id to delete" 400 /api/v1/queues/safe-q/jobs/-1/delete
act "delete with ids on a job" 400 /api/v1/queues/safe-q/jobs/1/delete \
  -H 'Content-Type: application/json' -d '{"ids":[1]}'
act "a form body" 415 /api/v1/queues/safe-q/retry -d 'ids=1'
act "ids on pause" 400 /api/v1/queues/safe-q/pause -H 'Content-Type: application/json' -d '{"ids":[1]}'
head -c 70000 /dev/zero | tr '\0' ' ' >"$tmp/big"
act "a body too large" 413 /api/v1/queues/safe-q/retry -H 'Content-Type: application/json' \
  --data-binary @"$tmp/big"
act "an unknown action" 404 /api/v1/queues/safe-q/explode
act "a bad job id" 400 /api/v1/queues/safe-q/jobs/0/retry
act "a bad job id to cancel" 400 /api/v1/jobs/x/cancel
act "cancel an unknown job" 200 /api/v1/jobs/999999/cancel
expect_body_has "nothing cancelled" '{"cancelled":0}'
http "GET of an action" 404 GET /api/v1/queues/safe-q/pause
http "DELETE" 405 DELETE /api/v1/queues
http "PUT" 405 PUT /api/v1/queues/safe-q/pause -H 'X-Sqlq-Csrf: 1'
expect_eq "garbage changed nothing" "$(stored)" "$baseline"
# Garbage on the socket itself.
hostport=${base#http://}
for junk in 'GARBAGE\r\n\r\n' 'GET\r\n\r\n' 'GET /api/v1/queues HTTP/9.9\r\n\r\n' \
  'GET /api/v1/queues HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n' '\x00\xff\xfe\r\n\r\n'; do
  (exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}" && printf '%b' "$junk" >&3 && timeout 5 cat <&3 >/dev/null) 2>/dev/null
done
checks=$((checks + 1))
alive "$serve_pid" || fail "garbage on the socket stopped the server"
http "still answers" 200 GET /api/v1/queues
http "/metrics counts the refusals" 200 GET /metrics
checks=$((checks + 1))
grep -q '^sqlq_serve_requests_total{class="refused"} [1-9]' "$tmp/body" || fail "no refusal counted"
serve_stop INT

# IPv6 loopback goes without a token too.
serve_start --listen '[::1]:0'
http "[::1]" 200 GET /api/v1/queues
serve_stop

# --read-only: reads work, every action is 403 and changes nothing.
serve_start --read-only
http "read-only: queues" 200 GET /api/v1/queues
for action in pause resume retry-dead jobs/1/delete; do
  act "read-only: $action" 403 "/api/v1/queues/safe-q/$action"
  expect_body_has "read-only: $action says so" 'read-only'
done
act "read-only: cancel" 403 /api/v1/jobs/1/cancel
expect_eq "read-only changed nothing" "$(stored)" "$baseline"
serve_stop

finish
