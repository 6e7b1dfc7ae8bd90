/* Like crash_after_exchange, but the main thread then waits forever (until a
 * signal). At granularity 8: raw[1][2] = raw[2][1] = 64. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

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
  return 0;
}

int main(void) {
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  puts("ready");
  fflush(stdout);
  for (;;) pause();
}
