"""The handler of tests/crash/stdio_handlers.bash: examples/handler.py with
a handle() that logs each job and then misbehaves as its payload says.

    python3 stdio_handler.py EXAMPLES_DIR LOG_FILE OUT_DIR

Each job appends "ID ATTEMPT PAYLOAD-PREFIX" to LOG_FILE, then by payload:
  kill-once / kill-always        SIGKILL itself (on attempt 1 / always)
  garbage-once / garbage-always  write a line that is not JSON
  hang-once / hang-always        never answer
  unknown-id, wrong-token        answer for a job it does not hold, or with
                                 the wrong token (on attempt 1)
  long-line                      write a line over the worker's limit (attempt 1)
  fail-N                         fail the attempt (raise) until attempt N
  slow                           take a second, then go on as below
  anything else                  write the payload to OUT_DIR/ID and ack
"""
import os
import signal
import sys
import time

sys.path.insert(0, sys.argv[1])
import handler  # noqa: E402  (examples/handler.py)

log_file, out_dir = sys.argv[2], sys.argv[3]


def misbehave(job):
    p, first = job["payload"], job["attempt"] == 1
    with open(log_file, "a") as f:
        f.write("%d %d %s\n" % (job["id"], job["attempt"], p[:20].decode("latin-1").split("\n")[0]))
    if p == b"kill-always" or (p == b"kill-once" and first):
        os.kill(os.getpid(), signal.SIGKILL)
    if p == b"garbage-always" or (p == b"garbage-once" and first):
        os.write(1, b"this is not JSON\n")
    elif p == b"hang-always" or (p == b"hang-once" and first):
        time.sleep(3600)
    elif p == b"unknown-id" and first:
        os.write(1, b'{"type":"ack","id":%d,"token":"1"}\n' % (job["id"] + 1000000))
    elif p == b"wrong-token" and first:
        os.write(1, b'{"type":"ack","id":%d,"token":"1"}\n' % job["id"])
    elif p == b"long-line" and first:
        os.write(1, b'{"type":"ack","pad":"' + b"x" * 70000 + b'"}\n')
    elif p == b"slow":
        time.sleep(1)
    elif p.startswith(b"fail-") and job["attempt"] < int(p[5:]):
        raise RuntimeError("failed on purpose")
    with open(os.path.join(out_dir, str(job["id"])), "wb") as f:
        f.write(p)


handler.handle = misbehave
sys.exit(handler.main())
