/* heat_steps_pthreads.c - 1-D heat conduction with a conductance per face
 * (C + pthreads): the main thread initialises the conductances, each worker
 * reads its part once while it first touches its cells, then reads it again
 * in every time step. The communication reuse ratio (CRR) of the time-step
 * loop is the point (docs/metrics.md, "CRR"): the loop re-reads data whose
 * true communication happened in the first-touch loop.
 *
 * Usage: heat_steps_pthreads [W [N [S]]]  defaults W=4 N=4096 S=10
 *   W workers (2..16): weft threads 1..W; the main thread (thread 0) only
 *   initialises, creates, joins and sums. N cells, a multiple of 8 * W, at
 *   most 65536 (each worker owns B = N / W cells, L = B / 8 lines of 64
 *   bytes). S time steps (1..1000).
 *
 * k[i] is the conductance of the face between cells i and i + 1 (i < N - 1),
 * written by the main thread before it creates the workers and never again.
 * Worker w owns the cells [lo, hi) = [(w - 1) B, w B) of the two temperature
 * buffers u and v.
 *
 *   first_touch: for i in [lo, hi): u[i] = v[i] = (i == 0); sum += k[i]
 *                (one load of each k[i] of the block; weft:first-touch).
 *   barrier
 *   relax, S steps: x = (s even ? u : v), y = the other;
 *     for i in [lo, hi) (weft:re-read):
 *       d = 0
 *       if (i > 0)     d += k[i - 1] * (x[i - 1] - x[i])
 *       if (i < N - 1) d += k[i] * (x[i + 1] - x[i])
 *       y[i] = x[i] + 0.2 * d; check += y[i]
 *     barrier
 * The floating-point sums keep both loops scalar: one load per k[] above.
 * The worker keeps sum + check in a 64-byte slot of its own, which the main
 * thread reads after pthread_join.
 *
 * Communication of the conductances, pair (0, w), at --granularity 64:
 *   first_touch reads the L lines of its block, 8 loads each:
 *     raw = L, rar = B - L                               (CRR 7)
 *   relax, per step: k[i - 1] for i > 0 and k[i] for i < N - 1: 2B loads,
 *     2B - 1 for the first worker (no i - 1 at i = 0) and the last (no k[N - 1]).
 *     Every line of the block was received in first_touch; the line before
 *     the block (k[lo - 1], workers 2..W) is first read here, in step 0:
 *       w = 1:        raw = 0, rar = (2B - 1) S
 *       w = 2..W-1:   raw = 1, rar = 2BS - 1
 *       w = W:        raw = 1, rar = (2B - 1) S - 1
 *     and relax re-reads L lines whose true communication happened in
 *     first_touch (borrowed = L), so its CRR is rar / (raw + L):
 *       (2B - 1) S / L,  (2BS - 1) / (L + 1),  ((2B - 1) S - 1) / (L + 1)
 *     (defaults: 159.92, 158.75, 158.67), where rar / raw gives 0 for the
 *     first worker, 20479 for the middle ones and 20469 for the last.
 *   The whole program borrows nothing (every true communication is in it):
 *     raw + borrowed = L for w = 1, L + 1 for the others, and its CRR is
 *     (B - L + relax's rar) / that (defaults: 166.92, 165.70, 165.62).
 * Neighbours: in each step worker w reads x[lo - 1] (w > 1) and x[hi]
 * (w < W) once, written by w - 1 and w + 1 in the step before (or in
 * first_touch): raw[w-1][w] = raw[w+1][w] = S in relax, no reuse.
 * Main reads the W result slots: raw[w][0] = 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXW 16
#define MAXN 65536
#define DT 0.2

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double k[MAXN];
static _Alignas(64) double u[MAXN];
static _Alignas(64) double v[MAXN];
static slot_t result[MAXW + 1];
static pthread_barrier_t barrier;

static uintptr_t pack(int w, int W, int N, int S) {
  return (uintptr_t)w | (uintptr_t)W << 8 | (uintptr_t)N << 16 | (uintptr_t)S << 40;
}

/* The worker's first pass over its cells: it writes them first (first
 * touch) and reads its conductances once. */
__attribute__((noinline)) static double first_touch(int lo, int hi) {
  double sum = 0.0;
  for (int i = lo; i < hi; i++) {
    u[i] = i == 0 ? 1.0 : 0.0;
    v[i] = u[i];
    sum += k[i]; /* weft:first-touch */
  }
  return sum;
}

/* S explicit time steps over the worker's cells; the buffers alternate. */
__attribute__((noinline)) static double relax(int lo, int hi, int n, int steps) {
  double check = 0.0;
  for (int s = 0; s < steps; s++) {
    const double *x = (s & 1) ? v : u;
    double *y = (s & 1) ? u : v;
    for (int i = lo; i < hi; i++) {
      double d = 0.0;
      if (i > 0) d += k[i - 1] * (x[i - 1] - x[i]); /* weft:re-read */
      if (i < n - 1) d += k[i] * (x[i + 1] - x[i]);
      y[i] = x[i] + DT * d;
      check += y[i];
    }
    pthread_barrier_wait(&barrier); /* weft:step-barrier */
  }
  return check;
}

static void *worker(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int w = (int)(a & 0xff), W = (int)(a >> 8 & 0xff), N = (int)(a >> 16 & 0xffffff);
  int S = (int)(a >> 40 & 0xffff);
  int B = N / W, lo = (w - 1) * B, hi = lo + B;
  double sum = first_touch(lo, hi);
  pthread_barrier_wait(&barrier); /* weft:first-touch-barrier */
  result[w].v = sum + relax(lo, hi, N, S);
  return NULL;
}

int main(int argc, char **argv) {
  int W = argc > 1 ? atoi(argv[1]) : 4;
  int N = argc > 2 ? atoi(argv[2]) : 4096;
  int S = argc > 3 ? atoi(argv[3]) : 10;
  if (W < 2 || W > MAXW || N < 8 * W || N > MAXN || N % (8 * W) != 0 || S < 1 || S > 1000) {
    fprintf(stderr, "usage: %s [W 2..%d [N multiple of 8 W, <= %d [S 1..1000]]]\n", argv[0], MAXW,
            MAXN);
    return 2;
  }
  for (int i = 0; i < N; i++) k[i] = i < N - 1 ? 0.5 + 0.5 * (double)(i % 7) / 6.0 : 0.0;
  pthread_barrier_init(&barrier, NULL, (unsigned)W);
  pthread_t tid[MAXW + 1];
  for (int w = 1; w <= W; w++) {
    if (pthread_create(&tid[w], NULL, worker, (void *)pack(w, W, N, S)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int w = 1; w <= W; w++) pthread_join(tid[w], NULL);
  double total = 0.0;
  for (int w = 1; w <= W; w++) total += result[w].v;
  pthread_barrier_destroy(&barrier);
  printf("heat_steps_pthreads W=%d N=%d S=%d checksum=%.6f\n", W, N, S, total);
  return 0;
}
