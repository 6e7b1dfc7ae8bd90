/* memcpy and atomics are the program's accesses too.
 * Worker 1 fills a 1024-byte buffer with memcpy; barrier; worker 2 copies it
 * out with memcpy (reads 1024 bytes); barrier; worker 2 does an atomic
 * fetch_add on a counter worker 1 stored atomically; barrier; worker 1 loads
 * the counter atomically. At granularity 64:
 *   raw[1][2] = 1024/64 + 1 = 17 (buffer lines + the counter)
 *   raw[2][1] = 1 (the counter, written by worker 2's fetch_add)
 *   raw[1][0] = 1 (main reads results[0] after the joins)
 *   everything else 0 (stack and private data only). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

_Alignas(64) char buffer[1024];
_Alignas(64) char source[1024];
_Alignas(64) char target[1024]; /* not static: the copies must stay */
static _Alignas(64) _Atomic long counter;
_Alignas(64) long results[2][8];
static pthread_barrier_t barrier;

static void* worker(void* arg) {
  const int i = (int)(intptr_t)arg;
  if (i == 0) {
    memcpy(buffer, source, sizeof buffer); /* source is never written: no comm */
    atomic_store(&counter, 40);
  }
  pthread_barrier_wait(&barrier);
  if (i == 1) {
    memcpy(target, buffer, sizeof buffer);
    atomic_fetch_add(&counter, 2);
  }
  pthread_barrier_wait(&barrier);
  if (i == 0) results[0][0] = atomic_load(&counter);
  pthread_barrier_wait(&barrier);
  return 0;
}

int main(void) {
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  return results[0][0] == 42 ? 0 : 1;
}
