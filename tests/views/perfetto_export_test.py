#!/usr/bin/env python3
"""Records one example, exports it with `weft export --perfetto` and checks
the file against the Chrome trace-event format as weft writes it
(src/views/perfetto_view.h):

  - a JSON object with a traceEvents array; every event has name (string),
    ph, pid and tid (integers); metadata events (ph "M") are process_name,
    thread_name or thread_sort_index with their args; every other event is
    a complete event (ph "X") with cat (string), ts and dur (numbers, >= 0)
    and args holding start_ns and end_ns, ts and dur agreeing with them;
  - on each track (pid, tid) the spans nest: each one ends before the next
    begins or holds it whole;
  - every thread track has a name;
  - the section spans are exactly the profile's section instances: one
    "section" span per row of section_instance_threads (its instance and
    thread, start_ns, the arrival end_ns), each with a "busy" span from the
    start to the arrival (empty when the arrival was recorded before the
    start), and no other.

usage: perfetto_export_test.py --weft BIN --program EXE --out DIR [ARGS...]
"""
import argparse
import json
import numbers
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict


def run(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return result


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weft", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("args", nargs="*")
    options = parser.parse_args()

    os.makedirs(options.out, exist_ok=True)
    name = os.path.basename(options.program)
    profile = os.path.join(options.out, name + ".db")
    trace = os.path.join(options.out, name + ".json")
    run([options.weft, "record", "-o", profile, "--", options.program] + options.args)
    run([options.weft, "export", profile, "--perfetto", trace])
    document = json.load(open(trace, encoding="utf-8"))

    failures = []
    if not isinstance(document, dict) or not isinstance(document.get("traceEvents"), list):
        sys.exit("FAIL: not a trace-event object with a traceEvents array")
    origin = document.get("otherData", {}).get("origin_ns")
    if not is_int(origin):
        failures.append("otherData.origin_ns is not an integer")
        origin = 0

    tracks = defaultdict(list)
    named_tracks = set()
    for event in document["traceEvents"]:
        where = json.dumps(event)[:160]
        if not isinstance(event, dict):
            failures.append(f"an event that is no object: {where}")
            continue
        if not isinstance(event.get("name"), str) or not is_int(event.get("pid")):
            failures.append(f"name or pid missing or mistyped: {where}")
        ph = event.get("ph")
        if ph == "M":
            if event["name"] not in ("process_name", "thread_name", "thread_sort_index"):
                failures.append(f"unknown metadata: {where}")
            if not isinstance(event.get("args"), dict):
                failures.append(f"metadata without args: {where}")
            if event["name"] == "thread_name":
                if not is_int(event.get("tid")) or not isinstance(event["args"].get("name"), str):
                    failures.append(f"thread_name mistyped: {where}")
                named_tracks.add((event["pid"], event.get("tid")))
            continue
        if ph != "X":
            failures.append(f"phase {ph!r}: weft writes complete events only: {where}")
            continue
        if not is_int(event.get("tid")) or not isinstance(event.get("cat"), str):
            failures.append(f"tid or cat missing or mistyped: {where}")
            continue
        ts, dur, args = event.get("ts"), event.get("dur"), event.get("args")
        if not is_number(ts) or not is_number(dur) or ts < 0 or dur < 0:
            failures.append(f"ts/dur not numbers >= 0: {where}")
            continue
        if not isinstance(args, dict) or not is_int(args.get("start_ns")) or not is_int(
                args.get("end_ns")):
            failures.append(f"args.start_ns/end_ns missing: {where}")
            continue
        start, end = args["start_ns"], args["end_ns"]
        if end < start or abs(ts * 1000 - (start - origin)) > 1 or abs(dur * 1000 - (end - start)) > 1:
            failures.append(f"ts/dur disagree with start_ns/end_ns: {where}")
        tracks[(event["pid"], event["tid"])].append(event)

    for track, events in tracks.items():
        if track not in named_tracks:
            failures.append(f"track {track} has no thread_name")
        events.sort(key=lambda e: (e["args"]["start_ns"], -e["args"]["end_ns"]))
        stack = []
        for e in events:
            start, end = e["args"]["start_ns"], e["args"]["end_ns"]
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                failures.append(
                    f"track {track}: {e['name']!r} [{start}, {end}] overlaps "
                    f"{stack[-1][2]!r} [{stack[-1][0]}, {stack[-1][1]}] without nesting")
                continue
            stack.append((start, end, e["name"]))

    # The section spans against the profile's section instances.
    db = sqlite3.connect(profile)
    analyses = dict(db.execute("SELECT key, value FROM meta")).get("analyses", "")
    rows = []
    if "imbalance" in analyses.split(","):
        rows = db.execute(
            "SELECT t.instance_id, t.thread, t.start_ns, t.end_ns, i.instance "
            "FROM section_instance_threads t JOIN section_instances i ON i.id = t.instance_id"
        ).fetchall()
    sections = defaultdict(list)
    busy = defaultdict(list)
    for events in tracks.values():
        for e in events:
            if e["cat"] == "section":
                sections[(e["args"]["instance_id"], e["args"]["thread"])].append(e)
            if e["cat"] == "busy":
                busy[(e["args"]["instance_id"], e["tid"])].append(e)
    expected_keys = set()
    for instance_id, thread, start_ns, end_ns, ordinal in rows:
        expected_keys.add((instance_id, thread))
        found = sections.get((instance_id, thread), [])
        if len(found) != 1:
            failures.append(f"instance {instance_id} thread {thread}: {len(found)} section spans")
            continue
        s = found[0]
        if (s["args"]["start_ns"], s["args"]["arrival_ns"], s["args"]["instance"]) != (
                start_ns, end_ns, ordinal):
            failures.append(f"instance {instance_id} thread {thread}: span {s['args']} differs "
                            f"from the profile's ({start_ns}, {end_ns}, #{ordinal})")
        # An arrival recorded before the start (a spin wait entered before the
        # previous segment closed) makes an empty busy span.
        b = busy.get((instance_id, s["tid"]), [])
        if len(b) != 1 or (b[0]["args"]["start_ns"], b[0]["args"]["end_ns"]) != (
                start_ns, max(start_ns, end_ns)):
            failures.append(f"instance {instance_id} thread {thread}: busy spans {b}")
    extra = set(sections) - expected_keys
    if extra:
        failures.append(f"section spans the profile does not hold: {sorted(extra)[:5]}")

    spans = sum(len(e) for e in tracks.values())
    print(f"{trace}: {spans} spans on {len(tracks)} tracks, {len(rows)} section rows")
    if failures:
        print("FAIL:\n" + "\n".join(failures[:40]))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
