# tests/cli/lock.sh -- the lock tests (lock.bash) on a SQLite database.
. "$(dirname "$0")/lib.sh"

# A sidecar (lock) file that cannot be opened (here a directory in its place) is a
# failure to take the lock: 69, or with --tempfail the conflict code.
mkdir "$tmp/blocked.db-sqlq"
run "an unopenable lock file" 69 "$SQLQ" --url "sqlite:$tmp/blocked.db" lock L -- true
expect_err_has "an unopenable lock file" "cannot open the sidecar file"
run "an unopenable lock file, --tempfail" 75 "$SQLQ" --url "sqlite:$tmp/blocked.db" lock --tempfail L -- true
expect_error_line "an unopenable lock file, --tempfail: one line"

. "$(dirname "$0")/lock.bash"
