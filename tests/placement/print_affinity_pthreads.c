// Prints each thread's allowed CPUs: main creates N threads (argv[1],
// default 3) one after another, joining each before creating the next, so
// thread K (1..N) is the K-th thread created; each prints
// `thread K cpus LIST` (a Linux cpulist from sched_getaffinity), then main
// prints its own line as `thread 0 cpus LIST`.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_affinity(long k) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    perror("sched_getaffinity");
    exit(2);
  }
  printf("thread %ld cpus ", k);
  int first = 1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (last == cpu)
      printf("%s%d", first ? "" : ",", cpu);
    else
      printf("%s%d-%d", first ? "" : ",", cpu, last);
    first = 0;
    cpu = last;
  }
  printf("\n");
  fflush(stdout);
}

static void* run(void* arg) {
  print_affinity((long)(intptr_t)arg);
  return NULL;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 3;
  for (long k = 1; k <= n; ++k) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, run, (void*)(intptr_t)k) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 2;
    }
    pthread_join(thread, NULL);
  }
  print_affinity(0);
  return 0;
}
