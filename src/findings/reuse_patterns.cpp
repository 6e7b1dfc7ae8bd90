#include "findings/reuse_patterns.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace weft {
namespace {

struct Segment {
  uint32_t first = 0;
  uint32_t last = 0;
};

double peak_of(const std::vector<double>& counts, const Segment& s) {
  return *std::max_element(counts.begin() + s.first, counts.begin() + s.last + 1);
}

// The segments of one run of non-empty bins [first, last]: cut after every
// valley (a bin where the counts stop falling and start rising; the valley
// bin ends the segment on its left), then merge the two sides of every
// valley that is too shallow, the shallowest first.
std::vector<Segment> split_run(const std::vector<double>& counts, uint32_t first, uint32_t last) {
  std::vector<Segment> segments;
  uint32_t start = first;
  bool falling = false;
  for (uint32_t b = first + 1; b <= last; ++b) {
    if (counts[b] < counts[b - 1]) {
      falling = true;
    } else if (counts[b] > counts[b - 1] && falling) {
      segments.push_back({start, b - 1});
      start = b;
      falling = false;
    }
  }
  segments.push_back({start, last});
  for (;;) {
    size_t shallowest = 0;
    double worst = kReuseValleyDepth;
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
      const double valley = counts[segments[i].last];
      const double lower_peak =
          std::min(peak_of(counts, segments[i]), peak_of(counts, segments[i + 1]));
      const double ratio = valley / lower_peak;
      if (ratio > worst) {
        worst = ratio;
        shallowest = i + 1;
      }
    }
    if (shallowest == 0) break;
    segments[shallowest - 1].last = segments[shallowest].last;
    segments.erase(segments.begin() + static_cast<std::ptrdiff_t>(shallowest));
  }
  return segments;
}

double bin_mean(const ReuseDistanceHistogram& h, uint32_t b) {
  if (b < h.distance_sums.size() && h.counts[b] > 0)
    return h.distance_sums[b] / static_cast<double>(h.counts[b]);
  return (static_cast<double>(reuse_bin_low(b)) + static_cast<double>(reuse_bin_high(b))) / 2;
}

// The width of a bin of octave k [2^k, 2^(k+1)) on a grid of `sub_bins` per
// octave (max(1, 2^k / sub_bins)), and how many bins the octave has there.
uint64_t octave_width(unsigned k, uint32_t sub_bins) {
  return std::max<uint64_t>(1, (uint64_t{1} << k) / sub_bins);
}
uint32_t octave_bins(unsigned k, uint32_t sub_bins) {
  return static_cast<uint32_t>((uint64_t{1} << k) / octave_width(k, sub_bins));
}

}  // namespace

uint32_t pattern_bin(uint64_t distance, uint32_t sub_bins) {
  if (distance == 0) return 0;
  const unsigned top = 63 - static_cast<unsigned>(std::countl_zero(distance));
  uint32_t bin = 1;
  for (unsigned k = 0; k < top; ++k) bin += octave_bins(k, sub_bins);
  return bin +
         static_cast<uint32_t>((distance - (uint64_t{1} << top)) / octave_width(top, sub_bins));
}

uint64_t pattern_bin_low(uint32_t bin, uint32_t sub_bins) {
  if (bin == 0) return 0;
  uint32_t first = 1;
  for (unsigned k = 0; k < 64; ++k) {
    const uint32_t n = octave_bins(k, sub_bins);
    if (bin < first + n) return (uint64_t{1} << k) + (bin - first) * octave_width(k, sub_bins);
    first += n;
  }
  return ~uint64_t{0};
}

uint64_t pattern_bin_high(uint32_t bin, uint32_t sub_bins) {
  if (bin == 0) return 0;
  const uint64_t low = pattern_bin_low(bin, sub_bins);
  const unsigned k = 63 - static_cast<unsigned>(std::countl_zero(low));
  return low + octave_width(k, sub_bins) - 1;
}

ReusePatterns reuse_patterns(const ReuseDistanceHistogram& histogram, uint32_t sub_bins) {
  ReusePatterns result;
  result.accesses = static_cast<double>(histogram.accesses());
  if (result.accesses == 0) return result;
  result.cold_share = static_cast<double>(histogram.cold) / result.accesses;
  // The histogram's counts and distance sums on the pattern grid.
  std::vector<double> counts, sums;
  for (uint32_t b = 0; b < histogram.counts.size(); ++b) {
    if (histogram.counts[b] == 0) continue;
    const uint32_t c = pattern_bin(reuse_bin_low(b), sub_bins);
    if (counts.size() <= c) {
      counts.resize(c + 1, 0);
      sums.resize(c + 1, 0);
    }
    counts[c] += static_cast<double>(histogram.counts[b]);
    sums[c] += bin_mean(histogram, b) * static_cast<double>(histogram.counts[b]);
  }
  const uint32_t bins = static_cast<uint32_t>(counts.size());
  for (uint32_t b = 0; b < bins;) {
    if (counts[b] == 0) {
      ++b;
      continue;
    }
    uint32_t last = b;
    while (last + 1 < bins && counts[last + 1] > 0) ++last;
    for (const Segment& s : split_run(counts, b, last)) {
      ReusePattern p;
      p.min = static_cast<double>(pattern_bin_low(s.first, sub_bins));
      p.max = static_cast<double>(pattern_bin_high(s.last, sub_bins));
      double sum = 0;
      for (uint32_t i = s.first; i <= s.last; ++i) {
        p.count += counts[i];
        sum += sums[i];
      }
      p.mean = sum / p.count;
      p.frequency = p.count / result.accesses;
      result.patterns.push_back(p);
    }
    b = last + 1;
  }
  return result;
}

double pattern_overlap(const ReusePattern& a, const ReusePattern& b) {
  const double a_high = std::max(a.min, a.max) + 1, b_high = std::max(b.min, b.max) + 1;
  const double common = std::min(a_high, b_high) - std::max(a.min, b.min);
  if (common <= 0) return 0;
  const double longer = std::max(a_high - a.min, b_high - b.min);
  return std::clamp(common / longer, 0.0, 1.0);
}

bool patterns_match(const ReusePattern& a, const ReusePattern& b, double share) {
  const bool close_means = std::abs(a.mean - b.mean) <= (1 - share) * std::max(a.mean, b.mean);
  if (pattern_overlap(a, b) < share && !close_means) return false;
  const double high = std::max(a.frequency, b.frequency);
  return high == 0 || std::min(a.frequency, b.frequency) >= share * high;
}

bool pattern_lists_match(const std::vector<ReusePattern>& a, const std::vector<ReusePattern>& b,
                         double share) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!patterns_match(a[i], b[i], share)) return false;
  return true;
}

ReuseDistanceHistogram histogram_of_patterns(const std::vector<ReusePattern>& patterns,
                                             double cold) {
  std::vector<double> counts, sums;
  for (const ReusePattern& p : patterns) {
    if (p.count <= 0) continue;
    // (Clamped below 2^64, where a double converts to a distance.)
    const double low = std::clamp(p.min, 0.0, 1.8e19), high = std::clamp(p.max, low, 1.8e19) + 1;
    const uint32_t first = reuse_bin(static_cast<uint64_t>(low));
    const uint32_t last = reuse_bin(static_cast<uint64_t>(std::floor(high - 1)));
    if (counts.size() <= last) {
      counts.resize(last + 1, 0);
      sums.resize(last + 1, 0);
    }
    for (uint32_t b = first; b <= last; ++b) {
      const double from = std::max(low, static_cast<double>(reuse_bin_low(b)));
      const double to = std::min(high, static_cast<double>(reuse_bin_high(b)) + 1);
      if (to <= from) continue;
      const double share = p.count * (to - from) / (high - low);
      counts[b] += share;
      sums[b] += share * (from + to - 1) / 2;
    }
  }
  // Whole counts that add up to the rounded total: each bin its floor,
  // then one more to the bins with the largest remainders.
  ReuseDistanceHistogram h;
  double total = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    total += counts[b];
    h.counts.push_back(static_cast<uint64_t>(std::floor(counts[b])));
    h.distance_sums.push_back(sums[b]);
  }
  std::vector<size_t> order(counts.size());
  for (size_t b = 0; b < order.size(); ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return counts[x] - std::floor(counts[x]) > counts[y] - std::floor(counts[y]);
  });
  uint64_t whole = 0;
  for (uint64_t c : h.counts) whole += c;
  const auto wanted = static_cast<uint64_t>(std::llround(total));
  for (size_t i = 0; i < order.size() && whole < wanted; ++i, ++whole) ++h.counts[order[i]];
  while (!h.counts.empty() && h.counts.back() == 0) {
    h.counts.pop_back();
    h.distance_sums.pop_back();
  }
  h.cold = static_cast<uint64_t>(std::llround(std::max(0.0, cold)));
  return h;
}

double patterns_miss_ratio(const std::vector<ReusePattern>& patterns, double cold,
                           uint64_t granules) {
  double accesses = std::max(0.0, cold), misses = accesses;
  const double size = static_cast<double>(granules);
  for (const ReusePattern& p : patterns) {
    if (p.count <= 0) continue;
    accesses += p.count;
    const double low = std::max(0.0, p.min), high = std::max(low, p.max) + 1;
    misses += p.count * share_missed(low, high, size);
  }
  return accesses > 0 ? misses / accesses : 0;
}

}  // namespace weft
