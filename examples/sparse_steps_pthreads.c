/* sparse_steps_pthreads.c - a time-stepped sparse matrix-vector product whose
 * imbalance comes from cache misses alone (C + pthreads), run long enough
 * that `weft record` samples its section instances.
 *
 * Usage: sparse_steps_pthreads [STEPS]   default 40 (1..1000)
 *
 * The main thread builds a CSR matrix of P * R rows, R = 1024 per worker,
 * every row with exactly NNZ = 16 nonzeros, and the vector x (2 Mi doubles,
 * 16 MiB), then creates P = 4 workers and joins them. Worker w (weft thread
 * w + 1) owns rows [w R, (w + 1) R) and, every time step, computes
 *     y[i] = sum over k in row i of val[k] * x[col[k]]     <- the marked line
 * then waits at a barrier built from a mutex and a condition variable
 * (barrier_wait below, as codes written before pthread_barrier_t do).
 *
 * Every worker runs the same instructions with the same branch outcomes
 * (R rows of NNZ terms); the rows differ only in where their columns point:
 *   - worker 0's columns are spread over all of x, one per 64-byte line
 *     (a multiplicative hash of the term's index): R * NNZ = 16384 lines,
 *     1 MiB, more than an L2 holds, re-read every step: every load of
 *     x[col[k]] misses in L1 and L2;
 *   - workers 1..3 read a 4 KiB window of x (512 doubles): hits after
 *     their first step.
 * So worker 0 arrives last at every barrier, and the cause is the load of
 * x[col[k]] (a cache-miss cause), never a branch.
 *
 * y[i] is written by its owner only; x, col and val are the main thread's,
 * read by every worker (communication from thread 0 only).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define P 4
#define R 1024
#define NNZ 16
#define NX (1 << 21)
#define WINDOW 512

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t all_here;
  int waiting;
  int phase;
} barrier_t;

static barrier_t barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static int *row_start; /* [P * R + 1] */
static int *col;       /* [P * R * NNZ] */
static double *val;    /* [P * R * NNZ] */
static double *x;      /* [NX] */
static double *y;      /* [P * R] */
static int steps;

/* The last thread to arrive starts the next phase and wakes the others. */
static int last_to_arrive(barrier_t *b) { return ++b->waiting == P; }

static void barrier_wait(barrier_t *b) {
  pthread_mutex_lock(&b->lock);
  const int phase = b->phase;
  if (last_to_arrive(b)) {
    b->waiting = 0;
    b->phase++;
    pthread_cond_broadcast(&b->all_here);
  } else {
    while (phase == b->phase) pthread_cond_wait(&b->all_here, &b->lock);
  }
  pthread_mutex_unlock(&b->lock);
}

/* y = A x over rows [first, last): the pointers are re-read from the globals
 * each row, as a code whose matrix may be rebuilt between steps does. */
static void multiply_rows(int first, int last) {
  for (int i = first; i < last; i++) {
    double sum = 0.0;
    for (int k = row_start[i]; k < row_start[i + 1]; k++)
      sum += val[k] * x[col[k]]; /* weft:top-cause */
    y[i] = sum;
  }
}

static void *worker(void *arg) {
  const int w = (int)(intptr_t)arg;
  for (int s = 0; s < steps; s++) {
    multiply_rows(w * R, (w + 1) * R);
    barrier_wait(&barrier); /* weft:section */
  }
  return NULL;
}

/* Worker 0's terms spread over x, one line each; the others' stay in a
 * window of WINDOW doubles of their own. */
static int column_of(int worker_index, int term) {
  if (worker_index == 0) return (int)(((uint32_t)term * 2654435761u) % (NX / 8)) * 8;
  return worker_index * WINDOW + term % WINDOW;
}

int main(int argc, char **argv) {
  steps = argc > 1 ? atoi(argv[1]) : 40;
  if (steps < 1 || steps > 1000) {
    fprintf(stderr, "usage: %s [STEPS 1..1000]\n", argv[0]);
    return 2;
  }
  row_start = malloc(sizeof(int) * (P * R + 1));
  col = malloc(sizeof(int) * P * R * NNZ);
  val = malloc(sizeof(double) * P * R * NNZ);
  x = malloc(sizeof(double) * NX);
  y = calloc(P * R, sizeof(double));
  if (!row_start || !col || !val || !x || !y) return 1;
  for (int i = 0; i < NX; i++) x[i] = 1.0 / (1 + i % 7);
  for (int i = 0; i <= P * R; i++) row_start[i] = i * NNZ;
  for (int w = 0; w < P; w++)
    for (int t = 0; t < R * NNZ; t++) {
      col[w * R * NNZ + t] = column_of(w, t);
      val[w * R * NNZ + t] = 0.5 + (t % 3);
    }

  pthread_t threads[P];
  for (int w = 0; w < P; w++) pthread_create(&threads[w], NULL, worker, (void *)(intptr_t)w);
  for (int w = 0; w < P; w++) pthread_join(threads[w], NULL);

  double checksum = 0.0;
  for (int i = 0; i < P * R; i++) checksum += y[i];
  printf("sparse_steps_pthreads P=%d R=%d NNZ=%d STEPS=%d checksum=%.6e\n", P, R, NNZ, steps,
         checksum);
  free(row_start);
  free(col);
  free(val);
  free(x);
  free(y);
  return 0;
}
