# tests/crash/netns.bash -- worker hosts cut off by the network: `sqlq
# work` and `sqlq lock` run in a network namespace of their own, joined to
# the host's database server by a veth pair, and the link is cut in the
# middle of jobs and of a held lock by dropping every packet (nftables, in
# the namespace), then restored (docs/scale.md, "Worker hosts cut off by
# the network").
#
# The body of pg_netns.sh and my_netns.sh, sourced after lib.sh with:
#   netns_port        the port of a server the test starts for itself (the
#                     fixtures' servers listen on 127.0.0.1 only, out of a
#                     namespace's reach)
#   server_script     the command of its tests/servers script ("bash PATH")
#   listen_also       the name of the variable that makes that script's
#                     server listen on one more address
#   scheme            its URLs' scheme (user sqlq, database sqlq)
#   url_user, url_path  the URLs' user part and path, when not "sqlq" and
#                     "/sqlq"
#   listens_there_only  1 when the server listens on ADDR only (not on
#                     127.0.0.1): the host reaches it there too
#   locks_freed_while_cut  0 when the server keeps the session of a lock's
#                     holder cut off until the link returns (default 1)
# Needs root, ip (iproute2) and nft (nftables).  With SQLQ_TEST_KEEP_LOG
# set to a path, the commands' lines and the workers' stderr are copied
# there at exit.  SQLQ_TEST_NETNS_DEADLINE (seconds, 420 by default) is
# when the watchdog ends a run that has not ended by itself.
#
# Checked, with a job's command writing a line per tenth of a second
# ("beat") between its "start" and "done" lines, and a lock's command the
# same:
#   - the cut-off worker stops its commands before their leases run out:
#     no beat of an attempt after the next attempt of the same job began;
#   - the jobs are retried by a worker on the host, and none is lost (all
#     done, the queue empty, none dead);
#   - when the link returns, the cut-off worker's late answers are refused
#     (the claim's token), and it claims and runs jobs again;
#   - a lock's holder cut off stops its command before another holder on
#     the host runs its own, and the lock can be had again.
# Every loop is bounded; the namespace is removed at exit whatever happens.

command -v ip >/dev/null || die "no ip (iproute2): bash scripts/install-deps.sh installs it"
command -v nft >/dev/null || die "no nft (nftables): bash scripts/install-deps.sh installs it"
[ "$(id -u)" -eq 0 ] || die "network namespaces need root"

# The server: started listening on 127.0.0.1 and ADDR, stopped with its
# data removed; its URL through ADDR.
server_start() {
  # shellcheck disable=SC2086 # "bash SCRIPT"
  env "$listen_also=$1" $server_script start "$netns_port"
}
server_stop() {
  # shellcheck disable=SC2086 # "bash SCRIPT"
  timeout -k 10 120 $server_script stop "$netns_port"
}
server_url() {
  echo "$scheme://${url_user:-sqlq}@$1:$netns_port${url_path:-/sqlq}"
}

# One namespace and one /30 per server port, so that the PostgreSQL and
# MariaDB scenarios can run at once.
ns=sqlq-netns-$netns_port
veth_host=sqn${netns_port}h
veth_ns=sqn${netns_port}n
subnet=10.213.$((netns_port % 256))
host_addr=$subnet.1
ns_addr=$subnet.2

# in_ns CMD...: run CMD in the namespace.
in_ns() {
  ip netns exec "$ns" "$@"
}

# teardown: stop the watchdog, kill what runs in the namespace, remove it
# (with its end of the veth pair, and so the host's end) and stop the
# server, each step bounded.  Runs at exit, before common.sh's cleanup.
teardown() {
  local pids
  [ -z "${watchdog_pid:-}" ] || kill "$watchdog_pid" 2>/dev/null
  if ip netns list 2>/dev/null | grep -qw "$ns"; then
    pids=$(ip netns pids "$ns" 2>/dev/null)
    # shellcheck disable=SC2086 # a list of pids
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    timeout -k 5 30 ip netns del "$ns" 2>/dev/null
  fi
  timeout -k 5 30 ip link del "$veth_host" 2>/dev/null
  server_stop >/dev/null 2>&1
  [ -z "${SQLQ_TEST_KEEP_LOG:-}" ] || cp -r "$tmp/log" "$SQLQ_TEST_KEEP_LOG" 2>/dev/null
  cleanup
}
trap teardown EXIT

teardown_quiet() {
  trap - EXIT
  teardown
  trap teardown EXIT
}
teardown_quiet
mkdir -p "$tmp" # removed by the teardown

# The whole run is bounded too.  wait_until and wait_gone count tries of
# 0.1 s, and a machine that stalls stretches each try without limit: in 23
# runs of each scenario, one of each (and a Galera test beside them) ran
# past ctest's timeout while the machine ran out of memory (load 25-31,
# then the kernel's OOM killer), and ctest's kill leaves the namespace and
# the server behind (docs/scale.md).  So a watchdog ends a run that passes
# SQLQ_TEST_NETNS_DEADLINE seconds (420 by default; ctest's timeout is
# 700) with "FAIL: the run passed its deadline ...", naming the step it was in,
# the machine's load and memory pressure and the test's processes (with
# what each waits on in the kernel); the EXIT trap then removes the
# namespace and stops the server.
deadline=${SQLQ_TEST_NETNS_DEADLINE:-420}
step_file=$tmp/step
test_pid=$$

# at STEP: the step that runs now, for the watchdog's message.
at() {
  echo "$1" >"$step_file"
}
at "setting up the namespace and the server"

# snapshot: the machine's load and memory pressure, and the processes of
# the test and of the namespace.
snapshot() {
  local pids
  echo "load: $(cat /proc/loadavg); memory pressure: $(head -n 1 /proc/pressure/memory 2>/dev/null)"
  pids=$({
    descendants "$test_pid"
    ip netns pids "$ns" 2>/dev/null
  } | sort -un | paste -sd, -)
  [ -z "$pids" ] || ps -o pid,ppid,stat,wchan:24,etime,args -p "$pids"
}

# watchdog: at the deadline, say so with the step and a snapshot, and send
# the test SIGTERM (its trap dies, once the command in the foreground
# returns); when the test still runs 30 s later, kill its other processes
# so that the command in the foreground returns.
watchdog() {
  local end=$((SECONDS + deadline)) pid i
  while [ "$SECONDS" -lt "$end" ]; do
    kill -0 "$test_pid" 2>/dev/null || return 0
    sleep 1
  done
  {
    echo "FAIL: the run passed its deadline of $deadline s, in step: $(cat "$step_file" 2>/dev/null)"
    snapshot
  } >&2
  kill -TERM "$test_pid" 2>/dev/null
  for ((i = 0; i < 30; i++)); do
    kill -0 "$test_pid" 2>/dev/null || return 0
    sleep 1
  done
  for pid in $(descendants "$test_pid"); do
    [ "$pid" = "$BASHPID" ] || kill -9 "$pid" 2>/dev/null
  done
}
trap 'die "stopped by the watchdog after $deadline s, in step: $(cat "$step_file")"' TERM
watchdog &
watchdog_pid=$!

ip netns add "$ns" || die "ip netns add $ns"
ip link add "$veth_host" type veth peer name "$veth_ns" || die "ip link add $veth_host"
ip link set "$veth_ns" netns "$ns" || die "ip link set $veth_ns netns $ns"
ip addr add "$host_addr/30" dev "$veth_host" || die "ip addr add $host_addr"
ip link set "$veth_host" up || die "ip link set $veth_host up"
in_ns ip addr add "$ns_addr/30" dev "$veth_ns" || die "ip addr add $ns_addr (in $ns)"
in_ns ip link set "$veth_ns" up || die "ip link set $veth_ns up (in $ns)"
in_ns ip link set lo up || die "ip link set lo up (in $ns)"

at "starting the server"
server_start "$host_addr" || die "the server on port $netns_port did not start"
host_side=127.0.0.1
[ "${listens_there_only:-0}" = 0 ] || host_side=$host_addr
url=$(server_url "$host_side")
ns_url=$(server_url "$host_addr")
sq init >/dev/null || die "init"
in_ns "$SQLQ" --url "$ns_url" stats >/dev/null || die "the server cannot be reached from $ns"

# cut_link: drop every packet to and from the veth in the namespace; the sockets
# stay open on both sides, as when a cable or a switch fails.
cut_link() {
  in_ns nft -f - <<NFT || die "nft: cannot cut the link"
table inet sqlq_cut {
  chain in { type filter hook input priority -100; iifname "$veth_ns" drop; }
  chain out { type filter hook output priority -100; oifname "$veth_ns" drop; }
}
NFT
}

# restore_link: let packets through again.
restore_link() {
  in_ns nft delete table inet sqlq_cut || die "nft: cannot restore the link"
}

log=$tmp/log
mkdir -p "$log"

# The commands of jobs and locks: "start", then a beat every 0.1 s for
# TENTHS tenths of a second (read from stdin, the job's payload, when
# TENTHS is "payload"), then "done", each line "WHAT JOB TOKEN WHO SECONDS"
# appended to the file PREFIX<JOB> (a lock's command has JOB "lock" and its
# pid for TOKEN), the time from the host's clock (CLOCK_REALTIME, the same
# in the namespace).  On SIGTERM it writes "term" and ends at once (its
# sleeps are waited for with `wait`, which a signal interrupts).
job_sh=$tmp/job.sh
cat >"$job_sh" <<'SH'
who=$1 id=${SQLQ_JOB_ID:-lock} token=${SQLQ_JOB_TOKEN:-$$} tenths=$3
f=$2$id
[ "$tenths" != payload ] || read -r tenths
mark() { echo "$1 $id $token $who $EPOCHREALTIME" >>"$f"; }
trap 'mark term; exit 143' TERM
mark start
for ((i = 0; i < tenths; i++)); do
  sleep 0.1 &
  wait $!
  mark beat
done
mark done
SH

# start_worker_in WHERE ERR ARGS...: start `sqlq work ARGS` in the
# namespace (WHERE ns) or on the host (WHERE host); its pid is in $!.
start_worker_in() {
  local where=$1 err=$2
  shift 2
  if [ "$where" = ns ]; then
    ip netns exec "$ns" "$SQLQ" --url "$ns_url" work "$@" 2>"$err" &
  else
    "$SQLQ" --url "$url" work "$@" 2>"$err" &
  fi
  bg_pids+=($!)
}

# running_in_ns N: at least N commands of the namespace's worker run
# (started, neither done nor ended by SIGTERM).
running_in_ns() {
  [ "$(cat "$log"/job-* 2>/dev/null | awk '$4 == "ns" { s[$2 " " $3] = $1 }
       END { for (t in s) if (s[t] == "start" || s[t] == "beat") n++; print n + 0 }')" -ge "$1" ]
}

# since TIME: seconds from TIME (an $EPOCHREALTIME) to now, to 0.1 s.
since() {
  awk -v t="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", now - t }'
}

# check_attempts: no two attempts of a job overlap: no "beat" or "done" of
# an attempt after the next attempt's "start" (its "term", written when
# SIGTERM came, may follow it: the contract is that the command is
# signalled before its lease ends); every job is done; a job done twice
# was first done by the cut-off worker, whose ack was then refused, never
# reached the database, or was not sent (the worker, blocked on the dead
# link, found the lease run out before it reaped the command).  Sets twice to the jobs done twice.
check_attempts() {
  local f overlaps id
  twice=0
  for f in "$log"/job-*; do
    id=${f##*-}
    overlaps=$(awk '{ if (!($3 in first)) { first[$3] = $5; order[++n] = $3 }
                      if ($1 != "term") last[$3] = $5 }
      END { for (i = 2; i <= n; i++) if (last[order[i - 1]] > first[order[i]])
              printf "attempt %s works at %s after attempt %s began at %s; ", order[i - 1],
                     last[order[i - 1]], order[i], first[order[i]] }' "$f")
    [ -z "$overlaps" ] || die "job $id: two attempts overlap: $overlaps"
    grep -q '^done ' "$f" || die "job $id never finished: $(tr '\n' '|' <"$f")"
    if [ "$(grep -c '^done ' "$f")" -gt 1 ]; then
      twice=$((twice + 1))
      [ "$(grep '^done ' "$f" | head -n 1 | cut -d' ' -f4)" = ns ] &&
        grep -qE "job $id: (lease lost, ack refused|ack failed: the database was away|exit status 0 after its lease was lost)" \
          "$log/ns.err" ||
        die "job $id was done twice, not after a late ack of the cut-off worker: $(grep -v beat "$f" | tr '\n' '|'); the worker said: $(grep "job $id:" "$log/ns.err" | tr '\n' '|')"
    fi
  done
}

# ---------------------------------------------------------------------------
# Jobs: the worker in the namespace runs four jobs when the link is cut: two
# that end 2 s after the cut (their acks cannot get through, then come
# late) and two that would run 12 s (stopped when their leases run out).  A
# worker on the host takes them back when their leases run out, and runs
# the rest.
lease=6
jobs=12
for ((i = 0; i < jobs; i++)); do
  sq push -a 5 cut "$((i % 2 == 0 ? 30 : 120))" >/dev/null || die "push"
done
start_worker_in ns "$log/ns.err" --lease "$lease" --concurrency 4 --backoff 0 --kill-after 2 cut -- \
  bash "$job_sh" ns "$log/job-" payload
ns_worker=$!
at "jobs: the namespace's worker starts 4 commands"
wait_until 30 running_in_ns 4 || die "the worker in $ns did not start 4 commands: $(cat "$log/ns.err")"
sleep 1
cut_at=$EPOCHREALTIME
echo "cut $cut_at" >"$log/times"
cut_link
start_worker_in host "$log/host.err" --lease "$lease" --concurrency 4 --backoff 0 --kill-after 2 cut -- \
  bash "$job_sh" host "$log/job-" 10
host_worker=$!

# The cut-off worker's commands stop by themselves or by SIGTERM when their
# leases run out, the database out of reach.
stopped_in_ns() {
  ! running_in_ns 1
}
at "jobs: the cut-off worker stops its commands"
wait_until 60 stopped_in_ns || die "the cut-off worker's commands still run $(since "$cut_at") s after the cut"
pass "the cut-off worker stopped its commands $(since "$cut_at") s after the cut (lease $lease s)"

# The dead link is noticed by a call that fails (tcp_user_timeout), or
# shows when the link returns.
noticed() {
  grep -q 'retrying' "$log/ns.err"
}
at "jobs: the cut-off worker finds the database away"
if wait_until 60 noticed; then
  pass "the cut-off worker found the database away $(since "$cut_at") s after the cut"
fi

# Every job is done meanwhile, by the host's worker.
all_done() {
  sq stats --json cut 2>/dev/null | grep -q '"ready":0,"scheduled":0,"running":0,"dead":0'
}
at "jobs: the host's worker runs the jobs"
wait_until 90 all_done || die "the host's worker did not finish the jobs: $(sq stats --json cut)"
pass "the host's worker ran the jobs the cut-off worker held"
kill -TERM "$host_worker"
wait_gone 60 "$host_worker" || die "the host's worker still runs 60 s after SIGTERM"
wait "$host_worker" || die "the host's worker exited $?: $(cat "$log/host.err")"

# The link returns: the late answers of the cut-off worker are refused, and
# it works again.
at "jobs: the link returns, the cut-off worker's late answers"
restore_link
restored_at=$EPOCHREALTIME
refused_all() {
  [ "$(grep -cE 'lease lost, ack refused|ack failed: the database was away|after its lease was lost; the' \
    "$log/ns.err")" -ge 4 ]
}
wait_until 120 refused_all ||
  die "the cut-off worker did not finish its 4 jobs after the link returned: $(cat "$log/ns.err")"
pass "the cut-off worker's late answers were refused $(since "$restored_at") s after the link returned"
for ((i = 0; i < 4; i++)); do
  sq push cut 5 >/dev/null || die "push"
done
rejoined() {
  [ "$(cat "$log"/job-* | awk '$1 == "done" && $4 == "ns" && $5 > '"$restored_at" | wc -l)" -ge 4 ]
}
at "jobs: the cut-off worker runs jobs again"
wait_until 90 rejoined || die "the cut-off worker did not run jobs again: $(cat "$log/ns.err")"
pass "the cut-off worker runs jobs again $(since "$restored_at") s after the link returned"
wait_until 30 all_done || die "jobs are left: $(sq stats --json cut)"
kill -TERM "$ns_worker"
at "jobs: the namespace's worker ends on SIGTERM"
wait_gone 60 "$ns_worker" || die "the namespace's worker still runs 60 s after SIGTERM"
wait "$ns_worker" || die "the namespace's worker exited $?: $(cat "$log/ns.err")"
check_attempts
pass "$((jobs + 4)) jobs: none lost, no two attempts of a job at once, $twice done twice after a late ack"

# ---------------------------------------------------------------------------
# A lock: its holder in the namespace (sqlq lock's default checks, every 2 s
# with a 5 s timeout) is cut off while its command runs; a holder on the
# host waits for the lock.  The cut-off holder stops its command and exits
# 75; the server ends its session, which frees the lock, when its own
# keepalives give up (PostgreSQL) or when the link returns (MariaDB, where
# the wrapper sets locks_freed_while_cut=0); only then does the host's
# holder run its command.  The host's holder checks its lock with a
# timeout of 30 s rather than 5: its server is on the loopback, and a
# check that fails there only says that the machine stalled (one run, at a
# load of 25-31 with memory running out, saw it exit 75 after a 5 s check).
# The commands are job_sh's.
locklog=$log/lock-lock
at "lock: the holder in the namespace starts its command"
ip netns exec "$ns" "$SQLQ" --url "$ns_url" lock --kill-after 2 netns-lock -- \
  bash "$job_sh" ns "$log/lock-" 3000 2>"$log/lock-ns.err" &
ns_holder=$!
bg_pids+=("$ns_holder")
holding() {
  grep -q '^beat lock [0-9]* ns' "$locklog" 2>/dev/null
}
wait_until 30 holding || die "the holder in $ns did not start its command: $(cat "$log/lock-ns.err")"
cut_at=$EPOCHREALTIME
cut_link
"$SQLQ" --url "$url" lock -w 150 --check-timeout 30 netns-lock -- bash "$job_sh" host "$log/lock-" 20 \
  2>"$log/lock-host.err" &
host_holder=$!
bg_pids+=("$host_holder")
at "lock: the cut-off holder stops its command"
wait_gone 60 "$ns_holder" || die "the cut-off holder still runs 60 s after the cut"
wait "$ns_holder"
code=$?
[ "$code" = 75 ] || die "the cut-off holder exited $code, not 75: $(cat "$log/lock-ns.err")"
pass "the cut-off holder stopped its command $(since "$cut_at") s after the cut: $(cat "$log/lock-ns.err")"
if [ "${locks_freed_while_cut:-1}" = 0 ]; then
  # The server keeps the session, and its lock, until the link returns.
  [ ! -s "$locklog" ] || ! grep -q '^start lock [0-9]* host' "$locklog" ||
    die "the host's holder got the lock while the link was cut"
  restore_link
  restored=1
fi
at "lock: the host's holder gets the lock and runs its command"
wait_gone 180 "$host_holder" || die "the host's holder still runs 180 s after the cut"
wait "$host_holder" || die "the host's holder exited $?: $(cat "$log/lock-host.err")"
host_start=$(awk '$1 == "start" && $4 == "host" { print $5 }' "$locklog")
pass "the host's holder got the lock $(awk -v a="$cut_at" -v b="$host_start" 'BEGIN { printf "%.1f", b - a }') s after the cut"
late=$(awk -v b="$host_start" '$4 == "ns" && $1 != "term" && $5 > b' "$locklog")
[ -z "$late" ] || die "the cut-off holder's command ran after the host's began: $late"
at "lock: a holder in the namespace takes the lock again"
[ -n "${restored:-}" ] || restore_link
ip netns exec "$ns" "$SQLQ" --url "$ns_url" lock -w 60 netns-lock -- true 2>"$log/lock-ns.err" ||
  die "the holder in $ns cannot take the lock after the link returned: $(cat "$log/lock-ns.err")"
pass "a holder in the namespace takes the lock again after the link returned"
