/* The timing driver of bench/loops.sh, linked with kernels.c (the same
 * compiler and flags).
 *
 *   driver list                         the kernels' names, one a line
 *   driver calibrate                    TSC ticks per core cycle (below)
 *   driver time BIG SMALL REPS ROUNDS KERNEL...
 *                                       per kernel: NAME BIG UNITS CYCLES
 *                                       SMALL UNITS CYCLES RATIO_MIN RATIO_MAX
 *   driver count BYTES KERNEL...        each kernel once, nothing timed
 *
 * `time` first spins ~50 ms (the core leaves its idle clock), then per
 * kernel and size (BIG, then SMALL, ROUNDS times in turn) sets up the
 * arrays so that together they take about that many bytes, initialises
 * them (the first touch), calls the kernel 3 times to warm the caches, then
 * REPS times, each call timed with rdtsc between lfences and converted to
 * core cycles by the TSC ticks per core cycle `calibrate` measures, measured
 * again just before (the core's clock moves with the host's load: 3.2 GHz
 * against the TSC's 2.445 when idle, less when busy); CYCLES is the minimum
 * over every timed call of that size; the line ends with the smallest and
 * largest ticks per cycle seen. UNITS is the number of
 * iterations of the source inner loop in one call, which the binary loop's
 * iteration count is an affine function of (bench/loops.sh derives the
 * latter from it). `count` calls each kernel exactly once, for bench/loops.sh's gdb
 * run that counts how often each binary loop's header executes.
 *
 * `calibrate` times chains of dependent instructions of known latency
 * (a 1-cycle `add`, a 3-cycle `imul` on the x86-64 cores of the last ten
 * years): TSC ticks / chain cycles is the ratio of the TSC's rate to the
 * core clock while the core runs this code. The timings convert with the
 * `imul` chain: Golden Cove cores (Sapphire Rapids) fold `add $1` chains in
 * the renamer and run several adds a cycle. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "kernels.h"

static volatile double sink;

/* The arrays of the current kernel: one pool, the k-th array starting
 * 1088 * k bytes (17 cache lines) past a 4 KiB boundary, the same at every
 * size, so that the arrays' equal indices are at least 256 bytes apart in
 * their low 12 address bits (4K aliasing would make loads wait for
 * unrelated stores) and both sizes of a difference have the same layout. */
static char *pool;
static size_t pool_used, pool_size;
static int pool_arrays;

static void *take(size_t bytes) {
  size_t start = ((pool_used + 4095) & ~(size_t)4095) + 1088 * (size_t)pool_arrays++;
  if (start + bytes > pool_size) {
    fprintf(stderr, "driver: pool too small\n");
    exit(1);
  }
  pool_used = start + bytes;
  return pool + start;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_random(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double *doubles(long n, double lo, double hi) {
  double *p = take((size_t)n * sizeof(double));
  for (long i = 0; i < n; i++) p[i] = lo + (hi - lo) * (double)(next_random() >> 11) * 0x1p-53;
  return p;
}
static int *ints(long n, int lo, int hi) {
  int *p = take((size_t)n * sizeof(int));
  for (long i = 0; i < n; i++) p[i] = lo + (int)(next_random() % (uint64_t)(hi - lo));
  return p;
}
static int *permutation(long n) {
  int *p = take((size_t)n * sizeof(int));
  for (long i = 0; i < n; i++) p[i] = (int)i;
  for (long i = n - 1; i > 0; i--) {
    long j = (long)(next_random() % (uint64_t)(i + 1));
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

/* The current kernel's arguments. */
static double *A, *B, *C, *X;
static int *IA, *IB;
static long N, ROWS, COLS;

static long round64(long n) { return n < 64 ? 64 : n / 64 * 64; }

/* Each kernel: sets its arguments up for about `bytes` of data and returns
 * its UNITS, the iterations of its source inner loop in one call (the
 * elements, or rows x inner elements); runs it once. */
struct kernel {
  const char *name;
  long (*setup)(long bytes);
  void (*run)(void);
};

#define SETUP(NAME) static long setup_##NAME(long bytes)
#define RUN(NAME) static void run_##NAME(void)

SETUP(copy) {
  N = round64(bytes / 16);
  A = doubles(N, 0, 1), B = doubles(N, 0, 1);
  return N;
}
RUN(copy) { k_copy(A, B, N); }
SETUP(scale) { return setup_copy(bytes); }
RUN(scale) { k_scale(A, B, 1.5, N); }
SETUP(add) {
  N = round64(bytes / 24);
  A = doubles(N, 0, 1), B = doubles(N, 0, 1), C = doubles(N, 0, 1);
  return N;
}
RUN(add) { k_add(A, B, C, N); }
SETUP(triad) { return setup_add(bytes); }
RUN(triad) { k_triad(A, B, C, 1.5, N); }
SETUP(dot) { return setup_copy(bytes); }
RUN(dot) { sink += k_dot(A, B, N); }
SETUP(sum) {
  N = round64(bytes / 8);
  A = doubles(N, 0, 1);
  return N;
}
RUN(sum) { sink += k_sum(A, N); }
SETUP(stencil1d) { return setup_copy(bytes) - 4; }
RUN(stencil1d) { k_stencil1d(A, B, N); }
SETUP(stencil2d) {
  COLS = 130, ROWS = bytes / (2 * 8 * COLS); /* 128 inner elements: no remainder */
  A = doubles(ROWS * COLS, 0, 1), B = doubles(ROWS * COLS, 0, 1);
  return (ROWS - 2) * (COLS - 2);
}
RUN(stencil2d) { k_stencil2d(A, B, ROWS, COLS); }
SETUP(matvec) {
  COLS = 128, ROWS = (bytes - COLS * 8) / (COLS * 8 + 8);
  A = doubles(ROWS * COLS, 0, 1), X = doubles(COLS, 0, 1), B = doubles(ROWS, 0, 1);
  return ROWS * COLS;
}
RUN(matvec) { k_matvec(B, A, X, ROWS, COLS); }
SETUP(colsweep) {
  COLS = 16, ROWS = bytes / (8 * (COLS + 1)) / 8 * 8;
  A = doubles(ROWS * COLS, 0, 1), B = doubles(ROWS, 0.99, 1.01);
  return ROWS * COLS;
}
RUN(colsweep) { k_colsweep(A, B, ROWS, COLS); }
/* CSR: 16 non-zeros per row at random columns of a 512-element x. */
enum { kSpmvPerRow = 16, kSpmvCols = 512 };
SETUP(spmv) {
  ROWS = (bytes - kSpmvCols * 8) / (kSpmvPerRow * 12 + 12);
  if (ROWS < 1) ROWS = 1;
  X = doubles(kSpmvCols, 0, 1), A = doubles(ROWS * kSpmvPerRow, 0, 1), B = doubles(ROWS, 0, 0);
  IA = take((size_t)(ROWS + 1) * sizeof(int));
  for (long i = 0; i <= ROWS; i++) IA[i] = (int)(i * kSpmvPerRow);
  IB = ints(ROWS * kSpmvPerRow, 0, kSpmvCols);
  return ROWS * kSpmvPerRow;
}
RUN(spmv) { k_spmv(B, IA, IB, A, X, ROWS); }
SETUP(prefix) { return setup_copy(bytes); }
RUN(prefix) { k_prefix(A, B, N); }
/* 256 bins, random indices. */
SETUP(histogram) {
  N = round64(bytes / 4);
  IA = ints(256, 0, 1), IB = ints(N, 0, 256);
  return N;
}
RUN(histogram) { k_histogram(IA, IB, N); }
/* gather/scatter: a random permutation of the whole array. */
SETUP(gather) {
  N = round64(bytes / 20);
  A = doubles(N, 0, 1), B = doubles(N, 0, 1), IA = permutation(N);
  return N;
}
RUN(gather) { k_gather(A, B, IA, N); }
SETUP(scatter) { return setup_gather(bytes); }
RUN(scatter) { k_scatter(A, B, IA, N); }
SETUP(stride2) {
  N = round64(bytes / 24);
  A = doubles(N, 0, 1), B = doubles(2 * N, 0, 1);
  return N;
}
RUN(stride2) { k_stride2(A, B, 1.5, N); }
SETUP(stride8) {
  N = round64(bytes / 72);
  A = doubles(N, 0, 1), B = doubles(8 * N, 0, 1);
  return N;
}
RUN(stride8) { k_stride8(A, B, 1.5, N); }
SETUP(div) {
  N = round64(bytes / 24);
  A = doubles(N, 0, 1), B = doubles(N, 0, 1), C = doubles(N, 1, 2);
  return N;
}
RUN(div) { k_div(A, B, C, N); }
SETUP(sqrt) { return setup_copy(bytes); }
RUN(sqrt) { k_sqrt(A, B, N); }
SETUP(horner) { return setup_copy(bytes); }
RUN(horner) { k_horner(A, B, N); }
SETUP(bitmix) {
  N = round64(bytes / 8);
  IA = ints(N, 0, 1 << 30), IB = ints(N, 0, 1 << 30);
  return N;
}
RUN(bitmix) { k_bitmix((uint32_t *)IA, (const uint32_t *)IB, N); }
/* Values in [-200, 200): both branches of the abs and of the clamp are
 * taken at random. */
SETUP(clamp) {
  N = round64(bytes / 8);
  IA = ints(N, 0, 1), IB = ints(N, -200, 200);
  return N;
}
RUN(clamp) { k_clamp(IA, IB, 100, N); }
SETUP(fill) {
  N = round64(bytes / 8);
  A = doubles(N, 0, 1);
  return N;
}
RUN(fill) { k_fill(A, 0.5, N); }
SETUP(cmul) {
  N = round64(bytes / 48);
  A = doubles(2 * N, 0, 1), B = doubles(2 * N, 0, 1), C = doubles(2 * N, 0, 1);
  return N;
}
RUN(cmul) { k_cmul(C, A, B, N); }

#define K(NAME) \
  { #NAME, setup_##NAME, run_##NAME }
static const struct kernel kernels[] = {
    K(copy),      K(scale),     K(add),     K(triad),    K(dot),     K(sum),
    K(stencil1d), K(stencil2d), K(matvec),  K(colsweep), K(spmv),    K(prefix),
    K(histogram), K(gather),    K(scatter), K(stride2),  K(stride8), K(div),
    K(sqrt),      K(horner),    K(bitmix),  K(clamp),    K(fill),    K(cmul),
};
enum { kKernels = sizeof kernels / sizeof kernels[0] };

static const struct kernel *find(const char *name) {
  for (int k = 0; k < kKernels; k++)
    if (strcmp(kernels[k].name, name) == 0) return &kernels[k];
  fprintf(stderr, "driver: unknown kernel %s\n", name);
  exit(2);
}

static long setup(const struct kernel *k, long bytes) {
  size_t want = (size_t)bytes + (size_t)bytes / 4 + (1 << 17);
  if (want > pool_size) {
    free(pool);
    pool = aligned_alloc(4096, (want + 4095) / 4096 * 4096);
    if (!pool) {
      fprintf(stderr, "driver: out of memory\n");
      exit(1);
    }
    pool_size = want;
  }
  pool_used = 0, pool_arrays = 0;
  return k->setup(bytes);
}

static inline uint64_t ticks(void) {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

#define R10(x) x x x x x x x x x x
#define R100(x) R10(R10(x))

/* Ticks per cycle of a chain of dependent instructions (which 0: `add`,
 * 1 cycle; 1: `imul`, 3 cycles): the minimum over 2,000 short runs (a few
 * us each, so that a run the hypervisor or another process interrupted
 * never counts) of a chain of 100 * `blocks` instructions; chains of two
 * lengths, so that the cost of reading the TSC cancels out. */
static int chain_runs = 2000;
static double chain_min_ticks(int which, long blocks) {
  uint64_t best = UINT64_MAX;
  for (int run = 0; run < chain_runs; run++) {
    uint64_t x = 1, t0 = ticks();
    for (long i = 0; i < blocks; i++) {
      if (which == 0)
        __asm__ volatile(R100("add $1, %0\n\t") : "+r"(x));
      else
        __asm__ volatile(R100("imul %0, %0\n\t") : "+r"(x));
    }
    uint64_t t = ticks() - t0;
    if (t < best) best = t;
  }
  return (double)best;
}
static double chain(int which) {
  long blocks = which == 0 ? 60 : 20;
  double latency = which == 0 ? 1 : 3;
  return (chain_min_ticks(which, 2 * blocks) - chain_min_ticks(which, blocks)) /
         ((double)blocks * 100 * latency);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "list") == 0) {
    for (int k = 0; k < kKernels; k++) puts(kernels[k].name);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "calibrate") == 0) {
    chain(0); /* let the core reach its clock */
    printf("add %.4f\nimul %.4f\n", chain(0), chain(1));
    return 0;
  }
  if (argc >= 4 && strcmp(argv[1], "count") == 0) {
    long bytes = atol(argv[2]);
    for (int i = 3; i < argc; i++) {
      const struct kernel *k = find(argv[i]);
      long units = setup(k, bytes);
      k->run();
      printf("%s %ld %ld\n", k->name, bytes, units);
    }
    return 0;
  }
  if (argc >= 7 && strcmp(argv[1], "time") == 0) {
    long big = atol(argv[2]), small = atol(argv[3]), reps = atol(argv[4]), rounds = atol(argv[5]);
    /* ~50 ms of work first: the core leaves its idle clock */
    for (int w = 0; w < 10; w++) chain_min_ticks(0, 10);
    for (int i = 6; i < argc; i++) {
      const struct kernel *k = find(argv[i]);
      long units[2] = {0, 0};
      double best[2] = {1e300, 1e300}, ratio_min = 1e300, ratio_max = 0;
      /* the two sizes alternate, so that a change of the core's clock
       * during the run does not land on one size only */
      for (long round = 0; round < 2 * rounds; round++) {
        int which = (int)(round % 2);
        units[which] = setup(k, which == 0 ? big : small);
        for (int w = 0; w < 3; w++) k->run();
        /* the core's clock right now: it moves with the host's load */
        chain_runs = 300;
        double ratio = chain(1);
        if (ratio < ratio_min) ratio_min = ratio;
        if (ratio > ratio_max) ratio_max = ratio;
        for (long r = 0; r < reps; r++) {
          uint64_t t0 = ticks();
          k->run();
          double cycles = (double)(ticks() - t0) / ratio;
          if (cycles < best[which]) best[which] = cycles;
        }
      }
      printf("%s %ld %ld %.1f %ld %ld %.1f %.4f %.4f\n", k->name, big, units[0], best[0], small,
             units[1], best[1], ratio_min, ratio_max);
      fflush(stdout);
    }
    return 0;
  }
  fprintf(stderr,
          "usage: driver list | calibrate | time BIG SMALL REPS ROUNDS KERNEL... | count BYTES "
          "KERNEL...\n");
  return 2;
}
