# tests/crash/worker_kill.sh -- kill -9 a worker in the middle of a job
# (worker_kill.bash), on SQLite.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/worker_kill.bash"
