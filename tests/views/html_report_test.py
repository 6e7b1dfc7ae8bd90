#!/usr/bin/env python3
"""Renders `weft report --html` of one example in headless Chromium and checks
the page as the browser built it (--dump-dom):

  - its script ran with no uncaught error (the page writes data-weft-status
    "ok" on <html>, or "error" with the message) and the browser logged no
    console message;
  - every section of the page is there, in order;
  - nothing is fetched: no src= attribute, no link to another origin;
  - the whole program's raw, rar and crr heatmap cells equal `weft comm
    --format json`'s matrices, cell by cell;
  - with --evil asm|template (examples/evil_names_threads.cpp built with
    clang or gcc): the functions named with markup characters are text in
    the page (their characters escaped in the file, as they are in the DOM's
    text), and the page holds only its own two scripts;
and writes a screenshot of the page under the build directory.

usage: html_report_test.py --weft BIN --program EXE --out DIR [--evil asm|template] [-- ARGS]
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

SECTIONS = ["run", "findings", "communication", "locality", "imbalance", "memory", "source",
            "loops"]


class Dom(html.parser.HTMLParser):
    """What the checks read from the rendered page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = {}
        self.section_ids = []
        self.scripts = 0
        self.src_attributes = []
        self.external_links = []
        self.cells = {}  # (panel, kind) -> {(w, r): value}
        self.text = []
        self._svg = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag == "section" and "id" in a:
            self.section_ids.append(a["id"])
        if tag == "script":
            self.scripts += 1
        if "src" in a:
            self.src_attributes.append((tag, a["src"]))
        href = a.get("href") or ""
        if href and not href.startswith("#"):
            self.external_links.append(href)
        if tag == "svg" and "heatmap" in (a.get("class") or "").split():
            self._svg = (a["data-panel"], a["data-kind"])
            self.cells[self._svg] = {}
        if tag == "rect" and self._svg and "cell" in (a.get("class") or "").split():
            self.cells[self._svg][(int(a["data-w"]), int(a["data-r"]))] = float(a["data-v"])

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg = None

    def handle_data(self, data):
        self.text.append(data)


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, **kwargs)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return result


def chromium(args, profile_dir):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if not binary:
        sys.exit("FAIL: chromium is not installed (scripts/setup.sh installs it)")
    return subprocess.run(
        [binary, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         "--disable-extensions", "--disable-background-networking",
         f"--user-data-dir={profile_dir}", "--enable-logging=stderr", "--v=0"] + args,
        capture_output=True, text=True, timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--evil", choices=["asm", "template"])
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()

    os.makedirs(options.out, exist_ok=True)
    name = os.path.basename(options.program)
    profile = os.path.join(options.out, name + ".db")
    page = os.path.join(options.out, name + ".html")
    screenshot = os.path.join(options.out, name + ".png")
    run([options.weft, "record", "-o", profile, "--", options.program] + options.args)
    written = run([options.weft, "report", profile, "--html", page])
    if page not in written.stdout:
        sys.exit(f"FAIL: weft report --html did not print the path it wrote: {written.stdout!r}")
    source = open(page, encoding="utf-8").read()

    failures = []
    with tempfile.TemporaryDirectory() as browser_profile:
        dumped = chromium(["--dump-dom", "file://" + os.path.abspath(page)], browser_profile)
        if dumped.returncode != 0:
            sys.exit(f"FAIL: chromium --dump-dom exited {dumped.returncode}:\n{dumped.stderr}")
        console = [l for l in dumped.stderr.splitlines() if ":CONSOLE" in l]
        if console:
            failures.append("console messages:\n  " + "\n  ".join(console))
        shot = chromium(["--screenshot=" + os.path.abspath(screenshot), "--window-size=1280,5000",
                         "--hide-scrollbars", "file://" + os.path.abspath(page)], browser_profile)
        if shot.returncode != 0 or not os.path.getsize(screenshot) > 0:
            failures.append(f"no screenshot written ({shot.returncode}): {shot.stderr[-400:]}")

    dom = Dom()
    dom.feed(dumped.stdout)
    status = dom.root.get("data-weft-status")
    if status != "ok":
        failures.append(f"page status {status!r}: {dom.root.get('data-weft-error')!r}")
    if dom.section_ids != SECTIONS:
        failures.append(f"sections {dom.section_ids}, expected {SECTIONS}")
    if dom.src_attributes:
        failures.append(f"the page loads something: {dom.src_attributes[:3]}")
    if dom.external_links:
        failures.append(f"links away from the page: {dom.external_links[:3]}")

    for kind in ("raw", "rar", "crr"):
        expected = json.loads(run([options.weft, "comm", profile, "--kind", kind, "--format",
                                   "json"]).stdout)["matrix"]
        cells = dom.cells.get(("0", kind))
        if cells is None:
            failures.append(f"no {kind} heatmap of the whole program in the page")
            continue
        size = len(expected)
        if len(cells) != size * size:
            failures.append(f"{kind}: {len(cells)} cells for {size} threads")
        for w in range(size):
            for r in range(size):
                got = cells.get((w, r))
                want = float(expected[w][r])
                if got is None or abs(got - want) > 1e-5 * max(1.0, abs(want)):
                    failures.append(f"{kind}[{w}][{r}]: page {got}, weft comm {want}")
    if not any(sum(c.values()) > 0 for (panel, kind), c in dom.cells.items() if kind == "raw"):
        failures.append("every raw heatmap is empty: the example should communicate")

    evil_names = {"asm": ["evil<script>&\"'", 'operator"" _evil'],
                  "template": ["evil<script>(int&)", 'operator"" _evil']}
    for evil in evil_names.get(options.evil, []):
        escaped = (evil.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                   .replace('"', "&quot;").replace("'", "&#39;"))
        if escaped not in source:
            failures.append(f"the file does not hold {escaped!r}")
        if evil not in "".join(dom.text):
            failures.append(f"the page's text does not show {evil!r}")
    if dom.scripts != 2:
        failures.append(f"{dom.scripts} script elements in the page, its own are 2")

    print(f"{page}: {os.path.getsize(page)} bytes; screenshot {screenshot}")
    if failures:
        print("FAIL:\n" + "\n".join(failures[:40]))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
