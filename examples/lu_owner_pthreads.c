/* lu_owner_pthreads.c - load imbalance from a skewed block owner (LU-like, C + pthreads).
 *
 * Usage: lu_owner_pthreads              (no arguments: everything is fixed)
 *
 * The LU case of the LIME paper (Oh et al., ICSE 2011, section 5.5.1):
 * SPLASH-2 LU hands out the blocks of the trailing matrix with
 *     if (BlockOwner(I, J) == MyNum) { ... bmod(...) ... }
 * and an owner function that does not spread the blocks evenly leaves some
 * threads with many more block updates than others.
 *
 * The main thread creates P = 8 workers and joins them; it does none of the
 * work. Worker w (w = 0..7) is weft thread w + 1 (0 is the main thread).
 * The matrix is NB x NB = 16 x 16 blocks of BS x BS = 8 x 8 doubles, stored
 * block by block (128 KiB), and is filled by the main thread before it
 * creates the workers.
 *
 * Step k = 0..NB-2 (15 steps, each ended by a pthread_barrier_wait, so 15
 * instances of one parallel section): every worker visits every trailing
 * block (I, J), k < I, J < NB, and updates it only if it owns it:
 *     if (owner(I, J) == me)                       <- the marked line
 *       A[I][J] -= 1/8 * A[I][k] * A[k][J]         (8x8x8 triple loop, bmod)
 * with owner(I, J) = (I * J) % P, which favours the even workers (products
 * of two numbers are even three times out of four, and multiples of 4 half
 * the time). This is the trailing update of a right-looking blocked LU; the
 * diagonal and perimeter steps are left out, so the owner test is the only
 * decision that differs between threads: every worker runs the same (I, J)
 * loops, and bmod has constant trip counts and no data-dependent branch.
 * Blocks written in step k (I, J > k) are never read in step k (column and
 * row k), so there is no race.
 *
 * Block updates per worker (= taken branches of the marked line), step k:
 *   k   w0 w1 w2 w3 w4 w5 w6 w7   total
 *   0   49 16 32 16 48 16 32 16    225
 *   1   47 13 28 12 44 12 28 12    196
 *   2   41 13 22 12 37 12 20 12    169
 *   3   39 10 18 10 33  8 18  8    144
 *   4   28 10 18 10 21  8 18  8    121
 *   5   26  7 16  6 19  6 14  6    100
 *   6   22  7 10  6 14  6 10  6     81
 *   7   20  4  8  4 12  4  8  4     64
 *   8    5  4  8  4 12  4  8  4     49
 *   9    5  3  6  2 10  2  6  2     36
 *  10    3  3  4  2  7  2  2  2     25
 *  11    3  2  2  2  5  0  2  0     16
 *  12    0  2  2  2  1  0  2  0      9
 *  13    0  1  2  0  1  0  0  0      4
 *  14    0  1  0  0  0  0  0  0      1
 * (most loaded / least loaded: 3x to 5x in steps 0-10). Each update is 512
 * multiply-adds: 1024 + 64 loads, 64 stores. Every worker also runs the
 * (I, J) loop and the owner test (NB-1-k)^2 times in step k.
 *
 * Expected: in every step the per-thread work is a linear function of the
 * taken count of the owner test, so the top cause of the imbalance is the
 * line marked with the top-cause comment below (the paper's lu.C:668). The
 * main thread sums the matrix after the join and prints it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define P 8   /* workers */
#define NB 16 /* blocks per dimension */
#define BS 8  /* block size */

static _Alignas(64) double A[NB][NB][BS * BS];
static pthread_barrier_t barrier;

/* The block owner (BlockOwner in SPLASH-2 LU). A macro rather than a function
 * so that all the code of the test, not only its branch, is on the line of
 * the `if` (an inlined function's instructions keep the function's line). */
#define owner(I, J) (((I) * (J)) % P)

/* c -= 1/8 * a * b, for BS x BS blocks stored row by row. */
static void bmod(double *restrict c, const double *restrict a, const double *restrict b) {
  for (int i = 0; i < BS; i++) {
    for (int kk = 0; kk < BS; kk++) {
      const double aik = 0.125 * a[i * BS + kk];
      for (int j = 0; j < BS; j++) c[i * BS + j] -= aik * b[kk * BS + j];
    }
  }
}

static void *worker(void *arg) {
  const int me = (int)(uintptr_t)arg;
  for (int k = 0; k < NB - 1; k++) {
    for (int I = k + 1; I < NB; I++) {
      for (int J = k + 1; J < NB; J++) {
        if (owner(I, J) == me) { /* weft:top-cause */
          bmod(A[I][J], A[I][k], A[k][J]);
        }
      }
    }
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

int main(void) {
  for (int I = 0; I < NB; I++)
    for (int J = 0; J < NB; J++)
      for (int e = 0; e < BS * BS; e++)
        A[I][J][e] = (double)((I * 31 + J * 17 + e * 7) % 29) / 29.0 + (I == J ? 2.0 : 0.0);
  pthread_barrier_init(&barrier, NULL, P);
  pthread_t tid[P];
  for (int w = 0; w < P; w++) {
    if (pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int w = 0; w < P; w++) pthread_join(tid[w], NULL);
  pthread_barrier_destroy(&barrier);
  double sum = 0.0;
  for (int I = 0; I < NB; I++)
    for (int J = 0; J < NB; J++)
      for (int e = 0; e < BS * BS; e++) sum += A[I][J][e];
  printf("lu_owner_pthreads P=%d NB=%d BS=%d checksum=%.6f\n", P, NB, BS, sum);
  return 0;
}
