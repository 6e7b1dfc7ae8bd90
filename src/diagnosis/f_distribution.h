// Upper tail of Fisher's F distribution, for the partial F-tests of the
// forward-selection regression (imbalance_diagnosis.cpp).
#pragma once

namespace weft {

// I_x(a, b): the regularized incomplete beta function, for 0 <= x <= 1 and
// a, b > 0 (continued fraction evaluated with the modified Lentz method).
// Arguments outside that domain are clamped: x < 0 gives 0, x > 1 gives 1,
// a <= 0 or b <= 0 gives 0 (the caller's F-test then treats the evidence as
// void).
double regularized_incomplete_beta(double x, double a, double b);

// P(X > f) for X ~ F(d1, d2): I_{d2 / (d2 + d1 f)}(d2 / 2, d1 / 2).
// f <= 0 (or NaN) gives 1, f = +inf gives 0; degrees of freedom <= 0 give 1.
double f_distribution_sf(double f, double d1, double d2);

}  // namespace weft
