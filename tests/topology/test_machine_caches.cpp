// choose_caches (docs/metrics.md, "The recorded cache"): the first plausible
// description per level in the order sysfs, hwloc, cpuid; a lying last level
// is caught by the size per core it serves and replaced by weft's default.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "topology/machine_caches.h"
#include "topology/topology.h"

namespace weft {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;
const std::string kFixtures = WEFT_TOPOLOGY_FIXTURES;

// A fake /sys/devices/system/cpu with cpu0's cache directories.
class FakeSysfs {
 public:
  FakeSysfs()
      : root_(std::filesystem::temp_directory_path() /
              ("weft-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
    std::filesystem::create_directories(root_);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  void add(int index, const std::string& level, const std::string& type, const std::string& size,
           const std::string& ways, const std::string& shared) {
    const auto dir = root_ / "cpu0" / "cache" / ("index" + std::to_string(index));
    std::filesystem::create_directories(dir);
    auto put = [&](const char* name, const std::string& value) {
      std::ofstream(dir / name) << value << "\n";
    };
    put("level", level);
    put("type", type);
    put("size", size);
    put("coherency_line_size", "64");
    put("ways_of_associativity", ways);
    put("shared_cpu_list", shared);
  }
  std::string path() const { return root_.string(); }

 private:
  static inline int next_ = 0;
  std::filesystem::path root_;
};

TEST(MachineCaches, ReadsSysfs) {
  FakeSysfs sysfs;
  sysfs.add(0, "1", "Data", "48K", "12", "0");
  sysfs.add(1, "1", "Instruction", "32K", "8", "0");
  sysfs.add(2, "2", "Unified", "1024K", "8", "0");
  sysfs.add(3, "3", "Unified", "32768K", "16", "0-3,8-11");
  const std::vector<CacheDescription> caches = caches_from_sysfs(sysfs.path());
  ASSERT_EQ(caches.size(), 3u);  // the instruction cache is left out
  EXPECT_EQ(caches[0].depth, 1u);
  EXPECT_EQ(caches[0].size_bytes, 48 * KiB);
  EXPECT_EQ(caches[0].ways, 12u);
  EXPECT_EQ(caches[1].size_bytes, 1 * MiB);
  EXPECT_EQ(caches[2].depth, 3u);
  EXPECT_EQ(caches[2].size_bytes, 32 * MiB);
  EXPECT_EQ(caches[2].line_bytes, 64u);
  EXPECT_EQ(caches[2].cores_served, 8u);
  EXPECT_TRUE(caches_from_sysfs(sysfs.path() + "/absent").empty());
}

TEST(MachineCaches, ReadsTheCoresAnHwlocCacheServes) {
  const std::vector<CacheDescription> lying =
      caches_from_topology(Topology::from_xml(kFixtures + "/vm_lying_l3.xml"));
  ASSERT_EQ(lying.size(), 3u);
  EXPECT_EQ(lying[2].size_bytes, 508 * MiB);
  EXPECT_EQ(lying[2].cores_served, 1u);
  const std::vector<CacheDescription> server =
      caches_from_topology(Topology::from_xml(kFixtures + "/server_l3.xml"));
  ASSERT_EQ(server.size(), 3u);
  EXPECT_EQ(server[2].size_bytes, 32 * MiB);
  EXPECT_EQ(server[2].cores_served, 8u);
}

// This virtual machine: no sysfs caches; hwloc (from CPUID leaf 0x80000006)
// and CPUID itself claim a 508 MiB L3 per core.
TEST(MachineCaches, CatchesTheLyingL3) {
  const std::vector<CacheDescription> hwloc =
      caches_from_topology(Topology::from_xml(kFixtures + "/vm_lying_l3.xml"));
  const std::vector<CacheDescription> cpuid = {
      {1, 48 * KiB, 64, 0, 1}, {2, 1 * MiB, 64, 0, 1}, {3, 508 * MiB, 64, 0, 0}};
  const MachineCaches m = choose_caches({}, hwloc, cpuid, 2);
  EXPECT_EQ(m.l1.cache.size_bytes, 48 * KiB);
  EXPECT_EQ(m.l1.source, CacheInfoSource::Hwloc);
  EXPECT_EQ(m.l2.cache.size_bytes, 1 * MiB);
  EXPECT_EQ(m.last_level.source, CacheInfoSource::Default);
  EXPECT_EQ(m.last_level.cache.size_bytes, 8 * MiB);
  EXPECT_EQ(m.last_level.cache.ways, 16u);
  // Not credible for a model, but there: `weft calibrate` streams beyond it.
  EXPECT_EQ(m.largest_described_bytes, 508 * MiB);
  EXPECT_EQ(m.last_level.note,
            "the machine's L3 is implausible (hwloc says 508 MiB for 1 core, cpuid says 508 MiB "
            "for 2 cores; a real processor has at most 32 MiB per core)");
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0], m.last_level.note +
                               ": weft uses its default of 8 MiB (set the caches with `weft record "
                               "--cache`, the CRD cache with `--cache-size`)");
  EXPECT_EQ(m.summary(), "L1 48 KiB (hwloc), L2 1 MiB (hwloc), LLC 8 MiB (default)");
}

// A kernel that describes the caches wins over a lying hwloc file; a
// plausible disagreement is reported.
TEST(MachineCaches, PrefersSysfsAndReportsDisagreement) {
  FakeSysfs sysfs;
  sysfs.add(0, "1", "Data", "32K", "8", "0");
  sysfs.add(1, "2", "Unified", "2048K", "16", "0");
  sysfs.add(2, "3", "Unified", "32M", "16", "0-7");
  const std::vector<CacheDescription> hwloc =
      caches_from_topology(Topology::from_xml(kFixtures + "/vm_lying_l3.xml"));
  const MachineCaches m = choose_caches(caches_from_sysfs(sysfs.path()), hwloc, {}, 8);
  EXPECT_EQ(m.last_level.source, CacheInfoSource::Sysfs);
  EXPECT_EQ(m.last_level.cache.size_bytes, 32 * MiB);
  EXPECT_EQ(m.l2.cache.size_bytes, 2 * MiB);
  ASSERT_EQ(m.warnings.size(), 3u);
  EXPECT_EQ(m.warnings[0], "L1: sysfs says 32 KiB, hwloc says 48 KiB; weft uses sysfs's");
  EXPECT_EQ(m.warnings[1], "L2: sysfs says 2 MiB, hwloc says 1 MiB; weft uses sysfs's");
  EXPECT_EQ(m.warnings[2],
            "the machine's L3 is implausible (hwloc says 508 MiB for 1 core; a real processor "
            "has at most 32 MiB per core): weft uses sysfs's 32 MiB");
}

// A real server's description passes: 32 MiB shared by 8 cores. Missing ways
// come from the default.
TEST(MachineCaches, AcceptsAPlausibleServer) {
  const std::vector<CacheDescription> hwloc =
      caches_from_topology(Topology::from_xml(kFixtures + "/server_l3.xml"));
  const MachineCaches m = choose_caches({}, hwloc, {}, 8);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.last_level.source, CacheInfoSource::Hwloc);
  EXPECT_EQ(m.last_level.cache.size_bytes, 32 * MiB);
  EXPECT_EQ(m.l1.cache.size_bytes, 48 * KiB);
  EXPECT_EQ(m.last_level.cache.ways, 16u);  // the XML gives none: the default's
  EXPECT_EQ(m.last_level.cache.line_bytes, 64u);
  // 64 MiB for one core is a lie.
  std::vector<CacheDescription> one_core = hwloc;
  one_core[2].cores_served = 1;
  one_core[2].size_bytes = 64 * MiB;
  EXPECT_EQ(choose_caches({}, one_core, {}, 8).last_level.source, CacheInfoSource::Default);
}

// Nothing described: the defaults, without a warning.
TEST(MachineCaches, DefaultsWithoutAnyDescription) {
  const MachineCaches m = choose_caches({}, {}, {}, 4);
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_EQ(m.l1.cache.size_bytes, 32 * KiB);
  EXPECT_EQ(m.l2.cache.size_bytes, 256 * KiB);
  EXPECT_EQ(m.last_level.cache.size_bytes, 8 * MiB);
  EXPECT_EQ(m.last_level.source, CacheInfoSource::Default);
}

}  // namespace
}  // namespace weft
