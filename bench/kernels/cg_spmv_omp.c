/* cg_spmv_omp.c - conjugate gradient iterations on a sparse symmetric
 * matrix in CSR form (HPCG / NAS CG style), C + OpenMP; a benchmark kernel
 * whose parallel reads are mostly re-reads of data the main thread wrote
 * (the matrix) or of a vector the whole team shares.
 *
 * Usage: cg_spmv_omp [T [N [ITERATIONS]]]    defaults: T=4 N=64 ITERATIONS=50
 *   T threads (1..64); the matrix is the 7-point Laplacian of an N x N x N
 *   grid (N 4..256, N^3 rows) plus, per row, two long-range couplings to
 *   rows far away (so that each thread's rows read x far outside its own
 *   block); ITERATIONS CG iterations (1..10000). The total work is fixed by
 *   N and ITERATIONS and divided among the threads.
 *
 * The main thread builds the matrix (build_matrix: row_ptr, col, val; with
 * N = 64 about 2.4 million non-zeros, 30 MB) and the right-hand side b.
 * Then, in one `omp parallel`, each iteration of textbook CG does
 *     q = A p                  (spmv: `omp for` over rows; reads p everywhere)
 *     alpha = rho / (p . q)    (dot)
 *     x += alpha p; r -= alpha q
 *     rho' = r . r; beta = rho' / rho; p = r + beta p
 * A dot product is reproducible: `omp for` over fixed blocks of 4096
 * elements, each block's partial sum kept in its own slot, and the block
 * sums added in block order by every thread (the order does not depend on
 * T), so every number, and the printed rho (r . r) and checksum, are the same
 * at every thread count.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 4096

typedef struct {
  long n;        /* rows */
  long *row_ptr; /* n + 1 */
  int *col;      /* row_ptr[n] */
  double *val;
} CsrMatrix;

typedef struct {
  double *x, *r, *p, *q, *b;
  double *partial; /* one per block of BLOCK elements */
  long nblocks;
} CgVectors;

static void *checked(void *block) {
  if (!block) {
    fprintf(stderr, "cg_spmv_omp: out of memory\n");
    exit(1);
  }
  return block;
}

/* A far row coupled to `row`: deterministic, symmetric pairs (row <-> row ^ mask). */
static long partner(long row, long n, long mask) {
  const long other = row ^ mask;
  return other < n ? other : -1;
}

/* The main thread assembles the matrix row by row, the columns of a row in
 * ascending order. Diagonal 7, -1 per grid neighbour, -0.5 per far
 * partner: weakly diagonally dominant, strictly on the grid's boundary
 * rows, and irreducible, hence positive definite. */
static void build_matrix(CsrMatrix *a, int nside) {
  const long n = (long)nside * nside * nside;
  const long far1 = n / 2, far2 = n / 4 + 3 * nside; /* n is >= 64 */
  a->n = n;
  a->row_ptr = checked(malloc((size_t)(n + 1) * sizeof(long)));
  a->col = checked(malloc((size_t)n * 9 * sizeof(int)));
  a->val = checked(malloc((size_t)n * 9 * sizeof(double)));
  long k = 0;
  for (long row = 0; row < n; row++) {
    const long i = row / ((long)nside * nside), j = row / nside % nside, l = row % nside;
    long cols[9];
    double vals[9];
    int m = 0;
    const long p1 = partner(row, n, far1), p2 = partner(row, n, far2);
    /* candidates in ascending column order after a small sort */
    const long cand[9] = {i > 0 ? row - (long)nside * nside : -1,
                          j > 0 ? row - nside : -1,
                          l > 0 ? row - 1 : -1,
                          row,
                          l < nside - 1 ? row + 1 : -1,
                          j < nside - 1 ? row + nside : -1,
                          i < nside - 1 ? row + (long)nside * nside : -1,
                          p1,
                          p2};
    const double cval[9] = {-1, -1, -1, 7, -1, -1, -1, -0.5, -0.5};
    for (int c = 0; c < 9; c++) {
      if (cand[c] < 0) continue;
      int dup = 0;
      for (int e = 0; e < m; e++)
        if (cols[e] == cand[c]) {
          vals[e] += cval[c];
          dup = 1;
        }
      if (dup) continue;
      int pos = m++;
      while (pos > 0 && cols[pos - 1] > cand[c]) {
        cols[pos] = cols[pos - 1];
        vals[pos] = vals[pos - 1];
        pos--;
      }
      cols[pos] = cand[c];
      vals[pos] = cval[c];
    }
    a->row_ptr[row] = k;
    for (int e = 0; e < m; e++, k++) {
      a->col[k] = (int)cols[e];
      a->val[k] = vals[e];
    }
  }
  a->row_ptr[n] = k;
}

/* y = A x for the rows of this thread's share (call inside a parallel region). */
static void spmv(const CsrMatrix *a, const double *x, double *y) {
#pragma omp for schedule(static)
  for (long row = 0; row < a->n; row++) {
    double sum = 0;
    for (long k = a->row_ptr[row]; k < a->row_ptr[row + 1]; k++) sum += a->val[k] * x[a->col[k]];
    y[row] = sum;
  }
}

/* u . v, reproducible (see the header); every thread returns it. */
static double dot(CgVectors *v, const double *u, const double *w, long n) {
#pragma omp for schedule(static)
  for (long blk = 0; blk < v->nblocks; blk++) {
    const long end = (blk + 1) * BLOCK < n ? (blk + 1) * BLOCK : n;
    double s = 0;
    for (long i = blk * BLOCK; i < end; i++) s += u[i] * w[i];
    v->partial[blk] = s;
  } /* implicit barrier */
  double total = 0;
  for (long blk = 0; blk < v->nblocks; blk++) total += v->partial[blk];
#pragma omp barrier /* nobody overwrites partial before all have read it */
  return total;
}

/* y += alpha x over this thread's share. */
static void axpy(double *y, double alpha, const double *x, long n) {
#pragma omp for schedule(static)
  for (long i = 0; i < n; i++) y[i] += alpha * x[i];
}

int main(int argc, char **argv) {
  const int T = argc > 1 ? atoi(argv[1]) : 4;
  const int nside = argc > 2 ? atoi(argv[2]) : 64;
  const int iterations = argc > 3 ? atoi(argv[3]) : 50;
  if (T < 1 || T > 64 || nside < 4 || nside > 256 || iterations < 1 || iterations > 10000) {
    fprintf(stderr, "usage: %s [T 1..64 [N 4..256 [ITERATIONS 1..10000]]]\n", argv[0]);
    return 2;
  }
  omp_set_dynamic(0);
  CsrMatrix a;
  build_matrix(&a, nside);
  const long n = a.n;
  CgVectors v;
  v.nblocks = (n + BLOCK - 1) / BLOCK;
  v.partial = checked(malloc((size_t)v.nblocks * sizeof(double)));
  v.x = checked(malloc((size_t)n * sizeof(double)));
  v.r = checked(malloc((size_t)n * sizeof(double)));
  v.p = checked(malloc((size_t)n * sizeof(double)));
  v.q = checked(malloc((size_t)n * sizeof(double)));
  v.b = checked(malloc((size_t)n * sizeof(double)));
  for (long i = 0; i < n; i++) {
    v.b[i] = 1.0 + (double)(i % 7) / 8.0;
    v.x[i] = 0;
    v.r[i] = v.b[i];
    v.p[i] = v.b[i];
  }
  double rho_final = 0;
#pragma omp parallel num_threads(T)
  {
    double rho = dot(&v, v.r, v.r, n);
    for (int it = 0; it < iterations; it++) {
      spmv(&a, v.p, v.q);
      const double alpha = rho / dot(&v, v.p, v.q, n);
      axpy(v.x, alpha, v.p, n);
      axpy(v.r, -alpha, v.q, n);
      const double rho_new = dot(&v, v.r, v.r, n);
      const double beta = rho_new / rho;
      rho = rho_new;
#pragma omp for schedule(static)
      for (long i = 0; i < n; i++) v.p[i] = v.r[i] + beta * v.p[i];
    }
#pragma omp master
    rho_final = rho;
  }
  double checksum = 0;
  for (long i = 0; i < n; i++) checksum += v.x[i] * (double)(1 + i % 3);
  printf("cg_spmv_omp N=%d rows=%ld nnz=%ld ITERATIONS=%d rho=%.9e checksum=%.9e\n", nside, n,
         a.row_ptr[n], iterations, rho_final, checksum);
  free(v.partial);
  free(v.x);
  free(v.r);
  free(v.p);
  free(v.q);
  free(v.b);
  free(a.row_ptr);
  free(a.col);
  free(a.val);
  return 0;
}
