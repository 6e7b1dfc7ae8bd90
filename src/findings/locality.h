// Locality metrics of a selection of regions: the CRR matrix with its
// homogeneity and balance, the communication reuse distance (CRD) histogram
// with its median and cache cutoffs. Every finding that holds one of these
// numbers (crd, comm --kind crr, report, diff) takes it from here;
// definitions in docs/metrics.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/crd/crd_tables.h"
#include "findings/cache_model.h"
#include "profile/profile.h"

namespace weft {

// ---------------------------------------------------------------------------
// CRR, homogeneity, balance (pure functions of the matrices).

using CrrMatrix = std::vector<std::vector<double>>;

// rar / raw, 0 when raw is 0.
double crr_ratio(uint64_t rar, uint64_t raw);
// The CRR of a selection (docs/metrics.md, "CRR"): element-wise
// crr_ratio(rar[i][j], raw[i][j] + borrowed[i][j]), where borrowed counts
// the communication epochs the selection re-read whose true communication
// was read elsewhere (crr_borrowed; empty for none: the whole program, or a
// profile that cannot tell). All matrices T x T.
CrrMatrix crr_matrix(const CommunicationMatrix& raw, const CommunicationMatrix& rar,
                     const CommunicationMatrix& borrowed = {});
// raw + borrowed, element-wise: the true communications of the data the
// selection read, wherever they were read (CRR's denominator).
CommunicationMatrix crr_denominator(const CommunicationMatrix& raw,
                                    const CommunicationMatrix& borrowed);
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

// In units of `unit_bytes` (a granule or a word). max = cache bytes / unit;
// min = max(max - private footprint of the selection, max / 2), the
// footprint given in bytes.
struct CrdCutoffs {
  uint64_t min = 0;
  uint64_t max = 0;
};
CrdCutoffs crd_cutoffs(uint64_t cache_bytes, uint64_t unit_bytes, uint64_t private_bytes);

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

// The histogram from its first to its last non-empty bin, the empty bins
// between them included (count 0): the rows of its bar chart.
std::vector<CrdBin> contiguous_bins(const std::vector<CrdBin>& histogram);

// ---------------------------------------------------------------------------
// Everything about one selection.

struct LocalityInputs {
  CommunicationMatrix raw;
  CommunicationMatrix rar;
  // Epochs re-read here whose true communication was read elsewhere
  // (crr_borrowed); empty when the profile cannot tell (CRR is then rar / raw).
  CommunicationMatrix borrowed;
  std::vector<DistanceCount> distances;       // of granules
  std::vector<DistanceCount> word_distances;  // of words, scaled (crd_word_distances)
  std::vector<PairCount> unmeasured;
  Footprint footprint;
  uint64_t granularity = 0;  // bytes per granule
  bool crd_recorded = false;
};

struct LocalityMetrics {
  CommunicationMatrix raw;
  CommunicationMatrix rar;
  CommunicationMatrix borrowed;  // T x T; all 0 when the profile cannot tell
  bool borrowed_known = false;   // the profile has crr_epochs (and crd ran)
  CrrMatrix crr;                 // crr_matrix(raw, rar, borrowed)
  uint64_t raw_total = 0;
  uint64_t rar_total = 0;
  double homogeneity = 0;
  double balance = 0;
  size_t communicating_pairs = 0;  // ordered pairs with raw + rar > 0

  bool crd_recorded = false;  // the profile measured CRD at all
  // Every event in granules, as recorded: the histogram, the fractions
  // against the cache (which holds granules) and the pairs.
  CrdSummary crd;
  CrdCutoffs cutoffs;  // in granules
  // The line visits: the events that do not re-read the granule the pair
  // read just before (distance > 0; docs/metrics.md, "Median CRD of line
  // visits"). The median weft reports, and the pairs' medians, are theirs.
  CrdSummary visits;
  // The same events on each pair's sampled trace of 8-byte words, scaled
  // (an estimate, shown beside the rest), when the granule is larger.
  CrdSummary words;
  CrdCutoffs word_cutoffs;
  uint64_t unmeasured = 0;  // events of capped pairs, without a distance
  Footprint footprint;
  uint64_t granularity = 0;
  CacheModel cache;

  bool has_words() const { return granularity > kWordBytes; }
  std::optional<uint64_t> median() const { return visits.median; }
  // The events whose granule is the one the pair read just before (distance 0).
  uint64_t granule_repeats() const {
    return crd.histogram.empty() || crd.histogram[0].index != 0 ? 0 : crd.histogram[0].count;
  }
};

LocalityMetrics compute_locality(const LocalityInputs& inputs, const CacheModel& cache);

// Pooled over `region_ids` (empty = the whole program). The cache may be
// CacheSource::None for a profile without CRD (cutoffs are then 0).
LocalityMetrics compute_locality(const Profile& profile, const std::vector<int64_t>& region_ids,
                                 const CacheModel& cache);

// ---------------------------------------------------------------------------
// Regions

// "file.c:12-20", "file.c:12" (one line), "file.c", or "-".
std::string region_location(const RegionInfo& region);
// "file.c:12" (the first line only), "file.c", or "-".
std::string region_start_location(const RegionInfo& region);

// True when `region` is an omp_parallel region or nested in one (`regions`:
// the profile's regions, to follow parent_id), or a section that starts
// within the lines of an omp_parallel region of the same file.
bool inside_omp_parallel(const RegionInfo& region, const std::vector<RegionInfo>& regions);

// FindingError "PATH was recorded without the crd analysis ..." unless it has CRD.
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

}  // namespace weft
