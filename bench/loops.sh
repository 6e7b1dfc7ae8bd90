#!/usr/bin/env bash
# The accuracy of `weft loops`' static cycles per iteration (issue 22):
# builds the kernels of bench/loops/kernels.c with gcc -O2, gcc -O3
# -march=x86-64-v3, clang -O2 and clang -O3 -march=x86-64-v3 (-g -gdwarf-4
# -fno-math-errno -no-pie), then for every kernel and build compares `weft loops --line
# kernels.c:LINE --format json`'s cycles per iteration in L1 with the cycles
# per iteration measured with rdtsc (bench/loops/driver.c) at L1-, L2- and
# RAM-resident sizes, and prints one table and the mean and worst L1 error
# per compiler build and overall (bench/loops/accuracy.py says how the
# iterations are counted and the TSC converted; docs/loops.md, "Accuracy",
# the results on the development machine). Uses the existing build/ (build
# the `weft` target first). Needs gcc, clang, valgrind (callgrind counts the
# binary loops' iterations).
#
#   bench/loops.sh [--cpu NAME] [--kernels REGEX] [--quick] [--reuse-timings]
#
# --cpu: the model `weft loops` uses (default: the host's, as weft names it);
# --kernels: only the kernels whose name matches; --quick: fewer repetitions;
# --reuse-timings: no timing, the predictions compared with the timings the
# last run saved (build/bench/loops/timings.json), to try a change of the
# model in a minute instead of half an hour.
set -euo pipefail
USAGE="usage: bench/loops.sh [--cpu NAME] [--kernels REGEX] [--quick] [--reuse-timings]"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/bench/loops
WEFT=$ROOT/build/bin/weft
CPU=""
ONLY=""
QUICK=()
REUSE=()
while (($#)); do
  case $1 in
    --cpu | --kernels) (($# >= 2)) || { echo "$USAGE" >&2; exit 2; } ;;&
    --cpu) CPU=$2; shift 2 ;;
    --kernels) ONLY=$2; shift 2 ;;
    --quick) QUICK=(--quick); shift ;;
    --reuse-timings) REUSE=(--reuse-timings); shift ;;
    -h | --help) echo "$USAGE"; exit 0 ;;
    *) echo "$USAGE" >&2; exit 2 ;;
  esac
done
[[ -x $WEFT ]] || { echo "bench/loops.sh: build weft first ($WEFT is missing)" >&2; exit 2; }
for tool in gcc clang valgrind python3; do
  command -v "$tool" >/dev/null || { echo "bench/loops.sh: $tool is missing" >&2; exit 2; }
done
mkdir -p "$OUT"

# name | compiler and optimisation flags
# (-march=x86-64-v3: AVX2 and FMA, what -march=native gave on the Zen 3
# machine of the first tables. Not native: on an AVX-512 machine native
# code is AVX-512, which valgrind 3.19 cannot run, and callgrind counts the
# iterations.)
BUILDS=(
  "gcc-O2|gcc -O2"
  "gcc-O3-avx2|gcc -O3 -march=x86-64-v3"
  "clang-O2|clang -O2"
  "clang-O3-avx2|clang -O3 -march=x86-64-v3"
)
SRC=$ROOT/bench/loops
binaries=()
for entry in "${BUILDS[@]}"; do
  IFS='|' read -r name flags <<<"$entry"
  read -r -a cc <<<"$flags"
  # The kernels and the driver are compiled from bench/loops so that the
  # debug info names kernels.c as `weft loops --line kernels.c:LINE` wants.
  (cd "$SRC" && "${cc[@]}" -g -gdwarf-4 -fno-math-errno -no-pie -Wall -Wextra -o "$OUT/$name" \
    kernels.c driver.c) 2>"$OUT/build.log" ||
    { echo "bench/loops.sh: build failed: $flags ($(tail -1 "$OUT/build.log"))" >&2; exit 1; }
  binaries+=("$name=$OUT/$name")
done

args=(--weft "$WEFT" --kernels "$SRC/kernels.c" --out "$OUT" "${QUICK[@]}" "${REUSE[@]}")
[[ -n $CPU ]] && args+=(--cpu "$CPU")
[[ -n $ONLY ]] && args+=(--only "$ONLY")
python3 "$SRC/accuracy.py" "${args[@]}" "${binaries[@]}"
