/* T workers (argv[1], at most 512), weft ids 1..T. Worker i writes its own
 * 64-byte slot, waits at a barrier, then reads the slot of worker (i+1)%T
 * twice. At granularity 64 (one slot = one granule):
 *   raw[w][r] = 1 and rar[w][r] = 15 for r = i+1, w = (i+1)%T + 1
 *   (16 reads of 8 bytes: the first is the communication, the rest reuse). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_T 512
static _Alignas(64) double slot[MAX_T][8];
_Alignas(64) double sums[MAX_T][8];
static pthread_barrier_t barrier;
static int team;

static void* worker(void* arg) {
  const int i = (int)((intptr_t)arg & 0xffff);
  const int t = (int)((intptr_t)arg >> 16);
  for (int k = 0; k < 8; k++) slot[i][k] = i + k;
  pthread_barrier_wait(&barrier);
  const int r = (i + 1) % t;
  double s = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < 8; k++) s += slot[r][k];
  sums[i][0] = s;
  return 0;
}

int main(int argc, char** argv) {
  team = argc > 1 ? atoi(argv[1]) : 100;
  if (team < 2 || team > MAX_T) return 2;
  static pthread_t t[MAX_T];
  pthread_barrier_init(&barrier, 0, (unsigned)team);
  for (int i = 0; i < team; i++)
    pthread_create(&t[i], 0, worker, (void*)(((intptr_t)team << 16) | i));
  for (int i = 0; i < team; i++) pthread_join(t[i], 0);
  return 0;
}
