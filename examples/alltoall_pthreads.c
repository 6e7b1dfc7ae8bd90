/* alltoall_pthreads.c - all-to-all reduction (allreduce) (C + pthreads).
 *
 * Usage: alltoall_pthreads [T [N [R]]]    defaults: T=4 N=1024 R=4
 *   T threads (2..16); the main thread works as thread 0 and creates threads
 *   1..T-1. N bins (a multiple of 8*T, at most 8192), R rounds (1..65535).
 *   C = N / T is the chunk of bins each thread reduces.
 *
 * One round, as an allreduce done by reduce-scatter then allgather:
 *   1. thread t writes its partial vector part[t][0..N);            barrier
 *   2. reduce-scatter: for each bin i of its chunk [t*C, (t+1)*C), thread t
 *      sums part[0][i] + ... + part[T-1][i] (in thread order, so one 8-byte
 *      load per element) into total[i];                             barrier
 *   3. allgather: thread t sums the whole reduced vector total[0..N); barrier
 * Each thread keeps a checksum in its own 64-byte slot, which the main thread
 * reads after pthread_join.
 *
 * Expected matrices, writer row, reader column. e = doubles per granule:
 * e = 1 at --granularity 8, e = 8 at --granularity 64 (chunks are line
 * aligned since C is a multiple of 8). For every pair u != t:
 *
 *   raw[u][t]   = R * 2C / e       (t reads chunk t of part[u], and chunk u of total)
 *   rar[u][t]   = R * 2(C - C / e) (0 at granularity 8)
 *   inval[u][t] = (R - 1) * 2C / e (u rewrites chunk t of part[u] and chunk u of
 *                                   total, both read by t in the previous round)
 *   raw[t][0]  += 1  for t = 1..T-1   (main reads the result slots)
 *   the diagonal is 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 16
#define MAXN 8192

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double part[MAXT][MAXN];
static _Alignas(64) double total[MAXN];
static slot_t result[MAXT];
static pthread_barrier_t barrier;

static uintptr_t pack(int t, int T, int R, long N) {
  return (uintptr_t)t | (uintptr_t)T << 8 | (uintptr_t)R << 16 | (uintptr_t)N << 32;
}

static void *worker(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int t = (int)(a & 0xff), T = (int)(a >> 8 & 0xff), R = (int)(a >> 16 & 0xffff);
  long N = (long)(a >> 32);
  long C = N / T, lo = t * C, hi = lo + C;
  double check = 0.0;
  for (int r = 0; r < R; r++) {
    for (long i = 0; i < N; i++) part[t][i] = (double)((i * 7 + t * 3 + r) % 11);
    pthread_barrier_wait(&barrier);
    for (long i = lo; i < hi; i++) {
      double s = 0.0;
      for (int u = 0; u < T; u++) s += part[u][i];
      total[i] = s;
    }
    pthread_barrier_wait(&barrier);
    double g = 0.0;
    for (long i = 0; i < N; i++) g += total[i];
    check += g;
    pthread_barrier_wait(&barrier);
  }
  result[t].v = check;
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long N = argc > 2 ? atol(argv[2]) : 1024;
  int R = argc > 3 ? atoi(argv[3]) : 4;
  if (T < 2 || T > MAXT || N < 8L * T || N > MAXN || N % (8L * T) != 0 || R < 1 || R > 65535) {
    fprintf(stderr, "usage: %s [T 2..%d [N multiple of 8*T, <= %d [R 1..65535]]]\n", argv[0], MAXT,
            MAXN);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, (void *)pack(i, T, R, N)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)pack(0, T, R, N));
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  double sum = 0.0;
  for (int i = 0; i < T; i++) sum += result[i].v;
  pthread_barrier_destroy(&barrier);
  printf("alltoall_pthreads T=%d N=%ld R=%d checksum=%.6f\n", T, N, R, sum);
  return 0;
}
