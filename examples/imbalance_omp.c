/* imbalance_omp.c - an imbalanced parallel loop (C + OpenMP).
 *
 * Usage: imbalance_omp [T]                default: T=4
 *   T threads (2..16, N must be a multiple of 8*T) in one parallel region;
 *   omp_get_thread_num() is the weft thread id. N = IMB_N (default 1536) is a
 *   compile-time constant (-DIMB_N=... to change), because a size read at run
 *   time would reach the team through memory written by the main thread.
 *   C = N / T is the static block of each thread.
 *
 *   #pragma omp for schedule(static)      a[i] = f(i)             (balanced)
 *   #pragma omp for schedule(static)      prefix[i] = a[0] + ... + a[i]
 * The second loop is triangular: iteration i costs i+1 loads, so thread t
 * (iterations [t*C, (t+1)*C)) does about (2t+1)/T^2 of the work and the last
 * thread is the straggler. Thread t reads every element of the blocks of the
 * threads before it, once per iteration of its own block (C times). Each
 * thread keeps a checksum in its own 64-byte slot, which the main thread
 * reads after the parallel region.
 *
 * Expected matrices, writer row, reader column. e = doubles per granule:
 * e = 1 at --granularity 8, e = 8 at --granularity 64. For u < t:
 *
 *   raw[u][t] = C / e            (each granule of u's block, first time)
 *   rar[u][t] = C * C - C / e    (C reads per element, the rest are reuse)
 *   raw[t][0] += 1  for t = 1..T-1   (main reads the result slots)
 *   everything else is 0, inval included (every granule is written once).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef IMB_N
#define IMB_N 1536
#endif
#define MAXT 16

#if IMB_N % 8 != 0
#error "IMB_N must be a multiple of 8"
#endif

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double a[IMB_N];
static _Alignas(64) double prefix[IMB_N];
static slot_t result[MAXT];
static int team_size; /* written and read by the main thread only */

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  if (T < 2 || T > MAXT || IMB_N % (8 * T) != 0) {
    fprintf(stderr, "usage: %s [T 2..%d with %d a multiple of 8*T]\n", argv[0], MAXT, IMB_N);
    return 2;
  }
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    double check = 0.0;
    if (t == 0) team_size = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int i = 0; i < IMB_N; i++) a[i] = (double)((i * 11) % 13) * 0.25;
#pragma omp for schedule(static)
    for (int i = 0; i < IMB_N; i++) {
      double s = 0.0;
      for (int j = 0; j <= i; j++) s += a[j];
      prefix[i] = s;
      check += s;
    }
    result[t].v = check;
  }
  if (team_size != T) {
    fprintf(stderr, "imbalance_omp: got %d threads instead of %d\n", team_size, T);
    return 1;
  }
  double sum = 0.0;
  for (int i = 0; i < T; i++) sum += result[i].v;
  printf("imbalance_omp T=%d N=%d checksum=%.6f\n", T, IMB_N, sum);
  return 0;
}
