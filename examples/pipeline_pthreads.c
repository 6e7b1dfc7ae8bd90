/* pipeline_pthreads.c - producer/consumer pipeline (C + pthreads).
 *
 * Usage: pipeline_pthreads [T [N [K]]]    defaults: T=4 N=1024 K=16
 *   T stages = T threads (2..16); the main thread is stage 0 (the producer)
 *   and creates stages 1..T-1; stage T-1 is the consumer. K items (1..65535)
 *   of N doubles each (N multiple of 8, at most 8192) flow down the pipeline.
 *
 * Instead of a racing queue the pipeline advances in lock step: at step k
 * (k = 0 .. K+T-2) stage s handles item j = k - s if 0 <= j < K, then all
 * stages meet at a barrier. Stage s writes item j into its output buffer
 * out[s][j % 2] (double buffering: while stage s+1 reads item j, stage s
 * writes item j+1 into the other buffer):
 *   stage 0      produces:  out[0][j%2][i] = f(j, i)
 *   stage 0<s<T-1 filters:  y = 0.5*y + in[i]; out[s][j%2][i] = y  (a
 *                           recurrence: one 8-byte load per element, never
 *                           vectorized)
 *   stage T-1    consumes:  sum += in[i]
 * where in = out[s-1][j%2]. Each stage keeps a checksum in its own 64-byte
 * slot, which the main thread reads after pthread_join.
 *
 * Expected matrices, writer row, reader column. e = doubles per granule:
 * e = 1 at --granularity 8, e = 8 at --granularity 64. For s = 1..T-1:
 *
 *   raw[s-1][s]   = K * N / e           (each item read once by the next stage)
 *   rar[s-1][s]   = K * (N - N / e)     (0 at granularity 8)
 *   inval[s-1][s] = max(K - 2, 0) * N / e
 *                   (item j >= 2 overwrites item j-2, which stage s read)
 *   raw[t][0]    += 1  for t = 1..T-1   (main reads the result slots)
 *   every other entry is 0.
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

static _Alignas(64) double out[MAXT][2][MAXN];
static slot_t result[MAXT];
static pthread_barrier_t barrier;

static uintptr_t pack(int t, int T, int K, long N) {
  return (uintptr_t)t | (uintptr_t)T << 8 | (uintptr_t)K << 16 | (uintptr_t)N << 32;
}

static void *stage(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int s = (int)(a & 0xff), T = (int)(a >> 8 & 0xff), K = (int)(a >> 16 & 0xffff);
  long N = (long)(a >> 32);
  double check = 0.0;
  for (int k = 0; k < K + T - 1; k++) {
    int j = k - s;
    if (j >= 0 && j < K) {
      if (s == 0) {
        double *o = out[0][j & 1];
        for (long i = 0; i < N; i++) o[i] = (double)((i * 5 + j * 3) & 31);
        check += (double)j;
      } else if (s < T - 1) {
        const double *in = out[s - 1][j & 1];
        double *o = out[s][j & 1];
        double y = 0.0;
        for (long i = 0; i < N; i++) {
          y = 0.5 * y + in[i];
          o[i] = y;
        }
        check += y;
      } else {
        const double *in = out[s - 1][j & 1];
        double sum = 0.0;
        for (long i = 0; i < N; i++) sum += in[i];
        check += sum;
      }
    }
    pthread_barrier_wait(&barrier);
  }
  result[s].v = check;
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long N = argc > 2 ? atol(argv[2]) : 1024;
  int K = argc > 3 ? atoi(argv[3]) : 16;
  if (T < 2 || T > MAXT || N < 8 || N > MAXN || N % 8 != 0 || K < 1 || K > 65535) {
    fprintf(stderr, "usage: %s [T 2..%d [N multiple of 8, <= %d [K 1..65535]]]\n", argv[0], MAXT,
            MAXN);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, stage, (void *)pack(i, T, K, N)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  stage((void *)pack(0, T, K, N));
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  double total = 0.0;
  for (int i = 0; i < T; i++) total += result[i].v;
  pthread_barrier_destroy(&barrier);
  printf("pipeline_pthreads T=%d N=%ld K=%d checksum=%.6f\n", T, N, K, total);
  return 0;
}
