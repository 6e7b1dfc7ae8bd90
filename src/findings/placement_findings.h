// Where a profile's threads should run on a machine: every mapping
// algorithm's mapping and modeled cost, against scatter and the unpinned
// expectation (docs/metrics.md, "Thread placement").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "findings/profile_facts.h"
#include "placement/thread_mapping.h"
#include "profile/data_objects.h"
#include "profile/profile.h"

namespace weft {

struct PlacementOptions {
  std::optional<std::string> region = std::nullopt;  // see Profile::select_regions; none = all
  bool with_rar = false;                             // the volume: raw (default), or raw + rar
  MappingAlgorithm algorithm = MappingAlgorithm::Hierarchical;  // the one to apply
};

// Data placement under a mapping (docs/metrics.md, "Data placement"): the
// data objects whose pages were first written by a thread on another NUMA
// node than the threads that use them most, ranked by the accesses that
// would become local if each page sat on its main users' node.
struct DataPlacementItem {
  DataObject object;                           // kind "unknown": data of no known object
  std::optional<SourcePosition> allocated_at;  // heap blocks
  std::string description;                     // data_object_description
  uint64_t pages = 0;                          // its pages with a first writer
  uint64_t misplaced_pages = 0;   // first writer's node != the node that uses the page most
  uint64_t accesses = 0;          // every thread's reads and writes of its pages
  uint64_t remote = 0;            // of them, from threads off the page's node
  uint64_t remote_if_placed = 0;  // the same with each page on its main users' node
  // The share of a page's accesses its main node makes, weighted by
  // accesses, over the misplaced pages: near 1, partitioned data; near
  // 1 / nodes, data every node uses alike.
  double main_node_share = 0;
  uint32_t first_writer = 0;    // the thread that first wrote most of its misplaced pages
  double writer_use_share = 0;  // its share of the accesses to the misplaced pages
  uint64_t first_write_pc = 0;
  SourcePosition first_write_at;
  std::vector<uint32_t> users;  // threads by accesses to its misplaced pages, descending
  std::string fix;
};

struct DataPlacementFindings {
  bool recorded = false;              // the profile has the page-usage analysis
  size_t nodes = 0;                   // the machine's NUMA nodes
  std::vector<unsigned> thread_node;  // per thread, its node under the mapping
  uint64_t pages = 0;                 // pages with a first writer
  uint64_t accesses = 0;
  uint64_t remote = 0;
  uint64_t remote_if_placed = 0;
  std::vector<DataPlacementItem> items;  // by remote - remote_if_placed, descending
  uint64_t smaller_items = 0;            // objects with misplaced pages below the thresholds
};

// An object is an item when placing its pages by their users would make at
// least this share of its accesses local, and at least kMinPlacementGain
// accesses: a few pages at the edges of each thread's block are not worth
// a change.
inline constexpr double kMinPlacementGainShare = 0.10;
inline constexpr uint64_t kMinPlacementGain = 1000;
// ... and at least this many misplaced pages (256 KiB): smaller data stays
// in the caches after its first use, where the node it sits on hardly
// matters (weft counts accesses, not misses).
inline constexpr uint64_t kMinMisplacedPages = 64;
// Above this main_node_share the data is partitioned among nodes (the fix:
// initialise it in parallel); below, every node uses it (interleave it).
inline constexpr double kPartitionedMainNodeShare = 0.75;
// When the first writer makes at least this share of the accesses to the
// misplaced pages, it produces data it uses itself and others use more (the
// fix is where the threads run, not how the data is initialised).
inline constexpr double kProducerUseShare = 0.25;

DataPlacementFindings find_data_placement(const Profile& profile, const PuDistances& machine,
                                          const ThreadMapping& mapping);

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
  DataPlacementFindings data;  // under the chosen mapping

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

// Each profiled thread's start routine as the program about to be launched
// has it, for the launcher's check that the run creates its threads as the
// profiled one did: "MODULE:0xVADDR" (MODULE the file's base name, VADDR its
// ELF virtual address), "" for the main thread and for a routine weft
// cannot place. A routine of the profiled executable is looked up by name
// in `program` (another build of the program has it elsewhere; not found,
// it keeps its recorded address, which the launcher will not match); one of
// a shared library keeps its recorded address (the library is the system's).
std::vector<std::string> planned_start_routines(const Profile& profile, const std::string& program);

PlacementFindings find_placement(const Profile& profile, const PlacementOptions& options,
                                 const PuDistances& machine, const std::string& machine_summary,
                                 const LevelDistances& level_distances, bool measured_distances);

}  // namespace weft
