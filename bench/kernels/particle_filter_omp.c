/* particle_filter_omp.c - a particle filter's steps (Rodinia particlefilter
 * style), C + OpenMP; a benchmark kernel in which every thread searches the
 * cumulative distribution the main thread wrote.
 *
 * Usage: particle_filter_omp [T [N [STEPS]]]    defaults: T=4 N=1048576 STEPS=4
 *   T threads (1..64); N particles (64..2^26), STEPS filter steps
 *   (1..1000). The total work is fixed by N and STEPS and divided among the
 *   threads.
 *
 * The main thread places the N particles (x, y: heap arrays it writes).
 * Each step, like examples/particle_resample_omp.c (which fixes T = 4 and
 * is sized for weft's tests, not for timing) but with Rodinia's
 * per-particle search:
 *   1. `parallel for`: each particle moves and is weighed against the
 *      target (move_and_weigh);
 *   2. the main thread normalises the weights and sums them into the
 *      cumulative distribution cdf (build_cdf), and draws u0;
 *   3. `parallel for`: particle j takes the position of the first particle
 *      whose cumulative weight reaches u_j = (j + u0) / N, found by
 *      bisection in cdf (find_index, Rodinia's findIndexBin): every thread
 *      searches all of cdf, and re-reads its top levels for every particle;
 *      then the main thread swaps the old and new positions.
 * Deterministic: the noise is a hash of (particle, step), each particle's
 * numbers depend on nothing else, and the sums (weights, estimate) are the
 * main thread's, in index order. Prints the final estimate (the mean
 * position).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  long n;
  double *x, *y;   /* positions */
  double *nx, *ny; /* resampled positions */
  double *w;       /* weights */
  double *cdf;     /* cumulative normalised weights */
} Particles;

static void *checked(void *block) {
  if (!block) {
    fprintf(stderr, "particle_filter_omp: out of memory\n");
    exit(1);
  }
  return block;
}

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
  return 1.0 / (1.0 + 0.5 * (dx * dx + dy * dy));
}

static void move_and_weigh(Particles *p, int step, int nthreads) {
  const double tx = 0.1 * step, ty = 0.05 * step;
#pragma omp parallel for schedule(static) num_threads(nthreads)
  for (long i = 0; i < p->n; i++) {
    p->x[i] += 0.1 + 0.5 * noise((unsigned long)i, 2UL * (unsigned long)step);
    p->y[i] += 0.05 + 0.5 * noise((unsigned long)i, 2UL * (unsigned long)step + 1);
    p->w[i] = likelihood(p->x[i], p->y[i], tx, ty);
  }
}

/* The normalised cumulative weights (serial, on the main thread). */
static void build_cdf(Particles *p) {
  double total = 0;
  for (long i = 0; i < p->n; i++) total += p->w[i];
  double acc = 0;
  for (long i = 0; i < p->n; i++) {
    acc += p->w[i] / total;
    p->cdf[i] = acc;
  }
  p->cdf[p->n - 1] = 1.0;
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

static void resample(Particles *p, double u0, int nthreads) {
#pragma omp parallel for schedule(static) num_threads(nthreads)
  for (long j = 0; j < p->n; j++) {
    const long i = find_index(p->cdf, p->n, ((double)j + u0) / (double)p->n);
    p->nx[j] = p->x[i];
    p->ny[j] = p->y[i];
  }
}

int main(int argc, char **argv) {
  const int T = argc > 1 ? atoi(argv[1]) : 4;
  const long n = argc > 2 ? atol(argv[2]) : 1048576;
  const int steps = argc > 3 ? atoi(argv[3]) : 4;
  if (T < 1 || T > 64 || n < 64 || n > (1L << 26) || steps < 1 || steps > 1000) {
    fprintf(stderr, "usage: %s [T 1..64 [N 64..2^26 [STEPS 1..1000]]]\n", argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  Particles p = {n,
                 checked(malloc((size_t)n * sizeof(double))),
                 checked(malloc((size_t)n * sizeof(double))),
                 checked(malloc((size_t)n * sizeof(double))),
                 checked(malloc((size_t)n * sizeof(double))),
                 checked(malloc((size_t)n * sizeof(double))),
                 checked(malloc((size_t)n * sizeof(double)))};
  for (long i = 0; i < n; i++) {
    p.x[i] = noise((unsigned long)i, 1000001);
    p.y[i] = noise((unsigned long)i, 1000002);
  }
  for (int s = 0; s < steps; s++) {
    move_and_weigh(&p, s, T);
    build_cdf(&p);
    resample(&p, 0.5 + 0.25 * noise((unsigned long)s, 7), T);
    double *swap = p.x;
    p.x = p.nx;
    p.nx = swap;
    swap = p.y;
    p.y = p.ny;
    p.ny = swap;
  }
  double ex = 0, ey = 0;
  for (long i = 0; i < n; i++) {
    ex += p.x[i];
    ey += p.y[i];
  }
  printf("particle_filter_omp N=%ld STEPS=%d estimate %.9f %.9f\n", n, steps, ex / (double)n,
         ey / (double)n);
  free(p.x);
  free(p.y);
  free(p.nx);
  free(p.ny);
  free(p.w);
  free(p.cdf);
  return 0;
}
