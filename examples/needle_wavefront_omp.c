/* needle_wavefront_omp.c - Needleman-Wunsch alignment scores filled by
 * anti-diagonals of blocks (Rodinia needle style, C + OpenMP).
 *
 * Usage: needle_wavefront_omp [N [B]]   defaults: N=2048 B=64
 *   T = 4 OpenMP threads (fixed; the master is weft thread 0). Two random
 *   sequences of N residues (N a multiple of B, B a multiple of 16, N / B
 *   >= 4).
 *
 * The Needleman-Wunsch case of the CRD paper (Salehian et al., Table 2:
 * needle.cpp, the two wavefront loops; high CRD, data affinity by an OpenMP
 * chunk of 32 and array blocking, no thread mapping). The main thread draws
 * the sequences, fills the substitution scores of every cell,
 * reference[i][j] = blosum(seq1[i], seq2[j]) (an (N+1) x (N+1) int matrix,
 * marked "nw-ref-alloc"), and the gap penalties of the first row and column
 * of the score matrix. The (N/B)^2 blocks of B x B cells are then filled by
 * anti-diagonals of blocks, each anti-diagonal one `parallel for
 * schedule(static)` over its blocks: first the upper-left triangle (marked
 * "nw-upper"), then the lower-right one ("nw-lower"). A block (fill_block)
 * reads the last row of the block above and the last column of the block
 * to its left, written on the previous anti-diagonal, and each cell reads
 * its substitution score (marked "nw-cell").
 *
 * What weft should conclude (64-byte lines, the recorded cache of 8 MiB):
 *   - the cell loop (marked "nw-cell"): per block B x B reads of the main
 *     thread's reference against at most 2 (2B + 1) reads of the cells of
 *     the neighbouring blocks: the master (thread 0) wrote over 90% of the
 *     loop's communication, read by the 3 other threads: a broadcast (the
 *     thread that fills a block could compute its substitution scores), and
 *     never thread affinity;
 *   - no data affinity: a line of the reference is read by consecutive
 *     cells of one block row (re-reads of the line just read); rows of
 *     N + 1 ints do not start on a line, so the lines at a block's edges
 *     are read again when the block beside it is filled, one anti-diagonal
 *     of blocks later; the neighbours' cells are read within a block row.
 *     Two reads of a line by one pair are at most one anti-diagonal of
 *     blocks apart: at most N / B blocks of B x B ints shared by 4 threads,
 *     128 KiB a thread by default, 1 MiB for a 16384 x 16384 matrix (1 GiB),
 *     while the min cutoff is at least 4 MiB. The median CRD of the line
 *     visits is about 2000 lines (measured: 1893, gcc -O1).
 * The paper concluded data affinity for this case: its min cutoff was the
 * cache minus the private data, 0 or less for matrices like these, so that
 * any distance was beyond it; weft's is at least half the cache
 * (docs/metrics.md, "CRD").
 * Deterministic: static schedules; the score of the alignment and the
 * length of the traceback (the main thread's) are printed.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define T 4

static int n, bsize, max_cols;
static int *reference, *score;

static int max3(int a, int b, int c) {
  const int m = a > b ? a : b;
  return m > c ? m : c;
}

/* A BLOSUM-like substitution score of residues a and b (0..23). */
static int blosum(int a, int b) { return a == b ? 4 + a % 7 : -((a * 5 + b * 3) % 5); }

/* Fills the cells of block (bi, bj): rows 1 + bi B .., columns 1 + bj B .. */
static void fill_block(int *s, const int *ref, int cols, int b, int bi, int bj, int penalty) {
  const int row0 = 1 + bi * b, col0 = 1 + bj * b;
  for (int i = row0; i < row0 + b; i++)
    for (int j = col0; j < col0 + b; j++) {
      const long k = (long)i * cols + j;
      s[k] = max3(s[k - cols - 1] + ref[k], /* weft:nw-cell */
                  s[k - 1] - penalty, s[k - cols] - penalty);
    }
}

int main(int argc, char **argv) {
  n = argc > 1 ? atoi(argv[1]) : 2048;
  bsize = argc > 2 ? atoi(argv[2]) : 64;
  if (bsize < 16 || bsize % 16 != 0 || n < 4 * bsize || n % bsize != 0 || n > 16384) {
    fprintf(stderr, "usage: %s [N [B]] (B a multiple of 16, N a multiple of B, N >= 4 B)\n",
            argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  omp_set_num_threads(T);
  max_cols = n + 1;
  const long cells = (long)max_cols * max_cols;
  reference =
      aligned_alloc(64, ((size_t)cells * sizeof(int) + 63) / 64 * 64); /* weft:nw-ref-alloc */
  score = aligned_alloc(64, ((size_t)cells * sizeof(int) + 63) / 64 * 64);
  int *seq1 = malloc(sizeof(int) * max_cols), *seq2 = malloc(sizeof(int) * max_cols);
  if (!reference || !score || !seq1 || !seq2) return 1;
  for (int i = 0; i < max_cols; i++) {
    seq1[i] = (i * 7 + 3) % 24;
    seq2[i] = (i * 11 + 5) % 24;
  }
  const int penalty = 10;
  for (int i = 0; i < max_cols; i++)
    for (int j = 0; j < max_cols; j++) reference[(long)i * max_cols + j] = blosum(seq1[i], seq2[j]);
  for (int i = 0; i < max_cols; i++) {
    score[(long)i * max_cols] = -i * penalty;
    score[i] = -i * penalty;
  }

  const int nb = n / bsize;
  int *s = score;
  const int *ref = reference;
  const int cols = max_cols, b = bsize;
  /* Upper-left triangle: anti-diagonal d holds the blocks (d - x, x). */
  for (int d = 0; d < nb; d++) {
#pragma omp parallel for schedule(static) num_threads(T)
    for (int x = 0; x <= d; x++) fill_block(s, ref, cols, b, d - x, x, penalty); /* weft:nw-upper */
  }
  /* Lower-right triangle: anti-diagonal nb - 1 + d holds (nb - 1 - x, d + x). */
  for (int d = 1; d < nb; d++) {
#pragma omp parallel for schedule(static) num_threads(T)
    for (int x = 0; x < nb - d; x++)
      fill_block(s, ref, cols, b, nb - 1 - x, d + x, penalty); /* weft:nw-lower */
  }

  /* Trace the alignment back from the last cell (the main thread). */
  int i = n, j = n, matches = 0, steps = 0;
  while (i > 0 && j > 0) {
    const long k = (long)i * max_cols + j;
    if (score[k] == score[k - max_cols - 1] + reference[k]) {
      matches += seq1[i] == seq2[j];
      i--, j--;
    } else if (score[k] == score[k - 1] - penalty) {
      j--;
    } else {
      i--;
    }
    steps++;
  }
  printf("needle_wavefront_omp N=%d B=%d score %d, traceback of %d steps with %d matches\n", n,
         bsize, score[cells - 1], steps + i + j, matches);
  free(seq1);
  free(seq2);
  free(reference);
  free(score);
  return 0;
}
