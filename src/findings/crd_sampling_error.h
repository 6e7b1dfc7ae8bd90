// How far one profile's CRD histograms are from another's: meant for a
// profile with sampled CRD (`weft record`'s default) against one of the same
// run with exact CRD (`weft record --exact`), as bench/run.sh prints it
// (bench/README.md, "Sampled-vs-exact CRD error"). The histograms are the
// line (granule) ones, as the views show them (compute_locality), in weft's
// power-of-two bins (docs/metrics.md, "CRD").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/locality.h"
#include "profile/profile.h"

namespace weft {

struct CrdHistogramError {
  // Events with a distance on each side.
  uint64_t events = 0;
  uint64_t reference_events = 0;
  // Largest difference over the bins of the share of the events in the
  // bin, in percentage points (0..100): the histogram `weft crd` prints
  // (every line event). 0 when both are empty; 100 x the fullest bin's
  // share when one side is empty.
  double max_bin_error_pp = 0;
  unsigned worst_bin = 0;
  // bin(median) - bin(reference median), of the median weft reports (the
  // line visits'); nullopt when either side has no visit.
  std::optional<int> median_bin_difference;
};

// The two histograms compared (pure; used by crd_sampling_error).
CrdHistogramError compare_crd(const LocalityMetrics& metrics, const LocalityMetrics& reference);

struct RegionCrdError {
  std::string kind;
  std::string name;
  CrdHistogramError error;
};

struct CrdSamplingError {
  CrdHistogramError program;  // the whole program, pooled
  // Every code or section region with CRD events on either side, matched by
  // kind and name, in the reference's region order (then the others').
  std::vector<RegionCrdError> regions;
  // The region with the largest max_bin_error_pp, and the one with the
  // largest |median_bin_difference| (first of equals); nullopt without regions
  // (or, for the median, without a region whose two medians exist).
  std::optional<size_t> worst_mass_region;
  std::optional<size_t> worst_median_region;
};

// `profile` against `reference`; both must have been recorded with crd
// (FindingError otherwise). The regions are matched by kind and name, so
// the two should be runs of the same binary.
CrdSamplingError crd_sampling_error(const Profile& profile, const Profile& reference);

}  // namespace weft
