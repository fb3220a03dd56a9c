# tests/cli/serve.sh -- `sqlq serve` on SQLite: /metrics checked by
# promtool while a worker runs, the JSON API and its actions (serve.bash).
# The safety checks are serve_safe.sh's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve.bash"
serve_backend_tests
finish
