/* Two workers exchange blocks of 512 doubles, then worker 2 (weft id 2)
 * crashes. At granularity 8: raw[1][2] = raw[2][1] = 512, all else 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static _Alignas(64) double block[2][512];
_Alignas(64) double sums[2][8];
static pthread_barrier_t barrier;

static void* worker(void* arg) {
  const int i = (int)(intptr_t)arg;
  for (int k = 0; k < 512; k++) block[i][k] = k + i;
  pthread_barrier_wait(&barrier);
  double s = 0;
  for (int k = 0; k < 512; k++) s += block[1 - i][k];
  sums[i][0] = s;
  pthread_barrier_wait(&barrier);
  if (i == 1 && s > 0) *(volatile int*)(intptr_t)(s - s) = 1; /* SIGSEGV */
  return 0;
}

int main(void) {
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  puts("not reached");
  return 0;
}
