// Upper tail of Fisher's F distribution, for the partial F-tests of the
// forward-selection regression (imbalance_diagnosis.cpp).
#pragma once

namespace weft {

// P(X > f) for X ~ F(d1, d2), computed by Boost.Math.
// f <= 0 (or NaN) gives 1, f = +inf gives 0; degrees of freedom <= 0 give 1,
// and so do NaN or infinite ones (the caller's F-test then finds no
// evidence). Never throws.
double f_distribution_sf(double f, double d1, double d2);

}  // namespace weft
