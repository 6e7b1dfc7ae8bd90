/* false_sharing_pairs_pthreads.c - adjacent per-thread counters handed over
 * between every ordered pair of threads (C + pthreads).
 *
 * Usage: false_sharing_pairs_pthreads [packed|padded [T [R [K]]]]
 *                                          defaults: packed T=4 R=10 K=100
 *   T threads (2..8); the main thread works as thread 0. Thread t owns the
 *   counter c[t] (a volatile long: each increment is one 8-byte load and one
 *   8-byte store, on the line marked "false-sharing" below):
 *     packed: the T counters share one 64-byte line (false sharing);
 *     padded: each counter has its own 64-byte line.
 *   The threads take turns (a barrier before every turn); the thread whose
 *   turn it is increments its counter K times. The order of turns walks a
 *   closed Eulerian circuit of the complete directed graph on the T threads
 *   (every ordered pair a -> b, a != b, exactly once, from 0 back to 0), R
 *   times, then thread 0 takes one last turn.
 *
 * Expected (packed, line size 64): each turn's first load finds the line
 * last written by the previous turn's thread, which wrote other bytes: one
 * false-sharing event, writer = previous thread, reader = this thread. So
 * every ordered pair (a, b) has exactly R events, all at the increment line,
 * and no true sharing. The final reads by the main thread are its own (it
 * wrote last). Communication at 8-byte granularity: none at all.
 * padded: no event of any kind.
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
static int order[MAXT * (MAXT - 1) + 1]; /* the circuit's vertices */
static int turns;                        /* R * T(T-1) + 1 */
static int edges;                        /* T(T-1) */
static int threads, use_padded;
static long increments;

/* Hierholzer's algorithm on the complete digraph, from vertex 0; the next
 * unused out-edge of v goes to the smallest unused target. */
static void build_circuit(int T) {
  int next_target[MAXT];
  int stack[MAXT * (MAXT - 1) + 1], top = 0, n = 0;
  for (int v = 0; v < T; v++) next_target[v] = 0;
  stack[top++] = 0;
  while (top > 0) {
    int v = stack[top - 1];
    while (next_target[v] < T && next_target[v] == v) next_target[v]++;
    if (next_target[v] < T) {
      int w = next_target[v]++;
      stack[top++] = w;
    } else {
      order[n++] = v;
      top--;
    }
  }
  /* n = T(T-1) + 1, reversed circuit from 0 to 0: reverse it. */
  for (int i = 0; i < n / 2; i++) {
    int tmp = order[i];
    order[i] = order[n - 1 - i];
    order[n - 1 - i] = tmp;
  }
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  volatile long *c = use_padded ? &padded[t].v : &packed[t];
  for (int k = 0; k < turns; k++) {
    pthread_barrier_wait(&barrier);
    if (order[k % edges] == t) {
      for (long i = 0; i < increments; i++) *c = *c + 1; /* weft:false-sharing */
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "packed";
  int T = argc > 2 ? atoi(argv[2]) : 4;
  int R = argc > 3 ? atoi(argv[3]) : 10;
  long K = argc > 4 ? atol(argv[4]) : 100;
  use_padded = strcmp(mode, "padded") == 0;
  if ((!use_padded && strcmp(mode, "packed") != 0) || T < 2 || T > MAXT || R < 1 || R > 100000 ||
      K < 1) {
    fprintf(stderr, "usage: %s [packed|padded [T 2..%d [R [K]]]]\n", argv[0], MAXT);
    return 2;
  }
  threads = T;
  increments = K;
  build_circuit(T);
  edges = T * (T - 1);
  turns = R * edges + 1;
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, (void *)(intptr_t)i) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  long total = 0;
  for (int i = 0; i < T; i++) total += use_padded ? padded[i].v : packed[i];
  pthread_barrier_destroy(&barrier);
  printf("false_sharing_pairs_pthreads %s T=%d R=%d K=%ld total=%ld\n", mode, T, R, K, total);
  return total == (long)turns * K ? 0 : 1;
}
