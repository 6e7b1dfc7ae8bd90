/* jacobi_sweeps_omp.c - ten thousand small parallel sections: Jacobi sweeps
 * with the worksharing loop on the inner (column) loop, NPB style (C + OpenMP).
 *
 * Usage: jacobi_sweeps_omp [STEPS]        default: STEPS = 50 (1..1000)
 *
 * A heat-like problem on an (NR + 2) x (NC + 2) grid (NR = 200 interior rows,
 * NC = 512 interior columns), marched in time: STEPS time steps, each
 *   1. the right-hand side of the step, rhs[i][j] = h^2 * source(i, j) *
 *      decay^step: one `#pragma omp for` over the rows (50 rows per thread),
 *      ended by its implicit barrier;
 *   2. one Jacobi sweep, u_next = 1/4 (four neighbours of u) + rhs, written
 *      the way a port that parallelised the inner loop writes it: the rows in
 *      order, and for each row a `#pragma omp for schedule(static)` over its
 *      columns followed by a barrier. Each row is a small parallel section of
 *      its own: NR = 200 per step. (The data does not need the barrier, a
 *      Jacobi sweep reads only the previous grid, but the inner-loop
 *      parallelisation gives it; it is written out, `nowait` and `#pragma omp
 *      barrier`, because gcc gives the call of a loop's implicit barrier the
 *      line of whatever statement comes before it, so the section would have
 *      no stable line to test.)
 * Points within LAYER = 48 columns of the left wall (j <= 48) belong to the
 * wall's boundary layer: after the stencil, a wall-function correction
 * (FIX_ITERS = 12 fixed-point iterations) replaces their value. Which points
 * need it is the geometry's answer, needs_fixup(i, j), a small function kept
 * out of line (layer[i], the layer's width in row i, is set by the main
 * thread: 48 in every row).
 *
 * One parallel region of 4 threads (num_threads(4)); omp_get_thread_num() is
 * the weft thread id (0 is the main thread). The main thread initialises the
 * grids before the region (the wall column j = 0 at 1, the rest 0) and reads
 * them after it. The arrays (two u grids and rhs, each 202 x 520 doubles,
 * rows padded to a multiple of 8 doubles: 2.4 MiB) are larger than a private
 * L2; rows are whole cache lines apart, so every row has the same line
 * pattern.
 *
 * Per sweep row i (i = 1..NR), the static schedule gives thread t the
 * columns 128 t + 1 .. 128 (t + 1):
 *   thread          0     1     2     3
 *   points        128   128   128   128   (stencils, needs_fixup calls)
 *   corrections    48     0     0     0   (taken branches of the marked line)
 * so thread 0 does more than one and a half times the work of the others in
 * every row; the rhs loop is balanced.
 *
 * Expected:
 *   - the sweep's barrier (the line marked with the section comment) closes
 *     STEPS x NR instances of one parallel section: 50 x 200 = 10,000 with
 *     the default 50 steps (STEPS = 500: 100,000 per thread);
 *   - the rhs loop's barrier closes STEPS = 50 instances of another section
 *     (the barriers of the region are matched by their ordinal under its
 *     outlined body, and every thread passes them in the same order), and
 *     the region's closing barrier one;
 *   - the top cause of the sweep's imbalance is the boundary-layer test, the
 *     caller's `if` on the line marked with the top-cause comment (not
 *     needs_fixup's body), under both sources;
 *   - each thread's rows repeat the counts of an earlier row of the thread
 *     (the same branches, and once the caches are warm the same misses: all
 *     three arrays fit in the simulated 8 MiB last level), so the imbalance
 *     analysis logs nearly every segment as a repeat (docs/metrics.md, "Load
 *     imbalance", Memory).
 * The main thread prints a checksum of the last grid.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define T 4          /* threads */
#define NR 200       /* interior rows */
#define NC 512       /* interior columns, a multiple of 8 * T */
#define LD (NC + 8)  /* row length: NC + 2 rounded up to a multiple of 8 */
#define LAYER 48     /* boundary-layer width, columns */
#define FIX_ITERS 12 /* wall-function iterations */
#define MAX_STEPS 1000

static _Alignas(64) double u[2][NR + 2][LD];
static _Alignas(64) double rhs[NR + 2][LD];
static int layer[NR + 2];

typedef struct {
  _Alignas(64) int team;
} slot_t;
static slot_t result[T];

/* Does point (i, j) lie in the wall's boundary layer? Not inlined, like a
 * real code's geometry query. */
__attribute__((noinline)) static int needs_fixup(int i, int j) { return j <= layer[i]; }

/* The wall function: a fixed number of fixed-point iterations. */
static double wall_correction(double v, int j) {
  const double target = v + 0.001 * (double)j;
  double y = v;
  for (int k = 0; k < FIX_ITERS; k++) y = 0.5 * (y + target / (1.0 + 0.01 * y * y));
  return y;
}

int main(int argc, char **argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 50;
  if (steps < 1 || steps > MAX_STEPS) {
    fprintf(stderr, "usage: %s [STEPS 1..%d]\n", argv[0], MAX_STEPS);
    return 2;
  }
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < NR + 2; i++)
      for (int j = 0; j < LD; j++) u[c][i][j] = j == 0 ? 1.0 : 0.0;
  for (int i = 0; i < NR + 2; i++) layer[i] = LAYER;
  const double h2 = 1.0 / ((double)(NC + 1) * (double)(NC + 1));

#pragma omp parallel num_threads(T)
  {
    double decay = 1.0;
    for (int step = 0; step < steps; step++) {
      const double(*cur)[LD] = u[step & 1];
      double(*next)[LD] = u[(step + 1) & 1];
#pragma omp for schedule(static)
      for (int i = 1; i <= NR; i++)
        for (int j = 1; j <= NC; j++) rhs[i][j] = h2 * decay * (double)((7 * i + 3 * j) % 11);
      for (int i = 1; i <= NR; i++) {
#pragma omp for schedule(static) nowait
        for (int j = 1; j <= NC; j++) {
          double v =
              0.25 * (cur[i - 1][j] + cur[i + 1][j] + cur[i][j - 1] + cur[i][j + 1]) + rhs[i][j];
          if (needs_fixup(i, j)) v = wall_correction(v, j); /* weft:top-cause */
          next[i][j] = v;
        }
#pragma omp barrier /* weft:section */
      }
      decay *= 0.99;
    }
    result[omp_get_thread_num()].team = omp_get_num_threads();
  }
  for (int t = 0; t < T; t++) {
    if (result[t].team != T) {
      fprintf(stderr, "jacobi_sweeps_omp: got %d threads instead of %d\n", result[t].team, T);
      return 1;
    }
  }
  double sum = 0.0;
  for (int i = 1; i <= NR; i++)
    for (int j = 1; j <= NC; j++) sum += u[steps & 1][i][j];
  printf("jacobi_sweeps_omp T=%d NR=%d NC=%d steps=%d checksum=%.9f\n", T, NR, NC, steps, sum);
  return 0;
}
