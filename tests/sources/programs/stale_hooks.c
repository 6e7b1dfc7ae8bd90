/* Two workers exchange blocks (as exchange_then_wait: at granularity 8,
 * raw[1][2] = raw[2][1] = 64); meanwhile a module whose hooks were built
 * against another runtime announces itself (the call a stale module's
 * __tsan_init makes, with a layout fingerprint that is not this runtime's).
 * The runtime must refuse it, leave its recording flag false and go on
 * recording the program. Prints the stale module's flag. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

void weft_module_init(const void* address_inside, bool* recording, uint64_t layout);

static _Alignas(64) double block[2][64];
_Alignas(64) double sums[2][8];
static pthread_barrier_t barrier;
static bool stale_module_recording = true;

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
  weft_module_init(&stale_module_recording, &stale_module_recording, 1);
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void*)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  printf("stale module recording: %d\n", (int)stale_module_recording);
  return 0;
}
