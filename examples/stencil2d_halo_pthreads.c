/* stencil2d_halo_pthreads.c - 4-point or 8-point 2-D stencil, each thread an
 * N x N sub-array of a q x q thread grid, halos read from the neighbours'
 * arrays (C + pthreads).
 *
 * Usage: stencil2d_halo_pthreads [N [T [4|8]]]   defaults: N=32 T=4 4
 *   N  sub-array order per thread (1..1024);
 *   T  threads, a perfect square q * q (1..256). The main thread works as
 *      rank 0 and creates ranks 1..T-1 in order, so weft's thread id is the
 *      rank;
 *   4|8  the stencil: 4 points (N, S, W, E) or 8 (also NW, NE, SW, SE).
 *
 * Thread t = i * q + j sits at row i, column j of the thread grid and owns
 * the sub-array of global rows i*N..i*N+N-1 and columns j*N..j*N+N-1. It
 * keeps it in two arrays of its own, (N+2) x LD doubles with LD = N+2
 * rounded up to a multiple of 8 (64-byte aligned rows), whose border (row 0,
 * row N+1, column 0, column N+1) is the ghost layer; it allocates and
 * initialises them itself (first touch: they are its granules). The ghosts
 * on the global boundary hold the fixed boundary value (1.0 on the top edge
 * of the global grid, 0.0 on the others) and are never rewritten.
 *
 * S = 4 iterations; iteration s reads array s % 2 (cur) and writes the other
 * (nxt), then a barrier. Each iteration first fetches the halo: for each
 * neighbour that exists, one copy loop of its own reads the neighbour's
 * boundary cells of its cur array (remote) and writes the local ghosts:
 *   north (i-1, j): its last interior row, N loads (about N/8 granules);
 *   south (i+1, j): its first interior row, N loads;
 *   west  (i, j-1): its last interior column, N loads (N granules, strided);
 *   east  (i, j+1): its first interior column, N loads (N granules);
 *   8-point only, one load each: the nearest interior corner cell of the
 *   diagonal neighbours NW (i-1, j-1), NE (i-1, j+1), SW (i+1, j-1),
 *   SE (i+1, j+1).
 * Then it applies the stencil to its interior (all loads local):
 *   4-point: nxt = (N + S + W + E) / 4; 8-point: nxt = (sum of 8) / 8.
 * So the remote operations are the 4 (8) halo copy loops, and which run
 * depends on the thread's place: a corner thread (2 neighbours; 3 with the
 * diagonal one for 8-point) runs 2 (3) of them, an edge thread 3 (5), an
 * interior thread 4 (8) (q >= 3 has all three kinds; q = 2: four corners;
 * q = 1: no remote reads). A halo granule is reused two iterations later
 * (cur alternates), after about 2 (N^2 + 2N) / 8 local granules and the
 * other halos.
 *
 * Deterministic: the program prints the sum over threads (in rank order) of
 * the sums of their final sub-arrays.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 256
#define ITERS 4

typedef struct {
  _Alignas(64) double v;
} slot_t;

static int N, T, Q, LD, POINTS;
static double *arr[2][MAXT]; /* arr[p][t]: thread t's array of parity p */
static slot_t result[MAXT];
static pthread_barrier_t barrier;

#define AT(a, r, c) (a)[(size_t)(r)*LD + (c)]

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  int i = t / Q, j = t % Q;
  size_t bytes = (size_t)(N + 2) * LD * sizeof(double);
  for (int p = 0; p < 2; p++) {
    void *m = NULL;
    if (posix_memalign(&m, 64, bytes) != 0) {
      fprintf(stderr, "stencil2d_halo_pthreads: out of memory\n");
      exit(1);
    }
    double *a = m;
    for (int r = 0; r < N + 2; r++)
      for (int c = 0; c < LD; c++) {
        long gr = (long)i * N + r - 1, gc = (long)j * N + c - 1;
        double v = 0.0;
        if (r == 0 && i == 0)
          v = 1.0; /* the global top edge */
        else if (r >= 1 && r <= N && c >= 1 && c <= N)
          v = (double)((gr * 3 + gc * 5) % 11) / 10.0;
        AT(a, r, c) = v;
      }
    arr[p][t] = a;
  }
  pthread_barrier_wait(&barrier);
  int north = i > 0, south = i<Q - 1, west = j> 0, east = j < Q - 1;
  for (int s = 0; s < ITERS; s++) {
    double *cur = arr[s % 2][t], *nxt = arr[(s + 1) % 2][t];
    const double *nb;
    /* Halo fetch: remote loads from the neighbours' cur arrays. */
    if (north) {
      nb = arr[s % 2][t - Q];
      for (int c = 1; c <= N; c++) AT(cur, 0, c) = AT(nb, N, c);
    }
    if (south) {
      nb = arr[s % 2][t + Q];
      for (int c = 1; c <= N; c++) AT(cur, N + 1, c) = AT(nb, 1, c);
    }
    if (west) {
      nb = arr[s % 2][t - 1];
      for (int r = 1; r <= N; r++) AT(cur, r, 0) = AT(nb, r, N);
    }
    if (east) {
      nb = arr[s % 2][t + 1];
      for (int r = 1; r <= N; r++) AT(cur, r, N + 1) = AT(nb, r, 1);
    }
    if (POINTS == 8) {
      if (north && west) AT(cur, 0, 0) = AT(arr[s % 2][t - Q - 1], N, N);
      if (north && east) AT(cur, 0, N + 1) = AT(arr[s % 2][t - Q + 1], N, 1);
      if (south && west) AT(cur, N + 1, 0) = AT(arr[s % 2][t + Q - 1], 1, N);
      if (south && east) AT(cur, N + 1, N + 1) = AT(arr[s % 2][t + Q + 1], 1, 1);
      for (int r = 1; r <= N; r++)
        for (int c = 1; c <= N; c++)
          AT(nxt, r, c) =
              0.125 * (AT(cur, r - 1, c - 1) + AT(cur, r - 1, c) + AT(cur, r - 1, c + 1) +
                       AT(cur, r, c - 1) + AT(cur, r, c + 1) + AT(cur, r + 1, c - 1) +
                       AT(cur, r + 1, c) + AT(cur, r + 1, c + 1));
    } else {
      for (int r = 1; r <= N; r++)
        for (int c = 1; c <= N; c++)
          AT(nxt, r, c) = 0.25 * (AT(cur, r - 1, c) + AT(cur, r + 1, c) + AT(cur, r, c - 1) +
                                  AT(cur, r, c + 1));
    }
    pthread_barrier_wait(&barrier);
  }
  const double *fin = arr[ITERS % 2][t];
  double sum = 0.0;
  for (int r = 1; r <= N; r++)
    for (int c = 1; c <= N; c++) sum += AT(fin, r, c);
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  N = argc > 1 ? atoi(argv[1]) : 32;
  T = argc > 2 ? atoi(argv[2]) : 4;
  POINTS = argc > 3 ? atoi(argv[3]) : 4;
  if (argc > 4 || N < 1 || N > 1024 || (POINTS != 4 && POINTS != 8)) {
    fprintf(stderr, "usage: %s [N 1..1024 [T perfect square 1..%d [4|8]]]\n", argv[0], MAXT);
    return 2;
  }
  Q = 0;
  while ((Q + 1) * (Q + 1) <= T) Q++;
  if (T < 1 || T > MAXT || Q * Q != T) {
    fprintf(stderr, "stencil2d_halo_pthreads: T=%d must be a perfect square in 1..%d\n", T, MAXT);
    return 2;
  }
  LD = (N + 2 + 7) / 8 * 8;
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "stencil2d_halo_pthreads: pthread_create failed\n");
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
  printf("stencil2d_halo_pthreads N=%d T=%d points=%d checksum=%.9f\n", N, T, POINTS, sum);
  return 0;
}
