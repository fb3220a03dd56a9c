# tests/cli/sidecar.sh -- the sidecar file DB-sqlq beside a SQLite database:
# created with the database file's mode whatever the umask (and, as root,
# with its owner and group), by `sqlq lock` and by a producer's wake-up
# byte alike; a symbolic link or a FIFO at its path is refused, never
# followed.  The part as root also runs two other users on one database.
. "$(dirname "$0")/lib.sh"

db=$tmp/t.db
side=$db-sqlq
sq init >/dev/null

# mode_of PATH: the file's permission bits, owner and group, numerically.
mode_of() {
  stat -c '%a %u:%g' "$1"
}

# The mode follows the database file, not the umask: `sqlq lock` and the
# wake-up byte of `sqlq push` both create the sidecar.
chmod 660 "$db"
run "lock under umask 077" 0 sh -c 'umask 077; exec "$0" --url "$1" lock -n name -- true' "$SQLQ" "$url"
expect_eq "lock under umask 077: the sidecar's mode" "$(stat -c %a "$side")" 660
rm -f "$side"
chmod 640 "$db"
run "push under umask 077" 0 sh -c 'umask 077; exec "$0" --url "$1" push q "{}"' "$SQLQ" "$url"
expect_eq "push under umask 077: the sidecar's mode" "$(stat -c %a "$side")" 640
expect_eq "no temporary file is left beside the database" "$(ls "$tmp" | grep -c -- '-sqlq\.')" 0

# A symbolic link at the sidecar's path is not followed: the lock is refused
# with one line, a producer's wake-up does not write through it, and the
# file it points to is unchanged.
rm -f "$side"
echo "not sqlq's" >"$tmp/target"
chmod 600 "$tmp/target"
ln -s "$tmp/target" "$side"
run "symlink: lock" 69 sq lock -n name -- true
expect_error_line "symlink: lock"
expect_err_has "symlink: lock" "'$side' is a symbolic link"
run "symlink: push still succeeds" 0 sq push q '{}'
expect_eq "symlink: the target is unchanged" "$(cat "$tmp/target")" "not sqlq's"
expect_eq "symlink: the target's mode is unchanged" "$(stat -c %a "$tmp/target")" 600
expect_eq "symlink: the link is still a link" "$(stat -c %F "$side")" "symbolic link"

# Nor is anything but a regular file used.
rm -f "$side"
mkfifo "$side"
run "fifo: lock" 69 sq lock -n name -- true
expect_error_line "fifo: lock"
expect_err_has "fifo: lock" "'$side' is not a regular file"
rm -f "$side"

# As root: the sidecar gets the database file's owner and group, and two
# other users share one database in a setgid directory of their group, the
# first creating the sidecar under umask 077 and the second contending for
# a lock the first holds.
if [ "$(id -u)" = 0 ]; then
  chown 4242:4343 "$db"
  chmod 660 "$db"
  run "root creates the sidecar" 0 sq lock -n name -- true
  expect_eq "root: the sidecar's owner, group and mode" "$(mode_of "$side")" "660 4242:4343"

  # as_user UID CMD...: run CMD as UID in the group 4343, with umask 077.
  as_user() {
    local uid=$1
    shift
    setpriv --reuid="$uid" --regid=4343 --clear-groups sh -c 'umask 077; exec "$@"' sh "$@"
  }
  shared=$tmp/shared
  mkdir "$shared"
  chmod 755 "$tmp"
  chown root:4343 "$shared"
  chmod 2770 "$shared"
  db2=sqlite:$shared/q.db
  "$SQLQ" --url "$db2" init >/dev/null
  chgrp 4343 "$shared/q.db"
  chmod 660 "$shared/q.db"
  # The holder waits for the file "release" (60 s at most).
  setpriv --reuid=4242 --regid=4343 --clear-groups sh -c 'umask 077; exec "$@"' sh \
    "$SQLQ" --url "$db2" lock name -- sh -c \
    'echo held >"$0/held"; i=0
     while [ ! -e "$0/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' "$shared" &
  holder=$!
  bg_pids+=("$holder")
  wait_for_file "$shared/held" 20 || fail "user 4242 never held the lock"
  expect_eq "user 4242 created the sidecar" "$(mode_of "$shared/q.db-sqlq")" "660 4242:4343"
  run "user 4243 contends for the lock" 75 as_user 4243 "$SQLQ" --url "$db2" lock -n name -- true
  expect_error_line "user 4243 contends for the lock"
  run "user 4243 takes another lock" 0 as_user 4243 "$SQLQ" --url "$db2" lock -n other -- true
  touch "$shared/release"
  wait "$holder"
  expect_eq "the holder's exit code" $? 0
  run "user 4243 takes the freed lock" 0 as_user 4243 "$SQLQ" --url "$db2" lock -w 10 name -- true
else
  echo "skip: the owner, group and two-user checks need root"
fi

finish
