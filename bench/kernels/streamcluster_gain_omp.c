/* streamcluster_gain_omp.c - the gain loop of an online k-median clustering
 * (PARSEC streamcluster's pgain), C + OpenMP; a benchmark kernel whose
 * parallel reads are mostly re-reads of data the main thread wrote.
 *
 * Usage: streamcluster_gain_omp [T [N [DIM [K [CANDIDATES]]]]]
 *   defaults: T=4 N=200000 DIM=32 K=20 CANDIDATES=60
 *   T threads (1..64); N points (K..2^24) of DIM floats (1..256) on the
 *   heap, K initial centres (1..1024), CANDIDATES gain evaluations
 *   (1..100000). The total work is fixed by N, DIM, K and CANDIDATES and
 *   divided among the threads.
 *
 * Shaped like streamcluster: a Points block of Point records (weight, a
 * pointer to its coordinates in one large coordinate block, assigned
 * centre, cost), all written by the main thread (read_points), which also
 * opens K centres (every N/K-th point) and keeps center_table (centre
 * point -> centre index). Then, in one `omp parallel`:
 *   1. assign: each thread gives each of its points (a static block of N/T)
 *      the nearest of the K centres: every thread reads every centre's
 *      coordinates, and all of its points', which the main thread wrote.
 *   2. CANDIDATES times, pgain(x) for a candidate point x the main thread
 *      picks (a fixed linear congruential sequence): each thread computes,
 *      for its points, x_cost = dist(p, x) * weight (the inner loop reads
 *      p's and x's coordinates in turn, both written by the main thread)
 *      and either marks p to switch to x (x_cost < cost) or credits p's
 *      centre with cost - x_cost in its own row of `lower`; barrier; the
 *      master adds the rows in thread order and decides which centres close
 *      and whether opening x gains; barrier; if it does, each thread moves
 *      its switching points (and those of closed centres) to x.
 * Coordinates are small integers (0..15) and weights 1..4, so every
 * distance, cost and sum is an integer held exactly in float or double: the
 * result does not depend on T or on the order of the additions. Prints the
 * final number of centres and the total cost.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 64

typedef struct {
  float weight;
  float *coord;
  long assign; /* the point index of its centre */
  float cost;  /* weight * distance to that centre */
} Point;

typedef struct {
  long num;
  int dim;
  Point *p;
} Points;

/* The clustering's shared state (streamcluster keeps these as globals). */
typedef struct {
  int nthreads;
  long *center_table; /* point index -> centre index (centres only) */
  char *is_center;    /* per point */
  char *switch_membership;
  double *lower;             /* nthreads rows of numcentres, padded */
  double *gl_lower;          /* numcentres */
  double work_cost[MAXT][8]; /* each thread's cost of opening x, a line each */
  long numcentres;
  double gain; /* the master's verdict on the current candidate */
} Clustering;

static void *checked(void *block) {
  if (!block) {
    fprintf(stderr, "streamcluster_gain_omp: out of memory\n");
    exit(1);
  }
  return block;
}

/* A deterministic pseudo-random number in 0..m-1 for (i, s). */
static unsigned hashed(unsigned long i, unsigned long s, unsigned m) {
  unsigned long z = i * 0x9e3779b97f4a7c15UL + s * 0xbf58476d1ce4e5b9UL + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  z ^= z >> 31;
  return (unsigned)(z % m);
}

/* Squared Euclidean distance, as streamcluster's dist(). */
static float dist(Point p1, Point p2, int dim) {
  float result = 0.0f;
  for (int i = 0; i < dim; i++) result += (p1.coord[i] - p2.coord[i]) * (p1.coord[i] - p2.coord[i]);
  return result;
}

/* The main thread reads the stream's next block (here: makes it up). */
static void read_points(Points *points, float *block) {
  for (long i = 0; i < points->num; i++) {
    points->p[i].coord = block + i * points->dim;
    for (int d = 0; d < points->dim; d++)
      points->p[i].coord[d] = (float)hashed((unsigned long)i, (unsigned long)d, 16);
    points->p[i].weight = (float)(1 + hashed((unsigned long)i, 1000, 4));
  }
}

static void open_initial_centres(Points *points, Clustering *c, long k) {
  memset(c->is_center, 0, (size_t)points->num);
  c->numcentres = 0;
  for (long i = 0; i < k; i++) {
    const long x = i * (points->num / k);
    c->is_center[x] = 1;
    c->center_table[x] = c->numcentres++;
  }
}

/* A row of `lower` for n centres, whole cache lines (as streamcluster pads
 * its work_mem rows against false sharing). */
static long padded(long n) { return (n + 7) / 8 * 8; }

/* Thread pid's block of points. */
static void block_of(long num, int pid, int nthreads, long *k1, long *k2) {
  const long bsize = num / nthreads;
  *k1 = bsize * pid;
  *k2 = pid == nthreads - 1 ? num : *k1 + bsize;
}

/* Each of thread pid's points to the nearest open centre. */
static void assign_points(Points *points, Clustering *c, int pid) {
  long k1, k2;
  block_of(points->num, pid, c->nthreads, &k1, &k2);
  for (long i = k1; i < k2; i++) {
    float best = -1.0f;
    for (long x = 0; x < points->num; x += points->num / c->numcentres) {
      if (!c->is_center[x]) continue;
      const float d = dist(points->p[i], points->p[x], points->dim) * points->p[i].weight;
      if (best < 0 || d < best) {
        best = d;
        points->p[i].assign = x;
      }
    }
    points->p[i].cost = best;
  }
}

/* pgain: the gain of opening point x, in three phases separated by barriers
 * (called by every thread of the team). */
static void pgain(long x, Points *points, double z, Clustering *c, int pid) {
  long k1, k2;
  block_of(points->num, pid, c->nthreads, &k1, &k2);
  const long numcentres = c->numcentres;
  const long stride = padded(numcentres);
  double *lower = c->lower + (long)pid * stride;
  for (long i = 0; i < numcentres; i++) lower[i] = 0;
  double cost_of_opening_x = 0;
  for (long i = k1; i < k2; i++) {
    const float x_cost = dist(points->p[i], points->p[x], points->dim) * points->p[i].weight;
    const float current_cost = points->p[i].cost;
    if (x_cost < current_cost) {
      c->switch_membership[i] = 1;
      cost_of_opening_x += x_cost - current_cost;
    } else {
      c->switch_membership[i] = 0;
      lower[c->center_table[points->p[i].assign]] += current_cost - x_cost;
    }
  }
  c->work_cost[pid][0] = cost_of_opening_x;
#pragma omp barrier
#pragma omp master
  {
    /* The master adds the rows in thread order: closing centre i saves z
     * and costs what its points lose by moving to x (gl_lower[i] > 0: it
     * closes); the gain is what opening x saves in all. */
    double cost_of_opening_x = z;
    for (int t = 0; t < c->nthreads; t++) cost_of_opening_x += c->work_cost[t][0];
    for (long i = 0; i < numcentres; i++) {
      double low = z;
      for (int t = 0; t < c->nthreads; t++) low += c->lower[(long)t * stride + i];
      c->gl_lower[i] = low;
      if (low > 0) cost_of_opening_x -= low;
    }
    c->gain = -cost_of_opening_x;
  }
#pragma omp barrier
  if (c->gain > 0) {
    for (long i = k1; i < k2; i++) {
      const long a = points->p[i].assign;
      if (c->switch_membership[i] || c->gl_lower[c->center_table[a]] > 0) {
        points->p[i].cost = dist(points->p[i], points->p[x], points->dim) * points->p[i].weight;
        points->p[i].assign = x;
      }
    }
  }
#pragma omp barrier
#pragma omp master
  if (c->gain > 0) {
    /* Close the centres that lose, open x, renumber (serial, as the real code). */
    for (long i = 0; i < points->num; i++)
      if (c->is_center[i] && c->gl_lower[c->center_table[i]] > 0) c->is_center[i] = 0;
    c->is_center[x] = 1;
    c->numcentres = 0;
    for (long i = 0; i < points->num; i++)
      if (c->is_center[i]) c->center_table[i] = c->numcentres++;
  }
#pragma omp barrier
}

int main(int argc, char **argv) {
  const int T = argc > 1 ? atoi(argv[1]) : 4;
  const long n = argc > 2 ? atol(argv[2]) : 200000;
  const int dim = argc > 3 ? atoi(argv[3]) : 32;
  const long k = argc > 4 ? atol(argv[4]) : 20;
  const int candidates = argc > 5 ? atoi(argv[5]) : 60;
  if (T < 1 || T > MAXT || k < 1 || k > 1024 || n < k || n > (1L << 24) || dim < 1 || dim > 256 ||
      candidates < 1 || candidates > 100000) {
    fprintf(stderr, "usage: %s [T 1..64 [N K..2^24 [DIM 1..256 [K 1..1024 [CANDIDATES]]]]]\n",
            argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  Points points = {n, dim, checked(malloc((size_t)n * sizeof(Point)))};
  float *block = checked(malloc((size_t)n * (size_t)dim * sizeof(float)));
  read_points(&points, block);
  Clustering *c = checked(calloc(1, sizeof *c));
  c->nthreads = T;
  c->center_table = checked(malloc((size_t)n * sizeof(long)));
  c->is_center = checked(malloc((size_t)n));
  c->switch_membership = checked(malloc((size_t)n));
  c->lower = checked(aligned_alloc(64, (size_t)T * (size_t)padded(n) * sizeof(double)));
  c->gl_lower = checked(malloc((size_t)n * sizeof(double)));
  open_initial_centres(&points, c, k);
  /* Opening a centre costs z: about the cost of a small cluster. */
  const double z = 40000.0 * (double)dim;
  long opened = 0;
#pragma omp parallel num_threads(T)
  {
    const int pid = omp_get_thread_num();
    assign_points(&points, c, pid);
#pragma omp barrier
    unsigned long lcg = 12345;
    for (int it = 0; it < candidates; it++) {
      lcg = lcg * 6364136223846793005UL + 1442695040888963407UL;
      const long x = (long)((lcg >> 33) % (unsigned long)n);
      pgain(x, &points, z, c, pid);
#pragma omp master
      opened += c->gain > 0;
    }
  }
  double total = 0;
  for (long i = 0; i < n; i++) total += points.p[i].cost;
  printf(
      "streamcluster_gain_omp N=%ld DIM=%d K=%ld CANDIDATES=%d opened=%ld centres=%ld cost=%.1f\n",
      n, dim, k, candidates, opened, c->numcentres, total);
  free(c->gl_lower);
  free(c->lower);
  free(c->switch_membership);
  free(c->is_center);
  free(c->center_table);
  free(c);
  free(block);
  free(points.p);
  return 0;
}
