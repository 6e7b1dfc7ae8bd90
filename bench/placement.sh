#!/usr/bin/env bash
# The modeled payoff of thread placement (issue 21): records each benchmark
# program at 8 threads, and every example at its own default thread count,
# with `weft record --analyses comm,pages` (small inputs: only the
# communication graph and the page usage matter), then maps it with every
# `weft place` algorithm onto three synthetic machines and prints one table:
# the hop-bytes reduction of each algorithm against scatter and against the
# expected unpinned run, where the chosen (hierarchical) mapping keeps the
# volume, and the data placement under it (the share of page accesses from
# another node than the page's first writer, now and with each page on the
# node that uses it most; the data objects found misplaced). Models only: no wall time (this 2-core machine has one cache
# domain; docs/performance.md). Uses the existing build/ (run
# scripts/build.sh or bench/run.sh first).
#
#   bench/placement.sh [--programs REGEX] [--threads T]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/bench/placement
WEFT=$ROOT/build/bin/weft
REGEX=.
THREADS=8
while (($#)); do
  case $1 in
    --programs) REGEX=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    *) echo "usage: bench/placement.sh [--programs REGEX] [--threads T]" >&2; exit 2 ;;
  esac
done
[[ -x $WEFT ]] || { echo "bench/placement.sh: build weft first ($WEFT is missing)" >&2; exit 2; }
mkdir -p "$OUT"

# program source | arguments ({T}: the thread count); the small inputs of bench/run.sh.
PROGRAMS=(
  "examples/stencil_pthreads.c|{T} 256 1024 40"
  "examples/ring_pthreads.c|{T} 8192 160"
  "examples/alltoall_pthreads.c|{T} 8192 160"
  "examples/moments_unblocked_pthreads.c|{T} 65536 8 3"
  "bench/kernels/stencil2d_pthreads.c|{T} 512 100"
  "bench/kernels/stencil3d_omp.c|{T} 96 15"
  "bench/kernels/reduction_omp.c|{T} 1048576 16"
  "bench/kernels/producer_consumer_pthreads.c|{T} 45000 64"
  "bench/kernels/streamcluster_gain_omp.c|{T} 40000 32 8 12"
  "bench/kernels/cg_spmv_omp.c|{T} 24 40"
)
# Every example, with its default arguments and thread count (those above
# with a thread argument already run at 8 threads).
for src in "$ROOT"/examples/*.c "$ROOT"/examples/*.cpp; do
  name=$(basename "${src%.*}")
  case $name in
    stencil_pthreads | ring_pthreads | alltoall_pthreads | moments_unblocked_pthreads) continue ;;
    lu_blocks_pthreads) PROGRAMS+=("examples/$name.c|contiguous") ;;
    water_forces_pthreads) PROGRAMS+=("examples/$name.c|nsquared") ;;
    *) PROGRAMS+=("examples/${src##*/}|") ;;
  esac
done
# name | hwloc synthetic description
MACHINES=(
  "1 socket SMT|pack:1 l3:1 core:8 pu:2"
  "2 sockets|pack:2 numa:1 l3:1 core:4 pu:1"
  "4 NUMA nodes|pack:2 numa:2 l3:1 core:2 pu:1"
)

rows=$OUT/rows.tsv
: >"$rows"
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r src args <<<"$entry"
  name=$(basename "${src%.*}")
  [[ $name =~ $REGEX ]] || continue
  flags=(-O2 -g -pthread)
  [[ $name == *_omp ]] && flags+=(-fopenmp)
  bin=$OUT/$name.weft
  compiler=$ROOT/build/bin/weft-cc
  [[ $src == *.cpp ]] && compiler=$ROOT/build/bin/weft-c++
  "$compiler" "${flags[@]}" -o "$bin" "$ROOT/$src" 2>"$OUT/build.log" ||
    { echo "bench/placement.sh: build failed: $src" >&2; continue; }
  read -r -a argv <<<"${args//\{T\}/$THREADS}"
  label=$name/$THREADS
  [[ $args == *'{T}'* ]] || label=$name
  "$WEFT" record --analyses comm,pages -o "$OUT/$name.db" -- "$bin" "${argv[@]}" >/dev/null 2>"$OUT/record.log" ||
    { echo "bench/placement.sh: record failed: $name ($(tail -1 "$OUT/record.log"))" >&2; continue; }
  for machine in "${MACHINES[@]}"; do
    IFS='|' read -r machine_label spec <<<"$machine"
    "$WEFT" place --print --format json --profile "$OUT/$name.db" --synthetic "$spec" >"$OUT/place.json"
    python3 - "$label" "$machine_label" "$OUT/place.json" >>"$rows" <<'PY'
import json, sys
name, label, path = sys.argv[1:4]
p = json.load(open(path))
by = {m["algorithm"]: m for m in p["mappings"]}
def pct(x): return f"{100 * x:.0f}%"
cells = [name, label, f"{p['volume']:.0f}"]
for a in ("hierarchical", "greedy", "packed"):
    cells += [pct(by[a]["reduction_vs_scatter"]), pct(by[a]["reduction_vs_unpinned"])]
h = by["hierarchical"]
vol = p["volume"] or 1
inside = sum(h["traffic"][l] for l in ("pu", "core", "l2", "l3")) / vol
cells += [pct(inside), pct(h["traffic"]["numa"] / vol + h["traffic"]["package"] / vol), pct(h["traffic"]["machine"] / vol)]
d = p["data_placement"]
if d["numa_nodes"] < 2 or not d["accesses"]:
    cells += ["-", "-", "-"]
else:
    cells += [pct(d["remote"] / d["accesses"]), pct(d["remote_if_placed"] / d["accesses"]), str(len(d["items"]))]
print("\t".join(cells))
PY
  done
done

printf '%-38s %-13s %10s  %-15s %-15s %-15s  %-24s %-18s\n' program machine volume \
  "hier vs sc/os" "greedy sc/os" "packed sc/os" "hier: cache/node/machine" "data: remote/placed/objects"
while IFS=$'\t' read -r name label volume hs ho gs go ps po c n m dr dp di; do
  printf '%-38s %-13s %10s  %-15s %-15s %-15s  %-24s %-18s\n' "$name" "$label" "$volume" \
    "$hs / $ho" "$gs / $go" "$ps / $po" "$c / $n / $m" "$dr / $dp / $di"
done <"$rows"
echo "(sc: hop-bytes fewer than scatter's; os: than the expected unpinned run's;"
echo " cache: the share of the volume between threads that share a cache or a core;"
echo " node: share a NUMA node or package but no cache; machine: nothing;"
echo " data: page accesses from another node than the page's first writer, now / with each"
echo " page on its main users' node, and the data objects weft place reports; - on one node)"
