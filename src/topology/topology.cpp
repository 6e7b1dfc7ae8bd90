#include "topology/topology.h"

#include <fmt/format.h>
#include <hwloc.h>

#include <stdexcept>

namespace weft {

struct Topology::Impl {
  hwloc_topology_t topo = nullptr;
  ~Impl() {
    if (topo) hwloc_topology_destroy(topo);
  }
};

namespace {

std::unique_ptr<Topology::Impl> load(const char* what,
                                     int (*configure)(hwloc_topology_t, const char*),
                                     const char* arg) {
  auto impl = std::make_unique<Topology::Impl>();
  if (hwloc_topology_init(&impl->topo) != 0) throw std::runtime_error("hwloc: cannot initialize");
  if (configure && configure(impl->topo, arg) != 0)
    throw std::runtime_error(fmt::format("cannot read topology {} '{}'", what, arg));
  if (hwloc_topology_load(impl->topo) != 0)
    throw std::runtime_error(fmt::format("cannot load topology {}", what));
  return impl;
}

}  // namespace

std::string cache_bytes_text(uint64_t b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1 << 20));
  return fmt::format("{} KiB", b >> 10);
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

Topology Topology::this_machine() { return Topology(load("of this machine", nullptr, nullptr)); }

Topology Topology::from_xml(const std::string& path) {
  return Topology(load("XML", hwloc_topology_set_xml, path.c_str()));
}

Topology Topology::synthetic(const std::string& description) {
  return Topology(load("description", hwloc_topology_set_synthetic, description.c_str()));
}

unsigned Topology::packages() const {
  return static_cast<unsigned>(hwloc_get_nbobjs_by_type(impl_->topo, HWLOC_OBJ_PACKAGE));
}
unsigned Topology::numa_nodes() const {
  return static_cast<unsigned>(hwloc_get_nbobjs_by_type(impl_->topo, HWLOC_OBJ_NUMANODE));
}
unsigned Topology::cores() const {
  return static_cast<unsigned>(hwloc_get_nbobjs_by_type(impl_->topo, HWLOC_OBJ_CORE));
}
unsigned Topology::processing_units() const {
  return static_cast<unsigned>(hwloc_get_nbobjs_by_type(impl_->topo, HWLOC_OBJ_PU));
}

CacheLevel Topology::cache(unsigned depth) const {
  static const hwloc_obj_type_t kTypes[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                            HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
  CacheLevel level;
  if (depth < 1 || depth > 5) return level;
  const int n = hwloc_get_nbobjs_by_type(impl_->topo, kTypes[depth - 1]);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t obj =
        hwloc_get_obj_by_type(impl_->topo, kTypes[depth - 1], static_cast<unsigned>(i));
    if (!obj || !obj->attr || obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
    if (level.count == 0 && obj->cpuset) {
      const int cores =
          hwloc_get_nbobjs_inside_cpuset_by_type(impl_->topo, obj->cpuset, HWLOC_OBJ_CORE);
      level.cores_served = cores > 0 ? static_cast<unsigned>(cores) : 0;
    }
    level.depth = depth;
    level.size_bytes = obj->attr->cache.size;
    level.line_bytes = obj->attr->cache.linesize;
    level.associativity = obj->attr->cache.associativity > 0
                              ? static_cast<unsigned>(obj->attr->cache.associativity)
                              : 0;
    ++level.count;
  }
  return level;
}

CacheLevel Topology::last_level_cache() const {
  for (unsigned d = 5; d >= 1; --d)
    if (CacheLevel c = cache(d); c.size_bytes > 0) return c;
  return {};
}

std::string Topology::summary() const {
  std::string s = fmt::format("{} package{}, {} NUMA node{}, {} cores, {} PUs", packages(),
                              packages() == 1 ? "" : "s", numa_nodes(),
                              numa_nodes() == 1 ? "" : "s", cores(), processing_units());
  std::string caches;
  for (unsigned d = 1; d <= 5; ++d) {
    const CacheLevel c = cache(d);
    if (c.size_bytes == 0) continue;
    caches += fmt::format("{}L{} {} x{}", caches.empty() ? "" : ", ", d,
                          cache_bytes_text(c.size_bytes), c.count);
  }
  return caches.empty() ? s : s + "; " + caches;
}

}  // namespace weft
