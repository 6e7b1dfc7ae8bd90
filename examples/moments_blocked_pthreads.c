/* moments_blocked_pthreads.c - the same K moments as
 * moments_unblocked_pthreads.c, with the record loop blocked: all K moments
 * of a block of B records before the next block (array blocking / loop
 * tiling, the data-affinity fix weft suggests for the unblocked version).
 * Each moment still sums its records in ascending order, so the results are
 * bit-identical. The program around the kernel is in moments_driver.h.
 *
 * CRD, pair u -> t (see the unblocked version for the setting):
 *   within a block, t reads its B granules K times in a row: each read after
 *   the first of a round has distance B - 1; the first read of a granule in
 *   rounds 2..R comes after all N - 1 other granules of the previous round:
 *     R*(K-1)*N events at distance B - 1, (R-1)*N events at distance N - 1;
 *   median = B - 1 when K >= 2.
 *   Defaults (N=4096 K=8 R=2 B=64): 57344 events at 63, 4096 at 4095.
 * Matrices: the same as the unblocked version.
 */
#include "moments_driver.h"

static void moments(const record_t *r, long n, long block, int k_count, double *acc) {
  for (long start = 0; start < n; start += block)
    for (int k = 0; k < k_count; k++)
      for (long i = start; i < start + block; i++) acc[k] += (double)(k + 1) * r[i].x;
}
