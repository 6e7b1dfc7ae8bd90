/* matmul_blocked_omp.c - blocked (tiled) C += A * B of doubles,
 * `omp parallel for` over the tile rows (C + OpenMP; a benchmark kernel).
 *
 * Usage: matmul_blocked_omp [T [N]]    defaults: T=4 N=1280
 *   T threads (1..64, num_threads(T)); A, B, C are N x N row-major doubles
 *   (64..4096, a multiple of the tile size 64) on the heap. The total
 *   work (2 N^3 flops) is fixed by N and divided among the threads.
 *
 * A[i][k] = (i + 2k) % 7 - 3, B[k][j] = (3k + j) % 5 - 2, C[i][j] = 1: small
 * integers, so every product and partial sum is exact. The tiles are BS x BS
 * = 64 x 64 (32 KiB of doubles each). The loop over the tile rows ii is
 * shared by `#pragma omp parallel for schedule(static)`; each thread updates
 * only the rows of C in its tile rows (no two threads write one element):
 *     for each tile row ii (parallel), tile column jj, tile kk:
 *       for i in ii-tile, k in kk-tile: a = A[i][k];
 *         for j in jj-tile: C[i][j] += a * B[k][j]
 * After the loop the main thread sums (i % 3 + 1) * C[i][j]: the checksum is
 * an exact integer and does not depend on T.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BS 64

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long n = argc > 2 ? atol(argv[2]) : 1280;
  if (T < 1 || T > 64 || n < BS || n > 4096 || n % BS != 0) {
    fprintf(stderr, "usage: %s [T 1..64 [N multiple of %d, %d..4096]]\n", argv[0], BS, BS);
    return 2;
  }
  double *a = malloc((size_t)(n * n) * sizeof *a);
  double *b = malloc((size_t)(n * n) * sizeof *b);
  double *c = malloc((size_t)(n * n) * sizeof *c);
  if (!a || !b || !c) {
    fprintf(stderr, "matmul_blocked_omp: out of memory\n");
    return 1;
  }
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) {
      a[i * n + j] = (double)((i + 2 * j) % 7 - 3);
      b[i * n + j] = (double)((3 * i + j) % 5 - 2);
      c[i * n + j] = 1.0;
    }
  }
  const long tiles = n / BS;
#pragma omp parallel for schedule(static) num_threads(T)
  for (long ti = 0; ti < tiles; ti++) {
    const long ii = ti * BS;
    for (long jj = 0; jj < n; jj += BS) {
      for (long kk = 0; kk < n; kk += BS) {
        for (long i = ii; i < ii + BS; i++) {
          double *ci = c + i * n + jj;
          for (long k = kk; k < kk + BS; k++) {
            const double aik = a[i * n + k];
            const double *bk = b + k * n + jj;
            for (long j = 0; j < BS; j++) ci[j] += aik * bk[j];
          }
        }
      }
    }
  }
  double sum = 0.0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) sum += (double)(i % 3 + 1) * c[i * n + j];
  printf("matmul_blocked_omp T=%d N=%ld BS=%d checksum=%.1f\n", T, n, BS, sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
