/* polynomial_steps_pthreads.c - time steps of an element-wise update of a
 * field, y[i] += p(x[i]) with p a polynomial evaluated by Horner's rule (its
 * degree read from the model at run time, as a real code reads it from its
 * input), the elements split among the threads in blocks or cyclically, and
 * a hand-written barrier (a mutex and a condition variable) after each step.
 * The main thread allocates and initialises x, y and the model.
 *
 * Usage: polynomial_steps_pthreads [block|cyclic [T [STEPS]]]
 *        defaults block T=4 STEPS=64 (T 2..8, STEPS 1..1000); N = 131076 elements
 *
 * block: thread t updates [t*N/T, (t+1)*N/T). N is 4 more than a multiple
 *   of 64, so for T a power of two, where two threads' parts meet, a 64-byte
 *   line of y holds elements of both: each step, the thread
 *   after the boundary reads and writes it first, the one before it last,
 *   so the line moves between them about twice a step (about 128
 *   false-sharing transfers per boundary in 64 steps), against N/T
 *   polynomial evaluations per thread and step. weft lists the item and
 *   says no fix is needed: at about 100 ns a transfer, they are a few
 *   hundredths of a percent of the threads' time.
 * cyclic: thread t updates elements t, t+T, t+2T, ...: every
 *   line of y holds elements of every thread and moves at each of their
 *   writes, several times a line and step: a finding the report puts first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 131076
#define MAXT 8
#define MAX_DEGREE 16

typedef struct {
  int degree;
  double coefficient[MAX_DEGREE + 1];
} Model;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t all_arrived;
  int arrived;
  int generation;
  int parties;
} StepBarrier;

static double *x, *y;
static Model model;
static StepBarrier barrier;
static int nthreads, steps, cyclic;

static void step_barrier_wait(StepBarrier *b) {
  pthread_mutex_lock(&b->lock);
  const int generation = b->generation;
  if (++b->arrived == b->parties) {
    b->arrived = 0;
    b->generation++;
    pthread_cond_broadcast(&b->all_arrived);
  } else {
    while (generation == b->generation) pthread_cond_wait(&b->all_arrived, &b->lock);
  }
  pthread_mutex_unlock(&b->lock);
}

static double evaluate(const Model *m, double v) {
  double acc = m->coefficient[m->degree];
  for (int k = m->degree - 1; k >= 0; k--) acc = acc * v + m->coefficient[k];
  return acc;
}

static void *worker(void *arg) {
  const long id = (long)arg;
  const long first = id * N / nthreads, last = (id + 1) * N / nthreads;
  for (int s = 0; s < steps; s++) {
    if (cyclic) {
      for (long i = id; i < N; i += nthreads) y[i] += evaluate(&model, x[i]); /* weft:cyclic */
    } else {
      for (long i = first; i < last; i++) y[i] += evaluate(&model, x[i]); /* weft:boundary */
    }
    step_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *split = argc > 1 ? argv[1] : "block";
  if (strcmp(split, "block") != 0 && strcmp(split, "cyclic") != 0) {
    fprintf(stderr, "usage: %s [block|cyclic [T 2..%d [STEPS 1..1000]]]\n", argv[0], MAXT);
    return 2;
  }
  cyclic = strcmp(split, "cyclic") == 0;
  nthreads = argc > 2 ? atoi(argv[2]) : 4;
  steps = argc > 3 ? atoi(argv[3]) : 64;
  if (nthreads < 2 || nthreads > MAXT || steps < 1 || steps > 1000) {
    fprintf(stderr, "usage: %s [block|cyclic [T 2..%d [STEPS 1..1000]]]\n", argv[0], MAXT);
    return 2;
  }
  /* Line-aligned, as a careful code allocates: the boundary's place in its
   * line is the split's, not the allocator's. */
  x = aligned_alloc(64, N * sizeof *x);
  y = aligned_alloc(64, N * sizeof *y); /* weft:alloc-y */
  if (!x || !y) return 1;
  for (long i = 0; i < N; i++) {
    x[i] = (double)(i % 1000) / 1000.0;
    y[i] = 0;
  }
  model.degree = 8;
  for (int k = 0; k <= model.degree; k++) model.coefficient[k] = 1.0 / (k + 1);
  pthread_mutex_init(&barrier.lock, NULL);
  pthread_cond_init(&barrier.all_arrived, NULL);
  barrier.parties = nthreads;

  pthread_t threads[MAXT];
  for (long t = 0; t < nthreads; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
  for (int t = 0; t < nthreads; t++) pthread_join(threads[t], NULL);

  double sum = 0;
  for (long i = 0; i < N; i++) sum += y[i];
  printf("polynomial_steps_pthreads %s T=%d STEPS=%d sum=%.6f\n", split, nthreads, steps, sum);
  free(x);
  free(y);
  return 0;
}
