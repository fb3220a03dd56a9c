#!/bin/bash
# A handler for `sqlq work --stdio` in bash, for TEXT payloads only: the
# payload is given to handle() as a shell string, which cannot hold NUL
# bytes, and a trailing newline is lost.  Needs base64 (coreutils).
#
#     sqlq work --stdio QUEUE -- bash examples/handler.sh
#
# Edit handle() below.  It gets the job's id, attempt and payload as $1, $2
# and $3.  Return 0 and the job is done (acked); return 75 to give it back
# (released, its attempt not counted); anything else fails the attempt.
# The protocol is docs/protocol.md: the worker writes JSON lines whose
# fields this reads by name with bash's own pattern matching (the worker
# writes them compact, on one line), and it answers one line per job.

handle() {
  # The work of one job: edit this.  As it is, it does nothing.
  :
}

field() { # field NAME LINE: the value of the number or string NAME in LINE
  local re="\"$1\":\"?([^\",}]*)"
  [[ $2 =~ $re ]] && printf '%s' "${BASH_REMATCH[1]}"
}

read -r line || exit 0
[ "$(field protocol "$line")" = 1 ] || { echo "handler.sh: the worker does not speak protocol 1" >&2; exit 1; }
echo '{"type":"hello","protocol":1}'
while read -r line; do
  [ "$(field type "$line")" = job ] || continue # other types: ignored
  id=$(field id "$line")
  token=$(field token "$line")
  payload=$(field payload "$line" | base64 -d)
  handle "$id" "$(field attempt "$line")" "$payload"
  rc=$?
  case $rc in
    0) echo "{\"type\":\"ack\",\"id\":$id,\"token\":\"$token\"}" ;;
    75) echo "{\"type\":\"release\",\"id\":$id,\"token\":\"$token\"}" ;;
    *) echo "{\"type\":\"fail\",\"id\":$id,\"token\":\"$token\",\"error\":\"handle returned $rc\"}" ;;
  esac
done
