/* ring_pthreads.c - neighbour exchange on a ring (C + pthreads).
 *
 * Usage: ring_pthreads [T [N [R]]]        defaults: T=4 N=1024 R=4
 *   T threads (2..16). The main thread works as thread 0 and creates threads
 *   1..T-1, so the weft thread id of every worker is its index t.
 *   N doubles per block (multiple of 8, at most 8192), R rounds (1..65535).
 *
 * Each thread owns a 64-byte-aligned block of N doubles. One round:
 *   1. thread t writes its block;                                 barrier
 *   2. thread t reads the block of its right neighbour u = (t+1) % T twice:
 *      a sum (mean), then a sum of squared deviations (variance);  barrier
 * At the end thread t stores its result in its own 64-byte slot, which the
 * main thread reads after pthread_join (the main thread's own slot is local).
 * The worker's parameters travel in the pthread argument value itself, so the
 * main thread writes nothing that the workers read.
 *
 * Expected matrices, writer row, reader column. e = doubles per granule:
 * e = 1 at --granularity 8, e = 8 at --granularity 64 (blocks are line
 * aligned and N is a multiple of 8). For every t in 0..T-1, u = (t+1) % T:
 *
 *   raw[u][t]   = R * N / e           (first read of each granule per round)
 *   rar[u][t]   = R * (2N - N / e)    (the other reads: 0 + N at granularity 8)
 *   inval[u][t] = (R - 1) * N / e     (u rewrites its block after t read it)
 *   raw[t][0]  += 1  for t = 1..T-1    (main reads the result slots)
 *   every other entry is 0.
 *
 * Example T=4 N=1024 R=4, granularity 8: raw[1][0] = 4097, raw[2][1] = 4096,
 * rar[2][1] = 4096, inval[2][1] = 3072. Granularity 64: raw[1][0] = 513,
 * raw[2][1] = 512, rar[2][1] = 7680, inval[2][1] = 384.
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

static _Alignas(64) double block[MAXT][MAXN];
static slot_t result[MAXT];
static pthread_barrier_t barrier;

/* worker parameters packed into the argument value */
static uintptr_t pack(int t, int T, int R, long N) {
  return (uintptr_t)t | (uintptr_t)T << 8 | (uintptr_t)R << 16 | (uintptr_t)N << 32;
}

static void *worker(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int t = (int)(a & 0xff), T = (int)(a >> 8 & 0xff), R = (int)(a >> 16 & 0xffff);
  long N = (long)(a >> 32);
  int u = (t + 1) % T;
  double acc = 0.0;
  for (int r = 0; r < R; r++) {
    for (long i = 0; i < N; i++) block[t][i] = (double)((i * 13 + t * 7 + r) & 15);
    pthread_barrier_wait(&barrier);
    double s = 0.0;
    for (long i = 0; i < N; i++) s += block[u][i];
    double m = s / (double)N, v = 0.0;
    for (long i = 0; i < N; i++) {
      double d = block[u][i] - m;
      v += d * d;
    }
    acc += m + v / (double)N;
    pthread_barrier_wait(&barrier);
  }
  result[t].v = acc;
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long N = argc > 2 ? atol(argv[2]) : 1024;
  int R = argc > 3 ? atoi(argv[3]) : 4;
  if (T < 2 || T > MAXT || N < 8 || N > MAXN || N % 8 != 0 || R < 1 || R > 65535) {
    fprintf(stderr, "usage: %s [T 2..%d [N multiple of 8, <= %d [R 1..65535]]]\n", argv[0], MAXT,
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
  double total = 0.0;
  for (int i = 0; i < T; i++) total += result[i].v;
  pthread_barrier_destroy(&barrier);
  printf("ring_pthreads T=%d N=%ld R=%d checksum=%.6f\n", T, N, R, total);
  return 0;
}
