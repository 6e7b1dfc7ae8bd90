#include "findings/diff_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace weft {
namespace {

// The ids a region stands for: itself and everything nested in it, so that a
// function compares as a whole even when its loops changed (a blocked
// version has other loops than the original).
std::vector<int64_t> pooled_ids(const Profile& profile, const RegionInfo& region) {
  std::vector<int64_t> ids;
  for (const RegionInfo& nested : profile.select_regions(region.name)) ids.push_back(nested.id);
  return ids;
}

// Regions with communication (their own or nested), by name.
std::map<std::string, DiffSide> communicating_regions(const Profile& profile,
                                                      const CacheModel& cache) {
  std::map<std::string, DiffSide> sides;
  const std::vector<RegionVolume> volumes = profile.region_volumes();
  std::map<int64_t, uint64_t> volume_of;
  for (const RegionVolume& volume : volumes) volume_of[volume.region.id] = volume.raw + volume.rar;
  for (const RegionVolume& volume : volumes) {
    const std::vector<int64_t> ids = pooled_ids(profile, volume.region);
    uint64_t pooled = 0;
    for (int64_t id : ids) pooled += volume_of[id];
    if (pooled == 0) continue;
    LocalityMetrics metrics = compute_locality(profile, ids, cache);
    sides.emplace(volume.region.name, DiffSide{volume.region, std::move(metrics)});
  }
  return sides;
}

// A region of one profile that has no communication there but has it in the other.
DiffSide quiet_side(const Profile& profile, const RegionInfo& region, const CacheModel& cache) {
  return {region, compute_locality(profile, pooled_ids(profile, region), cache)};
}

void judge(RegionDiff& diff) {
  const LocalityMetrics& a = diff.a->metrics;
  const LocalityMetrics& b = diff.b->metrics;
  if (a.crd.events > 0) {
    diff.events_ratio = static_cast<double>(b.crd.events) / static_cast<double>(a.crd.events);
  }
  if (a.crd.events > 0 && b.crd.events > 0) {
    diff.bin_shift = b.crd.mean_log2_bin - a.crd.mean_log2_bin;
  }
  // The reported medians (of the line visits) against the min cutoffs.
  if (!a.median() || !b.median()) return;
  const uint64_t median_a = *a.median(), median_b = *b.median();
  const uint64_t cutoff_a = a.cutoffs.min, cutoff_b = b.cutoffs.min;
  diff.median_ratio = (static_cast<double>(median_b) + 1.0) / (static_cast<double>(median_a) + 1.0);
  if (median_b > median_a && *diff.median_ratio > kScalingSlack * *diff.events_ratio) {
    diff.scales_badly = true;
    diff.reasons.push_back(fmt::format("median CRD x{:.2f} outgrows events x{:.2f}",
                                       *diff.median_ratio, *diff.events_ratio));
  }
  if (median_a < cutoff_a && median_b >= cutoff_b) {
    diff.scales_badly = true;
    diff.reasons.push_back(fmt::format("median CRD crosses the min cutoff ({} < {} -> {} >= {})",
                                       median_a, cutoff_a, median_b, cutoff_b));
  }
}

// Descending, a missing value after every present one.
int compare_desc(const std::optional<double>& x, const std::optional<double>& y) {
  if (x && y) return *x > *y ? -1 : *x < *y ? 1 : 0;
  if (x) return -1;
  if (y) return 1;
  return 0;
}

void rank(std::vector<RegionDiff>& diffs) {
  std::stable_sort(diffs.begin(), diffs.end(), [](const RegionDiff& x, const RegionDiff& y) {
    if (x.scales_badly != y.scales_badly) return x.scales_badly;
    if (int c = compare_desc(x.median_ratio, y.median_ratio); c != 0) return c < 0;
    if (int c = compare_desc(x.events_ratio, y.events_ratio); c != 0) return c < 0;
    return x.b->metrics.crd.events > y.b->metrics.crd.events;
  });
}

void sort_by_events(std::vector<RegionDiff>& diffs, bool in_a) {
  std::stable_sort(diffs.begin(), diffs.end(), [in_a](const RegionDiff& x, const RegionDiff& y) {
    const DiffSide& sx = in_a ? *x.a : *x.b;
    const DiffSide& sy = in_a ? *y.a : *y.b;
    return sx.metrics.crd.events > sy.metrics.crd.events;
  });
}

DiffFindings compare_regions(const Profile& a, const Profile& b, const DiffOptions& options) {
  DiffFindings data;
  data.a.cache = resolve_cache(a, options.cache);
  data.b.cache = resolve_cache(b, options.cache);
  std::map<std::string, DiffSide> sides_a = communicating_regions(a, data.a.cache);
  std::map<std::string, DiffSide> sides_b = communicating_regions(b, data.b.cache);
  std::map<std::string, RegionInfo> all_a, all_b;
  for (RegionInfo& region : a.regions()) all_a.emplace(region.name, std::move(region));
  for (RegionInfo& region : b.regions()) all_b.emplace(region.name, std::move(region));

  std::map<std::string, RegionDiff> by_name;
  for (auto& [name, side] : sides_a) {
    RegionDiff& diff = by_name[name];
    diff.region = side.region;
    diff.a = std::move(side);
  }
  for (auto& [name, side] : sides_b) {
    RegionDiff& diff = by_name[name];
    diff.region = side.region;
    diff.b = std::move(side);
  }
  for (auto& [name, diff] : by_name) {
    if (!diff.a) {
      if (auto it = all_a.find(name); it != all_a.end())
        diff.a = quiet_side(a, it->second, data.a.cache);
    }
    if (!diff.b) {
      if (auto it = all_b.find(name); it != all_b.end())
        diff.b = quiet_side(b, it->second, data.b.cache);
    }
    if (diff.a && diff.b) {
      judge(diff);
      data.both.push_back(std::move(diff));
    } else if (diff.a) {
      data.only_a.push_back(std::move(diff));
    } else {
      data.only_b.push_back(std::move(diff));
    }
  }
  rank(data.both);
  sort_by_events(data.only_a, true);
  sort_by_events(data.only_b, false);
  return data;
}

// The granularity as the diff's JSON has always read it (std::stoull).
std::optional<uint64_t> granularity_of(const Profile& profile) {
  try {
    return std::stoull(profile.meta_value("granularity"));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

DiffProfile describe(const Profile& profile, const CacheModel& cache) {
  return {profile_facts(profile), granularity_of(profile), cache};
}

}  // namespace

DiffFindings find_diff(const Profile& a, const Profile& b, const DiffOptions& options) {
  require_crd(a);
  require_crd(b);
  DiffFindings findings = compare_regions(a, b, options);
  findings.a = describe(a, findings.a.cache);
  findings.b = describe(b, findings.b.cache);
  return findings;
}

}  // namespace weft
