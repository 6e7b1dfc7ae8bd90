/* 4 workers (weft ids 1..4) each lock and unlock one mutex 10,000 times
 * around an increment of a shared counter, then exit; main joins them.
 * Each worker makes 20,000 mutex events: its first 4,096 are logged
 * (SyncLog::kMaxMutexRecords), the other 15,904 only counted, so the
 * profile has 4 x 4,096 mutex_lock/mutex_unlock rows, unlogged_mutex_events
 * = 63,616, and every worker's thread_exit is still there. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 4
#define ROUNDS 10000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; i++) {
    pthread_mutex_lock(&lock);
    counter++;
    pthread_mutex_unlock(&lock);
  }
  return 0;
}

int main(void) {
  pthread_t t[WORKERS];
  for (int i = 0; i < WORKERS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < WORKERS; i++) pthread_join(t[i], 0);
  printf("%ld\n", counter);
  return counter == (long)WORKERS * ROUNDS ? 0 : 1;
}
