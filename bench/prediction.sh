#!/usr/bin/env bash
# Remote reuse-distance prediction on the six kernels of the paper's Table 1
# (Vormwald et al.; issue 23): records every kernel at several problem sizes
# and thread counts with `weft record --analyses reuse --exact
# --problem-size N`, predicts every reference run from every valid pair of
# training runs with `weft predict TEST TRAIN --against REF --format json`,
# and prints one table of the minimum and average accuracy and coverage per
# kernel: problem-size scaling (fixed threads), thread scaling without
# thread grouping (`--no-grouping`) and with it, beside the paper's Tables
# 2-4 (bench/prediction/summary.py; bench/README.md, "Reuse-distance
# prediction").
#
#   bench/prediction.sh [--kernels REGEX] [--quick] [--markdown] [--reuse-profiles]
#                       [--analyses LIST] [--predict-command CMD] [--sample-granules N]
#                       [--no-build]
#
# --kernels REGEX   only the kernels whose label matches (labels: matmul,
#                   jacobi, lu8, lu16, lu32, stencil2d-4p, stencil2d-8p,
#                   stencil3d-6p, stencil3d-26p, fft3d)
# --quick           two training runs and one reference per scaling kind
# --markdown        the table as Markdown (for docs/prediction.md)
# --reuse-profiles  keep the profiles of an earlier run with the same
#                   arguments instead of recording them again
# --analyses LIST   what `weft record` records (default reuse; `comm` tests
#                   the recording part on a weft without the reuse analysis)
# --predict-command CMD
#                   run CMD TEST TRAIN --against REF --format json
#                   [--no-grouping] instead of `weft predict` (tests of the
#                   aggregation)
# --sample-granules N
#                   after the table, each kernel's largest problem-size run
#                   is recorded again sampled, with --reuse-sample-granules N
#                   (default 1024: at these sizes no thread reaches the
#                   default budget of 65,536 granules, so sampling would not
#                   start), and bench/prediction/sampling_error.py compares
#                   it with the exact run; 0 skips this
# --no-build        use build/ as it is (default: build weft and weft_rt)
#
# Everything goes to build/bench/prediction/: runs/ANALYSES/ (profiles and
# record logs), predictions/ (one JSON per prediction), predictions.tsv (the
# list summary.py reads).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/bench/prediction
WEFT=$ROOT/build/bin/weft
USAGE="usage: bench/prediction.sh [--kernels REGEX] [--quick] [--markdown] [--reuse-profiles] [--analyses LIST] [--predict-command CMD] [--sample-granules N] [--no-build]"
REGEX=.
QUICK=0
MARKDOWN=0
REUSE=0
ANALYSES=reuse
PREDICT=""
BUILD=1
SAMPLE_GRANULES=1024
while (($#)); do
  case $1 in
    --kernels | --analyses | --predict-command | --sample-granules)
      (($# >= 2)) || { echo "$USAGE" >&2; exit 2; } ;;&
    --kernels) REGEX=$2; shift 2 ;;
    --analyses) ANALYSES=$2; shift 2 ;;
    --predict-command) PREDICT=$2; shift 2 ;;
    --sample-granules) SAMPLE_GRANULES=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --markdown) MARKDOWN=1; shift ;;
    --reuse-profiles) REUSE=1; shift ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) echo "$USAGE"; exit 0 ;;
    *) echo "$USAGE" >&2; exit 2 ;;
  esac
done
[[ $SAMPLE_GRANULES =~ ^[0-9]+$ ]] || { echo "bench/prediction.sh: --sample-granules wants a number" >&2; exit 2; }
START=$(date +%s)
cd "$ROOT"
if ((BUILD)); then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  nice cmake --build build -j"$(nproc)" --target weft weft_rt >/dev/null
fi
[[ -x $WEFT ]] || { echo "bench/prediction.sh: $WEFT is missing (build weft first)" >&2; exit 2; }
if [[ -z $PREDICT ]]; then
  PREDICT="$WEFT predict"
  # A weft without `predict --against` (issue 23 not landed yet) still
  # records; every prediction then counts as failed.
  "$WEFT" predict --help 2>&1 | grep -q -e '--against' ||
    echo "bench/prediction.sh: note: this weft has no 'predict --against'; the predictions will fail" >&2
fi
read -r -a PREDICT_CMD <<<"$PREDICT"

# What this weft's `record` knows: --problem-size and --exact came with the
# reuse analysis; without them the runs are recorded without (and the
# predictions then have no sizes to fit against), and the bench says so.
RECORD_HELP=$("$WEFT" record --help 2>&1 || true)
RECORD_FLAGS=(--analyses "$ANALYSES")
if grep -q -e '--exact' <<<"$RECORD_HELP"; then RECORD_FLAGS+=(--exact); else
  echo "bench/prediction.sh: note: weft record has no --exact; recording without it" >&2
fi
# The sampled-vs-exact comparison needs the reuse analysis' budget option.
if ((SAMPLE_GRANULES)) && { [[ ,$ANALYSES, != *,reuse,* ]] ||
  ! grep -q -e '--reuse-sample-granules' <<<"$RECORD_HELP"; }; then
  SAMPLE_GRANULES=0
fi
HAVE_PROBLEM_SIZE=0
grep -q -e '--problem-size' <<<"$RECORD_HELP" && HAVE_PROBLEM_SIZE=1
((HAVE_PROBLEM_SIZE)) ||
  echo "bench/prediction.sh: note: weft record has no --problem-size; recording without it" >&2

# label | source (examples/) | variant argument | size scaling: threads |
# sizes (ascending) | thread scaling: THREADS:SIZE runs (ascending threads) |
# training entries (the first K of each list; the others are references).
# The size is the program's first argument and what --problem-size records:
# the per-thread order N (matmul, stencils, FFT: an N x N or N^3 block per
# thread) or the global order N (Jacobi, LU). Thread scaling keeps the
# per-thread order fixed (matmul, stencils, FFT); Jacobi runs N = 8T (two
# 4-row blocks per thread: the thread's data grows with N, its halo rows are
# N long); LU runs N = B sqrt(T), one block per thread, so that the owners
# of the blocks form a sqrt(T) x sqrt(T) grid (block (I, J) is thread
# I sqrt(T) + J) and each thread keeps B x B elements. Problem-size scaling
# of LU 32x32 starts at N = 96 (at 64, 9 threads would share 4 blocks). The
# FFT needs powers of two (and T <= N^2). The 3-D stencils' sizes make a
# row (N + 2 doubles with its halo) whole granules: at other sizes a row's
# granules, and so the distances, follow a staircase of N no size model
# reproduces from two runs. Thread scaling of the 2-D kernels starts at 9
# threads and of the 3-D stencils at 27 (the paper's Table 1 minimums): a
# 2 x 2 or 2 x 2 x 2 grid has corners only, so the edges, faces and
# interiors of larger grids have no training thread. Chosen so that the
# whole table takes under 15 minutes on the 2-core development machine
# (bench/README.md).
KERNELS=(
  "matmul|matmul_blocks_pthreads||16|8 16 24 32 48|4:8 9:8 16:8 25:8 36:8 49:8 64:8|3"
  "jacobi|jacobi_cyclic_pthreads||8|32 64 96 128 192 256|4:32 8:64 16:128 24:192 32:256 48:384 64:512|3"
  "lu8|lu_cyclic_pthreads|8|9|64 96 128 160 192|9:24 16:32 25:40 36:48 49:56 64:64|3"
  "lu16|lu_cyclic_pthreads|16|9|64 96 128 160 192|9:48 16:64 25:80 36:96 49:112 64:128|3"
  "lu32|lu_cyclic_pthreads|32|9|96 128 160 192 224|9:96 16:128 25:160 36:192|3"
  "stencil2d-4p|stencil2d_halo_pthreads|4|16|8 16 24 32 48 64|9:24 16:24 25:24 36:24 49:24 64:24|3"
  "stencil2d-8p|stencil2d_halo_pthreads|8|16|8 16 24 32 48 64|9:24 16:24 25:24 36:24 49:24 64:24|3"
  "stencil3d-6p|stencil3d_halo_pthreads|6|27|6 14 22 30 38|27:6 64:6 125:6 216:6|3"
  "stencil3d-26p|stencil3d_halo_pthreads|26|27|6 14 22 30 38|27:6 64:6 125:6 216:6|3"
  "fft3d|fft3d_transpose_pthreads||4|2 4 8 16|4:8 8:8 16:8 32:8 64:8|3"
)

mkdir -p "$OUT/bin" "$OUT/runs/$ANALYSES" "$OUT/predictions"
rm -f "$OUT"/predictions/*.json "$OUT"/predictions/*.err
LIST=$OUT/predictions.tsv # kernel kind test train reference status json
: >"$LIST"
SAMPLING=$OUT/sampling.tsv # sampling_error.py's lines
: >"$SAMPLING"

# The instrumented build of a kernel: as examples/CMakeLists.txt builds
# NAME.gcc.O1 (weft-cc over gcc, -O1), into $OUT/bin.
build_kernel() {
  local name=$1 bin=$OUT/bin/$1.gcc.O1
  # Rebuilt when the runtime changes too: the program links weft's hooks
  # statically (libweft-hooks.a), and a program built against an older
  # runtime's thread state fails at exit under a newer one.
  local lib=$ROOT/build/lib
  if [[ ! -x $bin || $ROOT/examples/$name.c -nt $bin || $ROOT/build/bin/weft-cc -nt $bin ||
    $lib/libweft-hooks.a -nt $bin || $lib/libweft-rt.so -nt $bin ]]; then
    WEFT_CC=gcc "$ROOT/build/bin/weft-cc" -O1 -Wall -Wextra -pthread -std=gnu11 \
      -I"$ROOT/include" -o "$bin" "$ROOT/examples/$name.c" 2>"$OUT/bin/$name.log" ||
      { echo "bench/prediction.sh: build failed: examples/$name.c (see $OUT/bin/$name.log)" >&2; return 1; }
  fi
  echo "$bin"
}

# record LABEL BIN VARIANT THREADS SIZE: the profile's path on stdout, or
# nothing if the run failed.
record() {
  local label=$1 bin=$2 variant=$3 threads=$4 size=$5
  local profile=$OUT/runs/$ANALYSES/$label.t$threads.n$size.weft
  if ((REUSE)) && [[ -s $profile ]]; then echo "$profile"; return; fi
  local flags=("${RECORD_FLAGS[@]}")
  ((HAVE_PROBLEM_SIZE)) && flags+=(--problem-size "$size")
  local args=("$size" "$threads")
  [[ -n $variant ]] && args+=("$variant")
  rm -f "$profile"
  if "$WEFT" record "${flags[@]}" -o "$profile" -- "$bin" "${args[@]}" \
    >"$profile.log" 2>&1; then
    echo "$profile"
  else
    echo "bench/prediction.sh: record failed: $label T=$threads N=$size ($(tail -1 "$profile.log"))" >&2
  fi
}

# sampled LABEL BIN VARIANT THREADS SIZE EXACT_PROFILE: the same run recorded
# sampled, compared with the exact one (a line of $SAMPLING).
sampled() {
  local label=$1 bin=$2 variant=$3 threads=$4 size=$5 exact=$6
  local profile=$OUT/runs/$ANALYSES/$label.t$threads.n$size.sampled$SAMPLE_GRANULES.weft
  local args=("$size" "$threads")
  [[ -n $variant ]] && args+=("$variant")
  if ! ((REUSE)) || [[ ! -s $profile ]]; then
    rm -f "$profile"
    "$WEFT" record --analyses "$ANALYSES" --reuse-sample-granules "$SAMPLE_GRANULES" \
      --problem-size "$size" -o "$profile" -- "$bin" "${args[@]}" >"$profile.log" 2>&1 ||
      { echo "bench/prediction.sh: sampled record failed: $label T=$threads N=$size" >&2; return; }
  fi
  python3 "$ROOT/bench/prediction/sampling_error.py" "$exact" "$profile" \
    --label "$label/T=$threads/N=$size" >>"$SAMPLING" ||
    echo "bench/prediction.sh: sampling_error.py failed on $label" >&2
}

# predict KERNEL KIND TEST TRAIN REF [--no-grouping]: one line of $LIST.
predict() {
  local kernel=$1 kind=$2 test=$3 train=$4 ref=$5
  shift 5
  local json
  json=$OUT/predictions/$kernel.$kind.$(basename "$test" .weft).$(basename "$train" .weft).$(basename "$ref" .weft).json
  local status=ok
  "${PREDICT_CMD[@]}" "$test" "$train" --against "$ref" --format json "$@" >"$json" 2>"$json.err" ||
    status=failed
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kernel" "$kind" "$(basename "$test")" \
    "$(basename "$train")" "$(basename "$ref")" "$status" "$json" >>"$LIST"
}

# triples KIND KERNEL NTRAIN PROFILE...: every (test, train, reference) with
# test before train among the first NTRAIN profiles and the reference after
# train (the lists are in ascending order). --quick: the first two training
# runs and the first reference after them.
triples() {
  local kind=$1 kernel=$2 ntrain=$3
  shift 3
  local runs=("$@") n=$# a b c
  ((QUICK)) && ntrain=2
  for ((a = 0; a < ntrain && a < n; a++)); do
    for ((b = a + 1; b < ntrain && b < n; b++)); do
      for ((c = b + 1; c < n; c++)); do
        ((QUICK)) && ((c > ntrain)) && break
        [[ -n ${runs[a]} && -n ${runs[b]} && -n ${runs[c]} ]] || continue
        if [[ $kind == size ]]; then
          predict "$kernel" size "${runs[a]}" "${runs[b]}" "${runs[c]}"
        else
          predict "$kernel" threads-nogroup "${runs[a]}" "${runs[b]}" "${runs[c]}" --no-grouping
          predict "$kernel" threads-group "${runs[a]}" "${runs[b]}" "${runs[c]}"
        fi
      done
    done
  done
}

RECORD_SECONDS=0
PREDICT_SECONDS=0
matched=0
for entry in "${KERNELS[@]}"; do
  IFS='|' read -r label name variant size_threads sizes thread_runs ntrain <<<"$entry"
  [[ $label =~ $REGEX ]] || continue
  matched=1
  bin=$(build_kernel "$name") || continue
  read -r -a size_list <<<"$sizes"
  read -r -a thread_list <<<"$thread_runs"
  if ((QUICK)); then
    size_list=("${size_list[@]:0:3}")
    thread_list=("${thread_list[@]:0:3}")
  fi
  t0=$(date +%s)
  size_profiles=()
  for n in "${size_list[@]}"; do
    size_profiles+=("$(record "$label" "$bin" "$variant" "$size_threads" "$n")")
  done
  thread_profiles=()
  for tn in "${thread_list[@]}"; do
    thread_profiles+=("$(record "$label" "$bin" "$variant" "${tn%%:*}" "${tn##*:}")")
  done
  last=$((${#size_list[@]} - 1))
  if ((SAMPLE_GRANULES)) && [[ -n ${size_profiles[last]} ]]; then
    sampled "$label" "$bin" "$variant" "$size_threads" "${size_list[last]}" "${size_profiles[last]}"
  fi
  t1=$(date +%s)
  triples size "$label" "$ntrain" "${size_profiles[@]}"
  triples threads "$label" "$ntrain" "${thread_profiles[@]}"
  t2=$(date +%s)
  RECORD_SECONDS=$((RECORD_SECONDS + t1 - t0))
  PREDICT_SECONDS=$((PREDICT_SECONDS + t2 - t1))
  echo "bench/prediction.sh: $label: recorded $((${#size_list[@]} + ${#thread_list[@]})) runs in $((t1 - t0)) s," \
    "$(grep -c "^$label	" "$LIST") predictions in $((t2 - t1)) s" >&2
done
((matched)) || { echo "bench/prediction.sh: no kernel matches --kernels '$REGEX'" >&2; exit 2; }

summary=(python3 "$ROOT/bench/prediction/summary.py" "$LIST")
((MARKDOWN)) && summary+=(--markdown)
"${summary[@]}"
if [[ -s $SAMPLING ]]; then
  echo
  echo "# sampled (--reuse-sample-granules $SAMPLE_GRANULES) against exact, each kernel's largest problem-size run:"
  echo "# shift: the sampling rate's shift (0: nothing sampled); errors in % (bins: percentage points)"
  { printf 'run\tshift\taccesses\tmean\tbins_pp\tinstr_mean\tremote_mean\n'; cat "$SAMPLING"; } |
    column -t -s $'\t'
fi
END=$(date +%s)
recorded="weft record ${RECORD_FLAGS[*]}"
((HAVE_PROBLEM_SIZE)) && recorded+=" --problem-size N"
echo "# $(nproc) cores; recording ${RECORD_SECONDS} s, predictions ${PREDICT_SECONDS} s," \
  "total $((END - START)) s ($recorded)"
((END - START <= 900)) || echo "# over the 15-minute budget: shrink the sizes in KERNELS" >&2
