# tests/cli/failover.bash -- a PostgreSQL primary killed under load and its
# standby promoted, shared by tests/cli/pg_failover.sh (which checks the
# counts) and bench/run-failover.sh (which measures them).  Sourced after
# tests/common.sh ($tmp, bg_pids, alive, wait_until).
#
# failover_run PORT SYNC WORKER_SYNC
#   Start a primary on PORT and a streaming standby on PORT+1
#   (tests/servers/postgres.sh), with synchronous replication when SYNC is
#   on.  Producers and workers use one URL naming both hosts, with
#   target_session_attrs=read-write and worker_synchronous_commit=WORKER_SYNC:
#     - one producer (tests/postgres/failover_client.c produce), one handle
#       enqueueing one job at a time and logging each acknowledged id;
#     - three workers of the same program (lease 2 s), logging each claim
#       and each ack's answer, every 25th job held past its lease so that
#       another worker takes it back and its late ack must be refused;
#     - one `sqlq work` (lease 2 s) whose command logs each run;
#     - one `sqlq lock` holding a named lock, and one handle of the same
#       program holding another, which takes it again once it is lost.
#   Once 300 enqueues and 100 acks were acknowledged, the primary gets
#   SIGKILL (with everything of it), 0.5 s after all its processes are gone
#   the standby is promoted;
#   the producer goes on until 200 more enqueues are acknowledged, and the
#   workers until 50 more acks were answered SQLQ_OK.  Then the
#   queue must drain, and a job pushed by another process after the drain
#   must be run by a worker waiting on LISTEN.
#   Sets (counts, and times in milliseconds after the promotion):
#     fo_acked        enqueues the producer saw acknowledged
#     fo_lost         of those, jobs the new primary does not have
#     fo_loss_ms      how long before the primary was dead (all its
#                     processes gone) the first of those was acknowledged
#     fo_not_done     of those, jobs not finished (acked) after the drain
#     fo_retried      enqueues that failed and were tried again
#     fo_indoubt      failures that said the enqueue may have committed
#     fo_dup_bad      payloads stored twice without such a failure
#     fo_dup          payloads stored twice (each after such a failure)
#     fo_acks_ok      acks answered SQLQ_OK, fo_acks_stale SQLQ_STALE
#     fo_double_ack   jobs acked SQLQ_OK twice
#     fo_stale_ok     acks answered SQLQ_OK with a token older than another
#                     claim of the job already handed out (fencing broken)
#     fo_overlap      claims of a job handed out while an earlier claim's
#                     lease still ran (a job run twice at once)
#     fo_after_ack    runs of a job that started after an ack of it was
#                     answered SQLQ_OK (a finished job run again)
#     fo_resume_claim first claim returned after the promotion
#     fo_resume_ack   first ack answered SQLQ_OK after the promotion
#     fo_resume_push  first enqueue acknowledged after the promotion
#     fo_kill_to_promote  from the SIGKILL's start to the promotion's end
#     fo_wake_ms      how long the job pushed after the drain took to start
#     fo_lock_rc      the exit code of the `sqlq lock` that held the lock
#     fo_lock_after   the exit code of a `sqlq lock` on the new primary
#     fo_relocked     times a handle holding a lock (failover_client lock)
#                     had it again after it found it lost
#   Returns 1 (with a message on stderr) when the scenario could not run:
#   a server did not start, the load never came, the queue did not drain.
#   Leaves the logs in $tmp/fo; the caller stops the servers (failover_stop).

# fo_server ARGS...: tests/servers/postgres.sh.
fo_server() {
  bash "$(dirname "${BASH_SOURCE[0]}")/../servers/postgres.sh" "$@"
}

# failover_stop PORT: stop both servers and remove their data.
failover_stop() {
  fo_server stop "$1" >/dev/null 2>&1
  fo_server stop "$(($1 + 1))" >/dev/null 2>&1
}

fo_enough_load() {
  [ "$(grep -c '^A ' "$fo/producer")" -ge "$1" ] &&
    [ "$(cat "$fo"/worker.* | grep -c ' SQLQ_OK ')" -ge "$2" ]
}
fo_drained() {
  "$SQLQ" --url "$fo_url" stats --json "$fo_q" 2>/dev/null |
    grep -q '"ready":0,"scheduled":0,"running":0,"dead":0'
}
fo_ran() { grep -q "^$1 " "$fo/cli.runs" 2>/dev/null || grep -q "^C $1 " "$fo"/worker.*; }

failover_run() {
  local port=$1 sync=$2 worker_sync=$3 standby=$(($1 + 1)) w t_kill t_dead t_promote lock_pid pushed acked
  local -a clients=()
  fo=$tmp/fo
  fo_q=failover
  rm -rf "$fo"
  mkdir -p "$fo"
  fo_server start "$port" >/dev/null || return 1
  fo_server standby "$standby" "$port" >/dev/null || return 1
  fo_server sync "$port" "$sync" >/dev/null || return 1
  fo_url="postgres://sqlq@127.0.0.1:$port,127.0.0.1:$standby/sqlq?target_session_attrs=read-write"
  fo_url="$fo_url&connect_timeout=2&worker_synchronous_commit=$worker_sync&history=1"
  "$SQLQ" --url "$fo_url" init >/dev/null || return 1

  "$SQLQ_TEST_PG_FAILOVER_CLIENT" produce "$fo_url" "$fo_q" "$fo/stop" >"$fo/producer" 2>&1 &
  bg_pids+=("$!")
  clients+=("$!")
  for w in 1 2 3; do
    "$SQLQ_TEST_PG_FAILOVER_CLIENT" work "$fo_url" "$fo_q" 2 "$fo/stop-workers" >"$fo/worker.$w" 2>&1 &
    bg_pids+=("$!")
    clients+=("$!")
  done
  # The command of `sqlq work` logs "ID TOKEN ATTEMPT T" (T in microseconds).
  "$SQLQ" --url "$fo_url" work --lease 2 --backoff 0 "$fo_q" -- \
    sh -c 'echo "$SQLQ_JOB_ID $SQLQ_JOB_TOKEN $SQLQ_ATTEMPT $(($(date +%s%N) / 1000))" >>"$0"' \
    "$fo/cli.runs" >"$fo/cli.log" 2>&1 &
  bg_pids+=("$!")
  clients+=("$!")
  "$SQLQ" --url "$fo_url" lock -w 10 failover-lock -- sleep 600 >"$fo/lock.log" 2>&1 &
  lock_pid=$!
  bg_pids+=("$lock_pid")
  "$SQLQ_TEST_PG_FAILOVER_CLIENT" lock "$fo_url" failover-held "$fo/stop-workers" >"$fo/locker" 2>&1 &
  bg_pids+=("$!")
  clients+=("$!")

  wait_until 60 grep -q '^L had' "$fo/locker" || {
    echo "the lock holder has no lock: $(tail -n 2 "$fo/locker")" >&2
    return 1
  }
  wait_until 60 fo_enough_load 300 100 || {
    echo "no load in 60 s: $(tail -n 2 "$fo/producer" "$fo"/worker.1 "$fo/cli.log")" >&2
    return 1
  }
  t_kill=$(($(date +%s%N) / 1000))
  fo_server kill "$port" || return 1
  t_dead=$(($(date +%s%N) / 1000))
  sleep 0.5
  fo_server promote "$standby" >/dev/null || return 1
  t_promote=$(($(date +%s%N) / 1000))
  echo "$t_kill $t_promote $t_dead" >"$fo/times"

  # The producer and the workers carry on against the new primary.
  pushed=$(grep -c '^A ' "$fo/producer")
  acked=$(cat "$fo"/worker.* | grep -c ' SQLQ_OK ')
  wait_until 60 fo_enough_load $((pushed + 200)) $((acked + 50)) || {
    echo "no load after the promotion: $(tail -n 2 "$fo/producer" "$fo"/worker.*)" >&2
    return 1
  }
  touch "$fo/stop"
  wait_until 10 eval '! alive "${clients[0]}"' || {
    echo "the producer did not stop" >&2
    return 1
  }
  wait_until 90 fo_drained || {
    echo "the queue did not drain in 90 s: $("$SQLQ" --url "$fo_url" stats --json "$fo_q" 2>&1)" >&2
    return 1
  }
  # A job pushed now by another process must start within 10 s: the
  # workers wait on LISTEN (for an hour) and look again unasked only 30 s
  # after they began to wait.
  local t0 id
  t0=$(date +%s%N)
  id=$("$SQLQ" --url "$fo_url" push "$fo_q" late) || return 1
  if wait_until 10 fo_ran "$id"; then
    fo_wake_ms=$((($(date +%s%N) - t0) / 1000000))
  else
    fo_wake_ms=-1
  fi

  # The lock: its holder saw its session end, and the lock is had anew.
  wait_until 30 eval '! alive "$lock_pid"'
  wait "$lock_pid"
  fo_lock_rc=$?
  "$SQLQ" --url "$fo_url" lock -w 10 failover-lock -- true >>"$fo/lock.log" 2>&1
  fo_lock_after=$?
  # The handle that held failover-held saw it lost, and had it again.
  wait_until 30 eval '[ "$(grep -c "^L had" "$fo/locker")" -ge 2 ]'
  fo_relocked=$(awk '$2 == "lost" { lost = 1 } $2 == "had" && lost { n++ } END { print n + 0 }' \
    "$fo/locker")

  for w in "${clients[@]}"; do
    kill "$w" 2>/dev/null
  done
  wait_until 10 fo_drained

  # What the new primary holds: "ID PAYLOAD DONE" for every job.
  fo_server sql "$standby" "SELECT id, convert_from(payload, 'UTF8'), 0 FROM sqlq_jobs
      WHERE queue = '$fo_q' UNION ALL SELECT id, convert_from(payload, 'UTF8'), 1
      FROM sqlq_jobs_history WHERE queue = '$fo_q'" | tr '|' ' ' >"$fo/stored" || return 1
  failover_count
}

# failover_count: the counts of failover_run, from the logs in $fo.
failover_count() {
  local t_kill t_promote t_dead
  read -r t_kill t_promote t_dead <"$fo/times"
  # The producer's acknowledged ids, payloads retried, stored payloads.
  fo_acked=$(grep -c '^A ' "$fo/producer")
  fo_lost=$(awk 'FNR == NR { have[$1] = 1; next } $1 == "A" && !($3 in have)' \
    "$fo/stored" "$fo/producer" | wc -l)
  fo_loss_ms=$(awk -v t="$t_dead" 'FNR == NR { have[$1] = 1; next }
    $1 == "A" && !($3 in have) && (m == "" || $4 < m) { m = $4 }
    END { print m == "" ? 0 : int((t - m) / 1000) }' "$fo/stored" "$fo/producer")
  fo_not_done=$(awk 'FNR == NR { if ($3 == 1) done[$1] = 1; next }
    $1 == "A" && !($3 in done)' "$fo/stored" "$fo/producer" | wc -l)
  fo_retried=$(awk '$1 == "E" { print $2 }' "$fo/producer" | sort -u | wc -l)
  fo_indoubt=$(awk '$1 == "E" && $4 == 1' "$fo/producer" | wc -l)
  fo_dup=$(awk '$2 ~ /^p-/ { n[$2]++ } END { for (p in n) if (n[p] > 1) print p }' "$fo/stored" | wc -l)
  fo_dup_bad=$(awk 'FNR == NR { if ($1 == "E" && $4 == 1) retried["p-" $2] = 1; next }
    $2 ~ /^p-/ { n[$2]++ } END { for (p in n) if (n[p] > 1 && !(p in retried)) print p }' \
    "$fo/producer" "$fo/stored" | wc -l)
  # Claims: "ID TOKEN T0 T1" from the workers, "ID TOKEN T T" from the
  # runs of `sqlq work` (whose claim returned before its command started).
  { awk '$1 == "C" { print $2, $3, $5, $6 }' "$fo"/worker.*
    awk '{ print $1, $2, $4, $4, "cli" }' "$fo/cli.runs" 2>/dev/null; } >"$fo/claims"
  awk '$1 == "K" { print $2, $3, $4, $5 }' "$fo"/worker.* >"$fo/acks"
  fo_acks_ok=$(grep -c ' SQLQ_OK ' "$fo/acks")
  fo_acks_stale=$(grep -c ' SQLQ_STALE ' "$fo/acks")
  fo_double_ack=$(awk '$3 == "SQLQ_OK" { n[$1]++ } END { for (i in n) if (n[i] > 1) print i }' \
    "$fo/acks" | wc -l)
  # An ack of (id, token) answered OK at T while another claim of the job,
  # made after the acked one, had been handed out before T.
  fo_stale_ok=$(awk 'FNR == NR { claims[$1] = claims[$1] " " $2 ":" $3 ":" $4; next }
    $3 == "SQLQ_OK" {
      k = split(claims[$1], c, " "); mine = -1
      for (i = 1; i <= k; i++) { split(c[i], f, ":"); if (f[1] == $2) mine = f[2] }
      for (i = 1; i <= k; i++) {
        split(c[i], f, ":")
        if (f[1] != $2 && mine >= 0 && f[2] > mine && f[3] < $4) { print $1; break }
      }
    }' "$fo/claims" "$fo/acks" | sort -u | wc -l)
  # Two claims of a job by the workers of the C program, the later one
  # returned before the earlier one's lease (2 s from its T0) ran out.
  fo_overlap=$(awk 'NF == 4 { n = ++k[$1]; t0[$1, n] = $3; t1[$1, n] = $4 }
    END { for (id in k) for (a = 1; a <= k[id]; a++) for (b = 1; b <= k[id]; b++)
      if (a != b && t0[id, a] <= t0[id, b] && t1[id, b] < t0[id, a] + 2000000) print id }' \
    "$fo/claims" | sort -u | wc -l)
  fo_after_ack=$(awk 'FNR == NR { if ($3 == "SQLQ_OK" && (!($1 in ok) || $4 < ok[$1])) ok[$1] = $4; next }
    ($1 in ok) && $3 > ok[$1]' "$fo/acks" "$fo/claims" | wc -l)
  fo_resume_claim=$(awk -v t="$t_promote" '$4 > t { if (m == "" || $4 < m) m = $4 }
    END { print m == "" ? -1 : int((m - t) / 1000) }' "$fo/claims")
  fo_resume_ack=$(awk -v t="$t_promote" '$3 == "SQLQ_OK" && $4 > t { if (m == "" || $4 < m) m = $4 }
    END { print m == "" ? -1 : int((m - t) / 1000) }' "$fo/acks")
  fo_resume_push=$(awk -v t="$t_promote" '$1 == "A" && $4 > t { if (m == "" || $4 < m) m = $4 }
    END { print m == "" ? -1 : int((m - t) / 1000) }' "$fo/producer")
  fo_kill_to_promote=$(((t_promote - t_kill) / 1000))
}
