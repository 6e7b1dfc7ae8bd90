#include "topology/topology.h"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <sstream>
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

const char* shared_level_name(SharedLevel level) {
  switch (level) {
    case SharedLevel::SamePu:
      return "pu";
    case SharedLevel::Core:
      return "core";
    case SharedLevel::L2:
      return "l2";
    case SharedLevel::L3:
      return "l3";
    case SharedLevel::NumaNode:
      return "numa";
    case SharedLevel::Package:
      return "package";
    case SharedLevel::Machine:
      return "machine";
  }
  return "machine";
}

namespace {

double parse_distance(std::string_view text, const std::string& where) {
  const std::string s(text);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !(value >= 0) || value > 1e12)
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not a distance (a number, 0 or more)", where, s));
  return value;
}

std::string trimmed(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// The deepest part of the machine PUs a and b share.
SharedLevel shared_level(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b) {
  if (a == b) return SharedLevel::SamePu;
  const hwloc_obj_t package_a = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, a);
  const hwloc_obj_t package_b = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, b);
  const bool same_node =
      a->nodeset && b->nodeset && hwloc_bitmap_intersects(a->nodeset, b->nodeset);
  // Above the caches, a NUMA node only tells PUs of one package apart.
  const SharedLevel above_caches = package_a != package_b ? SharedLevel::Machine
                                   : same_node            ? SharedLevel::NumaNode
                                                          : SharedLevel::Package;
  for (hwloc_obj_t o = hwloc_get_common_ancestor_obj(topo, a, b); o; o = o->parent) {
    if (o->type == HWLOC_OBJ_CORE || o->type == HWLOC_OBJ_L1CACHE) return SharedLevel::Core;
    if (o->type == HWLOC_OBJ_L2CACHE) return SharedLevel::L2;
    if (o->type == HWLOC_OBJ_L3CACHE || o->type == HWLOC_OBJ_L4CACHE ||
        o->type == HWLOC_OBJ_L5CACHE)
      return SharedLevel::L3;
  }
  return above_caches;
}

}  // namespace

LevelDistances parse_level_distances(const std::string& text) {
  LevelDistances weights;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    item = trimmed(item);
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument(
          fmt::format("level distance '{}' is not NAME=VALUE (names: core, l2, l3, numa, "
                      "package, machine)",
                      item));
    const std::string name = trimmed(item.substr(0, eq));
    size_t level = 1;
    while (level < kSharedLevels && name != shared_level_name(static_cast<SharedLevel>(level)))
      ++level;
    if (level == kSharedLevels)
      throw std::invalid_argument(
          fmt::format("unknown level '{}' (names: core, l2, l3, numa, package, machine)", name));
    weights.of[level] = parse_distance(trimmed(item.substr(eq + 1)), "level " + name);
  }
  return weights;
}

size_t PuDistances::cores() const {
  size_t n = 0;
  for (unsigned c : core) n = std::max<size_t>(n, c + 1);
  return n;
}

size_t PuDistances::numa_nodes() const {
  size_t n = 0;
  for (unsigned node : numa_node) n = std::max<size_t>(n, node + 1);
  return n;
}

void set_distance_matrix(PuDistances& machine, const std::string& csv) {
  const size_t n = machine.size();
  // Rows are in OS-index order; the matrix is kept in logical order.
  std::vector<size_t> logical_of(n);
  std::vector<unsigned> sorted = machine.os_index;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < n; ++i)
    logical_of[static_cast<size_t>(
        std::lower_bound(sorted.begin(), sorted.end(), machine.os_index[i]) - sorted.begin())] = i;
  std::vector<double> by_os(n * n);
  std::stringstream lines(csv);
  std::string line;
  size_t row = 0;
  while (std::getline(lines, line)) {
    if (trimmed(line).empty()) continue;
    if (row == n) throw std::invalid_argument(fmt::format("distance matrix: more than {} rows", n));
    std::stringstream cells(line);
    std::string cell;
    size_t column = 0;
    while (std::getline(cells, cell, ',')) {
      if (column == n)
        throw std::invalid_argument(
            fmt::format("distance matrix: row {} has more than {} values", row + 1, n));
      by_os[row * n + column] = parse_distance(
          trimmed(cell), fmt::format("distance matrix row {} column {}", row + 1, column + 1));
      ++column;
    }
    if (column != n)
      throw std::invalid_argument(fmt::format(
          "distance matrix: row {} has {} values, the machine has {} PUs", row + 1, column, n));
    ++row;
  }
  if (row != n)
    throw std::invalid_argument(
        fmt::format("distance matrix: {} rows, the machine has {} PUs", row, n));
  for (size_t i = 0; i < n; ++i) {
    if (by_os[i * n + i] != 0)
      throw std::invalid_argument(
          fmt::format("distance matrix: row {} column {} (the diagonal) is not 0", i + 1, i + 1));
    for (size_t j = 0; j < i; ++j)
      if (by_os[i * n + j] != by_os[j * n + i])
        throw std::invalid_argument(
            fmt::format("distance matrix: not symmetric at row {} column {}", i + 1, j + 1));
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      machine.distances[logical_of[i] * n + logical_of[j]] = by_os[i * n + j];
}

PuDistances Topology::pu_distances(const LevelDistances& weights) const {
  hwloc_topology_t topo = impl_->topo;
  PuDistances machine;
  const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  std::vector<hwloc_obj_t> pus;
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    pus.push_back(pu);
    machine.os_index.push_back(pu->os_index);
    const hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    machine.core.push_back(core ? core->logical_index : static_cast<unsigned>(i));
    // The node whose memory is local to the PU (the first, should it have
    // several); hwloc gives every PU one, a synthetic machine included.
    const int node_os = pu->nodeset ? hwloc_bitmap_first(pu->nodeset) : -1;
    const hwloc_obj_t node =
        node_os >= 0 ? hwloc_get_numanode_obj_by_os_index(topo, static_cast<unsigned>(node_os))
                     : nullptr;
    machine.numa_node.push_back(node ? node->logical_index : 0);
  }
  machine.levels.resize(pus.size() * pus.size());
  machine.distances.resize(pus.size() * pus.size());
  for (size_t i = 0; i < pus.size(); ++i) {
    for (size_t j = 0; j < pus.size(); ++j) {
      const SharedLevel level = shared_level(topo, pus[i], pus[j]);
      machine.levels[i * pus.size() + j] = level;
      machine.distances[i * pus.size() + j] = weights[level];
    }
  }
  return machine;
}

}  // namespace weft
