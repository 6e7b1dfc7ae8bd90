// How the communication locality of each region changes between two
// profiles of the same program (another input size or thread count).
// Regions are matched by name; only scalars are compared, since the thread
// counts, and so the matrices, may differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/cache_model.h"
#include "findings/locality.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

// A region "scales badly" when its median CRD grows (B > A) and
// (median_B + 1) / (median_A + 1) > kScalingSlack x events_B / events_A, or
// when its median crosses the min cutoff (A below, B at or above it).
inline constexpr double kScalingSlack = 1.10;

struct DiffOptions {
  CacheOptions cache = {};  // applied to both profiles
};

// One profile's view of a region.
struct DiffSide {
  RegionInfo region;
  LocalityMetrics metrics;
};

struct RegionDiff {
  RegionInfo region;  // as B names it, else as A does
  std::optional<DiffSide> a;
  std::optional<DiffSide> b;
  std::optional<double> events_ratio;  // events B / events A, when A has events
  std::optional<double> median_ratio;  // (median B + 1) / (median A + 1), when both have one
  std::optional<double> bin_shift;     // mean log2 bin B - A, when both have events
  bool scales_badly = false;
  std::vector<std::string> reasons;
};

// One of the two profiles.
struct DiffProfile {
  ProfileFacts facts;
  std::optional<uint64_t> granularity;  // meta granularity, when it reads as a number
  CacheModel cache;
};

struct DiffFindings {
  DiffProfile a;
  DiffProfile b;
  std::vector<RegionDiff> both;    // ranked, worst first
  std::vector<RegionDiff> only_a;  // by events descending
  std::vector<RegionDiff> only_b;
};

// Throws FindingError for a profile without CRD or a bad cache option.
DiffFindings find_diff(const Profile& a, const Profile& b, const DiffOptions& options);

}  // namespace weft
