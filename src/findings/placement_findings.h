// Where a profile's threads should run on a machine: every mapping
// algorithm's mapping and modeled cost, against scatter and the unpinned
// expectation (docs/metrics.md, "Thread placement").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "findings/profile_facts.h"
#include "placement/thread_mapping.h"
#include "profile/profile.h"

namespace weft {

struct PlacementOptions {
  std::optional<std::string> region = std::nullopt;  // see Profile::select_regions; none = all
  bool with_rar = false;                             // the volume: raw (default), or raw + rar
  MappingAlgorithm algorithm = MappingAlgorithm::Hierarchical;  // the one to apply
};

struct PlacementRow {
  ThreadMapping mapping;
  MappingCost cost;
};

struct PlacementFindings {
  ProfileFacts profile;
  std::optional<std::string> region;
  bool with_rar = false;
  std::string machine;                // its summary, as given
  std::vector<unsigned> pu_os_index;  // the machine's logical PU -> OS index
  LevelDistances level_distances;
  bool measured_distances = false;  // a distance matrix replaced the levels'
  size_t threads = 0;
  double volume = 0;               // every thread pair's volume
  std::vector<PlacementRow> rows;  // one per algorithm, kMappingAlgorithms order
  MappingCost unpinned;            // the OS default's expectation
  MappingAlgorithm chosen = MappingAlgorithm::Hierarchical;

  const PlacementRow& row(MappingAlgorithm algorithm) const;
  // 1 - cost / baseline's (0 when the baseline costs nothing).
  double reduction(MappingAlgorithm algorithm, double baseline) const;
};

// Pair volumes, both directions: v[i][j] = v[j][i] = raw + rar of i -> j
// and j -> i (the diagonal 0). Thread placement and the thread-affinity
// suggestions weigh thread pairs by it.
ThreadVolumes pair_volumes(const CommunicationMatrix& raw, const CommunicationMatrix& rar);

// The region's (or the whole program's) pair volumes: of raw, or raw + rar.
ThreadVolumes thread_volumes(const Profile& profile, const std::optional<std::string>& region,
                             bool with_rar);

PlacementFindings find_placement(const Profile& profile, const PlacementOptions& options,
                                 const PuDistances& machine, const std::string& machine_summary,
                                 const LevelDistances& level_distances, bool measured_distances);

}  // namespace weft
