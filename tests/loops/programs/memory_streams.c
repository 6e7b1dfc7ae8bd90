// Loops whose memory streams are known, for the L2/RAM estimates of
// test_loops: a stride-1 triad, a stride-2 read, a column read (stride = a
// row of ROW_LENGTH doubles), a gather, and reductions per row (the trip
// count estimates: one inner loop, two inner loops). Each kernel is its own function
// (noinline) so the tests find its loop by name.
#include <stdio.h>
#include <stdlib.h>

#define KERNEL __attribute__((noinline))
#define ROW_LENGTH 512

// Two 8-byte loads and one 8-byte store per iteration, all stride 8.
KERNEL void triad(double* restrict a, const double* restrict b, const double* restrict c,
                  double scalar, int n) {
  for (int i = 0; i < n; i++) a[i] = b[i] + scalar * c[i];
}

// Every other element of b (stride 16 bytes), stored contiguously (stride 8).
KERNEL void every_other(double* restrict a, const double* restrict b, int n) {
  for (int i = 0; i < n; i++) a[i] = 2.0 * b[2 * i];
}

// One column of a row-major matrix: loads ROW_LENGTH * 8 bytes apart.
KERNEL void copy_column(double* restrict column, const double (*restrict matrix)[ROW_LENGTH],
                        int j, int n) {
  for (int i = 0; i < n; i++) column[i] = matrix[i][j];
}

// a[index[i]]: the address of the a load depends on the index load.
KERNEL double gather(const double* restrict a, const int* restrict index, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[index[i]];
  return sum;
}

// Each row's sum: an addsd chain that restarts every row (s = 0), so that
// with a short row the next row's chain overlaps this one's.
KERNEL void row_sums(double* restrict y, const double* restrict m, int rows, int cols) {
  for (int i = 0; i < rows; i++) {
    double s = 0;
    for (int j = 0; j < cols; j++) s += m[i * cols + j];
    y[i] = s;
  }
}

// Two sums per row, in two inner loops of one enclosing loop: both inner
// loops run in every iteration of the outer one.
KERNEL void pair_sums(double* restrict y, const double* restrict m, const double* restrict w,
                      int rows, int cols) {
  for (int i = 0; i < rows; i++) {
    double s = 0, t = 0;
    for (int j = 0; j < cols; j++) s += m[i * cols + j];
    for (int j = 0; j < cols; j++) t += w[i * cols + j];
    y[i] = s * t;
  }
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  double* a = calloc((size_t)n, sizeof(double));
  double* b = calloc(2 * (size_t)n, sizeof(double));
  double* c = calloc((size_t)n, sizeof(double));
  double(*matrix)[ROW_LENGTH] = calloc((size_t)n, sizeof *matrix);
  int* index = calloc((size_t)n, sizeof(int));
  if (!a || !b || !c || !matrix || !index) return 1;
  for (int i = 0; i < n; i++) index[i] = (i * 7) % n;
  triad(a, b, c, 3.0, n);
  every_other(a, b, n);
  copy_column(a, (const double(*)[ROW_LENGTH])matrix, 3, n);
  printf("%g\n", gather(a, index, n));
  row_sums(a, b, n / 4, 4);
  pair_sums(a, b, c, n / 4, 4);
  free(a);
  free(b);
  free(c);
  free(matrix);
  free(index);
  return 0;
}
