/* queue_condvar_pthreads.c - producers and consumers on a bounded queue guarded by a mutex
 * and two condition variables (C + pthreads).
 *
 * Usage: queue_condvar_pthreads [PRODUCERS [CONSUMERS]]    defaults: 2 2 (each 1..8)
 *
 * The main thread creates the producers (weft threads 1..PRODUCERS), then
 * the consumers, and joins them all. Each producer pushes K = 2000 items
 * (item = producer * K + n, n = 0..K-1) into one FIFO of Q = 8 slots; the
 * consumers pop them and each adds what it popped into its own 64-byte slot.
 * The queue is the textbook monitor:
 *     push: lock; while (full)  wait(not_full);  put; signal(not_empty); unlock
 *     pop:  lock; while (empty) wait(not_empty); take; signal(not_full);  unlock
 * A producer that has pushed its last item pushes nothing more; the last
 * producer to finish pushes one end marker per consumer.
 *
 * This is not a barrier: every signal hands over one item, waiters are a
 * few consumers or a few producers, never the whole team, and many signals
 * find nobody waiting. weft must find no parallel section here other than
 * the create->join span (docs/metrics.md, "Parallel section"), and `weft
 * record` warns that it found none, naming the busiest synchronization
 * sites (the lock in push() and pop() first).
 *
 * The result is deterministic whatever the interleaving: the consumers'
 * slots sum to sum over producers p and n of (p * K + n).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 8
#define K 2000 /* items per producer */
#define Q 8    /* queue slots */
#define END (-1L)

typedef struct {
  _Alignas(64) long v;
} slot_t;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  long item[Q];
  int head, size;
  int producers_left;
} queue = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static slot_t consumed[MAXT];
static int consumers;

/* Puts one item; called with the lock held. */
static void put_locked(long v) {
  while (queue.size == Q) pthread_cond_wait(&queue.not_full, &queue.lock);
  queue.item[(queue.head + queue.size) % Q] = v;
  queue.size++;
  pthread_cond_signal(&queue.not_empty);
}

static void push(long v) {
  pthread_mutex_lock(&queue.lock);
  put_locked(v);
  pthread_mutex_unlock(&queue.lock);
}

static long pop(void) {
  pthread_mutex_lock(&queue.lock);
  while (queue.size == 0) pthread_cond_wait(&queue.not_empty, &queue.lock);
  const long v = queue.item[queue.head];
  queue.head = (queue.head + 1) % Q;
  queue.size--;
  pthread_cond_signal(&queue.not_full);
  pthread_mutex_unlock(&queue.lock);
  return v;
}

static void *producer(void *arg) {
  const long p = (long)(uintptr_t)arg;
  for (long n = 0; n < K; n++) push(p * K + n);
  pthread_mutex_lock(&queue.lock);
  if (--queue.producers_left == 0)
    for (int c = 0; c < consumers; c++) put_locked(END);
  pthread_mutex_unlock(&queue.lock);
  return NULL;
}

static void *consumer(void *arg) {
  const int c = (int)(uintptr_t)arg;
  long sum = 0;
  for (long v; (v = pop()) != END;) sum += v;
  consumed[c].v = sum;
  return NULL;
}

int main(int argc, char **argv) {
  const int producers = argc > 1 ? atoi(argv[1]) : 2;
  consumers = argc > 2 ? atoi(argv[2]) : 2;
  if (producers < 1 || producers > MAXT || consumers < 1 || consumers > MAXT) {
    fprintf(stderr, "usage: %s [PRODUCERS 1..%d [CONSUMERS 1..%d]]\n", argv[0], MAXT, MAXT);
    return 2;
  }
  queue.producers_left = producers;
  pthread_t tid[2 * MAXT];
  int n = 0;
  for (int p = 0; p < producers; p++)
    if (pthread_create(&tid[n++], NULL, producer, (void *)(uintptr_t)p) != 0) return 1;
  for (int c = 0; c < consumers; c++)
    if (pthread_create(&tid[n++], NULL, consumer, (void *)(uintptr_t)c) != 0) return 1;
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
  long total = 0;
  for (int c = 0; c < consumers; c++) total += consumed[c].v;
  printf("queue_condvar_pthreads producers=%d consumers=%d total=%ld\n", producers, consumers,
         total);
  return 0;
}
