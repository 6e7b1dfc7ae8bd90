// The machine's cache and NUMA topology, from hwloc: this machine's, a saved
// hwloc XML file, or a synthetic description ("pack:2 l3:1 core:4 pu:1").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

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

  struct Impl;  // hwloc's handle; public only so the loader helpers can build one

 private:
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
