// test/sigterm-child.js -- a worker process for worker.test.js: handles the
// jobs of queue argv[2] slowly (each handler takes 20 ms, 8 at once),
// prints "handled ID" per job whose handler finished and "ready" once the
// worker has started; SIGTERM makes it stop gracefully.
"use strict";
const sqlq = require("..");

const w = new sqlq.Worker(process.argv[3], process.argv[2], { batch: 16, concurrency: 8 });
w.handle(async (job) => {
  await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`handled ${job.id}\n`);
});
w.on("stopped", () => process.stdout.write(`stopped ${JSON.stringify(w.counts)}\n`));
w.start().then(() => process.stdout.write("ready\n"));
