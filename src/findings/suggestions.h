// The optimization suggestions a region's locality metrics lead to (data
// affinity, thread affinity), with the thresholds that decide them
// (rationale in docs/metrics.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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
// CRR balance above this (percent), or sqrt(homogeneity) / mean of the
// non-zero CRR entries at least this (coefficient of variation): the paper's
// signs of uneven reuse, given as evidence beside a thread-affinity grouping.
inline constexpr double kThreadAffinityMinBalance = 50.0;
inline constexpr double kThreadAffinityMinVariation = 1.0;
// Thread affinity needs at least this many communicating (writer, reader)
// pairs ...
inline constexpr size_t kThreadAffinityMinPairs = 2;
// ... and a grouping of the threads onto kCacheDomains equal cache domains
// whose cross-domain communication is at most this fraction of an even
// spread's (the mean over all groupings): a reduction of a third or more.
inline constexpr double kThreadAffinityMaxCrossFraction = 2.0 / 3.0;
inline constexpr size_t kCacheDomains = 2;
// A broadcast: one thread writes at least this fraction of the region's
// communication, read by two threads or more (data it initialised).
inline constexpr double kBroadcastMinWriterShare = 0.9;
// A gather, its mirror: one thread reads at least this fraction of the
// region's communication, written by two threads or more (results collected
// after a parallel phase). Neither gets thread-affinity advice.
inline constexpr double kGatherMinReaderShare = 0.9;
// A broadcast is reported when its true communications (granules that moved to a
// reader) are at least this many; a smaller one is no placement problem
// either, and is not reported at all.
inline constexpr uint64_t kBroadcastMinTransfers = 1024;
// Thread pairs named by a thread-affinity suggestion.
inline constexpr size_t kSuggestedPairs = 3;

enum class SuggestionKind { DataAffinity, ThreadAffinity, Broadcast };
// "data-affinity", "thread-affinity", "broadcast"
const char* suggestion_kind_name(SuggestionKind kind);

// The threads split onto two cache domains so that the least communication
// (raw + rar, both directions) crosses between them, and what an even spread
// would cross: the mean over all splits of the same sizes, sum over pairs of
// volume x 2 g1 g2 / (T (T - 1)). Exhaustive up to 16 threads, else a
// greedy swap search from the contiguous halves.
struct ThreadGrouping {
  std::vector<std::vector<uint32_t>> groups;  // each sorted; the group of thread 0 first
  double cross = 0.0;                         // volume between the groups
  double even_spread_cross = 0.0;
};
ThreadGrouping best_thread_grouping(const CommunicationMatrix& raw, const CommunicationMatrix& rar);

// Two threads and the communication between them, both directions (raw + rar).
struct ThreadPairVolume {
  uint32_t first = 0;
  uint32_t second = 0;
  uint64_t events = 0;
};

// The data object most of a region's communication reads (from the objects
// its reading instructions' sampled addresses fall in, weighted by the
// communication each instruction read).
struct ReadObject {
  std::string kind;  // "global" or "heap"
  std::string name;  // a global's name; empty for a heap block
  uint64_t bytes = 0;
  std::string allocated_at;    // heap: "file.c:LINE" of the allocating call; empty when unknown
  std::string allocated_code;  // its text in backquotes; empty when unknown
  std::string description;  // "'cdf' (global, 8 bytes)" / "heap block of N bytes allocated at ..."
  double share = 0.0;       // of the region's communication (raw + rar)
};

struct Suggestion {
  SuggestionKind kind = SuggestionKind::DataAffinity;
  std::string region;
  std::string file;  // as in the profile; empty when unknown
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::string location;                       // "file.c:12-20" (basename), "-" when unknown
  std::string evidence;                       // the numbers that triggered it
  std::vector<std::string> actions;           // "code: ...", "runtime: ..."
  std::vector<ThreadPairVolume> pairs;        // thread affinity: the pairs to place together
  std::vector<std::vector<uint32_t>> groups;  // thread affinity: the threads to place together
  // Data affinity: the source line that reads most of the region's
  // communication, and its text (the array it reads); empty when unknown.
  std::string reads_at;
  std::string reads_code;
  // Data affinity: the data object it reads mostly; none when the profile
  // does not say (recorded without the traces or falseshare analyses) or
  // no known object holds the sampled addresses.
  std::optional<ReadObject> reads_object;
  // Other regions with the same finding, merged into this one.
  std::vector<std::string> also_in;
  uint32_t broadcast_writer = 0;  // broadcast: the writing thread
};

// The suggestions of several regions, the same finding given once: the
// broadcasts from one writer, and the thread-affinity advice with one
// grouping, become the first such suggestion, naming the others in `also_in`.
std::vector<Suggestion> merge_same_findings(std::vector<Suggestion> suggestions);

// The suggestions for one region (or selection named after `region`) whose
// metrics are `metrics`; `regions` as for inside_omp_parallel.
std::vector<Suggestion> suggest(const RegionInfo& region, const LocalityMetrics& metrics,
                                const std::vector<RegionInfo>& regions);

// One paragraph: "kind REGION (LOCATION): EVIDENCE\n  - action\n ...".
std::string format_suggestion(const Suggestion& suggestion);

}  // namespace weft
