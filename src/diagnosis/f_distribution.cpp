#include "diagnosis/f_distribution.h"

#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>

namespace weft {
namespace {

// Boost.Math throws on domain, pole, overflow and evaluation errors by
// default; the diagnosis must never throw, so every error returns a value
// (NaN on a domain error), which f_distribution_sf maps to "no evidence".
using NoThrowPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

}  // namespace

double f_distribution_sf(double f, double d1, double d2) {
  // The documented edges are decided here, before Boost sees them.
  if (!(d1 > 0.0) || !(d2 > 0.0) || !(f > 0.0)) return 1.0;
  if (std::isinf(f)) return 0.0;
  const boost::math::fisher_f_distribution<double, NoThrowPolicy> dist(d1, d2);
  const double p = boost::math::cdf(boost::math::complement(dist, f));
  if (std::isnan(p)) return 1.0;  // infinite degrees of freedom
  return p;
}

}  // namespace weft
