#!/usr/bin/python3
"""tests/cli/dash_cdp.py -- drive sqlq serve's dashboard in headless Chromium
through the DevTools protocol (python3-websocket), for tests/cli/dash.sh.

    dash_cdp.py BASE READONLY_BASE SHOTS_DIR

BASE is a server that allows actions, READONLY_BASE one run --read-only, on
the same database (dash.sh fills it: see there).  Each page is loaded and
checked for what it must show; then a dead job is retried, a dead job
deleted, a queue paused and a running job cancelled by clicking the page's
buttons, and each time the database is read with the sqlq CLI ($SQLQ on
$SQLQ_TEST_DB_URL, whose backend $SQLQ_TEST_BACKEND names), never through
the page.  Screenshots of the main pages
go to SHOTS_DIR.  Any script error, CSP violation or console error on a
page fails the run.  Prints "ok: ..." per check and "FAIL: ..." per
failure; exits 1 when one failed.  Nothing asserts a time: every wait
polls, up to 20 s.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

WAIT_S = 20
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg, flush=True)


def ok(msg):
    print("ok: " + msg, flush=True)


def sq(*args):
    """Run the sqlq CLI on the test's database; returns its stdout."""
    out = subprocess.run([os.environ["SQLQ"], "--url", os.environ["SQLQ_TEST_DB_URL"], *args],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError("sqlq %s: exit %d: %s" % (" ".join(args), out.returncode, out.stderr))
    return out.stdout


def stats(queue):
    return json.loads(sq("stats", "--json", queue))["queues"][0]


class Browser:
    """A headless Chromium of its own profile, and its one page."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="sqlq-dash-chromium.")
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            raise RuntimeError("chromium is not installed (apt-get install chromium)")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
             "--window-size=1280,800", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + WAIT_S * 3
        while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools listener")
            time.sleep(0.1)
        time.sleep(0.1)
        port = open(port_file).read().split()[0]
        pages = []
        while not pages:
            with urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port) as f:
                pages = [p for p in json.load(f) if p.get("type") == "page"]
            if not pages:
                time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=WAIT_S * 3,
                                              suppress_origin=True)
        self.next_id = 0
        self.problems = []  # script errors, console errors, CSP violations
        self.fake_history = False  # answer GET .../history (Fetch.requestPaused)
        self.call("Runtime.enable")
        self.call("Log.enable")
        self.call("Page.enable")

    def _event(self, msg):
        method = msg.get("method")
        params = msg.get("params", {})
        if method == "Fetch.requestPaused":
            self._fulfill_history(params)
        elif method == "Runtime.exceptionThrown":
            self.problems.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:300])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.problems.append("console.error: " + json.dumps(params.get("args", []))[:300])
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            if entry.get("level") == "error" and "/history" not in entry.get("url", "") and \
                    "status of 404" not in entry.get("text", "") and \
                    "status of 400" not in entry.get("text", ""):
                self.problems.append("log: %s %s" % (entry.get("text"), entry.get("url", "")))

    def _fulfill_history(self, params):
        """Answer a paused GET /api/v1/queues/Q/history as the agreed
        contract says (the metrics branch serves it): 60 minutes, each with
        finished = minute index, failed every tenth minute.  Sent without
        waiting for its answer, which call() then passes over."""
        now = int(time.time()) // 60 * 60
        minutes = [{"t": now - 60 * k, "finished": 60 - k, "failed": 3 if k % 10 == 0 else 0,
                    "dead": 1 if k == 5 else 0, "enqueued": 60 - k} for k in range(60)]
        body = json.dumps({"queue": "stub", "minutes": minutes}).encode()
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": "Fetch.fulfillRequest", "params": {
            "requestId": params["requestId"], "responseCode": 200,
            "responseHeaders": [{"name": "Content-Type", "value": "application/json"}],
            "body": base64.b64encode(body).decode()}}))

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr[:80], r["exceptionDetails"].get("text")))
        return r.get("result", {}).get("value")

    def wait(self, expr, what, value=False):
        """Poll expr until it is true (value: until it gives a true value,
        which is returned)."""
        deadline = time.time() + WAIT_S
        while time.time() < deadline:
            v = self.eval(expr if value else "!!(%s)" % expr)
            if v:
                return v
            time.sleep(0.1)
        fail("timed out waiting for " + what)
        return None

    def goto(self, url):
        """Load url afresh and wait for its first rendering."""
        self.call("Page.navigate", url="about:blank")
        self.call("Page.navigate", url=url)
        return self.wait("document.body && document.body.dataset.loaded !== undefined",
                         "the page " + url)

    def text(self, selector="#main"):
        return self.eval("(document.querySelector(%s) || {}).innerText || ''" % json.dumps(selector))

    def click(self, selector, what):
        clicked = self.eval("(() => { const b = document.querySelector(%s); if (!b) return false;"
                            " b.click(); return true; })()" % json.dumps(selector))
        if not clicked:
            fail("no %s to click (%s)" % (what, selector))
        return clicked

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


def expect(cond, what, detail=""):
    if cond:
        ok(what)
    else:
        fail(what + (": " + detail if detail else ""))


def wait_db(check, what):
    """Poll the database (through the CLI) until check() is true."""
    deadline = time.time() + WAIT_S
    while time.time() < deadline:
        if check():
            ok(what)
            return True
        time.sleep(0.1)
    fail(what)
    return False


def no_problems(b, page):
    expect(not b.problems, page + ": no script error, CSP violation or console error",
           "; ".join(b.problems))
    b.problems.clear()


def main():
    base, ro_base, shots = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(shots, exist_ok=True)
    b = Browser()
    try:
        run(b, base, ro_base, shots)
    finally:
        b.close()
    print("dash_cdp: %d failed" % failures, flush=True)
    return 1 if failures else 0


def run(b, base, ro_base, shots):
    # The overview: every queue with its counts.
    b.goto(base + "/#/")
    b.wait("document.querySelector('tr[data-queue=\"dash-q\"]')", "the overview's queue dash-q")
    text = b.text()
    for q in ("dash-q", "dash-dead", "dash-slow", "dash-bin"):
        expect(q in text, "the overview lists " + q)
    expect(b.eval("document.title") == "sqlq", "the page's title")
    expect(os.environ["SQLQ_TEST_BACKEND"] in b.text("#server"), "the header names the backend")
    b.screenshot(os.path.join(shots, "overview.png"))
    no_problems(b, "overview")

    expect(b.eval("document.querySelectorAll('tr[data-queue=\"dash-q\"] svg.chart').length") == 1,
           "a chart drawn from the server's own GET .../history")

    # The chart again, with GET .../history answered by this script with
    # known counts (the browser's requests paused and fulfilled here).
    b.call("Fetch.enable", patterns=[{"urlPattern": "*/api/v1/queues/*/history"}])
    b.goto(base + "/#/")
    b.wait("document.querySelector('tr[data-queue=\"dash-q\"] svg.chart rect.finished')",
           "a chart of finished jobs")
    # (A minute may turn between the stub's clock and the page's: then the
    # oldest stubbed minute falls out of the hour drawn.)
    bars = b.eval("document.querySelectorAll('tr[data-queue=\"dash-q\"] svg.chart rect.failed').length")
    expect(bars in (6, 7), "the chart has a bar of failed jobs for each minute that had some", str(bars))
    title = b.eval("document.querySelector('tr[data-queue=\"dash-q\"] svg.chart title').textContent")
    expect(title in ("last hour: 1830 finished, 19 failed or dead",
                     "last hour: 1829 finished, 19 failed or dead"), "the chart's totals", str(title))
    b.screenshot(os.path.join(shots, "overview-chart.png"))
    b.call("Fetch.disable")
    no_problems(b, "chart")

    # A queue's page: payloads as text, never as markup; binary as hex.
    b.goto(base + "/#/queue/dash-q")
    b.wait("document.querySelector('tr[data-job]')", "dash-q's jobs")
    text = b.text()
    expect("<img src=x onerror=alert(1)>" in text, "a payload with markup is shown as text")
    expect(b.eval("document.querySelectorAll('main img, main script').length") == 0,
           "a payload with markup made no element")
    b.screenshot(os.path.join(shots, "queue.png"))
    b.goto(base + "/#/queue/dash-bin")
    b.wait("document.querySelector('pre.payload.hex')", "a binary payload as hex")
    expect("00 01 ff" in b.text(), "a binary payload's bytes in hex")
    # Search by dedupe key, then by id.
    b.goto(base + "/#/queue/dash-q?search=key-7")
    b.wait("document.body.dataset.loaded", "the search")
    rows = b.eval("document.querySelectorAll('tr[data-job]').length")
    expect(rows == 1 and "key-7" in b.text(), "search by dedupe key finds one job", "rows=%s" % rows)
    job_id = b.eval("(document.querySelector('tr[data-job]') || {dataset: {}}).dataset.job")
    b.goto(base + "/#/queue/dash-q?search=" + str(job_id))
    b.wait("document.querySelector('tr[data-job]')", "the search by id")
    expect(b.eval("[...document.querySelectorAll('tr[data-job]')].map(r => r.dataset.job)") == [job_id],
           "search by id finds that job")
    no_problems(b, "queue")

    # Retry a dead job.
    dead_before = stats("dash-dead")["dead"]
    b.goto(base + "/#/queue/dash-dead?state=dead")
    b.wait("document.querySelector('button[data-action=\"retry\"]')", "a dead job's retry button")
    b.screenshot(os.path.join(shots, "dead.png"))
    b.click("button[data-action=\"retry\"]", "retry button")
    wait_db(lambda: stats("dash-dead")["dead"] == dead_before - 1,
            "retry in the page: one dead job fewer in the database")
    wait_db(lambda: stats("dash-dead")["ready"] >= 1, "retry in the page: the job is ready")
    # Delete a dead job: a dangerous action needs a second click.
    b.wait("document.querySelectorAll('tr[data-job]').length === %d" % (dead_before - 1),
           "the page refreshed after the retry")
    b.wait("document.querySelector('button[data-action=\"delete\"]')", "a dead job's delete button")
    victim = b.eval("document.querySelector('button[data-action=\"delete\"]').dataset.id")
    b.click("button[data-action=\"delete\"][data-id=\"%s\"]" % victim, "delete button")
    time.sleep(0.3)
    expect(stats("dash-dead")["dead"] == dead_before - 1, "one click on delete does nothing yet")
    b.click("button[data-action=\"delete\"][data-id=\"%s\"]" % victim, "delete button (again)")
    wait_db(lambda: stats("dash-dead")["dead"] == dead_before - 2,
            "delete in the page: the dead job is gone from the database")
    wait_db(lambda: int(victim) not in [j["id"] for j in json.loads(sq("jobs", "--json", "dash-dead"))],
            "delete in the page: job %s is no longer listed" % victim)
    no_problems(b, "dead jobs")

    # Pause a queue from the overview, then resume it.
    b.goto(base + "/#/")
    b.wait("document.querySelector('button[data-action=\"pause\"][data-id=\"dash-q\"]')",
           "dash-q's pause button")
    b.click("button[data-action=\"pause\"][data-id=\"dash-q\"]", "pause button")
    wait_db(lambda: stats("dash-q")["paused"] is True, "pause in the page: dash-q is paused")
    b.wait("document.querySelector('button[data-action=\"resume\"][data-id=\"dash-q\"]')",
           "dash-q's resume button once paused")
    b.screenshot(os.path.join(shots, "paused.png"))
    b.click("button[data-action=\"resume\"][data-id=\"dash-q\"]", "resume button")
    wait_db(lambda: stats("dash-q")["paused"] is False, "resume in the page: dash-q runs again")
    no_problems(b, "pause")

    # Cancel the running job.
    b.goto(base + "/#/queue/dash-slow?state=running")
    running = b.wait("(document.querySelector('button[data-action=\"cancel\"]') || {}).dataset?.id",
                     "the running job's cancel button", value=True)
    if running:
        sel = "button[data-action=\"cancel\"][data-id=\"%s\"]" % running
        b.click(sel, "cancel button")
        b.click(sel, "cancel button (again)")
        wait_db(lambda: any(j["id"] == int(running) and j["last_error"] == "cancelled"
                            for j in json.loads(sq("jobs", "--state", "dead", "--json", "dash-slow"))),
                "cancel in the page: the running job is dead, cancelled")
    no_problems(b, "cancel")

    # The other pages.
    for route, want, shot in (("#/schedules", "dash-nightly", "schedules.png"),
                              ("#/limits", "dash-q", None),
                              ("#/locks", os.environ["SQLQ_TEST_LOCK_KEY"], "locks.png"),
                              ("#/rings", "dash-ring", None),
                              ("#/rings/dash-ring", "entry two", "rings.png"),
                              ("#/pools", "dash-pool2", "pools.png"),
                              ("#/pools/dash-pool", "key-b", None),
                              ("#/subscriptions", "Subscriptions", None),
                              ("#/health", "Health", None)):
        b.goto(base + "/" + route)
        got = b.wait("document.getElementById('main').innerText.includes(%s)" % json.dumps(want),
                     route + " showing " + want)
        expect(bool(got), "the page " + route + " loads")
        if shot:
            b.screenshot(os.path.join(shots, shot))
        no_problems(b, route)
    # A ring's name in the list of rings leads to its entries.
    b.goto(base + "/#/rings")
    b.wait("document.querySelector('main a[href=\"#/rings/dash-ring\"]')", "the ring's link")
    b.click("main a[href=\"#/rings/dash-ring\"]", "the ring's link")
    expect(bool(b.wait("document.getElementById('main').innerText.includes('entry two')",
                       "the ring's page from its link")), "the ring's link leads to its entries")
    no_problems(b, "#/rings link")
    expect("payload" not in b.eval("fetch('/api/v1/schedules').then(r => r.text())"),
           "the schedules' API shows no payload")

    # Read-only: no button at all.
    b.goto(ro_base + "/#/queue/dash-dead")
    b.wait("document.querySelector('#server .badge')", "the read-only badge")
    expect(b.eval("document.querySelectorAll('main button[data-action]').length") == 0,
           "read-only: no action button")
    b.goto(ro_base + "/#/")
    b.wait("document.querySelector('tr[data-queue]')", "the read-only overview")
    expect(b.eval("document.querySelectorAll('main button[data-action]').length") == 0,
           "read-only overview: no action button")
    no_problems(b, "read-only")


if __name__ == "__main__":
    sys.exit(main())
