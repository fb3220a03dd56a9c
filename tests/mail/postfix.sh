# tests/mail/postfix.sh -- article 004 with a real Postfix (docs/postfix.md):
# one message to two local users, each delivery running docs/postfix.md's
# script, which takes `sqlq lock -n MESSAGE-ID` on a SQLite database the two
# users share.  A third process, run as the first user, holds the lock when
# the message arrives; the test checks that Postfix deferred both deliveries
# (exit 75), and, once the lock is free, delivered the message to both users
# and that it was processed once.  It does this twice, on a new database
# each time: the holder creates the lock's sidecar file, first under umask
# 002, then under umask 077 (which made the sidecar's mode 600 before sqlq
# gave it the database's mode: the second user's delivery failed with
# "Permission denied", exit 69, and the mail bounced).
#
# Needs root: it creates two users and a group (removed at exit) and runs a
# Postfix instance of its own, with its configuration, queue and log in the
# test's temporary directory and no network listener; it submits with
# sendmail(1).  Not root: exit 77 (skipped), but a failure when $CI is set,
# since CI runs as root.  Postfix not installed: fails
# (scripts/install-deps.sh installs it, unless another mail system is).
. "$(dirname "$0")/../cli/lib.sh"

if [ "$(id -u)" != 0 ]; then
  if [ -n "${CI:-}" ]; then
    echo "FAIL: needs root, to create users and run a Postfix instance"
    exit 1
  fi
  echo "skip: needs root, to create users and run a Postfix instance"
  exit 77
fi
if [ ! -x /usr/sbin/postfix ] || [ ! -x /usr/sbin/sendmail ]; then
  echo "FAIL: Postfix is not installed (scripts/install-deps.sh installs it unless another mail system is)"
  exit 1
fi

doc=$(dirname "$0")/../../docs/postfix.md
host=sqlq-test.localdomain
etc=$tmp/etc
spool=$tmp/spool
shared=$tmp/shared
log=$tmp/maillog
group=sqlq$$g
users=("sqlq$$a" "sqlq$$b")

# The test's own removals, before common.sh's: stop the Postfix instance,
# then remove the users and their group.
stop_postfix() {
  local pid
  pid=$(sed -n '1s/ //gp' "$spool/pid/master.pid" 2>/dev/null)
  [ -n "$pid" ] || return 0
  /usr/sbin/postfix -c "$etc" stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null
  wait_gone 30 "$pid" || kill -9 "$pid" 2>/dev/null
}
remove_users() {
  local u
  for u in "${users[@]}"; do
    if getent passwd "$u" >/dev/null; then userdel -f "$u"; fi
  done
  if getent group "$group" >/dev/null; then groupdel "$group"; fi
}
trap 'stop_postfix; remove_users; cleanup' EXIT

# doc_block MARKER: the fenced block that follows the line containing
# MARKER in docs/postfix.md, without its fences.
doc_block() {
  awk -v m="$1" 'index($0, m) { found = 1; next }
                 found && /^```/ { if (inside) exit; inside = 1; next }
                 inside { print }' "$doc"
}

# The users, in a group of their own that is their primary group (Postfix's
# local delivery runs commands with the primary group only).
groupadd "$group"
for u in "${users[@]}"; do
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
    --gid "$group" "$u"
done

# The programs the deliveries run, from directories every user may enter:
# the script and the processor of docs/postfix.md with the test's paths, and
# sqlq (a copy, with the sanitizers' options of this test's environment,
# since Postfix gives commands an environment of its own).
chmod 755 "$tmp"
mkdir "$tmp/bin"
cp "$SQLQ" "$tmp/bin/sqlq.bin"
{
  echo '#!/bin/bash'
  for var in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    if [ -n "${!var:-}" ]; then
      value=${!var}
      if [[ $value =~ (^|:)suppressions=([^:]*) ]]; then
        supp=${BASH_REMATCH[2]}
        cp "$supp" "$tmp/bin/$var.supp"
        value=${value/suppressions=$supp/suppressions=$tmp/bin/$var.supp}
      fi
      printf 'export %s=%q\n' "$var" "$value"
    fi
  done
  printf 'exec %q "$@"\n' "$tmp/bin/sqlq.bin"
} >"$tmp/bin/sqlq"
for prog in sqlq-deliver process-mail; do
  doc_block "$prog: tests/mail/postfix.sh" |
    sed -e "s|/var/lib/mailproc|$shared|g" -e "s|^SQLQ=.*|SQLQ=$tmp/bin/sqlq|" \
      -e "s|^PROCESS=.*|PROCESS=$tmp/bin/process-mail|" >"$tmp/bin/$prog"
  expect_eq "docs/postfix.md has $prog" "$(head -n 1 "$tmp/bin/$prog")" "#!/bin/sh"
done
expect_eq "the script defers on any failure to take the lock" \
  "$(grep -c -- ' lock --tempfail ' "$tmp/bin/sqlq-deliver")" 1
chmod 755 "$tmp/bin"/*

# The Postfix instance: docs/postfix.md's main.cf lines, then the test's
# own directories, local users only, no listener, and retries after 3-4 s.
# (Not less: a deferred message becomes due again 1 s before its backoff
# ends, and one due at once can find its queue file still locked by the
# delivery agent that just deferred it, which sets it aside for 60 s.)
mkdir "$etc" "$spool" "$tmp/data"
chown postfix "$tmp/data"
chmod 700 "$tmp/data"
doc_block "postfix main.cf: tests/mail/postfix.sh" >"$etc/main.cf"
expect_eq "docs/postfix.md has main.cf lines" "$(grep -c '^mailbox_command' "$etc/main.cf")" 1
/usr/sbin/postconf -c "$etc" -e \
  "compatibility_level = 3.6" "queue_directory = $spool" "data_directory = $tmp/data" \
  "mail_owner = postfix" "setgid_group = postdrop" "myhostname = $host" \
  "mydestination = \$myhostname" "inet_interfaces = loopback-only" "inet_protocols = ipv4" \
  "default_transport = discard" "local_recipient_maps =" "alias_maps =" "alias_database =" \
  "biff = no" "mailbox_command = $tmp/bin/sqlq-deliver" "syslog_name = sqlq-test" \
  "maillog_file = $log" "maillog_file_prefixes = $tmp" "queue_run_delay = 1s" \
  "minimal_backoff_time = 3s" "maximal_backoff_time = 4s"
cat >"$etc/master.cf" <<'EOF'
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
flush     unix  n       -       n       1000?   0       flush
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
postlog   unix-dgram n  -       n       -       1       postlogd
EOF
if ! /usr/sbin/postfix -c "$etc" start </dev/null >"$tmp/start.log" 2>&1; then
  fail "postfix start: $(tr '\n' '|' <"$tmp/start.log")"
  finish
fi

# The directory the users share: setgid, so that the files made in it get
# its group.
install -d -m 2770 -g "$group" "$shared"

# queue_id ID: the queue id of the message with Message-ID ID, from the log.
queue_id() {
  sed -n "s/.*: \([0-9A-Za-z]*\): message-id=<$1>\$/\1/p" "$log" | head -n 1
}

# last_status QID USER: the last delivery status of the message QID for
# USER in the log (deferred, sent, bounced), or nothing.
last_status() {
  sed -n "s/.*: $1: to=<$2@$host>,.* status=\([a-z]*\).*/\1/p" "$log" | tail -n 1
}

# wait_statuses QID STATUS: wait until the last status of the message for
# every user is STATUS, or one is a bounce (90 s at most).
wait_statuses() {
  local deadline=$((SECONDS + 90)) u all
  while [ "$SECONDS" -lt "$deadline" ]; do
    all=1
    for u in "${users[@]}"; do
      case $(last_status "$1" "$u") in
        bounced) return ;;
        "$2") ;;
        *) all=0 ;;
      esac
    done
    [ "$all" = 1 ] && return
    sleep 0.1
  done
}

# round NAME UMASK: on a new database, the first user, under UMASK, holds
# the lock of the message <NAME@sqlq-test> (creating the sidecar file) while
# Postfix delivers the message to both users.
round() {
  local name=$1 mask=$2 id="$1@sqlq-test" qid u
  rm -f "$shared/locks.db" "$shared/locks.db-"*
  "$SQLQ" --url "sqlite:$shared/locks.db" init >/dev/null
  chgrp "$group" "$shared/locks.db"
  chmod 660 "$shared/locks.db"
  # The holder waits for the file $name.release (200 s at most).
  setpriv --reuid="${users[0]}" --regid="$group" --clear-groups \
    sh -c 'umask "$0"; exec "$@"' "$mask" "$SQLQ" --url "sqlite:$shared/locks.db" lock "<$id>" -- \
    sh -c 'echo held >"$0.held"; i=0
           while [ ! -e "$0.release" ] && [ $i -lt 2000 ]; do sleep 0.1; i=$((i + 1)); done' \
    "$shared/$name" &
  holder=$!
  bg_pids+=("$holder")
  wait_for_file "$shared/$name.held" 20 || fail "$name: the lock was never held"

  printf 'From: sender@example.invalid\nTo: %s\nSubject: %s\nMessage-ID: <%s>\n\nHello.\n' \
    "${users[*]}" "$name" "$id" |
    /usr/sbin/sendmail -C "$etc" -f sender@example.invalid "${users[0]}@$host" "${users[1]}@$host" ||
    fail "$name: sendmail failed"
  local tries=200
  until [ -n "$(queue_id "$id")" ] || [ "$tries" -le 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  qid=$(queue_id "$id")
  [ -n "$qid" ] || fail "$name: Postfix never logged the message"

  # While the lock is held, both deliveries are deferred.
  wait_statuses "$qid" deferred
  for u in "${users[@]}"; do
    expect_eq "$name: $u's delivery while the lock is held" "$(last_status "$qid" "$u")" deferred
  done
  checks=$((checks + 1))
  grep -q ": $qid: to=<.*status=deferred (.*lock is held" "$log" ||
    fail "$name: no deferral in the log says the lock is held"
  touch "$shared/$name.release"
  wait "$holder"
  expect_eq "$name: the holder's exit code" $? 0

  # Then both are delivered, and the message was processed once.
  wait_statuses "$qid" sent
  for u in "${users[@]}"; do
    expect_eq "$name: $u's delivery" "$(last_status "$qid" "$u")" sent
    expect_eq "$name: copies in $u's mailbox" "$(grep -c "^Message-ID: <$id>" "$shared/mbox.$u" 2>/dev/null)" 1
  done
  expect_eq "$name: times processed" "$(grep -cxF "<$id>" "$shared/processed" 2>/dev/null)" 1
  checks=$((checks + 1))
  if grep -q ": $qid: .*status=bounced" "$log"; then
    fail "$name: Postfix bounced: $(grep ": $qid: .*status=bounced" "$log" | head -n 1)"
  fi
}

round umask002 002
round umask077 077
expect_eq "the queue is empty" "$(/usr/sbin/postqueue -c "$etc" -p 2>&1 | tail -n 1)" "Mail queue is empty"
if [ "$failures" -gt 0 ]; then
  echo "--- the Postfix log:"
  cat "$log"
fi
finish
