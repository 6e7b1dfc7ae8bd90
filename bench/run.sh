#!/usr/bin/env bash
# weft's benchmark: builds weft and the benchmark programs, runs every
# program in every mode (median of REPEAT runs, default 3) and prints one
# table: wall time, slowdown against the native run of the same program in
# this same run, peak RSS and its ratio to native.
#
#   bench/run.sh [--repeat N] [--only MODE,MODE] [--quick]
#
# Modes
#   native          the plain build (gcc -O2 -g), no tool
#   weft-comm       weft-cc build under `weft record --analyses comm`
#   weft-imbalance  weft-cc build under `weft record --analyses comm,imbalance`
#   weft-falseshare weft-cc build under `weft record --analyses comm,falseshare`
#   weft-traces     weft-cc build under `weft record --analyses comm,traces`
#   weft-all        weft-cc build under `weft record` (every analyzer)
#   weft-vg-comm    the plain build under `weft record --backend valgrind --analyses comm`
#   weft-valgrind   the plain build under `weft record --backend valgrind`
#   vg-none         the plain build under `valgrind --tool=none`
#   vg-lackey       the plain build under `valgrind --tool=lackey --trace-mem=yes`
# The last column of a valgrind-backend row is its cost against vg-none.
# lackey runs a smaller input; its row's ratios are against native-small.
# Not part of the test suite: timings belong here, not in tests.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPEAT=3
ONLY=""
QUICK=0
while (($#)); do
  case "$1" in
    --repeat) REPEAT=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --quick) QUICK=1; REPEAT=1; shift ;;
    *) echo "usage: bench/run.sh [--repeat N] [--only MODES] [--quick]" >&2; exit 2 ;;
  esac
done

scripts/setup.sh >/dev/null
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)" --target weft weft_rt weft_valgrind_tool weft_valgrind_preload \
  weft_bench_imbalance weft_bench_traces weft_bench_hot_paths >/dev/null

OUT=$ROOT/build/bench
mkdir -p "$OUT"
WEFT=$ROOT/build/bin/weft

# program source | arguments (sized so native runs take 0.2-0.3 s here) |
# arguments for lackey, which is 1000x slower: it runs a 1/50 input, and its
# slowdown is against a native run of that same input (native-small).
# --quick shrinks everything for a smoke run.
PROGRAMS=(
  "examples/stencil_pthreads.c|4 256 1024 1000|4 256 1024 20"
  "examples/ring_pthreads.c|4 8192 2000|4 8192 40"
  "examples/alltoall_pthreads.c|4 8192 2000|4 8192 40"
  "examples/moments_unblocked_pthreads.c|4 65536 8 30|4 65536 8 1"
  "examples/ring_threads.cpp|4 8192 2000|4 8192 40"
)
if ((QUICK)); then
  PROGRAMS=("examples/ring_pthreads.c|4 1024 20|4 1024 2" "examples/stencil_omp.c|4|4")
fi
MODES=(native weft-comm weft-imbalance weft-falseshare weft-traces weft-all vg-none weft-vg-comm weft-valgrind vg-lackey)
[[ -n $ONLY ]] && IFS=, read -r -a MODES <<<"native,$ONLY"

build_program() {  # source -> sets PLAIN and INSTR
  local src=$1 name ext flags cc wrapper
  name=$(basename "${src%.*}")
  ext=${src##*.}
  flags=(-O2 -g -pthread)
  [[ $name == *_omp ]] && flags+=(-fopenmp)
  if [[ $ext == cpp ]]; then cc=g++; wrapper=$ROOT/build/bin/weft-c++; flags+=(-std=c++20)
  else cc=gcc; wrapper=$ROOT/build/bin/weft-cc; fi
  PLAIN=$OUT/$name.plain
  INSTR=$OUT/$name.weft
  "$cc" "${flags[@]}" -o "$PLAIN" "$src"
  "$wrapper" "${flags[@]}" -o "$INSTR" "$src"
}

# Runs a command REPEAT times (lackey, ~100x slower, once); prints
# "median_seconds peak_rss_kb".
measure() {
  local times=() rss=0 i t m runs=$REPEAT
  [[ $* == *--tool=lackey* ]] && runs=1
  for ((i = 0; i < runs; i++)); do
    local start end
    start=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$OUT/time" "$@" >/dev/null 2>"$OUT/stderr" || {
      echo "bench: failed: $* ($(tail -1 "$OUT/stderr"))" >&2; echo "nan 0"; return; }
    end=$(date +%s%N)
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
    m=$(tail -1 "$OUT/time")
    times+=("$t")
    ((m > rss)) && rss=$m
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v rss="$rss" '{a[NR]=$1} END {print a[int((NR+1)/2)], rss}'
}

run_mode() {  # mode args...
  local mode=$1; shift
  case $mode in
    native) measure "$PLAIN" "$@" ;;
    weft-comm) measure "$WEFT" record --analyses comm -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-imbalance) measure "$WEFT" record --analyses comm,imbalance -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-falseshare) measure "$WEFT" record --analyses comm,falseshare -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-traces) measure "$WEFT" record --analyses comm,traces -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-all) measure "$WEFT" record -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-vg-comm) measure "$WEFT" record --backend valgrind --analyses comm -o "$OUT/p.db" -- "$PLAIN" "$@" ;;
    weft-valgrind) measure "$WEFT" record --backend valgrind -o "$OUT/p.db" -- "$PLAIN" "$@" ;;
    vg-none) measure valgrind -q --tool=none "$PLAIN" "$@" ;;
    native-small) measure "$PLAIN" "$@" ;;
    vg-lackey) measure valgrind -q --tool=lackey --trace-mem=yes --log-file=/dev/null "$PLAIN" "$@" ;;
  esac
}

print_row() {  # program mode t native_t rss native_rss vs_none
  awk -v p="$1" -v mo="$2" -v t="$3" -v nt="$4" -v m="$5" -v nm="$6" -v vs="$7" \
    'BEGIN { printf "%-28s %-14s %9.3f %9.1f %9.1f %9.1f %9s\n", p, mo, t, (nt > 0 ? t / nt : 0), m / 1024, (nm > 0 ? m / nm : 0), vs }'
}

echo "# weft bench: $(nproc) cores, $(uname -m), $(gcc --version | head -1), $(valgrind --version), median of $REPEAT (lackey: 1 run)"
printf '%-28s %-14s %9s %9s %9s %9s %9s\n' program mode wall_s slowdown rss_MB rss_ratio vs_none
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r src big small <<<"$entry"
  build_program "$src"
  name=$(basename "${src%.*}")
  native_t="" native_m="" none_t=""
  for mode in "${MODES[@]}"; do
    read -r -a args <<<"$big"
    if [[ $mode == vg-lackey ]]; then
      # lackey's reference: native on the same small input
      read -r -a args <<<"$small"
      read -r native_t native_m < <(run_mode native-small "${args[@]}")
      print_row "$name" "native-small" "$native_t" "$native_t" "$native_m" "$native_m" "-"
    fi
    read -r t m < <(run_mode "$mode" "${args[@]}")
    [[ $mode == native ]] && { native_t=$t; native_m=$m; }
    [[ $mode == vg-none ]] && none_t=$t
    vs="-"
    if [[ $mode == weft-vg* && -n $none_t ]]; then
      vs=$(awk -v a="$t" -v b="$none_t" 'BEGIN { printf (b > 0 ? "%.2f" : "-"), a / b }')
    fi
    print_row "$name" "$mode" "$t" "$native_t" "$m" "$native_m" "$vs"
  done
done

# The imbalance diagnosis alone (Google Benchmark): one section instance of
# 64 threads and 10,000 events, LIME's reference size (5.0 s in the paper).
echo
echo "# imbalance analysis: 64 threads x 10,000 events (Google Benchmark, median of 5)"
build/bin/weft_bench_imbalance --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E "^Benchmark|_median"

# Trace compression (nested loop recognition): encoded size, ratio against 8
# bytes per address, and the recorder's cost per access, per kernel.
echo
echo "# trace compression per kernel (Google Benchmark, median of 3)"
build/bin/weft_bench_traces --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E "^Benchmark|_median"

# The analyzers' per-access hot paths, ns per event (Google Benchmark).
echo
echo "# hot paths, ns per event (Google Benchmark, median of 3)"
build/bin/weft_bench_hot_paths --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  2>/dev/null | grep -E "^Benchmark|_median"
