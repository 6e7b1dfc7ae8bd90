/* volrend_root_pthreads.c - load imbalance from extra work of a root thread (volrend-like,
 * C + pthreads).
 *
 * Usage: volrend_root_pthreads          (no arguments: everything is fixed)
 *
 * The volrend case of the LIME paper (Oh et al., ICSE 2011, section 5.5.2):
 * every thread ray-casts an equal share of the image, and then
 *     if (my_node == ROOT) { ... }
 * gives one thread more to do (in volrend: the observer transform and
 * writing the image file) while the others wait at the barrier.
 *
 * The main thread creates P = 8 workers and joins them; it does none of the
 * work. Worker w (w = 0..7, its my_node) is weft thread w + 1 (0 is the main
 * thread); ROOT is worker 0, i.e. weft thread 1. The volume (H x W x D =
 * 128 x 64 x 16 doubles, 1 MiB) is filled by the main thread before it
 * creates the workers.
 *
 * Frame f = 0..F-1 (F = 8 frames, each ended by a barrier, so 8 instances of
 * one parallel section). The barrier is hand-written with a mutex and a
 * condition variable, like SPLASH-2's BARRIER macro; weft cannot tell it
 * from other locking, so the program marks it with <weft/sections.h>
 * (WEFT_SECTION_END before it, WEFT_SECTION_BEGIN after it), which weft
 * records exactly like a pthread_barrier_wait on the barrier object:
 *   - every worker renders its H/P = 16 rows of the image img[f % 2]: for each
 *     of its 16 x 64 pixels, acc = acc * att_f + vol[r][c][z] for z = 0..15
 *     (16 384 voxel loads and 1 024 pixel stores per worker and frame, the
 *     same loops and trip counts for every worker, no data-dependent branch);
 *   - if (my_node == ROOT)                  <- the marked line
 *     the root also "displays" the previous frame img[(f + 1) % 2] (complete
 *     since the last barrier; all zeros in frame 0): one pass computes its
 *     mean, a second writes display = 0.5 * (pixel - mean) and sums it
 *     (2 x 8 192 pixel loads and 8 192 stores: about as many loads as its
 *     render share again);
 *   - barrier.
 * So in every frame the root does 1.7 to 2 times the work of every other
 * worker (loads: 32 768 vs 16 384, stores: 9 216 vs 1 024; instructions,
 * gcc -O2: about 1.7x), and the seven other workers do exactly the same work.
 *
 * Expected: in every frame the only decision that differs between threads
 * is the root test, taken by the root alone, so the top cause of the
 * imbalance is the line marked with the top-cause comment below (the
 * paper's main.C:300).
 * Each worker keeps its display checksum in its own 64-byte slot; the main
 * thread reads the slots and the last image after the join and prints them.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <weft/sections.h>

#define P 8 /* workers */
#define ROOT 0
#define H 128 /* image rows */
#define W 64  /* image columns */
#define D 16  /* samples per ray */
#define F 8   /* frames */

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double vol[H][W][D];
static _Alignas(64) double img[2][H][W];
static _Alignas(64) double display[H][W];
static slot_t result[P];

/* SPLASH-style barrier: a counter and a generation under one mutex. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int arrived;
  unsigned generation;
} barrier = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static __attribute__((noinline)) void barrier_wait(void) {
  WEFT_SECTION_END(&barrier);
  pthread_mutex_lock(&barrier.lock);
  const unsigned generation = barrier.generation;
  if (++barrier.arrived == P) {
    barrier.arrived = 0;
    barrier.generation++;
    pthread_cond_broadcast(&barrier.wake);
  } else {
    while (generation == barrier.generation) pthread_cond_wait(&barrier.wake, &barrier.lock);
  }
  pthread_mutex_unlock(&barrier.lock);
  WEFT_SECTION_BEGIN(&barrier);
}

static void *worker(void *arg) {
  const int my_node = (int)(uintptr_t)arg;
  const int lo = my_node * (H / P), hi = lo + H / P;
  double check = 0.0;
  for (int f = 0; f < F; f++) {
    const double att = 1.0 - 0.03125 * (double)(f + 1);
    double(*out)[W] = img[f & 1];
    for (int r = lo; r < hi; r++) {
      for (int c = 0; c < W; c++) {
        double acc = 0.0;
        for (int z = 0; z < D; z++) acc = acc * att + vol[r][c][z];
        out[r][c] = acc;
      }
    }
    if (my_node == ROOT) { /* weft:top-cause */
      const double(*prev)[W] = (const double(*)[W])img[(f + 1) & 1];
      double mean = 0.0;
      for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++) mean += prev[r][c];
      mean *= 1.0 / (H * W);
      for (int r = 0; r < H; r++) {
        for (int c = 0; c < W; c++) {
          const double v = 0.5 * (prev[r][c] - mean);
          display[r][c] = v;
          check += v * v;
        }
      }
    }
    barrier_wait();
  }
  result[my_node].v = check;
  return NULL;
}

int main(void) {
  for (int r = 0; r < H; r++)
    for (int c = 0; c < W; c++)
      for (int z = 0; z < D; z++) vol[r][c][z] = (double)((r * 7 + c * 5 + z * 3) % 32) / 32.0;
  pthread_t tid[P];
  for (int w = 0; w < P; w++) {
    if (pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int w = 0; w < P; w++) pthread_join(tid[w], NULL);
  double sum = 0.0, shown = 0.0;
  for (int w = 0; w < P; w++) shown += result[w].v;
  for (int r = 0; r < H; r++)
    for (int c = 0; c < W; c++) sum += img[(F - 1) & 1][r][c];
  printf("volrend_root_pthreads P=%d H=%d W=%d D=%d F=%d image=%.6f display=%.6f\n", P, H, W, D, F,
         sum, shown);
  return 0;
}
