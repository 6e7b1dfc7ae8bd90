/* particle_resample_omp.c - a particle filter's resampling step: weights,
 * a cumulative distribution built by the master thread, and each thread's
 * particles drawn from it (Rodinia particlefilter style, C + OpenMP).
 *
 * Usage: particle_resample_omp [N [STEPS]]   defaults: N=2621440 STEPS=2
 *   T = 4 OpenMP threads (fixed; the master is weft thread 0, the others
 *   1..3). N particles (a multiple of 32), STEPS >= 2 filter steps.
 *
 * The particle-filter case of the CRD paper (Salehian et al., Table 2:
 * ex_particle_OPENMP_seq.c, the CDF and the resampling loops; high CRD,
 * data affinity by loop fusion, no thread mapping). The main thread places
 * the N particles (x, y: heap arrays it writes). Each step:
 *   1. `parallel for schedule(static)`: each thread moves its N / 4
 *      particles and weighs them against the target (move_and_weigh);
 *   2. the master alone sums the weights into the cumulative distribution
 *      cdf[i] = w[0] + ... + w[i] (build_cdf, marked "cdf"): it reads the
 *      weights every other thread wrote in step 1;
 *   3. `parallel`: thread t draws its particles j = t N/4 .. (t+1) N/4 - 1
 *      by systematic resampling: u_j = (j + u0) / N of the total weight,
 *      a bisection (find_index) for its first u, then a walk along cdf
 *      (marked "resample") copying the particle each u_j falls on into
 *      nx, ny; then the master swaps x, y with nx, ny.
 * The weights vary mildly (0.8 to 1), so thread t's u_j fall on about the
 * same N / 4 particles it moved, and the copies stay with their thread.
 * The arrays are heap blocks allocated one per line (NEW_ARRAY, a macro,
 * so that each block is named by its own line, not by a helper's).
 *
 * What weft should conclude (64-byte lines, the recorded cache of 8 MiB =
 * 131072 lines; N / 4 doubles of one array are N / 32 = 81920 lines by
 * default):
 *   - resample: threads 1..3 read the cdf the master wrote (a star from
 *     thread 0), each its own segment of N / 32 lines, in the same order
 *     every step: a line's first read in step s + 1 comes after the other
 *     N / 32 - 1 lines of the segment and the few other lines of the
 *     master the thread read in between (its later reads in a step re-read
 *     the line just read: distance 0). The loop first touches nx and ny
 *     (private, far over half the cache), so its min cutoff is the floor,
 *     65536 lines: the line visits of every step but the first, and their
 *     median (81919 and a few more), are beyond it: data affinity at the
 *     walk (marked "resample"), the data read mostly the heap block of
 *     cdf (allocated at the line marked "cdf-alloc"); the master wrote over
 *     90% of what the loop reads: a broadcast, never thread affinity.
 *   - build_cdf: the master reads each other thread's N / 32 lines of
 *     weights once a step, at distance N / 32 - 1 = 81919 from the previous
 *     step; its private data is its own segment of cdf (N / 32 lines: the
 *     others read theirs), so its min cutoff is max(131072 - 81920, 65536)
 *     = 65536: data affinity too, the data read mostly w (marked
 *     "w-alloc"). Three writers and one reader: a star around the reader,
 *     whose best grouping saves nothing against an even spread: no thread
 *     affinity.
 *   - move_and_weigh: in step 1 every thread reads the particles main
 *     placed (a broadcast from thread 0, merged with resample's), later
 *     only its own.
 * The parallel regions take their pointers and sizes `firstprivate`: with
 * clang's OpenMP a shared variable is a reference to the master's stack,
 * which the loop re-reads in every iteration; weft counts each such read
 * as communication from thread 0 at a distance of 1 or 2 lines, enough of
 * them to hide the cdf's stream (docs/metrics.md, "Suggestions").
 * Deterministic: static schedules, a serial cumulative sum, hashed noise,
 * per-thread sums added in thread order; the estimate (the mean position of
 * the final particles) is printed.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define T 4

/* Each thread's sums of the final positions, one line each. */
static _Alignas(64) double estimate[T][8];

/* A deterministic number in [-0.5, 0.5) for particle i in step s. */
static double noise(unsigned long i, unsigned long s) {
  unsigned long z = i * 0x9e3779b97f4a7c15UL + s * 0xbf58476d1ce4e5b9UL + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1UL << 53) - 0.5;
}

/* How well a particle at (px, py) explains a target at (tx, ty). */
static double likelihood(double px, double py, double tx, double ty) {
  const double dx = px - tx, dy = py - ty;
  return 1.0 / (1.0 + 0.05 * (dx * dx + dy * dy));
}

static void move_and_weigh(double *x, double *y, double *w, long n, int step) {
  const double tx = 0.1 * step, ty = 0.05 * step;
#pragma omp parallel for schedule(static) num_threads(T) firstprivate(x, y, w, tx, ty)
  for (long i = 0; i < n; i++) {
    x[i] += 0.1 + 0.2 * noise(i, 2 * step);
    y[i] += 0.05 + 0.2 * noise(i, 2 * step + 1);
    w[i] = likelihood(x[i], y[i], tx, ty);
  }
}

/* The cumulative weights; returns the total. Serial, on the master. */
static double build_cdf(const double *w, double *cdf, long n) {
  double acc = 0;
  for (long i = 0; i < n; i++) {
    acc += w[i]; /* weft:cdf */
    cdf[i] = acc;
  }
  return acc;
}

/* The first index whose cumulative weight reaches u (bisection). */
static long find_index(const double *cdf, long n, double u) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (cdf[mid] < u)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void resample(const double *cdf, const double *x, const double *y, double *nx, double *ny,
                     long n, double u0, double total) {
#pragma omp parallel num_threads(T) firstprivate(cdf, x, y, nx, ny, n, u0, total)
  {
    const int t = omp_get_thread_num();
    const long first = n / T * t, last = n / T * (t + 1);
    const double step = total / (double)n;
    long i = find_index(cdf, n, (first + u0) * step);
    long j = first;
    double u = (j + u0) * step, below = cdf[i];
    /* One pass along cdf and the new particles together: past every
     * cumulative weight below u, copy the particle u falls on. */
    while (j < last) {
      if (below < u && i < n - 1) {
        below = cdf[++i]; /* weft:resample */
      } else {
        nx[j] = x[i];
        ny[j] = y[i];
        j++;
        u = (j + u0) * step;
      }
    }
  }
}

static double *checked(void *block) {
  if (!block) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return block;
}

/* A 64-byte aligned array of n doubles, allocated where the macro is used
 * (so that weft names each array by its own line). */
#define NEW_ARRAY(n) checked(aligned_alloc(64, (size_t)(n) * sizeof(double)))

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 2621440;
  const int steps = argc > 2 ? atoi(argv[2]) : 2;
  if (n < 32 * T || n % (8 * T) != 0 || n > (1L << 28) || steps < 2 || steps > 1000) {
    fprintf(stderr, "usage: %s [N (a multiple of 32) [STEPS (>= 2)]]\n", argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  omp_set_num_threads(T);
  double *x = NEW_ARRAY(n), *y = NEW_ARRAY(n);
  double *nx = NEW_ARRAY(n), *ny = NEW_ARRAY(n);
  double *w = NEW_ARRAY(n);   /* weft:w-alloc */
  double *cdf = NEW_ARRAY(n); /* weft:cdf-alloc */
  for (long i = 0; i < n; i++) {
    x[i] = noise(i, 1000001);
    y[i] = noise(i, 1000002);
  }
  for (int s = 0; s < steps; s++) {
    move_and_weigh(x, y, w, n, s);
    const double total = build_cdf(w, cdf, n);
    resample(cdf, x, y, nx, ny, n, 0.5 + 0.25 * noise(s, 7), total);
    double *swap = x;
    x = nx;
    nx = swap;
    swap = y;
    y = ny;
    ny = swap;
  }
  const double *fx = x, *fy = y;
#pragma omp parallel num_threads(T) firstprivate(fx, fy, n)
  {
    const int t = omp_get_thread_num();
    double sx = 0, sy = 0;
    for (long i = n / T * t; i < n / T * (t + 1); i++) {
      sx += fx[i];
      sy += fy[i];
    }
    estimate[t][0] = sx;
    estimate[t][1] = sy;
  }
  double ex = 0, ey = 0;
  for (int t = 0; t < T; t++) {
    ex += estimate[t][0];
    ey += estimate[t][1];
  }
  printf("particle_resample_omp N=%ld STEPS=%d estimate %.6f %.6f\n", n, steps, ex / n, ey / n);
  free(x);
  free(y);
  free(nx);
  free(ny);
  free(w);
  free(cdf);
  return 0;
}
