/* Two OpenMP threads each fill a block of 64 doubles (in work.c), then sum
 * the other thread's block; the main thread prints both sums.
 * Under `weft record --granularity 8`: raw[0][1] = 64, raw[1][0] = 64 + 1
 * (the main thread reads thread 1's result slot), rar and inval all 0. */
#include <omp.h>
#include <stdio.h>

#include "work.h"

#define N 64

typedef struct {
  _Alignas(64) double v;
} slot_t;

static _Alignas(64) double block[2][N];
static slot_t result[2];

int main(void) {
#pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    fill(block[t], N, t);
#pragma omp barrier
    result[t].v = total(block[1 - t], N);
  }
  printf("hello_omp %.1f %.1f\n", result[0].v, result[1].v);
  return 0;
}
