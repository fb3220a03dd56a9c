// bench/peers/harness.mjs -- the measurement that every Node.js peer of
// bench/compare goes through, the same one `sqlq bench` makes:
//
// 1. Throughput.  The peer's W workers are started and ready.  One producer
//    enqueues N jobs, B at a time (one call per batch, awaited before the
//    next).  Each job's payload carries its enqueue time.  The workers do
//    nothing with a job but finish it.  enqueue_per_s = N / the producer's
//    time; jobs_per_s = N / (first enqueue to the moment the peer's
//    database holds no unfinished job of the run).
// 2. Latency.  The workers are idle.  The producer enqueues one job, waits
//    until it is finished, pauses 1 ms, and does it again, K times.  A
//    sample is the time from the stamp in the payload to the moment the
//    peer called the job's handler.  p50 and p99 are by nearest rank.
//
// A peer is an object with these async methods:
//   start({workers, batch, onJob})  start the workers; onJob(payload) is to
//                                   be called when a job's handler starts,
//                                   and its promise awaited before the
//                                   job's handler returns
//   enqueue(payloads)               enqueue the payloads as jobs, in one
//                                   batch when there are several
//   drained()                       true once every job enqueued so far is
//                                   finished in the database
//   stop()                          stop the workers and close everything
// The result is one JSON line on stdout, with the keys of `sqlq bench
// --json` that bench/compare reads.

/** The current time in milliseconds, with sub-millisecond precision. */
export function nowMs() {
  return performance.timeOrigin + performance.now();
}

/** The nearest-rank percentile q (0..1) of the sorted array a. */
function rank(a, q) {
  if (a.length === 0) return null;
  const i = Math.min(a.length - 1, Math.max(0, Math.ceil(q * a.length) - 1));
  return Math.round(a[i] * 1000) / 1000;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll until fn() resolves true, every 2 ms; fails after limitMs. */
async function until(fn, limitMs, what) {
  const end = Date.now() + limitMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`no progress: ${what}`);
    await sleep(2);
  }
}

/** Read --jobs, --workers, --batch, --samples and --url from argv. */
export function parseArgs(argv) {
  const o = { jobs: 20000, workers: 1, batch: 1, samples: 50, url: process.env.DATABASE_URL };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in o) || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}`);
    o[k] = k === "url" ? argv[i + 1] : Number(argv[i + 1]);
  }
  return o;
}

/** Run both phases on peer and print the result line. */
export async function measure(peer, name, o) {
  let phase = "throughput";
  let started = 0;
  const lat = [];
  let onLatency = null;
  const onJob = async (payload) => {
    if (phase === "latency") {
      lat.push(nowMs() - payload.t);
      if (onLatency) onLatency();
    } else {
      started++;
    }
  };
  await peer.start({ workers: o.workers, batch: o.batch, onJob });

  const t0 = nowMs();
  for (let sent = 0; sent < o.jobs; ) {
    const k = Math.min(o.batch, o.jobs - sent);
    const t = nowMs();
    await peer.enqueue(Array.from({ length: k }, () => ({ t })));
    sent += k;
  }
  const t1 = nowMs();
  await until(async () => started >= o.jobs && (await peer.drained()), 600000, "throughput");
  const t2 = nowMs();

  phase = "latency";
  for (let i = 0; i < o.samples; i++) {
    const seen = new Promise((r) => (onLatency = r));
    await peer.enqueue([{ t: nowMs() }]);
    await seen;
    await until(() => peer.drained(), 60000, "latency sample");
    await sleep(1);
  }
  await peer.stop();
  lat.sort((a, b) => a - b);
  const out = {
    backend: name,
    jobs: o.jobs,
    workers: o.workers,
    batch: o.batch,
    enqueue_per_s: Math.round(o.jobs / ((t1 - t0) / 1000)),
    jobs_per_s: Math.round(o.jobs / ((t2 - t0) / 1000)),
    latency_ms: { p50: rank(lat, 0.5), p90: rank(lat, 0.9), p99: rank(lat, 0.99) },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
}
