# tests/cli/pg_serve.sh -- `sqlq serve` on a PostgreSQL database of its own:
# /metrics checked by promtool while a worker runs, the JSON API and its
# actions (serve.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/serve.bash"
serve_backend_tests
finish
