/* stencil2d_pthreads.c - 2D 5-point Jacobi on a heap grid, row blocks per
 * thread, one barrier per sweep (C + pthreads; a benchmark kernel).
 *
 * Usage: stencil2d_pthreads [T [N [SWEEPS]]]    defaults: T=4 N=2048 SWEEPS=200
 *   T threads (1..64); the main thread works as thread 0 and creates threads
 *   1..T-1. Grid of N x N doubles (3..32768, two grids A and B on the heap),
 *   SWEEPS sweeps (1..1000000). The total work is fixed by N and SWEEPS and
 *   divided among the threads.
 *
 * Rows 0 and N-1 and columns 0 and N-1 are the fixed boundary (1.0 on the top
 * row and on both side columns, 0.0 elsewhere). Thread t owns the interior
 * rows [1 + t*(N-2)/T, 1 + (t+1)*(N-2)/T) of both grids and initializes them;
 * barrier. Sweep s reads X = (s even ? A : B) and writes Y = the other:
 *     Y[r][c] = 0.25 * (X[r-1][c] + X[r+1][c] + X[r][c-1] + X[r][c+1])
 * for its rows and c = 1..N-2; barrier. The first and last row of a block
 * read the halo rows of the neighbouring blocks (written by the threads
 * above and below in the previous sweep): the barrier orders them, so there
 * is no data race. After pthread_join the main thread sums the final grid
 * in row-major order: the checksum does not depend on T.
 */
#define _POSIX_C_SOURCE 200809L /* POSIX threads (and barriers) under -std=c11 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 64

typedef struct {
  int t, T, sweeps;
  long n;
  double *a, *b;
} job_t;

static pthread_barrier_t barrier;

static void *worker(void *arg) {
  const job_t *j = arg;
  const long n = j->n, r0 = 1 + (long)j->t * (n - 2) / j->T, r1 = 1 + (long)(j->t + 1) * (n - 2) / j->T;
  for (long r = r0; r < r1; r++) {
    for (long c = 0; c < n; c++) {
      double v = (c == 0 || c == n - 1) ? 1.0 : 0.0;
      j->a[r * n + c] = v;
      j->b[r * n + c] = v;
    }
  }
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < j->sweeps; s++) {
    const double *x = (s & 1) ? j->b : j->a;
    double *y = (s & 1) ? j->a : j->b;
    for (long r = r0; r < r1; r++) {
      const double *up = x + (r - 1) * n, *mid = x + r * n, *down = x + (r + 1) * n;
      double *out = y + r * n;
      for (long c = 1; c < n - 1; c++) out[c] = 0.25 * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
    }
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long n = argc > 2 ? atol(argv[2]) : 2048;
  int sweeps = argc > 3 ? atoi(argv[3]) : 200;
  if (T < 1 || T > MAXT || n < 3 || n > 32768 || n - 2 < T || sweeps < 1 || sweeps > 1000000) {
    fprintf(stderr, "usage: %s [T 1..%d [N 3..32768, N-2 >= T [SWEEPS 1..1000000]]]\n", argv[0],
            MAXT);
    return 2;
  }
  double *a = malloc((size_t)n * (size_t)n * sizeof *a);
  double *b = malloc((size_t)n * (size_t)n * sizeof *b);
  if (!a || !b) {
    fprintf(stderr, "stencil2d_pthreads: out of memory\n");
    return 1;
  }
  /* the boundary rows, written before the threads start */
  for (long c = 0; c < n; c++) {
    a[c] = b[c] = 1.0;
    a[(n - 1) * n + c] = b[(n - 1) * n + c] = (c == 0 || c == n - 1) ? 1.0 : 0.0;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  job_t job[MAXT];
  pthread_t tid[MAXT];
  for (int i = 0; i < T; i++) job[i] = (job_t){i, T, sweeps, n, a, b};
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, &job[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker(&job[0]);
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&barrier);
  const double *g = (sweeps & 1) ? b : a;
  double sum = 0.0;
  for (long i = 0; i < n * n; i++) sum += g[i];
  printf("stencil2d_pthreads T=%d N=%ld SWEEPS=%d checksum=%.9e\n", T, n, sweeps, sum);
  free(a);
  free(b);
  return 0;
}
