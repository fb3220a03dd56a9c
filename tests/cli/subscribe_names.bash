# tests/cli/subscribe_names.bash -- subscriptions to tables whose own names
# and column names are hostile: every entry of tests/cli/hostile_names.txt,
# on each backend.  Sourced after lib.sh by subscribe_names.sh (SQLite),
# pg_subscribe_names.sh, my_subscribe_names.sh and fb_subscribe_names.sh,
# with $url a database without the schema yet and these, set by the caller
# for its dialect:
#   app_sql SQL     run SQL (statements separated by ';') as a plain client
#                   of the same database
#   qi NAME         print NAME as a quoted identifier of the dialect
#   $fold_upper     (optional) 1 when the events name a column stored in
#                   upper case as a regular identifier (A-Z, then A-Z, 0-9,
#                   _ or $) in lower case, as Firebird's do (docs/firebird.md)
#
# For each entry (table T, key column K, value column V), the application
# makes T (K varchar(40) PRIMARY KEY, V varchar(40)); `sqlq subscribe ...
# -- T` takes T (or refuses a name with a control character with 64, changing
# nothing); the application inserts, updates and deletes a row; the three
# events must name T, K and V exactly, with the values as written; after
# `sqlq unsubscribe` a write makes no event; and a bystander table is
# intact at the end.  The identifiers reach every trigger's SQL (and, on
# PostgreSQL, a function's body) through the dialect's quoting: a name
# that broke out would fail the subscription, change the events or drop
# the bystander.

names_file="$(dirname "${BASH_SOURCE[0]}")/hostile_names.txt"

sq init >/dev/null
app_sql "CREATE TABLE bystander (id integer NOT NULL PRIMARY KEY, v varchar(10))"
app_sql "INSERT INTO bystander (id, v) VALUES (1, 'one')"

# check_events: the events of queue names, for every table subscribed to
# (whose table, key and value column names are in $tmp/subscribed, each
# ended by a NUL): exactly an insert, an update and a delete per table, as
# subscribe_names.bash describes (none from after the unsubscribe).  Prints
# "ok", or one line per table whose events differ.
check_events() {
  sq jobs --json names | FOLD_UPPER=${fold_upper:-0} python3 -c '
import json, os, re, sys
names = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
entries = [tuple(n.decode() for n in names[i:i + 3]) for i in range(0, len(names), 3)]
jobs = sorted(json.load(sys.stdin), key=lambda j: j["id"])
events = {}
for job in jobs:
    p = json.loads(job["payload"])
    p.pop("at", None)
    events.setdefault(p.get("table"), []).append(p)
bad = []
for t, k, v in entries:
    if os.environ["FOLD_UPPER"] == "1":
        k, v = [n.lower() if re.fullmatch(r"[A-Z][A-Z0-9_$]*", n) else n for n in (k, v)]
    row = lambda a, b: {k: a, v: b}
    want = [{"table": t, "action": a, "pk": {k: "k'"'"'1"}, **images} for a, images in (
        ("insert", {"new": row("k'"'"'1", "v\"1")}),
        ("update", {"new": row("k'"'"'1", "v2"), "old": row("k'"'"'1", "v\"1")}),
        ("delete", {"old": row("k'"'"'1", "v2")}))]
    got = events.pop(t, [])
    if got != want:
        bad.append("table %r: got %r, expected %r" % (t, got, want))
bad += ["events of an unknown table: %r" % e for e in events.values()]
print("\n".join(bad) or "ok")' "$tmp/subscribed"
}

entries=0
: >"$tmp/subscribed"
while IFS=$'\t' read -r raw_t raw_k raw_v; do
  [ -z "$raw_t" ] || [ "${raw_t:0:1}" = "#" ] && continue
  T=$(printf '%b' "$raw_t") K=$(printf '%b' "$raw_k") V=$(printf '%b' "$raw_v")
  entries=$((entries + 1))
  what="entry $entries ($(printf '%q' "$T"))"
  qt=$(qi "$T") qk=$(qi "$K") qv=$(qi "$V")
  made=0
  app_sql "CREATE TABLE $qt ($qk varchar(40) NOT NULL PRIMARY KEY, $qv varchar(40))" && made=1
  if [[ $T == *[[:cntrl:]]* ]]; then
    # sqlq refuses the name whether or not the table is there.
    before=$(sq subscriptions)
    run "$what: refused" 64 sq subscribe --on insert,update,delete --tag names --rows -- "$T"
    expect_error_line "$what: refused"
    expect_eq "$what: nothing changed" "$(sq subscriptions)" "$before"
  elif [ "$made" = 0 ]; then
    fail "$what: the application cannot make the table"
  else
    run "$what: subscribe" 0 sq subscribe --on insert,update,delete --tag names --rows -- "$T"
    app_sql "INSERT INTO $qt ($qk, $qv) VALUES ('k''1', 'v\"1'); UPDATE $qt SET $qv = 'v2';
      DELETE FROM $qt"
    run "$what: unsubscribe" 0 sq unsubscribe --tag names -- "$T"
    app_sql "INSERT INTO $qt ($qk, $qv) VALUES ('k2', 'v')"
    printf '%s\0%s\0%s\0' "$T" "$K" "$V" >>"$tmp/subscribed"
  fi
  [ "$made" = 1 ] && app_sql "DROP TABLE $qt"
done <"$names_file"

expect_eq "the events" "$(check_events)" ok
expect_eq "every entry ran" "$entries" "$(grep -cv -e '^#' -e '^$' "$names_file")"
expect_eq "no subscription is left" "$(sq subscriptions --json)" '[]'
expect_eq "the bystander is intact" "$(app_sql "SELECT id, v FROM bystander" | tr -s ' \t|' ' ')" "1 one"
finish
