/* md_cells_spin_barrier_pthreads.c - a cell-list molecular dynamics step between
 * sense-reversing spin barriers (C11 atomics, spin_barrier.h), C + pthreads.
 *
 * Usage: md_cells_spin_barrier_pthreads    (no arguments: everything is fixed)
 *
 * Many hand-tuned pthreads codes synchronize with a sense-reversing
 * centralized barrier instead of pthread_barrier_wait: every thread flips
 * its private sense and increments a shared counter; the last to arrive
 * resets the counter and publishes its sense in the shared flag, the
 * others spin until the flag equals their sense. The program is not
 * annotated: weft recognises the barrier from the spinning (docs/metrics.md,
 * "Spin waits").
 *
 * The main thread is thread 0: it fills the cells, creates P - 1 = 3
 * threads (weft threads 1..3), runs the step loop itself, then joins them.
 * NC = 64 cells of M = 24 molecules; each step, every thread walks all
 * cells and computes the pair forces of the cells it owns:
 *     if (cell_owner(c) == me)      <- the marked line
 *       cell_forces(c)              (M x M pair interactions)
 * cell_owner(c) = (3 c^2 mod 10) mod P is a small hash kept out of line:
 * every thread calls it equally often, but it hands out 19, 6, 13 and 26
 * cells to threads 0, 1, 2 and 3 (thread 3 is the straggler).
 *
 * STEPS = 12 steps, each ended by one spin_barrier_wait call. The first
 * episode of a spin barrier teaches weft its flag (threads spin on it until
 * another thread's write releases them), so it forms no instance: the
 * section has STEPS - 1 = 11 instances, the first of which spans steps 0
 * and 1.
 *
 * Expected:
 *   - one parallel section at the barrier call (marked with the section
 *     comment: weft names an inlined barrier by its call), 11 instances, the 4 threads in each;
 *   - thread 3 the busiest; the top cause of the imbalance is the owner
 *     test (the line marked with the top-cause comment), the caller's
 *     branch, under both sources.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "spin_barrier.h"

#define P 4
#define NC 64
#define M 24
#define STEPS 12

struct molecule {
  double x, y, z;
  double fx, fy, fz;
};
static struct molecule cells[NC][M];

static spin_barrier_t barrier = SPIN_BARRIER_INITIALIZER(P);

#define NOINLINE __attribute__((noinline))
static NOINLINE int cell_owner(int c) { return (3 * c * c) % 10 % P; }

/* Pair forces inside one cell (a soft repulsion). */
static void cell_forces(struct molecule *cell) {
  for (int i = 0; i < M; i++) {
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int j = 0; j < M; j++) {
      const double dx = cell[i].x - cell[j].x, dy = cell[i].y - cell[j].y,
                   dz = cell[i].z - cell[j].z;
      const double w = 1.0 / (1.0 + dx * dx + dy * dy + dz * dz);
      fx += w * dx;
      fy += w * dy;
      fz += w * dz;
    }
    cell[i].fx = fx;
    cell[i].fy = fy;
    cell[i].fz = fz;
  }
}

static void *worker(void *arg) {
  const int me = (int)(uintptr_t)arg;
  int sense = 0;
  for (int step = 0; step < STEPS; step++) {
    for (int c = 0; c < NC; c++) {
      if (cell_owner(c) == me) { /* weft:top-cause */
        cell_forces(cells[c]);
      }
    }
    spin_barrier_wait(&barrier, &sense); /* weft:section */
  }
  return NULL;
}

int main(void) {
  for (int c = 0; c < NC; c++)
    for (int i = 0; i < M; i++) {
      cells[c][i].x = (double)((c * 7 + i * 3) % 11);
      cells[c][i].y = (double)((c * 5 + i * 13) % 17);
      cells[c][i].z = (double)((c + i * 29) % 19);
    }
  pthread_t tid[P];
  for (int p = 1; p < P; p++)
    if (pthread_create(&tid[p], NULL, worker, (void *)(uintptr_t)p) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  worker((void *)(uintptr_t)0);
  for (int p = 1; p < P; p++) pthread_join(tid[p], NULL);
  double sum = 0.0;
  for (int c = 0; c < NC; c++)
    for (int i = 0; i < M; i++) sum += cells[c][i].fx + cells[c][i].fy + cells[c][i].fz;
  printf("md_cells_spin_barrier_pthreads P=%d NC=%d M=%d checksum=%.6f\n", P, NC, M, sum);
  return 0;
}
