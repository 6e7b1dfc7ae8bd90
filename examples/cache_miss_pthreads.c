/* cache_miss_pthreads.c - load imbalance from cache misses alone (C + pthreads).
 *
 * Usage: cache_miss_pthreads            (no arguments: everything is fixed)
 *
 * The hardware-event case of the LIME paper (Oh et al., ICSE 2011, sections
 * 3.3 and 5.4): the threads run the same code the same number of times, so no
 * control-flow event differs between them, but one thread's loads miss in
 * the caches and the others' hit, and that thread arrives late at the
 * barrier.
 *
 * The main thread creates P = 8 workers and joins them; it does none of the
 * work. Worker w (w = 0..7) is weft thread w + 1 (0 is the main thread).
 * Each worker takes its array, index mask and stride from params[w], which
 * the main thread fills before it creates the workers (no branch on w in
 * the workers):
 *   - worker 0: `big`, 32 MiB (4 Mi doubles), mask 4 Mi - 1;
 *   - workers 1..7: their own 4 KiB array (512 doubles), mask 511;
 *   - all: stride 8 doubles = 64 bytes, so every load is in the next line.
 * `big` is an anonymous mapping populated by the kernel (MAP_POPULATE: real
 * zeroed pages, not the shared zero page) that the program never writes, so
 * no instruction touches its lines before worker 0 does. The main thread
 * writes one double per line of the small arrays.
 *
 * Phase p = 0..3 (4 phases, each ended by a pthread_barrier_wait, so 4
 * instances of one parallel section): every worker runs exactly the same
 * loop, ITERS = 100 000 iterations,
 *     s += data[idx];  idx = (idx + stride) & mask;    <- the marked line
 * with idx carried over from phase to phase (a double sum: neither compiler
 * vectorizes or reorders it, each iteration is one 8-byte load). Same
 * instructions, same branch outcomes, same counts on every worker.
 *
 * Cache behaviour (64-byte lines):
 *   - worker 0 reads 100 000 new lines per phase, 400 000 distinct lines in
 *     all (25.6 MB, less than the 524 288 lines of `big`, so no line is read
 *     twice, and none was touched before): every load is a cold miss in L1,
 *     L2 and the last-level cache, whatever their sizes;
 *   - workers 1..7 cycle through the 64 lines of their 4 KiB array: 64 cold
 *     misses in phase 0, then hits only.
 * Natively, the hardware prefetcher hides part of worker 0's misses (the
 * stream is sequential); weft's cache model has no prefetcher.
 * Memory accesses: 8 x 4 x 100 000 = 3.2 M loads (plus a few thousand).
 *
 * Expected: a hardware-event cluster with no control-flow event: the top
 * cause of the imbalance is the cache misses of the load on the line marked
 * with the top-cause comment below. Each worker keeps its sum in its own
 * 64-byte slot; the main thread reads the slots after the join and prints
 * the checksum
 * (worker 0 reads zeros: its share of the checksum is 0).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#define P 8              /* workers */
#define BIG_N (4u << 20) /* doubles in big: 32 MiB */
#define SMALL_N 512u     /* doubles in each small array: 4 KiB */
#define STRIDE 8u        /* doubles: 64 bytes */
#define ITERS 100000     /* iterations per phase and worker */
#define PHASES 4

typedef struct {
  _Alignas(64) const double *data; /* one 64-byte entry per worker */
  size_t mask;
  size_t stride;
} param_t;

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double small[P - 1][SMALL_N];
static param_t params[P];
static slot_t result[P];
static pthread_barrier_t barrier;

static void *worker(void *arg) {
  const param_t *p = &params[(uintptr_t)arg];
  const double *data = p->data;
  const size_t mask = p->mask, stride = p->stride;
  size_t idx = 0;
  double sum = 0.0;
  for (int phase = 0; phase < PHASES; phase++) {
    double s = 0.0; /* not live across the barrier call: a register at -O1 too */
    for (int i = 0; i < ITERS; i++) {
      s += data[idx]; /* weft:top-cause */
      idx = (idx + stride) & mask;
    }
    sum += s;
    pthread_barrier_wait(&barrier);
  }
  result[(uintptr_t)arg].v = sum;
  return NULL;
}

int main(void) {
  double *big = mmap(NULL, BIG_N * sizeof(double), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (big == MAP_FAILED) {
    fprintf(stderr, "cache_miss_pthreads: mmap of %zu bytes failed\n", BIG_N * sizeof(double));
    return 1;
  }
  params[0] = (param_t){big, BIG_N - 1, STRIDE};
  for (int w = 1; w < P; w++) {
    for (size_t i = 0; i < SMALL_N; i += STRIDE) small[w - 1][i] = (double)(w + (int)i) * 0.001;
    params[w] = (param_t){small[w - 1], SMALL_N - 1, STRIDE};
  }
  pthread_barrier_init(&barrier, NULL, P);
  pthread_t tid[P];
  for (int w = 0; w < P; w++) {
    if (pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int w = 0; w < P; w++) pthread_join(tid[w], NULL);
  pthread_barrier_destroy(&barrier);
  munmap(big, BIG_N * sizeof(double));
  double sum = 0.0;
  for (int w = 0; w < P; w++) sum += result[w].v;
  printf("cache_miss_pthreads P=%d big=%u small=%u iters=%d phases=%d checksum=%.6f\n", P, BIG_N,
         SMALL_N, ITERS, PHASES, sum);
  return 0;
}
