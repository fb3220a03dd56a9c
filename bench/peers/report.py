#!/usr/bin/env python3
"""bench/peers/report.py -- the report of bench/compare.

Usage: report.py RESULTS VERSIONS DOC CHART_PREFIX SETTINGS ELAPSED_S PNG_NAME

RESULTS holds one line a run, tab-separated: system, batch, workers,
backlog, CPU seconds of the server during the run, the 1-minute load
average before it, and the run's JSON (the keys of `sqlq bench --json`).
VERSIONS holds "Name: version" lines.  Replaces what lies between the
lines "<!-- compare:begin -->" and "<!-- compare:end -->" of DOC with the
medians as Markdown tables, and writes the chart's data to
CHART_PREFIX.dat (jobs/s by system and workers, one block a batch size)
and CHART_PREFIX-scale.dat (sqlq's jobs/s by workers, a column a
backlog).  Exits 1 when DOC lacks the markers.
"""
import json
import statistics
import sys
import time
from collections import defaultdict

BEGIN, END = "<!-- compare:begin -->", "<!-- compare:end -->"
# The systems in the order of the tables, with what the tables call them.
NAMES = {
    "sqlq": "sqlq (PostgreSQL)",
    "graphile-worker": "graphile-worker",
    "pg-boss": "pg-boss",
    "pgbench-claim": "raw SQL, claim then delete (pgbench)",
    "pgbench-delete": "raw SQL, take and delete (pgbench)",
    "beanstalkd": "beanstalkd (in memory, no batches)",
    "sqlq-sqlite": "sqlq (SQLite)",
    "sqlq-mariadb": "sqlq (MariaDB)",
}
# The same, short enough for the chart's axis.
SHORT = {
    "sqlq": "sqlq PG", "graphile-worker": "graphile", "pg-boss": "pg-boss",
    "pgbench-claim": "raw claim+del", "pgbench-delete": "raw take+del",
    "beanstalkd": "beanstalkd", "sqlq-sqlite": "sqlq SQLite", "sqlq-mariadb": "sqlq MariaDB",
}


def load(path):
    """The runs, grouped by (system, batch, workers, backlog)."""
    runs = defaultdict(list)
    for line in open(path):
        system, batch, workers, backlog, cpu, load1, js = line.rstrip("\n").split("\t")
        r = json.loads(js)
        r["cpu_per_1000"] = float(cpu) / r["jobs"] * 1000
        r["load"] = float(load1)
        runs[(system, int(batch), int(workers), int(backlog))].append(r)
    return runs


def med(rs, key, sub=None):
    """The median of key (or key[sub]) over the runs rs, None if missing."""
    vals = [r[key][sub] if sub else r[key] for r in rs]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def compare_tables(runs, batches, workers):
    out = []
    for batch in batches:
        jobs = {rs[0]["jobs"] for k, rs in runs.items() if k[1] == batch and k[3] == 0}
        out += [f"#### Batch {batch} ({', '.join(f'{j:,}' for j in sorted(jobs))} jobs a run)", ""]
        out += ["| System | Workers | Jobs/s end to end | Enqueue/s | Latency p50 (ms) | Latency p99 (ms) "
                "| Server CPU s / 1,000 jobs | Load before |",
                "|---|---|---|---|---|---|---|---|"]
        for system, name in NAMES.items():
            for w in workers:
                rs = runs.get((system, batch, w, 0))
                if not rs:
                    continue
                cpu = med(rs, "cpu_per_1000")
                cpu_s = fmt(cpu, 3) + (" (in process)" if system == "sqlq-sqlite" else "")
                loads = [r["load"] for r in rs]
                out.append(f"| {name} | {w} | {fmt(med(rs, 'jobs_per_s'))} | {fmt(med(rs, 'enqueue_per_s'))} "
                           f"| {fmt(med(rs, 'latency_ms', 'p50'), 2)} | {fmt(med(rs, 'latency_ms', 'p99'), 2)} "
                           f"| {cpu_s} | {min(loads):.2f}-{max(loads):.2f} |")
        out.append("")
    return out


def ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.2f}"


def verdict_table(runs, batches, workers):
    """sqlq on PostgreSQL against its PostgreSQL peers, config by config."""
    out = ["#### sqlq against the PostgreSQL peers (same batch, same workers)", "",
           "| Batch | Workers | sqlq jobs/s | / graphile-worker | / pg-boss | / raw claim then delete "
           "| / raw take and delete | Beats both peers | Within 30% of raw claim then delete |",
           "|---|---|---|---|---|---|---|---|---|"]
    for batch in batches:
        for w in workers:
            j = {s: med(runs[(s, batch, w, 0)], "jobs_per_s") if (s, batch, w, 0) in runs else None
                 for s in NAMES}
            s = j["sqlq"]
            if s is None:
                continue
            beats = all(j[p] is None or s > j[p] for p in ("graphile-worker", "pg-boss"))
            near = j["pgbench-claim"] is None or s >= 0.7 * j["pgbench-claim"]
            out.append(f"| {batch} | {w} | {fmt(s)} | {ratio(s, j['graphile-worker'])} | {ratio(s, j['pg-boss'])} "
                       f"| {ratio(s, j['pgbench-claim'])} | {ratio(s, j['pgbench-delete'])} "
                       f"| {'yes' if beats else 'NO'} | {'yes' if near else 'NO'} |")
    out.append("")
    return out


def scaling_table(runs):
    keys = sorted(k for k in runs if k[0] == "sqlq-scale")
    if not keys:
        return [], []
    backlogs = sorted({k[3] for k in keys})
    workers = sorted({k[2] for k in keys})
    jobs = sorted({runs[k][0]["jobs"] for k in keys})
    out = [f"#### sqlq's scaling on PostgreSQL (batch 100, {', '.join(f'{j:,}' for j in jobs)} jobs "
           "a run above the jobs queued beneath)", "",
           "| Queued beneath | Workers | Jobs/s | Claim latency, mean (ms) | Server CPU s / 1,000 jobs "
           f"| CPU / 1,000 jobs against {backlogs[0]:,} queued | Backlog jobs claimed, given back "
           "| Load before |",
           "|---|---|---|---|---|---|---|---|"]
    base = {w: med(runs[("sqlq-scale", 100, w, backlogs[0])], "cpu_per_1000") for w in workers}
    rows = []
    for b in backlogs:
        row = [b]
        for w in workers:
            rs = runs.get(("sqlq-scale", 100, w, b))
            if not rs:
                row.append(0)
                continue
            cpu = med(rs, "cpu_per_1000")
            loads = [r["load"] for r in rs]
            out.append(f"| {b:,} | {w} | {fmt(med(rs, 'jobs_per_s'))} | {fmt(med(rs, 'claim_ms'), 3)} "
                       f"| {fmt(cpu, 3)} | x{ratio(cpu, base[w])} | {fmt(med(rs, 'backlog_claimed'))} "
                       f"| {min(loads):.2f}-{max(loads):.2f} |")
            row.append(med(rs, "jobs_per_s"))
        rows.append(row)
    out.append("")
    scale = ["# workers " + " ".join(f"backlog_{b}" for b in backlogs)]
    for i, w in enumerate(workers):
        scale.append(f"{w} " + " ".join(str(r[i + 1]) for r in rows))
    return out, scale


def chart_data(runs, batches, workers):
    """One block a batch: a line a system, its jobs/s for each worker count."""
    blocks = []
    for batch in batches:
        lines = ["# system " + " ".join(f"w{w}" for w in workers)]
        for system, name in NAMES.items():
            vals = [med(runs[(system, batch, w, 0)], "jobs_per_s") if (system, batch, w, 0) in runs else None
                    for w in workers]
            if any(v is not None for v in vals):
                lines.append(f'"{SHORT[system]}" ' + " ".join("NaN" if v is None else str(v) for v in vals))
        blocks.append("\n".join(lines))
    return "\n\n\n".join(blocks) + "\n"


def main():
    results, versions, doc, prefix, settings, elapsed, png = sys.argv[1:8]
    runs = load(results)
    batches = sorted({k[1] for k in runs if k[3] == 0})
    workers = sorted({k[2] for k in runs if k[3] == 0})
    loads = [r["load"] for rs in runs.values() for r in rs]
    body = [BEGIN, "",
            f"Written by `bench/compare` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"in {int(elapsed) // 60} min {int(elapsed) % 60} s ({settings}; medians of the runs).  "
            f"The 1-minute load average before a run ranged from {min(loads):.2f} to {max(loads):.2f}.", ""]
    body += [f"- {line.strip()}" for line in open(versions) if line.strip()]
    body += [""]
    body += compare_tables(runs, batches, workers)
    body += verdict_table(runs, batches, workers)
    scale_md, scale_dat = scaling_table(runs)
    body += scale_md
    body += [f"![jobs/s by system and workers, and sqlq's scaling]({png})", "", END]

    text = open(doc).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"report.py: {doc} lacks the lines {BEGIN} and {END}")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(doc, "w") as f:
        f.write(head + "\n".join(body) + tail)
    with open(prefix + ".dat", "w") as f:
        f.write(chart_data(runs, batches, workers))
    with open(prefix + "-scale.dat", "w") as f:
        f.write("\n".join(scale_dat) + "\n")


main()
