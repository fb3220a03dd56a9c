# tests/crash/worker_kill_many.sh -- kill -9 a busy worker of four slots,
# then count (worker_kill_many.bash), on SQLite.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/worker_kill_many.bash"
