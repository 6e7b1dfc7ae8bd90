#include "findings/crd_sampling_error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

namespace weft {
namespace {

// Each bin's share of the histogram's events, in percent.
std::map<unsigned, double> bin_shares(const CrdSummary& summary) {
  std::map<unsigned, double> shares;
  if (summary.events == 0) return shares;
  for (const CrdBin& bin : summary.histogram)
    shares[bin.index] =
        100.0 * static_cast<double>(bin.count) / static_cast<double>(summary.events);
  return shares;
}

using RegionKey = std::pair<std::string, std::string>;  // kind, name

// The regions with CRD events' candidates: communication in some region
// (CRD events are communication events), by kind and name.
std::vector<std::pair<RegionKey, int64_t>> communicating_regions(const Profile& profile) {
  std::vector<std::pair<RegionKey, int64_t>> regions;
  for (const RegionVolume& volume : profile.region_volumes())
    if (volume.raw + volume.rar > 0)
      regions.push_back({{volume.region.kind, volume.region.name}, volume.region.id});
  return regions;
}

LocalityMetrics region_locality(const Profile& profile, const std::map<RegionKey, int64_t>& ids,
                                const RegionKey& key) {
  auto it = ids.find(key);
  if (it == ids.end()) return {};
  return compute_locality(profile, {it->second}, CacheModel{});
}

}  // namespace

CrdHistogramError compare_crd(const LocalityMetrics& metrics, const LocalityMetrics& reference) {
  CrdHistogramError error;
  error.events = metrics.crd.events;
  error.reference_events = reference.crd.events;
  const std::map<unsigned, double> shares = bin_shares(metrics.crd);
  const std::map<unsigned, double> reference_shares = bin_shares(reference.crd);
  std::set<unsigned> bins;
  for (const auto& [bin, share] : shares) bins.insert(bin);
  for (const auto& [bin, share] : reference_shares) bins.insert(bin);
  for (unsigned bin : bins) {
    auto a = shares.find(bin);
    auto b = reference_shares.find(bin);
    const double diff = std::fabs((a == shares.end() ? 0.0 : a->second) -
                                  (b == reference_shares.end() ? 0.0 : b->second));
    if (diff > error.max_bin_error_pp) {
      error.max_bin_error_pp = diff;
      error.worst_bin = bin;
    }
  }
  if (metrics.median() && reference.median())
    error.median_bin_difference = static_cast<int>(crd_bin(*metrics.median())) -
                                  static_cast<int>(crd_bin(*reference.median()));
  return error;
}

CrdSamplingError crd_sampling_error(const Profile& profile, const Profile& reference) {
  require_crd(profile);
  require_crd(reference);
  CrdSamplingError result;
  result.program = compare_crd(compute_locality(profile, {}, CacheModel{}),
                               compute_locality(reference, {}, CacheModel{}));

  std::vector<std::pair<RegionKey, int64_t>> mine = communicating_regions(profile);
  std::vector<std::pair<RegionKey, int64_t>> theirs = communicating_regions(reference);
  const std::map<RegionKey, int64_t> my_ids(mine.begin(), mine.end());
  const std::map<RegionKey, int64_t> their_ids(theirs.begin(), theirs.end());
  std::vector<RegionKey> keys;
  std::set<RegionKey> seen;
  for (const auto& [key, id] : theirs)
    if (seen.insert(key).second) keys.push_back(key);
  for (const auto& [key, id] : mine)
    if (seen.insert(key).second) keys.push_back(key);

  for (const RegionKey& key : keys) {
    const LocalityMetrics metrics = region_locality(profile, my_ids, key);
    const LocalityMetrics reference_metrics = region_locality(reference, their_ids, key);
    if (metrics.crd.events == 0 && reference_metrics.crd.events == 0) continue;
    result.regions.push_back({key.first, key.second, compare_crd(metrics, reference_metrics)});
  }

  for (size_t i = 0; i < result.regions.size(); ++i) {
    const CrdHistogramError& error = result.regions[i].error;
    if (!result.worst_mass_region ||
        error.max_bin_error_pp > result.regions[*result.worst_mass_region].error.max_bin_error_pp)
      result.worst_mass_region = i;
    if (!error.median_bin_difference) continue;
    if (!result.worst_median_region ||
        std::abs(*error.median_bin_difference) >
            std::abs(*result.regions[*result.worst_median_region].error.median_bin_difference))
      result.worst_median_region = i;
  }
  return result;
}

}  // namespace weft
