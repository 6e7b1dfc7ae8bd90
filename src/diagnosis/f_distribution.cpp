#include "diagnosis/f_distribution.h"

#include <cmath>
#include <limits>

namespace weft {
namespace {

// The continued fraction of I_x(a, b) (without its prefactor), which
// converges quickly for x < (a + 1) / (a + b + 2):
//   1 / (1 + c1 / (1 + c2 / (1 + ...)))
//   c(2m + 1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
//   c(2m)     =  m (b - m) x / ((a + 2m - 1)(a + 2m))
// evaluated front to back with the modified Lentz recurrences.
double beta_continued_fraction(double x, double a, double b) {
  constexpr int kMaxTerms = 500;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };

  // f = 1 / (1 + c1 / (1 + ...)): start with the "1 +" of the first level.
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double f = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    const double two_m = 2.0 * m;
    const double even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m));
    d = 1.0 / guard(1.0 + even * d);
    c = guard(1.0 + even / c);
    f *= c * d;
    const double odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0));
    d = 1.0 / guard(1.0 + odd * d);
    c = guard(1.0 + odd / c);
    const double step = c * d;
    f *= step;
    if (std::fabs(step - 1.0) < kEpsilon) break;
  }
  return f;
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  if (!(a > 0.0) || !(b > 0.0) || !(x > 0.0)) return 0.0;
  if (x >= 1.0) return 1.0;
  // log of x^a (1 - x)^b / B(a, b)
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  // The fraction converges fast on the side of the mode closer to x = 0; on
  // the other side use I_x(a, b) = 1 - I_{1-x}(b, a).
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_continued_fraction(x, a, b) / a;
  return 1.0 - front * beta_continued_fraction(1.0 - x, b, a) / b;
}

double f_distribution_sf(double f, double d1, double d2) {
  if (!(d1 > 0.0) || !(d2 > 0.0) || !(f > 0.0)) return 1.0;
  if (std::isinf(f)) return 0.0;
  const double x = d2 / (d2 + d1 * f);
  double p = regularized_incomplete_beta(x, d2 / 2.0, d1 / 2.0);
  if (p < 0.0) p = 0.0;
  if (p > 1.0) p = 1.0;
  return p;
}

}  // namespace weft
