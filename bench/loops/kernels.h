/* The kernels of bench/loops (kernels.c); driver.c sets up their data and
 * times them. */
#pragma once
#include <stdint.h>

void k_copy(double *a, const double *b, long n);
void k_scale(double *a, const double *b, double s, long n);
void k_add(double *a, const double *b, const double *c, long n);
void k_triad(double *a, const double *b, const double *c, double s, long n);
double k_dot(const double *a, const double *b, long n);
double k_sum(const double *a, long n);
void k_stencil1d(double *b, const double *a, long n);
void k_stencil2d(double *b, const double *a, long rows, long cols);
void k_matvec(double *y, const double *m, const double *x, long rows, long cols);
void k_colsweep(double *m, const double *f, long rows, long cols);
void k_spmv(double *y, const int *rowptr, const int *col, const double *val, const double *x,
            long rows);
void k_prefix(double *a, const double *b, long n);
void k_histogram(int *h, const int *idx, long n);
void k_gather(double *a, const double *b, const int *idx, long n);
void k_scatter(double *a, const double *b, const int *idx, long n);
void k_stride2(double *a, const double *b, double s, long n);
void k_stride8(double *a, const double *b, double s, long n);
void k_div(double *a, const double *b, const double *c, long n);
void k_sqrt(double *a, const double *b, long n);
void k_horner(double *y, const double *x, long n);
void k_bitmix(uint32_t *a, const uint32_t *b, long n);
void k_clamp(int *a, const int *b, int hi, long n);
void k_fill(double *a, double v, long n);
void k_cmul(double *c, const double *a, const double *b, long n);
