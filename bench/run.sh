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
#   weft-all        weft-cc build under `weft record` (every analyzer)
#   weft-valgrind   the plain build under `weft record --backend valgrind`
#   vg-none         the plain build under `valgrind --tool=none`
#   vg-lackey       the plain build under `valgrind --tool=lackey --trace-mem=yes`
# The last column of a valgrind-backend row is its cost against vg-none.
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)" --target weft weft_rt weft_valgrind_tool weft_valgrind_preload >/dev/null

OUT=$ROOT/build/bench
mkdir -p "$OUT"
WEFT=$ROOT/build/bin/weft

# program source | arguments (sized so native runs take tens of ms; lackey
# is ~100x slower). --quick shrinks them for a smoke run.
PROGRAMS=(
  "examples/stencil_pthreads.c|4 256 1024 60"
  "examples/ring_pthreads.c|4 8192 400"
  "examples/alltoall_pthreads.c|4 8192 100"
  "examples/moments_unblocked_pthreads.c|4 65536 8 4"
  "examples/stencil_omp.c|4"
  "examples/ring_threads.cpp|4 8192 400"
)
if ((QUICK)); then
  PROGRAMS=("examples/ring_pthreads.c|4 1024 20" "examples/stencil_omp.c|4")
fi
MODES=(native weft-comm weft-all vg-none weft-valgrind vg-lackey)
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

# Runs a command REPEAT times; prints "median_seconds peak_rss_kb".
measure() {
  local times=() rss=0 i t m
  for ((i = 0; i < REPEAT; i++)); do
    /usr/bin/time -f "%e %M" -o "$OUT/time" "$@" >/dev/null 2>"$OUT/stderr" || {
      echo "bench: failed: $* ($(tail -1 "$OUT/stderr"))" >&2; echo "nan 0"; return; }
    read -r t m <"$OUT/time"
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
    weft-all) measure "$WEFT" record -o "$OUT/p.db" -- "$INSTR" "$@" ;;
    weft-valgrind) measure "$WEFT" record --backend valgrind -o "$OUT/p.db" -- "$PLAIN" "$@" ;;
    vg-none) measure valgrind -q --tool=none "$PLAIN" "$@" ;;
    vg-lackey) measure valgrind -q --tool=lackey --trace-mem=yes --log-file=/dev/null "$PLAIN" "$@" ;;
  esac
}

echo "# weft bench: $(nproc) cores, $(uname -m), $(gcc --version | head -1), valgrind $(valgrind --version), median of $REPEAT"
printf '%-28s %-14s %9s %9s %9s %9s %9s\n' program mode wall_s slowdown rss_MB rss_ratio vs_none
for entry in "${PROGRAMS[@]}"; do
  src=${entry%%|*}
  read -r -a args <<<"${entry#*|}"
  build_program "$src"
  name=$(basename "${src%.*}")
  native_t="" native_m="" none_t=""
  for mode in "${MODES[@]}"; do
    read -r t m < <(run_mode "$mode" "${args[@]}")
    [[ $mode == native ]] && { native_t=$t; native_m=$m; }
    [[ $mode == vg-none ]] && none_t=$t
    vs="-"
    if [[ $mode == weft-valgrind || $mode == vg-lackey ]] && [[ -n $none_t ]]; then
      vs=$(awk -v a="$t" -v b="$none_t" 'BEGIN { printf (b > 0 ? "%.2f" : "-"), a / b }')
    fi
    awk -v p="$name" -v mo="$mode" -v t="$t" -v nt="$native_t" -v m="$m" -v nm="$native_m" -v vs="$vs" \
      'BEGIN { printf "%-28s %-14s %9.3f %9.1f %9.1f %9.1f %9s\n", p, mo, t, (nt > 0 ? t / nt : 0), m / 1024, (nm > 0 ? m / nm : 0), vs }'
  done
done
