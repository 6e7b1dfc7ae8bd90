/* streamcluster_hybrid_barrier_pthreads.c - a streamcluster-like gain loop between
 * spin-then-block barriers, C + pthreads.
 *
 * Usage: streamcluster_hybrid_barrier_pthreads    (no arguments: everything is fixed)
 *
 * PARSEC's streamcluster and fluidanimate replace pthread_barrier_wait by
 * their own barrier (`#define pthread_barrier_wait parsec_barrier_wait`):
 * a thread that is not the last spins for a while on the barrier's
 * generation, and only then blocks on a condition variable; the last one
 * bumps the generation and broadcasts. Whether a thread leaves while
 * spinning or after blocking depends on timing. The program is not
 * annotated: weft recognises the barrier from the spinning on the
 * generation, blocked or not (docs/metrics.md, "Spin waits").
 *
 * The main thread creates P = 4 workers (weft threads 1..4) and joins
 * them. N = 2048 points of D = 8 coordinates, filled by the main thread;
 * worker k owns points [k N/P, (k + 1) N/P). Each of ITERS = 10 iterations
 * evaluates opening a candidate center: every worker walks its points and
 * re-evaluates those the cheap test cannot settle:
 *     if (needs_exact_distance(i, it))   <- the marked line
 *       gain += exact_gain(i, center)    (REPS = 8 distance evaluations)
 * needs_exact_distance(i, it) is kept out of line; it leaves 1/8, 6/8,
 * 2/8 and 3/8 of the points of workers 0..3 to the exact evaluation (64,
 * 384, 128 and 192 points per iteration): worker 1 (weft thread 2) is the
 * straggler.
 *
 * Each iteration ends at one pthread_barrier_wait call (the hybrid
 * barrier). The first episode teaches weft the generation flag and forms
 * no instance: the section has ITERS - 1 = 9 instances, the first spanning
 * iterations 0 and 1.
 *
 * Expected:
 *   - one parallel section at the barrier call (marked with the section
 *     comment: weft names an inlined barrier by its call), 9 instances, the
 *     4 workers in each;
 *   - weft thread 2 the busiest; the top cause the exact-distance test (the
 *     line marked with the top-cause comment) under both sources.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define P 4
#define N 2048
#define D 8
#define ITERS 10
#define REPS 8
#define SPIN_LIMIT 2000

typedef struct {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int count;
  int parties;
  _Alignas(64) atomic_uint generation;
} parsec_barrier_t;

static int parsec_barrier_wait(parsec_barrier_t *b) {
  pthread_mutex_lock(&b->mutex);
  const unsigned gen = atomic_load_explicit(&b->generation, memory_order_relaxed);
  if (++b->count == b->parties) {
    b->count = 0;
    atomic_store_explicit(&b->generation, gen + 1, memory_order_release);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->mutex);
    return 1;
  }
  pthread_mutex_unlock(&b->mutex);
  /* Spin first: most waits are short on a dedicated machine. */
  for (int i = 0; i < SPIN_LIMIT; i++) {
    if (atomic_load_explicit(&b->generation, memory_order_acquire) != gen) return 0;
    __builtin_ia32_pause();
  }
  pthread_mutex_lock(&b->mutex);
  while (atomic_load_explicit(&b->generation, memory_order_acquire) == gen)
    pthread_cond_wait(&b->cond, &b->mutex);
  pthread_mutex_unlock(&b->mutex);
  return 0;
}

/* streamcluster's redefinition, which hides the barrier from interposers. */
#define pthread_barrier_t parsec_barrier_t
#define pthread_barrier_wait parsec_barrier_wait

static pthread_barrier_t barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, P, 0};

static double points[N][D];
static double center[D];
static double gains[P][8];

#define NOINLINE __attribute__((noinline))
/* The cheap bound settles the point unless it lies near the candidate:
   the points of worker w are near it in 1, 2, 6 and 3 of every 8 tests. */
static const int near_eighths[P] = {1, 6, 2, 3};
static NOINLINE int needs_exact_distance(int i, int it) {
  return (i + it) % 8 < near_eighths[i / (N / P)];
}

static double exact_gain(const double *p) {
  double g = 0.0;
  for (int r = 0; r < REPS; r++) {
    double d = 0.0;
    for (int k = 0; k < D; k++) d += (p[k] - center[k]) * (p[k] - center[k]) * (1.0 + 0.01 * r);
    g += d;
  }
  return g;
}

static void *worker(void *arg) {
  const int me = (int)(uintptr_t)arg;
  for (int it = 0; it < ITERS; it++) {
    double gain = 0.0;
    for (int i = me * (N / P); i < (me + 1) * (N / P); i++) {
      if (needs_exact_distance(i, it)) { /* weft:top-cause */
        gain += exact_gain(points[i]);
      }
    }
    gains[me][0] += gain;
    pthread_barrier_wait(&barrier); /* weft:section */
  }
  return NULL;
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int k = 0; k < D; k++) points[i][k] = (double)((i * 7 + k * 13) % 31) / 31.0;
  for (int k = 0; k < D; k++) center[k] = 0.5;
  pthread_t tid[P];
  for (int p = 0; p < P; p++)
    if (pthread_create(&tid[p], NULL, worker, (void *)(uintptr_t)p) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int p = 0; p < P; p++) pthread_join(tid[p], NULL);
  double sum = 0.0;
  for (int p = 0; p < P; p++) sum += gains[p][0];
  printf("streamcluster_hybrid_barrier_pthreads P=%d N=%d checksum=%.6f\n", P, N, sum);
  return 0;
}
