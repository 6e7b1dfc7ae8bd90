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
 * (larger N) the remote rows' reuse distance grows: a halo row is read
 * again two sweeps later (the grids alternate), after the thread's rows of
 * both grids, about N^2 / (4 T) 64-byte granules. Within a sweep a halo
 * granule (8 doubles) is loaded 8 times in a row (distance 0 or 1).
 *
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
 *
 * The result does not depend on T (same arithmetic per point): each owner
 * sums its rows of the final grid (into a 64-byte slot per block, declared
 * distributed like the rows), the main thread adds the N row sums in row
 * order and prints the total, equal for every T at a given N.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft/distribution.h>

#define MAXT 256
#define ROWS_PER_BLOCK 4
#define SWEEPS 8

/* What the main thread sets before it creates the threads; each thread
 * copies it once. */
typedef struct {
  int n, t;
  double *grid[2]; /* the two N x N grids */
  double *rowsum;  /* row sums of the final grid: block b's 4 at 8 b (one granule each) */
} params_t;

static params_t P;
static pthread_barrier_t barrier;

/* One block of rows r0..r0+3 of an n x n grid: its interior points. */
static void sweep_block(int n, const double *restrict old, double *restrict new, int r0) {
  int r1 = r0 + ROWS_PER_BLOCK;
  if (r0 < 1) r0 = 1;
  if (r1 > n - 1) r1 = n - 1;
  for (int r = r0; r < r1; r++) {
    const double *up = old + (size_t)(r - 1) * n;
    const double *mid = old + (size_t)r * n;
    const double *down = old + (size_t)(r + 1) * n;
    double *out = new + (size_t)r *n;
    for (int c = 1; c < n - 1; c++) out[c] = 0.25 * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
  }
}

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t p = P;
  const int n = p.n, T = p.t, blocks = n / ROWS_PER_BLOCK;
  for (int s = 0; s < SWEEPS; s++) {
    const double *old = p.grid[s % 2];
    double *new = p.grid[(s + 1) % 2];
    for (int b = t; b < blocks; b += T) sweep_block(n, old, new, b * ROWS_PER_BLOCK);
    pthread_barrier_wait(&barrier);
  }
  /* Each thread sums its own rows of the final grid, one sum per row. */
  const double *g = p.grid[SWEEPS % 2];
  for (int b = t; b < blocks; b += T) {
    for (int r = b * ROWS_PER_BLOCK; r < (b + 1) * ROWS_PER_BLOCK; r++) {
      double sum = 0.0;
      for (int c = 0; c < n; c++) sum += g[(size_t)r * n + c];
      p.rowsum[r / ROWS_PER_BLOCK * 8 + r % ROWS_PER_BLOCK] = sum;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3 || n < 8 || n > 4096 || n % 8 != 0) {
    fprintf(stderr, "usage: %s [N multiple of 8, 8..4096 [T 1..%d, at most N/4]]\n", argv[0], MAXT);
    return 2;
  }
  if (T < 1 || T > MAXT || T > n / ROWS_PER_BLOCK) {
    fprintf(stderr, "jacobi_cyclic_pthreads: T=%d must be in 1..%d and at most N/4=%d\n", T, MAXT,
            n / ROWS_PER_BLOCK);
    return 2;
  }
  size_t count = (size_t)n * n;
  double *grid[2], *rowsum = NULL;
  if (posix_memalign((void **)&rowsum, 64, (size_t)n / ROWS_PER_BLOCK * 8 * sizeof(double)) != 0)
    rowsum = NULL;
  for (int g = 0; g < 2; g++) {
    void *m = NULL;
    if (posix_memalign(&m, 64, count * sizeof(double)) != 0 || rowsum == NULL) {
      fprintf(stderr, "jacobi_cyclic_pthreads: out of memory\n");
      return 1;
    }
    grid[g] = m;
    /* UPC's shared [4*N] double grid[N][N]: rows in blocks of 4, dealt
     * round-robin. */
    WEFT_DISTRIBUTE(grid[g], sizeof(double), count, WEFT_BLOCK_CYCLIC, (size_t)ROWS_PER_BLOCK * n,
                    T);
    for (int r = 0; r < n; r++)
      for (int c = 0; c < n; c++) grid[g][(size_t)r * n + c] = r == 0 ? 1.0 : 0.0;
  }
  /* The row sums are distributed like the rows: a 64-byte slot per block. */
  WEFT_DISTRIBUTE(rowsum, sizeof(double), (size_t)n / ROWS_PER_BLOCK * 8, WEFT_BLOCK_CYCLIC, 8, T);
  P = (params_t){n, T, {grid[0], grid[1]}, rowsum};
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
  for (int r = 0; r < n; r++) sum += rowsum[r / ROWS_PER_BLOCK * 8 + r % ROWS_PER_BLOCK];
  pthread_barrier_destroy(&barrier);
  free(grid[0]);
  free(grid[1]);
  free(rowsum);
  printf("jacobi_cyclic_pthreads N=%d T=%d checksum=%.9f\n", n, T, sum);
  return 0;
}
