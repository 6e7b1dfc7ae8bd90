#ifndef WORK_H
#define WORK_H
void fill(double *a, long n, int seed);
double total(const double *a, long n);
#endif
