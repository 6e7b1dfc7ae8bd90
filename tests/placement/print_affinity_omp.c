// Prints each OpenMP thread's allowed CPUs: one `#pragma omp parallel
// num_threads(N)` region (N: argv[1], default 4), where each thread records
// its sched_getaffinity list at the index omp_get_thread_num(); after the
// region main prints `thread K cpus LIST` for K = 0..N-1, then `team N`.
//
// For a first parallel region with a fixed team, libgomp and libomp create
// workers 1..N-1 one after another from the main thread, so OpenMP thread K
// is the K-th thread created (checked by the placement tests, which pin
// each creation index to a different set).
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxThreads = 64 };

static char lists[kMaxThreads][256];

static void record_affinity(char* out, size_t size) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    snprintf(out, size, "error");
    return;
  }
  size_t used = 0;
  out[0] = '\0';
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    int n = last == cpu ? snprintf(out + used, size - used, "%s%d", used ? "," : "", cpu)
                        : snprintf(out + used, size - used, "%s%d-%d", used ? "," : "", cpu, last);
    if (n < 0 || (size_t)n >= size - used) return;
    used += (size_t)n;
    cpu = last;
  }
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  if (n < 1 || n > kMaxThreads) {
    fprintf(stderr, "1 to %d threads\n", kMaxThreads);
    return 2;
  }
  int team = 0;
#pragma omp parallel num_threads(n)
  {
    int k = omp_get_thread_num();
    record_affinity(lists[k], sizeof lists[k]);
#pragma omp single
    team = omp_get_num_threads();
  }
  for (int k = 0; k < team; ++k) printf("thread %d cpus %s\n", k, lists[k]);
  printf("team %d\n", team);
  return 0;
}
