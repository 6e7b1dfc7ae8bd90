/* producer_consumer_pthreads.c - a lock-heavy bounded queue: one mutex, two
 * condition variables (C + pthreads; a benchmark kernel).
 *
 * Usage: producer_consumer_pthreads [T [ITEMS [QUEUE_CAPACITY]]]
 *                                       defaults: T=4 ITEMS=1500000 QUEUE_CAPACITY=64
 *   T threads (2..64, even): P = T/2 producers and T/2 consumers, all created
 *   by the main thread, which joins them and does no work itself. ITEMS items
 *   (1..2^40) in all, divided among the producers: producer p pushes
 *   ITEMS / P items, plus one if p < ITEMS % P, so the total work is fixed by
 *   ITEMS. QUEUE_CAPACITY slots (1..65536) in a ring buffer; a small queue
 *   keeps the threads waiting on each other (lock-heavy).
 *
 * The queue is a ring of QUEUE_CAPACITY longs with head, tail and count, all
 * guarded by one pthread_mutex. push waits on `not_full` while the queue is
 * full, stores the item, signals `not_empty`; pop waits on `not_empty` while
 * the queue is empty and items are still to come, takes the item, signals
 * `not_full`. The producers push the items 0..ITEMS-1, each its own
 * consecutive range, in order; the consumers pop until all ITEMS items have
 * been taken (a count under the same mutex; the consumer that takes the last
 * item broadcasts `not_empty` so that the others stop waiting) and add the
 * items to a sum of their own. After pthread_join the main thread adds the
 * consumers' sums: the checksum is sum(0 .. ITEMS - 1), whoever took which
 * item and whatever T (checked: a wrong sum exits with status 1). Every
 * shared access is under the mutex: no data race.
 *
 * The run time is mostly futex waits and wake-ups, so it depends on the
 * scheduler more than the other kernels: on an idle 2-core VM every hand-off
 * wakes a sleeping thread on the other core (slow), on a busy one producer
 * and consumer often share a core and hand over whole queues (up to 10x
 * faster).
 */
#define _POSIX_C_SOURCE 200809L /* POSIX threads under -std=c11 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 64

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t not_full, not_empty;
  long *ring;
  long capacity, head, tail, count;
  long remaining; /* items not yet popped */
} queue_t;

typedef struct {
  queue_t *q;
  long first, count; /* a producer's items: first .. first + count - 1 */
  unsigned long sum; /* a consumer's sum */
} job_t;

static void push(queue_t *q, long item) {
  pthread_mutex_lock(&q->lock);
  while (q->count == q->capacity) pthread_cond_wait(&q->not_full, &q->lock);
  q->ring[q->tail] = item;
  q->tail = (q->tail + 1) % q->capacity;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

/* Returns 0 when every item has been popped. */
static int pop(queue_t *q, long *item) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && q->remaining > 0) pthread_cond_wait(&q->not_empty, &q->lock);
  if (q->remaining == 0) {
    pthread_mutex_unlock(&q->lock);
    return 0;
  }
  *item = q->ring[q->head];
  q->head = (q->head + 1) % q->capacity;
  q->count--;
  if (--q->remaining == 0) pthread_cond_broadcast(&q->not_empty);
  pthread_cond_signal(&q->not_full);
  pthread_mutex_unlock(&q->lock);
  return 1;
}

static void *producer(void *arg) {
  job_t *j = arg;
  for (long i = 0; i < j->count; i++) push(j->q, j->first + i);
  return NULL;
}

static void *consumer(void *arg) {
  job_t *j = arg;
  long item;
  unsigned long sum = 0;
  while (pop(j->q, &item)) sum += (unsigned long)item;
  j->sum = sum;
  return NULL;
}

int main(int argc, char **argv) {
  int T = argc > 1 ? atoi(argv[1]) : 4;
  long items = argc > 2 ? atol(argv[2]) : 1500000;
  long capacity = argc > 3 ? atol(argv[3]) : 64;
  if (T < 2 || T > MAXT || T % 2 != 0 || items < 1 || items > (1L << 40) || capacity < 1 ||
      capacity > 65536) {
    fprintf(stderr, "usage: %s [T 2..%d, even [ITEMS 1..2^40 [QUEUE_CAPACITY 1..65536]]]\n",
            argv[0], MAXT);
    return 2;
  }
  const int P = T / 2;
  queue_t q = {.capacity = capacity, .remaining = items};
  q.ring = malloc((size_t)capacity * sizeof *q.ring);
  if (!q.ring) {
    fprintf(stderr, "producer_consumer_pthreads: out of memory\n");
    return 1;
  }
  pthread_mutex_init(&q.lock, NULL);
  pthread_cond_init(&q.not_full, NULL);
  pthread_cond_init(&q.not_empty, NULL);
  job_t job[MAXT];
  pthread_t tid[MAXT];
  long first = 0;
  for (int i = 0; i < T; i++) {
    const long count = i < P ? items / P + (i < items % P) : 0;
    job[i] = (job_t){&q, first, count, 0};
    first += count;
    if (pthread_create(&tid[i], NULL, i < P ? producer : consumer, &job[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int i = 0; i < T; i++) pthread_join(tid[i], NULL);
  unsigned long total = 0;
  for (int i = P; i < T; i++) total += job[i].sum;
  /* sum(0 .. all-1) = all * (all - 1) / 2, modulo 2^64 like the sums */
  const unsigned long all = (unsigned long)items;
  const unsigned long expected = all % 2 == 0 ? all / 2 * (all - 1) : (all - 1) / 2 * all;
  printf("producer_consumer_pthreads T=%d ITEMS=%ld QUEUE_CAPACITY=%ld checksum=%lu\n", T, items,
         capacity, total);
  if (total != expected) {
    fprintf(stderr, "producer_consumer_pthreads: checksum %lu, expected %lu\n", total, expected);
    return 1;
  }
  pthread_cond_destroy(&q.not_full);
  pthread_cond_destroy(&q.not_empty);
  pthread_mutex_destroy(&q.lock);
  free(q.ring);
  return 0;
}
