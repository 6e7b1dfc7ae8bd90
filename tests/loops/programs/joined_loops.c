/* Two loops for the report's hot loops joined with a profile
 * (tests/loops/test_hot_loops.cpp), run by two threads on halves of the
 * work, each phase between two barriers (a parallel section each):
 *
 *   - column_sums: the sum of each column of an N x N row-major matrix of
 *     doubles, the row length read at run time: the load's address moves by
 *     a register (n * 8 bytes) the addressing cannot tell, so `weft loops`
 *     calls its stride unknown; the run's traces record N * 8 = 4096 bytes.
 *   - clamp_rare: one element in 64 is negative and takes a branch with a
 *     division (and a load of its own); the others only scale. The loop has two paths; its hot path
 *     leaves the division out. (And gather_sum, below.)
 */
#include <pthread.h>
#include <stdio.h>

#define N 512
#define THREADS 2
#define ELEMENTS (1 << 16)

static double m[N * N] __attribute__((aligned(64)));  // whole granules per row half
static double sums[N];
static double a[ELEMENTS], b[ELEMENTS], c[ELEMENTS];
static volatile int row_length = N;  // read at run time: no stride for the compiler
static pthread_barrier_t barrier;

__attribute__((noinline)) static void column_sums(int first, int last, int n) {
  for (int j = first; j < last; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += m[(long)i * n + j];
    sums[j] = s;
  }
}

__attribute__((noinline)) static void clamp_rare(int first, int last) {
  for (int i = first; i < last; ++i) {
    double v = a[i];
    if (v < 0) v = (v * v + c[i]) / (v - 3.0);
    b[i] = 2.0 * v;
  }
}

/* gather_sum: a sum of a[index_of[i]], inlined into work(): its
 * instructions are on its own lines, its region is work's at the call.
 * index_of steps by 7 elements (56 bytes) modulo ELEMENTS. */
static int index_of[ELEMENTS];
static double partial[THREADS];

static inline __attribute__((always_inline)) double gather_sum(int first, int last) {
  double s = 0;
  for (int i = first; i < last; ++i) s += a[index_of[i]];
  return s;
}

static void* work(void* arg) {
  const int t = (int)(long)arg;
  column_sums(t * N / THREADS, (t + 1) * N / THREADS, row_length);
  pthread_barrier_wait(&barrier);
  clamp_rare(t * ELEMENTS / THREADS, (t + 1) * ELEMENTS / THREADS);
  pthread_barrier_wait(&barrier);
  partial[t] = gather_sum(t * ELEMENTS / THREADS, (t + 1) * ELEMENTS / THREADS);
  pthread_barrier_wait(&barrier);
  return NULL;
}

int main(void) {
  for (int i = 0; i < N * N; ++i) m[i] = (double)(i % 7);
  for (int i = 0; i < ELEMENTS; ++i) {
    a[i] = i % 64 == 0 ? -1.0 - i : (double)i;
    c[i] = 1.0;
    index_of[i] = (int)((7L * i) % ELEMENTS);
  }
  pthread_barrier_init(&barrier, NULL, THREADS);
  pthread_t worker;
  pthread_create(&worker, NULL, work, (void*)1L);
  work((void*)0L);
  pthread_join(worker, NULL);
  double total = 0;
  for (int j = 0; j < N; ++j) total += sums[j];
  for (int i = 0; i < ELEMENTS; ++i) total += b[i];
  for (int t = 0; t < THREADS; ++t) total += partial[t];
  printf("%.1f\n", total);
  return 0;
}
