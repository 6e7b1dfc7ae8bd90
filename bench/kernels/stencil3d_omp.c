/* stencil3d_omp.c - 3D 7-point Jacobi, `omp parallel for schedule(static)`
 * over the outer dimension (C + OpenMP; a benchmark kernel).
 *
 * Usage: stencil3d_omp [T [N [SWEEPS]]]    defaults: T=4 N=192 SWEEPS=60
 *   T threads (1..64, num_threads(T)); grid of N x N x N doubles (3..1024,
 *   two grids A and B on the heap); SWEEPS sweeps (1..1000000). The total
 *   work is fixed by N and SWEEPS and divided among the threads.
 *
 * The faces of the cube are the fixed boundary (1.0 on the face i = 0, 0.0
 * elsewhere); the interior starts at 0.0. Both grids are initialized by a
 * parallel loop with the same static schedule as the sweeps. Sweep s reads
 * X = (s even ? A : B) and writes Y = the other:
 *     Y[i][j][k] = (X[i-1][j][k] + X[i+1][j][k] + X[i][j-1][k] + X[i][j+1][k]
 *                   + X[i][j][k-1] + X[i][j][k+1]) / 6
 * for i, j, k = 1..N-2, the i loop shared by `#pragma omp parallel for
 * schedule(static) num_threads(T)` (one parallel region per sweep; its
 * implicit barrier orders the planes read across block borders). After the
 * last sweep the main thread sums the final grid in order: the checksum does
 * not depend on T.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long n = argc > 2 ? atol(argv[2]) : 192;
  int sweeps = argc > 3 ? atoi(argv[3]) : 60;
  if (T < 1 || T > 64 || n < 3 || n > 1024 || sweeps < 1 || sweeps > 1000000) {
    fprintf(stderr, "usage: %s [T 1..64 [N 3..1024 [SWEEPS 1..1000000]]]\n", argv[0]);
    return 2;
  }
  const long plane = n * n, total = n * n * n;
  double *a = malloc((size_t)total * sizeof *a);
  double *b = malloc((size_t)total * sizeof *b);
  if (!a || !b) {
    fprintf(stderr, "stencil3d_omp: out of memory\n");
    return 1;
  }
#pragma omp parallel for schedule(static) num_threads(T)
  for (long i = 0; i < n; i++) {
    for (long jk = 0; jk < plane; jk++) {
      double v = i == 0 ? 1.0 : 0.0;
      a[i * plane + jk] = v;
      b[i * plane + jk] = v;
    }
  }
  for (int s = 0; s < sweeps; s++) {
    const double *x = (s & 1) ? b : a;
    double *y = (s & 1) ? a : b;
#pragma omp parallel for schedule(static) num_threads(T)
    for (long i = 1; i < n - 1; i++) {
      for (long j = 1; j < n - 1; j++) {
        const double *c = x + i * plane + j * n;
        double *out = y + i * plane + j * n;
        for (long k = 1; k < n - 1; k++)
          out[k] = (c[k - plane] + c[k + plane] + c[k - n] + c[k + n] + c[k - 1] + c[k + 1]) *
                   (1.0 / 6.0);
      }
    }
  }
  const double *g = (sweeps & 1) ? b : a;
  double sum = 0.0;
  for (long i = 0; i < total; i++) sum += g[i];
  printf("stencil3d_omp T=%d N=%ld SWEEPS=%d checksum=%.9e\n", T, n, sweeps, sum);
  free(a);
  free(b);
  return 0;
}
