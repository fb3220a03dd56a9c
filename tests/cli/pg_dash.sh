# tests/cli/pg_dash.sh -- `sqlq serve`'s dashboard on a PostgreSQL database
# of its own, driven in headless Chromium: dash.bash says what is checked.
# Its screenshots go to dash-screenshots-pg/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_database.bash"
. "$(dirname "$0")/serve.bash"
. "$(dirname "$0")/dash.bash"
dash_shots=dash-screenshots-pg
dash_backend_tests
finish
