# tests/cli/pool.bash -- the body of the pool tests, sourced by pool.sh
# (SQLite) and my_pool.sh (MariaDB) after lib.sh, with $url a database
# without the schema yet.  sqlq pool: add, list, next (in turn, --hold,
# --json), release, remove; concurrent `pool next` processes; and garbage
# input, each refused with one "sqlq: " line and its sysexits code, leaving
# the pool as it was.

sq init >/dev/null

run "add" 0 sq pool add keys k1 k2 k3
expect_out "add prints nothing" ""
run "add again" 0 sq pool add keys k2
run "list" 0 sq pool list keys
expect_eq "list in turn order" "$(awk 'NR > 1 {print $1 "," $2 "," $3}' "$tmp/out" | tr '\n' ' ')" \
  "k1,0,- k2,0,- k3,0,- "
turns=""
for _ in 1 2 3 4 5; do
  run "next" 0 sq pool next keys
  turns="$turns$(cat "$tmp/out") "
done
expect_eq "next hands out in turn" "$turns" "k1 k2 k3 k1 k2 "
run "list --json" 0 sq pool list --json keys
mask_times
expect_out "list --json" '[{"item":"k3","id":3,"uses":1,"last_used":"TIME","held_until":null},{"item":"k1","id":1,"uses":2,"last_used":"TIME","held_until":null},{"item":"k2","id":2,"uses":2,"last_used":"TIME","held_until":null}]'
expect_eq "stamps have microseconds" \
  "$(sq pool list --json keys | grep -cE '"last_used":"[0-9T:-]+\.[0-9]{6}Z"')" 1

# --hold: ITEM TAB TOKEN; held items go to no one else until released.
run "next --hold" 0 sq pool next --hold 60 keys
IFS=$'\t' read -r held token <"$tmp/out"
expect_eq "held item" "$held" "k3"
run "next --hold --json" 0 sq pool next --hold 60 --json keys
mask_times
expect_eq "json of a held item" "$(sed -E 's/"token":[0-9]+/"token":T/' "$tmp/out")" \
  '{"item":"k1","id":1,"uses":3,"last_used":"TIME","held_until":"TIME","token":T}'
run "next skips held items" 0 sq pool next --hold 60 keys
expect_out "the last free item" "$(printf 'k2\t')$(cut -f2 "$tmp/out")"
run "every item held" 75 sq pool next keys
expect_error_line "every item held"
run "release with a wrong token" 75 sq pool release --token 12345 keys k3
expect_error_line "release with a wrong token"
run "release" 0 sq pool release --token "$token" keys k3
run "release twice" 75 sq pool release --token "$token" keys k3
run "next after release" 0 sq pool next keys
expect_out "the released item" "k3"

run "remove" 0 sq pool remove keys k3
run "remove again" 65 sq pool remove keys k3
expect_error_line "remove again"

# Three processes picking at once from four items: 120 picks, spread within
# 3 uses of each other.
sq pool add fair a b c d
for p in 1 2 3; do
  (for _ in $(seq 40); do "$SQLQ" --url "$url" pool next fair || echo FAILED; done) >"$tmp/picks$p" &
done
wait
expect_eq "no pick failed" "$(cat "$tmp"/picks? | grep -c FAILED)" 0
expect_eq "120 picks" "$(cat "$tmp"/picks? | wc -l)" 120
spread=$(sq pool list --json fair | grep -o '"uses":[0-9]*' | cut -d: -f2 | sort -n | sed -n '1p;$p' | tr '\n' ' ')
read -r lo hi <<<"$spread"
expect_eq "uses within 3 ($spread)" "$((hi - lo <= 3))" 1

# Garbage: one error line, the sysexits code, and the pool as it was.
sq pool add keep x y >/dev/null
baseline=$(sq pool list --json keep)
stored() {
  sq pool list --json keep
}
refused "pool without a subcommand" 64 sq pool
refused "unknown subcommand" 64 sq pool frob
refused "add without an item" 64 sq pool add keep
refused "add with one bad item among good ones" 64 sq pool add keep z "$(printf 'a\tb')"
refused "empty item" 64 sq pool add keep ""
refused "item with a tab" 64 sq pool add keep "$(printf 'a\tb')"
refused "item that is not UTF-8" 64 sq pool add keep "$(printf '\377')"
refused "next with --token" 64 sq pool next --token 5 keep
expect_err_has "the refused option is named" "takes no option '--token'"
refused "next with --token=5" 64 sq pool next --token=5 keep
expect_err_has "the refused option is named, without its value" "takes no option '--token'"
i1025=$(printf 'i%.0s' $(seq 1025))
refused "1025-byte item" 64 sq pool add keep "$i1025"
refused "empty pool name" 64 sq pool list ""
refused "next of an unknown pool" 65 sq pool next nope
refused "list of an unknown pool" 65 sq pool list nope
refused "release of an unknown item" 65 sq pool release --token 1 keep z
refused "release without a token" 64 sq pool release keep x
refused "release with a bad token" 64 sq pool release --token abc keep x
refused "next --hold -1" 64 sq pool next --hold -1 keep
refused "next --hold nan" 64 sq pool next --hold nan keep
refused "list --hold" 64 sq pool list --hold 5 keep
refused "next --bogus" 64 sq pool next --bogus keep
refused "database unavailable" 69 "$SQLQ" --url "postgres://nobody@127.0.0.1:1/none" pool next keep

finish
