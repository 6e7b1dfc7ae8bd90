/* points_assign_pthreads.c - the set-up of a streaming k-median: each
 * thread assigns its block of points to the nearest centre (PARSEC
 * streamcluster's assign step, C + pthreads).
 *
 * Usage: points_assign_pthreads [N [K]]     defaults: N=131072 K=16
 *   T = 4 threads (fixed): the main thread is weft thread 0 and assigns
 *   the first block itself, workers 1..3 the others. N points (a multiple
 *   of 8 * T), K centres (1..64).
 *
 * The main thread reads the stream's points into one PointSet: a header
 * (the count and the dimension: 16 bytes) followed by the points, each
 * {x, y, cluster, cost} (32 bytes), in one block from aligned_alloc(64).
 * It writes every point's x and y, nothing else; the workers write
 * cluster and cost. The centres are a separate array main fills first.
 *
 * Layout (64-byte lines): the points start 16 bytes into the block, so
 * point i starts at 16 + 32 i: an even point fills bytes 16-47 of a line,
 * an odd one starts at byte 48 (its x and y) and ends in bytes 0-15 of the
 * next line (its cluster and cost). Line L >= 1 of the block holds the end
 * of point 2L - 1, point 2L and the start of point 2L + 1; main wrote its
 * bytes 16-31 and 48-63.
 *
 * What a worker does to a line: it assigns its points in order, reading a
 * point's x and y (for each centre) before writing its cluster and cost.
 * So its first access to each line past the first of its block is the
 * write of the previous odd point's cluster, bytes 0-7, which main did
 * not write: by weft's definition (docs/metrics.md, "False sharing") one
 * false-sharing transfer from thread 0, on every line of the block, once.
 * No line moves back and forth: it is the hand-over of data main wrote to
 * the thread that uses it, which would move the line all the same (the
 * worker reads main's x and y there right after). Worker t's block
 * (points t N / 4 .. (t + 1) N / 4 - 1) spans N / 8 lines past its first:
 *   false-sharing transfers 0 -> t: N / 8 - 1 or N / 8 (the last line is
 *   shared with the next block, whose owner may take it first), for each
 *   t = 1..3; the lines where two blocks meet add at most 3 between
 *   workers.
 * What weft should conclude: one item on the PointSet block (allocated at
 * the line marked "alloc"), about one transfer a line, all from thread 0:
 * a hand-over, which no padding or contiguous split removes (the parts are
 * contiguous already); if anything, each thread initialising its own part.
 * Deterministic: fixed thread count, a barrier between set-up and
 * assignment, points and centres from a hash; the total cost is printed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define T 4

typedef struct {
  double x, y;
  long cluster;
  double cost;
} Point;

typedef struct {
  long n;
  long dim;
  Point p[];
} PointSet;

typedef struct {
  PointSet *points;
  const double *centres; /* K pairs (x, y) */
  long k;
  int id;
  double cost; /* this thread's total, read by main after the join */
} Task;

static pthread_barrier_t ready;

/* A deterministic coordinate in [0, 1). */
static double coordinate(unsigned long i, unsigned long axis) {
  unsigned long z = i * 0x9e3779b97f4a7c15UL + axis * 0xbf58476d1ce4e5b9UL + 7;
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebUL;
  z ^= z >> 29;
  return (double)(z >> 11) / (double)(1UL << 53);
}

static double distance2(const Point *p, const double *c) {
  const double dx = p->x - c[0], dy = p->y - c[1];
  return dx * dx + dy * dy;
}

/* The block of points thread `id` assigns. */
static void block_of(long n, int id, long *first, long *last) {
  *first = n / T * id;
  *last = n / T * (id + 1);
}

static void assign(Task *task) {
  PointSet *set = task->points;
  long first, last;
  block_of(set->n, task->id, &first, &last);
  double total = 0;
  for (long i = first; i < last; i++) {
    Point *p = &set->p[i];
    long best = 0;
    double best_d = distance2(p, &task->centres[0]);
    for (long c = 1; c < task->k; c++) {
      const double d = distance2(p, &task->centres[2 * c]);
      if (d < best_d) {
        best_d = d;
        best = c;
      }
    }
    p->cluster = best;
    p->cost = best_d;
    total += best_d;
  }
  task->cost = total;
}

static void *worker(void *arg) {
  Task *task = arg;
  pthread_barrier_wait(&ready);
  assign(task);
  return NULL;
}

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 131072;
  const long k = argc > 2 ? atol(argv[2]) : 16;
  if (n < 8 * T || n % (8 * T) != 0 || n > (1L << 26) || k < 1 || k > 64) {
    fprintf(stderr, "usage: points_assign_pthreads [N [K]] (N a multiple of %d, K 1..64)\n", 8 * T);
    return 2;
  }
  double *centres = malloc((size_t)k * 2 * sizeof(double));
  const size_t bytes = sizeof(PointSet) + (size_t)n * sizeof(Point);
  PointSet *set = aligned_alloc(64, (bytes + 63) / 64 * 64); /* weft:alloc */
  if (!centres || !set) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (long c = 0; c < k; c++) {
    centres[2 * c] = coordinate((unsigned long)c, 2);
    centres[2 * c + 1] = coordinate((unsigned long)c, 3);
  }
  /* Reading the stream: main writes each point's coordinates only. */
  set->n = n;
  set->dim = 2;
  for (long i = 0; i < n; i++) {
    set->p[i].x = coordinate((unsigned long)i, 0);
    set->p[i].y = coordinate((unsigned long)i, 1);
  }
  pthread_barrier_init(&ready, NULL, T);
  Task tasks[T];
  pthread_t threads[T];
  for (int t = 0; t < T; t++)
    tasks[t] = (Task){.points = set, .centres = centres, .k = k, .id = t, .cost = 0};
  for (int t = 1; t < T; t++) pthread_create(&threads[t], NULL, worker, &tasks[t]);
  pthread_barrier_wait(&ready);
  assign(&tasks[0]);
  double total = tasks[0].cost;
  for (int t = 1; t < T; t++) {
    pthread_join(threads[t], NULL);
    total += tasks[t].cost;
  }
  printf("points_assign_pthreads N=%ld K=%ld cost=%.6f\n", n, k, total);
  pthread_barrier_destroy(&ready);
  free(set);
  free(centres);
  return 0;
}
