# tests/crash/lock_lost.sh -- sqlq lock whose lock is lost (lock_lost.bash)
# on SQLite: the lock file is removed under the holder, so that the next
# holder locks a new file.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

end_session() {
  rm -f "${url#sqlite:}-sqlq"
}

source "$(dirname "${BASH_SOURCE[0]}")/lock_lost.bash"
