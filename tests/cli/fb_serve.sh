# tests/cli/fb_serve.sh -- `sqlq serve` on a Firebird database of its own:
# /metrics checked by promtool while a worker runs, the JSON API and its
# actions (serve.bash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fb_database.bash"
. "$(dirname "$0")/serve.bash"
serve_backend_tests
finish
