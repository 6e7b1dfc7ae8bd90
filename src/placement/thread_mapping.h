// Thread placement from a communication graph (COMPLACE, and a hierarchical
// grouping): which processing unit each thread should run on, what that
// mapping costs under a machine's distances, and the baselines it is
// judged against (docs/metrics.md, "Thread placement").
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.h"

namespace weft {

// Communication between threads, both directions summed: volume[i][j] ==
// volume[j][i], the diagonal ignored. Thread numbers are the profile's.
using ThreadVolumes = std::vector<std::vector<double>>;

enum class MappingAlgorithm { Greedy, Hierarchical, Packed, Scatter };
inline constexpr MappingAlgorithm kMappingAlgorithms[] = {
    MappingAlgorithm::Greedy, MappingAlgorithm::Hierarchical, MappingAlgorithm::Packed,
    MappingAlgorithm::Scatter};
// "greedy", "hierarchical", "packed", "scatter"
const char* mapping_algorithm_name(MappingAlgorithm algorithm);
std::optional<MappingAlgorithm> parse_mapping_algorithm(std::string_view name);

// Thread i runs on the machine's logical PU pu[i] (PuDistances order).
struct ThreadMapping {
  MappingAlgorithm algorithm = MappingAlgorithm::Packed;
  std::vector<size_t> pu;
};

// What a mapping costs: hop-bytes, the sum over thread pairs of volume x
// distance of their PUs, and the volume by the level each pair shares.
struct MappingCost {
  double hop_bytes = 0;
  std::array<double, kSharedLevels> traffic{};
  double total() const;  // every pair's volume
};

MappingCost mapping_cost(const ThreadVolumes& volume, const PuDistances& machine,
                         const ThreadMapping& mapping);

// The OS default (no pinning), as the expected cost of a random placement
// on the same slots as the mappings (placement_slots: an idle Linux also
// spreads threads over idle cores before it doubles them up): each thread
// on a distinct slot, every such placement equally likely, so each pair
// sits on a uniformly random pair of distinct slots.
MappingCost expected_unpinned_cost(const ThreadVolumes& volume, const PuDistances& machine);

// The PUs the threads are placed on, with repetition: one PU per core (the
// first) while there are no more threads than cores, so that no two
// threads share a core while a core is idle (COMPLACE measured the cost of
// SMT siblings); every PU up to the PU count; beyond it, each PU
// floor(threads / PUs) times and the remainder once more on PUs spread over
// the machine (threads on one PU take turns; no PU takes two more than
// another).
std::vector<size_t> placement_slots(const PuDistances& machine, size_t threads);

// The mapping of `volume`'s threads by one algorithm:
// - greedy: COMPLACE's Algorithm 2 — take the unmapped thread with the
//   most communication, put it on the first free slot, then repeatedly
//   the heaviest edge between a mapped and an unmapped thread puts the
//   unmapped one on the free slot nearest its partner's;
// - hierarchical: level by level from the machine down, the threads are
//   split among the level's domains (as few domains as hold them) so
//   that the most communication stays inside each (greedy growth from
//   the heaviest thread, then pair swaps between domains while the cut
//   shrinks), then pair swaps over the whole mapping while the
//   hop-bytes shrink, started from this grouping and from the greedy
//   mapping, the cheaper kept;
// - packed: thread i on slot i (consecutive threads on neighbouring cores);
// - scatter: round-robin over the domains at every level (thread 0 and
//   thread 1 on different packages, when there are two).
ThreadMapping map_threads(MappingAlgorithm algorithm, const ThreadVolumes& volume,
                          const PuDistances& machine);

}  // namespace weft
