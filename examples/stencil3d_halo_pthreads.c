/* stencil3d_halo_pthreads.c - 6-point or 26-point 3-D stencil, each thread an
 * N x N x N sub-array of a q x q x q thread grid, halos read from the
 * neighbours' arrays (C + pthreads).
 *
 * Usage: stencil3d_halo_pthreads [N [T [6|26]]]   defaults: N=8 T=8 6
 *   N  sub-array order per thread (1..256);
 *   T  threads, a perfect cube q^3 (1..343). The main thread works as rank 0
 *      and creates ranks 1..T-1 in order, so weft's thread id is the rank;
 *   6|26  the stencil: the 6 face neighbours, or all 26 (faces, edges,
 *      corners) of a point.
 *
 * Thread t = (i * q + j) * q + k sits at (z, y, x) = (i, j, k) in the thread
 * grid and owns the global points (i*N.., j*N.., k*N..) of an (qN)^3 grid.
 * It keeps them in two arrays of its own, (N+2) x (N+2) x LD doubles (LD =
 * N+2 rounded up to a multiple of 8: 64-byte aligned rows) whose outer layer
 * holds the ghosts: part t of two arrays of T such parts that the main
 * thread allocates without touching; thread t initialises its parts itself
 * (first touch: they are its granules).
 * Ghosts on the global boundary hold the fixed boundary value (1.0 on the
 * z = -1 face of the global grid, 0.0 on the others) and are never
 * rewritten.
 *
 * S = 4 iterations; iteration s reads array s % 2 (cur) and writes the other,
 * then a barrier. Each iteration first fetches the halo: one copy (its own
 * code, one HALO line below) per neighbour direction that exists, reading
 * the neighbour's boundary cells of its cur array (remote) into local
 * ghosts:
 *   faces (6 directions, both stencils): an N x N plane, N^2 loads;
 *     the z faces are contiguous rows (about N^2/8 granules), the y faces N
 *     rows of N, the x faces N^2 single cells (N^2 granules);
 *   edges (12, 26-point only): a line of N cells;
 *   corners (8, 26-point only): one cell.
 * Then the stencil over its interior (local loads only): 6-point: the mean
 * of the 6 face neighbours; 26-point: the mean of the 26 neighbours.
 * Which copies run depends on the thread's place in the grid: per dimension
 * a thread has 1 neighbour on the grid's boundary and 2 inside, so a corner
 * thread runs 3 face copies (7 copies in all with 26 points), an edge thread
 * 4 (11), a face thread 5 (17) and an interior thread 6 (26). q >= 3 has all
 * four kinds (q = 3: 8 corners, 12 edges, 6 faces, 1 interior); q = 2: eight
 * corners; q = 1: no remote reads. A halo granule is reused two iterations
 * later (cur alternates).
 *
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
 *
 * Deterministic: the program prints the sum over threads (in rank order) of
 * the sums of their final sub-arrays; for a given global size qN the result
 * is the same for every (q, N) up to rounding.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 343
#define ITERS 4

typedef struct {
  _Alignas(64) double v;
} slot_t;

/* What the main thread sets before it creates the threads; each thread
 * copies it once. */
typedef struct {
  int n, t, q, ld, points;
  size_t part;     /* doubles per thread's array: (N+2)^2 * LD */
  double *base[2]; /* parity p: T arrays, thread r's at base[p] + r * part */
} params_t;

static params_t P;
static slot_t result[MAXT];
static pthread_barrier_t barrier;

#define AT3(a, z, y, x) (a)[((size_t)(z) * (n + 2) + (size_t)(y)) * ld + (size_t)(x)]
/* Per dimension and direction D in {-1, 0, 1}: where the neighbour's cells
 * start, where the ghosts start, and how many. */
#define SRC0(D) ((D) < 0 ? n : 1)
#define DST0(D) ((D) < 0 ? 0 : (D) > 0 ? n + 1 : 1)
#define LEN(D) ((D) == 0 ? n : 1)
#define INSIDE(c) ((c) >= 0 && (c) < q)
/* Copies the neighbour (i+DZ, j+DY, k+DX)'s cells next to this sub-array
 * into this thread's ghosts, if that neighbour exists. */
#define HALO(DZ, DY, DX)                                                \
  do {                                                                  \
    if (INSIDE(i + (DZ)) && INSIDE(j + (DY)) && INSIDE(k + (DX))) {     \
      const double *nb = all + (t + ((DZ)*q + (DY)) * q + (DX)) * part; \
      for (int z = 0; z < LEN(DZ); z++)                                 \
        for (int y = 0; y < LEN(DY); y++)                               \
          for (int x = 0; x < LEN(DX); x++)                             \
            AT3(cur, DST0(DZ) + z, DST0(DY) + y, DST0(DX) + x) =        \
                AT3(nb, SRC0(DZ) + z, SRC0(DY) + y, SRC0(DX) + x);      \
    }                                                                   \
  } while (0)

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t p = P;
  const int n = p.n, q = p.q, ld = p.ld, i = t / (q * q), j = t / q % q, k = t % q;
  const size_t part = p.part;
  /* First touch of both arrays: the global boundary in the ghosts. */
  for (int par = 0; par < 2; par++) {
    double *a = p.base[par] + t * part;
    for (int z = 0; z < n + 2; z++)
      for (int y = 0; y < n + 2; y++)
        for (int x = 0; x < ld; x++) {
          long gz = (long)i * n + z - 1, gy = (long)j * n + y - 1, gx = (long)k * n + x - 1;
          double v = 0.0;
          if (gz == -1)
            v = 1.0; /* the global z = -1 face */
          else if (z >= 1 && z <= n && y >= 1 && y <= n && x >= 1 && x <= n)
            v = (double)((gz * 3 + gy * 5 + gx * 7) % 13) / 12.0;
          AT3(a, z, y, x) = v;
        }
  }
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < ITERS; s++) {
    const double *all = p.base[s % 2]; /* every thread's cur array */
    double *cur = p.base[s % 2] + t * part, *nxt = p.base[(s + 1) % 2] + t * part;
    /* Halo fetch: the faces, */
    HALO(-1, 0, 0);
    HALO(1, 0, 0);
    HALO(0, -1, 0);
    HALO(0, 1, 0);
    HALO(0, 0, -1);
    HALO(0, 0, 1);
    if (p.points == 26) {
      /* the edges, */
      HALO(-1, -1, 0);
      HALO(-1, 1, 0);
      HALO(1, -1, 0);
      HALO(1, 1, 0);
      HALO(-1, 0, -1);
      HALO(-1, 0, 1);
      HALO(1, 0, -1);
      HALO(1, 0, 1);
      HALO(0, -1, -1);
      HALO(0, -1, 1);
      HALO(0, 1, -1);
      HALO(0, 1, 1);
      /* the corners. */
      HALO(-1, -1, -1);
      HALO(-1, -1, 1);
      HALO(-1, 1, -1);
      HALO(-1, 1, 1);
      HALO(1, -1, -1);
      HALO(1, -1, 1);
      HALO(1, 1, -1);
      HALO(1, 1, 1);
      for (int z = 1; z <= n; z++)
        for (int y = 1; y <= n; y++)
          for (int x = 1; x <= n; x++) {
            double sum = 0.0;
            for (int dz = -1; dz <= 1; dz++)
              for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                  if (dz != 0 || dy != 0 || dx != 0) sum += AT3(cur, z + dz, y + dy, x + dx);
            AT3(nxt, z, y, x) = sum / 26.0;
          }
    } else {
      for (int z = 1; z <= n; z++)
        for (int y = 1; y <= n; y++)
          for (int x = 1; x <= n; x++)
            AT3(nxt, z, y, x) =
                (AT3(cur, z - 1, y, x) + AT3(cur, z + 1, y, x) + AT3(cur, z, y - 1, x) +
                 AT3(cur, z, y + 1, x) + AT3(cur, z, y, x - 1) + AT3(cur, z, y, x + 1)) /
                6.0;
    }
    pthread_barrier_wait(&barrier);
  }
  const double *fin = p.base[ITERS % 2] + t * part;
  double sum = 0.0;
  for (int z = 1; z <= n; z++)
    for (int y = 1; y <= n; y++)
      for (int x = 1; x <= n; x++) sum += AT3(fin, z, y, x);
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 8;
  int T = argc > 2 ? atoi(argv[2]) : 8;
  int points = argc > 3 ? atoi(argv[3]) : 6;
  if (argc > 4 || n < 1 || n > 256 || (points != 6 && points != 26)) {
    fprintf(stderr, "usage: %s [N 1..256 [T perfect cube 1..%d [6|26]]]\n", argv[0], MAXT);
    return 2;
  }
  int q = 0;
  while ((q + 1) * (q + 1) * (q + 1) <= T) q++;
  if (T < 1 || T > MAXT || q * q * q != T) {
    fprintf(stderr, "stencil3d_halo_pthreads: T=%d must be a perfect cube in 1..%d\n", T, MAXT);
    return 2;
  }
  int ld = (n + 2 + 7) / 8 * 8; /* 64-byte rows: no granule holds two threads' data */
  size_t part = (size_t)(n + 2) * (n + 2) * ld;
  double *base[2];
  for (int par = 0; par < 2; par++) {
    void *m = NULL;
    if (posix_memalign(&m, 64, (size_t)T * part * sizeof(double)) != 0) {
      fprintf(stderr, "stencil3d_halo_pthreads: out of memory\n");
      return 1;
    }
    base[par] = m;
  }
  P = (params_t){n, T, q, ld, points, part, {base[0], base[1]}};
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "stencil3d_halo_pthreads: pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int t = 1; t < T; t++) pthread_join(tid[t], NULL);
  double sum = 0.0;
  for (int t = 0; t < T; t++) sum += result[t].v;
  free(base[0]);
  free(base[1]);
  pthread_barrier_destroy(&barrier);
  printf("stencil3d_halo_pthreads N=%d T=%d points=%d checksum=%.9f\n", n, T, points, sum);
  return 0;
}
