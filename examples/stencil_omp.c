/* stencil_omp.c - 2D Jacobi stencil with row blocks (C + OpenMP).
 *
 * Usage: stencil_omp [T]                  default: T=4
 *   T threads (2..16, H must be a multiple of T with H/T >= 2) in one parallel
 *   region; omp_get_thread_num() is the weft thread id. Grid H = STENCIL_H
 *   rows by M = STENCIL_M columns, S = STENCIL_S sweeps: compile-time
 *   constants (defaults 48, 256, 8; -DSTENCIL_H=... to change), because a
 *   size read at run time would reach the team through memory written by the
 *   main thread.
 *
 * Same algorithm as stencil_pthreads.c, with the rows distributed by
 * `#pragma omp for schedule(static)` over r = 0..H-1 (blocks of H/T rows in
 * thread order with both libgomp and libomp, since T divides H); the loop's
 * implicit barrier separates the phases. Init: each thread writes its rows of
 * both grids. Sweep s reads X = (s even ? A : B), writes Y = the other:
 *     Y[r][c] = 0.25 * (X[r-1][c] + X[r+1][c] + X[r][c-1] + X[r][c+1])
 * for interior rows and columns c = 1..M-2, summing the new values into a
 * checksum. Each thread keeps its checksum in its own 64-byte slot, which the
 * main thread reads after the parallel region.
 *
 * Expected matrices, writer row, reader column. L = M-2 at --granularity 8,
 * L = M/8 at --granularity 64. For t = 1..T-1, in both directions:
 *
 *   raw[t-1][t] = raw[t][t-1]     = S * L
 *   rar[t-1][t] = rar[t][t-1]     = S * (M - 2 - L)   (0 at granularity 8)
 *   inval[t-1][t] = inval[t][t-1] = (S - 1) * L
 *   raw[t][0]  += 1  for t = 1..T-1   (main reads the result slots)
 *   every other entry is 0.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef STENCIL_H
#define STENCIL_H 48
#endif
#ifndef STENCIL_M
#define STENCIL_M 256
#endif
#ifndef STENCIL_S
#define STENCIL_S 8
#endif
#define MAXT 16

#if STENCIL_M % 8 != 0 || STENCIL_M < 8
#error "STENCIL_M must be a multiple of 8"
#endif

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double A[STENCIL_H][STENCIL_M];
static _Alignas(64) double B[STENCIL_H][STENCIL_M];
static slot_t result[MAXT];
static int team_size; /* written and read by the main thread only */

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  if (T < 2 || T > MAXT || STENCIL_H % T != 0 || STENCIL_H / T < 2) {
    fprintf(stderr, "usage: %s [T 2..%d dividing %d into blocks of >= 2 rows]\n", argv[0], MAXT,
            STENCIL_H);
    return 2;
  }
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    double check = 0.0;
    if (t == 0) team_size = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int r = 0; r < STENCIL_H; r++) {
      for (int c = 0; c < STENCIL_M; c++) {
        double v = (r == 0 || c == 0 || c == STENCIL_M - 1) ? 1.0 : 0.0;
        A[r][c] = v;
        B[r][c] = v;
      }
    }
    for (int s = 0; s < STENCIL_S; s++) {
      double(*X)[STENCIL_M] = (s & 1) ? B : A;
      double(*Y)[STENCIL_M] = (s & 1) ? A : B;
#pragma omp for schedule(static)
      for (int r = 0; r < STENCIL_H; r++) {
        if (r == 0 || r == STENCIL_H - 1) continue;
        for (int c = 1; c < STENCIL_M - 1; c++) {
          double v = 0.25 * (X[r - 1][c] + X[r + 1][c] + X[r][c - 1] + X[r][c + 1]);
          Y[r][c] = v;
          check += v;
        }
      }
    }
    result[t].v = check;
  }
  if (team_size != T) {
    fprintf(stderr, "stencil_omp: got %d threads instead of %d\n", team_size, T);
    return 1;
  }
  double sum = 0.0;
  for (int i = 0; i < T; i++) sum += result[i].v;
  printf("stencil_omp T=%d H=%d M=%d S=%d checksum=%.6f\n", T, STENCIL_H, STENCIL_M, STENCIL_S,
         sum);
  return 0;
}
