/* work_buffers_pthreads.c - pipeline stages that allocate their work buffers
 * per batch (C + pthreads): freed memory is not communication.
 *
 * Usage: work_buffers_pthreads [N [K [R]]]    defaults: N=1024 K=4 R=4
 *   N doubles per buffer (a multiple of 8, 136..8192: more than the
 *   allocator's per-thread cache takes, 1,032 bytes, and less than its
 *   mmap threshold), K buffers per batch (1..16), R batches (1..64),
 *   R * K a multiple of 8.
 *
 * The main thread creates stage 1 (thread 1) and stage 2 (thread 2), which
 * take turns, R rounds, a barrier after each turn:
 *   stage 1  mallocs K buffers of N doubles, fills them (f), sums them, and
 *            frees them, in allocation order;
 *   stage 2  callocs K buffers of N doubles, accumulates g into them
 *            (c[i] += g: it reads the zeros calloc gave it, then its own
 *            sums), sums them, and frees them.
 * Each buffer is a line longer than N doubles and used from its first line
 * boundary, so that its lines are entirely its own: weft forgets the lines
 * lying entirely inside a freed block, a line shared with a neighbouring
 * block keeps its state.
 * With one malloc arena (mallopt(M_ARENA_MAX, 1), as MALLOC_ARENA_MAX=1
 * does) the freed buffers coalesce back into the top of the heap, so each
 * stage gets exactly the blocks the other stage just freed: the program
 * logs every buffer's address and prints reused=yes when all rounds of both
 * stages used the same K blocks. Each stage reads only data it wrote (or
 * calloc zeroed for it): the previous owner's writes are gone with the
 * free, so reusing the blocks communicates nothing (docs/metrics.md,
 * "Freed memory"). Before weft forgot freed memory, stage 2's first read of
 * each granule counted raw[1][2], and each stage's writes invalidations.
 *
 * Expected matrices, writer row, reader column; e = doubles (or pointers)
 * per granule: e = 1 at --granularity 8, e = 8 at --granularity 64.
 * P = R * K addresses per stage's log, which the main thread reads once
 * each after the joins:
 *   raw[1][0] = raw[2][0] = P / e + 1   (the logs, + the result slots)
 *   rar[1][0] = rar[2][0] = P - P / e
 *   every other entry is 0 (inval too: no granule is written by two
 *   threads in one life).
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXK 16
#define MAXR 64

typedef struct {
  _Alignas(64) double v;
} slot_t;

static slot_t result[3];
/* Each stage's buffer addresses, round after round (R * K of them, from a
 * line boundary): read by the main thread. */
static _Alignas(64) void *log_of[3][MAXR * MAXK];
static pthread_barrier_t turn;

static uintptr_t pack(int stage, long N, int K, int R) {
  return (uintptr_t)stage | (uintptr_t)K << 8 | (uintptr_t)R << 16 | (uintptr_t)N << 32;
}

/* A buffer's work area: its N doubles from the block's first line boundary.
 * Each block is a line longer than its work area, so that no line of the
 * work area is shared with a neighbouring block (as code that keeps its
 * buffers off its neighbours' cache lines does). */
#define LINE 64
static double *work_area(void *block) {
  return (double *)(((uintptr_t)block + LINE - 1) & ~(uintptr_t)(LINE - 1));
}

/* Logs the blocks and frees them, in allocation order. */
static void log_and_free(void **block, int K, void **log) {
  for (int k = 0; k < K; k++) {
    log[k] = block[k];
    free(block[k]);
  }
}

static double fill_and_sum(int r, int K, long N, void **log) {
  void *block[MAXK];
  double sum = 0.0;
  for (int k = 0; k < K; k++) block[k] = malloc((size_t)N * sizeof(double) + LINE);
  for (int k = 0; k < K; k++) {
    double *b = work_area(block[k]);
    for (long i = 0; i < N; i++) b[i] = (double)((i * 3 + k * 7 + r) & 15);
  }
  for (int k = 0; k < K; k++) {
    const double *b = work_area(block[k]);
    for (long i = 0; i < N; i++) sum += b[i];
  }
  log_and_free(block, K, log);
  return sum;
}

static double accumulate_and_sum(int r, int K, long N, void **log) {
  void *block[MAXK];
  double sum = 0.0;
  for (int k = 0; k < K; k++) block[k] = calloc((size_t)N + LINE / sizeof(double), sizeof(double));
  for (int k = 0; k < K; k++) {
    double *acc = work_area(block[k]);
    for (long i = 0; i < N; i++) acc[i] += (double)((i * 5 + k + r) & 7);
  }
  for (int k = 0; k < K; k++) {
    const double *acc = work_area(block[k]);
    for (long i = 0; i < N; i++) sum += acc[i];
  }
  log_and_free(block, K, log);
  return sum;
}

static void *stage(void *arg) {
  uintptr_t a = (uintptr_t)arg;
  int s = (int)(a & 0xff), K = (int)(a >> 8 & 0xff), R = (int)(a >> 16 & 0xffff);
  long N = (long)(a >> 32);
  double check = 0.0;
  /* The allocator sets up a thread's cache at its first call: both stages
   * have theirs before the first batch, which then takes none of its blocks. */
  void *volatile first_call = malloc(1); /* volatile: not optimized away */
  free(first_call);
  pthread_barrier_wait(&turn);
  for (int r = 0; r < R; r++) {
    if (s == 1) check += fill_and_sum(r, K, N, &log_of[1][r * K]);
    pthread_barrier_wait(&turn); /* stage 1's buffers are freed */
    if (s == 2) check += accumulate_and_sum(r, K, N, &log_of[2][r * K]);
    pthread_barrier_wait(&turn); /* stage 2's buffers are freed */
  }
  result[s].v = check;
  return NULL;
}

int main(int argc, char **argv) {
  long N = argc > 1 ? atol(argv[1]) : 1024;
  int K = argc > 2 ? atoi(argv[2]) : 4;
  int R = argc > 3 ? atoi(argv[3]) : 4;
  if (N < 136 || N > 8192 || N % 8 != 0 || K < 1 || K > MAXK || R < 1 || R > MAXR ||
      (R * K) % 8 != 0) {
    fprintf(stderr,
            "usage: %s [N 136..8192, multiple of 8 [K 1..%d [R 1..%d, R*K multiple of 8]]]\n",
            argv[0], MAXK, MAXR);
    return 2;
  }
  mallopt(M_ARENA_MAX, 1);
  pthread_barrier_init(&turn, NULL, 2);
  pthread_t tid[3];
  for (int s = 1; s <= 2; s++)
    if (pthread_create(&tid[s], NULL, stage, (void *)pack(s, N, K, R)) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int s = 1; s <= 2; s++) pthread_join(tid[s], NULL);
  /* Every logged address once: the blocks of round 0's stage 1 throughout. */
  void *first[MAXK];
  int reused = 1;
  for (int r = 0; r < R; r++)
    for (int k = 0; k < K; k++) {
      void *a = log_of[1][r * K + k], *b = log_of[2][r * K + k];
      if (r == 0) first[k] = a;
      if (a != first[k] || b != first[k]) reused = 0;
    }
  pthread_barrier_destroy(&turn);
  printf("work_buffers_pthreads N=%ld K=%d R=%d reused=%s checksum=%.1f\n", N, K, R,
         reused ? "yes" : "no", result[1].v + result[2].v);
  return 0;
}
