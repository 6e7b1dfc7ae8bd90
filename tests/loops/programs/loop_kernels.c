// Loops whose static performance is known, for test_loops: each kernel is its
// own function (noinline) so the tests find its loops by name, and its loop
// line is marked `// loop: NAME` for the tests to find.
#include <stdio.h>
#include <stdlib.h>

#define KERNEL __attribute__((noinline))

// a[i] = b[i] + c[i]: with restrict one loop; the versioned copy is
// add_arrays_aliased (no restrict: gcc -O3 adds a runtime alias check, a
// vectorized loop and a scalar one).
KERNEL void add_arrays(double* restrict a, const double* restrict b, const double* restrict c,
                       int n) {
  for (int i = 0; i < n; i++) a[i] = b[i] + c[i];  // loop: add_arrays
}

KERNEL void add_arrays_aliased(double* a, const double* b, const double* c, int n) {
  for (int i = 0; i < n; i++) a[i] = b[i] + c[i];  // loop: add_arrays_aliased
}

// An indirect (gather) read feeding a sum.
KERNEL double gather_sum(const double* a, const int* index, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[index[i]];  // loop: gather_sum
  return sum;
}

KERNEL void divide_arrays(double* restrict a, const double* restrict b, const double* restrict c,
                          int n) {
  for (int i = 0; i < n; i++) a[i] = b[i] / c[i];  // loop: divide_arrays
}

// A loop-carried FP add: without -ffast-math the additions stay in order.
KERNEL double sum_array(const double* a, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += a[i];  // loop: sum_array
  return sum;
}

// A long-latency integer division in every iteration, on no loop-carried
// chain: few iterations fit in the out-of-order window.
KERNEL void remainders(int* restrict out, int n, int divisor) {
  for (int i = 0; i < n; i++) out[i] = (i * 7) % divisor;  // loop: remainders
}

// One store per iteration: the store port and the loop counter's 1-cycle
// chain tie; the store port is the limit, the counter is not.
KERNEL void fill_array(double* restrict a, double v, int n) {
  for (int i = 0; i < n; i++) a[i] = v;  // loop: fill_array
}

#ifndef LOOP_KERNELS_LIBRARY
int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  double* a = calloc((size_t)n, sizeof(double));
  double* b = calloc((size_t)n, sizeof(double));
  double* c = calloc((size_t)n, sizeof(double));
  int* index = calloc((size_t)n, sizeof(int));
  if (!a || !b || !c || !index) return 1;
  for (int i = 0; i < n; i++) {
    b[i] = i;
    c[i] = i + 1;
    index[i] = (i * 7) % n;
  }
  add_arrays(a, b, c, n);
  add_arrays_aliased(a, b, c, n);
  divide_arrays(a, b, c, n);
  remainders(index, n, n);
  fill_array(c, 2.0, n);
  printf("%g %g\n", gather_sum(a, index, n), sum_array(a, n));
  free(a);
  free(b);
  free(c);
  free(index);
  return 0;
}
#endif
