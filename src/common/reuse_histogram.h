// Reuse-distance histograms (docs/metrics.md, "Reuse distance"): the bins
// every part of weft uses for them, and the histogram of one (instruction,
// thread, locality) as the findings read it.
//
// A distance is the LRU stack distance in granules: the number of distinct
// granules the thread touched between two accesses to one granule (0: the
// same granule again, with nothing in between). Bins: distances 0..7 each
// have their own; from 8 on, each power of two [2^k, 2^(k+1)) is split into
// 8 equal sub-bins of width 2^(k-3). So a bin's width is at most 1/8 of its
// distances, and a histogram over 48-bit distances has at most 360 bins.
//
// Header-only and allocation-free in its bin functions: the analyzer's hot
// path computes the bin of every access.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace weft {

inline constexpr unsigned kReuseSubBinsLog2 = 3;
inline constexpr uint32_t kReuseSubBins = 1u << kReuseSubBinsLog2;
// Enough bins for any 64-bit distance.
inline constexpr uint32_t kReuseBinCount = kReuseSubBins * (64 - kReuseSubBinsLog2 + 1);

// The bin of `distance`.
constexpr uint32_t reuse_bin(uint64_t distance) {
  if (distance < kReuseSubBins) return static_cast<uint32_t>(distance);
  const unsigned k = 63 - static_cast<unsigned>(std::countl_zero(distance));  // >= 3
  const uint32_t sub =
      static_cast<uint32_t>(distance >> (k - kReuseSubBinsLog2)) & (kReuseSubBins - 1);
  return kReuseSubBins * (k - kReuseSubBinsLog2 + 1) + sub;
}

// The smallest distance in `bin`.
constexpr uint64_t reuse_bin_low(uint32_t bin) {
  if (bin < kReuseSubBins) return bin;
  const unsigned k = bin / kReuseSubBins + kReuseSubBinsLog2 - 1;
  const uint64_t sub = bin % kReuseSubBins;
  return (kReuseSubBins + sub) << (k - kReuseSubBinsLog2);
}

// The largest distance in `bin`.
constexpr uint64_t reuse_bin_high(uint32_t bin) {
  if (bin < kReuseSubBins) return bin;
  const unsigned k = bin / kReuseSubBins + kReuseSubBinsLog2 - 1;
  return reuse_bin_low(bin) + (uint64_t{1} << (k - kReuseSubBinsLog2)) - 1;
}

static_assert(reuse_bin(7) == 7 && reuse_bin(8) == 8 && reuse_bin(15) == 15);
static_assert(reuse_bin(16) == 16 && reuse_bin(17) == 16 && reuse_bin(18) == 17);
static_assert(reuse_bin_low(reuse_bin(1000)) <= 1000 && reuse_bin_high(reuse_bin(1000)) >= 1000);
static_assert(reuse_bin(~uint64_t{0}) == kReuseBinCount - 1);

// The share of accesses spread evenly over the distances [low, high) that
// a fully associative LRU cache of `granules` granules misses (those at
// `granules` and beyond): the rule of every miss ratio weft derives from a
// histogram or from its patterns.
inline double share_missed(double low, double high, double granules) {
  return std::clamp((high - std::max(low, granules)) / (high - low), 0.0, 1.0);
}

// Whether an access's granule belongs to the accessing thread (docs/metrics.md,
// "Granule owner": the thread that touched it first, or the owner a declared
// distribution gives it).
enum class ReuseLocality : uint8_t { Local = 0, Remote = 1 };

// The reuse distances of one (instruction, thread, locality): `counts[b]`
// accesses with a distance in bin b (sampled runs: weighted, so they stand
// for every access), `distance_sums[b]` their distances' sum (the bin's mean
// is the sum over the count), `cold` first accesses to a granule (an
// infinite distance). Both vectors have one entry per bin up to the last
// non-empty one.
struct ReuseDistanceHistogram {
  std::vector<uint64_t> counts;
  std::vector<double> distance_sums;
  uint64_t cold = 0;

  uint64_t reuses() const {
    uint64_t n = 0;
    for (uint64_t c : counts) n += c;
    return n;
  }
  uint64_t accesses() const { return reuses() + cold; }
  // The share of accesses a fully associative LRU cache of `granules`
  // granules misses: distances >= granules, and the cold ones.
  double miss_ratio(uint64_t granules) const {
    const uint64_t total = accesses();
    if (total == 0) return 0;
    double misses = static_cast<double>(cold);
    for (uint32_t b = 0; b < counts.size(); ++b)
      misses +=
          static_cast<double>(counts[b]) * share_missed(static_cast<double>(reuse_bin_low(b)),
                                                        static_cast<double>(reuse_bin_high(b)) + 1,
                                                        static_cast<double>(granules));
    return misses / static_cast<double>(total);
  }
};

}  // namespace weft
