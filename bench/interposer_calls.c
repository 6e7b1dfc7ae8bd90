/* interposer_calls.c - CPU time per call of libc functions libweft-rt
 * interposes (mutex lock+unlock, condvar signal, malloc+free, memcpy of 64
 * bytes): a plain build against one linked with libweft-rt.so and run
 * without `weft record` is what the dormant interposers cost
 * (docs/performance.md, "Dormant cost"). Not built by CMake:
 *   gcc -O2 -pthread -o calls.plain bench/interposer_calls.c
 *   gcc -O2 -pthread -o calls.rt bench/interposer_calls.c -Lbuild/lib \
 *       -Wl,--no-as-needed -lweft-rt -Wl,-rpath,$PWD/build/lib */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10000000;
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  static char src[64], dst[64];
  volatile size_t bytes = 64;
  double t = cpu_ns();
  for (long i = 0; i < n; i++) { pthread_mutex_lock(&m); pthread_mutex_unlock(&m); }
  const double lock = (cpu_ns() - t) / n;
  t = cpu_ns();
  for (long i = 0; i < n; i++) pthread_cond_signal(&c);
  const double signal = (cpu_ns() - t) / n;
  t = cpu_ns();
  for (long i = 0; i < n; i++) { void *p = malloc(32); __asm__ volatile("" : : "r"(p) : "memory"); free(p); }
  const double heap = (cpu_ns() - t) / n;
  t = cpu_ns();
  for (long i = 0; i < n; i++) { memcpy(dst, src, bytes); __asm__ volatile("" : : : "memory"); }
  const double copy = (cpu_ns() - t) / n;
  printf("lock+unlock %.2f ns, signal %.2f ns, malloc+free %.2f ns, memcpy64 %.2f ns\n", lock, signal, heap, copy);
  return 0;
}
