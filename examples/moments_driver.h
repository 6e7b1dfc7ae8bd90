/* moments_driver.h - the program around the two versions of the `moments`
 * kernel (moments_unblocked_pthreads.c, moments_blocked_pthreads.c), which
 * differ only in their loop order. See either file for the expected CRD.
 *
 * Usage: PROGRAM [T [N [K [R [B]]]]]     defaults: T=4 N=4096 K=8 R=2 B=64
 *   T threads (2..16; the main thread works as thread 0), N records of 64
 *   bytes per thread (multiple of B, at most 65536), K moments (1..64),
 *   R rounds (1..1000), B records per block (the blocked version only).
 *
 * One round: thread t writes all fields of its N records; barrier; thread t
 * computes K moments of field x of its right neighbour u = (t+1) % T's
 * records (moments(), defined by the including file); barrier. At the end
 * thread t stores its result in its own 64-byte slot, which the main thread
 * reads after pthread_join (+ slots, as in every example).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 16
#define MAXN 65536
#define MAXK 64

/* One record fills one 64-byte line; the kernel reads only x. */
typedef struct {
  _Alignas(64) double x;
  double y, z, vx, vy, vz, m, q;
} record_t;

typedef struct {
  _Alignas(64) double v;
} slot_t;

static record_t records[MAXT][MAXN];
static slot_t result[MAXT];
static pthread_barrier_t barrier;
static int T = 4, K = 8, R = 2;
static long N = 4096, B = 64;

/* acc[k] += weight(k) * r[i].x for every record i, in ascending i for each k. */
/* Not inlined, so that the kernel is a region of its own, as in a real code. */
__attribute__((noinline)) static void moments(const record_t *r, long n, long block, int k_count,
                                              double *acc);

static void *worker(void *arg) {
  const int t = (int)(uintptr_t)arg, u = (t + 1) % T;
  double total = 0.0;
  for (int round = 0; round < R; round++) {
    for (long i = 0; i < N; i++) {
      record_t *p = &records[t][i];
      p->x = (double)((i * 7 + t * 3 + round) & 15);
      p->y = p->z = p->vx = p->vy = p->vz = p->m = p->q = (double)t;
    }
    pthread_barrier_wait(&barrier);
    double acc[MAXK] = {0};
    moments(records[u], N, B, K, acc);
    for (int k = 0; k < K; k++) total += acc[k];
    pthread_barrier_wait(&barrier);
  }
  result[t].v = total;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) T = atoi(argv[1]);
  if (argc > 2) N = atol(argv[2]);
  if (argc > 3) K = atoi(argv[3]);
  if (argc > 4) R = atoi(argv[4]);
  if (argc > 5) B = atol(argv[5]);
  if (T < 2 || T > MAXT || B < 1 || N < B || N > MAXN || N % B != 0 || K < 1 || K > MAXK ||
      R < 1 || R > 1000) {
    fprintf(stderr, "usage: %s [T 2..%d [N <= %d, multiple of B [K 1..%d [R 1..1000 [B]]]]]\n",
            argv[0], MAXT, MAXN, MAXK);
    return 2;
  }
  pthread_barrier_init(&barrier, NULL, (unsigned)T);
  pthread_t tid[MAXT];
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker(NULL);
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  double total = 0.0;
  for (int i = 0; i < T; i++) total += result[i].v;
  pthread_barrier_destroy(&barrier);
  printf("moments T=%d N=%ld K=%d R=%d B=%ld checksum=%.6f\n", T, N, K, R, B, total);
  return 0;
}
