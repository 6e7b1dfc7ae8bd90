/* T threads (argv[1], at most 4096) alive at once: each writes its own
 * 64-byte slot, says it has arrived and waits until the main thread, once
 * every thread created has arrived, releases them all (semaphores: no
 * memory the threads share but the slots); the main thread then joins them
 * and reads every slot. Creation stops at the first pthread_create that
 * fails (the program says so and exits 3 after joining the threads it has).
 * Small stacks (64 KiB).
 *   raw[t][0] = 1 for every analyzed worker t; nothing else.
 * Output: "live_threads created=T joined=T sum=S", or
 *         "live_threads created=K of T (pthread_create: ERROR) joined=K sum=S". */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_T 4096
static _Alignas(64) long slot[MAX_T][8];
static sem_t arrived, go;

static void* worker(void* arg) {
  const int i = (int)(intptr_t)arg;
  slot[i][0] = i + 1;
  sem_post(&arrived);
  sem_wait(&go);
  return 0;
}

int main(int argc, char** argv) {
  const int team = argc > 1 ? atoi(argv[1]) : 100;
  if (team < 1 || team > MAX_T) return 2;
  static pthread_t t[MAX_T];
  sem_init(&arrived, 0, 0);
  sem_init(&go, 0, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 65536);
  int created = 0, error = 0;
  while (created < team &&
         !(error = pthread_create(&t[created], &attr, worker, (void*)(intptr_t)created)))
    created++;
  for (int i = 0; i < created; i++) sem_wait(&arrived);  // all alive at once
  for (int i = 0; i < created; i++) sem_post(&go);
  for (int i = 0; i < created; i++) pthread_join(t[i], 0);
  long sum = 0;
  for (int i = 0; i < created; i++) sum += slot[i][0];
  if (error)
    printf("live_threads created=%d of %d (pthread_create: %s) joined=%d sum=%ld\n", created, team,
           strerror(error), created, sum);
  else
    printf("live_threads created=%d joined=%d sum=%ld\n", created, created, sum);
  return error ? 3 : 0;
}
