/* A pthread and an OpenMP team in one program, built in one command. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

typedef struct {
  _Alignas(64) long v;
} slot_t;

static slot_t from_thread;
static slot_t team[2];

static void *work(void *arg) {
  long n = (long)arg, s = 0;
  for (long i = 1; i <= n; i++) s += i;
  from_thread.v = s;
  return NULL;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, work, (void *)100L) != 0) return 1;
  pthread_join(t, NULL);
#pragma omp parallel num_threads(2)
  team[omp_get_thread_num()].v = 10 * (omp_get_thread_num() + 1);
  printf("hello_mixed %ld %ld %ld\n", from_thread.v, team[0].v, team[1].v);
  return 0;
}
