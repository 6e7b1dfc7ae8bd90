/* lu_cyclic_pthreads.c - blocked LU factorisation (no pivoting) of an N x N
 * matrix stored block-major, its B x B blocks dealt round-robin to the
 * threads (C + pthreads; the shape of the LU test of Berkeley's UPC suite).
 *
 * Usage: lu_cyclic_pthreads [N [T [B]]]   defaults: N=64 T=4 B=16
 *   N  matrix order, a multiple of B (B..2048);
 *   T  threads (1..256). The main thread works as rank 0 and creates ranks
 *      1..T-1 in order, so weft's thread id is the rank;
 *   B  block order: 8, 16 or 32.
 *
 * Storage: nb = N / B blocks per row; block (I, J) is the contiguous B x B
 * row-major array at a + (I * nb + J) * B * B, so the matrix is a sequence of
 * nb * nb blocks in block-row-major order, and block number I * nb + J
 * belongs to thread (I * nb + J) % T: a 1-D block-cyclic distribution of the
 * array with blocks of B * B elements. The main thread allocates and
 * initialises the whole matrix (diagonally dominant, so no pivoting is
 * needed) and declares the distribution with WEFT_DISTRIBUTE, so weft's owner
 * of each granule is the block's thread.
 *
 * Step K = 0..nb-1, each phase followed by a barrier:
 *   1. the owner of the diagonal block (K, K) factors it in place (L\U);
 *   2. the owners of row blocks (K, J), J > K, solve L(K,K) X = A(K,J), and
 *      the owners of column blocks (I, K), I > K, solve X U(K,K) = A(I,K):
 *      each reads the diagonal block, remote unless it owns it too;
 *   3. the owners of trailing blocks (I, J), I, J > K, update
 *      A(I,J) -= A(I,K) * A(K,J), reading the column block A(I,K) and the
 *      row block A(K,J), each remote unless the thread owns it.
 * Which reads are remote depends on nb mod T: the owner of (I, J) is
 * (I * nb + J) % T, so the owner of A(I,K) is at distance (J - K) and that of
 * A(K,J) at distance (I - K) * nb in the cyclic order. The owners of
 * diagonal blocks ((K * nb + K) % T for some K) do the extra phase-1 work,
 * and in each step the diagonal block is read remotely by every solver of
 * phase 2 but its owner: the "diagonal" threads communicate differently from
 * the others (the paper's grouping). With T dividing nb every block column
 * has one owner (J % T), so all reads of A(I,K) in phase 3 come from thread
 * K % T; otherwise the owners rotate along the column. With nb^2 = T
 * (N = B sqrt(T)) every thread owns one block and the owners form a
 * sqrt(T) x sqrt(T) grid: thread I nb + J factors its block if I = J
 * (the diagonal), solves it if I = K or J = K, and otherwise updates it in
 * min(I, J) steps from its grid row's left neighbours A(I,K) and its grid
 * column's upper neighbours A(K,J).
 * The per-block work shrinks with K (trailing matrix), so the threads' loads
 * are imbalanced near the end, as in any right-looking LU.
 *
 * Besides: each thread copies the parameters the main thread set (a few
 * loads of thread 0's granules) into locals, so its loops touch only its
 * stack, its own data and the data it reads from others; no other shared
 * variable is read in a loop. The barrier is pthread_barrier_wait (libc,
 * not instrumented).
 *
 * The result does not depend on T: each block is computed by the same code in
 * the same order whoever owns it. The program prints the sum of all elements
 * of the factored matrix (blocks in storage order, summed by the main thread
 * from per-block sums the owners write, one 64-byte slot per block).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <weft/distribution.h>

#define MAXT 256

/* What the main thread sets before it creates the threads; each thread
 * copies it once onto its stack. */
typedef struct {
  int n, t, b, nb;
  double *a;        /* the matrix, block-major */
  double *blocksum; /* per-block sums of the factored matrix, block b's at 8 b */
} params_t;

static params_t P;
static pthread_barrier_t barrier;

static double *block(const params_t *m, int I, int J) {
  return m->a + ((size_t)I * m->nb + J) * m->b * m->b;
}
static int owner(const params_t *m, int I, int J) { return (int)(((long)I * m->nb + J) % m->t); }

/* In place: the diagonal block becomes L (unit lower, below) and U. */
static void factor_diagonal(int B, double *d) {
  for (int k = 0; k < B; k++) {
    double pivot = d[k * B + k];
    for (int i = k + 1; i < B; i++) {
      double l = d[i * B + k] / pivot;
      d[i * B + k] = l;
      for (int j = k + 1; j < B; j++) d[i * B + j] -= l * d[k * B + j];
    }
  }
}

/* x := L^-1 x for a row block x, L the unit lower part of the diagonal d. */
static void solve_row_block(int B, const double *restrict d, double *restrict x) {
  for (int k = 0; k < B; k++)
    for (int i = k + 1; i < B; i++) {
      double l = d[i * B + k];
      for (int j = 0; j < B; j++) x[i * B + j] -= l * x[k * B + j];
    }
}

/* x := x U^-1 for a column block x, U the upper part of the diagonal d. */
static void solve_column_block(int B, const double *restrict d, double *restrict x) {
  for (int i = 0; i < B; i++)
    for (int k = 0; k < B; k++) {
      double v = x[i * B + k] / d[k * B + k];
      x[i * B + k] = v;
      for (int j = k + 1; j < B; j++) x[i * B + j] -= v * d[k * B + j];
    }
}

/* c -= l * u, i-k-j order. */
static void update_trailing_block(int B, const double *restrict l, const double *restrict u,
                                  double *restrict c) {
  for (int i = 0; i < B; i++)
    for (int k = 0; k < B; k++) {
      double lik = l[i * B + k];
      for (int j = 0; j < B; j++) c[i * B + j] -= lik * u[k * B + j];
    }
}

static void *worker(void *arg) {
  const int t = (int)(intptr_t)arg;
  const params_t p = P, *m = &p;
  const int B = p.b, NB = p.nb;
  for (int K = 0; K < NB; K++) {
    if (owner(m, K, K) == t) factor_diagonal(B, block(m, K, K));
    pthread_barrier_wait(&barrier);
    for (int J = K + 1; J < NB; J++)
      if (owner(m, K, J) == t) solve_row_block(B, block(m, K, K), block(m, K, J));
    for (int I = K + 1; I < NB; I++)
      if (owner(m, I, K) == t) solve_column_block(B, block(m, K, K), block(m, I, K));
    pthread_barrier_wait(&barrier);
    for (int I = K + 1; I < NB; I++)
      for (int J = K + 1; J < NB; J++)
        if (owner(m, I, J) == t)
          update_trailing_block(B, block(m, I, K), block(m, K, J), block(m, I, J));
    pthread_barrier_wait(&barrier);
  }
  for (int b = t; b < NB * NB; b += p.t) {
    const double *x = p.a + (size_t)b * B * B;
    double sum = 0.0;
    for (int e = 0; e < B * B; e++) sum += x[e];
    p.blocksum[(size_t)b * 8] = sum;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64;
  int T = argc > 2 ? atoi(argv[2]) : 4;
  int B = argc > 3 ? atoi(argv[3]) : 16;
  if (argc > 4 || (B != 8 && B != 16 && B != 32) || n < B || n > 2048 || n % B != 0) {
    fprintf(stderr, "usage: %s [N multiple of B, B..2048 [T 1..%d [B 8|16|32]]]\n", argv[0], MAXT);
    return 2;
  }
  if (T < 1 || T > MAXT) {
    fprintf(stderr, "lu_cyclic_pthreads: T=%d must be in 1..%d\n", T, MAXT);
    return 2;
  }
  int NB = n / B;
  size_t count = (size_t)n * n;
  void *mem = NULL;
  void *sums = NULL;
  if (posix_memalign(&mem, 64, count * sizeof(double)) != 0 ||
      posix_memalign(&sums, 64, (size_t)NB * NB * 8 * sizeof(double)) != 0) {
    fprintf(stderr, "lu_cyclic_pthreads: out of memory\n");
    return 1;
  }
  double *blocksum = sums;
  P = (params_t){n, T, B, NB, mem, blocksum};
  /* UPC's shared [B*B] double a[...]: blocks of B*B elements round-robin; the
   * per-block sums likewise, a 64-byte slot per block. */
  WEFT_DISTRIBUTE(P.a, sizeof(double), count, WEFT_BLOCK_CYCLIC, (size_t)B * B, T);
  WEFT_DISTRIBUTE(blocksum, sizeof(double), (size_t)NB * NB * 8, WEFT_BLOCK_CYCLIC, 8, T);
  /* A(i,j) = 1 / (1 + |i - j|) off the diagonal, N on it: diagonally dominant. */
  for (int I = 0; I < NB; I++)
    for (int J = 0; J < NB; J++) {
      double *x = block(&P, I, J);
      for (int r = 0; r < B; r++)
        for (int c = 0; c < B; c++) {
          int i = I * B + r, j = J * B + c;
          x[r * B + c] = i == j ? (double)n : 1.0 / (1.0 + (i > j ? i - j : j - i));
        }
    }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int t = 1; t < T; t++) {
    if (pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) != 0) {
      fprintf(stderr, "lu_cyclic_pthreads: pthread_create failed\n");
      return 1;
    }
  }
  worker((void *)(intptr_t)0);
  for (int t = 1; t < T; t++) pthread_join(tid[t], NULL);
  double sum = 0.0;
  for (int b = 0; b < NB * NB; b++) sum += blocksum[(size_t)b * 8];
  pthread_barrier_destroy(&barrier);
  free(P.a);
  free(blocksum);
  printf("lu_cyclic_pthreads N=%d T=%d B=%d checksum=%.9f\n", n, T, B, sum);
  return 0;
}
