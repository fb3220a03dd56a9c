#!/usr/bin/env node
// A handler for `sqlq work --stdio` in Node.js (no npm packages).
//
//     sqlq work --stdio QUEUE -- node examples/handler.js
//
// Edit handle() below.  It is called once per job with an object:
//   id        the job's id (number)
//   attempt   this attempt, counted from 1 (number)
//   queue     the queue's name (string)
//   deadline  the end of the job's lease, seconds since the epoch (number)
//   payload   the payload (a Buffer, any bytes)
// Return (or resolve) and the job is done (acked).  Throw a Release to give
// the job back without counting the attempt; throw anything else to fail the
// attempt, with its message as the error text.  The protocol is
// docs/protocol.md.  Jobs run concurrently (up to the worker's --window);
// the answers of the jobs that end together go out in one write.
'use strict';

const PROTOCOL = 1;

class Release extends Error {
  constructor(delay = 0) {
    super('release');
    this.delay = delay;
  }
}

async function handle(job) {
  // The work of one job: edit this.  As it is, it does nothing.
}

let out = [];
let flushing = false;
function send(line) {
  out.push(line);
  if (!flushing) {
    flushing = true;
    setImmediate(() => {
      flushing = false;
      const data = out.join('');
      out = [];
      process.stdout.write(data);
    });
  }
}

function answer(message) {
  const ref = `"id":${message.id},"token":"${message.token}"`;
  const job = {
    id: message.id,
    attempt: message.attempt,
    queue: message.queue,
    deadline: message.deadline,
    payload: Buffer.from(message.payload, 'base64'),
  };
  let result;
  try {
    result = handle(job);
  } catch (e) {
    result = Promise.reject(e);
  }
  Promise.resolve(result).then(
    () => send(`{"type":"ack",${ref}}\n`),
    (e) => send(e instanceof Release
      ? `{"type":"release",${ref},"delay":${Number(e.delay) || 0}}\n`
      : `{"type":"fail",${ref},"error":${JSON.stringify(String(e && e.stack || e))}}\n`));
}

let hello = false;
let pending = '';
process.stdin.setEncoding('utf8'); // the lines are ASCII: payloads are base64
process.stdin.on('data', (chunk) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop();
  for (const line of lines) {
    const message = JSON.parse(line);
    if (message.type === 'job') {
      answer(message);
    } else if (message.type === 'hello' && !hello) {
      hello = true;
      if (message.protocol !== PROTOCOL) {
        process.stderr.write(`handler.js: the worker speaks protocol ${message.protocol}, this handler ${PROTOCOL}\n`);
        process.exit(1);
      }
      send(`{"type":"hello","protocol":${PROTOCOL}}\n`);
    }
    // Other types are new in a later version of the worker: ignored.
  }
});
process.stdin.on('end', () => process.exit(0));
