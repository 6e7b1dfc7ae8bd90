#include "work.h"

void fill(double *a, long n, int seed) {
  for (long i = 0; i < n; i++) a[i] = (double)(seed * 100 + i);
}

double total(const double *a, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++) s += a[i];
  return s;
}
