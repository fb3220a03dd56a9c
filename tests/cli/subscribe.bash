# tests/cli/subscribe.bash -- the body of the table-subscription tests,
# sourced after lib.sh by subscribe.sh (SQLite), pg_subscribe.sh and
# my_subscribe.sh, with $url a database without the schema yet and these,
# set by the caller for its dialect:
#   app_sql SQL     run SQL (statements separated by ';') as a plain client
#                   of the same database, printing rows as tab-separated
#                   lines without a header
#   app_bin HEX     print an SQL expression for the bytes HEX
#   $auto_pk        the column definition of an auto-numbered integer key
#   $bytes_type     a column type for up to 16 bytes
#   $no_rename      (optional) 1 when the dialect cannot rename a table
#                   (Firebird): the checks of a renamed table are skipped
#   app_trigger NAME TABLE LOG
#                   make a trigger called NAME (as written) on TABLE that
#                   inserts each new row's id into the table LOG
# The application's tables are written by that client only: the events come
# from the triggers, never from sqlq.

sq init >/dev/null

# events QUEUE: the payloads of QUEUE's jobs in id order, one per line,
# each JSON object with sorted keys and its time replaced by AT (after
# checking its form).
events() {
  sq jobs --json "$1" | python3 -c '
import json, re, sys
for job in sorted(json.load(sys.stdin), key=lambda j: j["id"]):
    p = json.loads(job["payload"])
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", p.get("at", "")):
        print("BAD TIME " + repr(p.get("at")))
    p["at"] = "AT"
    print(json.dumps(p, sort_keys=True, ensure_ascii=False, separators=(",", ":")))'
}

# status TABLE TAG: the status `sqlq subscriptions` gives TAG's subscription
# to TABLE.
status() {
  sq subscriptions --json | python3 -c '
import json, sys
print(" ".join(s["status"] for s in json.load(sys.stdin) if s["table"] == sys.argv[1] and s["tag"] == sys.argv[2]))' "$1" "$2"
}

# count QUEUE: how many jobs QUEUE holds.
count() {
  sq jobs --json "$1" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

# inserts TABLE N: SQL inserting N rows into languages-like TABLE.
inserts() {
  local i sql=""
  for i in $(seq "$2"); do
    sql+="INSERT INTO $1 (name, year_released) VALUES ('Dylan', $i);"
  done
  printf '%s' "$sql"
}

app_sql "CREATE TABLE languages (language_id $auto_pk, name varchar(20), year_released integer)"

# ---------------------------------------------------------------------------
# Article 001's scenario: two tags on languages, 500 rows inserted in one
# transaction, every event delivered, through one ordered worker and
# through five parallel ones.
run "subscribe send_email" 0 sq subscribe languages --on insert --tag send_email
expect_out "subscribe prints nothing" ""
run "subscribe ring_bell" 0 sq subscribe languages --on insert --tag ring_bell
run "subscriptions" 0 sq subscriptions
expect_out "subscriptions table" "table      tag         on      rows  status
languages  ring_bell   insert  no    active
languages  send_email  insert  no    active"
run "subscriptions --json" 0 sq subscriptions --json
mask_times
expect_out "subscriptions --json" '[{"table":"languages","tag":"ring_bell","on":["insert"],"rows":false,"created":"TIME","status":"active"},{"table":"languages","tag":"send_email","on":["insert"],"rows":false,"created":"TIME","status":"active"}]'

app_sql "BEGIN; $(inserts languages 500) COMMIT"
expect_eq "500 events for send_email" "$(count send_email)" 500
expect_eq "500 events for ring_bell" "$(count ring_bell)" 500
expect_eq "an event's payload" "$(events send_email | sed -n 1p)" \
  '{"action":"insert","at":"AT","pk":{"language_id":1},"table":"languages"}'

# The timeouts bound a hang, not speed: a command a job, 500 times, took
# 120 s on Firebird once (load 11 on 2 CPUs, CI beside two other sessions).
run "one ordered worker" 0 timeout 300 "$SQLQ" --url "$url" work -c 1 --drain send_email -- \
  sh -c 'printf "%s\n" "$(cat)" >>"$0"' "$tmp/ordered"
expect_eq "the ordered worker saw 1..500 in order" \
  "$(python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["pk"]["language_id"]) for l in sys.stdin))' <"$tmp/ordered")" \
  "$(seq -s ' ' 500)"
run "five parallel workers" 0 timeout 300 "$SQLQ" --url "$url" work -c 5 --drain ring_bell -- \
  sh -c 'printf "%s\n" "$(cat)" >>"$0"' "$tmp/parallel"
expect_eq "the parallel workers saw each of the 500 once" \
  "$(python3 -c 'import json, sys; print(" ".join(sorted((str(json.loads(l)["pk"]["language_id"]) for l in sys.stdin), key=int)))' <"$tmp/parallel")" \
  "$(seq -s ' ' 500)"

# A rolled-back transaction yields no event.
app_sql "BEGIN; INSERT INTO languages (name, year_released) VALUES ('Gone', 1); ROLLBACK"
expect_eq "a rollback makes no event" "$(count send_email)" 0

# A waiting worker is woken by a plain client's commit.
"$SQLQ" --url "$url" work send_email -- sh -c 'printf "%s\n" "$(cat)" >>"$0"' "$tmp/woken" 2>/dev/null &
bg_pids+=("$!")
sleep 1
app_sql "INSERT INTO languages (name, year_released) VALUES ('Woken', 2)"
wait_for_lines "$tmp/woken" 1
expect_eq "a waiting worker ran the event" "$(grep -c '"action": *"insert"' "$tmp/woken")" 1
kill "${bg_pids[-1]}" 2>/dev/null
wait "${bg_pids[-1]}" 2>/dev/null
sq purge ring_bell >/dev/null

# An action no tag subscribes to writes nothing.
app_sql "UPDATE languages SET name = 'Changed' WHERE language_id = 1; DELETE FROM languages WHERE language_id = 2"
expect_eq "no update or delete events" "$(count ring_bell)" 0

# ---------------------------------------------------------------------------
# Row images: a composite key, NULLs, bytes and non-ASCII text.
app_sql "CREATE TABLE things (a integer NOT NULL, b varchar(10) NOT NULL, data $bytes_type, note varchar(40), PRIMARY KEY (b, a))"
run "subscribe --rows" 0 sq subscribe things --on insert,update,delete --tag rows --rows
run "subscribe without rows" 0 sq subscribe things --on delete --tag keys
app_sql "INSERT INTO things (a, b, data, note) VALUES (1, 'x', $(app_bin 00ff10), 'Ünïcode ☃');
INSERT INTO things (a, b, data, note) VALUES (2, 'y', NULL, NULL);
UPDATE things SET note = 'ok' WHERE a = 2;
DELETE FROM things WHERE a = 1"
expect_eq "row images" "$(events rows)" \
'{"action":"insert","at":"AT","new":{"a":1,"b":"x","data":"\\x00ff10","note":"Ünïcode ☃"},"pk":{"a":1,"b":"x"},"table":"things"}
{"action":"insert","at":"AT","new":{"a":2,"b":"y","data":null,"note":null},"pk":{"a":2,"b":"y"},"table":"things"}
{"action":"update","at":"AT","new":{"a":2,"b":"y","data":null,"note":"ok"},"old":{"a":2,"b":"y","data":null,"note":null},"pk":{"a":2,"b":"y"},"table":"things"}
{"action":"delete","at":"AT","old":{"a":1,"b":"x","data":"\\x00ff10","note":"Ünïcode ☃"},"pk":{"a":1,"b":"x"},"table":"things"}'
expect_eq "a key-only subscriber of the same table" "$(events keys)" \
  '{"action":"delete","at":"AT","pk":{"a":1,"b":"x"},"table":"things"}'

# Events of one row run in order even with parallel workers: its FIFO group
# is the table and the key.
sq purge rows >/dev/null
sq unsubscribe things --tag keys >/dev/null
app_sql "UPDATE things SET note = '1' WHERE a = 2; UPDATE things SET note = '2' WHERE a = 2;
UPDATE things SET note = '3' WHERE a = 2; UPDATE things SET note = '4' WHERE a = 2"
run "parallel workers on one row" 0 timeout 60 "$SQLQ" --url "$url" work -c 4 --drain rows -- \
  sh -c 'sleep 0.1; printf "%s\n" "$(cat)" >>"$0"' "$tmp/row-order"
expect_eq "one row's events in order" \
  "$(python3 -c 'import json, sys; print(" ".join(json.loads(l)["new"]["note"] for l in sys.stdin))' <"$tmp/row-order")" \
  "1 2 3 4"

# ---------------------------------------------------------------------------
# Many subscribers on one table: one job each; the last unsubscribe removes
# the triggers.
app_sql "CREATE TABLE busy (id integer PRIMARY KEY, n integer)"
for i in $(seq 12); do sq subscribe busy --on insert,delete --tag "tag$i" >/dev/null; done
app_sql "INSERT INTO busy (id, n) VALUES (1, 1); INSERT INTO busy (id, n) VALUES (2, 2)"
total=0
for i in $(seq 12); do total=$((total + $(count "tag$i"))); done
expect_eq "12 subscribers x 2 rows" "$total" 24
for i in $(seq 2 12); do sq unsubscribe busy --tag "tag$i" >/dev/null; done
app_sql "DELETE FROM busy WHERE id = 1"
expect_eq "the remaining subscriber still gets events" "$(count tag1)" 3
expect_eq "an unsubscribed tag gets none" "$(count tag2)" 2
run "last unsubscribe" 0 sq unsubscribe busy --tag tag1
app_sql "DELETE FROM busy WHERE id = 2"
expect_eq "no triggers left" "$(count tag1)" 3

# ---------------------------------------------------------------------------
# Subscribing while another client writes: the events are exactly the rows
# written after some point, without a gap, and the writer never fails.
app_sql "CREATE TABLE stream (id integer PRIMARY KEY, n integer)"
(
  for i in $(seq 100); do
    app_sql "INSERT INTO stream (id, n) VALUES ($i, $i)" || echo "insert $i failed" >>"$tmp/writer-errors"
    sleep 0.02
  done
) &
writer=$!
tries=100
until [ "$(app_sql "SELECT count(*) FROM stream")" -ge 20 ] || [ "$tries" -le 0 ]; do
  tries=$((tries - 1))
  sleep 0.05
done
run "subscribe during writes" 0 sq subscribe stream --on insert --tag live
wait "$writer"
expect_eq "the writer never failed" "$(cat "$tmp/writer-errors" 2>/dev/null)" ""
ids=$(events live | python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["pk"]["id"]) for l in sys.stdin))')
first=${ids%% *}
if [ -z "$ids" ]; then
  fail "no event for writes after the subscription"
else
  expect_eq "events are a gapless suffix of the writes" "$ids" "$(seq -s ' ' "$first" 100)"
  [ "$first" -gt 20 ] && [ "$first" -lt 100 ] || fail "the subscription did not land while the writer wrote (first event $first)"
fi

# ---------------------------------------------------------------------------
# Dropping and renaming a subscribed table.
app_sql "CREATE TABLE doomed (id integer PRIMARY KEY)"
sq subscribe doomed --on insert --tag doom >/dev/null
app_sql "DROP TABLE doomed"
expect_eq "a dropped table" "$(status doomed doom)" no-table
app_sql "CREATE TABLE doomed (id integer PRIMARY KEY); INSERT INTO doomed (id) VALUES (1)"
expect_eq "a table made again has no triggers" "$(count doom)" 0
expect_eq "no triggers" "$(status doomed doom)" no-trigger
run "subscribe again" 0 sq subscribe doomed --on insert --tag doom
app_sql "INSERT INTO doomed (id) VALUES (2)"
expect_eq "events again" "$(count doom)" 1
app_sql "DROP TABLE doomed"
run "unsubscribe a dropped table" 0 sq unsubscribe doomed --tag doom

if [ "${no_rename:-0}" != 1 ]; then
  app_sql "CREATE TABLE oldname (id integer PRIMARY KEY)"
  sq subscribe oldname --on insert --tag moving >/dev/null
  sq subscribe oldname --on insert --tag staying >/dev/null
  app_sql "ALTER TABLE oldname RENAME TO newname"
  expect_eq "a renamed table" "$(status oldname moving)" moved
  app_sql "INSERT INTO newname (id) VALUES (1)"
  expect_eq "a renamed table still sends, under its subscribed name" "$(events moving)" \
    '{"action":"insert","at":"AT","pk":{"id":1},"table":"oldname"}'
  run "unsubscribe one tag of a renamed table" 0 sq unsubscribe oldname --tag moving
  app_sql "INSERT INTO newname (id) VALUES (2)"
  expect_eq "the unsubscribed tag gets no more" "$(count moving)" 1
  expect_eq "the other tag still gets the renamed table's events" "$(count staying)" 2
  expect_eq "and stays moved" "$(status oldname staying)" moved
  run "unsubscribe the last tag of a renamed table" 0 sq unsubscribe oldname --tag staying
  app_sql "INSERT INTO newname (id) VALUES (3)"
  expect_eq "its triggers went with the last subscription" "$(count staying)" 2
fi

# ---------------------------------------------------------------------------
# A table's triggers are named by 64 bits of its name's hash (FNV-1a): a
# trigger with the name that a table's triggers would take, on another
# table (the triggers of a table whose name hashes alike, or anyone's), is
# never dropped by a subscription, which is refused instead.
fnv64() {
  local s=$1 h=$((0xcbf29ce484222325)) i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(((h ^ c) * 0x100000001b3))
  done
  printf '%016x' "$h"
}
taken="sqlq_sub_$(fnv64 clash_b)_i"
app_sql "CREATE TABLE clash_a (id integer PRIMARY KEY); CREATE TABLE clash_b (id integer PRIMARY KEY);
CREATE TABLE clash_log (id integer)"
app_trigger "$taken" clash_a clash_log
app_sql "INSERT INTO clash_a (id) VALUES (1)"
expect_eq "the other table's trigger works" "$(app_sql "SELECT count(*) FROM clash_log")" 1
before=$(sq subscriptions)
run "subscribe while another table has the trigger names" 64 \
  sq subscribe clash_b --on insert,delete --tag clash
expect_error_line "the refusal is one line"
expect_err_has "the refusal names the trigger" "$taken"
expect_eq "no subscription was recorded" "$(sq subscriptions)" "$before"
app_sql "INSERT INTO clash_a (id) VALUES (2)"
expect_eq "the other table's trigger is still there" "$(app_sql "SELECT count(*) FROM clash_log")" 2

# ---------------------------------------------------------------------------
# Garbage: one line on stderr, a sysexits code, nothing changed.
app_sql "CREATE TABLE nokey (n integer)"
stored() {
  sq subscriptions
  app_sql "SELECT count(*) FROM languages"
}
baseline=$(stored)
refused "subscribe without --on" 64 sq subscribe languages --tag t
refused "subscribe without --tag" 64 sq subscribe languages --on insert
refused "an unknown action" 64 sq subscribe languages --on upsert --tag t
refused "an empty action" 64 sq subscribe languages --on insert, --tag t
refused "no table" 64 sq subscribe --on insert --tag t
refused "two tables" 64 sq subscribe languages things --on insert --tag t
refused "a hostile table name" 65 sq subscribe 'languages"; DROP TABLE languages; --' --on insert --tag t
refused "a hostile quote" 65 sq subscribe "languages'); DROP TABLE languages; --" --on insert --tag t
refused "a table name with a newline" 64 sq subscribe "$(printf 'lang\nuages')" --on insert --tag t
refused "a table name too long" 64 sq subscribe "$(printf 'a%.0s' $(seq 64))" --on insert --tag t
refused "an empty table name" 64 sq subscribe "" --on insert --tag t
refused "a table without a primary key" 64 sq subscribe nokey --on insert --tag t
expect_err_has "no primary key says so" "no primary key"
refused "sqlq's own table" 64 sq subscribe sqlq_jobs --on insert --tag t
refused "a tag too long" 64 sq subscribe languages --on insert --tag "$(printf 't%.0s' $(seq 129))"
refused "unsubscribe what is not subscribed" 65 sq unsubscribe languages --tag nobody
refused "unsubscribe without --tag" 64 sq unsubscribe languages
refused "subscriptions with an argument" 64 sq subscriptions languages
refused "subscriptions with a bad flag" 64 sq subscriptions --rows
expect_eq "languages is intact" "$(app_sql "SELECT count(*) FROM languages WHERE name = 'Dylan'")" 498

# Concurrent subscribers of one table, each with its own actions: each
# backend makes a table's subscription changes take turns, so the triggers
# they leave behind serve every tag.
app_sql "CREATE TABLE crowd (id integer PRIMARY KEY)"
pids=()
for i in $(seq 6); do
  case $((i % 3)) in
    0) on=insert ;;
    1) on=insert,delete ;;
    2) on=delete ;;
  esac
  sq subscribe crowd --on "$on" --tag "crowd$i" >"$tmp/crowd$i.out" 2>&1 &
  pids+=("$!")
done
for pid in "${pids[@]}"; do
  wait "$pid" || fail "a concurrent subscriber failed: $(cat "$tmp"/crowd*.out)"
done
app_sql "INSERT INTO crowd (id) VALUES (1)"
app_sql "DELETE FROM crowd WHERE id = 1"
got=""
for i in $(seq 6); do got+="$(sq jobs --json "crowd$i" | grep -o '"action\\":\\"[a-z]*' | tr -d '\\"' | tr '\n' ' ')/"; done
expect_eq "every concurrent subscriber's events" "$got" \
  "action:insert action:delete /action:delete /action:insert /action:insert action:delete /action:delete /action:insert /"
for i in $(seq 6); do sq unsubscribe crowd --tag "crowd$i" >/dev/null; sq purge "crowd$i" >/dev/null; done

finish
