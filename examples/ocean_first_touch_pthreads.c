/* ocean_first_touch_pthreads.c - a SPLASH-2 ocean-style Jacobi
 * relaxation on two heap grids (C + pthreads), with the grids'
 * initialisation either in the main thread (the classic port of serial
 * code) or in the workers, each on the rows it relaxes later. On a machine
 * with several NUMA nodes the first version leaves every page on the main
 * thread's node (Linux places a page where it is first written), and the
 * workers on the other nodes read and write their rows remotely in every
 * step; the second puts each band of rows on its worker's node. The page
 * usage analysis (`--analyses ...,pages`, docs/metrics.md "Data placement")
 * and `weft place` tell the two apart.
 *
 * Usage: ocean_first_touch_pthreads [serial|parallel [W [S]]]
 *   defaults serial, W=4, S=8
 *   serial: the main thread (thread 0) initialises both grids, then creates
 *     the workers; parallel: each worker initialises its own band first.
 *   W workers (2..16): weft threads 1..W, each owning a band of ROWS / W
 *   rows of both grids (ROWS = 1024 rows of COLS = 512 doubles: one page per
 *   row, 4 MiB per grid, larger than this machine's L2 and, with both
 *   grids, than a typical L3 share).
 *   S relaxation steps (1..100): each worker reads the rows around its band
 *   from `cur` and writes its band of `next`; a barrier ends the step and
 *   the grids swap.
 *
 * The relaxation weights live in a small global table, `stencil`, written
 * by the main thread and read by every worker at every point: one page, used
 * by all nodes alike, and always in the caches, so no placement finding.
 *
 * What weft concludes on a two-node machine (`weft place --synthetic
 * "pack:2 numa:1 core:2 pu:1"`): serial: both grids (allocated at the
 * lines marked alloc-cur and alloc-next) are first written by thread 0 at
 * the lines marked serial-init and serial-init-next, and the bands of the workers mapped off thread
 * 0's node are used mostly there: the fix is to initialise in parallel. parallel: no finding (only
 * the pages at band edges, shared by two workers, may sit on the other one's node).
 *
 * Counting the misplaced pages (serial, W = 4, S = 8). A grid is one
 * mmap'ed block of 4 MiB + 16 bytes of malloc header: page p holds row p's
 * elements 0..509 and row p - 1's elements 510..511 (1025 pages). Per step
 * in which a grid is the one read (x, 4 of the 8 steps), the owner of row
 * p makes about 1,526 accesses to page p, each neighbouring band's edge row
 * 509; the steps where it is written (y) add 509 writes by the owner. The
 * main thread's initialisation writes each page of each grid 512 times. So
 * page p (0..1023) is used most by the owner of row p (page 0 too: 4 x 509
 * reads by worker 1, against main's 512 writes), and each worker's band of
 * 256 rows is 256 pages used most by it. Page 1024 (row 1023's last two
 * elements) gets 4 reads by worker W (x[i + COLS] at the last interior
 * point) against main's 2 writes. Misplaced, in each grid: 256 pages per
 * worker off thread 0's node, and one more when worker W is off it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXW 16
#define ROWS 1024
#define COLS 512

typedef struct {
  double *cur; /* the grids, swapped after each step: re-read by the workers */
  double *next;
  int workers;
  int steps;
  int parallel_init;
} ocean_t;

typedef struct {
  _Alignas(64) double residual;
} slot_t;

static ocean_t ocean;
static double stencil[5] = {0.5, 0.125, 0.125, 0.125, 0.125};
static slot_t result[MAXW + 1];
static pthread_barrier_t barrier;

static double initial_value(int r, int c) {
  return (r == 0 || r == ROWS - 1 || c == 0 || c == COLS - 1) ? 1.0 : 0.0;
}

/* Rows [lo, hi) of both grids get their initial values. */
__attribute__((noinline)) static void init_rows(double *cur, double *next, int lo, int hi) {
  for (int r = lo; r < hi; r++)
    for (int c = 0; c < COLS; c++) {
      const double v = initial_value(r, c);
      cur[(size_t)r * COLS + c] = v;  /* weft:serial-init */
      next[(size_t)r * COLS + c] = v; /* weft:serial-init-next */
    }
}

static int band_lo(int w, int W) { return (w - 1) * (ROWS / W); }
static int band_hi(int w, int W) { return w == W ? ROWS : w * (ROWS / W); }

/* One step over the band's interior points; the boundary rows and columns
 * keep their values. Returns the band's largest change. */
__attribute__((noinline)) static double relax_band(int lo, int hi) {
  const double *x = ocean.cur;
  double *y = ocean.next;
  double change = 0.0;
  for (int r = lo; r < hi; r++) {
    if (r == 0 || r == ROWS - 1) continue;
    for (int c = 1; c < COLS - 1; c++) {
      const size_t i = (size_t)r * COLS + c;
      const double v = stencil[0] * x[i] + stencil[1] * x[i - COLS] + stencil[2] * x[i + COLS] +
                       stencil[3] * x[i - 1] + stencil[4] * x[i + 1]; /* weft:relax */
      const double d = v > x[i] ? v - x[i] : x[i] - v;
      if (d > change) change = d;
      y[i] = v;
    }
  }
  return change;
}

static void *worker(void *arg) {
  const int w = (int)(uintptr_t)arg;
  const int lo = band_lo(w, ocean.workers), hi = band_hi(w, ocean.workers);
  if (ocean.parallel_init) init_rows(ocean.cur, ocean.next, lo, hi); /* weft:parallel-init */
  pthread_barrier_wait(&barrier);
  double residual = 0.0;
  for (int s = 0; s < ocean.steps; s++) {
    residual = relax_band(lo, hi);
    if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
      double *t = ocean.cur; /* one thread swaps, the others wait */
      ocean.cur = ocean.next;
      ocean.next = t;
    }
    pthread_barrier_wait(&barrier);
  }
  result[w].residual = residual;
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "serial";
  const int W = argc > 2 ? atoi(argv[2]) : 4;
  const int S = argc > 3 ? atoi(argv[3]) : 8;
  if ((strcmp(mode, "serial") != 0 && strcmp(mode, "parallel") != 0) || W < 2 || W > MAXW ||
      S < 1 || S > 100) {
    fprintf(stderr, "usage: %s [serial|parallel [W 2..%d [S 1..100]]]\n", argv[0], MAXW);
    return 2;
  }
  ocean.workers = W;
  ocean.steps = S;
  ocean.parallel_init = strcmp(mode, "parallel") == 0;
  ocean.cur = malloc(sizeof(double) * ROWS * COLS);  /* weft:alloc-cur */
  ocean.next = malloc(sizeof(double) * ROWS * COLS); /* weft:alloc-next */
  if (!ocean.cur || !ocean.next) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  if (!ocean.parallel_init) init_rows(ocean.cur, ocean.next, 0, ROWS);
  pthread_barrier_init(&barrier, NULL, (unsigned)W);
  pthread_t tid[MAXW + 1];
  for (int w = 1; w <= W; w++)
    if (pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int w = 1; w <= W; w++) pthread_join(tid[w], NULL);
  double residual = 0.0;
  for (int w = 1; w <= W; w++)
    if (result[w].residual > residual) residual = result[w].residual;
  printf("ocean %s: %d workers, %d steps, residual %.6f, centre %.6f\n", mode, W, S, residual,
         ocean.cur[(size_t)(ROWS / 2) * COLS + COLS / 2]);
  pthread_barrier_destroy(&barrier);
  free(ocean.cur);
  free(ocean.next);
  return 0;
}
