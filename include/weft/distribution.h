/* weft's distribution annotation: which thread owns each element of a shared
 * array, UPC-style, for the reuse-distance analysis' local/remote split
 * (docs/metrics.md, "Granule owner"). Without it a granule belongs to the
 * thread that touched it first.
 *
 *   double* a = malloc(n * sizeof *a);
 *   WEFT_DISTRIBUTE(a, sizeof *a, n, WEFT_BLOCK_CYCLIC, 64, threads);
 *
 * Element i of the array belongs to thread
 *   WEFT_BLOCK:        i / ceil(count / threads)
 *   WEFT_CYCLIC:       i % threads
 *   WEFT_BLOCK_CYCLIC: (i / block) % threads
 * where threads are weft's thread ids 0..threads-1 (0: the main thread, then
 * the others in creation order). A granule holding elements of several
 * threads belongs to the owner of its first byte's element. Declaring a
 * range again replaces the earlier declaration for it.
 *
 * The function is weak: a program built or run without weft links and runs
 * unchanged (the macro then does nothing).
 */
#ifndef WEFT_DISTRIBUTION_H
#define WEFT_DISTRIBUTION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum weft_distribution_kind { WEFT_BLOCK = 0, WEFT_CYCLIC = 1, WEFT_BLOCK_CYCLIC = 2 };

void weft_distribute(const void* base, size_t element_size, size_t count, int kind, size_t block,
                     int threads) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define WEFT_DISTRIBUTE(base, element_size, count, kind, block, threads)          \
  do {                                                                          \
    if (weft_distribute) weft_distribute(base, element_size, count, kind, block, threads); \
  } while (0)

#endif
