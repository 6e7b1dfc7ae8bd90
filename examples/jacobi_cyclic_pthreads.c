/* jacobi_cyclic_pthreads.c - Jacobi relaxation of an N x N grid whose rows
 * are distributed block-cyclically over the threads (C + pthreads).
 *
 * Usage: jacobi_cyclic_pthreads [N [T]]   defaults: N=64 T=4
 *   N  grid order, a multiple of 8 (8..4096) with N / 4 >= T (every thread
 *      owns at least one block of rows);
 *   T  threads (1..256). The main thread works as rank 0 and creates ranks
 *      1..T-1 in order, so weft's thread id is the rank.
 *
 * Two N x N row-major grids (old and new, 64-byte aligned) are one shared
 * array each, allocated and initialised by the main thread alone, as a UPC
 * program's shared array would be: row r of both belongs to thread
 * (r / 4) % T (blocks of R = 4 rows dealt round-robin), which the program
 * declares with WEFT_DISTRIBUTE (block-cyclic, block = 4N elements), so that
 * weft's owner of a granule is the thread the rows are dealt to, not the
 * main thread that first touched them.
 *
 * S = 8 sweeps; sweep s reads grid s % 2 and writes the other, then a
 * barrier. Thread t updates the interior points (columns 1..N-2, rows
 * 1..N-2) of its own rows with the 4-point average; rows 0 and N-1 and
 * columns 0 and N-1 are the fixed boundary (1.0 on row 0, 0.0 elsewhere).
 * The loads old[r-1][c] and old[r+1][c] are the only remote ones: the first
 * row of each of t's blocks reads the last row of the block above (owned by
 * t-1 mod T), the last row reads the first row of the block below (owned by
 * t+1 mod T): 2 remote rows per block and sweep (N-2 loads, about N/8
 * granules each), except at the grid's top (block 0, thread 0: no row above
 * row 0 is read) and bottom (the last block's owner, thread
 * (N/4 - 1) % T). The other loads of a block are local. With T = 1
 * everything is local. So thread 0 and the last block's owner are the
 * "edge" threads, the others alike ("interior"); with more blocks per thread
 * (larger N) the remote rows' reuse distance (one sweep later, after the
 * thread's whole share, about 2 N^2 / (8 T) granules) grows.
 *
 * The result does not depend on T (same arithmetic per point): each owner
 * sums its rows of the final grid into a per-row slot, the main thread adds
 * the N row sums in row order and prints the total, equal for every T at a
 * given N.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft/distribution.h>

#define MAXT 256
#define ROWS_PER_BLOCK 4
#define SWEEPS 8

static int N, T;
static double *grid[2];
static double *rowsum; /* N row sums, in row order */
static pthread_barrier_t barrier;

static void sweep_block(const double *restrict old, double *restrict new, int r0) {
  int r1 = r0 + ROWS_PER_BLOCK;
  if (r0 < 1) r0 = 1;
  if (r1 > N - 1) r1 = N - 1;
  for (int r = r0; r < r1; r++) {
    const double *up = old + (size_t)(r - 1) * N;
    const double *mid = old + (size_t)r * N;
    const double *down = old + (size_t)(r + 1) * N;
    double *out = new + (size_t)r *N;
    for (int c = 1; c < N - 1; c++) out[c] = 0.25 * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
  }
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  int blocks = N / ROWS_PER_BLOCK;
  for (int s = 0; s < SWEEPS; s++) {
    const double *old = grid[s % 2];
    double *new = grid[(s + 1) % 2];
    for (int b = t; b < blocks; b += T) sweep_block(old, new, b * ROWS_PER_BLOCK);
    pthread_barrier_wait(&barrier);
  }
  /* Each thread sums its own rows of the final grid, one sum per row. */
  const double *g = grid[SWEEPS % 2];
  for (int b = t; b < blocks; b += T) {
    for (int r = b * ROWS_PER_BLOCK; r < (b + 1) * ROWS_PER_BLOCK; r++) {
      double sum = 0.0;
      for (int c = 0; c < N; c++) sum += g[(size_t)r * N + c];
      rowsum[r] = sum;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  N = argc > 1 ? atoi(argv[1]) : 64;
  T = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3 || N < 8 || N > 4096 || N % 8 != 0) {
    fprintf(stderr, "usage: %s [N multiple of 8, 8..4096 [T 1..%d, at most N/4]]\n", argv[0], MAXT);
    return 2;
  }
  if (T < 1 || T > MAXT || T > N / ROWS_PER_BLOCK) {
    fprintf(stderr, "jacobi_cyclic_pthreads: T=%d must be in 1..%d and at most N/4=%d\n", T, MAXT,
            N / ROWS_PER_BLOCK);
    return 2;
  }
  size_t count = (size_t)N * N;
  for (int g = 0; g < 2; g++) {
    void *p = NULL;
    if (posix_memalign(&p, 64, count * sizeof(double)) != 0) {
      fprintf(stderr, "jacobi_cyclic_pthreads: out of memory\n");
      return 1;
    }
    grid[g] = p;
    WEFT_DISTRIBUTE(grid[g], sizeof(double), count, WEFT_BLOCK_CYCLIC, (size_t)ROWS_PER_BLOCK * N,
                    T);
    for (int r = 0; r < N; r++)
      for (int c = 0; c < N; c++) grid[g][(size_t)r * N + c] = r == 0 ? 1.0 : 0.0;
  }
  rowsum = calloc((size_t)N, sizeof(double));
  if (rowsum == NULL) {
    fprintf(stderr, "jacobi_cyclic_pthreads: out of memory\n");
    return 1;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "jacobi_cyclic_pthreads: pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int t = 1; t < T; t++) pthread_join(tid[t], NULL);
  double sum = 0.0;
  for (int r = 0; r < N; r++) sum += rowsum[r];
  pthread_barrier_destroy(&barrier);
  free(grid[0]);
  free(grid[1]);
  free(rowsum);
  printf("jacobi_cyclic_pthreads N=%d T=%d checksum=%.9f\n", N, T, sum);
  return 0;
}
