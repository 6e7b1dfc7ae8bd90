/* moments_unblocked_pthreads.c - K moments of a neighbour's records, one
 * sweep over all N records per moment (the non-blocked version of the pair,
 * like SPLASH's lu_ncb; moments_blocked_pthreads.c is the blocked one).
 * The program around the kernel is in moments_driver.h.
 *
 * Communication reuse distance (CRD), pair u -> t (u = (t+1) % T writes,
 * t reads field x of u's records; one granule per record at --granularity 8
 * and 64, since records are 64-byte lines and only x is read):
 *   every round t reads each of u's N granules K times, one full sweep per
 *   moment, so between two reads of a granule t reads all N - 1 others:
 *   every event but the N first reads of round 1 has distance N - 1:
 *     (R*K - 1) * N events at distance N - 1;  median = N - 1.
 *   Defaults (N=4096 K=8 R=2): 61440 events per pair, all at 4095.
 * Matrices: raw[u][t] = R*N, rar[u][t] = R*(K-1)*N (+ slots: raw[t][0] = 1).
 */
#include "moments_driver.h"

static void moments(const record_t *r, long n, long block, int k_count, double *acc) {
  (void)block;
  for (int k = 0; k < k_count; k++)
    for (long i = 0; i < n; i++) acc[k] += (double)(k + 1) * r[i].x;
}
