#include "findings/placement_findings.h"

#include <stdexcept>

namespace weft {

const PlacementRow& PlacementFindings::row(MappingAlgorithm algorithm) const {
  for (const PlacementRow& r : rows)
    if (r.mapping.algorithm == algorithm) return r;
  throw std::logic_error("no placement row for an algorithm");
}

double PlacementFindings::reduction(MappingAlgorithm algorithm, double baseline) const {
  return baseline > 0 ? 1.0 - row(algorithm).cost.hop_bytes / baseline : 0.0;
}

ThreadVolumes pair_volumes(const CommunicationMatrix& raw, const CommunicationMatrix& rar) {
  const size_t n = raw.size();
  ThreadVolumes v(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n && j < raw[i].size(); ++j)
      if (i != j) {
        const double events = static_cast<double>(raw[i][j] + rar[i][j]);
        v[i][j] += events;
        v[j][i] += events;
      }
  return v;
}

ThreadVolumes thread_volumes(const Profile& profile, const std::optional<std::string>& region,
                             bool with_rar) {
  std::vector<int64_t> region_ids;
  if (region)
    for (const RegionInfo& r : profile.select_regions(*region)) region_ids.push_back(r.id);
  const CommunicationMatrix raw = profile.matrix(region_ids, MatrixKind::Raw);
  const CommunicationMatrix rar =
      with_rar ? profile.matrix(region_ids, MatrixKind::Rar)
               : CommunicationMatrix(raw.size(), std::vector<uint64_t>(raw.size(), 0));
  return pair_volumes(raw, rar);
}

PlacementFindings find_placement(const Profile& profile, const PlacementOptions& options,
                                 const PuDistances& machine, const std::string& machine_summary,
                                 const LevelDistances& level_distances, bool measured_distances) {
  PlacementFindings findings;
  findings.profile = profile_facts(profile);
  findings.region = options.region;
  findings.with_rar = options.with_rar;
  findings.machine = machine_summary;
  findings.pu_os_index = machine.os_index;
  findings.level_distances = level_distances;
  findings.measured_distances = measured_distances;
  findings.chosen = options.algorithm;
  const ThreadVolumes volume = thread_volumes(profile, options.region, options.with_rar);
  findings.threads = volume.size();
  for (size_t i = 0; i < volume.size(); ++i)
    for (size_t j = i + 1; j < volume.size(); ++j) findings.volume += volume[i][j];
  for (MappingAlgorithm algorithm : kMappingAlgorithms) {
    PlacementRow row;
    row.mapping = map_threads(algorithm, volume, machine);
    row.cost = mapping_cost(volume, machine, row.mapping);
    findings.rows.push_back(std::move(row));
  }
  findings.unpinned = expected_unpinned_cost(volume, machine);
  return findings;
}

}  // namespace weft
