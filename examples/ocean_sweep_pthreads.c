/* ocean_sweep_pthreads.c - Jacobi sweeps of an ocean-like grid between counter barriers
 * without a generation loop (mutex + condition variable, one wait), C + pthreads.
 *
 * Usage: ocean_sweep_pthreads           (no arguments: everything is fixed)
 *
 * Some SPLASH-2 ports expand BARRIER(bar, P) into the shortest counter
 * barrier: under the mutex, the last thread to arrive resets the counter and
 * broadcasts, every other thread calls pthread_cond_wait once (no generation
 * number, no loop). The program is not annotated: weft recognises the
 * barrier from its condition-variable calls (docs/metrics.md, "Parallel
 * section").
 *
 * The main thread creates P = 4 workers (weft threads 1..4, workers 0..3)
 * and joins them; it does none of the sweeping, and while it waits in the
 * join it is not part of the team. The grid is (N + 2) x (N + 2) doubles,
 * N = 48, with a fixed boundary; two copies alternate (Jacobi).
 *
 * Sweep s = 0..S-1 (S = 10 sweeps, each ended by BARRIER(bar, P) on one
 * line, so 10 instances of one parallel section named after that line):
 * every worker visits every interior point (i, j), 1 <= i, j <= N, and
 * relaxes it only if it owns it:
 *     if (owner(i, j) == me)                     <- the marked line
 *       next[i][j] = 0.25 * (four neighbours of cur[i][j]) + forcing
 * owner(i, j) is a small function kept out of line. The workers form a
 * 2 x 2 process grid, as in SPLASH-2 Ocean, but the grid is cut after row 32
 * and column 28 instead of the middle (24):
 *     worker 0: i <= 32, j <= 28   32 x 28 = 896 points
 *     worker 1: i <= 32, j >  28   32 x 20 = 640 points
 *     worker 2: i >  32, j <= 28   16 x 28 = 448 points
 *     worker 3: i >  32, j >  28   16 x 20 = 320 points
 * in every sweep (taken branches of the marked line). Every worker visits
 * all 2304 points and calls owner() for each, so the visit costs the same
 * everywhere and only the updates differ.
 *
 * Expected:
 *   - one parallel section at the BARRIER line in worker() (marked with the
 *     section comment), 10 instances;
 *   - the top cause of its imbalance is the owner test: the line marked
 *     with the top-cause comment below, under both sources: the decision is
 *     the caller's branch on owner()'s result, not owner()'s body (the
 *     imbalance analysis keeps each call frame's last block).
 * The main thread sums the last grid after the join and prints it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define P 4  /* workers */
#define N 48 /* interior points per dimension */
#define S 10 /* sweeps */

static _Alignas(64) double grid[2][N + 2][N + 2];

static struct {
  pthread_mutex_t lock;
  pthread_cond_t all_here;
  int count;
} bar = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

/* The shortest counter barrier: one wait, no generation. */
#define BARRIER(b, n)                              \
  do {                                             \
    pthread_mutex_lock(&(b).lock);                 \
    if (++(b).count == (n)) {                      \
      (b).count = 0;                               \
      pthread_cond_broadcast(&(b).all_here);       \
    } else {                                       \
      pthread_cond_wait(&(b).all_here, &(b).lock); \
    }                                              \
    pthread_mutex_unlock(&(b).lock);               \
  } while (0)

/* Which worker relaxes point (i, j), not inlined. */
#define NOINLINE __attribute__((noinline))
static NOINLINE int owner(int i, int j) { return 2 * (i > 32) + (j > 28); }

static void *worker(void *arg) {
  const int me = (int)(uintptr_t)arg;
  for (int s = 0; s < S; s++) {
    double(*cur)[N + 2] = grid[s & 1];
    double(*next)[N + 2] = grid[(s + 1) & 1];
    for (int i = 1; i <= N; i++) {
      for (int j = 1; j <= N; j++) {
        if (owner(i, j) == me) { /* weft:top-cause */
          next[i][j] = 0.25 * (cur[i - 1][j] + cur[i + 1][j] + cur[i][j - 1] + cur[i][j + 1]) +
                       0.001 * (double)((i * 3 + j) % 7);
        }
      }
    }
    BARRIER(bar, P); /* weft:section */
  }
  return NULL;
}

int main(void) {
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < N + 2; i++)
      for (int j = 0; j < N + 2; j++)
        grid[c][i][j] = (i == 0 || j == 0 || i == N + 1 || j == N + 1) ? 1.0 : 0.0;
  pthread_t tid[P];
  for (int w = 0; w < P; w++) {
    if (pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int w = 0; w < P; w++) pthread_join(tid[w], NULL);
  double sum = 0.0;
  for (int i = 1; i <= N; i++)
    for (int j = 1; j <= N; j++) sum += grid[S & 1][i][j];
  printf("ocean_sweep_pthreads P=%d N=%d S=%d checksum=%.6f\n", P, N, S, sum);
  return 0;
}
