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
 * row N+1, column 0, column N+1) is the ghost layer: part t of two arrays
 * of T such parts that the main thread allocates without touching; thread
 * t initialises its parts itself (first touch: they are its granules). The ghosts
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
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
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

/* What the main thread sets before it creates the threads; each thread
 * copies it once. */
typedef struct {
  int n, t, q, ld, points;
  size_t part;     /* doubles per thread's array: (N+2) * LD */
  double *base[2]; /* parity p: T arrays, thread r's at base[p] + r * part */
} params_t;

static params_t P;
static slot_t result[MAXT];
static pthread_barrier_t barrier;

#define AT(a, r, c) (a)[(size_t)(r)*ld + (c)]

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t p = P;
  const int n = p.n, q = p.q, ld = p.ld, i = t / q, j = t % q;
  const size_t part = p.part;
  /* First touch of both arrays: the global boundary in the ghosts. */
  for (int par = 0; par < 2; par++) {
    double *a = p.base[par] + t * part;
    for (int r = 0; r < n + 2; r++)
      for (int c = 0; c < ld; c++) {
        long gr = (long)i * n + r - 1, gc = (long)j * n + c - 1;
        double v = 0.0;
        if (r == 0 && i == 0)
          v = 1.0; /* the global top edge */
        else if (r >= 1 && r <= n && c >= 1 && c <= n)
          v = (double)((gr * 3 + gc * 5) % 11) / 10.0;
        AT(a, r, c) = v;
      }
  }
  pthread_barrier_wait(&barrier);
  const int north = i > 0, south = i<q - 1, west = j> 0, east = j < q - 1;
  for (int s = 0; s < ITERS; s++) {
    const double *all = p.base[s % 2]; /* every thread's cur array */
    double *cur = p.base[s % 2] + t * part, *nxt = p.base[(s + 1) % 2] + t * part;
    const double *nb;
    /* Halo fetch: remote loads from the neighbours' cur arrays. */
    if (north) {
      nb = all + (t - q) * part;
      for (int c = 1; c <= n; c++) AT(cur, 0, c) = AT(nb, n, c);
    }
    if (south) {
      nb = all + (t + q) * part;
      for (int c = 1; c <= n; c++) AT(cur, n + 1, c) = AT(nb, 1, c);
    }
    if (west) {
      nb = all + (t - 1) * part;
      for (int r = 1; r <= n; r++) AT(cur, r, 0) = AT(nb, r, n);
    }
    if (east) {
      nb = all + (t + 1) * part;
      for (int r = 1; r <= n; r++) AT(cur, r, n + 1) = AT(nb, r, 1);
    }
    if (p.points == 8) {
      if (north && west) AT(cur, 0, 0) = AT(all + (t - q - 1) * part, n, n);
      if (north && east) AT(cur, 0, n + 1) = AT(all + (t - q + 1) * part, n, 1);
      if (south && west) AT(cur, n + 1, 0) = AT(all + (t + q - 1) * part, 1, n);
      if (south && east) AT(cur, n + 1, n + 1) = AT(all + (t + q + 1) * part, 1, 1);
      for (int r = 1; r <= n; r++)
        for (int c = 1; c <= n; c++)
          AT(nxt, r, c) =
              0.125 * (AT(cur, r - 1, c - 1) + AT(cur, r - 1, c) + AT(cur, r - 1, c + 1) +
                       AT(cur, r, c - 1) + AT(cur, r, c + 1) + AT(cur, r + 1, c - 1) +
                       AT(cur, r + 1, c) + AT(cur, r + 1, c + 1));
    } else {
      for (int r = 1; r <= n; r++)
        for (int c = 1; c <= n; c++)
          AT(nxt, r, c) = 0.25 * (AT(cur, r - 1, c) + AT(cur, r + 1, c) + AT(cur, r, c - 1) +
                                  AT(cur, r, c + 1));
    }
    pthread_barrier_wait(&barrier);
  }
  const double *fin = p.base[ITERS % 2] + t * part;
  double sum = 0.0;
  for (int r = 1; r <= n; r++)
    for (int c = 1; c <= n; c++) sum += AT(fin, r, c);
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 32;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  int points = argc > 3 ? atoi(argv[3]) : 4;
  if (argc > 4 || n < 1 || n > 1024 || (points != 4 && points != 8)) {
    fprintf(stderr, "usage: %s [N 1..1024 [T perfect square 1..%d [4|8]]]\n", argv[0], MAXT);
    return 2;
  }
  int q = 0;
  while ((q + 1) * (q + 1) <= T) q++;
  if (T < 1 || T > MAXT || q * q != T) {
    fprintf(stderr, "stencil2d_halo_pthreads: T=%d must be a perfect square in 1..%d\n", T, MAXT);
    return 2;
  }
  int ld = (n + 2 + 7) / 8 * 8; /* 64-byte rows: no granule holds two threads' data */
  size_t part = (size_t)(n + 2) * ld;
  double *base[2];
  for (int par = 0; par < 2; par++) {
    void *m = NULL;
    if (posix_memalign(&m, 64, (size_t)T * part * sizeof(double)) != 0) {
      fprintf(stderr, "stencil2d_halo_pthreads: out of memory\n");
      return 1;
    }
    base[par] = m;
  }
  P = (params_t){n, T, q, ld, points, part, {base[0], base[1]}};
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
  free(base[0]);
  free(base[1]);
  pthread_barrier_destroy(&barrier);
  printf("stencil2d_halo_pthreads N=%d T=%d points=%d checksum=%.9f\n", n, T, points, sum);
  return 0;
}
