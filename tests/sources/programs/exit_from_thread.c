/* Two workers exchange blocks of 64 doubles behind a barrier; then worker 1
 * (weft id 2) ends the whole process with exit(3) while the main thread is
 * still waiting in pthread_join. At granularity 8: raw[1][2] = raw[2][1] = 64,
 * everything else 0, exit status 3. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static _Alignas(64) double block[2][64];
_Alignas(64) double sums[2][8];
static pthread_barrier_t barrier;

static void* worker(void* arg) {
  const int i = (int)(intptr_t)arg;
  for (int k = 0; k < 64; k++) block[i][k] = k + i;
  pthread_barrier_wait(&barrier);
  double s = 0;
  for (int k = 0; k < 64; k++) s += block[1 - i][k];
  sums[i][0] = s;
  pthread_barrier_wait(&barrier);
  if (i == 1) {
    printf("exiting from a thread %.0f\n", s);
    fflush(stdout);
    exit(3);
  }
  for (;;) pthread_barrier_wait(&barrier); /* never passes: ends with the exit */
}

int main(void) {
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  puts("not reached");
  return 0;
}
