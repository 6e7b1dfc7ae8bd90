/* dgemm_schedule_omp.c - C += A * B with the column loop shared among
 * OpenMP threads, as in MAQAO's DGEMM example (C + OpenMP).
 *
 * Usage: dgemm_schedule_omp [static|dynamic [N [T]]]   defaults: static N=64 T=8
 *   C, A, B are N x N row-major doubles, 64-byte aligned heap blocks
 *   (N a multiple of 8 * T). The parallel loop runs over the columns j of
 *   C; thread-private loops over the rows i and the inner index k update
 *   C[i][j] (the line marked "c-update").
 *   static: each thread gets N / T consecutive columns, whole 64-byte lines
 *   of every row of C: no line of C is written by two threads.
 *   dynamic (chunk 1): threads take single columns as they come, so the 8
 *   columns of a line of C are written by different threads: false sharing
 *   on C, reported at the update line, C allocated at the line marked
 *   "c-alloc".
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void multiply_static(int n, double *c, const double *a, const double *b) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) c[i * n + j] += a[i * n + k] * b[k * n + j]; /* weft:c-update */
}

static void multiply_dynamic(int n, double *c, const double *a, const double *b) {
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++)
        c[i * n + j] += a[i * n + k] * b[k * n + j]; /* weft:c-update-dynamic */
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "static";
  int n = argc > 2 ? atoi(argv[2]) : 64;
  int T = argc > 3 ? atoi(argv[3]) : 8;
  int dynamic = strcmp(mode, "dynamic") == 0;
  if ((!dynamic && strcmp(mode, "static") != 0) || T < 1 || T > 64 || n < 8 * T ||
      n % (8 * T) != 0 || n > 4096) {
    fprintf(stderr, "usage: %s [static|dynamic [N (multiple of 8*T) [T]]]\n", argv[0]);
    return 2;
  }
  omp_set_num_threads(T);
  omp_set_dynamic(0);
  size_t bytes = (size_t)n * (size_t)n * sizeof(double);
  double *c = aligned_alloc(64, bytes); /* weft:c-alloc */
  double *a = aligned_alloc(64, bytes);
  double *b = aligned_alloc(64, bytes);
  if (!a || !b || !c) return 1;
  for (int i = 0; i < n * n; i++) {
    a[i] = (double)(i % 7);
    b[i] = (double)(i % 5);
    c[i] = 0.0;
  }
  if (dynamic)
    multiply_dynamic(n, c, a, b);
  else
    multiply_static(n, c, a, b);
  double sum = 0;
  for (int i = 0; i < n * n; i++) sum += c[i];
  printf("dgemm_schedule_omp %s N=%d T=%d sum=%.0f\n", mode, n, T, sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
