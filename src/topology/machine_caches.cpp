#include "topology/machine_caches.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace weft {

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

// weft's defaults: a common server core's L1d and L2, and 8 MiB of last
// level (what a socket gives a few cores).
CacheDescription default_cache(unsigned depth) {
  switch (depth) {
    case 1:
      return {1, 32 * KiB, 64, 8, 1};
    case 2:
      return {2, 256 * KiB, 64, 8, 1};
    default:
      return {3, 8 * MiB, 64, 16, 0};
  }
}

std::string level_name(unsigned depth) { return fmt::format("L{}", depth); }

std::optional<CacheDescription> at_depth(const std::vector<CacheDescription>& caches,
                                         unsigned depth) {
  for (const CacheDescription& c : caches)
    if (c.depth == depth) return c;
  return std::nullopt;
}

unsigned deepest(const std::vector<CacheDescription>& caches) {
  unsigned d = 0;
  for (const CacheDescription& c : caches) d = std::max(d, c.depth);
  return d;
}

struct Candidate {
  CacheDescription cache;
  CacheInfoSource source;
};

bool plausible(const CacheDescription& c, unsigned machine_cores) {
  const uint64_t cores = c.cores_served != 0 ? c.cores_served : std::max(1u, machine_cores);
  return c.size_bytes >= KiB && c.size_bytes <= plausible_bytes_per_core(c.depth) * cores;
}

// Chooses the level at `depth` among the sources' descriptions (in order of
// trust), warning about lies and disagreements; weft's default when none is
// credible.
ChosenCache choose_level(const std::vector<Candidate>& candidates, unsigned depth,
                         unsigned machine_cores, std::vector<std::string>& warnings) {
  std::optional<Candidate> chosen;
  std::vector<std::string> lies;
  for (const Candidate& c : candidates) {
    if (!plausible(c.cache, machine_cores)) {
      const unsigned cores = c.cache.cores_served != 0 ? c.cache.cores_served : machine_cores;
      lies.push_back(fmt::format("{} says {} for {} core{}", cache_info_source_name(c.source),
                                 cache_bytes_text(c.cache.size_bytes), cores,
                                 cores == 1 ? "" : "s"));
      continue;
    }
    if (!chosen) {
      chosen = c;
    } else if (c.cache.size_bytes != chosen->cache.size_bytes) {
      warnings.push_back(fmt::format(
          "{}: {} says {}, {} says {}; weft uses {}'s", level_name(depth),
          cache_info_source_name(chosen->source), cache_bytes_text(chosen->cache.size_bytes),
          cache_info_source_name(c.source), cache_bytes_text(c.cache.size_bytes),
          cache_info_source_name(chosen->source)));
    }
  }
  ChosenCache result;
  if (!lies.empty()) {
    std::string said;
    for (const std::string& lie : lies) said += (said.empty() ? "" : ", ") + lie;
    result.note = fmt::format(
        "the machine's {} is implausible ({}; a real processor has at most "
        "{} per core)",
        level_name(depth), said, cache_bytes_text(plausible_bytes_per_core(depth)));
  }
  if (chosen) {
    result.cache = chosen->cache;
    result.source = chosen->source;
    if (!result.note.empty())
      warnings.push_back(fmt::format("{}: weft uses {}'s {}", result.note,
                                     cache_info_source_name(result.source),
                                     cache_bytes_text(result.cache.size_bytes)));
  } else {
    result.cache = default_cache(depth);
    result.cache.depth = depth;
    result.source = CacheInfoSource::Default;
    if (!result.note.empty())
      warnings.push_back(
          fmt::format("{}: weft uses its default of {} (set the caches with `weft "
                      "record --cache`, the CRD cache with `--cache-size`)",
                      result.note, cache_bytes_text(result.cache.size_bytes)));
  }
  // Ways and line size a chosen source leaves out: another source's for the
  // same size, else the default's.
  for (const Candidate& c : candidates) {
    if (c.cache.size_bytes != result.cache.size_bytes) continue;
    if (result.cache.ways == 0) result.cache.ways = c.cache.ways;
    if (result.cache.line_bytes == 0) result.cache.line_bytes = c.cache.line_bytes;
  }
  const CacheDescription d = default_cache(depth);
  if (result.cache.ways == 0) result.cache.ways = d.ways;
  if (result.cache.line_bytes == 0) result.cache.line_bytes = d.line_bytes;
  return result;
}

std::vector<Candidate> candidates_at(unsigned depth, const std::vector<CacheDescription>& sysfs,
                                     const std::vector<CacheDescription>& hwloc,
                                     const std::vector<CacheDescription>& cpuid) {
  std::vector<Candidate> out;
  if (auto c = at_depth(sysfs, depth)) out.push_back({*c, CacheInfoSource::Sysfs});
  if (auto c = at_depth(hwloc, depth)) out.push_back({*c, CacheInfoSource::Hwloc});
  if (auto c = at_depth(cpuid, depth)) out.push_back({*c, CacheInfoSource::Cpuid});
  return out;
}

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// "48K", "1024K", "32M" (sysfs's size), "64" (a plain number).
uint64_t sysfs_number(const std::string& text) {
  size_t used = 0;
  uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  if (used < text.size()) {
    if (text[used] == 'K') value *= KiB;
    if (text[used] == 'M') value *= MiB;
    if (text[used] == 'G') value *= 1024 * MiB;
  }
  return value;
}

// "0-3,8-11" -> 8.
unsigned cpu_list_count(const std::string& list) {
  unsigned count = 0;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string part = list.substr(start, comma - start);
    const size_t dash = part.find('-');
    try {
      if (dash == std::string::npos)
        count += part.empty() ? 0 : 1;
      else
        count += static_cast<unsigned>(std::stoul(part.substr(dash + 1)) -
                                       std::stoul(part.substr(0, dash)) + 1);
    } catch (const std::exception&) {
      return 0;
    }
    start = comma + 1;
  }
  return count;
}

void keep_first_per_depth(std::vector<CacheDescription>& caches, const CacheDescription& c) {
  if (c.depth == 0 || c.size_bytes == 0 || at_depth(caches, c.depth)) return;
  caches.push_back(c);
}

}  // namespace

const char* cache_info_source_name(CacheInfoSource source) {
  switch (source) {
    case CacheInfoSource::Sysfs:
      return "sysfs";
    case CacheInfoSource::Hwloc:
      return "hwloc";
    case CacheInfoSource::Cpuid:
      return "cpuid";
    case CacheInfoSource::Default:
      break;
  }
  return "default";
}

uint64_t plausible_bytes_per_core(unsigned depth) {
  if (depth <= 1) return 256 * KiB;
  if (depth == 2) return 8 * MiB;
  return 32 * MiB;
}

std::string MachineCaches::summary() const {
  auto one = [](const char* name, const ChosenCache& c) {
    return fmt::format("{} {} ({})", name, cache_bytes_text(c.cache.size_bytes),
                       cache_info_source_name(c.source));
  };
  return fmt::format("{}, {}, {}", one("L1", l1), one("L2", l2), one("LLC", last_level));
}

std::vector<CacheDescription> caches_from_topology(const Topology& topology) {
  std::vector<CacheDescription> caches;
  for (unsigned d = 1; d <= 5; ++d) {
    const CacheLevel c = topology.cache(d);
    if (c.size_bytes != 0)
      caches.push_back({d, c.size_bytes, c.line_bytes, c.associativity, c.cores_served});
  }
  return caches;
}

std::vector<CacheDescription> caches_from_sysfs(const std::string& cpu_dir) {
  std::vector<CacheDescription> caches;
  for (unsigned index = 0; index < 16; ++index) {
    const std::string dir = fmt::format("{}/cpu0/cache/index{}/", cpu_dir, index);
    const std::optional<std::string> type = read_line(dir + "type");
    if (!type) break;
    if (*type == "Instruction") continue;
    CacheDescription c;
    c.depth = static_cast<unsigned>(sysfs_number(read_line(dir + "level").value_or("0")));
    c.size_bytes = sysfs_number(read_line(dir + "size").value_or("0"));
    c.line_bytes =
        static_cast<unsigned>(sysfs_number(read_line(dir + "coherency_line_size").value_or("0")));
    c.ways =
        static_cast<unsigned>(sysfs_number(read_line(dir + "ways_of_associativity").value_or("0")));
    c.cores_served = cpu_list_count(read_line(dir + "shared_cpu_list").value_or(""));
    keep_first_per_depth(caches, c);
  }
  return caches;
}

std::vector<CacheDescription> caches_from_cpuid() {
  std::vector<CacheDescription> caches;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return caches;
  const unsigned max_leaf = a;
  const bool amd = b == 0x68747541;  // "Auth"enticAMD
  __get_cpuid(0x80000000, &a, &b, &c, &d);
  const unsigned max_extended = a;
  // Leaf 4 (Intel) and 0x8000001D (AMD) share one layout: a subleaf per cache.
  const unsigned leaf = amd ? 0x8000001D : 4;
  if ((amd ? max_extended : max_leaf) >= leaf) {
    for (unsigned sub = 0; sub < 16; ++sub) {
      __cpuid_count(leaf, sub, a, b, c, d);
      const unsigned type = a & 31;
      if (type == 0) break;
      if (type == 2) continue;  // instruction
      CacheDescription cache;
      cache.depth = (a >> 5) & 7;
      cache.ways = (b >> 22) + 1;
      cache.line_bytes = (b & 0xfff) + 1;
      const uint64_t partitions = ((b >> 12) & 0x3ff) + 1;
      cache.size_bytes = uint64_t{cache.ways} * partitions * cache.line_bytes * (uint64_t{c} + 1);
      cache.cores_served = ((a >> 14) & 0xfff) + 1;  // logical processors sharing it
      keep_first_per_depth(caches, cache);
    }
  }
  if (caches.empty() && amd && max_extended >= 0x80000006) {
    // The legacy AMD leaves: sizes and lines, no sharing; associativity is
    // an encoding weft does not need (the next source or the default fills it).
    __get_cpuid(0x80000005, &a, &b, &c, &d);
    keep_first_per_depth(caches, {1, uint64_t{c >> 24} * KiB, c & 0xff, 0, 1});
    __get_cpuid(0x80000006, &a, &b, &c, &d);
    keep_first_per_depth(caches, {2, uint64_t{c >> 16} * KiB, c & 0xff, 0, 1});
    keep_first_per_depth(caches, {3, uint64_t{d >> 18} * 512 * KiB, d & 0xff, 0, 0});
  }
#endif
  return caches;
}

MachineCaches choose_caches(const std::vector<CacheDescription>& sysfs,
                            const std::vector<CacheDescription>& hwloc,
                            const std::vector<CacheDescription>& cpuid, unsigned machine_cores) {
  MachineCaches m;
  m.l1 = choose_level(candidates_at(1, sysfs, hwloc, cpuid), 1, machine_cores, m.warnings);
  m.l2 = choose_level(candidates_at(2, sysfs, hwloc, cpuid), 2, machine_cores, m.warnings);
  const unsigned last = std::max({deepest(sysfs), deepest(hwloc), deepest(cpuid), 3u});
  m.last_level =
      choose_level(candidates_at(last, sysfs, hwloc, cpuid), last, machine_cores, m.warnings);
  for (const std::vector<CacheDescription>* source : {&sysfs, &hwloc, &cpuid})
    for (const CacheDescription& cache : *source)
      m.largest_described_bytes = std::max(m.largest_described_bytes, cache.size_bytes);
  return m;
}

MachineCaches this_machine_caches() {
  std::vector<CacheDescription> hwloc;
  try {
    hwloc = caches_from_topology(Topology::this_machine());
  } catch (const std::exception&) {
    // no hwloc topology: the other sources
  }
  return choose_caches(caches_from_sysfs("/sys/devices/system/cpu"), hwloc, caches_from_cpuid(),
                       std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace weft
