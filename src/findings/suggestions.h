// The optimization suggestions a region's locality metrics lead to (data
// affinity, thread affinity), with the thresholds that decide them
// (rationale in docs/metrics.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "findings/locality.h"
#include "profile/profile.h"

namespace weft {

// Data affinity: at least this fraction of the CRD events lies beyond the min
// cutoff (probable or certain capacity misses) ...
inline constexpr double kDataAffinityMinFractionBeyondMin = 0.10;
// ... or the median CRD is at least the min cutoff, with at least this many events.
inline constexpr uint64_t kDataAffinityMinEvents = 1;
// Thread affinity: balance above this (percent) ...
inline constexpr double kThreadAffinityMinBalance = 50.0;
// ... or sqrt(homogeneity) / mean of the non-zero CRR entries at least this
// (coefficient of variation) ...
inline constexpr double kThreadAffinityMinVariation = 1.0;
// ... and only with at least this many communicating (writer, reader) pairs.
inline constexpr size_t kThreadAffinityMinPairs = 2;
// Thread pairs named by a thread-affinity suggestion.
inline constexpr size_t kSuggestedPairs = 3;

enum class SuggestionKind { DataAffinity, ThreadAffinity };
const char* suggestion_kind_name(SuggestionKind kind);  // "data-affinity", "thread-affinity"

// Two threads and the communication between them, both directions (raw + rar).
struct ThreadPairVolume {
  uint32_t first = 0;
  uint32_t second = 0;
  uint64_t events = 0;
};

struct Suggestion {
  SuggestionKind kind = SuggestionKind::DataAffinity;
  std::string region;
  std::string file;  // as in the profile; empty when unknown
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::string location;                 // "file.c:12-20" (basename), "-" when unknown
  std::string evidence;                 // the numbers that triggered it
  std::vector<std::string> actions;     // "code: ...", "runtime: ..."
  std::vector<ThreadPairVolume> pairs;  // thread affinity: the pairs to place together
};

// The suggestions for one region (or selection named after `region`) whose
// metrics are `metrics`; `regions` as for inside_omp_parallel.
std::vector<Suggestion> suggest(const RegionInfo& region, const LocalityMetrics& metrics,
                                const std::vector<RegionInfo>& regions);

// One paragraph: "kind REGION (LOCATION): EVIDENCE\n  - action\n ...".
std::string format_suggestion(const Suggestion& suggestion);

}  // namespace weft
