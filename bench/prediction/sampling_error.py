#!/usr/bin/env python3
"""How far a sampled reuse-distance profile is from an exact one of the same
run (bench/prediction.sh; docs/metrics.md, "Sampled reuse distances").

    sampling_error.py EXACT.weft SAMPLED.weft [--label TEXT]

Reads `reuse_histograms` of both (instructions matched by module offset, as
`weft predict` matches them) and prints one line, tab-separated:

    label  shift  accesses_err%  mean_err%  bins_pp  instr_mean_err%  remote_mean_err%

- shift: the sampled profile's meta reuse_sample_shift (0: it traced every
  granule, so it is exact too);
- accesses_err%: relative difference of the total (weighted) accesses;
- mean_err%: relative difference of the mean distance of all reuses;
- bins_pp: the largest difference, in percentage points, of the share of
  accesses in a power-of-two range of distances (cold accesses one range);
- instr_mean_err%: per (instruction, thread, locality), the relative error
  of the mean distance, averaged weighted by the exact accesses;
- remote_mean_err%: mean_err% of the remote reuses alone.
"""
import sqlite3
import sys
from collections import defaultdict


def octave(bin_):
    """Bins 0..7 are distances 0..7, then 8 sub-bins per power of two: the
    power-of-two range of a bin (-1: cold)."""
    if bin_ < 0:
        return -1
    if bin_ < 8:
        return bin_.bit_length()  # 0 -> 0, 1 -> 1, 2..3 -> 2, 4..7 -> 3
    return bin_ // 8 + 3  # [8,16) -> 4, ...


def load(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    meta = dict(db.execute("select key, value from meta"))
    rows = db.execute(
        "select coalesce(c.module_offset, h.pc), h.thread, h.locality, h.bin, h.count, h.distance_sum "
        "from reuse_histograms h left join code_locations c on c.pc = h.pc"
    ).fetchall()
    db.close()
    return meta, rows


def summarize(rows):
    total = 0.0
    reuse = [0.0, 0.0]  # count, distance sum (all)
    remote = [0.0, 0.0]
    octaves = defaultdict(float)
    items = defaultdict(lambda: [0.0, 0.0, 0.0])  # accesses, reuses, distance sum
    for offset, thread, locality, bin_, count, dsum in rows:
        total += count
        octaves[octave(bin_)] += count
        item = items[(offset, thread, locality)]
        item[0] += count
        if bin_ >= 0:
            reuse[0] += count
            reuse[1] += dsum
            item[1] += count
            item[2] += dsum
            if locality == 1:
                remote[0] += count
                remote[1] += dsum
    return total, reuse, remote, octaves, items


def rel(a, b):
    if a == 0:
        return 0.0 if b == 0 else 100.0
    return 100.0 * abs(b - a) / a


def mean(pair):
    return pair[1] / pair[0] if pair[0] else 0.0


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    label = "-"
    if "--label" in argv:
        label = argv[argv.index("--label") + 1]
        args.remove(label)
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    (_, exact_rows), (smeta, sampled_rows) = load(args[0]), load(args[1])
    e_total, e_reuse, e_remote, e_oct, e_items = summarize(exact_rows)
    s_total, s_reuse, s_remote, s_oct, s_items = summarize(sampled_rows)
    pp = 0.0
    for o in set(e_oct) | set(s_oct):
        es = e_oct.get(o, 0.0) / e_total if e_total else 0.0
        ss = s_oct.get(o, 0.0) / s_total if s_total else 0.0
        pp = max(pp, 100.0 * abs(es - ss))
    weighted, weight = 0.0, 0.0
    for key, (acc, reuses, dsum) in e_items.items():
        if reuses == 0:
            continue
        s = s_items.get(key)
        s_mean = s[2] / s[1] if s and s[1] else 0.0
        weighted += acc * rel(dsum / reuses, s_mean)
        weight += acc
    print(
        "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f"
        % (
            label,
            smeta.get("reuse_sample_shift", "?"),
            rel(e_total, s_total),
            rel(mean(e_reuse), mean(s_reuse)),
            pp,
            weighted / weight if weight else 0.0,
            rel(mean(e_remote), mean(s_remote)),
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
