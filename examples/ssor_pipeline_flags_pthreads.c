/* ssor_pipeline_flags_pthreads.c - an NPB-LU-like pipelined SSOR sweep: neighbour
 * threads hand planes on through spin-wait flags, and every time step ends at a
 * sense-reversing spin barrier (C11 atomics, spin_barrier.h), C + pthreads.
 *
 * Usage: ssor_pipeline_flags_pthreads    (no arguments: everything is fixed)
 *
 * NPB LU's OpenMP and pthreads versions sweep a 3-D grid as a wavefront:
 * thread k owns a block of rows, and before it updates plane z it waits
 * until thread k - 1 has finished plane z (whose last row it reads), then
 * tells thread k + 1 by storing to its own flag. Those waits are point to
 * point (one waiter per flag): they are waiting time, not busy time, and
 * they end no parallel section. The time step ends at a barrier of all
 * threads, the section. Nothing is annotated (docs/metrics.md, "Spin
 * waits").
 *
 * The main thread is thread 0: it fills the grid, creates P - 1 = 3
 * threads (weft threads 1..3), runs the sweep itself, then joins them.
 * The grid is NZ = 16 planes of P * R = 32 rows of NX = 64 points; thread
 * k owns rows [k R, (k + 1) R). Row i of plane z is relaxed from row i - 1
 * (the neighbour's last row for the first row of a block), and then,
 * where the boundary model asks for it, corrected:
 *     if (needs_correction(i, z))     <- the marked line
 *       correct_row(...)              (CORR = 6 extra passes over the row)
 * needs_correction(i, z) = (i mod 8 + z) mod 4 == 0 || i >= 16 && i < 24
 * is kept out of line. It asks for 4 corrections per plane of rows 0..7,
 * 8..15 and 24..31 and for all 8 rows of block 16..23: thread 2 corrects
 * 8 rows per plane, the others 2.
 *
 * STEPS = 8 time steps, each ended by one spin_barrier_wait call. The first
 * barrier episode teaches weft the barrier's flag and forms no instance:
 * the section has STEPS - 1 = 7 instances, the first spanning steps 0 and 1.
 *
 * Expected:
 *   - one parallel section at the barrier call (the line marked with the
 *     section comment: weft names an inlined barrier by its call), 7 instances, the 4 threads in
 * each; no section at the neighbour flags;
 *   - thread 2 the busiest; the top cause the correction test (the line
 *     marked with the top-cause comment), the caller's branch, under both
 *     sources.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "spin_barrier.h"

#define P 4
#define R 8
#define NZ 16
#define NX 64
#define STEPS 8
#define CORR 6

static double grid[NZ][P * R][NX];

/* Planes finished by each thread, counted over all steps (never reset). */
static struct { _Alignas(64) atomic_int planes_done; } progress[P];

static spin_barrier_t barrier = SPIN_BARRIER_INITIALIZER(P);

/* Waits until thread k has finished `planes` planes in all. */
static inline void wait_for_neighbour(int k, int planes) {
  while (atomic_load_explicit(&progress[k].planes_done, memory_order_acquire) < planes)
    __builtin_ia32_pause();
}

#define NOINLINE __attribute__((noinline))
static NOINLINE int needs_correction(int i, int z) {
  return (i % 8 + z) % 4 == 0 || (i >= 16 && i < 24);
}

static void relax_row(double *row, const double *above) {
  for (int x = 1; x < NX - 1; x++) row[x] = 0.25 * (row[x - 1] + row[x + 1] + 2.0 * above[x]);
}

static void correct_row(double *row) {
  for (int pass = 0; pass < CORR; pass++)
    for (int x = 1; x < NX - 1; x++) row[x] = 0.5 * row[x] + 0.25 * (row[x - 1] + row[x + 1]);
}

static void *sweeper(void *arg) {
  const int me = (int)(uintptr_t)arg;
  int sense = 0;
  for (int step = 0; step < STEPS; step++) {
    for (int z = 0; z < NZ; z++) {
      const int planes = step * NZ + z + 1;
      if (me > 0) wait_for_neighbour(me - 1, planes);
      for (int i = me * R; i < (me + 1) * R; i++) {
        relax_row(grid[z][i], grid[z][i > 0 ? i - 1 : 0]);
        if (needs_correction(i, z)) { /* weft:top-cause */
          correct_row(grid[z][i]);
        }
      }
      atomic_store_explicit(&progress[me].planes_done, planes, memory_order_release);
    }
    spin_barrier_wait(&barrier, &sense); /* weft:section */
  }
  return NULL;
}

int main(void) {
  for (int z = 0; z < NZ; z++)
    for (int i = 0; i < P * R; i++)
      for (int x = 0; x < NX; x++) grid[z][i][x] = (double)((z * 7 + i * 3 + x) % 13) / 13.0;
  pthread_t tid[P];
  for (int p = 1; p < P; p++)
    if (pthread_create(&tid[p], NULL, sweeper, (void *)(uintptr_t)p) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  sweeper((void *)(uintptr_t)0);
  for (int p = 1; p < P; p++) pthread_join(tid[p], NULL);
  double sum = 0.0;
  for (int z = 0; z < NZ; z++)
    for (int i = 0; i < P * R; i++)
      for (int x = 0; x < NX; x++) sum += grid[z][i][x];
  printf("ssor_pipeline_flags_pthreads P=%d NZ=%d rows=%d NX=%d checksum=%.6f\n", P, NZ, P * R, NX,
         sum);
  return 0;
}
