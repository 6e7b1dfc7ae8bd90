/* false_sharing_pthreads.c - per-thread counters, adjacent vs padded (C + pthreads).
 *
 * Usage: false_sharing_pthreads [packed|padded [T [R [K]]]]
 *                                        defaults: packed T=4 R=100 K=1000
 *   T threads (2..8); the main thread works as thread 0 and creates threads
 *   1..T-1. Thread t owns the counter c[t] (a volatile long, so every
 *   increment is one 8-byte load and one 8-byte store):
 *     packed: c[t] = packed[t], the T counters share one 64-byte line;
 *     padded: c[t] = padded[t].v, each counter in its own 64-byte line.
 *   R rounds (1..32767); in each round the threads take turns in order
 *   0, 1, ..., T-1 (a barrier before every turn) and the thread whose turn it
 *   is increments its counter K times (1..2^31-1). Taking turns makes the
 *   order of the accesses, and so the counts, deterministic: with free-running
 *   threads the line would ping-pong at every increment in a timing-dependent
 *   order. After pthread_join the main thread reads every counter once.
 *
 * Expected matrices, writer row, reader column.
 *
 * padded (granularity 8 or 64), and packed at granularity 8: the counters are
 * in separate granules, every access of a thread to its own counter is local:
 *   raw[t][0] = 1  for t = 1..T-1    (main reads the counters)
 *   everything else 0.
 *
 * packed at granularity 64: the T counters are one granule (false sharing).
 * The first read of each turn sees the previous turn's thread as last writer
 * and the first write of the turn invalidates its copy; the other K-1
 * increments are local. Turns 0..T-1 of every round, plus the turn of thread
 * 0 in rounds 1..R-1 after thread T-1, plus main's final reads:
 *   raw[t-1][t] = R            for t = 1..T-1
 *   raw[T-1][0] = (R-1) + 1 = R  (the last +1 is main's first final read)
 *   rar[T-1][0] = T - 1          (main's other final reads)
 *   inval[t][t-1] = R          for t = 1..T-1
 *   inval[0][T-1] = R - 1
 *   everything else 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 8

typedef struct {
  _Alignas(64) volatile long v;
} padded_t;

static _Alignas(64) volatile long packed[MAXT]; /* exactly one 64-byte line */
static padded_t padded[MAXT];
static pthread_barrier_t barrier;

static uintptr_t pack(int t, int T, int use_padded, int R, long K) {
  return (uintptr_t)t | (uintptr_t)T << 8 | (uintptr_t)use_padded << 16 | (uintptr_t)R << 17 |
         (uintptr_t)K << 32;
}

static void *worker(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int t = (int)(a & 0xff), T = (int)(a >> 8 & 0xff), use_padded = (int)(a >> 16 & 1);
  int R = (int)(a >> 17 & 0x7fff);
  long K = (long)(a >> 32);
  volatile long *c = use_padded ? &padded[t].v : &packed[t];
  for (int r = 0; r < R; r++) {
    for (int s = 0; s < T; s++) {
      pthread_barrier_wait(&barrier);
      if (s == t) {
        for (long k = 0; k < K; k++) *c = *c + 1;
      }
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "packed";
  int T = argc > 2 ? atoi(argv[2]) : 4;
  int R = argc > 3 ? atoi(argv[3]) : 100;
  long K = argc > 4 ? atol(argv[4]) : 1000;
  int use_padded = strcmp(mode, "padded") == 0;
  if ((!use_padded && strcmp(mode, "packed") != 0) || T < 2 || T > MAXT || R < 1 || R > 32767 ||
      K < 1 || K > 0x7fffffffL) {
    fprintf(stderr, "usage: %s [packed|padded [T 2..%d [R 1..32767 [K]]]]\n", argv[0], MAXT);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, (void *)pack(i, T, use_padded, R, K)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)pack(0, T, use_padded, R, K));
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  long total = 0;
  for (int i = 0; i < T; i++) total += use_padded ? padded[i].v : packed[i];
  pthread_barrier_destroy(&barrier);
  printf("false_sharing_pthreads %s T=%d R=%d K=%ld total=%ld\n", use_padded ? "padded" : "packed",
         T, R, K, total);
  return 0;
}
