#include "findings/crd_findings.h"

#include <algorithm>
#include <set>

namespace weft {
namespace {

bool has_crd_events(const LocalityMetrics& metrics) {
  return metrics.crd.events > 0 || metrics.unmeasured > 0;
}

void sort_by_events(std::vector<CrdEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const CrdEntry& a, const CrdEntry& b) {
    if (a.metrics.crd.events != b.metrics.crd.events)
      return a.metrics.crd.events > b.metrics.crd.events;
    return a.metrics.unmeasured > b.metrics.unmeasured;
  });
}

std::vector<CrdEntry> crd_entries(const Profile& profile, const CrdOptions& options,
                                  const CacheModel& cache) {
  std::vector<CrdEntry> entries;
  std::vector<RegionInfo> regions;
  if (options.region) {
    RegionSelection selection = select_named(profile, *options.region);
    entries.push_back({selection.head, true, compute_locality(profile, selection.ids(), cache)});
    regions = std::move(selection.regions);
  } else {
    // The whole program first: every code region's events (sections partition
    // the same events again).
    RegionInfo program;
    program.name = "whole program";
    program.kind = kProgramRegionKind;
    LocalityMetrics metrics = compute_locality(profile, {}, cache);
    if (has_crd_events(metrics)) entries.push_back({program, true, std::move(metrics)});
    regions = profile.regions();
  }
  // CRD events are communication events: regions without any are skipped
  // without querying their distances.
  std::set<int64_t> communicating;
  for (const RegionVolume& volume : profile.region_volumes()) {
    if (volume.raw + volume.rar > 0) communicating.insert(volume.region.id);
  }
  std::vector<CrdEntry> single;
  for (RegionInfo& region : regions) {
    if (!communicating.contains(region.id)) continue;
    LocalityMetrics metrics = compute_locality(profile, {region.id}, cache);
    if (has_crd_events(metrics)) single.push_back({std::move(region), false, std::move(metrics)});
  }
  sort_by_events(single);
  for (CrdEntry& entry : single) entries.push_back(std::move(entry));
  return entries;
}

}  // namespace

CrdFindings find_crd(const Profile& profile, const CrdOptions& options) {
  require_crd(profile);
  CrdFindings findings;
  findings.cache = resolve_cache(profile, options.cache);
  findings.entries = crd_entries(profile, options, findings.cache);
  findings.region = options.region;
  findings.profile = profile_facts(profile);
  return findings;
}

}  // namespace weft
