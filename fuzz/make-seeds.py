#!/usr/bin/env python3
"""Writes the seed corpus of weft's fuzz targets (fuzz/README.md).

    python3 fuzz/make-seeds.py [--build BUILD_DIR]

The seeds of the trace encoding, the event ring, the binary-structure cache
and the profile edits are made here from the formats' documentation; with
--build (a built weft tree), the profile and the raw capture are recorded
from examples/ring_pthreads.c (comm, crd, imbalance, falseshare, traces).
"""
import argparse
import json
import os
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    os.makedirs(os.path.join(HERE, "corpus", target), exist_ok=True)
    with open(os.path.join(HERE, "corpus", target, name), "wb") as f:
        f.write(data)


# --- trace encoding (src/common/loop_trace_format.h) ------------------------
def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return ((v << 1) ^ (v >> 63)) & (2**64 - 1)


def value(base_delta, coefficients):
    return bytes([2 * len(coefficients)]) + varint(zigzag(base_delta)) + b"".join(
        varint(zigzag(c)) for c in coefficients)


def loop(count, body_elements):
    return b"\x01" + varint(count) + varint(body_elements)


def trace_seeds():
    put("loop_trace", "empty", b"\x00")
    put("loop_trace", "one-value", varint(1) + value(0x7F001000, []))
    # for i0 < 1024: val base + 8*i0
    put("loop_trace", "stride", varint(1) + loop(1024, 1) + value(0x7F001000, [8]))
    # for i0 < 64: for i1 < 64: val base + 512*i0 + 8*i1; then a value
    put("loop_trace", "nest", varint(2) + loop(64, 1) + loop(64, 1) +
        value(0x55C0F1E07FB0, [512, 8]) + value(-64, []))
    put("loop_trace", "huge-count", varint(1) + loop(2**62, 1) + value(4096, [64]))


# --- event ring (src/sources/valgrind/event_ring.h) --------------------------
READ, WRITE, SWITCH, THREAD_START, THREAD_EXIT, SYNC, MAPS, BLOCK_COUNT, END, BLOCK, \
    ALLOCATION, ATOMIC_WRITE = range(1, 13)


def slot(a, b):
    return struct.pack("<QQ", a & (2**64 - 1), b & (2**64 - 1))


def text_slots(text):
    data = text.encode()
    data += b"\x00" * (-len(data) % 16)
    return data


def ring_seeds():
    pc = 0x401000
    start = slot(0, THREAD_START | (0 << 8)) + slot(0x401000, 100) + slot(1000, 0)
    worker = slot(1, THREAD_START | (1 << 8)) + slot(0x401100, 101) + slot(2000, 0)
    accesses = b"".join(
        slot(0x10000 + 8 * i, (WRITE if i % 2 else READ) | (8 << 8) | (pc << 24)) for i in range(8))
    sync = slot(3000, SYNC | (3 << 8) | (pc << 24)) + slot(0x20000, 0) + slot(0, 0)
    exits = slot(1, THREAD_EXIT) + slot(4000, 7)
    maps = "00400000-00401000 r-xp 00000000 00:00 0 /bin/true\n"
    end = slot(0, END | (1 << 8))
    body = start + accesses + worker + accesses + slot(0, SWITCH) + sync + \
        slot(0x30000, ALLOCATION | (pc << 24)) + slot(64, 0) + \
        slot(5, BLOCK | (pc << 24)) + slot(1, BLOCK_COUNT) + slot(9, 0) + exits + \
        slot(len(maps), MAPS) + text_slots(maps) + end
    put("event_ring", "two-threads", body)
    put("event_ring", "cut-short", body[: len(body) // 2])


# --- binary-structure cache (src/static/binary_structure.cpp) ---------------
def cache_seeds():
    function = {
        "name": "main", "linkage_name": "main", "start": 4592, "end": 4783, "instructions": 51,
        "blocks": [[4592, 4656, 15, [1], False, 4647], [4656, 4682, 8, [2, 3], False, 4680],
                   [4682, 4697, 4, [1], False, 4695], [4697, 4704, 2, [4], False, 4702],
                   [4704, 4725, 6, [5, 6], False, 4723], [4725, 4736, 3, [4], False, 4734],
                   [4736, 4783, 13, [], False, 4782]],
        "loops": [{"blocks": [1, 2], "depth": 1, "file": "/src/copies.c", "first_line": 43,
                   "header": 4656, "header_line": 43, "last_line": 43, "parent": -1},
                  {"blocks": [4, 5], "depth": 1, "file": "/src/copies.c", "first_line": 44,
                   "header": 4704, "header_line": 44, "last_line": 44, "parent": -1}]}
    nested = dict(function, name="nested", linkage_name="nested", start=8000, end=8191)
    nested["blocks"] = [[b[0] + 3408, b[1] + 3408, b[2], b[3], b[4], b[5] + 3408]
                        for b in function["blocks"]]
    nested["loops"] = [dict(function["loops"][0], header=8064, blocks=[1, 2, 3, 4, 5]),
                       dict(function["loops"][1], header=8112, depth=2, parent=0)]
    document = {"build_id": "fuzz", "format": 2, "functions": [function, nested]}
    put("binary_structure_cache", "two-functions", json.dumps(document).encode())


# --- profile edits (fuzz_profile_rows.cpp) ------------------------------------
def rows_seeds():
    # op, table, column, row, then a value: edge integer / text / NULL
    put("profile_rows", "edge-integer", bytes([0, 5, 0, 0, 2, 8]))
    put("profile_rows", "text", bytes([3, 0, 0, 0, 0, 3, 1]) + b"x")
    put("profile_rows", "delete", bytes([2, 9, 0, 1]))


def record(build):
    weft = os.path.join(build, "bin", "weft")
    ring = os.path.join(build, "examples", "ring_pthreads.gcc.O2")
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "ring.weft")
        subprocess.run([weft, "record", "-o", profile, "--", ring, "3", "256", "2"], check=True)
        with open(profile, "rb") as f:
            put("profile_file", "ring.weft", f.read())
        # The runtime writes its raw capture where WEFT_CAPTURE says.
        capture = os.path.join(tmp, "ring.capture")
        env = dict(os.environ, WEFT_CAPTURE=capture, WEFT_MAX_THREADS="1024",
                   WEFT_GRANULARITY="64")
        subprocess.run([ring, "3", "256", "2"], env=env, check=True, stdout=subprocess.DEVNULL)
        with open(capture, "rb") as f:
            put("raw_capture", "ring.capture", f.read())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", help="a built weft tree: record the profile and capture seeds")
    args = parser.parse_args()
    trace_seeds()
    ring_seeds()
    cache_seeds()
    rows_seeds()
    if args.build:
        record(args.build)


if __name__ == "__main__":
    main()
