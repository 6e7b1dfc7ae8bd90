/* tally_race_omp.c - a histogram kept in per-thread counters packed in one
 * heap block, a running total every thread adds to without synchronization,
 * and a read-only parameter next to per-thread progress slots (C + OpenMP).
 *
 * Usage: tally_race_omp [N [B [R]]]   defaults: N=16384 B=512 R=40
 *   4 OpenMP threads (fixed). N items, B bins (even, N >= 4 * B), R rounds.
 *
 *   Phase 1, one `parallel for schedule(static)` over the items: item i
 *   falls in bin i % B, and its thread increments its own counter of that
 *   bin, counts[bin * 4 + t] (line marked "count"), then adds the item's
 *   weight to the global `total` with a plain `+=` (marked "race").
 *   counts is a 64-byte aligned heap block of 4 * B longs (marked "alloc"):
 *   a 64-byte line holds the 4 threads' counters of 2 bins, so its B / 2
 *   lines are each written by all 4 threads at different bytes (each
 *   thread's N / 4 consecutive items cover every bin): false sharing on
 *   exactly B / 2 lines of the block, at least 2 transfers per line at the
 *   count line (each line changes writer at least 3 times and the new
 *   writer's load obtains it, falsely but for the first change when it
 *   leaves main's memset of the block: true sharing), and at most one per
 *   line at main's sum of the counters after the loop (marked "sum").
 *   `total` is written by every thread with no lock and nothing ordering
 *   the writes: a data race (updates are lost under real concurrency), at
 *   least 3 unsynchronised writes (a write by each new writer of total,
 *   whatever the interleaving), reported as unsynchronised sharing, never
 *   as false sharing.
 *   Fixes: pad each thread's counters (or private histograms); a
 *   reduction(+:total). Every B-th item also updates the global `heaviest`
 *   inside `#pragma omp critical` (marked "critical"): written by every
 *   thread, but under a lock: not a race.
 *
 *   Phase 2, R rounds in one parallel region, a barrier after each: each
 *   thread reads the global `limit` (set by main before the region, then
 *   only read; marked "read-limit") and stores what it derived from it in
 *   its own slots of the globals `progress[4]` and `finished[4]`. limit
 *   shares its 64-byte line with one of them (see their declarations): in
 *   every round each thread's read of limit finds the line last written by
 *   another thread (at that array's bytes), except possibly one thread's
 *   (and in round 0, the reads before any slot is written find main's
 *   initialization of limit: true sharing): at least 3 * (R - 1)
 *   false-sharing transfers whose data is `limit`, a read-only object; the
 *   fix is to move or align the written neighbour, not to pad limit. (The other array, alone in its
 * line, is per-thread slots falsely shared the usual way.)
 *
 * The program checks the histogram (every bin holds N / B items) and exits
 * 1 if it is wrong; the racy total is printed, not checked.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T 4

static _Alignas(64) long heaviest; /* updated in a critical section */
static _Alignas(64) long total;    /* every thread adds to it: a data race */
/* Per-thread slots around the read-only limit. gcc lays these globals out
 * in the reverse order of their definitions, clang in the order of their
 * first use (main's resets below): limit shares its line with `finished`
 * (gcc) or `progress` (clang). */
static _Alignas(64) long progress[T]; /* items done, one slot per thread */
static long limit;                    /* items per round: read-only in the rounds */
static _Alignas(64) long finished[T]; /* 1 once a thread did all its items */

static long weight(long i) { return i % 7 + 1; }

static void tally(long *counts, long n, long bins) {
#pragma omp parallel for schedule(static) num_threads(T)
  for (long i = 0; i < n; i++) {
    const int t = omp_get_thread_num();
    counts[(i % bins) * T + t] += 1; /* weft:count */
    total += weight(i);              /* weft:race */
    if (i % bins == 0) {
#pragma omp critical
      if (weight(i) > heaviest) heaviest = weight(i); /* weft:critical */
    }
  }
}

static void rounds(int r_count) {
#pragma omp parallel num_threads(T)
  {
    const int t = omp_get_thread_num();
    for (int r = 0; r < r_count; r++) {
      const long done = (long)(r + 1) * limit; /* weft:read-limit */
      progress[t] = done;
      finished[t] = done >= (long)r_count * limit;
#pragma omp barrier
    }
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 16384;
  long bins = argc > 2 ? atol(argv[2]) : 512;
  int r_count = argc > 3 ? atoi(argv[3]) : 40;
  if (bins < 2 || bins % 2 != 0 || n < T * bins || n > (1L << 30) || r_count < 1 ||
      r_count > 1000000) {
    fprintf(stderr, "usage: %s [N [B (even, N >= 4 * B) [R]]]\n", argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  omp_set_num_threads(T);
  long *counts = aligned_alloc(64, (size_t)bins * T * sizeof(long)); /* weft:alloc */
  if (!counts) return 1;
  memset(counts, 0, (size_t)bins * T * sizeof(long));
  total = 0;
  for (int t = 0; t < T; t++) progress[t] = 0;
  limit = n / r_count;
  for (int t = 0; t < T; t++) finished[t] = 0;

  tally(counts, n, bins);
  rounds(r_count);

  int ok = 1;
  long items = 0;
  for (long b = 0; b < bins; b++) {
    long in_bin = 0;
    for (int t = 0; t < T; t++) in_bin += counts[b * T + t]; /* weft:sum */
    ok = ok && in_bin == n / bins + (b < n % bins);
    items += in_bin;
  }
  for (int t = 0; t < T; t++) ok = ok && progress[t] == (long)r_count * limit && finished[t];
  long expected = 0;
  for (long i = 0; i < n; i++) expected += weight(i);
  printf(
      "tally_race_omp N=%ld B=%ld R=%d items=%ld heaviest=%ld total=%ld (%ld without the race)\n",
      n, bins, r_count, items, heaviest, total, expected);
  free(counts);
  return ok && items == n ? 0 : 1;
}
