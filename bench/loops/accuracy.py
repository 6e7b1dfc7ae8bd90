#!/usr/bin/env python3
"""The accuracy table of `weft loops` (bench/loops.sh runs this after building
the kernels; bench/README.md, "Accuracy of `weft loops`").

    accuracy.py --weft WEFT --kernels kernels.c --out DIR [--cpu NAME] [--quick]
                BUILD=BINARY...

For every kernel (a `weft:kernel NAME` marker in kernels.c) and build:

- predicted: `weft loops BINARY --function k_NAME --line kernels.c:LINE --cpu
  CPU --format json`, the cycles per iteration in L1 of every version of
  the source loop, weighted by the iterations each runs (counted below) and
  expressed per iteration of the main version, the one that runs the most
  iterations (the vector body rather than its scalar epilogue, clang's
  unrolled body rather than its remainder). With one version running this
  is the main version's own prediction; it differs where the compiler made
  several copies that all run (clang -O3 unrolls matvec's row loop by 4:
  four copies of the inner loop, each a quarter of the iterations). A
  version nested in another loop is predicted with its trip count
  (`--trip-count HEADER=N`, N = its header's executions / its enclosing
  loop header's, counted below): the enclosing loop's iteration simulated,
  the entries overlapping. L2 and RAM: the same weighting of each
  version's `memory_levels` estimate, with this machine's calibration
  (`weft calibrate`, measured once, passed with --calibration);
- iterations: how often each version's header instruction executes, counted
  by callgrind (--dump-instr=yes: executions per instruction address) while
  the driver calls the kernel once, at three small sizes; the main
  version's count is an affine function of the driver's UNITS (elements or
  rows, multiples of 64 elements: the vector body's trip count has no
  remainder that varies), fitted on two sizes and checked on the third;
- measured: the driver's minimum TSC ticks per call at two sizes of the same
  level (16 and 8 KiB for L1, 256 and 128 KiB for L2, 64 and 32 MiB for
  RAM), the difference divided by the difference of the main version's
  iterations (header executions: the iterations MCA's "iteration" is, the
  back edges plus the entries) (so the call, the set-up before the loop, the epilogue and
  the reading of the TSC cancel out), converted to core cycles by the TSC
  ticks per core cycle that the driver measures (as `driver calibrate`
  does: chains of dependent multiplies) just before each timing. Every timing is
  the best of several driver runs (4 at L1 and L2, 3 at RAM) made in
  rounds over the whole measurement, each round timing every build at every
  level, so that a disturbance of a few seconds (another engineer's build,
  the host's SMT sibling) spoils one round, not every run of a build;
- errors: (predicted - measured) / measured per level, their mean, median
  and worst per build (L1) and overall (L1, L2, RAM; within 10%, RAM within
  the issue's 20%), and for L2 and RAM also over the "strided" rows only,
  those whose every access has a static stride: an irregular access's
  footprint (SpMV's x and the histogram's bins stay in L1 while the
  estimate pays RAM's latency) and a stride held in a register (colsweep's
  row, counted as stride 1) are beyond the static estimate.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

L1 = (16384, 8192)
L2 = (262144, 131072)
# RAM's sizes: at least 64 and 32 MiB, and the calibration's RAM working
# set and its half when that is larger (4 times the largest cache any
# source describes: a virtual machine's L3 of 260 MiB held 64 MiB).
RAM_MIN = (64 << 20, 32 << 20)
# The Valgrind recording at RAM's size: its strides and footprints do not
# depend on the size beyond this (the irregular tables are fixed-size).
RAM_RECORDED = 64 << 20
COUNT_SIZES = (8192, 12288, 16384)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def log(started, what):
    print(f"[{time.time() - started:5.0f} s] {what}", file=sys.stderr, flush=True)


def markers(kernels_c):
    found = {}
    with open(kernels_c) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"/\* weft:kernel (\w+) \*/", line)
            if m:
                found[m.group(1)] = number
    return found


def callgrind_counts(binary, size, names, out_dir, tag):
    """{address: executions} of every instruction of the driver's run that
    calls each kernel once at `size` bytes; also {kernel: units}."""
    out = os.path.join(out_dir, f"callgrind.{tag}.{size}")
    # valgrind 3.19 gives up on clang 14's DWARF 5: count on a copy without
    # the debug info (same code at the same addresses).
    stripped = os.path.join(out_dir, f"{tag}.nodebug")
    if not os.path.exists(stripped) or os.path.getmtime(stripped) < os.path.getmtime(binary):
        run(["objcopy", "--strip-debug", binary, stripped])
    stdout = run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                  f"--callgrind-out-file={out}", stripped, "count", str(size), *names])
    units = {}
    for line in stdout.splitlines():
        name, _, u = line.split()
        units[name] = int(u)
    counts = {}
    addr = 0
    skip_next = False
    with open(out) as f:
        for line in f:
            c = line[:1]
            if not line.strip():
                continue
            if c.isalpha():
                # calls=: the next cost line is the call's inclusive cost
                skip_next = line.startswith("calls=")
                continue
            if not (c.isdigit() or c in "+-*"):
                continue
            fields = line.split()
            p = fields[0]
            if p == "*":
                pass
            elif p[0] in "+-":
                addr += int(p)
            elif p.startswith("0x"):
                addr = int(p, 16)
            else:
                addr = int(p)
            if skip_next:
                skip_next = False
                continue
            if len(fields) >= 3:
                counts[addr] = counts.get(addr, 0) + int(fields[2])
    return counts, units


def times(binary, sizes, reps, rounds, names):
    """{kernel: ((units, min ticks) at sizes[0], (units, min ticks) at sizes[1])}"""
    result = {}
    out = run([binary, "time", str(sizes[0]), str(sizes[1]), str(reps), str(rounds), *names])
    for line in out.splitlines():
        f = line.split()
        result[f[0]] = ((int(f[2]), float(f[3])), (int(f[5]), float(f[6])),
                        (float(f[7]), float(f[8])))
    return result


def record_profile(weft, binary, size, names, out_dir, tag, level, notes):
    """A weft profile of the driver's run calling each kernel once at `size`
    bytes (the Valgrind source, memory traces only): the strides and
    footprints `weft loops --profile` joins to the loops. None when the
    recording fails."""
    out = os.path.join(out_dir, f"{tag}.{level}.db")
    try:
        run([weft, "record", "-q", "--backend", "valgrind", "--analyses", "traces", "-o", out,
             "--", binary, "count", str(size), *names], timeout=1800)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        notes.append(f"{tag}: recording at {size} bytes failed ({e}); no run-joined {level} column")
        return None
    return out


def predict(weft, binary, name, kernels_file, line, cpu, calibration, notes, trip_counts=None,
            profile=None):
    """The versions of the source loop at kernels.c:line, as `weft loops
    --format json` gives them (with --trip-count HEADER=N for each of
    trip_counts {header: N}, and --profile PROFILE when given)."""
    # --function as well: `weft loops --line` alone analyzes every loop of
    # the binary before it filters (the driver's main has clang-unrolled
    # loops of 4,000 instructions: 10 s per call).
    cmd = [weft, "loops", binary, "--function", f"k_{name}", "--line",
           f"{kernels_file}:{line}", "--cpu", cpu, "--calibration", calibration,
           "--format", "json"]
    for header, count in sorted((trip_counts or {}).items()):
        cmd += ["--trip-count", f"{header:#x}={count}"]
    if profile:
        cmd += ["--profile", profile]
    try:
        j = json.loads(run(cmd, timeout=120))
    except subprocess.TimeoutExpired:
        notes.append(f"{name}: `{' '.join(cmd)}` took over 120 s")
        j = {"source_loops": []}
    return [v for sl in j["source_loops"] for v in sl["versions"]]


def level_cycles(version, level):
    """A version's cycles per iteration with its operands in level."""
    if level == "L1":
        trip = version.get("with_trip_count")
        return trip["cycles_per_iteration"] if trip else version["cycles_per_iteration"]
    levels = version.get("memory_levels") or {}
    return levels[level]["cycles_per_iteration"] if level in levels else None


def fmt(x, digits=2):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weft", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpu", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="regex over kernel names")
    ap.add_argument("--reuse-timings", action="store_true",
                    help="predict again against the timings the last run saved in OUT")
    ap.add_argument("builds", nargs="+")
    args = ap.parse_args()
    started = time.time()

    marks = markers(args.kernels)
    names = [n for n in marks if re.search(args.only, n)]
    builds = [b.split("=", 1) for b in args.builds]
    kernels_file = os.path.basename(args.kernels)

    # TSC ticks per core cycle, from the first build's driver.
    cal = dict(line.split() for line in run([builds[0][1], "calibrate"]).splitlines())
    # The multiply chain: Golden Cove cores fold `add $1` chains in the
    # renamer (0.145 ticks per add against 0.767 per multiply cycle on a
    # Sapphire Rapids VM).
    ticks_per_cycle = float(cal["imul"])
    cpu = args.cpu
    if not cpu:
        host = json.loads(run([args.weft, "loops", builds[0][1], "--line",
                               f"{kernels_file}:{marks[names[0]]}", "--format", "json"]))
        cpu = host["cpu"]["name"]
    print(f"CPU model: {cpu}; TSC ticks per core cycle: add chain {cal['add']}, "
          f"imul chain {cal['imul']} (core clock = TSC rate / {ticks_per_cycle})")
    # This machine's calibration (`weft calibrate` measures it once and
    # reuses it), for the L2/RAM estimates, named explicitly so that every
    # build is predicted with the same file.
    log(started, "weft calibrate")
    calibration = json.loads(run([args.weft, "calibrate", "--format", "json"]))
    if not calibration.get("tsc_ticks_per_core_cycle"):
        # a file from before weft measured the ratio: its figures would stay in TSC ticks
        calibration = json.loads(run([args.weft, "calibrate", "--force", "--format", "json"]))
    levels = {l["level"]: l for l in calibration["levels"]}
    ram_set = levels["RAM"]["working_set_bytes"] if "RAM" in levels else 0
    ram = (max(RAM_MIN[0], ram_set), max(RAM_MIN[1], ram_set // 2))
    print(f"RAM sizes: {ram[0] >> 20} and {ram[1] >> 20} MiB")
    print(f"calibration: {calibration['path']} (measured {calibration['measured_at']}): "
          + "; ".join(f"{name} load {levels[name]['load_bytes_per_cycle']:.2f} B/tick, store "
                      f"{levels[name]['store_bytes_per_cycle']:.2f}, latency "
                      f"{levels[name]['latency_cycles']:.0f}" for name in ("L2", "RAM")
                      if name in levels)
          + f" per TSC tick; {calibration.get('tsc_ticks_per_core_cycle')} TSC ticks per core cycle "
          "(weft loops converts to core cycles with it)")

    # (repetitions, rounds) per level
    # RAM: a call over 64 MiB takes 10-40 ms, several of the scheduler's
    # time slices on the shared 2-vCPU machine: 4 calls in one round and one
    # driver run let a preempted call be the minimum (copy and scale, the
    # same traffic, measured 38.6 and 14.6 cycles); 10 calls in 2 rounds and
    # the best of 3 driver runs.
    # Beyond 64 MiB a call lasts long enough that 4 calls per round do.
    ram_calls = 10 if ram[0] <= RAM_MIN[0] else 4
    plan = {"L1": (300, 2), "L2": (30, 2), "RAM": (2, 1)} if args.quick else \
        {"L1": (500, 2), "L2": (50, 2), "RAM": (ram_calls, 2)}
    rows = []
    notes = []
    ratios = []
    prepared = []
    for tag, binary in builds:
        # Predictions.
        log(started, f"{tag}: weft loops")
        versions = {}
        for name in names:
            # --function as well: `weft loops --line` alone analyzes every
            # loop of the binary before it filters (the driver's main has
            # clang-unrolled loops of 4,000 instructions: 10 s per call).
            versions[name] = predict(args.weft, binary, name, kernels_file, marks[name], cpu,
                                     calibration["path"], notes)
        # Runs at the L2 and RAM sizes under weft (traces): the strides and
        # footprints of `weft loops --profile`, for the run-joined columns.
        log(started, f"{tag}: recording the L2 and RAM runs")
        profiles = {level: record_profile(args.weft, binary, size, names, args.out, tag,
                                          level, notes)
                    for level, size in (("L2", L2[0]), ("RAM", min(ram[0], RAM_RECORDED)))}
        # Iterations of every version.
        log(started, f"{tag}: counting iterations")
        counted = [callgrind_counts(binary, s, names, args.out, tag) for s in COUNT_SIZES]
        prepared.append((tag, binary, versions, counted, profiles))

    # Timings: the best of several driver runs (4 at L1 and L2, 3 at RAM),
    # spread over the whole measurement in rounds that each time every
    # build at every level. The VM's core may share its physical core with
    # another guest's thread (host SMT), and two other engineers' builds
    # share the two vCPUs, for seconds at a time: throughput-bound loops then
    # run up to 1.6x slower, and back-to-back runs were all disturbed
    # together (a whole build's L1 timings, latency chains included, 30%
    # slow in one run); a round a minute later is not.
    passes_per_level = {"L1": 1, "L2": 1, "RAM": 1} if args.quick else \
        {"L1": 4, "L2": 4, "RAM": 3}
    measured_by_build = {tag: {level: {} for level in passes_per_level} for tag, *_ in prepared}
    # Every run saves its timings; --reuse-timings predicts again against
    # them (a change of the model, not of the kernels or the machine).
    timings_file = os.path.join(args.out, "timings.json")
    timing_rounds = max(passes_per_level.values())
    if args.reuse_timings:
        with open(timings_file) as f:
            saved = json.load(f)
        if saved["ram_sizes"] != list(ram) or any(
                name not in saved["builds"].get(tag, {}).get(level, {})
                for tag, *_ in prepared for level in passes_per_level for name in names):
            sys.exit(f"accuracy.py: {timings_file} is of other builds, kernels or RAM sizes")
        measured_by_build = {tag: saved["builds"][tag] for tag, *_ in prepared}
        print(f"timings: {timings_file} (measured {saved['measured_at']})")
        timing_rounds = 0
    for round_index in range(timing_rounds):
        for tag, binary, *_ in prepared:
            for level, sizes in (("L1", L1), ("L2", L2), ("RAM", ram)):
                if round_index >= passes_per_level[level]:
                    continue
                log(started, f"round {round_index + 1}: {tag}: timing {level}")
                timed = times(binary, sizes, *plan[level], names)
                best = measured_by_build[tag][level]
                for n in names:
                    big, small, (rmin, rmax) = timed[n]
                    if n in best:
                        b_big, b_small, (b_rmin, b_rmax) = best[n]
                        big = min(big, b_big, key=lambda x: x[1])
                        small = min(small, b_small, key=lambda x: x[1])
                        rmin, rmax = min(rmin, b_rmin), max(rmax, b_rmax)
                    best[n] = (big, small, (rmin, rmax))

    if timing_rounds:
        with open(timings_file, "w") as f:
            json.dump({"measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "ram_sizes": list(ram), "builds": measured_by_build}, f)

    for tag, binary, versions, counted, profiles in prepared:
        measured = measured_by_build[tag]
        for name in names:
            vs = versions[name]
            row = {"kernel": name, "build": tag, "versions": len(vs)}
            rows.append(row)
            if not vs:
                notes.append(f"{name} {tag}: weft loops found no loop at line {marks[name]}")
                continue
            hits = [[c.get(v["header"], 0) for v in vs] for c, _ in counted]
            main = max(range(len(vs)), key=lambda i: hits[-1][i])
            v = vs[main]
            units = [u[name] for _, u in counted]
            it = [h[main] for h in hits]
            if units[2] == units[0] or it[2] == it[0]:
                notes.append(f"{name} {tag}: the counting sizes give the same iterations")
                continue
            slope = (it[2] - it[0]) / (units[2] - units[0])
            offset = it[0] - slope * units[0]
            if abs(offset + slope * units[1] - it[1]) > 0.5:
                notes.append(f"{name} {tag}: iterations not affine in the size "
                             f"({list(zip(units, it))}); L2/RAM columns approximate")
            row["elements"] = 1 / slope if slope else None  # source iterations per binary iteration
            others = sum(hits[-1]) - it[2]
            row["other_share"] = others / sum(hits[-1]) if sum(hits[-1]) else 0
            row["header"] = v["header"]
            row["modeled"] = all(vs[i].get("modeled") for i in range(len(vs))
                                 if hits[2][i] > hits[0][i])
            # Every version that runs, weighted by the iterations it adds
            # between the two L1 sizes (8 and 16 KiB are counting sizes 0
            # and 2), per iteration of the main version: the main version's
            # own prediction when the others run only a few iterations (an
            # epilogue); the sum of the copies when the compiler unrolled
            # the outer loop (clang -O3's matvec: four copies of the row loop).
            delta = [hits[2][i] - hits[0][i] for i in range(len(vs))]
            # signed: a remainder loop that runs fewer iterations at 16 KiB
            # (clang -O3's 16-element loop after its 128-element body) takes
            # its time off the difference
            running = [i for i in range(len(vs)) if delta[i] != 0]
            row["main_share"] = delta[main] / sum(d for d in delta if d > 0) if delta[main] > 0 \
                else None
            if any(d < 0 for d in delta):
                notes.append(f"{name} {tag}: versions run fewer iterations at 16 than at 8 KiB "
                             f"({[(hex(vs[i]['header']), hits[0][i], hits[2][i]) for i in range(len(vs))]})")
            # A version nested in another loop runs a few iterations per
            # entry (a matvec row, an SpMV row): predicted again with its
            # trip count (`weft loops --trip-count HEADER=N`: the enclosing
            # loop's iteration simulated, consecutive entries overlapping,
            # with the other running versions in the same enclosing loop,
            # clang -O3's copies), the iterations per entry being its
            # header's executions over the enclosing loop header's.
            trips = {}
            for i in running:
                outer = vs[i].get("enclosing_loop_header")
                entries = counted[2][0].get(outer, 0) if outer is not None else 0
                if entries > 0 and hits[2][i] > 0:
                    trips[i] = max(1, round(hits[2][i] / entries))
            if trips:
                again = {x["header"]: x for x in predict(
                    args.weft, binary, name, kernels_file, marks[name], cpu, calibration["path"],
                    notes, {vs[i]["header"]: t for i, t in trips.items()})}
                for i in trips:
                    if vs[i]["header"] in again:
                        vs[i] = again[vs[i]["header"]]
            # The same versions joined with the run at each level's size
            # (`weft loops --profile`): recorded strides and footprints.
            joined = {}
            for level, profile in profiles.items():
                if profile is None:
                    continue
                by_header = {x["header"]: x for x in predict(
                    args.weft, binary, name, kernels_file, marks[name], cpu, calibration["path"],
                    notes, {vs[i]["header"]: t for i, t in trips.items()}, profile)}
                joined[level] = [by_header.get(x["header"]) for x in vs]
            v = vs[main]
            row["trip"] = trips.get(main)
            # The static strides are not the whole story when an access is
            # irregular (its footprint unknown: SpMV's x and the histogram's
            # bins fit in L1, the estimate pays RAM's latency) or its stride
            # is a run-time value (colsweep's row length, counted as stride 1).
            row["static_strides"] = all(a["pattern"] == "strided"
                                        for i in running for a in vs[i]["memory_accesses"])
            for level, key in (("L1", "pred"), ("L2", "pred_l2"), ("RAM", "pred_ram"),
                               ("endless", "pred_endless")):
                cycles = [(vs[i]["cycles_per_iteration"] if level == "endless"
                           else level_cycles(vs[i], level)) if vs[i].get("modeled") else None
                          for i in running]
                row[key] = sum(delta[i] * c for i, c in zip(running, cycles)) / delta[main] \
                    if delta[main] > 0 and None not in cycles else None
            for level, key in (("L2", "run_l2"), ("RAM", "run_ram")):
                jv = joined.get(level)
                if not jv:
                    continue
                cycles = [level_cycles(jv[i], level) if jv[i] and jv[i].get("modeled") else None
                          for i in running]
                row[key] = sum(delta[i] * c for i, c in zip(running, cycles)) / delta[main] \
                    if delta[main] > 0 and None not in cycles else None
            if row["pred"] is not None:
                row["pred_main"] = level_cycles(v, "L1")
            row["bottleneck"] = v.get("bottleneck", {}).get("kind") if row["modeled"] else None
            if not row["modeled"]:
                notes.append(f"{name} {tag}: a version that runs is not modeled "
                             f"({[x.get('not_modeled_reason') for x in vs if not x.get('modeled')]})")
            for level in ("L1", "L2", "RAM"):
                (ub, kb), (us, ks), (rmin, rmax) = measured[level][name]
                ratios.extend((rmin, rmax))
                diters = slope * (ub - us)
                row[level] = (kb - ks) / diters if diters > 0 else None
            for level, key, err in (("L1", "pred", "err"), ("L2", "pred_l2", "err_l2"),
                                    ("RAM", "pred_ram", "err_ram"),
                                    ("L2", "run_l2", "err_run_l2"), ("RAM", "run_ram", "err_run_ram"),
                                    ("L1", "pred_endless", "err_endless")):
                if row.get(key) is not None and row[level]:
                    row[err] = 100.0 * (row[key] - row[level]) / row[level]

    header = ["kernel", "build", "vers", "main %", "elem/it", "trip", "strided", "bottleneck",
              "main L1",
              "pred L1", "meas L1", "err %", "pred L2", "meas L2", "L2 err %", "pred RAM",
              "meas RAM", "RAM err %", "run L2", "run L2 err %", "run RAM", "run RAM err %"]
    table = []
    for r in rows:
        share = r.get("main_share")
        table.append([r["kernel"], r["build"], str(r["versions"]),
                      "-" if share is None else f"{100 * share:.0f}", fmt(r.get("elements")),
                      str(r["trip"]) if r.get("trip") else "-",
                      "-" if "static_strides" not in r else "yes" if r["static_strides"] else "no",
                      r.get("bottleneck") or "-", fmt(r.get("pred_main")), fmt(r.get("pred")),
                      fmt(r.get("L1")), fmt(r.get("err"), 1),
                      fmt(r.get("pred_l2")), fmt(r.get("L2")), fmt(r.get("err_l2"), 1),
                      fmt(r.get("pred_ram")), fmt(r.get("RAM")), fmt(r.get("err_ram"), 1),
                      fmt(r.get("run_l2")), fmt(r.get("err_run_l2"), 1),
                      fmt(r.get("run_ram")), fmt(r.get("err_run_ram"), 1)])
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    print("core cycles per iteration of the main binary loop (the version that runs the most "
          "iterations; main % = its share of the iterations, elem/it = source iterations per "
          "iteration; trip = its iterations per entry, given to weft loops --trip-count when it is nested "
          "in another loop; strided: every access of the running versions has a static stride); main L1 = weft loops' cycles for it, pred L1 = every version's prediction "
          "weighted by its iterations per main iteration, err = (pred L1 - meas L1) / meas L1")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for t in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(t, widths)) + " |")

    def summary(label, subset, key="err", within_pct=10):
        errs = [abs(r[key]) for r in subset if r.get(key) is not None]
        if not errs:
            return
        worst = max((r for r in subset if r.get(key) is not None), key=lambda r: abs(r[key]))
        within = sum(e <= within_pct for e in errs)
        print(f"{label:<24} mean |err| {sum(errs) / len(errs):6.1f}%   "
              f"median {sorted(errs)[len(errs) // 2]:6.1f}%   worst {abs(worst[key]):6.1f}% "
              f"({worst['kernel']} {worst['build']})   within {within_pct}%: {within}/{len(errs)}")

    print()
    for tag, _ in builds:
        summary(f"L1 {tag}", [r for r in rows if r["build"] == tag])
    summary("L1 all", rows)
    summary("L1 all, no trip counts", rows, "err_endless")
    summary("L2 all", rows, "err_l2")
    summary("RAM all", rows, "err_ram", 20)
    static = [r for r in rows if r.get("static_strides")]
    summary(f"L2, strided ({len(static)})", static, "err_l2")
    summary(f"RAM, strided ({len(static)})", static, "err_ram", 20)
    summary("L2 all, with the run", rows, "err_run_l2")
    summary("RAM all, with the run", rows, "err_run_ram", 20)
    print(f"TSC ticks per core cycle measured during the timings: {min(ratios):.4f} to "
          f"{max(ratios):.4f} (the core's clock moved by {100 * (max(ratios) / min(ratios) - 1):.0f}%;"
          " each timing is converted with the ratio measured just before it)")
    for n in notes:
        print("note:", n)
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
