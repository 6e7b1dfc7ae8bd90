/* Irregular accesses whose footprint only a run tells (weft loops
 * --profile, tests/loops/test_loops_cli.cpp): three loops over the same
 * 65,536 pseudo-random indices (a fixed linear congruential sequence), each
 * in a function of its own:
 *
 *   - histogram: h[idx[i] % 256] += 1 over 256 ints (1 KiB, 16 lines): the
 *     table stays in any L1;
 *   - small_gather: a sum of t[idx[i] % 16384] over 16,384 doubles (128 KiB,
 *     2,048 lines, every one of them touched: 65,536 draws): larger than an
 *     L1, well within an L2 of 512 KiB;
 *   - large_gather: the same over 524,288 doubles (4 MiB): beyond the L2.
 *
 * The addressing says "irregular" for all three table accesses alike. */
#include <stdio.h>
#include <stdlib.h>

#define LOOKUPS 65536
#define SMALL (1 << 14)
#define LARGE (1 << 19)

static unsigned idx[LOOKUPS];
static int h[256];

__attribute__((noinline)) void histogram(const unsigned* restrict keys, int* restrict bins) {
  for (int i = 0; i < LOOKUPS; ++i) bins[keys[i] % 256] += 1;
}

__attribute__((noinline)) double small_gather(const unsigned* restrict keys,
                                              const double* restrict t) {
  double s = 0;
  for (int i = 0; i < LOOKUPS; ++i) s += t[keys[i] % SMALL];
  return s;
}

__attribute__((noinline)) double large_gather(const unsigned* restrict keys,
                                              const double* restrict t) {
  double s = 0;
  for (int i = 0; i < LOOKUPS; ++i) s += t[keys[i] % LARGE];
  return s;
}

int main(void) {
  unsigned x = 12345;
  for (int i = 0; i < LOOKUPS; ++i) {
    x = x * 1103515245u + 12345u;
    idx[i] = x >> 8;
  }
  double* small = malloc(SMALL * sizeof(double));
  double* large = malloc(LARGE * sizeof(double));
  for (int i = 0; i < SMALL; ++i) small[i] = i % 5;
  for (int i = 0; i < LARGE; ++i) large[i] = i % 3;
  histogram(idx, h);
  const double total = small_gather(idx, small) + large_gather(idx, large) + h[7];
  printf("%.1f\n", total);
  free(small);
  free(large);
  return 0;
}
