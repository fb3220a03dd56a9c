#!/usr/bin/env python3
"""bench/stdio_framing.py -- the framing experiment behind docs/protocol.md:
JSON lines or length-prefixed binary frames, for a Python handler.

    python3 bench/stdio_framing.py [JOBS] [WINDOW]

For each framing, a driver process (this one) sends JOBS jobs of 16-byte
payloads through a pipe to a handler process (this script again, with
--handler FRAMING), at most WINDOW jobs in flight, and reads its answers (an
ack per job) from another pipe; the handler decodes each job, payload
included, into a dict, as a real handler must, and encodes an ack.  The
driver's frames are built before the clock starts, so that the figure is
the cost of the framing on the handler's side plus the pipes.  Prints one
line per framing: jobs per second (best of 3 runs).

  json:   {"type":"job","id":..,"token":"..","attempt":..,"deadline":..,
          "queue":"..","payload":"<base64>"}\\n  ->  {"type":"ack","id":..,"token":".."}\\n
  binary: u32 length, then u64 id, u64 token, u32 attempt, f64 deadline,
          u16 queue length, queue, payload  ->  u8 kind, u64 id, u64 token
"""
import base64
import json
import os
import struct
import subprocess
import sys
import time

HEAD = struct.Struct("<QQIdH")
ACK = struct.Struct("<BQQ")


def job_frames(framing, n):
    out = []
    for i in range(1, n + 1):
        payload = b"%016d" % i
        if framing == "json":
            out.append(b'{"type":"job","id":%d,"token":"%d","attempt":1,"deadline":1764127800.123456,'
                       b'"queue":"bench","payload":"%s"}\n'
                       % (i, 5149271930785146361 + i, base64.b64encode(payload)))
        else:
            body = HEAD.pack(i, 5149271930785146361 + i, 1, 1764127800.123456, 5) + b"bench" + payload
            out.append(struct.pack("<I", len(body)) + body)
    return out


def handler_json():
    pending = b""
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        answers = []
        for line in lines:
            m = json.loads(line)
            job = {"id": m["id"], "attempt": m["attempt"], "queue": m["queue"],
                   "deadline": m["deadline"], "payload": base64.b64decode(m["payload"])}
            answers.append('{"type":"ack","id":%d,"token":"%s"}\n' % (job["id"], m["token"]))
        os.write(1, "".join(answers).encode())


def handler_binary():
    buf = b""
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return
        buf += chunk
        pos, answers = 0, []
        while len(buf) - pos >= 4:
            (n,) = struct.unpack_from("<I", buf, pos)
            if len(buf) - pos - 4 < n:
                break
            i, token, attempt, deadline, qlen = HEAD.unpack_from(buf, pos + 4)
            start = pos + 4 + HEAD.size
            job = {"id": i, "attempt": attempt, "queue": buf[start:start + qlen].decode(),
                   "deadline": deadline, "payload": buf[start + qlen:pos + 4 + n]}
            answers.append(ACK.pack(1, job["id"], token))
            pos += 4 + n
        buf = buf[pos:]
        os.write(1, b"".join(answers))


def drive(framing, n, window):
    frames = job_frames(framing, n)
    p = subprocess.Popen([sys.executable, __file__, "--handler", framing],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    answered, sent, pending = 0, 0, b""
    os.read(p.stdout.fileno(), 1)  # the handler is up: its start-up is not timed
    start = time.perf_counter()
    while answered < n:
        if sent - answered < window and sent < n:
            k = min(window - (sent - answered), n - sent)
            p.stdin.write(b"".join(frames[sent:sent + k]))
            sent += k
        data = pending + os.read(p.stdout.fileno(), 1 << 20)
        if framing == "json":
            answered += data.count(b"\n")
            pending = b""
        else:
            whole = len(data) // ACK.size * ACK.size
            answered += whole // ACK.size
            pending = data[whole:]
    elapsed = time.perf_counter() - start
    p.stdin.close()
    p.wait()
    return n / elapsed


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--handler":
        os.write(1, b"R")
        (handler_json if sys.argv[2] == "json" else handler_binary)()
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    for framing in ("json", "binary"):
        best = max(drive(framing, n, window) for _ in range(3))
        print("%-6s %d jobs, window %d: %.0f jobs/s" % (framing, n, window, best))


if __name__ == "__main__":
    main()
