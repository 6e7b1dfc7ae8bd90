/* phase_change_pthreads.c - a time-stepped solver whose load imbalance
 * changes cause a third of the way through the run (C + pthreads).
 *
 * Usage: phase_change_pthreads [STEPS]   default 96 (a multiple of 3, 24..960)
 *
 * The main thread allocates and fills a table x of 6 Mi doubles (48 MiB),
 * creates workers 1 and 2, and works as thread 0 itself; the three meet at
 * a barrier built from a mutex and a condition variable (barrier_wait) at
 * the end of every time step. Each step, every thread, on its own cells:
 *   relax:  NCELL cells, each a Newton iteration repeated sweeps(t, s, i)
 *           times (2 to 4, times 10 for thread 0 while s < STEPS / 3: its
 *           cells converge slowly at the start): a control-flow cause, at
 *           the helper's condition that decides the trip count, or at the
 *           loop's own test where the compiler folded the helper in (both
 *           lines are marked);
 *   gather: NGATHER loads x[j], j stepping 8 doubles (one line) through a
 *           window: 16 KiB of its own for every thread, except thread 1
 *           from STEPS / 3 on, whose window moves through the 48 MiB table
 *           (every load a new line: a miss in every cache level), the line
 *           marked as the miss cause. The same instructions either way (the
 *           window is chosen by arithmetic, not a branch).
 * So thread 0 is the busiest for the first third of the steps (a
 * control-flow cause), thread 1 for the last two thirds (a cache-miss cause,
 * which loses more time in all).
 *
 * Communication: the main thread's table x, read by every thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 3
#define NCELL 16384
#define NGATHER 32768
#define TABLE (6 << 20)
#define WINDOW 2048

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t released;
  int arrived;
  int generation;
} barrier_t;

static barrier_t barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void barrier_wait(barrier_t *b) {
  pthread_mutex_lock(&b->lock);
  const int generation = b->generation;
  if (++b->arrived == NT) {
    b->arrived = 0;
    b->generation++;
    pthread_cond_broadcast(&b->released);
  } else {
    while (generation == b->generation) pthread_cond_wait(&b->released, &b->lock);
  }
  pthread_mutex_unlock(&b->lock);
}

static double *x;
static double cell[NT][NCELL];
static double result[NT];
static int steps;

/* Thread 0's cells converge slowly in the first third of the run. */
static int sweeps(int t, int s, int i) {
  const int base = 2 + i % 3;
  return t == 0 && s < steps / 3 ? 10 * base : base; /* weft:control-cause */
}

static void *solve(void *arg) {
  const int t = (int)(long)arg;
  double sum = 0.0;
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < NCELL; i++) {
      double v = cell[t][i];
      const double r = 0.5 + 0.001 * i;
      const int n = sweeps(t, s, i);
      for (int k = 0; k < n; k++) /* weft:control-loop */
        v = v - 0.3 * (v * v - r) / (v + 1.0);
      cell[t][i] = v;
    }
    /* Thread 1 leaves its window for the whole table after the first
     * third: the same code, other indices. */
    const long far = (t == 1) & (s >= steps / 3);
    const long base = far * ((long)s * NGATHER * 8) + (1 - far) * t;
    const long span = far * TABLE + (1 - far) * WINDOW;
    for (long k = 0; k < NGATHER; k++) sum += x[(base + k * 8) % span]; /* weft:miss-cause */
    barrier_wait(&barrier);
  }
  result[t] = sum;
  return NULL;
}

int main(int argc, char **argv) {
  steps = argc > 1 ? atoi(argv[1]) : 96;
  if (steps < 24 || steps > 960 || steps % 3 != 0) {
    fprintf(stderr, "usage: %s [STEPS: a multiple of 3, 24..960]\n", argv[0]);
    return 2;
  }
  x = malloc(sizeof(double) * TABLE);
  if (!x) return 1;
  for (long i = 0; i < TABLE; i++) x[i] = (i % 11) * 0.25;
  for (int t = 0; t < NT; t++)
    for (int i = 0; i < NCELL; i++) cell[t][i] = 1.0;

  pthread_t workers[NT];
  for (int t = 1; t < NT; t++) pthread_create(&workers[t], NULL, solve, (void *)(long)t);
  solve((void *)0);
  for (int t = 1; t < NT; t++) pthread_join(workers[t], NULL);
  printf("phase_change_pthreads STEPS=%d result=%.6f %.6f %.6f\n", steps, result[0], result[1],
         result[2]);
  free(x);
  return 0;
}
