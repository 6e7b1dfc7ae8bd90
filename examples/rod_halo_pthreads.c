/* rod_halo_pthreads.c - the conservation check of a 1-D diffusion code
 * (C + pthreads): a rod of cells split into one block per thread; in every
 * step each thread sums the mass of its block and the flux across its two
 * ends, which it reads from its neighbours' edge cells, and posts the
 * result in its own padded slot. The reuse-distance analysis
 * (`--analyses reuse`, docs/metrics.md "Reuse distance") sees each thread
 * sweep its own block (local) and touch two cells of its neighbours
 * (remote) once per step.
 *
 * Usage: rod_halo_pthreads [T [S]]   defaults T=4, S=10
 *   T threads (2..64): the main thread is rank 0 and works too; ranks
 *     1..T-1 are created in order, so weft thread id == rank.
 *   S steps (1..1000), a barrier after each.
 *
 * Each block is BLOCK = 64 doubles, 512 bytes: 8 granules of 64 bytes, the
 * rod 64-byte aligned, each block first touched (so owned) by its thread.
 * The slots are 64 bytes apart: one granule per thread, its own.
 *
 * Reuse distances by hand, granule = 64 bytes. Every step a thread touches
 * the same granules in the same order: its 8 block granules, its slot and
 * its neighbours' edge granules (2 for an interior rank, 1 for ranks 0 and
 * T-1). So from the second step on, the first access to each of them in a
 * step has distance (granules per step - 1): 10 for interior ranks, 9 for
 * the end ranks; the 7 other loads of each block granule have distance 0.
 *   left-halo line (ranks 1..T-1): remote, 1 first access, S-1 at 10 (9
 *     for rank T-1);
 *   right-halo line (ranks 0..T-2): remote, 1 first access, S-1 at 10 (9
 *     for rank 0);
 *   mass line: local, 56 S at distance 0, 8 (S-1) at 10 (9 at the ends),
 *     8 in the first step at 9 (8 at the ends: the slot is not yet among
 *     the granules touched since the init line); no first access (the init
 *     line touched the block first);
 *   init line: local, 8 first accesses, 56 at distance 0.
 * Under the binary source (valgrind) the thread's stack frame and the PLT's
 * GOT slot, touched by the call of pthread_barrier_wait in every step, join
 * each step's granules: every one of those distances grows by the same
 * few granules. (The code loads no floating-point constant: under the
 * binary source a constant-pool load is an access to .rodata, first
 * touched by whichever thread ran first.)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 64 /* doubles per thread */
#define SLOT 8   /* doubles between two threads' result slots */
#define MAX_THREADS 64

static double* rod;
static double* results;
static int threads = 4;
static int steps = 10;
static pthread_barrier_t step_barrier;

static void* conservation_check(void* arg) {
  const long rank = (long)arg;
  /* Locals: the barrier call would make the compiler re-read globals. */
  const int n = threads;
  const int nsteps = steps;
  double* const block = rod + rank * BLOCK;
  double* const slot = results + rank * SLOT;

  for (int i = 0; i < BLOCK; ++i) block[i] = (double)(rank * BLOCK + i); /* init */
  pthread_barrier_wait(&step_barrier);

  for (int s = 0; s < nsteps; ++s) {
    double flux = 0.0;
    if (rank > 0) flux += block[-1];        /* left-halo */
    if (rank < n - 1) flux -= block[BLOCK]; /* right-halo */
    double mass = 0.0;
    for (int i = 0; i < BLOCK; ++i) mass += block[i]; /* mass */
    *slot = mass + flux;                              /* post */
    pthread_barrier_wait(&step_barrier);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (argc > 2) steps = atoi(argv[2]);
  if (threads < 2 || threads > MAX_THREADS || steps < 1 || steps > 1000) {
    fprintf(stderr, "usage: rod_halo_pthreads [T (2..%d) [S (1..1000)]]\n", MAX_THREADS);
    return 2;
  }
  void* memory = NULL;
  if (posix_memalign(&memory, 64, (size_t)threads * BLOCK * sizeof(double)) != 0) return 1;
  rod = memory;
  if (posix_memalign(&memory, 64, (size_t)threads * SLOT * sizeof(double)) != 0) return 1;
  results = memory;
  pthread_barrier_init(&step_barrier, NULL, (unsigned)threads);

  pthread_t workers[MAX_THREADS];
  for (long r = 1; r < threads; ++r)
    pthread_create(&workers[r], NULL, conservation_check, (void*)r);
  conservation_check((void*)0);
  for (long r = 1; r < threads; ++r) pthread_join(workers[r], NULL);

  double total = 0.0;
  for (int r = 0; r < threads; ++r) total += results[r * SLOT];
  printf("rod_halo: %d threads, %d steps, mass %.6f\n", threads, steps, total);
  pthread_barrier_destroy(&step_barrier);
  free(rod);
  free(results);
  return 0;
}
