#include "findings/locality.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>

#include "analyzers/crd/crd_tables.h"
#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "profile/region_naming.h"

namespace weft {

// ---------------------------------------------------------------------------
// CRR, homogeneity, balance

double crr_ratio(uint64_t rar, uint64_t raw) {
  return raw == 0 ? 0.0 : static_cast<double>(rar) / static_cast<double>(raw);
}

namespace {

uint64_t entry(const CommunicationMatrix& m, size_t writer, size_t reader) {
  return writer < m.size() && reader < m[writer].size() ? m[writer][reader] : 0;
}

}  // namespace

CommunicationMatrix crr_denominator(const CommunicationMatrix& raw,
                                    const CommunicationMatrix& borrowed) {
  CommunicationMatrix sum = raw;
  for (size_t writer = 0; writer < sum.size(); ++writer)
    for (size_t reader = 0; reader < sum[writer].size(); ++reader)
      sum[writer][reader] += entry(borrowed, writer, reader);
  return sum;
}

CrrMatrix crr_matrix(const CommunicationMatrix& raw, const CommunicationMatrix& rar,
                     const CommunicationMatrix& borrowed) {
  const CommunicationMatrix denominator = crr_denominator(raw, borrowed);
  CrrMatrix crr(raw.size(), std::vector<double>(raw.size(), 0.0));
  for (size_t writer = 0; writer < raw.size(); ++writer)
    for (size_t reader = 0; reader < raw.size(); ++reader)
      crr[writer][reader] =
          crr_ratio(entry(rar, writer, reader), entry(denominator, writer, reader));
  return crr;
}

double homogeneity(const CrrMatrix& crr) {
  const size_t threads = crr.size();
  if (threads == 0) return 0.0;
  double sum_of_variances = 0.0;
  for (const std::vector<double>& row : crr) {
    double mean = 0.0;
    for (double value : row) mean += value;
    mean /= static_cast<double>(threads);
    double variance = 0.0;
    for (double value : row) variance += (value - mean) * (value - mean);
    sum_of_variances += variance / static_cast<double>(threads);
  }
  return sum_of_variances / static_cast<double>(threads);
}

double balance(const CrrMatrix& crr) {
  if (crr.empty()) return 0.0;
  double largest = 0.0, total = 0.0;
  for (const std::vector<double>& row : crr) {
    double sum = 0.0;
    for (double value : row) sum += value;
    largest = std::max(largest, sum);
    total += sum;
  }
  if (total == 0.0) return 0.0;
  const double mean = total / static_cast<double>(crr.size());
  return (largest / mean - 1.0) * 100.0;
}

// ---------------------------------------------------------------------------
// CRD histogram

unsigned crd_bin(uint64_t distance) { return static_cast<unsigned>(std::bit_width(distance)); }

uint64_t crd_bin_lo(unsigned bin) { return bin == 0 ? 0 : uint64_t{1} << (bin - 1); }

uint64_t crd_bin_hi(unsigned bin) {
  if (bin == 0) return 0;
  if (bin >= 64) return std::numeric_limits<uint64_t>::max();
  return (uint64_t{1} << bin) - 1;
}

std::optional<uint64_t> lower_median(const std::map<uint64_t, uint64_t>& count_by_distance) {
  uint64_t events = 0;
  for (const auto& [distance, count] : count_by_distance) events += count;
  if (events == 0) return std::nullopt;
  // Smallest d with 2 * cumulative(d) >= events (no rounding, no overflow
  // below 2^63 events).
  uint64_t cumulative = 0;
  for (const auto& [distance, count] : count_by_distance) {
    cumulative += count;
    if (cumulative >= events - cumulative) return distance;
  }
  return count_by_distance.rbegin()->first;
}

CrdCutoffs crd_cutoffs(uint64_t cache_bytes, uint64_t unit_bytes, uint64_t private_bytes) {
  CrdCutoffs cutoffs;
  if (unit_bytes == 0) return cutoffs;
  cutoffs.max = cache_bytes / unit_bytes;
  const uint64_t private_granules = private_bytes / unit_bytes;
  // Private data beyond half the cache is taken to share it evenly with the
  // communicated data, not to take all of it: the min cutoff never falls
  // below half the max (docs/metrics.md).
  cutoffs.min = std::max(cutoffs.max > private_granules ? cutoffs.max - private_granules : 0,
                         cutoffs.max / 2);
  return cutoffs;
}

CrdSummary summarize_crd(const std::vector<DistanceCount>& distances, const CrdCutoffs& cutoffs) {
  CrdSummary summary;
  std::map<uint64_t, uint64_t> all;
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint64_t, uint64_t>> by_pair;
  std::map<unsigned, uint64_t> bins;
  uint64_t below = 0, between = 0, above = 0;
  double bin_sum = 0.0;
  for (const DistanceCount& d : distances) {
    if (d.count == 0) continue;
    all[d.distance] += d.count;
    by_pair[{d.writer, d.reader}][d.distance] += d.count;
    const unsigned bin = crd_bin(d.distance);
    bins[bin] += d.count;
    bin_sum += static_cast<double>(bin) * static_cast<double>(d.count);
    summary.events += d.count;
    if (d.distance < cutoffs.min) {
      below += d.count;
    } else if (d.distance <= cutoffs.max) {
      between += d.count;
    } else {
      above += d.count;
    }
  }
  for (const auto& [bin, count] : bins)
    summary.histogram.push_back({bin, crd_bin_lo(bin), crd_bin_hi(bin), count});
  summary.median = lower_median(all);
  for (const auto& [pair, counts] : by_pair) {
    uint64_t events = 0;
    for (const auto& entry : counts) events += entry.second;
    summary.pairs.push_back({pair.first, pair.second, events, lower_median(counts).value_or(0)});
  }
  std::stable_sort(
      summary.pairs.begin(), summary.pairs.end(),
      [](const CrdPairSummary& a, const CrdPairSummary& b) { return a.events > b.events; });
  if (summary.events > 0) {
    const double events = static_cast<double>(summary.events);
    summary.fraction_below_min = static_cast<double>(below) / events;
    summary.fraction_between = static_cast<double>(between) / events;
    summary.fraction_above_max = static_cast<double>(above) / events;
    summary.mean_log2_bin = bin_sum / events;
  }
  return summary;
}

std::vector<CrdBin> contiguous_bins(const std::vector<CrdBin>& histogram) {
  std::vector<CrdBin> rows;
  if (histogram.empty()) return rows;
  for (unsigned bin = histogram.front().index; bin <= histogram.back().index; ++bin) {
    auto it = std::find_if(histogram.begin(), histogram.end(),
                           [bin](const CrdBin& b) { return b.index == bin; });
    rows.push_back(it != histogram.end() ? *it : CrdBin{bin, crd_bin_lo(bin), crd_bin_hi(bin), 0});
  }
  return rows;
}

// ---------------------------------------------------------------------------
// One selection

LocalityMetrics compute_locality(const LocalityInputs& inputs, const CacheModel& cache) {
  LocalityMetrics metrics;
  metrics.raw = inputs.raw;
  metrics.rar = inputs.rar;
  metrics.borrowed_known = !inputs.borrowed.empty();
  metrics.borrowed =
      metrics.borrowed_known
          ? inputs.borrowed
          : CommunicationMatrix(inputs.raw.size(), std::vector<uint64_t>(inputs.raw.size(), 0));
  metrics.crr = crr_matrix(inputs.raw, inputs.rar, inputs.borrowed);
  metrics.homogeneity = homogeneity(metrics.crr);
  metrics.balance = balance(metrics.crr);
  for (size_t writer = 0; writer < inputs.raw.size(); ++writer) {
    for (size_t reader = 0; reader < inputs.raw.size(); ++reader) {
      const uint64_t raw = inputs.raw[writer][reader];
      const uint64_t rar = reader < inputs.rar[writer].size() ? inputs.rar[writer][reader] : 0;
      metrics.raw_total += raw;
      metrics.rar_total += rar;
      if (raw + rar > 0) ++metrics.communicating_pairs;
    }
  }
  metrics.crd_recorded = inputs.crd_recorded;
  metrics.footprint = inputs.footprint;
  metrics.granularity = inputs.granularity;
  metrics.cache = cache;
  const uint64_t private_bytes = inputs.footprint.private_granules * inputs.granularity;
  metrics.cutoffs = crd_cutoffs(cache.bytes, inputs.granularity, private_bytes);
  metrics.crd = summarize_crd(inputs.distances, metrics.cutoffs);
  std::vector<DistanceCount> visits;
  for (const DistanceCount& d : inputs.distances)
    if (d.distance > 0) visits.push_back(d);
  metrics.visits = summarize_crd(visits, metrics.cutoffs);
  if (metrics.has_words()) {
    metrics.word_cutoffs = crd_cutoffs(cache.bytes, kWordBytes, private_bytes);
    metrics.words = summarize_crd(inputs.word_distances, metrics.word_cutoffs);
  }
  for (const PairCount& pair : inputs.unmeasured) metrics.unmeasured += pair.count;
  return metrics;
}

LocalityMetrics compute_locality(const Profile& profile, const std::vector<int64_t>& region_ids,
                                 const CacheModel& cache) {
  LocalityInputs inputs;
  inputs.raw = profile.matrix(region_ids, MatrixKind::Raw);
  inputs.rar = profile.matrix(region_ids, MatrixKind::Rar);
  inputs.borrowed = crr_borrowed(profile, region_ids).value_or(CommunicationMatrix{});
  inputs.granularity = profile.meta_unsigned("granularity").value_or(0);
  inputs.crd_recorded = profile.has_analysis(AnalysisId::Crd);
  if (inputs.crd_recorded) {
    inputs.distances = crd_distances(profile, region_ids);
    inputs.word_distances = crd_word_distances(profile, region_ids, inputs.granularity);
    inputs.unmeasured = crd_unmeasured(profile, region_ids);
    inputs.footprint = footprint(profile, region_ids);
  }
  return compute_locality(inputs, cache);
}

// ---------------------------------------------------------------------------
// Regions

std::string region_location(const RegionInfo& region) {
  if (region.file.empty()) return "-";
  std::string location(path_basename(region.file));
  if (region.first_line == 0) return location;
  if (region.last_line > region.first_line)
    return fmt::format("{}:{}-{}", location, region.first_line, region.last_line);
  return fmt::format("{}:{}", location, region.first_line);
}

std::string region_start_location(const RegionInfo& region) {
  if (region.file.empty()) return "-";
  std::string location(path_basename(region.file));
  if (region.first_line != 0) location += fmt::format(":{}", region.first_line);
  return location;
}

bool inside_omp_parallel(const RegionInfo& region, const std::vector<RegionInfo>& regions) {
  std::map<int64_t, const RegionInfo*> by_id;
  for (const RegionInfo& r : regions) by_id[r.id] = &r;
  const RegionInfo* current = &region;
  for (size_t steps = 0; current && steps <= regions.size(); ++steps) {
    if (current->kind == kRegionOmpParallel) return true;
    if (!current->parent_id) break;
    auto it = by_id.find(*current->parent_id);
    current = it == by_id.end() ? nullptr : it->second;
  }
  // A section has no parent: it is OpenMP when it starts inside the lines of
  // an OpenMP parallel region of its file.
  if (region.kind != kRegionSection || region.file.empty() || region.first_line == 0) return false;
  return std::any_of(regions.begin(), regions.end(), [&](const RegionInfo& r) {
    return r.kind == kRegionOmpParallel && r.file == region.file &&
           r.first_line <= region.first_line && region.first_line <= r.last_line;
  });
}

// ---------------------------------------------------------------------------
// Helpers

void require_crd(const Profile& profile) {
  if (profile.has_analysis(AnalysisId::Crd)) return;
  refuse_lost_data(profile, "crd");
  std::string analyses = profile.meta_value("analyses");
  throw FindingError(
      fmt::format("{} was recorded without the crd analysis (analyses: {}); record again with "
                  "--analyses comm,crd",
                  profile.path(), analyses.empty() ? "none" : analyses));
}

std::vector<int64_t> RegionSelection::ids() const {
  std::vector<int64_t> ids;
  for (const RegionInfo& region : regions) ids.push_back(region.id);
  return ids;
}

RegionSelection select_named(const Profile& profile, const std::string& name) {
  RegionSelection selection;
  selection.regions = profile.select_regions(name);
  const RegionInfo* head = nullptr;
  for (const RegionInfo& region : selection.regions) {
    if (region.name == name) head = &region;
  }
  for (const RegionInfo& region : selection.regions) {
    if (head) break;
    if (region.kind == kRegionFunction &&
        (region.function == name || function_base_name(region.function) == name)) {
      head = &region;
    }
  }
  if (head) {
    selection.head = *head;
  } else {
    RegionInfo& synthetic = selection.head;
    synthetic.kind = "selection";
    synthetic.function = name;
    synthetic.file = selection.regions.front().file;
    for (const RegionInfo& region : selection.regions) {
      if (region.file != synthetic.file || region.first_line == 0) continue;
      synthetic.first_line = synthetic.first_line == 0
                                 ? region.first_line
                                 : std::min(synthetic.first_line, region.first_line);
      synthetic.last_line = std::max({synthetic.last_line, region.last_line, region.first_line});
    }
  }
  selection.head.name = name;
  return selection;
}

}  // namespace weft
