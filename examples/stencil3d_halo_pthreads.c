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
 * holds the ghosts; it allocates and initialises them itself (first touch).
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

static int N, T, Q, LD, POINTS;
static double *arr[2][MAXT]; /* arr[p][t]: thread t's array of parity p */
static slot_t result[MAXT];
static pthread_barrier_t barrier;

#define AT3(a, z, y, x) (a)[((size_t)(z) * (N + 2) + (size_t)(y)) * LD + (size_t)(x)]
/* Per dimension and direction D in {-1, 0, 1}: where the neighbour's cells
 * start, where the ghosts start, and how many. */
#define SRC0(D) ((D) < 0 ? N : 1)
#define DST0(D) ((D) < 0 ? 0 : (D) > 0 ? N + 1 : 1)
#define LEN(D) ((D) == 0 ? N : 1)
#define INSIDE(c) ((c) >= 0 && (c) < Q)
/* Copies the neighbour (i+DZ, j+DY, k+DX)'s cells next to this sub-array
 * into this thread's ghosts, if that neighbour exists. */
#define HALO(DZ, DY, DX)                                             \
  do {                                                               \
    if (INSIDE(i + (DZ)) && INSIDE(j + (DY)) && INSIDE(k + (DX))) {  \
      const double *nb = arr[s % 2][t + ((DZ)*Q + (DY)) * Q + (DX)]; \
      for (int z = 0; z < LEN(DZ); z++)                              \
        for (int y = 0; y < LEN(DY); y++)                            \
          for (int x = 0; x < LEN(DX); x++)                          \
            AT3(cur, DST0(DZ) + z, DST0(DY) + y, DST0(DX) + x) =     \
                AT3(nb, SRC0(DZ) + z, SRC0(DY) + y, SRC0(DX) + x);   \
    }                                                                \
  } while (0)

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  int i = t / (Q * Q), j = t / Q % Q, k = t % Q;
  size_t bytes = (size_t)(N + 2) * (N + 2) * LD * sizeof(double);
  for (int p = 0; p < 2; p++) {
    void *m = NULL;
    if (posix_memalign(&m, 64, bytes) != 0) {
      fprintf(stderr, "stencil3d_halo_pthreads: out of memory\n");
      exit(1);
    }
    double *a = m;
    for (int z = 0; z < N + 2; z++)
      for (int y = 0; y < N + 2; y++)
        for (int x = 0; x < LD; x++) {
          long gz = (long)i * N + z - 1, gy = (long)j * N + y - 1, gx = (long)k * N + x - 1;
          double v = 0.0;
          if (gz == -1)
            v = 1.0; /* the global z = -1 face */
          else if (z >= 1 && z <= N && y >= 1 && y <= N && x >= 1 && x <= N)
            v = (double)((gz * 3 + gy * 5 + gx * 7) % 13) / 12.0;
          AT3(a, z, y, x) = v;
        }
    arr[p][t] = a;
  }
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < ITERS; s++) {
    double *cur = arr[s % 2][t], *nxt = arr[(s + 1) % 2][t];
    /* Halo fetch: the faces, */
    HALO(-1, 0, 0);
    HALO(1, 0, 0);
    HALO(0, -1, 0);
    HALO(0, 1, 0);
    HALO(0, 0, -1);
    HALO(0, 0, 1);
    if (POINTS == 26) {
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
      for (int z = 1; z <= N; z++)
        for (int y = 1; y <= N; y++)
          for (int x = 1; x <= N; x++) {
            double sum = 0.0;
            for (int dz = -1; dz <= 1; dz++)
              for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                  if (dz != 0 || dy != 0 || dx != 0) sum += AT3(cur, z + dz, y + dy, x + dx);
            AT3(nxt, z, y, x) = sum / 26.0;
          }
    } else {
      for (int z = 1; z <= N; z++)
        for (int y = 1; y <= N; y++)
          for (int x = 1; x <= N; x++)
            AT3(nxt, z, y, x) =
                (AT3(cur, z - 1, y, x) + AT3(cur, z + 1, y, x) + AT3(cur, z, y - 1, x) +
                 AT3(cur, z, y + 1, x) + AT3(cur, z, y, x - 1) + AT3(cur, z, y, x + 1)) /
                6.0;
    }
    pthread_barrier_wait(&barrier);
  }
  const double *fin = arr[ITERS % 2][t];
  double sum = 0.0;
  for (int z = 1; z <= N; z++)
    for (int y = 1; y <= N; y++)
      for (int x = 1; x <= N; x++) sum += AT3(fin, z, y, x);
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  N = argc > 1 ? atoi(argv[1]) : 8;
  T = argc > 2 ? atoi(argv[2]) : 8;
  POINTS = argc > 3 ? atoi(argv[3]) : 6;
  if (argc > 4 || N < 1 || N > 256 || (POINTS != 6 && POINTS != 26)) {
    fprintf(stderr, "usage: %s [N 1..256 [T perfect cube 1..%d [6|26]]]\n", argv[0], MAXT);
    return 2;
  }
  Q = 0;
  while ((Q + 1) * (Q + 1) * (Q + 1) <= T) Q++;
  if (T < 1 || T > MAXT || Q * Q * Q != T) {
    fprintf(stderr, "stencil3d_halo_pthreads: T=%d must be a perfect cube in 1..%d\n", T, MAXT);
    return 2;
  }
  LD = (N + 2 + 7) / 8 * 8;
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
  for (int t = 0; t < T; t++) {
    free(arr[0][t]);
    free(arr[1][t]);
  }
  pthread_barrier_destroy(&barrier);
  printf("stencil3d_halo_pthreads N=%d T=%d points=%d checksum=%.9f\n", N, T, POINTS, sum);
  return 0;
}
