/* ring_omp.c - neighbour exchange on a ring (C + OpenMP).
 *
 * Usage: ring_omp [T]                     default: T=4
 *   T threads (2..16) in one parallel region; omp_get_thread_num() is the weft
 *   thread id (the main thread is the master, thread 0; the runtime creates
 *   the workers in team order).
 *   N = RING_N doubles per block and R = RING_R rounds are compile-time
 *   constants (defaults 1024 and 4, change them with -DRING_N=... -DRING_R=...):
 *   a size read at run time would have to reach the team through memory the
 *   main thread writes (a global or the outlined function's data block), which
 *   adds communication whose count depends on how often the compiler reloads
 *   it.
 *
 * Same algorithm as ring_pthreads.c: each thread owns a 64-byte-aligned block
 * of N doubles; per round thread t writes its block, `omp barrier`, reads the
 * block of u = (t+1) % T twice (mean, then variance), `omp barrier`. At the
 * end thread t stores its result in its own 64-byte slot; the main thread
 * reads the slots after the parallel region.
 *
 * Expected matrices, writer row, reader column. e = doubles per granule:
 * e = 1 at --granularity 8, e = 8 at --granularity 64. For every t in 0..T-1,
 * u = (t+1) % T:
 *
 *   raw[u][t]   = R * N / e
 *   rar[u][t]   = R * (2N - N / e)
 *   inval[u][t] = (R - 1) * N / e
 *   raw[t][0]  += 1  for t = 1..T-1   (main reads the result slots)
 *   every other entry is 0.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef RING_N
#define RING_N 1024
#endif
#ifndef RING_R
#define RING_R 4
#endif
#define MAXT 16

#if RING_N % 8 != 0
#error "RING_N must be a multiple of 8"
#endif

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double block[MAXT][RING_N];
static slot_t result[MAXT];
static int team_size; /* written and read by the main thread only */

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  if (T < 2 || T > MAXT) {
    fprintf(stderr, "usage: %s [T 2..%d]\n", argv[0], MAXT);
    return 2;
  }
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int u = (t + 1) % nt;
    double acc = 0.0;
    if (t == 0) team_size = nt;
    for (int r = 0; r < RING_R; r++) {
      for (long i = 0; i < RING_N; i++) block[t][i] = (double)((i * 13 + t * 7 + r) & 15);
#pragma omp barrier
      double s = 0.0;
      for (long i = 0; i < RING_N; i++) s += block[u][i];
      double m = s / (double)RING_N, v = 0.0;
      for (long i = 0; i < RING_N; i++) {
        double d = block[u][i] - m;
        v += d * d;
      }
      acc += m + v / (double)RING_N;
#pragma omp barrier
    }
    result[t].v = acc;
  }
  if (team_size != T) {
    fprintf(stderr, "ring_omp: got %d threads instead of %d\n", team_size, T);
    return 1;
  }
  double total = 0.0;
  for (int i = 0; i < T; i++) total += result[i].v;
  printf("ring_omp T=%d N=%d R=%d checksum=%.6f\n", T, RING_N, RING_R, total);
  return 0;
}
