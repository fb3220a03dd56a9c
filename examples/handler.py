#!/usr/bin/env python3
"""A handler for `sqlq work --stdio` in Python (standard library only).

    sqlq work --stdio QUEUE -- python3 examples/handler.py

Edit handle() below.  It is called once per job with a dict:
    id        the job's id (int)
    attempt   this attempt, counted from 1 (int)
    queue     the queue's name (str)
    deadline  the end of the job's lease, seconds since the epoch (float)
    payload   the payload (bytes, any bytes)
Return normally and the job is done (acked).  Raise Release(delay) to give
the job back without counting the attempt; raise anything else to fail the
attempt (retried after a backoff, or dead after its last attempt), with the
exception as the error text.  The protocol is docs/protocol.md.

The loop reads what the worker sent in large chunks and writes the answers
of a chunk in one write, which is what makes it fast.
"""
import base64
import json
import os
import sys

PROTOCOL = 1


class Release(Exception):
    """Give the job back, to run again after delay seconds, its attempt not counted."""

    def __init__(self, delay=0.0):
        super().__init__(delay)
        self.delay = delay


def handle(job):
    """The work of one job: edit this.  As it is, it does nothing."""
    return None


def answer_for(message):
    """The answer line (bytes) for one job message (a dict)."""
    ref = '"id":%d,"token":"%s"' % (message["id"], message["token"])
    job = {
        "id": message["id"],
        "attempt": message["attempt"],
        "queue": message["queue"],
        "deadline": message["deadline"],
        "payload": base64.b64decode(message["payload"]),
    }
    try:
        handle(job)
    except Release as r:
        return '{"type":"release",%s,"delay":%s}\n' % (ref, json.dumps(float(r.delay)))
    except Exception as e:  # the attempt failed: say why
        return '{"type":"fail",%s,"error":%s}\n' % (ref, json.dumps(repr(e)))
    return '{"type":"ack",%s}\n' % ref


def write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def main():
    pending = b""
    hello = None
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return 0  # the worker closed our stdin: it stops
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        answers = []
        for line in lines:
            message = json.loads(line)
            kind = message.get("type")
            if kind == "job":
                answers.append(answer_for(message))
            elif kind == "hello" and hello is None:
                hello = message
                if message.get("protocol") != PROTOCOL:
                    print("handler.py: the worker speaks protocol %r, this handler %d"
                          % (message.get("protocol"), PROTOCOL), file=sys.stderr)
                    return 1
                answers.append('{"type":"hello","protocol":%d}\n' % PROTOCOL)
            # Other types are new in a later version of the worker: ignored.
        if answers:
            write_all("".join(answers).encode())


if __name__ == "__main__":
    sys.exit(main())
