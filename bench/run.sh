#!/usr/bin/env bash
# weft's benchmark: builds weft and the benchmark programs, runs every
# program at every thread count in every mode (median of REPEAT runs,
# default 3) and prints one table: wall time, slowdown against the native
# run of the same program in this same run, peak RSS and its ratio to
# native; then the sampled-vs-exact CRD error of every row where
# weft-default and weft-exact both ran, a summary (geometric means per mode,
# weft-comm and weft-default against tsan) and, with --baseline, the change
# of every row against a saved run.
#
#   bench/run.sh [--repeat N] [--only MODE,MODE] [--quick] [--programs REGEX]
#                [--threads T,T] [--save-baseline FILE] [--baseline FILE]
#                [--threshold P] [--timeout S] [--no-build] [--no-micro]
#
# Programs: five examples/ and the nine compute kernels of bench/kernels/,
# each at 2 and 8 threads (--threads), named NAME/T (bench/README.md).
#
# Modes (default: native empty-hooks dormant weft-comm weft-default weft-exact tsan vg-none
# weft-vg-comm weft-valgrind vg-lackey helgrind drd; the other weft-* modes
# through --only; weft-all is accepted as the old name of weft-default)
#   native          the plain build (gcc -O2 -g -pthread [-fopenmp]), no tool
#   empty-hooks     the program instrumented as weft-cc does, linked with
#                   bench/empty_hooks.c (hooks that do nothing): the floor
#   dormant         the weft-cc build run without `weft record`; its vs_none
#                   column is its time over empty-hooks' (docs/performance.md,
#                   "Dormant cost")
#   weft-comm       weft-cc build under `weft record --analyses comm`
#   weft-imbalance  weft-cc build under `weft record --analyses comm,imbalance`
#   weft-falseshare weft-cc build under `weft record --analyses comm,falseshare`
#   weft-traces     weft-cc build under `weft record --analyses comm,traces`
#   weft-crd        weft-cc build under `weft record --analyses comm,crd` (sampled)
#   weft-pages      weft-cc build under `weft record --analyses comm,pages`
#   weft-reuse      weft-cc build under `weft record --analyses comm,reuse` (sampled)
#   weft-reuse-exact  the same with --reuse-sample-granules 0 (every granule traced)
#   weft-default    weft-cc build under `weft record` (the defaults: every
#                   analyzer but pages, sampled CRD)
#   weft-exact      weft-cc build under `weft record --exact` (exact CRD;
#                   without --exact when this weft does not know it, noted)
#   tsan            the same source built with -fsanitize=thread (gcc),
#                   TSAN_OPTIONS=report_bugs=0 (OpenMP: + ignore_noninstrumented_modules=1)
#   vg-none         the plain build under `valgrind --tool=none`
#   weft-vg-comm    the plain build under `weft record --backend valgrind --analyses comm`
#   weft-valgrind   the plain build under `weft record --backend valgrind`
#   vg-lackey       the plain build under `valgrind --tool=lackey --trace-mem=yes`
#   helgrind        the plain build under `valgrind --tool=helgrind`
#   drd             the plain build under `valgrind --tool=drd`
# The last column of a valgrind-backend row is its cost against vg-none.
# The small-input modes (SMALL_MODES: vg-lackey, helgrind, drd) run once, on
# a smaller input; their rows' ratios are against a native run of that same
# input (native-small).
# A run that fails (or exceeds --timeout) prints nan and the bench goes on.
# Not part of the test suite: timings belong here, not in tests.
set -euo pipefail
USAGE="usage: bench/run.sh [--repeat N] [--only MODE,MODE] [--quick] [--programs REGEX] [--threads T,T] [--save-baseline FILE] [--baseline FILE] [--threshold P] [--timeout S] [--no-build] [--no-micro]"
REPEAT=3
ONLY=""
QUICK=0
PROGRAM_RE=""
THREAD_LIST="2,8"
SAVE_BASELINE=""
BASELINE=""
THRESHOLD=10
TIMEOUT=3600
BUILD=1
MICRO=1
while (($#)); do
  case "$1" in
    --repeat | --only | --programs | --threads | --save-baseline | --baseline | --threshold | --timeout)
      (($# >= 2)) || { echo "$USAGE" >&2; exit 2; } ;;&
    --repeat) REPEAT=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --quick) QUICK=1; REPEAT=1; shift ;;
    --programs) PROGRAM_RE=$2; shift 2 ;;
    --threads) THREAD_LIST=$2; shift 2 ;;
    --save-baseline) SAVE_BASELINE=$(realpath -m -- "$2"); shift 2 ;;
    --baseline) BASELINE=$(realpath -m -- "$2"); shift 2 ;;
    --threshold) THRESHOLD=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --no-micro) MICRO=0; shift ;;
    -h | --help) echo "$USAGE"; exit 0 ;;
    *) echo "$USAGE" >&2; exit 2 ;;
  esac
done
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || { echo "bench: --repeat wants a positive integer" >&2; exit 2; }
[[ $THRESHOLD =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "bench: --threshold wants a percentage" >&2; exit 2; }
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || { echo "bench: --timeout wants seconds" >&2; exit 2; }
[[ $THREAD_LIST =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "bench: --threads wants T,T,..." >&2; exit 2; }
IFS=, read -r -a THREADS <<<"$THREAD_LIST"
if [[ -n $BASELINE && ! -r $BASELINE ]]; then echo "bench: cannot read baseline $BASELINE" >&2; exit 2; fi

cd "$(dirname "$0")/.."
ROOT=$PWD

if ((BUILD)); then
  scripts/setup.sh >/dev/null
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_BUILD_TESTS=ON >/dev/null
  cmake --build build -j"$(nproc)" --target weft weft_rt weft_valgrind_tool weft_valgrind_preload \
    weft_bench_imbalance weft_bench_traces weft_bench_hot_paths weft_crd_sampling_error >/dev/null
fi

OUT=$ROOT/build/bench
mkdir -p "$OUT"
WEFT=$ROOT/build/bin/weft

# program source | arguments | arguments for the small-input modes.
# {T} stands for the thread count (each program runs once per --threads
# entry, default 2 and 8, and is named NAME/T in the table). The arguments
# are sized so that the native run takes about 0.2-1 s here at both thread
# counts (the low end, to keep the slow modes short); the kernels (bench/kernels/) divide a fixed total work among the
# threads, the examples give every thread the same work (so T=8 does 4x the
# work of T=2). The small input is 1/20-1/50 of the work: lackey, helgrind
# and drd are 100-1000x slower than native, and their slowdown is against a
# native run of that same input (native-small).
# --quick shrinks everything for a smoke run.
PROGRAMS=(
  "examples/stencil_pthreads.c|{T} 256 1024 2000|{T} 256 1024 40"
  "examples/ring_pthreads.c|{T} 8192 3000|{T} 8192 160"
  "examples/alltoall_pthreads.c|{T} 8192 3000|{T} 8192 160"
  "examples/moments_unblocked_pthreads.c|{T} 65536 8 150|{T} 65536 8 3"
  "examples/ring_threads.cpp|{T} 8192 3000|{T} 8192 160"
  "bench/kernels/stencil2d_pthreads.c|{T} 2048 120|{T} 512 100"
  "bench/kernels/stencil3d_omp.c|{T} 192 40|{T} 96 15"
  "bench/kernels/matmul_blocked_omp.c|{T} 1024|{T} 384"
  "bench/kernels/reduction_omp.c|{T} 4194304 160|{T} 1048576 16"
  "bench/kernels/pointer_chase_pthreads.c|{T} 262144 3000000|{T} 65536 200000"
  "bench/kernels/producer_consumer_pthreads.c|{T} 750000 64|{T} 45000 64"
  "bench/kernels/streamcluster_gain_omp.c|{T} 200000 32 20 60|{T} 40000 32 8 12"
  "bench/kernels/cg_spmv_omp.c|{T} 64 50|{T} 24 40"
  "bench/kernels/particle_filter_omp.c|{T} 1048576 4|{T} 65536 2"
)
if ((QUICK)); then
  PROGRAMS=("examples/ring_pthreads.c|{T} 1024 20|{T} 1024 2"
    "bench/kernels/reduction_omp.c|{T} 65536 4|{T} 16384 1")
fi
ALL_MODES=(native empty-hooks dormant weft-comm weft-imbalance weft-falseshare weft-traces weft-crd weft-pages weft-reuse weft-reuse-exact weft-default weft-exact
  tsan vg-none weft-vg-comm weft-valgrind vg-lackey helgrind drd)
MODES=(native empty-hooks dormant weft-comm weft-default weft-exact tsan vg-none weft-vg-comm weft-valgrind
  vg-lackey helgrind drd)
# Modes that run once, on the small input, against native-small.
SMALL_MODES=(vg-lackey helgrind drd)
if [[ -n $ONLY ]]; then
  IFS=, read -r -a requested <<<"$ONLY"
  MODES=(native)
  for mode in "${requested[@]}"; do
    [[ $mode == weft-all ]] && mode="weft-default" # its name before weft-exact came
    [[ -z $mode || $mode == native ]] || MODES+=("$mode")
  done
  for mode in "${MODES[@]}"; do
    [[ " ${ALL_MODES[*]} " == *" $mode "* ]] || {
      echo "bench: unknown mode $mode (modes: ${ALL_MODES[*]})" >&2; exit 2; }
  done
fi
is_small() { [[ " ${SMALL_MODES[*]} " == *" $1 "* ]]; }
uses() {  # glob: does any selected mode match it?
  local m
  # shellcheck disable=SC2053  # $1 is a glob on purpose
  for m in "${MODES[@]}"; do [[ $m == $1 ]] && return 0; done
  return 1
}

build_program() {  # source -> sets NAME, PLAIN, INSTR, EMPTY, TSAN, TSAN_ENV ("" when a build failed)
  local src=$1 ext flags cc wrapper
  NAME=$(basename "${src%.*}")
  ext=${src##*.}
  flags=(-O2 -g -pthread)
  TSAN_ENV="report_bugs=0"
  if [[ $NAME == *_omp ]]; then
    flags+=(-fopenmp)
    # libgomp is not instrumented: ignore its accesses instead of reporting them
    TSAN_ENV+=" ignore_noninstrumented_modules=1"
  fi
  if [[ $ext == cpp ]]; then cc=g++; wrapper=$ROOT/build/bin/weft-c++; flags+=(-std=c++20)
  else cc=gcc; wrapper=$ROOT/build/bin/weft-cc; fi
  PLAIN=$OUT/$NAME.plain
  INSTR=$OUT/$NAME.weft
  TSAN=$OUT/$NAME.tsan
  EMPTY=$OUT/$NAME.empty
  rm -f "$PLAIN" "$INSTR" "$TSAN" "$EMPTY"
  "$cc" "${flags[@]}" -o "$PLAIN" "$src" 2>"$OUT/build.log" ||
    { echo "bench: build failed: $cc $src ($(tail -1 "$OUT/build.log"))" >&2; PLAIN=""; }
  if uses 'weft-[!v]*' || uses dormant; then
    "$wrapper" "${flags[@]}" -o "$INSTR" "$src" 2>"$OUT/build.log" ||
      { echo "bench: build failed: $wrapper $src ($(tail -1 "$OUT/build.log"))" >&2; INSTR=""; }
  fi
  if uses empty-hooks; then
    # weft-cc's instrumentation (gcc: the ThreadSanitizer hooks and
    # trace-pc), compiled apart so that libtsan never reaches the link
    { "$cc" "${flags[@]}" -fsanitize=thread -fsanitize-coverage=trace-pc -c -o "$OUT/$NAME.o" "$src" &&
      gcc -O2 -fPIC -c -o "$OUT/empty_hooks.o" "$ROOT/bench/empty_hooks.c" &&
      "$cc" "${flags[@]}" -o "$EMPTY" "$OUT/$NAME.o" "$OUT/empty_hooks.o"; } 2>"$OUT/build.log" ||
      { echo "bench: build failed: $src with empty hooks ($(tail -1 "$OUT/build.log"))" >&2; EMPTY=""; }
  fi
  if uses tsan; then
    "$cc" "${flags[@]}" -fsanitize=thread -o "$TSAN" "$src" 2>"$OUT/build.log" ||
      { echo "bench: build failed: $cc -fsanitize=thread $src ($(tail -1 "$OUT/build.log"))" >&2; TSAN=""; }
  fi
  return 0
}

# Runs a command RUNS times (default REPEAT); prints "median_seconds
# peak_rss_kb", or "nan 0" when a run fails or exceeds TIMEOUT seconds.
# A missing binary (its build failed) is a failed run.
measure() {
  local times=() rss=0 i t m runs=${RUNS:-$REPEAT} start end rc why
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    rc=0
    /usr/bin/time -f "%M" -o "$OUT/time" timeout -k 10 "$TIMEOUT" "$@" >/dev/null 2>"$OUT/stderr" || rc=$?
    end=$(date +%s%N)
    if ((rc != 0)); then
      why="exit status $rc"
      ((rc == 124 || rc == 137)) && why="timed out after $TIMEOUT s"
      echo "bench: failed: $* ($why; $(tail -1 "$OUT/stderr" 2>/dev/null))" >&2
      echo "nan 0"
      return 0
    fi
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
    m=$(tail -1 "$OUT/time")
    times+=("$t")
    ((m > rss)) && rss=$m
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v rss="$rss" '{a[NR]=$1} END {print a[int((NR+1)/2)], rss}'
}

run_mode() {  # mode args...
  local mode=$1 bin=$PLAIN; shift
  case $mode in
    weft-vg* | weft-valgrind) ;; weft-* | dormant) bin=$INSTR ;; tsan) bin=$TSAN ;; empty-hooks) bin=$EMPTY ;;
  esac
  [[ -n $bin ]] || { echo "bench: no binary for $NAME in mode $mode" >&2; echo "nan 0"; return 0; }
  local RUNS=$REPEAT
  is_small "$mode" && RUNS=1
  case $mode in
    native | native-small | empty-hooks | dormant) measure "$bin" "$@" ;;
    weft-comm) measure "$WEFT" record --analyses comm -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-imbalance) measure "$WEFT" record --analyses comm,imbalance -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-falseshare) measure "$WEFT" record --analyses comm,falseshare -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-traces) measure "$WEFT" record --analyses comm,traces -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-crd) measure "$WEFT" record --analyses comm,crd -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-pages) measure "$WEFT" record --analyses comm,pages -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-reuse) measure "$WEFT" record --analyses comm,reuse -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-reuse-exact)
      measure "$WEFT" record --analyses comm,reuse --reuse-sample-granules 0 -o "$OUT/p.db" \
        -- "$bin" "$@" ;;
    weft-default) measure "${FIXED_LAYOUT[@]}" "$WEFT" record -o "$OUT/p-default.db" -- "$bin" "$@" ;;
    weft-exact)
      measure "${FIXED_LAYOUT[@]}" "$WEFT" record "${EXACT_FLAG[@]}" -o "$OUT/p-exact.db" \
        -- "$bin" "$@" ;;
    tsan) TSAN_OPTIONS=$TSAN_ENV measure "$bin" "$@" ;;
    weft-vg-comm) measure "$WEFT" record --backend valgrind --analyses comm -o "$OUT/p.db" -- "$bin" "$@" ;;
    weft-valgrind) measure "$WEFT" record --backend valgrind -o "$OUT/p.db" -- "$bin" "$@" ;;
    vg-none) measure valgrind -q --tool=none "$bin" "$@" ;;
    vg-lackey) measure valgrind -q --tool=lackey --trace-mem=yes --log-file=/dev/null "$bin" "$@" ;;
    helgrind) measure valgrind -q --tool=helgrind "$bin" "$@" ;;
    drd) measure valgrind -q --tool=drd "$bin" "$@" ;;
  esac
}

ROWS=$OUT/rows.tsv  # every row of the table: program mode wall_s slowdown rss_MB rss_ratio
printf 'program\tmode\twall_s\tslowdown\trss_MB\trss_ratio\n' >"$ROWS"

print_row() {  # program mode t ref_t rss ref_rss vs_none
  awk -v p="$1" -v mo="$2" -v t="$3" -v nt="$4" -v m="$5" -v nm="$6" -v vs="$7" -v rows="$ROWS" '
    function ok(x) { return x != "nan" && x + 0 > 0 }
    BEGIN {
      wall = ok(t) ? sprintf("%.3f", t) : "nan"
      slow = ok(t) && ok(nt) ? sprintf("%.1f", t / nt) : "nan"
      rss = ok(t) && m + 0 > 0 ? sprintf("%.1f", m / 1024) : "nan"
      ratio = ok(t) && m + 0 > 0 && nm + 0 > 0 ? sprintf("%.1f", m / nm) : "nan"
      printf "%-30s %-14s %9s %9s %9s %9s %9s\n", p, mo, wall, slow, rss, ratio, vs
      # the TSV keeps more digits than the table, for the summary and baselines
      if (ok(t)) wall = sprintf("%.4f", t)
      if (slow != "nan") slow = sprintf("%.3f", t / nt)
      if (ratio != "nan") ratio = sprintf("%.3f", m / nm)
      printf "%s\t%s\t%s\t%s\t%s\t%s\n", p, mo, wall, slow, rss, ratio >> rows
    }'
}

if [[ -n $PROGRAM_RE ]]; then
  selected=()
  for entry in "${PROGRAMS[@]}"; do
    name=$(basename "${entry%%|*}")
    name=${name%.*}
    match=0
    [[ $name =~ $PROGRAM_RE ]] && match=1
    for T in "${THREADS[@]}"; do [[ $name/$T =~ $PROGRAM_RE ]] && match=1; done
    ((match)) && selected+=("$entry")
  done
  ((${#selected[@]})) || { echo "bench: no program matches --programs '$PROGRAM_RE'" >&2; exit 2; }
  PROGRAMS=("${selected[@]}")
fi

# weft-default and weft-exact run with the address space's randomization
# off (setarch -R), so that the sampled-vs-exact CRD compares one layout: a
# struct on the stack that straddles a line or not changes the CRD itself
# (particle_filter_omp: two --exact runs 4.7 points apart).
FIXED_LAYOUT=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  FIXED_LAYOUT=(setarch "$(uname -m)" -R)
elif uses weft-default || uses weft-exact; then
  echo "bench: note: setarch -R failed: the sampled-vs-exact CRD compares two address layouts" >&2
fi

# weft-exact: `weft record --exact` (exact CRD). A weft that does not know
# --exact yet records with its defaults instead, and says so.
EXACT_FLAG=(--exact)
EXACT_NOTE=""
if uses weft-exact && ! "$WEFT" record --help 2>&1 | grep -q -e '--exact'; then
  EXACT_FLAG=()
  EXACT_NOTE="weft record has no --exact: weft-exact ran without it, like weft-default"
  echo "bench: note: $EXACT_NOTE" >&2
fi
CRD_ERRORS=$OUT/crd_errors.tsv # program default_slow exact_slow program_pp program_median region_pp region_median region_events region
: >"$CRD_ERRORS"

echo "# weft bench: $(nproc) cores, $(uname -m), $(gcc --version | head -1), $(valgrind --version)," \
  "median of $REPEAT (${SMALL_MODES[*]}: 1 run on the small input), threads ${THREADS[*]}"
printf '%-30s %-14s %9s %9s %9s %9s %9s\n' program mode wall_s slowdown rss_MB rss_ratio vs_none
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r src big small <<<"$entry"
  build_program "$src"
  for T in "${THREADS[@]}"; do
    row=$NAME/$T
    [[ -z $PROGRAM_RE || $NAME =~ $PROGRAM_RE || $row =~ $PROGRAM_RE ]] || continue
    read -r -a args <<<"${big//'{T}'/$T}"
    read -r -a small_args <<<"${small//'{T}'/$T}"
    native_t="" native_m="" none_t="" empty_t="" small_t="" default_t="" exact_t=""
    rm -f "$OUT/p-default.db" "$OUT/p-exact.db"
    for mode in "${MODES[@]}"; do
      if is_small "$mode"; then
        if [[ -z $small_t ]]; then
          # the small-input modes' reference: native on the same small input
          read -r small_t small_m < <(run_mode native-small "${small_args[@]}") || { small_t=nan; small_m=0; }
          print_row "$row" native-small "$small_t" "$small_t" "$small_m" "$small_m" "-"
        fi
        read -r t m < <(run_mode "$mode" "${small_args[@]}") || { t=nan; m=0; }
        print_row "$row" "$mode" "$t" "$small_t" "$m" "$small_m" "-"
        continue
      fi
      read -r t m < <(run_mode "$mode" "${args[@]}") || { t=nan; m=0; }
      [[ $mode == native ]] && { native_t=$t; native_m=$m; }
      [[ $mode == vg-none ]] && none_t=$t
      [[ $mode == empty-hooks ]] && empty_t=$t
      [[ $mode == weft-default ]] && default_t=$t
      [[ $mode == weft-exact ]] && exact_t=$t
      vs="-"
      if [[ $mode == dormant && -n $empty_t ]]; then
        vs=$(awk -v a="$t" -v b="$empty_t" \
          'BEGIN { if (a == "nan" || b == "nan" || b + 0 <= 0) print "-"; else printf "%.2f", a / b }')
      fi
      if [[ $mode == weft-vg* || $mode == weft-valgrind ]] && [[ -n $none_t ]]; then
        vs=$(awk -v a="$t" -v b="$none_t" \
          'BEGIN { if (a == "nan" || b == "nan" || b + 0 <= 0) print "-"; else printf "%.2f", a / b }')
      fi
      print_row "$row" "$mode" "$t" "$native_t" "$m" "$native_m" "$vs"
    done
    # Both profiles of the row (the last run of each mode): sampled CRD
    # against exact, kept in $OUT/p-default.db and $OUT/p-exact.db.
    if [[ -n $default_t && -n $exact_t ]]; then
      errors=$'-\t-\t-\t-\t-\t-'
      if [[ $default_t != nan && $exact_t != nan ]]; then
        errors=$("$ROOT/build/bin/weft_crd_sampling_error" --brief "$OUT/p-default.db" "$OUT/p-exact.db" \
          2>"$OUT/stderr") || {
          echo "bench: weft_crd_sampling_error failed on $row: $(tail -1 "$OUT/stderr")" >&2
          errors=$'nan\tnan\tnan\tnan\t-\t-'
        }
      fi
      awk -v p="$row" -v a="$default_t" -v b="$exact_t" -v n="$native_t" -v e="$errors" 'BEGIN {
        f = (a != "nan" && n != "nan" && n + 0 > 0) ? sprintf("%.1f", a / n) : "nan"
        g = (b != "nan" && n != "nan" && n + 0 > 0) ? sprintf("%.1f", b / n) : "nan"
        printf "%s\t%s\t%s\t%s\n", p, f, g, e }' >>"$CRD_ERRORS"
    fi
  done
done

# Sampled against exact CRD, per row where weft-default and weft-exact both
# ran: the largest per-bin difference of the CRD histograms' mass (percentage
# points) and the difference of the median's power-of-two bin, over the
# whole program and the worst region (bench/README.md).
if [[ -s $CRD_ERRORS ]]; then
  echo
  echo "# sampled (weft-default) vs exact (weft-exact) CRD: max per-bin mass error (pp), median bin difference"
  [[ -z $EXACT_NOTE ]] || echo "# note: $EXACT_NOTE"
  printf '%-30s %8s %8s %8s %7s %9s %7s %10s  %s\n' program default exact prog_pp prog_md region_pp reg_md \
    reg_events worst_region
  awk -F'\t' '{ printf "%-30s %8s %8s %8s %7s %9s %7s %10s  %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' \
    "$CRD_ERRORS"
fi

# Summary: per mode, the geometric means of the slowdown and of the RSS ratio
# over the rows where it ran (small-input modes against native-small), then
# weft-comm against tsan on every program row where both ran.
echo
echo "# summary: geometric mean over the program rows where each mode ran"
((${#MODES[@]} > 1)) || echo "(native only)"
((${#MODES[@]} == 1)) || awk -F'\t' -v modes="${MODES[*]}" '
  function ok(x) { return x != "nan" && x + 0 > 0 }
  NR > 1 {
    if (ok($4)) { ns[$2]++; ls[$2] += log($4) } else if ($2 != "native-small") nf[$2]++
    if (ok($6)) { nr[$2]++; lr[$2] += log($6) }
    if ($2 == "weft-comm") comm[$1] = $4
    if ($2 == "weft-default") dflt[$1] = $4
    if ($2 == "tsan") tsan[$1] = $4
    if (!($1 in seen)) { seen[$1] = 1; order[++np] = $1 }
  }
  END {
    printf "%-14s %5s %6s %10s %10s\n", "mode", "rows", "failed", "slowdown", "rss_ratio"
    n = split(modes, m, " ")
    for (i = 1; i <= n; i++) {
      if (m[i] == "native") continue
      printf "%-14s %5d %6d %10s %10s\n", m[i], ns[m[i]], nf[m[i]],
        ns[m[i]] ? sprintf("%.1f", exp(ls[m[i]] / ns[m[i]])) : "nan",
        nr[m[i]] ? sprintf("%.1f", exp(lr[m[i]] / nr[m[i]])) : "nan"
    }
    both = 0; below = 0; not = ""
    for (i = 1; i <= np; i++) {
      p = order[i]
      if (!(p in comm) || !(p in tsan)) continue
      if (!ok(comm[p]) || !ok(tsan[p])) {
        printf "%-30s weft-comm %9s  tsan %9s  n/a (a run failed)\n", p, comm[p], tsan[p]
        not = not " " p; both++
        continue
      }
      both++
      yes = comm[p] + 0 < tsan[p] + 0
      if (yes) below++; else not = not " " p
      printf "%-30s weft-comm %8.1fx  tsan %8.1fx  %s\n", p, comm[p], tsan[p], yes ? "below" : "NOT below"
    }
    if (both) printf "weft-comm < tsan: %d/%d%s\n", below, both, below < both ? "; not:" not : ""
    both = 0; below = 0; not = ""
    for (i = 1; i <= np; i++) {
      p = order[i]
      if (!(p in dflt) || !(p in tsan)) continue
      both++
      if (ok(dflt[p]) && ok(tsan[p]) && dflt[p] + 0 <= tsan[p] + 0) below++; else not = not " " p
    }
    if (both) printf "weft-default <= tsan: %d/%d%s\n", below, both, below < both ? "; not:" not : ""
  }' "$ROWS"

if [[ -n $SAVE_BASELINE ]]; then
  cp "$ROWS" "$SAVE_BASELINE"
  echo "# baseline saved: $SAVE_BASELINE"
fi

if ((MICRO)); then
  # Shadow memory of the communication analysis at line granularity: the
  # instrumented program's own peak RSS (run under the runtime directly, not
  # through `weft record`, whose own RSS is the profile builder's) against
  # native, for a program whose 64 MiB (two 2048 x 2048 grids of doubles)
  # are all live at once and one that touches almost nothing. The small program's increase is weft's fixed part; what
  # the large one adds beyond it, over the memory it touches, is the
  # shadow's share (target: at most 1/8 plus a fixed part under 64 MiB).
  echo
  echo "# shadow memory (--analyses comm, granularity 64): program peak RSS, MiB"
  program_rss() {  # binary args... -> peak RSS in kB (WEFT_* from the caller's environment)
    if /usr/bin/time -f "%M" -o "$OUT/time" "$@" >/dev/null 2>&1; then tail -1 "$OUT/time"; else echo 0; fi
  }
  SHADOW_RSS=()
  for entry in "bench/kernels/stencil2d_pthreads.c|8 2048 2" "examples/ring_pthreads.c|8 1024 20"; do
    IFS='|' read -r src args <<<"$entry"
    name=$(basename "${src%.*}")
    read -r -a argv <<<"$args"
    if ! gcc -O2 -g -pthread -o "$OUT/$name.mem.plain" "$src" ||
      ! "$ROOT/build/bin/weft-cc" -O2 -g -pthread -o "$OUT/$name.mem.weft" "$src"; then
      echo "bench: build failed: $src" >&2
      continue
    fi
    native=$(program_rss "$OUT/$name.mem.plain" "${argv[@]}")
    rm -f "$OUT/shadow.raw" # the runtime claims a fresh capture file only
    weft=$(WEFT_CAPTURE=$OUT/shadow.raw WEFT_ANALYSES=comm program_rss "$OUT/$name.mem.weft" "${argv[@]}")
    SHADOW_RSS+=("$native" "$weft")
    awk -v n="$name $args" -v a="$native" -v b="$weft" \
      'BEGIN { printf "%-40s native %8.1f  weft-comm %8.1f  increase %8.1f\n", n, a / 1024, b / 1024, (b - a) / 1024 }'
  done
  if ((${#SHADOW_RSS[@]} == 4)); then
    awk -v nb="${SHADOW_RSS[0]}" -v wb="${SHADOW_RSS[1]}" -v ns="${SHADOW_RSS[2]}" -v ws="${SHADOW_RSS[3]}" 'BEGIN {
      fixed = ws - ns; shadow = (wb - nb) - fixed; touched = nb - ns
      printf "fixed part %.1f MiB; shadow %.1f MiB for %.1f MiB touched: %.3f of the touched memory (1/%.1f)\n",
        fixed / 1024, shadow / 1024, touched / 1024, shadow / touched, touched / (shadow > 0 ? shadow : 1) }'
  fi

  # The imbalance diagnosis alone (Google Benchmark): one section instance of
  # 64 threads and 10,000 events, LIME's reference size (5.0 s in the paper).
  echo
  echo "# imbalance analysis: 64 threads x 10,000 events (Google Benchmark, median of 5)"
  build/bin/weft_bench_imbalance --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    2>/dev/null | grep -E "^Benchmark|_median" || echo "bench: weft_bench_imbalance failed" >&2

  # Trace compression (nested loop recognition): encoded size, ratio against 8
  # bytes per address, and the recorder's cost per access, per kernel.
  echo
  echo "# trace compression per kernel (Google Benchmark, median of 3)"
  build/bin/weft_bench_traces --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    2>/dev/null | grep -E "^Benchmark|_median" || echo "bench: weft_bench_traces failed" >&2

  # The analyzers' per-access hot paths, ns per event (Google Benchmark).
  echo
  echo "# hot paths, ns per event (Google Benchmark, median of 3)"
  build/bin/weft_bench_hot_paths --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    2>/dev/null | grep -E "^Benchmark|_median" || echo "bench: weft_bench_hot_paths failed" >&2
fi

# Against a saved run (--save-baseline): every (program, mode) row of this run
# that the baseline has, old and new slowdown; REGRESSION when the new one is
# more than THRESHOLD % above the old. The exit status stays 0.
if [[ -n $BASELINE ]]; then
  echo
  echo "# against baseline $BASELINE (REGRESSION: slowdown more than $THRESHOLD % above the baseline's)"
  awk -F'\t' -v th="$THRESHOLD" '
    function ok(x) { return x != "nan" && x + 0 > 0 }
    function f(x) { return ok(x) ? sprintf("%.1f", x) : x }
    FNR == 1 { next }
    FNR == NR { if ($2 == "weft-all") $2 = "weft-default"; old[$1 "\t" $2] = $4; next }
    $2 == "native" || $2 == "native-small" { next }
    {
      k = $1 "\t" $2
      if (!(k in old)) { printf "%-30s %-14s %9s %9s %9s\n", $1, $2, "-", f($4), "new"; next }
      if (!ok(old[k]) || !ok($4)) { printf "%-30s %-14s %9s %9s %9s\n", $1, $2, f(old[k]), f($4), "n/a"; next }
      ch = ($4 / old[k] - 1) * 100
      flag = (ch > th + 0) ? "  REGRESSION" : ""
      if (flag != "") reg++
      printf "%-30s %-14s %9.1f %9.1f %+8.1f%%%s\n", $1, $2, old[k], $4, ch, flag
      compared++
    }
    BEGIN { printf "%-30s %-14s %9s %9s %9s\n", "program", "mode", "old_slow", "new_slow", "change" }
    END { printf "regressions: %d of %d rows compared (threshold %s %%)\n", reg, compared, th }
  ' "$BASELINE" "$ROWS"
fi
