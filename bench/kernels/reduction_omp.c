/* reduction_omp.c - `omp parallel for reduction(+:sum)` over a large array
 * (a dot product), repeated R times (C + OpenMP; a benchmark kernel).
 *
 * Usage: reduction_omp [T [N [R]]]    defaults: T=4 N=4194304 R=160
 *   T threads (1..64, num_threads(T)); x and y are N doubles each (1..2^28)
 *   on the heap; R repetitions (1..65536). The total work (R * N
 *   multiply-adds) is fixed by N and R and divided among the threads.
 *
 * x[i] = ((7i) % 16) / 8, y[i] = ((11i + 3) % 16) / 8, filled by a parallel
 * loop with the same static schedule. Each repetition is one parallel loop
 *     #pragma omp parallel for schedule(static) reduction(+:sum)
 *     sum += x[i] * y[i]
 * (a new parallel region each time: the runtime call cannot be hoisted), and
 * the main thread adds the R sums in order. Every product is a multiple of
 * 1/64 below 4, so each sum is exact (below 2^53 / 64): the result does not
 * depend on the order in which the runtime combines the threads' partial
 * sums, nor on T.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long n = argc > 2 ? atol(argv[2]) : 4194304;
  int reps = argc > 3 ? atoi(argv[3]) : 160;
  if (T < 1 || T > 64 || n < 1 || n > (1L << 28) || reps < 1 || reps > 65536) {
    fprintf(stderr, "usage: %s [T 1..64 [N 1..2^28 [R 1..65536]]]\n", argv[0]);
    return 2;
  }
  double *x = malloc((size_t)n * sizeof *x);
  double *y = malloc((size_t)n * sizeof *y);
  if (!x || !y) {
    fprintf(stderr, "reduction_omp: out of memory\n");
    return 1;
  }
#pragma omp parallel for schedule(static) num_threads(T)
  for (long i = 0; i < n; i++) {
    x[i] = (double)((i * 7) % 16) / 8.0;
    y[i] = (double)((i * 11 + 3) % 16) / 8.0;
  }
  double total = 0.0;
  for (int r = 0; r < reps; r++) {
    double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) num_threads(T)
    for (long i = 0; i < n; i++) sum += x[i] * y[i];
    total += sum;
  }
  printf("reduction_omp T=%d N=%ld R=%d checksum=%.6f\n", T, n, reps, total);
  free(x);
  free(y);
  return 0;
}
