/* stencil_pthreads.c - 2D Jacobi stencil with row blocks (C + pthreads).
 *
 * Usage: stencil_pthreads [T [H [M [S]]]]  defaults: T=4 H=64 M=256 S=8
 *   T threads (2..16); the main thread works as thread 0 and creates threads
 *   1..T-1. Grid of H rows (a multiple of T with H/T >= 2, at most 256) by M
 *   columns (a multiple of 8, 8..1024); S sweeps (1..65535).
 *
 * Two grids A and B (rows 64-byte aligned). Thread t owns the rows
 * [t*H/T, (t+1)*H/T) of both grids. Rows 0 and H-1 and columns 0 and M-1 are
 * the fixed boundary. Each thread first initializes its rows of both grids;
 * barrier. Sweep s reads X = (s even ? A : B) and writes Y = the other:
 *     Y[r][c] = 0.25 * (X[r-1][c] + X[r+1][c] + X[r][c-1] + X[r][c+1])
 * for its interior rows r and columns c = 1..M-2, adding every new value to a
 * checksum (the floating-point sum keeps the loop scalar); barrier. The first
 * row of a block reads the last row of the block above (owned by t-1), the
 * last row reads the first row of the block below (owned by t+1): each halo
 * element c = 1..M-2 is loaded once per sweep. Each thread keeps its checksum
 * in its own 64-byte slot, which the main thread reads after pthread_join.
 *
 * Expected matrices, writer row, reader column. L = granules of a halo row
 * that are read: L = M-2 at --granularity 8, L = M/8 at --granularity 64.
 * For t = 1..T-1 (the pairs of adjacent blocks), in both directions:
 *
 *   raw[t-1][t] = raw[t][t-1]     = S * L
 *   rar[t-1][t] = rar[t][t-1]     = S * (M - 2 - L)   (0 at granularity 8)
 *   inval[t-1][t] = inval[t][t-1] = (S - 1) * L
 *       (from sweep 1 on, a thread rewrites its edge row in the grid that its
 *        neighbour read as halo in the previous sweep)
 *   raw[t][0]  += 1  for t = 1..T-1   (main reads the result slots)
 *   every other entry is 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 16
#define MAXH 256
#define MAXM 1024

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double A[MAXH][MAXM];
static _Alignas(64) double B[MAXH][MAXM];
static slot_t result[MAXT];
static pthread_barrier_t barrier;

static uintptr_t pack(int t, int T, int S, int H, int M) {
  return (uintptr_t)t | (uintptr_t)T << 8 | (uintptr_t)S << 16 | (uintptr_t)H << 32 |
         (uintptr_t)M << 48;
}

static void *worker(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int t = (int)(a & 0xff), T = (int)(a >> 8 & 0xff), S = (int)(a >> 16 & 0xffff);
  int H = (int)(a >> 32 & 0xffff), M = (int)(a >> 48 & 0xffff);
  int lo = t * (H / T), hi = lo + H / T;
  int rlo = lo > 1 ? lo : 1, rhi = hi < H - 1 ? hi : H - 1; /* interior rows */
  for (int r = lo; r < hi; r++) {
    for (int c = 0; c < M; c++) {
      double v = (r == 0 || c == 0 || c == M - 1) ? 1.0 : 0.0;
      A[r][c] = v;
      B[r][c] = v;
    }
  }
  pthread_barrier_wait(&barrier);
  double check = 0.0;
  for (int s = 0; s < S; s++) {
    double(*X)[MAXM] = (s & 1) ? B : A;
    double(*Y)[MAXM] = (s & 1) ? A : B;
    for (int r = rlo; r < rhi; r++) {
      for (int c = 1; c < M - 1; c++) {
        double v = 0.25 * (X[r - 1][c] + X[r + 1][c] + X[r][c - 1] + X[r][c + 1]);
        Y[r][c] = v;
        check += v;
      }
    }
    pthread_barrier_wait(&barrier);
  }
  result[t].v = check;
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  int H = argc > 2 ? atoi(argv[2]) : 64;
  int M = argc > 3 ? atoi(argv[3]) : 256;
  int S = argc > 4 ? atoi(argv[4]) : 8;
  if (T < 2 || T > MAXT || H > MAXH || H % T != 0 || H / T < 2 || M < 8 || M > MAXM || M % 8 != 0 ||
      S < 1 || S > 65535) {
    fprintf(stderr,
            "usage: %s [T 2..%d [H multiple of T, H/T >= 2, <= %d [M multiple of 8, <= %d [S]]]]\n",
            argv[0], MAXT, MAXH, MAXM);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, (void *)pack(i, T, S, H, M)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)pack(0, T, S, H, M));
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  double sum = 0.0;
  for (int i = 0; i < T; i++) sum += result[i].v;
  pthread_barrier_destroy(&barrier);
  printf("stencil_pthreads T=%d H=%d M=%d S=%d checksum=%.6f\n", T, H, M, S, sum);
  return 0;
}
