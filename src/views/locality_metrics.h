// Locality metrics of a selection of regions: the CRR matrix with its
// homogeneity and balance, the communication reuse distance (CRD) histogram
// with its median and cache cutoffs, and the optimization suggestions they
// lead to. Every view that shows one of these numbers (crd, comm --kind crr,
// report, diff) takes it from here; definitions in docs/metrics.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace weft {

// ---------------------------------------------------------------------------
// Cache model: the cache the cutoffs are measured against.

enum class CacheSource {
  None,         // no cache resolved (a profile without CRD needs none)
  CacheSize,    // --cache-size BYTES
  Topology,     // --topology XML: its last-level cache
  Profile,      // meta llc_bytes: the recording machine's last-level cache
  ThisMachine,  // the last-level cache of the machine running the view
};
// "none", "cache-size", "topology", "profile", "machine"
const char* cache_source_name(CacheSource source);

struct CacheOptions {
  std::optional<std::string> cache_size = std::nullopt;  // --cache-size: "1048576", "32M", "512KiB"
  std::optional<std::string> topology = std::nullopt;    // path of an hwloc XML file
};

struct CacheModel {
  uint64_t bytes = 0;
  CacheSource source = CacheSource::None;
};

// --cache-size if given, else --topology's last-level cache, else the
// profile's meta llc_bytes, else this machine's last-level cache. Throws
// ViewError (one line) for a bad --cache-size, an unreadable topology, or a
// cache of zero / unknown size.
CacheModel resolve_cache(const Profile& profile, const CacheOptions& options);

// ---------------------------------------------------------------------------
// CRR, homogeneity, balance (pure functions of the matrices).

using CrrMatrix = std::vector<std::vector<double>>;

// rar / raw, 0 when raw is 0.
double crr_ratio(uint64_t rar, uint64_t raw);
// Element-wise crr_ratio(rar[i][j], raw[i][j]); both matrices T x T.
CrrMatrix crr_matrix(const CommunicationMatrix& raw, const CommunicationMatrix& rar);
// Mean over rows of the population variance of the row (all T entries,
// the zero diagonal included); 0 for an empty matrix.
double homogeneity(const CrrMatrix& crr);
// (max row sum / mean row sum - 1) x 100; 0 when every row sum is 0.
double balance(const CrrMatrix& crr);

// ---------------------------------------------------------------------------
// CRD histogram (pure functions of the distance counts).

// Power-of-two bins: bin 0 = [0,0], bin k >= 1 = [2^(k-1), 2^k - 1].
unsigned crd_bin(uint64_t distance);
uint64_t crd_bin_lo(unsigned bin);
uint64_t crd_bin_hi(unsigned bin);

// The smallest d such that at least half of the events have distance <= d
// (the lower median); nullopt when there are no events.
std::optional<uint64_t> lower_median(const std::map<uint64_t, uint64_t>& count_by_distance);

// In granules. max = cache bytes / granularity; min = max(0, max - private
// footprint of the selection).
struct CrdCutoffs {
  uint64_t min = 0;
  uint64_t max = 0;
};
CrdCutoffs crd_cutoffs(uint64_t cache_bytes, uint64_t granularity, uint64_t private_granules);

struct CrdBin {
  unsigned index = 0;
  uint64_t lo = 0;
  uint64_t hi = 0;
  uint64_t count = 0;
};

struct CrdPairSummary {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t events = 0;
  uint64_t median = 0;  // lower median of the pair's distances
};

struct CrdSummary {
  std::vector<CrdBin> histogram;  // non-empty bins, ascending
  uint64_t events = 0;            // events with a distance
  std::optional<uint64_t> median;
  double mean_log2_bin = 0;           // mean bin index over the events; 0 when none
  std::vector<CrdPairSummary> pairs;  // pairs with events, by events descending
  // Fractions of `events` (all 0 when there are none): d < min,
  // min <= d <= max, d > max.
  double fraction_below_min = 0;
  double fraction_between = 0;
  double fraction_above_max = 0;

  double fraction_beyond_min() const { return fraction_between + fraction_above_max; }
};

// `distances` as Profile::crd_distances returns them (any order).
CrdSummary summarize_crd(const std::vector<DistanceCount>& distances, const CrdCutoffs& cutoffs);

// ---------------------------------------------------------------------------
// Everything about one selection.

struct LocalityInputs {
  CommunicationMatrix raw;
  CommunicationMatrix rar;
  std::vector<DistanceCount> distances;
  std::vector<PairCount> unmeasured;
  Footprint footprint;
  uint64_t granularity = 0;  // bytes per granule
  bool crd_recorded = false;
};

struct LocalityMetrics {
  CommunicationMatrix raw;
  CommunicationMatrix rar;
  CrrMatrix crr;
  uint64_t raw_total = 0;
  uint64_t rar_total = 0;
  double homogeneity = 0;
  double balance = 0;
  size_t communicating_pairs = 0;  // ordered pairs with raw + rar > 0

  bool crd_recorded = false;  // the profile measured CRD at all
  CrdSummary crd;
  uint64_t unmeasured = 0;  // events of capped pairs, without a distance
  Footprint footprint;
  uint64_t granularity = 0;
  CacheModel cache;
  CrdCutoffs cutoffs;
};

LocalityMetrics compute_locality(const LocalityInputs& inputs, const CacheModel& cache);

// Pooled over `region_ids` (empty = the whole program). The cache may be
// CacheSource::None for a profile without CRD (cutoffs are then 0).
LocalityMetrics compute_locality(const Profile& profile, const std::vector<int64_t>& region_ids,
                                 const CacheModel& cache);

// ---------------------------------------------------------------------------
// Suggestions (the paper's Table 1).

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

// "file.c:12-20", "file.c:12" (one line), "file.c", or "-".
std::string region_location(const RegionInfo& region);

// True when `region` is an omp_parallel region or nested in one (`regions`:
// the profile's regions, to follow parent_id), or a section that starts
// within the lines of an omp_parallel region of the same file.
bool inside_omp_parallel(const RegionInfo& region, const std::vector<RegionInfo>& regions);

// The suggestions for one region (or selection named after `region`) whose
// metrics are `metrics`; `regions` as for inside_omp_parallel.
std::vector<Suggestion> suggest(const RegionInfo& region, const LocalityMetrics& metrics,
                                const std::vector<RegionInfo>& regions);

// One paragraph: "kind REGION (LOCATION): EVIDENCE\n  - action\n ...".
std::string format_suggestion(const Suggestion& suggestion);

// ---------------------------------------------------------------------------
// Helpers shared by the locality views.

// ViewError "PATH was recorded without the crd analysis ..." unless it has CRD.
void require_crd(const Profile& profile);

// The regions --region NAME selects (Profile::select_regions), and a region
// standing for the whole selection: named NAME, with the kind, file and lines
// of the region named NAME, else of the function region of that name, else
// kind "selection" and the lines the selected regions span in one file.
struct RegionSelection {
  RegionInfo head;
  std::vector<RegionInfo> regions;
  std::vector<int64_t> ids() const;
};
RegionSelection select_named(const Profile& profile, const std::string& name);

// The bytes of a cache, for text: "32 MiB", "48 KiB", "1000 B".
std::string human_bytes(uint64_t bytes);

}  // namespace weft
