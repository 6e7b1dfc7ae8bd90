/* matmul_blocks_pthreads.c - dense matrix multiply C = A * B with one N x N
 * block of each matrix per thread (SUMMA / Cannon-like, C + pthreads).
 *
 * Usage: matmul_blocks_pthreads [N [T]]   defaults: N=16 T=4
 *   N  block order (1..1024): every thread owns one N x N block of A, B and C;
 *   T  threads, a perfect square q * q (1..256). The main thread works as
 *      rank 0 and creates ranks 1..T-1 in order, so weft's thread id is the
 *      rank.
 *
 * The global matrices are (qN) x (qN). Threads form a q x q grid: rank
 * t = i * q + j owns the blocks A(i,j), B(i,j), C(i,j), each a separate
 * 64-byte aligned row-major N x N array that the owner allocates and
 * initialises (first touch: its granules belong to it). After a barrier,
 * thread (i,j) computes C(i,j) = sum_k A(i,k) * B(k,j) in q steps,
 * k = (i + j + s) mod q for step s = 0..q-1 (Cannon's skew, so that not every
 * thread reads the same block at once), with a barrier after each step.
 * Each step is an i-k-j block product that reads A(i,k) and B(k,j) in place,
 * from their owners' arrays:
 *   A(i,k) is its row neighbour (i,k)'s block: remote unless k == j;
 *   B(k,j) is its column neighbour (k,j)'s block: remote unless k == i.
 * So every thread reads q - 1 remote A blocks (from every other thread in its
 * grid row) and q - 1 remote B blocks (every other thread in its grid
 * column), and one local block of each; C(i,j) is local. Per step a thread
 * loads every element of A(i,k) once (N^2 loads) and every row of B(k,j) N
 * times (N^3 loads): a B granule is reused after the rest of B(k,j) and a row
 * of C, about N^2/8 + N/8 granules (64-byte granules), an A granule within a
 * few loads. Every thread does the same work: there are no corner or edge
 * threads in the communication pattern (all threads of the grid are alike,
 * except that ranks with i == j read their local blocks at step 0).
 *
 * Deterministic: each thread's summation order is fixed by (i, j, q). The
 * program prints the sum of all elements of C (rank order); it equals the
 * same product computed with another (q, N) of equal qN up to rounding.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 256

typedef struct {
  _Alignas(64) double v;
} slot_t;

static int N, T, Q;
static double *Ablk[MAXT], *Bblk[MAXT], *Cblk[MAXT];
static slot_t result[MAXT];
static pthread_barrier_t barrier;

static double *alloc_block(void) {
  void *p = NULL;
  size_t bytes = ((size_t)N * N * sizeof(double) + 63) & ~(size_t)63;
  if (posix_memalign(&p, 64, bytes) != 0) {
    fprintf(stderr, "matmul_blocks_pthreads: out of memory\n");
    exit(1);
  }
  return p;
}

/* C += A * B for N x N row-major blocks, i-k-j order. */
static void block_multiply_add(double *restrict c, const double *restrict a,
                               const double *restrict b) {
  for (int r = 0; r < N; r++) {
    double *crow = c + (size_t)r * N;
    for (int k = 0; k < N; k++) {
      double aik = a[(size_t)r * N + k];
      const double *brow = b + (size_t)k * N;
      for (int col = 0; col < N; col++) crow[col] += aik * brow[col];
    }
  }
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  int i = t / Q, j = t % Q;
  double *a = alloc_block(), *b = alloc_block(), *c = alloc_block();
  /* First touch: the owner writes its blocks, values from global indices. */
  for (int r = 0; r < N; r++) {
    long gr = (long)i * N + r;
    for (int col = 0; col < N; col++) {
      long gc = (long)j * N + col;
      a[(size_t)r * N + col] = (double)((gr * 7 + gc * 3) % 17) / 16.0 - 0.5;
      b[(size_t)r * N + col] = (double)((gr * 5 + gc * 11) % 13) / 12.0 - 0.5;
      c[(size_t)r * N + col] = 0.0;
    }
  }
  Ablk[t] = a;
  Bblk[t] = b;
  Cblk[t] = c;
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < Q; s++) {
    int k = (i + j + s) % Q;
    block_multiply_add(c, Ablk[i * Q + k], Bblk[k * Q + j]);
    pthread_barrier_wait(&barrier);
  }
  double sum = 0.0;
  for (size_t e = 0; e < (size_t)N * N; e++) sum += c[e];
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  N = argc > 1 ? atoi(argv[1]) : 16;
  T = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3 || N < 1 || N > 1024) {
    fprintf(stderr, "usage: %s [N 1..1024 [T perfect square 1..%d]]\n", argv[0], MAXT);
    return 2;
  }
  Q = 0;
  while ((Q + 1) * (Q + 1) <= T) Q++;
  if (T < 1 || T > MAXT || Q * Q != T) {
    fprintf(stderr, "matmul_blocks_pthreads: T=%d must be a perfect square in 1..%d\n", T, MAXT);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "matmul_blocks_pthreads: pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int t = 1; t < T; t++) pthread_join(tid[t], NULL);
  double sum = 0.0;
  for (int t = 0; t < T; t++) sum += result[t].v;
  for (int t = 0; t < T; t++) {
    free(Ablk[t]);
    free(Bblk[t]);
    free(Cblk[t]);
  }
  pthread_barrier_destroy(&barrier);
  printf("matmul_blocks_pthreads N=%d T=%d checksum=%.6f\n", N, T, sum);
  return 0;
}
