#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""fg_browser.py - open a `bpfrec flamegraph` page in Debian's headless
chromium, with the network off, and report what a person would see, as
JSON on stdout. Driven over the DevTools protocol (python3-websocket): no
other driver is packaged beside chromium.

  fg_browser.py PAGE OUTDIR [--view I:C] [--names a,b,c] [--zoom NAME]
                [--search REGEX] [--hover NAME] [--filter comm=NAME] [--all-views] [--each-tid]
  fg_browser.py PAGE OUTDIR --timings [--search REGEX] [--repeat N]

Reports, in percent of the chart's width (the whole graph):
  widths    each --names frame's drawn width, summed over its frames
  values    each name's total in the view's column (the page's own sums)
  views     --all-views: per view ("event: type (unit)"), the values and total
  per_tid   --each-tid: the values with the tid filter set to each thread
  zoom      after clicking the --zoom frame: its width and the names'
  search    the page's "Matched" share and how many frames it highlighted
  tip       the tooltip over the --hover frame
  requests  every request the page made other than for the page itself
  errors    JavaScript exceptions and console errors
and saves OUTDIR/flame.png (a screenshot, after the search).

--timings is for the bench (never a test: it measures this machine): how
responsive the page is, in milliseconds of the page's own clock, each
action until the frame after it is painted; the median and the slowest of
--repeat runs (default 3):
  first_draw_ms  navigation start to the first paint after the load event
  fcp_ms         navigation start to chromium's first contentful paint
  search_ms      typing --search (default: the zoom target's name, which
                 recurs elsewhere) until its highlights are painted
  zoom_ms        clicking the widest frame below the root's children
  reset_ms       clicking "Reset zoom"
  hover_ms       moving the mouse onto a frame until its tooltip is painted
and frames_drawn, frames (nodes in the page), status, errors.
"""
import argparse
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


class Browser:
    def __init__(self, outdir):
        self.prof = tempfile.mkdtemp(prefix="fg-chromium.", dir=outdir)
        exe = shutil.which("chromium")
        if not exe:
            sys.exit("chromium is not installed: run 'sh tools/deps.sh test' (Debian package chromium)")
        # No proxy, no background fetches, no first-run pages: the page is alone.
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-default-apps", "--no-proxy-server", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "--user-data-dir=" + self.prof, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.prof, "DevToolsActivePort")
        # Starting chromium on an emulated CPU takes long: a hang, not a slow machine, ends this.
        for _ in range(1200):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            if self.proc.poll() is not None:
                sys.exit("chromium exited with %d before listening" % self.proc.returncode)
            time.sleep(0.25)
        port = open(port_file).read().split()[0]
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json" % port, timeout=60))
        page = [t for t in targets if t.get("type") == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=300)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    sys.exit("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=300):
        end = time.time() + timeout
        while time.time() < end:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        sys.exit("no %s within %d s" % (method, timeout))

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            sys.exit("page script failed: %s" % json.dumps(r["exceptionDetails"])[:500])
        return r["result"].get("value")

    def mouse(self, kind, x, y):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                  clickCount=1 if kind != "mouseMoved" else 0)

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.prof, ignore_errors=True)


# In the page: every drawn frame of the given names, as widths in percent of the chart.
# The id of the frame at (x, y), -1 for none (fg_browser's diagnostics).
HIT = "(() => { const e = document.elementFromPoint(%s, %s); const f = e && e.closest('.fr');" \
      " return f ? +f.dataset.id : -1; })()"
MEASURE = """(() => {
  const names = %s, v = window.flamegraph.view(), chart = document.getElementById('chart');
  const W = chart.getBoundingClientRect().width, out = {}, rects = {}, values = {};
  for (const n of names) { out[n] = 0; values[n] = 0; }
  const S = JSON.parse(document.getElementById('fg-data').textContent).strings;
  for (const e of chart.querySelectorAll('.fr:not(.anc)')) {
    const id = +e.dataset.id;
    if (v.kind[id] >= 4) continue;
    const n = S[v.name[id]];
    if (!(n in out)) continue;
    const r = e.getBoundingClientRect();
    out[n] += 100 * r.width / W;
    if (!rects[n] || r.width > rects[n].w) rects[n] = {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, id: id};
  }
  for (let id = 1; id < v.n; id++) {
    if (v.kind[id] >= 4) continue;
    const n = S[v.name[id]];
    if (n in values) values[n] += v.tot[id];
  }
  return {widths: out, rects: rects, values: values, total: v.tot[0], frames: chart.querySelectorAll('.fr').length};
})()"""


# In the page: run an action, then wait until the frame after it is painted.
TIME_ACTION = """(async () => {
  const painted = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  await painted();
  const t0 = performance.now();
  (%s)();
  await painted();
  return performance.now() - t0;
})()"""

# The widest frame two levels below the root, a frame with children.
ZOOM_TARGET = """(() => {
  const v = window.flamegraph.view();
  let best = -1;
  for (let id = 1; id < v.n; id++)
    if (v.depth[id] === 3 && v.kind[id] < 4 && (best < 0 || v.tot[id] > v.tot[best])) best = id;
  return best;
})()"""


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def timings(b, a):
    """--timings: the page's responsiveness (see the header)."""
    res = {}
    res["first_draw_ms"] = b.js("new Promise(function wait(r) { window.__fgFirstDraw ?"
                                " r(window.__fgFirstDraw) : setTimeout(() => wait(r), 10); })")
    res["fcp_ms"] = b.js("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
    res["frames"] = b.js("window.flamegraph.view().n")
    res["frames_drawn"] = b.js("document.querySelectorAll('#chart .fr').length")
    res["status"] = b.js("document.getElementById('status').textContent")
    target = b.js(ZOOM_TARGET)
    query = a.search
    if not query and target >= 0:
        # The zoom target's name: it recurs under other parents, so many frames match.
        query = b.js("(() => { const v = window.flamegraph.view(), S = JSON.parse("
                     "document.getElementById('fg-data').textContent).strings;"
                     " return S[v.name[%d]]; })()" % target)
    query = query or "a"
    runs = {"search_ms": [], "zoom_ms": [], "reset_ms": [], "hover_ms": []}
    for i in range(a.repeat):
        q = query if i % 2 == 0 else query[:-1]    # a changed query each time
        runs["search_ms"].append(b.js(TIME_ACTION % (
            "() => { const s = document.getElementById('search'); s.value = %s;"
            " s.dispatchEvent(new Event('input')); }" % json.dumps(q))))
        if target >= 0:
            runs["zoom_ms"].append(b.js(TIME_ACTION % (
                "() => document.querySelector('#chart .fr[data-id=\"%d\"]')"
                ".dispatchEvent(new MouseEvent('click', {bubbles: true}))" % target)))
            runs["reset_ms"].append(b.js(TIME_ACTION % "() => document.getElementById('reset').click()"))
        runs["hover_ms"].append(b.js(TIME_ACTION % (
            "() => { const e = document.querySelector('#chart .fr:not(.anc)'), r = e.getBoundingClientRect();"
            " e.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.left + 1,"
            " clientY: r.top + 1})); }")))
    for k, xs in runs.items():
        if xs:
            res[k] = round(median(xs), 1)
            res[k.replace("_ms", "_max_ms")] = round(max(xs), 1)
    res["search"] = query
    res["search_matched"] = b.js("document.getElementById('match').textContent")
    res["zoom_target"] = target
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("outdir")
    ap.add_argument("--view")
    ap.add_argument("--view-label", help="select the view whose name in the selector is this")
    ap.add_argument("--names", default="")
    ap.add_argument("--zoom")
    ap.add_argument("--search")
    ap.add_argument("--hover")
    ap.add_argument("--filter", action="append", default=[])
    ap.add_argument("--all-views", action="store_true",
                    help="also the names' values in every view and column")
    ap.add_argument("--each-tid", action="store_true",
                    help="also the names' values with the tid filter at each thread")
    ap.add_argument("--timings", action="store_true",
                    help="report how fast the page draws, searches and zooms (for the bench)")
    ap.add_argument("--repeat", type=int, default=3, help="--timings: runs of each action")
    a = ap.parse_args()
    names = [n for n in a.names.split(",") if n]
    for n in (a.zoom, a.hover):
        if n and n not in names:
            names.append(n)
    res = {}
    b = Browser(a.outdir)
    try:
        b.call("Page.enable")
        b.call("Runtime.enable")
        b.call("Network.enable")
        # No network at all: whatever the page asked for would fail, and is listed.
        b.call("Network.emulateNetworkConditions", offline=True, latency=0,
               downloadThroughput=-1, uploadThroughput=-1)
        b.call("Emulation.setDeviceMetricsOverride", width=1400, height=900,
               deviceScaleFactor=1, mobile=False)
        url = "file://" + os.path.abspath(a.page)
        if a.timings:
            # The page's clock when the first frame after its load event is painted.
            b.call("Page.addScriptToEvaluateOnNewDocument", source=(
                "addEventListener('load', () => requestAnimationFrame(() =>"
                " setTimeout(() => { window.__fgFirstDraw = performance.now(); }, 0)));"))
        b.call("Page.navigate", url=url)
        b.wait_event("Page.loadEventFired")
        if a.timings:
            res["timings"] = timings(b, a)
        if a.view:
            b.js("(() => { const s = document.getElementById('view'); s.value = %s;"
                 " s.dispatchEvent(new Event('change')); })()" % json.dumps(a.view))
        if a.view_label:
            found = b.js("(() => { const s = document.getElementById('view');"
                         " const o = [...s.options].find(o => o.textContent === %s);"
                         " if (!o) return false; s.value = o.value;"
                         " s.dispatchEvent(new Event('change')); return true; })()"
                         % json.dumps(a.view_label))
            if not found:
                sys.exit("no view named %r" % a.view_label)
        for f in a.filter:
            key, val = f.split("=", 1)
            b.js("(() => { const s = document.getElementById('f-%s'); s.value = %s;"
                 " s.dispatchEvent(new Event('change')); return s.value; })()" % (key, json.dumps(val)))
        m = b.js(MEASURE % json.dumps(names))
        res["widths"] = m["widths"]
        res["values"] = m["values"]
        res["total"] = m["total"]
        res["frames_drawn"] = m["frames"]
        res["status"] = b.js("document.getElementById('status').textContent")
        if a.all_views:
            res["views"] = {}
            opts = b.js("[...document.getElementById('view').options].map(o => [o.value, o.textContent])")
            cur = b.js("document.getElementById('view').value")
            for val, label in opts:
                b.js("(() => { const s = document.getElementById('view'); s.value = %s;"
                     " s.dispatchEvent(new Event('change')); })()" % json.dumps(val))
                mv = b.js(MEASURE % json.dumps(names))
                res["views"][label] = {"values": mv["values"], "total": mv["total"]}
            b.js("(() => { const s = document.getElementById('view'); s.value = %s;"
                 " s.dispatchEvent(new Event('change')); })()" % json.dumps(cur))
        if a.each_tid:
            res["per_tid"] = {}
            tids = b.js("[...document.getElementById('f-tid').options].map(o => o.value).filter(v => v)")
            for t in tids:
                b.js("(() => { const s = document.getElementById('f-tid'); s.value = %s;"
                     " s.dispatchEvent(new Event('change')); })()" % json.dumps(t))
                res["per_tid"][t] = b.js(MEASURE % json.dumps(names))["values"]
            b.js("(() => { const s = document.getElementById('f-tid'); s.value = '';"
                 " s.dispatchEvent(new Event('change')); })()")
        res["view"] = b.js("document.getElementById('view').selectedOptions[0].textContent")
        if a.hover and a.hover in m["rects"]:
            r = m["rects"][a.hover]
            b.mouse("mouseMoved", r["x"], r["y"])
            res["tip"] = b.js("document.getElementById('tip').textContent")
            res["tip_visible"] = b.js("getComputedStyle(document.getElementById('tip')).display")
        if a.zoom:
            # Away from the hovered frame first: its tooltip may lie over the
            # frame to click (on a small window it does), and the filters
            # above redrew the chart: measure where the frame is now.
            b.mouse("mouseMoved", 1, 1)
            m = b.js(MEASURE % json.dumps(names))
        if a.zoom and a.zoom in m["rects"]:
            # A click where the frame was drawn must zoom on it. On an emulated
            # CPU the layout may still move between the measure and the click
            # (6.1 in a VM: one click landed on the root); then measure and
            # click again, up to three times, and say how many it took.
            for attempt in range(1, 4):
                if a.zoom not in m["rects"]:
                    break
                r = m["rects"][a.zoom]
                # Into the viewport first: a chart taller than the window
                # (deeper stacks: a VM's kernel) can have the frame below its
                # edge, where nothing is under the pointer (3 clicks on
                # nothing on 6.12 under emulation).
                b.js("(() => { const e = document.querySelector('#chart .fr[data-id=\"%d\"]');"
                     " if (e) e.scrollIntoView({block: 'center', inline: 'center'}); })()" % r["id"])
                b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                m = b.js(MEASURE % json.dumps(names))
                r = m["rects"].get(a.zoom, r)
                # Over it first, as a hand would: hovering writes the frame's
                # details above the chart, which may move it; then where it is now.
                b.mouse("mouseMoved", r["x"], r["y"])
                # Until the frame stays where it is across two painted frames.
                for _ in range(100):
                    b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                    m = b.js(MEASURE % json.dumps(names))
                    now = m["rects"].get(a.zoom, r)
                    if (now["x"], now["y"]) == (r["x"], r["y"]):
                        break
                    r = now
                # What is under the pointer, and where the click lands: a
                # failure then says whether the page moved or the click was lost.
                hit = b.js(HIT % (r["x"], r["y"]))
                b.js("(() => { window.__fgClicks = []; document.addEventListener('click', (ev) => {"
                     " const f = ev.target.closest && ev.target.closest('.fr');"
                     " window.__fgClicks.push(f ? +f.dataset.id : -1); }, {capture: true, once: true}); })()")
                b.mouse("mousePressed", r["x"], r["y"])
                b.mouse("mouseReleased", r["x"], r["y"])
                b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                z = b.js(MEASURE % json.dumps(names))
                res["zoom"] = {"clicked": r["id"], "zoomed_on": b.js("window.flamegraph.zoom()"),
                               "widths": z["widths"], "attempts": attempt,
                               "under_pointer": hit, "click_landed_on": b.js("window.__fgClicks"),
                               "at": [r["x"], r["y"]],
                               "viewport": b.js("[window.innerWidth, window.innerHeight]")}
                if res["zoom"]["zoomed_on"] == r["id"]:
                    break
                b.js("document.getElementById('reset').click()")
                b.mouse("mouseMoved", 1, 1)
                m = b.js(MEASURE % json.dumps(names))
            b.js("document.getElementById('reset').click()")
            res["after_reset_zoom"] = b.js("window.flamegraph.zoom()")
        if a.search:
            b.js("(() => { const s = document.getElementById('search'); s.value = %s;"
                 " s.dispatchEvent(new Event('input')); })()" % json.dumps(a.search))
            res["search"] = {
                "text": b.js("document.getElementById('match').textContent"),
                "share": float(b.js("document.getElementById('match').dataset.share || 'NaN'")),
                "highlighted": b.js("document.querySelectorAll('#chart .fr.m').length"),
            }
        shot = b.call("Page.captureScreenshot", format="png")
        path = os.path.join(a.outdir, "flame.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        res["screenshot"] = path
        # Let anything late arrive, then look at every event seen.
        b.js("new Promise(r => setTimeout(r, 500))")
        reqs, errors = [], []
        for e in b.events:
            p = e.get("params", {})
            if e["method"] == "Network.requestWillBeSent":
                u = p["request"]["url"]
                if u != url:
                    reqs.append(u)
            elif e["method"] == "Runtime.exceptionThrown":
                errors.append(json.dumps(p.get("exceptionDetails", {}))[:300])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning"):
                errors.append(json.dumps(p.get("args", []))[:300])
        res["requests"] = reqs
        res["errors"] = errors
    finally:
        b.close()
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
