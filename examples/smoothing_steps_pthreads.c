/* smoothing_steps_pthreads.c - time-stepped smoothing of a signal with a
 * table of filter taps, and two per-step diagnostics (C + pthreads): which
 * memory findings pay, and which do not.
 *
 * Usage: smoothing_steps_pthreads [T [N [K [S]]]]  defaults T=4 N=128 K=8 S=6
 *   T threads (1..8), the main thread is thread 0 and creates 1..T-1; each
 *   thread owns a signal of N samples (a multiple of 4, 16..4096) plus K - 1
 *   boundary samples, K taps (1..32) and N particles; S time steps (3..1000).
 *
 * Each time step, every thread, on its own data:
 *   smooth:   out[i] = sum_k taps[k] * sig[i + k], i < N, k < K. The taps
 *             are reloaded for every sample, K loads apart, and each sample
 *             for K outputs: within one step every load of the line reads
 *             data loaded at most K samples earlier, which registers or L1
 *             hold (weft:reuse-in-step): loads 2NK, addresses K + N + K - 1.
 *   relax:    sig[i] += 0.5 * (out[i] - sig[i]): each sample of sig and out
 *             is loaded once per step; its only reuse is the next time step's
 *             (weft:reuse-across-steps).
 *   snapshot: snap[j] = sig[4 * j], j < N / 4: a 32-byte stride on 8-byte
 *             loads, N / 4 per step, N / 4 * S in all (192 by default: below
 *             the 256 accesses a stride finding needs; weft:stride-below).
 *   energy:   the sum of v * v over the N particles {x, v}: a 16-byte stride
 *             on 8-byte loads, N * S loads in all (768 by default;
 *             weft:stride-above).
 *   barrier (the threads advance in step, like a solver's time loop).
 * Each thread keeps its result in a 64-byte slot of its own, which the main
 * thread reads after pthread_join.
 *
 * Communication: only raw[t][0] += 1 for t = 1..T-1 (main reads the slots).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 8
#define MAXN 4096
#define MAXK 32

typedef struct {
  double x, v;
} particle_t;

typedef struct {
  _Alignas(64) double sig[MAXN + MAXK];
  double out[MAXN];
  double taps[MAXK];
  double snap[MAXN / 4];
  particle_t particles[MAXN];
  double result;
} work_t;

static work_t work[MAXT];
static pthread_barrier_t barrier;
static int T, N, K, S;

/* out may alias taps and sig as far as the compiler knows: it reloads them. */
__attribute__((noinline)) static void smooth(const double *taps, const double *sig, double *out,
                                             int n, int k_count) {
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    for (int k = 0; k < k_count; k++) acc += taps[k] * sig[i + k]; /* weft:reuse-in-step */
    out[i] = acc;
  }
}

__attribute__((noinline)) static void relax(double *sig, const double *out, int n) {
  for (int i = 0; i < n; i++) sig[i] += 0.5 * (out[i] - sig[i]); /* weft:reuse-across-steps */
}

__attribute__((noinline)) static void snapshot(double *snap, const double *sig, int n) {
  for (int j = 0; j < n / 4; j++) snap[j] = sig[4 * j]; /* weft:stride-below */
}

__attribute__((noinline)) static double energy(const particle_t *p, int n) {
  double e = 0.0;
  for (int i = 0; i < n; i++) e += p[i].v * p[i].v; /* weft:stride-above */
  return e;
}

static void *worker(void *arg) {
  work_t *w = arg;
  for (int i = 0; i < N + K - 1; i++) w->sig[i] = (double)(i % 17);
  for (int k = 0; k < K; k++) w->taps[k] = 1.0 / (double)(k + 2);
  for (int i = 0; i < N; i++) {
    w->particles[i].x = (double)i;
    w->particles[i].v = (double)(i % 5) * 0.1;
  }
  double e = 0.0;
  for (int s = 0; s < S; s++) {
    smooth(w->taps, w->sig, w->out, N, K);
    relax(w->sig, w->out, N);
    snapshot(w->snap, w->sig, N);
    e += energy(w->particles, N);
    pthread_barrier_wait(&barrier);
  }
  w->result = e + w->snap[N / 4 - 1];
  return NULL;
}

int main(int argc, char **argv) {
  T = argc > 1 ? atoi(argv[1]) : 4;
  N = argc > 2 ? atoi(argv[2]) : 128;
  K = argc > 3 ? atoi(argv[3]) : 8;
  S = argc > 4 ? atoi(argv[4]) : 6;
  if (T < 1 || T > MAXT || N < 16 || N > MAXN || N % 4 != 0 || K < 1 || K > MAXK || S < 3 ||
      S > 1000) {
    fprintf(stderr, "usage: %s [T 1..%d [N 16..%d, multiple of 4 [K 1..%d [S 3..1000]]]]\n",
            argv[0], MAXT, MAXN, MAXK);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, &work[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker(&work[0]);
  double total = work[0].result;
  for (int t = 1; t < T; t++) {
    pthread_join(tid[t], NULL);
    total += work[t].result;
  }
  pthread_barrier_destroy(&barrier);
  printf("smoothing_steps_pthreads T=%d N=%d K=%d S=%d total=%.6f\n", T, N, K, S, total);
  return 0;
}
