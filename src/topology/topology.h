// The machine's cache and NUMA topology, from hwloc: this machine's, a saved
// hwloc XML file, or a synthetic description ("pack:2 l3:1 core:4 pu:1").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft {

struct CacheLevel {
  unsigned depth = 0;       // 1 = L1, 2 = L2, ...
  uint64_t size_bytes = 0;  // of one cache at this level
  unsigned line_bytes = 0;
  unsigned associativity = 0;
  unsigned count = 0;         // caches of this level in the machine
  unsigned cores_served = 0;  // cores under one such cache (the first)
};

// "48 KiB", "1 MiB", "1.25 MiB": a cache size as the summaries print it.
std::string cache_bytes_text(uint64_t bytes);

// How close two processing units are: the deepest part of the machine they
// share. Core: SMT siblings (one core, its L1); L2 and L3: a cache shared
// by several cores (an L1 shared by cores counts as Core, an L4 as L3);
// NumaNode: one memory node, no shared cache; Package: one socket, two
// nodes; Machine: nothing shared but the machine.
enum class SharedLevel : uint8_t { SamePu, Core, L2, L3, NumaNode, Package, Machine };
inline constexpr size_t kSharedLevels = 7;
// "pu", "core", "l2", "l3", "numa", "package", "machine"
const char* shared_level_name(SharedLevel level);

// The distance of each level: relative costs of moving a cache line between
// two processing units that share that level (docs/metrics.md, "Thread
// placement"). Defaults double per level, the order of magnitude of
// cache-to-cache transfer latencies on x86 servers (a core's L1: a few
// cycles; an L3: tens; another socket: hundreds).
struct LevelDistances {
  std::array<double, kSharedLevels> of = {0, 1, 2, 4, 8, 16, 32};
  double operator[](SharedLevel level) const { return of[static_cast<size_t>(level)]; }
};
// "core=1,l2=3,..." (any subset of the names above but pu); throws
// std::invalid_argument naming what is wrong.
LevelDistances parse_level_distances(const std::string& text);

// Every pair of the machine's processing units, in hwloc's logical order.
struct PuDistances {
  std::vector<unsigned> os_index;   // logical PU -> OS index (what taskset and OMP_PLACES take)
  std::vector<unsigned> core;       // logical PU -> logical index of its core
  std::vector<unsigned> numa_node;  // logical PU -> logical index of its NUMA node
  std::vector<SharedLevel> levels;  // [i * n + j]
  std::vector<double> distances;    // [i * n + j]: from the levels, or a measured matrix

  size_t size() const { return os_index.size(); }
  SharedLevel level(size_t i, size_t j) const { return levels[i * size() + j]; }
  double distance(size_t i, size_t j) const { return distances[i * size() + j]; }
  size_t cores() const;
  size_t numa_nodes() const;
};

// Replaces the distances by a matrix read from CSV text: one row per PU in
// OS-index order, n numbers each, 0 on the diagonal, symmetric, none
// negative (a measured latency matrix). Throws std::invalid_argument with
// the row and column of the first problem.
void set_distance_matrix(PuDistances& machine, const std::string& csv);

class Topology {
 public:
  static Topology this_machine();
  static Topology from_xml(const std::string& path);
  static Topology synthetic(const std::string& description);

  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  unsigned packages() const;
  unsigned numa_nodes() const;
  unsigned cores() const;
  unsigned processing_units() const;
  // The data (or unified) cache of the given depth; size 0 when absent.
  CacheLevel cache(unsigned depth) const;
  // The deepest cache present, usually the shared last level.
  CacheLevel last_level_cache() const;
  // "1 package, 1 NUMA node, 2 cores, 2 PUs; L1d 48 KiB x2, L2 1.25 MiB x2, L3 54 MiB x1"
  std::string summary() const;
  // The shared level and distance of every pair of processing units.
  PuDistances pu_distances(const LevelDistances& weights = {}) const;

  struct Impl;  // hwloc's handle; public only so the loader helpers can build one

 private:
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
