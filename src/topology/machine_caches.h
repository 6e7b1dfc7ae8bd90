// The caches weft models for a profile (docs/metrics.md, "The recorded
// cache"): one credible L1 data cache, L2 and last level, chosen from three
// descriptions of this machine that may disagree or lie (a virtual machine's
// CPUID can claim a 508 MiB L3 per core): the kernel's sysfs, hwloc and the
// CPU's own cache leaves. The imbalance analysis' cache simulator and the CRD
// cutoffs both use the one chosen here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace weft {

// One data or unified cache level as one source describes it.
struct CacheDescription {
  unsigned depth = 0;  // 1 = L1, 2 = L2, ...
  uint64_t size_bytes = 0;
  unsigned line_bytes = 0;
  unsigned ways = 0;          // 0: not given
  unsigned cores_served = 0;  // cores sharing one such cache; 0: not given
};

enum class CacheInfoSource { Sysfs, Hwloc, Cpuid, Default };
// "sysfs", "hwloc", "cpuid", "default"
const char* cache_info_source_name(CacheInfoSource source);

struct ChosenCache {
  CacheDescription cache;
  CacheInfoSource source = CacheInfoSource::Default;
  // Why a source was passed over: "the machine's L3 is implausible (hwloc
  // says 508 MiB for 1 core, ...)"; empty when none was.
  std::string note = {};
};

struct MachineCaches {
  ChosenCache l1, l2, last_level;
  // The largest cache any source describes, credible or not: a virtual
  // machine may see its host's whole L3, which holds data whatever its
  // share of it (a benchmark meant to miss every cache must exceed it).
  uint64_t largest_described_bytes = 0;
  // One line each: a source that disagrees with the chosen one, or a size no
  // real processor has. `weft record` prints them as warnings.
  std::vector<std::string> warnings;
  // "L1 48 KiB (cpuid), L2 1 MiB (cpuid), LLC 8 MiB (default)"
  std::string summary() const;
};

// The largest size per core served that a real processor's cache of this
// depth has (the few to a dozen MiB of last level per core of current server
// parts, with a margin); beyond it, the description is a lie.
uint64_t plausible_bytes_per_core(unsigned depth);

// What each source says, data and unified caches only, one entry per depth.
std::vector<CacheDescription> caches_from_topology(const Topology& topology);
// cpu0's caches under `cpu_dir` (normally /sys/devices/system/cpu); empty
// when the kernel describes none (some virtual machines).
std::vector<CacheDescription> caches_from_sysfs(const std::string& cpu_dir);
// The CPU's cache leaves (4 on Intel, 0x8000001D or else 0x80000005/6 on
// AMD); empty off x86.
std::vector<CacheDescription> caches_from_cpuid();

// Per level, the first plausible description in the order sysfs, hwloc,
// cpuid (the kernel reads the firmware's tables; hwloc mostly reads sysfs;
// CPUID is what a hypervisor fakes most), else weft's default (32 KiB 8-way,
// 256 KiB 8-way, 8 MiB 16-way); missing ways and line sizes come from the
// next source that has them, then the default. The last level is the
// deepest level some source describes beyond L2; an implausible one is
// replaced by the default, never by L2. A description that does not say how
// many cores share the cache is judged as shared by all `machine_cores`.
MachineCaches choose_caches(const std::vector<CacheDescription>& sysfs,
                            const std::vector<CacheDescription>& hwloc,
                            const std::vector<CacheDescription>& cpuid, unsigned machine_cores);

// choose_caches on this machine's three sources.
MachineCaches this_machine_caches();

}  // namespace weft
