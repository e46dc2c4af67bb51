#!/usr/bin/env python3
"""Render an HTML page in headless Chromium and fail on what a reader would
see as broken: a console error or uncaught exception (a resource that failed
to load included), an image that did not load, a blank page, or a sortable
table that a click does not sort.  Saves a screenshot of the top of the
page, and of its first figure as SCREENSHOT-figure.png.

    check_html.py PAGE.html SCREENSHOT.png

Chromium is driven through its DevTools protocol over a WebSocket on the
loopback interface (--screenshot alone reports no console errors); the
WebSocket client below is the small part of RFC 6455 that needs.  Standard
library only.  Exit 0: rendered cleanly; 1: problems (one line each); 77:
no chromium."""
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

DEADLINE_S = 90


class WebSocket:
    def __init__(self, host, port, path):
        self.s = socket.create_connection((host, port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            if not chunk:
                raise OSError("WebSocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError(f"WebSocket handshake refused: {head.splitlines()[0]!r}")
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise OSError("WebSocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)   # the server does not mask
            op = b0 & 0x0F
            if op == 8:
                raise OSError("WebSocket closed by the browser")
            if op in (9, 10):          # ping/pong: not sent by Chromium here
                continue
            msg += payload
            if b0 & 0x80:
                return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        self.ws.s.settimeout(120)   # wait_event may have left a short one
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, until):
        while time.monotonic() < until:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    return self.events.pop(i)
            self.ws.s.settimeout(max(until - time.monotonic(), 0.1))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except socket.timeout:
                break
        return None


def start_chromium(profile):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skip: no chromium (scripts/deps.sh test installs it)")
        sys.exit(77)
    args = [exe, "--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--hide-scrollbars", "--mute-audio", "--window-size=1280,900",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
            f"--user-data-dir={profile}", "about:blank"]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")   # Chromium's sandbox refuses to run as root
    # its own process group: the browser's helpers (the network service
    # writes into the profile) must end with it, before the profile goes
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    port_file = os.path.join(profile, "DevToolsActivePort")
    until = time.monotonic() + 90   # a loaded machine starts a browser slowly
    while time.monotonic() < until:
        if os.path.exists(port_file):
            lines = open(port_file).read().split()
            if len(lines) >= 1 and lines[0].isdigit():
                return p, int(lines[0])
        if p.poll() is not None:
            break
        time.sleep(0.1)
    stop_chromium(p)
    print("FAIL: chromium did not start its DevTools endpoint")
    sys.exit(1)


def stop_chromium(p):
    """Ends the browser and every helper it started."""
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(10)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    try:
        os.killpg(p.pid, signal.SIGKILL)   # helpers that outlived the browser
    except ProcessLookupError:
        pass
    p.wait()


def page_target(port):
    until = time.monotonic() + 60
    while time.monotonic() < until:
        try:   # the endpoint may not answer yet right after it wrote its port
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/json/list")
            targets = json.loads(c.getresponse().read())
        except (OSError, ValueError):
            targets = []
        for t in targets:
            if t.get("type") == "page" and t.get("webSocketDebuggerUrl"):
                return t["webSocketDebuggerUrl"]
        time.sleep(0.2)
    raise RuntimeError("no page target")


CHECK_JS = """(function(){
  var imgs = Array.prototype.slice.call(document.images);
  return JSON.stringify({
    broken: imgs.filter(function(i){return !i.complete || i.naturalWidth === 0;})
                .map(function(i){return i.getAttribute('src');}),
    images: imgs.length,
    text: (document.body ? document.body.innerText : '').trim().length,
    height: document.documentElement.scrollHeight,
    title: document.title});})()"""

# A click on the first numeric column of the first sortable table that has
# one sorts it ascending, a second click descending.
SORT_JS = """(function(){
  var ts = document.querySelectorAll('table.sortable'), t = null, col = -1;
  for (var j = 0; j < ts.length && col < 0; j++) {
    var rows = ts[j].tBodies[0].rows;
    for (var i = 0; rows.length > 1 && i < rows[0].cells.length; i++)
      if (rows[0].cells[i].dataset.v !== undefined) { t = ts[j]; col = i; break; }
  }
  if (col < 0) return 'ok';
  t.tHead.rows[0].cells[col].click();
  var v = [].map.call(t.tBodies[0].rows, function(r){return parseFloat(r.cells[col].dataset.v);})
            .filter(function(x){return !isNaN(x);});
  for (var k = 1; k < v.length; k++) if (v[k] < v[k-1]) return 'a click on a heading did not sort';
  t.tHead.rows[0].cells[col].click();
  v = [].map.call(t.tBodies[0].rows, function(r){return parseFloat(r.cells[col].dataset.v);})
        .filter(function(x){return !isNaN(x);});
  for (k = 1; k < v.length; k++) if (v[k] > v[k-1]) return 'a second click did not reverse it';
  return 'ok';})()"""


def check(html_path, shot):
    problems = []
    profile = tempfile.mkdtemp(prefix="hws-chromium-")
    proc = None
    try:
        proc, port = start_chromium(profile)
        url = page_target(port)
        hostport, path = url[len("ws://"):].split("/", 1)
        host, p = hostport.rsplit(":", 1)
        pg = Page(WebSocket(host, int(p), "/" + path))
        for dom in ("Page", "Runtime", "Log"):
            pg.call(f"{dom}.enable")
        until = time.monotonic() + DEADLINE_S
        pg.call("Page.navigate", url="file://" + os.path.abspath(html_path))
        if not pg.wait_event("Page.loadEventFired", until):
            problems.append("the page did not finish loading")
        # let late errors (scripts run on load) arrive
        pg.wait_event("never", min(time.monotonic() + 1.0, until))
        st = json.loads(pg.call("Runtime.evaluate", expression=CHECK_JS,
                                returnByValue=True)["result"]["value"])
        for e in pg.events:
            m, prm = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and prm.get("type") in ("error", "assert"):
                problems.append("console error: " + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in prm.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = prm.get("exceptionDetails", {})
                problems.append("uncaught exception: " + " ".join(str(
                    d.get("exception", {}).get("description") or d.get("text")).split()))
            elif m == "Log.entryAdded" and prm.get("entry", {}).get("level") == "error":
                en = prm["entry"]
                problems.append(f"console error: {en.get('text')} {en.get('url', '')}".strip())
        for b in st["broken"]:
            problems.append(f"broken image: {b}")
        if st["text"] < 20 or st["height"] < 50:
            problems.append(f"blank page: {st['text']} characters of text, "
                            f"{st['height']} px tall")
        png = base64.b64decode(pg.call("Page.captureScreenshot", format="png")["data"])
        with open(shot, "wb") as f:
            f.write(png)
        # and the first figure with its caption, as a reader scrolls to it
        has = pg.call("Runtime.evaluate", returnByValue=True, expression=(
            "(function(){var f=document.querySelector('figure');"
            "if(!f)return false;f.scrollIntoView();return true;})()"))
        if has["result"].get("value"):
            png = base64.b64decode(pg.call("Page.captureScreenshot", format="png")["data"])
            with open(os.path.splitext(shot)[0] + "-figure.png", "wb") as f:
                f.write(png)
        srt = pg.call("Runtime.evaluate", expression=SORT_JS, returnByValue=True)
        if srt["result"].get("value") != "ok":
            problems.append(f"sortable table: {srt['result'].get('value')}")
        return problems, st
    finally:
        if proc:
            stop_chromium(proc)
        shutil.rmtree(profile, ignore_errors=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-8].strip(), file=sys.stderr)
        return 2
    try:
        problems, st = check(sys.argv[1], sys.argv[2])
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"FAIL: driving chromium: {type(e).__name__}: {e}")
        return 1
    for p in problems:
        print("FAIL:", p)
    print(f"{sys.argv[1]}: {st['images']} images, {st['text']} characters, "
          f"{st['height']} px tall, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
