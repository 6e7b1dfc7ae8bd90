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
 * t = i * q + j owns the blocks A(i,j), B(i,j), C(i,j): block t of each of
 * three arrays of T row-major N x N blocks (each block 64-byte aligned) that
 * the main thread allocates without touching and each owner initialises
 * (first touch: its granules belong to it). After a barrier,
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
 * few loads. A block is read in one step only, so a remote granule's reuses
 * are all within that step. Every thread does the same work: there are no
 * corner or edge threads in the communication pattern; threads differ only
 * in the step at which they read their local blocks (A at s = (q - i) mod q,
 * B at s = (q - j) mod q), and thread 0 also reads the T - 1 result slots.
 *
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
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

/* What the main thread sets before it creates the threads; each thread
 * copies it once (its loops then touch only its stack, its own blocks and
 * the blocks it reads). */
typedef struct {
  int n, t, q;
  size_t stride;     /* doubles from one thread's block to the next */
  double *a, *b, *c; /* T blocks each, block r at r * stride */
} params_t;

static params_t P;
static slot_t result[MAXT];
static pthread_barrier_t barrier;

/* C += A * B for n x n row-major blocks, i-k-j order. */
static void block_multiply_add(int n, double *restrict c, const double *restrict a,
                               const double *restrict b) {
  for (int r = 0; r < n; r++) {
    double *crow = c + (size_t)r * n;
    for (int k = 0; k < n; k++) {
      double aik = a[(size_t)r * n + k];
      const double *brow = b + (size_t)k * n;
      for (int col = 0; col < n; col++) crow[col] += aik * brow[col];
    }
  }
}

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t p = P;
  const int n = p.n, q = p.q, i = t / q, j = t % q;
  double *a = p.a + t * p.stride, *b = p.b + t * p.stride, *c = p.c + t * p.stride;
  /* First touch: the owner writes its blocks, values from global indices. */
  for (int r = 0; r < n; r++) {
    long gr = (long)i * n + r;
    for (int col = 0; col < n; col++) {
      long gc = (long)j * n + col;
      a[(size_t)r * n + col] = (double)((gr * 7 + gc * 3) % 17) / 16.0 - 0.5;
      b[(size_t)r * n + col] = (double)((gr * 5 + gc * 11) % 13) / 12.0 - 0.5;
      c[(size_t)r * n + col] = 0.0;
    }
  }
  pthread_barrier_wait(&barrier);
  for (int s = 0; s < q; s++) {
    int k = (i + j + s) % q;
    block_multiply_add(n, c, p.a + (size_t)(i * q + k) * p.stride,
                       p.b + (size_t)(k * q + j) * p.stride);
    pthread_barrier_wait(&barrier);
  }
  double sum = 0.0;
  for (size_t e = 0; e < (size_t)n * n; e++) sum += c[e];
  result[t].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 16;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  if (argc > 3 || n < 1 || n > 1024) {
    fprintf(stderr, "usage: %s [N 1..1024 [T perfect square 1..%d]]\n", argv[0], MAXT);
    return 2;
  }
  int q = 0;
  while ((q + 1) * (q + 1) <= T) q++;
  if (T < 1 || T > MAXT || q * q != T) {
    fprintf(stderr, "matmul_blocks_pthreads: T=%d must be a perfect square in 1..%d\n", T, MAXT);
    return 2;
  }
  /* Blocks start on 64-byte boundaries: no granule holds two threads' data. */
  size_t stride = ((size_t)n * n + 7) / 8 * 8;
  double *m[3];
  for (int x = 0; x < 3; x++) {
    void *mem = NULL;
    if (posix_memalign(&mem, 64, (size_t)T * stride * sizeof(double)) != 0) {
      fprintf(stderr, "matmul_blocks_pthreads: out of memory\n");
      return 1;
    }
    m[x] = mem;
  }
  P = (params_t){n, T, q, stride, m[0], m[1], m[2]};
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
  for (int x = 0; x < 3; x++) free(m[x]);
  pthread_barrier_destroy(&barrier);
  printf("matmul_blocks_pthreads N=%d T=%d checksum=%.6f\n", n, T, sum);
  return 0;
}
