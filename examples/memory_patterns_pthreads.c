/* memory_patterns_pthreads.c - the access patterns weft's traces reveal
 * (C + pthreads).
 *
 * Usage: memory_patterns_pthreads [T]      default T=2 (1..8)
 *   Each thread runs, on its own data, five kernels of 65536 accesses or
 *   more, every one on its own marked line:
 *     column-wise     sums a 256 x 256 row-major matrix column by column:
 *                     the inner loop strides 2048 bytes, the outer 8;
 *     non-unit-stride sums the real parts of interleaved complex numbers:
 *                     stride 16 bytes on 8-byte loads (half of each line);
 *     4k-aliasing     b[i] = a[i] + 1 with b 4096 + 8 bytes after a: the
 *                     store of b[i] shares its low 12 bits with the next
 *                     iteration's load of a[i + 1], which waits for it
 *                     (4096 bytes exactly would not: a[i] shares them
 *                     with b[i] only, and is loaded before it is stored);
 *     reuse           a 16-tap filter over 4096 samples: each tap is loaded
 *                     again for every sample, 16 loads later, and each
 *                     sample for 16 outputs (65536 loads of each array);
 *     centres         each of 4096 points {x, y, z, w} to its nearest of
 *                     16 centres, every 256th point (as streamcluster
 *                     opens them): the centres' loads stride 8 KiB, but the
 *                     same 16 centres are read again for every point and
 *                     stay in the L1 (each point's x and y loaded 16
 *                     times, the centres' 4096 times more: 262144 loads
 *                     of 8192 addresses): a reuse finding, not a large
 *                     stride.
 *     half-records    sums the x and y of the 4096 points: each field
 *                     strides 32 bytes, and the loop uses 16 of each
 *                     32-byte record (the stride of one field, not 16 as if
 *                     the two fields were the copies of an unrolled loop);
 *   and two that are no finding (the lines marked "bisection" and
 *   "whole-records"):
 *     bisection       4096 ascending keys each located in a sorted table of
 *                     4096 entries by bisection (a resampling step's
 *                     search): successive searches probe the same entries
 *                     (12 probes per key, 49152 loads), but through
 *                     data-dependent indices no register can hold, and
 *                     every reload hits the L1.
 *     whole-records   moves the 4096 points by their velocities
 *                     (x += z * dt, y += w * dt): each field strides 32
 *                     bytes, but the loop reads every field of each record,
 *                     so the lines it fetches are used whole (streamcluster's
 *                     gain loop reads a point's four fields on three lines).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256
#define LEN 65536
#define CENTRES 16

typedef struct {
  double x, y, z, w;
} point_t;

typedef struct {
  double matrix[N][N];
  double complex_pairs[2 * LEN];
  double aliased[LEN + 513]; /* a = aliased, b = aliased + 513 (4104 bytes on) */
  double taps[16];
  double samples[LEN / 16 + 16];
  double table[LEN / 16];
  point_t points[LEN / 16];
  double nearest[LEN / 16];
  double result;
} work_t;

__attribute__((noinline)) static double column_sum(work_t *w) {
  double s = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) s += w->matrix[i][j]; /* weft:column-wise */
  return s;
}

__attribute__((noinline)) static double real_parts(work_t *w) {
  double s = 0;
  for (int i = 0; i < LEN; i++) s += w->complex_pairs[2 * i]; /* weft:non-unit-stride */
  return s;
}

__attribute__((noinline)) static void shift(double *a, double *b, int n) {
  for (int i = 0; i < n; i++) b[i] = a[i] + 1.0; /* weft:4k-aliasing */
}

/* volatile: the compiler must load every tap for every sample (clang -O2
 * would otherwise keep the 16 taps in registers). */
__attribute__((noinline)) static double reuse(work_t *w) {
  const volatile double *taps = w->taps;
  double s = 0;
  for (int i = 0; i < LEN / 16; i++)
    for (int k = 0; k < 16; k++) s += taps[k] * w->samples[i + k]; /* weft:reuse */
  return s;
}

/* The first entry of `table` (ascending, n entries) not below `key`. */
static int locate(const double *table, int n, double key) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (table[mid] < key) /* weft:bisection */
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

__attribute__((noinline)) static double bisections(work_t *w) {
  const int n = LEN / 16;
  long found = 0;
  for (int i = 0; i < n; i++) found += locate(w->table, n, (i + 0.5) * 3.0);
  return (double)found;
}

/* The squared distance of each point to its nearest centre, the centres
 * being every (n / CENTRES)-th point. volatile: every compiler loads the
 * point in the centres' loop, on their line (clang -O2 would otherwise
 * hoist it and give the hoisted loads no line). */
__attribute__((noinline)) static double assign(work_t *w) {
  const int n = LEN / 16, every = n / CENTRES;
  const volatile point_t *p = w->points;
  double total = 0;
  for (int i = 0; i < n; i++) {
    double best = -1;
    for (int c = 0; c < n; c += every) {
      const double dx = p[i].x - p[c].x, dy = p[i].y - p[c].y; /* weft:centres */
      const double d = dx * dx + dy * dy;
      if (best < 0 || d < best) best = d;
    }
    w->nearest[i] = best;
    total += best;
  }
  return total;
}

/* x and y of every point: two of each record's four fields. volatile: two
 * loads on the line under every compiler (clang -O2 would vectorize them
 * into loads of whole records). */
__attribute__((noinline)) static double half_records(work_t *w) {
  const volatile point_t *p = w->points;
  double sx = 0, sy = 0;
  for (int i = 0; i < LEN / 16; i++) sx += p[i].x, sy += p[i].y; /* weft:half-records */
  return sx + sy;
}

/* Every field of every point: x and y move by the velocity z, w. */
__attribute__((noinline)) static double whole_records(work_t *w, double dt) {
  for (int i = 0; i < LEN / 16; i++) {
    point_t *p = &w->points[i];
    p->x += p->z * dt, p->y += p->w * dt; /* weft:whole-records */
  }
  return w->points[0].x;
}

static void *worker(void *arg) {
  work_t *w = arg;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) w->matrix[i][j] = i + j;
  for (int i = 0; i < 2 * LEN; i++) w->complex_pairs[i] = i % 7;
  for (int i = 0; i < LEN + 513; i++) w->aliased[i] = i % 5;
  for (int i = 0; i < 16; i++) w->taps[i] = 1.0 / (i + 1);
  for (int i = 0; i < LEN / 16 + 16; i++) w->samples[i] = i % 3;
  for (int i = 0; i < LEN / 16; i++) w->table[i] = 3.0 * i;
  for (int i = 0; i < LEN / 16; i++) w->points[i] = (point_t){i % 61, i % 53, i % 7, 1.0};
  double s = column_sum(w) + real_parts(w) + reuse(w) + bisections(w) + assign(w) +
             half_records(w) + whole_records(w, 0.0);
  shift(w->aliased, w->aliased + 513, LEN - 513);
  w->result = s + w->aliased[LEN];
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 2;
  if (T < 1 || T > 8) {
    fprintf(stderr, "usage: %s [T 1..8]\n", argv[0]);
    return 2;
  }
  work_t *work = aligned_alloc(4096, sizeof(work_t) * (size_t)T);
  if (!work) return 1;
  pthread_t tid[8];
  for (int t = 1; t < T; t++) pthread_create(&tid[t], NULL, worker, &work[t]);
  worker(&work[0]);
  double total = work[0].result;
  for (int t = 1; t < T; t++) {
    pthread_join(tid[t], NULL);
    total += work[t].result;
  }
  printf("memory_patterns_pthreads T=%d total=%.0f\n", T, total);
  free(work);
  return 0;
}
