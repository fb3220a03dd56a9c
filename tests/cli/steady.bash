# tests/cli/steady.bash -- sqlq bench --steady on the database at $url:
# bad flags are usage errors with one line; a short run prints a JSON
# object a second with every field (the database's health among them)
# and a summary in which every job enqueued was acked, and leaves its
# queue empty; the text form prints its header, lines and summary; with
# --mix, jobs fail once and die too, and every job is acked or dead.
# Sourced after lib.sh and the backend's database file; no timing is
# checked.

for flags in "--steady 0" "--steady x" "--steady 1000001" "--steady" \
  "--steady 5 --seconds 0" "--steady 5 --seconds 86401" "--seconds 5" \
  "--steady 5 --processes" "--steady 5 --ring" "--drain --queue q --steady 5" \
  "--mix" "--ring --mix" "--steady 5 --mix --payload 8" "--steady 5 --mix=1"; do
  # shellcheck disable=SC2086
  run "bench $flags" 64 "$SQLQ" --url "$url" bench $flags
  expect_error_line "bench $flags"
done

run "steady json" 0 "$SQLQ" --url "$url" bench --steady 50 --seconds 2 --workers 2 \
  --batch 10 --queue steady --json
checks=$((checks + 1))
python3 - "$tmp/out" <<'PY' || fail "steady json: $(tr '\n' '|' <"$tmp/out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
summary = lines[-1]
seconds = lines[:-1]
assert summary["summary"] == "steady", summary
assert summary["rate"] == 50 and summary["seconds"] == 2 and summary["workers"] == 2
assert summary["enqueued"] > 0 and summary["acked"] == summary["enqueued"], summary
assert len(seconds) >= 2, seconds
keys = {"t", "enqueued", "acked", "claims", "claim_ms", "claim_max_ms", "lag_ms",
        "lag_p99_ms", "lag_max_ms", "backlog", "health"}
for i, s in enumerate(seconds):
    assert set(s) == keys, s
    assert s["t"] == i + 1, s
    assert isinstance(s["health"], dict) and s["health"], s
    assert (s["claims"] == 0) == (s["claim_ms"] is None), s
assert sum(s["enqueued"] for s in seconds) == summary["enqueued"]
assert sum(s["acked"] for s in seconds) == summary["acked"]
PY
run "steady leaves its queue empty" 0 "$SQLQ" --url "$url" stats steady
expect_out_has "steady leaves its queue empty" "steady"
checks=$((checks + 1))
grep -Eq '^steady +0 +0 +0 +0' "$tmp/out" || fail "steady queue not empty: $(tr '\n' '|' <"$tmp/out")"

run "steady mix" 0 "$SQLQ" --url "$url" bench --steady 200 --seconds 6 --workers 2 \
  --batch 10 --queue steady --mix --json
checks=$((checks + 1))
python3 - "$tmp/out" <<'PY' || fail "steady mix: $(tr '\n' '|' <"$tmp/out" | head -c 600)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
summary, seconds = lines[-1], lines[:-1]
# Job 999 of every thousand dies (a loaded machine's producer may enqueue
# fewer than the 1,200 asked for), one in twenty fails once.
assert summary["died"] == summary["enqueued"] // 1000, summary
assert summary["acked"] + summary["died"] == summary["enqueued"], summary
assert sum(s["died"] for s in seconds) == summary["died"], seconds
assert sum(s["retried"] for s in seconds) >= summary["enqueued"] // 20 - 1, seconds
assert seconds[-1]["backlog"] == 0, seconds[-1]
PY

run "steady text" 0 "$SQLQ" --url "$url" bench --steady 20 --seconds 1 --queue steady
expect_out_has "steady text: header" "claim_ms"
expect_out_has "steady text: summary" "steady: "

finish
