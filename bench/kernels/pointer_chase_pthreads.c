/* pointer_chase_pthreads.c - every thread follows a random cyclic
 * permutation through its own array of 64-byte nodes (C + pthreads; a
 * memory-latency-bound benchmark kernel).
 *
 * Usage: pointer_chase_pthreads [T [NODES [STEPS]]]
 *                                       defaults: T=4 NODES=262144 STEPS=6000000
 *   T threads (1..64); the main thread works as thread 0 and creates threads
 *   1..T-1. NODES nodes per thread (2..2^26; 64 bytes each, so the default
 *   262144 is 16 MiB per thread, well above a 2 MiB L2). STEPS steps in all
 *   (1..2^40), divided among the threads: thread t takes STEPS / T steps,
 *   plus one if t < STEPS % T. The total work is fixed by STEPS.
 *
 * Thread t allocates its own nodes (64-byte aligned), sets node i's payload
 * to i + t and builds one cycle through all of them with Sattolo's shuffle
 * of the next indices, drawing from a 64-bit LCG seeded with t (so the cycle
 * depends only on t and NODES). Then it follows the next indices from node 0
 * for its steps, adding the payload of every node it reaches: each step is a
 * dependent load from a random line. No thread touches another's nodes; the
 * main thread adds the T sums (exact integers) after pthread_join.
 */
#define _POSIX_C_SOURCE 200809L /* POSIX threads under -std=c11 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 64

typedef struct {
  _Alignas(64) uint64_t next;
  uint64_t payload[7];
} node_t;

typedef struct {
  int t;
  uint64_t nodes, steps;
  uint64_t sum;
  int failed;
} job_t;

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 16;
}

static void *worker(void *arg) {
  job_t *j = arg;
  const uint64_t n = j->nodes;
  node_t *node = aligned_alloc(64, n * sizeof *node);
  if (!node) {
    j->failed = 1;
    return NULL;
  }
  for (uint64_t i = 0; i < n; i++) {
    node[i].next = i;
    for (int k = 0; k < 7; k++) node[i].payload[k] = i + (uint64_t)j->t;
  }
  /* Sattolo: a uniformly random permutation with a single cycle */
  uint64_t seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(j->t + 1);
  for (uint64_t i = n - 1; i > 0; i--) {
    uint64_t k = lcg(&seed) % i, tmp = node[i].next;
    node[i].next = node[k].next;
    node[k].next = tmp;
  }
  uint64_t p = 0, sum = 0;
  for (uint64_t s = 0; s < j->steps; s++) {
    p = node[p].next;
    sum += node[p].payload[0];
  }
  j->sum = sum;
  free(node);
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long long nodes = argc > 2 ? atoll(argv[2]) : 262144;
  long long steps = argc > 3 ? atoll(argv[3]) : 6000000;
  if (T < 1 || T > MAXT || nodes < 2 || nodes > (1LL << 26) || steps < 1 || steps > (1LL << 40)) {
    fprintf(stderr, "usage: %s [T 1..%d [NODES 2..2^26 [STEPS 1..2^40]]]\n", argv[0], MAXT);
    return 2;
  }
  job_t job[MAXT];
  pthread_t tid[MAXT];
  for (int i = 0; i < T; i++)
    job[i] = (job_t){i, (uint64_t)nodes, (uint64_t)(steps / T + (i < steps % T)), 0, 0};
  for (int i = 1; i < T; i++) {
    if (pthread_create(&tid[i], NULL, worker, &job[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  worker(&job[0]);
  for (int i = 1; i < T; i++) pthread_join(tid[i], NULL);
  uint64_t total = 0;
  for (int i = 0; i < T; i++) {
    if (job[i].failed) {
      fprintf(stderr, "pointer_chase_pthreads: out of memory\n");
      return 1;
    }
    total += job[i].sum;
  }
  printf("pointer_chase_pthreads T=%d NODES=%lld STEPS=%lld checksum=%llu\n", T, nodes, steps,
         (unsigned long long)total);
  return 0;
}
