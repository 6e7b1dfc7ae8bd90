// Reuse patterns (docs/metrics.md, "Reuse patterns"): the runs of bins
// around a peak of one reuse-distance histogram, as Fang et al. (PACT 2005)
// form them and the remote reuse prediction (docs/prediction.md) uses them;
// the overlap of two patterns and when two patterns match.
#pragma once

#include <cstdint>
#include <vector>

#include "common/reuse_histogram.h"

namespace weft {

// A valley splits two peaks only when it holds at most this share of the
// lower of the two peaks (a shallower dip is noise inside one pattern).
inline constexpr double kReuseValleyDepth = 0.5;

// One pattern: the distances of a run of bins. `min` is the smallest
// distance of its first bin, `max` the largest of its last bin, `mean` the
// mean distance of its accesses (from the bins' distance sums), `count` its
// accesses and `frequency` their share of all the histogram's accesses
// (cold ones included). Predicted patterns carry fractional values.
struct ReusePattern {
  double min = 0;
  double max = 0;
  double mean = 0;
  double frequency = 0;
  double count = 0;
};

// A histogram's patterns, by distance, with its cold (first-touch,
// infinite-distance) accesses, which form no pattern.
struct ReusePatterns {
  std::vector<ReusePattern> patterns;
  double accesses = 0;    // every access: the patterns' counts and the cold ones
  double cold_share = 0;  // cold / accesses (0 without accesses)
};

// The resolution patterns are formed at: `sub_bins` (1, 2, 4 or 8) equal
// bins per power of two [2^k, 2^(k+1)), each at least one distance wide;
// distance 0 has a bin of its own. 8 is the histogram's own bins (every
// bin of the histogram lies inside one bin of a coarser grid).
inline constexpr uint32_t kHistogramSubBins = 8;
uint32_t pattern_bin(uint64_t distance, uint32_t sub_bins);
uint64_t pattern_bin_low(uint32_t bin, uint32_t sub_bins);
uint64_t pattern_bin_high(uint32_t bin, uint32_t sub_bins);

// The patterns of `histogram` on the grid of `sub_bins` per power of two.
ReusePatterns reuse_patterns(const ReuseDistanceHistogram& histogram,
                             uint32_t sub_bins = kHistogramSubBins);

// How much the distance ranges of two patterns overlap, from 0 to 1:
// each distance d stands for the unit interval [d, d+1), so a pattern
// covers [min, max+1); the overlap is the length of the intersection over
// the longer of the two lengths (the paper's formula, made symmetric).
double pattern_overlap(const ReusePattern& a, const ReusePattern& b);

// Two patterns match by `share` when they overlap by at least `share` (or
// their means differ by at most 1 - `share` of the larger: the same
// distances on either side of a bin boundary) and the smaller frequency is
// at least `share` of the larger.
bool patterns_match(const ReusePattern& a, const ReusePattern& b, double share);

// Two pattern lists match by `share`: as many patterns, and each matches
// the one of the same rank by `share`.
bool pattern_lists_match(const std::vector<ReusePattern>& a, const std::vector<ReusePattern>& b,
                         double share);

// The histogram whose patterns are `patterns` (counts spread evenly over the
// distances from each pattern's min to its max) with `cold` cold accesses;
// whole counts that add up to the patterns' rounded total.
ReuseDistanceHistogram histogram_of_patterns(const std::vector<ReusePattern>& patterns,
                                             double cold);

// The share of the accesses of `patterns` and `cold` cold ones that a fully
// associative LRU cache of `granules` granules misses: the cold ones, and
// each pattern's accesses at distances >= granules, its accesses spread
// evenly over [min, max + 1). (ReuseDistanceHistogram::miss_ratio on the
// histogram_of_patterns, without its rounding to whole counts.)
double patterns_miss_ratio(const std::vector<ReusePattern>& patterns, double cold,
                           uint64_t granules);

}  // namespace weft
