# tests/cli/dash.sh -- `sqlq serve`'s dashboard on SQLite, driven in
# headless Chromium: dash.bash says what is checked.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve.bash"
. "$(dirname "$0")/dash.bash"
dash_backend_tests
finish
