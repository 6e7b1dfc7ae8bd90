#!/usr/bin/env python3
"""Progress on long work (src/cli/progress.h): `weft record` and `weft report
--html` write their progress line to stderr when it is a terminal (a
pseudo-terminal here), erase it, and write none with --quiet or when stderr
is a pipe.

usage: progress_test.py --weft BIN --program EXE --out DIR
"""
import argparse
import os
import pty
import subprocess
import sys

ERASE = b"\r\x1b[K"


def on_terminal(command):
    """Runs command with stderr on a pseudo-terminal; returns what it wrote."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=follower)
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    if process.wait(timeout=120) != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {process.returncode}: {output[-400:]!r}")
    return output


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--out", required=True)
    o = parser.parse_args()
    os.makedirs(o.out, exist_ok=True)
    profile = os.path.join(o.out, "progress.db")
    page = os.path.join(o.out, "progress.html")
    record = [o.weft, "record", "-o", profile, "--", o.program]
    report = [o.weft, "report", profile, "--html", page]
    failures = []

    shown = on_terminal(record)
    for stage in (b"weft: reading the capture", b"weft: preparing comm", b"weft: writing tables"):
        if stage not in shown:
            failures.append(f"record on a terminal: no {stage!r} in {shown[:300]!r}")
    last = shown.rfind(b"weft: recorded")
    if last < 0 or shown.rfind(ERASE) > last or ERASE not in shown[:last]:
        failures.append(f"record: the progress line is not erased before the outcome: {shown!r}")
    if b"weft: finding" not in on_terminal(report):
        failures.append("report --html on a terminal shows no progress")

    quiet = on_terminal(record[:2] + ["--quiet"] + record[2:])
    if ERASE in quiet or b"preparing" in quiet:
        failures.append(f"record --quiet shows progress: {quiet!r}")
    if ERASE in on_terminal(report + ["-q"]):
        failures.append("report --html -q shows progress")
    piped = subprocess.run(record, capture_output=True, timeout=120).stderr
    if ERASE in piped or b"preparing" in piped:
        failures.append(f"record with stderr a pipe shows progress: {piped!r}")

    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
