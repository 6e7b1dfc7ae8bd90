/* The kernels of bench/loops.sh: small loops over arrays whose inner loop
 * `weft loops` predicts (cycles per iteration in L1) and driver.c times.
 * Each kernel is its own noinline function; the line of its inner loop
 * carries a `weft:kernel NAME` marker, which bench/loops.sh finds and passes
 * to `weft loops --line kernels.c:LINE`. Built with gcc and clang at -O2 and
 * -O3 -march=native (vectorized and scalar versions), -g -fno-math-errno
 * (sqrt without its errno call path). Plain C11, no -ffast-math: the FP
 * reductions stay scalar. */
#include "kernels.h"

#include <math.h>
#include <stdint.h>

/* copy: a memcpy idiom; both compilers would replace the loop by a call to
 * memcpy/memmove, so that idiom is switched off for this function only. */
#if defined(__clang__)
#define NO_LIBCALL_IDIOM __attribute__((no_builtin("memcpy", "memmove", "memset")))
#else
#define NO_LIBCALL_IDIOM __attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
#define KERNEL __attribute__((noinline))

KERNEL NO_LIBCALL_IDIOM void k_copy(double *a, const double *b, long n) {
  for (long i = 0; i < n; i++) a[i] = b[i]; /* weft:kernel copy */
}

KERNEL void k_scale(double *a, const double *b, double s, long n) {
  for (long i = 0; i < n; i++) a[i] = s * b[i]; /* weft:kernel scale */
}

KERNEL void k_add(double *a, const double *b, const double *c, long n) {
  for (long i = 0; i < n; i++) a[i] = b[i] + c[i]; /* weft:kernel add */
}

KERNEL void k_triad(double *a, const double *b, const double *c, double s, long n) {
  for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i]; /* weft:kernel triad */
}

KERNEL double k_dot(const double *a, const double *b, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += a[i] * b[i]; /* weft:kernel dot */
  return s;
}

KERNEL double k_sum(const double *a, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += a[i]; /* weft:kernel sum */
  return s;
}

/* 1-D 5-point stencil. */
KERNEL void k_stencil1d(double *b, const double *a, long n) {
  for (long i = 2; i < n - 2; i++) /* weft:kernel stencil1d */
    b[i] = 0.4 * a[i] + 0.2 * (a[i - 1] + a[i + 1]) + 0.1 * (a[i - 2] + a[i + 2]);
}

/* 2-D 5-point stencil on rows x cols, inner loop along a row. */
KERNEL void k_stencil2d(double *b, const double *a, long rows, long cols) {
  for (long i = 1; i < rows - 1; i++)
    for (long j = 1; j < cols - 1; j++) /* weft:kernel stencil2d */
      b[i * cols + j] = 0.2 * (a[i * cols + j] + a[i * cols + j - 1] + a[i * cols + j + 1] +
                               a[(i - 1) * cols + j] + a[(i + 1) * cols + j]);
}

/* y = M x, row-wise: the inner loop is a scalar FP reduction along a row. */
KERNEL void k_matvec(double *y, const double *m, const double *x, long rows, long cols) {
  for (long i = 0; i < rows; i++) {
    double s = 0;
    for (long j = 0; j < cols; j++) s += m[i * cols + j] * x[j]; /* weft:kernel matvec */
    y[i] = s;
  }
}

/* Column-wise sweep: each column scaled top to bottom (stride = cols). */
KERNEL void k_colsweep(double *m, const double *f, long rows, long cols) {
  for (long j = 0; j < cols; j++)
    for (long i = 0; i < rows; i++) m[i * cols + j] *= f[i]; /* weft:kernel colsweep */
}

/* Sparse matrix-vector product, CSR. */
KERNEL void k_spmv(double *y, const int *rowptr, const int *col, const double *val, const double *x,
                   long rows) {
  for (long i = 0; i < rows; i++) {
    double s = 0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]]; /* weft:kernel spmv */
    y[i] = s;
  }
}

KERNEL void k_prefix(double *a, const double *b, long n) {
  double s = 0;
  for (long i = 0; i < n; i++) { /* weft:kernel prefix */
    s += b[i];
    a[i] = s;
  }
}

KERNEL void k_histogram(int *h, const int *idx, long n) {
  for (long i = 0; i < n; i++) h[idx[i]]++; /* weft:kernel histogram */
}

KERNEL void k_gather(double *a, const double *b, const int *idx, long n) {
  for (long i = 0; i < n; i++) a[i] = b[idx[i]]; /* weft:kernel gather */
}

KERNEL void k_scatter(double *a, const double *b, const int *idx, long n) {
  for (long i = 0; i < n; i++) a[idx[i]] = b[i]; /* weft:kernel scatter */
}

KERNEL void k_stride2(double *a, const double *b, double s, long n) {
  for (long i = 0; i < n; i++) a[i] = s * b[2 * i]; /* weft:kernel stride2 */
}

KERNEL void k_stride8(double *a, const double *b, double s, long n) {
  for (long i = 0; i < n; i++) a[i] = s * b[8 * i]; /* weft:kernel stride8 */
}

KERNEL void k_div(double *a, const double *b, const double *c, long n) {
  for (long i = 0; i < n; i++) a[i] = b[i] / c[i]; /* weft:kernel div */
}

KERNEL void k_sqrt(double *a, const double *b, long n) {
  for (long i = 0; i < n; i++) a[i] = sqrt(b[i]); /* weft:kernel sqrt */
}

/* Horner, degree 8: a chain of 8 dependent multiply-adds per element. */
KERNEL void k_horner(double *y, const double *x, long n) {
  for (long i = 0; i < n; i++) { /* weft:kernel horner */
    double v = x[i], p = 0.5;
    p = p * v + 0.25;
    p = p * v - 0.125;
    p = p * v + 1.5;
    p = p * v - 0.75;
    p = p * v + 0.375;
    p = p * v - 2.0;
    p = p * v + 1.0;
    p = p * v + 0.0625;
    y[i] = p;
  }
}

/* Integer bit manipulation: a xorshift-multiply hash of every element. */
KERNEL void k_bitmix(uint32_t *a, const uint32_t *b, long n) {
  for (long i = 0; i < n; i++) { /* weft:kernel bitmix */
    uint32_t x = b[i];
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    a[i] = x ^ (x << 5);
  }
}

/* Branchy: absolute value then clamp, on ints of both signs. */
KERNEL void k_clamp(int *a, const int *b, int hi, long n) {
  for (long i = 0; i < n; i++) { /* weft:kernel clamp */
    int v = b[i];
    if (v < 0) v = -v;
    if (v > hi) v = hi;
    a[i] = v;
  }
}

/* memset-like: a value the compiler cannot turn into memset's byte. */
KERNEL void k_fill(double *a, double v, long n) {
  for (long i = 0; i < n; i++) a[i] = v; /* weft:kernel fill */
}

/* Complex multiply, interleaved re/im: c = a * b, n complex numbers. */
KERNEL void k_cmul(double *c, const double *a, const double *b, long n) {
  for (long k = 0; k < n; k++) { /* weft:kernel cmul */
    double ar = a[2 * k], ai = a[2 * k + 1], br = b[2 * k], bi = b[2 * k + 1];
    c[2 * k] = ar * br - ai * bi;
    c[2 * k + 1] = ar * bi + ai * br;
  }
}
