/* lu_counter_barrier_pthreads.c - LU-like trailing updates between SPLASH-2 style counter
 * barriers (mutex + condition variable + generation loop), C + pthreads.
 *
 * Usage: lu_counter_barrier_pthreads    (no arguments: everything is fixed)
 *
 * SPLASH-2 programs synchronize with a BARRIER(bar, P) macro that the
 * pthreads port expands into a mutex, a condition variable, an arrival
 * counter and a generation number: the last thread to arrive resets the
 * counter, bumps the generation and broadcasts; the others wait until the
 * generation changes (a loop, so a spurious or stolen wake-up waits again).
 * The program is not annotated: weft recognises the barrier from its
 * condition-variable calls (docs/metrics.md, "Parallel section").
 *
 * As in SPLASH-2, the main thread is process 0: it creates P - 1 = 3
 * threads (weft threads 1..3, processes 1..3), runs the slave itself, then
 * joins them. The matrix is NB x NB = 12 x 12 blocks of BS x BS = 8 x 8
 * doubles, stored block by block, filled by the main thread before it
 * creates the threads.
 *
 * Step k = 0..NB-2 (11 steps, each ended by BARRIER(bar, P) on one line, so
 * 11 instances of one parallel section named after that line): every
 * process visits every trailing block (I, J), k < I, J < NB, and updates it
 * only if it owns it:
 *     if (owner(I, J) == me)                       <- the marked line
 *       A[I][J] -= 1/8 * A[I][k] * A[k][J]         (8x8x8 triple loop)
 * owner(I, J) = (I * J) % P is a small function kept out of line, like
 * SPLASH-2's BlockOwner: every process calls it equally often, but it does
 * not spread the blocks evenly (a product of two numbers is a multiple of 4
 * more often than it is 1 or 3 mod 4).
 *
 * Block updates per process (= taken branches of the marked line), step k:
 *   k   p0 p1 p2 p3   total
 *   0   49 18 36 18    121
 *   1   45 13 30 12    100
 *   2   36 13 20 12     81
 *   3   32  8 16  8     64
 *   4   17  8 16  8     49
 *   5   15  5 12  4     36
 *   6   10  5  6  4     25
 *   7    8  2  4  2     16
 *   8    1  2  4  2      9
 *   9    1  1  2  0      4
 *  10    0  1  0  0      1
 * Each update is 512 multiply-adds.
 *
 * Expected:
 *   - one parallel section at the BARRIER line in slave() (marked with the
 *     section comment), 11 instances
 *     (the team is the 4 processes; the main thread is process 0);
 *   - the top cause of its imbalance is the owner test: the line marked
 *     with the top-cause comment below, under both sources: the decision is
 *     the caller's branch on owner()'s result, not owner()'s body (the
 *     imbalance analysis keeps each call frame's last block).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define P 4   /* processes, the main thread included */
#define NB 12 /* blocks per dimension */
#define BS 8  /* block size */

static _Alignas(64) double A[NB][NB][BS * BS];

struct counter_barrier {
  pthread_mutex_t lock;
  pthread_cond_t proceed;
  int count;
  unsigned generation;
};
static struct counter_barrier bar = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

/* SPLASH-2's BARRIER, as its pthreads macros expand it. */
#define BARRIER(b, n)                                                            \
  do {                                                                           \
    pthread_mutex_lock(&(b).lock);                                               \
    const unsigned gen_ = (b).generation;                                        \
    if (++(b).count == (n)) {                                                    \
      (b).count = 0;                                                             \
      (b).generation++;                                                          \
      pthread_cond_broadcast(&(b).proceed);                                      \
    } else {                                                                     \
      while (gen_ == (b).generation) pthread_cond_wait(&(b).proceed, &(b).lock); \
    }                                                                            \
    pthread_mutex_unlock(&(b).lock);                                             \
  } while (0)

/* The block owner (SPLASH-2's BlockOwner), not inlined. */
#define NOINLINE __attribute__((noinline))
static NOINLINE int owner(int I, int J) { return (I * J) % P; }

/* c -= 1/8 * a * b, for BS x BS blocks stored row by row. */
static void bmod(double *restrict c, const double *restrict a, const double *restrict b) {
  for (int i = 0; i < BS; i++) {
    for (int kk = 0; kk < BS; kk++) {
      const double aik = 0.125 * a[i * BS + kk];
      for (int j = 0; j < BS; j++) c[i * BS + j] -= aik * b[kk * BS + j];
    }
  }
}

static void *slave(void *arg) {
  const int me = (int)(uintptr_t)arg;
  for (int k = 0; k < NB - 1; k++) {
    for (int I = k + 1; I < NB; I++) {
      for (int J = k + 1; J < NB; J++) {
        if (owner(I, J) == me) { /* weft:top-cause */
          bmod(A[I][J], A[I][k], A[k][J]);
        }
      }
    }
    BARRIER(bar, P); /* weft:section */
  }
  return NULL;
}

int main(void) {
  for (int I = 0; I < NB; I++)
    for (int J = 0; J < NB; J++)
      for (int e = 0; e < BS * BS; e++)
        A[I][J][e] = (double)((I * 31 + J * 17 + e * 7) % 29) / 29.0 + (I == J ? 2.0 : 0.0);
  pthread_t tid[P];
  for (int p = 1; p < P; p++) {
    if (pthread_create(&tid[p], NULL, slave, (void *)(uintptr_t)p) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  slave((void *)(uintptr_t)0);
  for (int p = 1; p < P; p++) pthread_join(tid[p], NULL);
  double sum = 0.0;
  for (int I = 0; I < NB; I++)
    for (int J = 0; J < NB; J++)
      for (int e = 0; e < BS * BS; e++) sum += A[I][J][e];
  printf("lu_counter_barrier_pthreads P=%d NB=%d BS=%d checksum=%.6f\n", P, NB, BS, sum);
  return 0;
}
