/* lu_blocks_pthreads.c - blocked LU with contiguous or non-contiguous blocks
 * (SPLASH-2 lu_cb / lu_ncb style, C + pthreads).
 *
 * Usage: lu_blocks_pthreads contiguous | noncontiguous
 *
 * The LU case of the CRD paper (Salehian et al., section 4.1.1): the same
 * right-looking blocked LU factorisation (no pivoting) of an N x N matrix of
 * doubles, N = 256, in blocks of B x B = 16 x 16, by P = 4 worker threads on
 * a 2 x 2 grid of owners: block (I, J) belongs to worker 2 * (I % 2) + J % 2
 * (weft thread w + 1; the main thread, 0, creates and joins them and does
 * none of the work). The workers initialise their own blocks (diagonally
 * dominant, so no pivoting is needed), then for each step K = 0..15:
 *   1. the owner of (K, K) factors it (lu0);
 *   2. the owners of the perimeter blocks (K, J) and (I, K), I, J > K,
 *      divide them by the diagonal block (bdiv, bmodd), reading it;
 *   3. every worker updates the trailing blocks (I, J) it owns,
 *      A(I, J) -= A(I, K) * A(K, J) (bmod, in SPLASH-2's daxpy form: 16
 *      reads of the top block A(K, J) per read of A(I, K)), reading the
 *      perimeter blocks that other workers wrote in step 2 - most of the
 *      program's communication, marked below;
 * with a pthread_barrier_wait after each phase.
 *
 * The two versions differ only in how a worker's blocks sit in memory and,
 * as a consequence, in the order natural code walks them:
 *   contiguous     every block is one contiguous 2 KiB array (block-major
 *                  storage, lu_cb): bmod updates one block at a time, so a
 *                  perimeter row element A(K, J)[k][j] is read again for
 *                  the next row of the block, after the other 255 words of
 *                  A(K, J) (and 16 of A(I, K));
 *   noncontiguous  the matrix is one row-major N x N array (lu_ncb): a
 *                  worker's blocks are 16-double pieces of long rows, and
 *                  the update sweeps its trailing rows across the whole
 *                  width, one matrix row at a time, so A(K, J)[k][j] is read
 *                  again only after the top blocks of all the worker's
 *                  blocks in that row (up to 7 x 256 words).
 * Same arithmetic, same results (the program prints a checksum that is equal
 * for both), same communication volume; the communication reuse distance of
 * the update loop is several times longer for noncontiguous: weft's median
 * CRD must order contiguous below noncontiguous, as the paper's bmod.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 256, B = 16, NB = N / B, P = 4 };

static double *matrix;
static int contiguous;
static pthread_barrier_t barrier;

static int owner(int I, int J) { return 2 * (I % 2) + J % 2; }

/* Element (i, j) of block (I, J): where it lives depends on the layout. */
static double *at(int I, int J, int i, int j) {
  if (contiguous) return matrix + ((size_t)(I * NB + J) * B + i) * B + j;
  return matrix + (size_t)(I * B + i) * N + J * B + j;
}

/* Distance between two rows of one block. */
static int row_stride(void) { return contiguous ? B : N; }

static void init_block(int I, int J) {
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < B; ++j) {
      const int gi = I * B + i, gj = J * B + j;
      *at(I, J, i, j) = gi == gj ? 2.0 * N : 1.0 / (1 + (gi * 7 + gj * 3) % 11);
    }
}

/* Factors the diagonal block in place: L (unit diagonal) below, U above. */
static void lu0(double *a, int ld) {
  for (int k = 0; k < B; ++k)
    for (int i = k + 1; i < B; ++i) {
      a[i * ld + k] /= a[k * ld + k];
      for (int j = k + 1; j < B; ++j) a[i * ld + j] -= a[i * ld + k] * a[k * ld + j];
    }
}

/* Row block (K, J) := L^-1 (K, J), L from the diagonal block. */
static void bdiv(const double *diag, double *a, int ld) {
  for (int k = 0; k < B; ++k)
    for (int i = k + 1; i < B; ++i)
      for (int j = 0; j < B; ++j) a[i * ld + j] -= diag[i * ld + k] * a[k * ld + j];
}

/* Column block (I, K) := (I, K) U^-1, U from the diagonal block. */
static void bmodd(const double *diag, double *a, int ld) {
  for (int i = 0; i < B; ++i)
    for (int k = 0; k < B; ++k) {
      a[i * ld + k] /= diag[k * ld + k];
      for (int j = k + 1; j < B; ++j) a[i * ld + j] -= a[i * ld + k] * diag[k * ld + j];
    }
}

/* Trailing update, contiguous blocks: one whole block at a time. Each row i
 * of the block gets alpha x row k of the top block, for every k (the daxpy
 * form of SPLASH-2's bmod). */
static void bmod_blocks(int me, int K) {
  const int ld = row_stride();
  for (int I = K + 1; I < NB; ++I)
    for (int J = K + 1; J < NB; ++J) {
      if (owner(I, J) != me) continue;
      const double *left = at(I, K, 0, 0), *top = at(K, J, 0, 0);
      double *a = at(I, J, 0, 0);
      for (int i = 0; i < B; ++i)
        for (int k = 0; k < B; ++k) {
          const double alpha = left[i * ld + k];
          for (int j = 0; j < B; ++j) a[i * ld + j] -= alpha * top[k * ld + j]; /* communication */
        }
    }
}

/* Trailing update, one row-major matrix: row by row across the full width,
 * the same daxpy on each piece of the row. */
static void bmod_rows(int me, int K) {
  for (int I = K + 1; I < NB; ++I)
    for (int i = 0; i < B; ++i)
      for (int J = K + 1; J < NB; ++J) {
        if (owner(I, J) != me) continue;
        const double *left = at(I, K, i, 0);
        double *a = at(I, J, i, 0);
        for (int k = 0; k < B; ++k) {
          const double alpha = left[k];
          const double *top = at(K, J, k, 0);
          for (int j = 0; j < B; ++j) a[j] -= alpha * top[j]; /* communication */
        }
      }
}

static void *worker(void *arg) {
  const int me = (int)(size_t)arg;
  const int ld = row_stride();
  for (int I = 0; I < NB; ++I)
    for (int J = 0; J < NB; ++J)
      if (owner(I, J) == me) init_block(I, J);
  pthread_barrier_wait(&barrier);
  for (int K = 0; K < NB; ++K) {
    if (owner(K, K) == me) lu0(at(K, K, 0, 0), ld);
    pthread_barrier_wait(&barrier);
    for (int J = K + 1; J < NB; ++J)
      if (owner(K, J) == me) bdiv(at(K, K, 0, 0), at(K, J, 0, 0), ld);
    for (int I = K + 1; I < NB; ++I)
      if (owner(I, K) == me) bmodd(at(K, K, 0, 0), at(I, K, 0, 0), ld);
    pthread_barrier_wait(&barrier);
    if (contiguous)
      bmod_blocks(me, K);
    else
      bmod_rows(me, K);
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "contiguous") && strcmp(argv[1], "noncontiguous"))) {
    fprintf(stderr, "usage: %s contiguous | noncontiguous\n", argv[0]);
    return 2;
  }
  contiguous = strcmp(argv[1], "contiguous") == 0;
  matrix = aligned_alloc(64, sizeof(double) * N * N);
  pthread_barrier_init(&barrier, NULL, P);
  pthread_t threads[P];
  for (int w = 0; w < P; ++w) pthread_create(&threads[w], NULL, worker, (void *)(size_t)w);
  for (int w = 0; w < P; ++w) pthread_join(threads[w], NULL);
  double checksum = 0;
  for (int I = 0; I < NB; ++I)
    for (int J = 0; J < NB; ++J)
      for (int i = 0; i < B; ++i)
        for (int j = 0; j < B; ++j) checksum += *at(I, J, i, j) * (1 + (i + j) % 3);
  printf("lu %s: checksum %.6f\n", argv[1], checksum);
  pthread_barrier_destroy(&barrier);
  free(matrix);
  return 0;
}
