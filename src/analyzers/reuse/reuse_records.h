// What the reuse-distance analysis hands from the capture to the profile
// builder: its counts per (instruction, thread, locality, bin)
// (docs/metrics.md, "Reuse distance").
#pragma once

#include <cstdint>

#include "common/run_capture.h"

namespace weft {

// The bin of first accesses (cold: no earlier access to the granule).
inline constexpr uint16_t kReuseColdBin = 0x7fff;

// `count` accesses of `thread` at `pc` to granules of `locality`
// (ReuseLocality) had a reuse distance in `bin` (common/reuse_histogram.h;
// kReuseColdBin: a first access), the sum of their distances
// `distance_sum` (sampled: both weighted by the sampling rate).
struct ReuseBinRecord {
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint16_t bin = 0;
  uint8_t locality = 0;
  uint8_t reserved = 0;
  uint64_t count = 0;
  double distance_sum = 0;
};

inline constexpr RecordSection<ReuseBinRecord> kReuseBins{
    analysis_section_tag(AnalysisId::Reuse, 1)};

}  // namespace weft
