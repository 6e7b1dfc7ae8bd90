// The communication analyzer against a serial oracle written straight from
// the definition in docs/metrics.md, on random access sequences (including thread
// ids beyond the inline reader bitset), and on real concurrent threads whose
// counts are fixed by barriers.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <bit>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/sections/section_attribution.h"

namespace weft {
namespace {

// (pc, thread, peer) -> {comm, reuse, inval}
using Counts = std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::array<uint64_t, 3>>;
// (pc, reader, writer, distance) -> events
using Distances = std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, uint64_t>;

struct Access {
  uint32_t tid;
  bool write;
  uint64_t pc;
  uintptr_t addr;
  size_t size;
  bool release = false;  // heap memory [addr, addr + size) released
};

// The definition, one granule at a time, with std containers.
class CommunicationOracle {
 public:
  explicit CommunicationOracle(unsigned granularity) : granularity_(granularity) {}

  void apply(const Access& a) {
    if (a.release) {  // the granules entirely inside forget writer and readers
      for (uintptr_t g = (a.addr + granularity_ - 1) / granularity_;
           (g + 1) * granularity_ <= a.addr + a.size; ++g)
        granules_.erase(g);
      return;
    }
    const uintptr_t first = a.addr / granularity_;
    const uintptr_t last = (a.addr + a.size - 1) / granularity_;
    for (uintptr_t g = first; g <= last; ++g) a.write ? write(a, g) : read(a, g);
  }
  const Counts& counts() const { return counts_; }
  const Distances& distances() const { return distances_; }

 private:
  struct Granule {
    int writer = -1;
    std::set<uint32_t> readers;
  };
  void read(const Access& a, uintptr_t g) {
    Granule& s = granules_[g];
    if (s.writer < 0 || static_cast<uint32_t>(s.writer) == a.tid) return;
    auto& c = counts_[{a.pc, a.tid, static_cast<uint32_t>(s.writer)}];
    if (s.readers.insert(a.tid).second)
      c[0] += 1;
    else
      c[1] += 1;
    // CRD by an LRU stack (a different algorithm than the analyzer's): the
    // distance is the number of distinct granules above g in the pair's stack.
    const std::pair<uint32_t, uint32_t> pair{static_cast<uint32_t>(s.writer), a.tid};
    push(pair_stacks_[pair], a, g, 0);
    // The word trace: the reads whose first byte in g is g's sampled word.
    const uintptr_t first_byte = std::max<uintptr_t>(a.addr, g * granularity_);
    if (sampled_word_.sampled(first_byte, g)) push(word_stacks_[pair], a, g, kWordDistance);
  }
  void push(std::vector<uintptr_t>& stack, const Access& a, uintptr_t g, uint64_t unit) {
    auto it = std::find(stack.begin(), stack.end(), g);
    if (it != stack.end()) {
      const auto above = static_cast<uint64_t>(stack.end() - it - 1);
      distances_[{a.pc, a.tid, static_cast<uint32_t>(granules_[g].writer), above | unit}] += 1;
      stack.erase(it);
    }
    stack.push_back(g);
  }
  void write(const Access& a, uintptr_t g) {
    Granule& s = granules_[g];
    for (uint32_t r : s.readers)
      if (r != a.tid) counts_[{a.pc, a.tid, r}][2] += 1;
    if (s.writer >= 0 && static_cast<uint32_t>(s.writer) != a.tid && !s.readers.count(s.writer))
      counts_[{a.pc, a.tid, static_cast<uint32_t>(s.writer)}][2] += 1;
    s.writer = static_cast<int>(a.tid);
    s.readers.clear();
  }
  unsigned granularity_;
  SampledWord sampled_word_{static_cast<unsigned>(std::countr_zero(granularity_))};
  std::map<uintptr_t, Granule> granules_;
  Counts counts_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uintptr_t>> pair_stacks_, word_stacks_;
  Distances distances_;
};

// The analyzer's counts, its reuse memos' pending hits settled first (as
// the capture's writer does): the CRD's and the sections' counts are final too.
Counts analyzer_counts(CommunicationAnalyzer& analyzer) {
  analyzer.settle_all();
  Counts out;
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) {
    auto& v = out[{c.pc, c.thread, c.peer}];
    v[0] += c.raw;
    v[1] += c.rar;
    v[2] += c.inval;
  });
  // Drop all-zero entries (the oracle never creates them except via [] on read of nothing).
  return out;
}

Counts without_zeros(Counts c) {
  for (auto it = c.begin(); it != c.end();)
    it = (it->second == std::array<uint64_t, 3>{0, 0, 0}) ? c.erase(it) : std::next(it);
  return c;
}

struct RandomCase {
  unsigned granularity;
  unsigned threads;
  unsigned accesses;
  uint32_t seed;
};

class RandomDifferential : public ::testing::TestWithParam<RandomCase> {};

TEST_P(RandomDifferential, MatchesSerialOracle) {
  const RandomCase p = GetParam();
  std::mt19937_64 rng(p.seed);
  // A small heap buffer gives real, distinct addresses with lots of sharing.
  std::vector<unsigned char> memory(4096 + 64);
  const uintptr_t base = (reinterpret_cast<uintptr_t>(memory.data()) + 63) & ~uintptr_t{63};
  std::vector<Access> accesses;
  const size_t sizes[] = {1, 2, 4, 8, 16, 32, 100};
  for (unsigned i = 0; i < p.accesses; ++i) {
    Access a;
    a.tid = static_cast<uint32_t>(rng() % p.threads);
    a.write = rng() % 4 == 0;
    a.pc = 0x1000 + (rng() % 8) * 4;
    a.size = sizes[rng() % 7];
    // Now and then a heap block is released (docs/metrics.md, "Freed memory").
    a.release = rng() % 64 == 0;
    if (a.release) a.size = 1 + rng() % 600;
    a.addr = base + rng() % (4096 - a.size);
    accesses.push_back(a);
  }
  CommunicationConfig config;
  config.granularity = p.granularity;
  config.max_threads = std::max(128u, p.threads);
  CommunicationAnalyzer analyzer(config);
  CommunicationReuseDistance crd({config.max_threads, 0});
  analyzer.connect(&crd, nullptr);
  CommunicationOracle oracle(p.granularity);
  for (const Access& a : accesses) {
    auto* t = analyzer.attach(a.tid);
    ASSERT_NE(t, nullptr);
    if (a.release)
      analyzer.forget(a.addr, a.addr + a.size);
    else
      a.write ? analyzer.write(*t, a.pc, a.addr, a.size) : analyzer.read(*t, a.pc, a.addr, a.size);
    oracle.apply(a);
  }
  EXPECT_EQ(without_zeros(analyzer_counts(analyzer)), without_zeros(oracle.counts()));
  EXPECT_EQ(analyzer.dropped(), 0u);
  Distances distances;
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
    distances[{r.pc, r.reader, r.writer, r.distance}] += r.count;
  });
  EXPECT_EQ(distances, oracle.distances());
  EXPECT_EQ(crd.dropped(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Sequences, RandomDifferential,
    ::testing::Values(RandomCase{1, 4, 20000, 1}, RandomCase{8, 4, 20000, 2},
                      RandomCase{64, 8, 20000, 3}, RandomCase{4096, 8, 5000, 4},
                      RandomCase{8, 46, 30000, 5}, RandomCase{8, 47, 30000, 6},
                      RandomCase{64, 100, 40000, 7}, RandomCase{8, 300, 40000, 8},
                      RandomCase{16, 1024, 60000, 9}, RandomCase{64, 2, 20000, 10}),
    [](const ::testing::TestParamInfo<RandomCase>& info) {
      return "g" + std::to_string(info.param.granularity) + "_t" +
             std::to_string(info.param.threads) + "_seed" + std::to_string(info.param.seed);
    });

// Streams of reads in runs (one thread, one instruction, consecutive
// addresses), as loops make them: most reuses repeat the thread's previous
// one and are counted by the fast path's ReuseMemo. Counts, distances and the
// per-section totals (sections closed every few runs) must still be exactly
// the definition's.
TEST(CommunicationAnalyzer, RepeatedReusesCountedInlineMatchTheOracle) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    const unsigned granularity = seed % 2 ? 64 : 8;
    const unsigned threads = seed <= 4 ? 4 : 50;  // 50: also readers beyond the inline bitset
    std::vector<unsigned char> memory(8192 + 64);
    const uintptr_t base = (reinterpret_cast<uintptr_t>(memory.data()) + 63) & ~uintptr_t{63};
    std::vector<Access> accesses;
    while (accesses.size() < 40000) {
      Access a;
      a.tid = static_cast<uint32_t>(rng() % threads);
      a.write = rng() % 5 == 0;
      a.pc = 0x1000 + (rng() % 4) * 4;
      a.size = 8;
      uintptr_t offset = (rng() % 1000) * 8;
      const unsigned run = 1 + static_cast<unsigned>(rng() % 40);
      for (unsigned i = 0; i < run && offset + 8 <= 8192; ++i, offset += 8) {
        a.addr = base + offset;
        accesses.push_back(a);
      }
    }
    CommunicationConfig config;
    config.granularity = granularity;
    config.max_threads = 64;
    CommunicationAnalyzer analyzer(config);
    CommunicationReuseDistance crd({config.max_threads, 0});
    SectionAttribution sections(config.max_threads);
    if (seed % 3 != 0) {
      analyzer.connect(&crd, nullptr, &sections);
    } else {
      analyzer.connect(nullptr, nullptr, &sections);  // without CRD: any granule repeats
    }
    CommunicationOracle oracle(granularity);
    for (size_t i = 0; i < accesses.size(); ++i) {
      const Access& a = accesses[i];
      auto* t = analyzer.attach(a.tid);
      ASSERT_NE(t, nullptr);
      a.write ? analyzer.write(*t, a.pc, a.addr, a.size) : analyzer.read(*t, a.pc, a.addr, a.size);
      oracle.apply(a);
      if (i % 997 == 0) analyzer.close_section(*t, 0x9000 + i % 3);
    }
    for (uint32_t tid = 0; tid < threads; ++tid)
      if (auto* t = analyzer.attach(tid)) analyzer.close_section(*t, 0x9100);
    const Counts expected = without_zeros(oracle.counts());
    EXPECT_EQ(without_zeros(analyzer_counts(analyzer)), expected) << "seed " << seed;
    EXPECT_EQ(analyzer.dropped(), 0u);
    // Sections partition the same events: per (thread, peer) totals agree.
    std::map<std::pair<uint32_t, uint32_t>, std::array<uint64_t, 3>> by_pair, by_sections;
    for (const auto& [key, v] : expected)
      for (int k = 0; k < 3; ++k) by_pair[{std::get<1>(key), std::get<2>(key)}][k] += v[k];
    sections.for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
      auto& v = by_sections[{tid, c.peer()}];
      v[0] += c.raw;
      v[1] += c.rar;
      v[2] += c.inval;
    });
    for (auto it = by_sections.begin(); it != by_sections.end();)
      it = it->second == std::array<uint64_t, 3>{0, 0, 0} ? by_sections.erase(it) : std::next(it);
    EXPECT_EQ(by_sections, by_pair) << "seed " << seed;
    if (seed % 3 != 0) {
      Distances distances;
      crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
        distances[{r.pc, r.reader, r.writer, r.distance}] += r.count;
      });
      EXPECT_EQ(distances, oracle.distances()) << "seed " << seed;
      // Section distance histograms pool the same events.
      std::map<std::pair<uint32_t, uint64_t>, uint64_t> pooled, section_pooled;
      for (const auto& [key, n] : oracle.distances())
        pooled[{std::get<1>(key), std::get<3>(key)}] += n;
      sections.for_each_distance([&](uint32_t tid, const PcWriterDistanceCount& d) {
        if (d.count) section_pooled[{tid, d.key.distance}] += d.count;
      });
      EXPECT_EQ(section_pooled, pooled) << "seed " << seed;
    }
  }
}

// A loop that reads two arrays of one writer in turn (a distance between a
// point and a centre, both written by the main thread): without CRD, after
// each instruction's first reuse every further read is counted inline, by
// the memo entry of its own instruction, and the counts are exact.
TEST(CommunicationAnalyzer, InterleavedStreamsOfOneWriterCountedInline) {
  CommunicationConfig config;
  config.granularity = 64;
  config.max_threads = 4;
  CommunicationAnalyzer analyzer(config);
  SectionAttribution sections(config.max_threads);
  analyzer.connect(nullptr, nullptr, &sections);
  alignas(64) static float points[1024], centre[32];
  auto* main_thread = analyzer.attach(0);
  auto* worker = analyzer.attach(1);
  const auto at = [](const float* p) { return reinterpret_cast<uintptr_t>(p); };
  for (const float& x : points) analyzer.write(*main_thread, 0x10, at(&x), sizeof x);
  for (const float& x : centre) analyzer.write(*main_thread, 0x14, at(&x), sizeof x);
  constexpr uint64_t kPointPc = 0x100, kCentrePc = 0x104;
  uint64_t slow = 0;
  for (int point = 0; point < 32; ++point) {
    for (int d = 0; d < 32; ++d) {
      if (!CommunicationAnalyzer::read_fast(*worker, kPointPc, at(&points[point * 32 + d]), 4)) {
        ++slow;
        analyzer.read_slow(*worker, kPointPc, at(&points[point * 32 + d]), 4);
      }
      if (!CommunicationAnalyzer::read_fast(*worker, kCentrePc, at(&centre[d]), 4)) {
        ++slow;
        analyzer.read_slow(*worker, kCentrePc, at(&centre[d]), 4);
      }
    }
  }
  // Slow: each granule's first read (a true communication: 64 granules of
  // points, 2 of centre) and the first reuse of each instruction (point 0,
  // d = 1); with one memo entry every read would be slow.
  EXPECT_EQ(slow, 64u + 2u + 2u);
  Counts counts;
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) {
    counts[{c.pc, c.thread, c.peer}] = {c.raw, c.rar, c.inval};
  });
  const Counts expected = {{{kPointPc, 1, 0}, {64, 1024 - 64, 0}},
                           {{kCentrePc, 1, 0}, {2, 1024 - 2, 0}}};
  EXPECT_EQ(counts, expected);
  analyzer.close_section(*worker, 0x9000);
  uint64_t section_rar = 0;
  sections.for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
    if (tid == 1) section_rar += c.rar;
  });
  EXPECT_EQ(section_rar, 2048u - 66u);
}

// Everything a communication analyzer with sampled CRD and sections counted.
struct SampledCrdResults {
  Counts counts;
  Distances distances;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, uint64_t> section_distances;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> section_reuses;
  bool operator==(const SampledCrdResults&) const = default;
};

// Runs `accesses` through an analyzer with a sampled CRD (a budget of 16
// granules per reader, so that most granules leave the sample), through the
// fast paths (the reuse memo) or through the slow path only; every thread
// in a section instance whose CRD events stand for `crd_weight` each.
SampledCrdResults run_sampled_crd(const std::vector<Access>& accesses, bool fast,
                                  uint64_t* slow_reads = nullptr, uint64_t crd_weight = 1) {
  CommunicationConfig config;
  config.granularity = 64;
  config.max_threads = 8;
  CommunicationAnalyzer analyzer(config);
  CommunicationReuseDistance crd({config.max_threads, 0, 16});
  SectionAttribution sections(config.max_threads);
  analyzer.connect(&crd, nullptr, &sections);
  std::vector<bool> begun(config.max_threads);
  for (size_t i = 0; i < accesses.size(); ++i) {
    const Access& a = accesses[i];
    auto* t = analyzer.attach(a.tid);
    if (!begun[a.tid]) {
      analyzer.sample_crd_segment(*t, true, crd_weight, 1, 1);
      begun[a.tid] = true;
    }
    if (a.write) {
      analyzer.write(*t, a.pc, a.addr, a.size);
    } else if (!fast || !CommunicationAnalyzer::read_fast(*t, a.pc, a.addr, a.size)) {
      if (slow_reads) ++*slow_reads;
      analyzer.read_slow(*t, a.pc, a.addr, a.size);
    }
    if (i % 4999 == 4998) analyzer.close_section(*t, 0x9000 + i % 3);
  }
  for (uint32_t tid = 0; tid < config.max_threads; ++tid)
    analyzer.close_section(*analyzer.attach(tid), 0x9100);
  EXPECT_EQ(analyzer.dropped(), 0u);
  SampledCrdResults r;
  r.counts = without_zeros(analyzer_counts(analyzer));
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& d) {
    if (d.count) r.distances[{d.pc, d.reader, d.writer, d.distance}] += d.count;
  });
  sections.for_each_distance([&](uint32_t tid, const PcWriterDistanceCount& d) {
    if (d.count)
      r.section_distances[{tid, static_cast<uint32_t>(d.key.pc_writer & 0xffff), d.key.distance}] +=
          d.count;
  });
  sections.for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
    if (c.rar) r.section_reuses[{tid, c.peer()}] += c.rar;
  });
  return r;
}

// A loop body that reads more instructions' worth of another thread's data
// than the memo has entries (streamcluster's gain loop: two instructions of
// the distance 32 times each, nine others once per point). Kept by use, the
// memo keeps the distance's two entries and five of the nine, and the other
// four take turns in the last entry: four reads per pass leave the inline
// path, where evicting the oldest entry evicted each of the eleven before
// its next read (eleven per pass).
TEST(CommunicationAnalyzer, ALoopBodyLongerThanTheMemoKeepsMostOfItsEntries) {
  CommunicationConfig config;
  config.granularity = 64;
  config.max_threads = 2;
  CommunicationAnalyzer analyzer(config);
  alignas(64) static float record[9 * 16], point[32], centre[32];
  auto* main_thread = analyzer.attach(0);
  auto* worker = analyzer.attach(1);
  const auto at = [](const float* p) { return reinterpret_cast<uintptr_t>(p); };
  for (const float* data : {+record, +point, +centre})
    for (int i = 0; i < (data == record ? 9 * 16 : 32); ++i)
      analyzer.write(*main_thread, 0x10, at(&data[i]), 4);
  uint64_t slow = 0;
  const auto read = [&](uint64_t pc, const float* x) {
    if (CommunicationAnalyzer::read_fast(*worker, pc, at(x), 4)) return;
    ++slow;
    analyzer.read_slow(*worker, pc, at(x), 4);
  };
  const auto pass = [&] {
    for (int k = 0; k < 5; ++k) read(0x200 + 4 * k, &record[16 * k]);
    for (int d = 0; d < 32; ++d) {
      read(0x100, &point[d]);
      read(0x104, &centre[d]);
    }
    for (int k = 5; k < 9; ++k) read(0x200 + 4 * k, &record[16 * k]);
  };
  for (int warm = 0; warm < 4; ++warm) pass();  // first reads, and the memo settles
  slow = 0;
  for (int p = 0; p < 100; ++p) pass();
  EXPECT_EQ(slow, 400u);
}

// A gain loop as streamcluster's: each worker reads, for each of its
// points, the point's 32 floats and a centre's in turn (both the main
// thread's), so one pair alternates two granules. With a sampled CRD the
// memo keeps the pair's two latest granules: a re-read of the second is
// distance 1, counted inline, and the counts stay exactly the slow path's.
TEST(CommunicationAnalyzer, SampledCrdAlternationCountedInlineMatchesTheSlowPath) {
  alignas(64) static float points[4096 * 32], centres[1024 * 32];
  const auto at = [](const float* p) { return reinterpret_cast<uintptr_t>(p); };
  // A centre whose granule joined the sample would take the slow path at
  // each of its reads: the centres read are among those whose granules
  // stay out of it at every rate (out at 1/2 is out at any lower rate;
  // which ones they are depends on where the loader put the arrays: about
  // a third of the centres).
  std::vector<int> unsampled_centres;
  for (int c = 0; c < 1024; ++c)
    if (!granule_in_crd_sample(at(&centres[c * 32]) >> 6, 1) &&
        !granule_in_crd_sample(at(&centres[c * 32 + 16]) >> 6, 1))
      unsampled_centres.push_back(c);
  ASSERT_FALSE(unsampled_centres.empty());
  std::vector<Access> accesses;
  for (const float& x : points) accesses.push_back({0, true, 0x10, at(&x), 4});
  for (const float& x : centres) accesses.push_back({0, true, 0x14, at(&x), 4});
  std::mt19937_64 rng(7);
  for (int centre = 0; centre < 4; ++centre) {
    for (uint32_t worker = 1; worker <= 2; ++worker) {
      const int c = unsampled_centres[rng() % unsampled_centres.size()];
      for (int p = 0; p < 2048; ++p) {
        const int point = static_cast<int>(worker - 1) * 2048 + p;
        for (int d = 0; d < 32; ++d) {
          accesses.push_back({worker, false, 0x100, at(&points[point * 32 + d]), 4});
          accesses.push_back({worker, false, 0x104, at(&centres[c * 32 + d]), 4});
        }
        // Now and then a read of another pair between them (the worker's
        // own reads of its neighbour's point).
        if (p % 97 == 0) {
          accesses.push_back({3 - worker, true, 0x20, at(&points[point * 32]), 4});
          accesses.push_back({worker, false, 0x108, at(&points[point * 32]), 4});
        }
      }
    }
  }
  uint64_t slow = 0;
  const SampledCrdResults fast = run_sampled_crd(accesses, true, &slow);
  EXPECT_EQ(fast, run_sampled_crd(accesses, false));
  // Reads: 2 workers x 4 centres x 2048 points x 64 = 1,048,576. Each point
  // leaves the memo at each of its 2 granules (the point's and the centre's
  // next granule, and the re-read of the point after the pair changed):
  // about 4 slow reads per point, not 64.
  EXPECT_LT(slow, 2u * 4u * 2048u * 6u);
  uint64_t distance_one = 0;
  for (const auto& [key, n] : fast.distances)
    if (std::get<3>(key) == 1) distance_one += n;
  EXPECT_GT(distance_one, 2u * 4u * 2048u * 56u);
}

// A loop that reads the data of two writers in turn (a reader combining its
// neighbours' halves, a halo beside a block): each pair's latest granule
// is a repeat at distance 0 in its own pair's trace, whatever the other
// pair did, so the memo keeps both pairs' latest granules and the re-reads
// are counted inline, exactly as the slow path counts them.
TEST(CommunicationAnalyzer, SampledCrdKeepsTwoWritersLatestGranules) {
  alignas(64) static double left[4096 * 8], right[4096 * 8];
  const auto at = [](const double* p) { return reinterpret_cast<uintptr_t>(p); };
  std::vector<Access> accesses;
  for (const double& x : left) accesses.push_back({0, true, 0x10, at(&x), 8});
  for (const double& x : right) accesses.push_back({2, true, 0x14, at(&x), 8});
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < 4096 * 8; ++i) {
      accesses.push_back({1, false, 0x100, at(&left[i]), 8});
      accesses.push_back({1, false, 0x104, at(&right[i]), 8});
    }
  uint64_t slow = 0;
  const SampledCrdResults fast = run_sampled_crd(accesses, true, &slow);
  EXPECT_EQ(fast, run_sampled_crd(accesses, false));
  // 131,072 reads: 2 arrays x 4096 granules x 2 passes x 8 doubles. Each
  // pass's first read of a granule takes the slow path (16,384), and in
  // the first pass its second too, after a first read that was a true
  // communication (8,192); the rest are memo hits, but for the granules in
  // the CRD sample (16 granules' budget: a few dozen granules, which ones
  // depends on where the loader put the arrays). With one pair's latest
  // granule only, every read took the slow path.
  constexpr uint64_t kFirstReads = 2 * 4096 * 2 + 2 * 4096;
  EXPECT_GE(slow, kFirstReads);
  EXPECT_LT(slow, kFirstReads + 1024) << slow;
  // Every read but each pass's first of a granule repeats it: distance 0.
  uint64_t distance_zero = 0;
  for (const auto& [key, n] : fast.distances)
    if (std::get<3>(key) == 0) distance_zero += n;
  EXPECT_EQ(distance_zero, 2u * 4096u * 2u * 7u);
}

// Random reads in runs that alternate granules, of several writers, with
// writes between them: the sampled CRD's counts through the memo are the
// slow path's.
TEST(CommunicationAnalyzer, SampledCrdMemoMatchesTheSlowPathOnRandomAlternations) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<unsigned char> memory(64 * 512 + 64);
    const uintptr_t base = (reinterpret_cast<uintptr_t>(memory.data()) + 63) & ~uintptr_t{63};
    std::vector<Access> accesses;
    for (uintptr_t offset = 0; offset < 64 * 512; offset += 8)
      accesses.push_back({static_cast<uint32_t>(offset / 64 % 3), true, 0x10, base + offset, 8});
    while (accesses.size() < 60000) {
      const uint32_t tid = static_cast<uint32_t>(rng() % 4);
      if (rng() % 10 == 0) {
        accesses.push_back({tid, true, 0x20, base + (rng() % 4096) * 8, 8});
        continue;
      }
      // Two (sometimes three) granules read in turn by one or two instructions.
      const uintptr_t a = (rng() % 512) * 64, b = (rng() % 512) * 64, c = (rng() % 512) * 64;
      const unsigned run = 1 + static_cast<unsigned>(rng() % 40);
      const bool three = rng() % 4 == 0;
      const uint64_t pc_a = 0x100, pc_b = rng() % 2 ? 0x100 : 0x104;
      for (unsigned i = 0; i < run; ++i) {
        accesses.push_back({tid, false, pc_a, base + a + (i % 8) * 8, 8});
        accesses.push_back({tid, false, pc_b, base + b + (i % 8) * 8, 8});
        if (three && i % 3 == 0) accesses.push_back({tid, false, 0x108, base + c, 8});
      }
    }
    EXPECT_EQ(run_sampled_crd(accesses, true), run_sampled_crd(accesses, false)) << "seed " << seed;
    // In a section instance the sample selected (docs/metrics.md, "Sampled
    // section instances") every distance count, the memo's included, is 4
    // times the unweighted one; the reuse counts are the same.
    SampledCrdResults weighted = run_sampled_crd(accesses, true, nullptr, 4);
    EXPECT_EQ(weighted, run_sampled_crd(accesses, false, nullptr, 4)) << "seed " << seed;
    SampledCrdResults once = run_sampled_crd(accesses, false);
    EXPECT_EQ(weighted.counts, once.counts);
    EXPECT_EQ(weighted.section_reuses, once.section_reuses);
    for (auto* counts : {&once.distances, &weighted.distances}) EXPECT_FALSE(counts->empty());
    for (auto& [key, n] : once.distances) n *= 4;
    for (auto& [key, n] : once.section_distances) n *= 4;
    EXPECT_EQ(weighted.distances, once.distances) << "seed " << seed;
    EXPECT_EQ(weighted.section_distances, once.section_distances) << "seed " << seed;
  }
}

TEST(CommunicationAnalyzer, AttachRefusesThreadsBeyondTheLimit) {
  CommunicationConfig config;
  config.max_threads = 4;
  CommunicationAnalyzer analyzer(config);
  EXPECT_NE(analyzer.attach(3), nullptr);
  EXPECT_EQ(analyzer.attach(4), nullptr);
}

TEST(CommunicationAnalyzer, SpanningAccessTouchesEveryGranule) {
  CommunicationConfig config;
  config.granularity = 8;
  CommunicationAnalyzer analyzer(config);
  alignas(64) static uint64_t data[8];
  auto* w = analyzer.attach(0);
  auto* r = analyzer.attach(1);
  analyzer.write(*w, 0x10, reinterpret_cast<uintptr_t>(data), sizeof data);
  analyzer.read(*r, 0x20, reinterpret_cast<uintptr_t>(data) + 4, 16);  // granules 0,1,2
  uint64_t comm = 0;
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) { comm += c.raw; });
  EXPECT_EQ(comm, 3u);
}

// Freed memory: only the granules lying entirely inside the released block
// forget their writer and readers; the ones it shares with its neighbours
// keep theirs.
TEST(CommunicationAnalyzer, ForgetCleansOnlyTheGranulesEntirelyInside) {
  CommunicationConfig config;
  config.granularity = 64;
  CommunicationAnalyzer analyzer(config);
  alignas(64) static uint64_t data[4 * 8];
  const auto base = reinterpret_cast<uintptr_t>(data);
  auto* w = analyzer.attach(0);
  auto* r = analyzer.attach(1);
  analyzer.write(*w, 0x10, base, sizeof data);
  analyzer.forget(base + 8, base + 192);  // granules 1 and 2 inside, 0 and 3 not
  analyzer.read(*r, 0x20, base, sizeof data);
  analyzer.write(*r, 0x30, base, sizeof data);
  std::array<uint64_t, 3> totals{};
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) {
    totals[0] += c.raw;
    totals[1] += c.rar;
    totals[2] += c.inval;
  });
  // Granules 0 and 3: read once each (raw), then invalidated by the write.
  EXPECT_EQ(totals, (std::array<uint64_t, 3>{2, 0, 2}));
}

// The shadow visit behind forget: cells of whole granules only, no chunk
// allocated for memory never touched, and in a large range only the pages
// of cells that were populated.
// The chunk cache's entries: the main thread's stack (chunk 0x7fffff) and
// the seven chunks below the libraries (0x7ffff1-0x7ffff7, where `setarch
// -R` maps the first large blocks) take eight different entries; on the
// chunk's low bits the stack and 0x7ffff7 shared one, and an OpenMP loop
// reading a shared variable on the stack beside such an array missed the
// cache on every read.
TEST(ShadowChunkCache, TheStackAndTheBlocksBelowTheLibrariesTakeDifferentEntries) {
  std::set<unsigned> entries;
  entries.insert(ShadowChunkCache::slot(0x7fffff));
  for (uintptr_t chunk = 0x7ffff1; chunk <= 0x7ffff7; ++chunk)
    entries.insert(ShadowChunkCache::slot(chunk));
  EXPECT_EQ(entries.size(), ShadowChunkCache::kEntries);
}

TEST(ShadowTable, CellsInsideARangeAreVisitedWithoutAllocating) {
  ShadowMemory shadow(6);
  auto chunks = [&] {
    size_t n = 0;
    shadow.for_each_chunk([&](uintptr_t, const std::atomic<uint64_t>*, size_t) { ++n; });
    return n;
  };
  constexpr uintptr_t kAddress = uintptr_t{1} << 40;  // never dereferenced
  size_t visited = 0;
  auto count = [&](std::atomic<uint64_t>*, size_t n) { visited += n; };
  shadow.for_each_cell_inside(kAddress, kAddress + (uintptr_t{64} << 20), count);
  EXPECT_EQ(visited, 0u);
  EXPECT_EQ(chunks(), 0u);

  shadow.word(kAddress + 4096)->store(1);  // one granule touched: its chunk exists
  ASSERT_EQ(chunks(), 1u);
  shadow.for_each_cell_inside(kAddress + 1, kAddress + 4096 + 64, count);  // partial first granule
  EXPECT_EQ(visited, 4096u / 64);
  visited = 0;
  // 64 MiB of program memory: 2^20 cells; 2^18 of them (512 pages) in the
  // chunk that exists, of which one page was populated (unless the kernel
  // backs anonymous memory with huge pages unasked).
  shadow.for_each_cell_inside(kAddress, kAddress + (uintptr_t{64} << 20), count);
  EXPECT_EQ(chunks(), 1u);
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string policy((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (policy.find("[always]") != std::string::npos) GTEST_SKIP() << "huge pages always";
  EXPECT_EQ(visited, 4096u / sizeof(uint64_t));
}

// Real threads: phase 1 each writes its block, phase 2 each reads its right
// neighbour's block twice, with more threads than the inline bitset holds.
TEST(CommunicationAnalyzer, ConcurrentRingIsExact) {
  constexpr unsigned kThreads = 70;
  constexpr unsigned kWords = 256;  // per thread, 8-byte words
  for (unsigned granularity : {8u, 64u}) {
    CommunicationConfig config;
    config.granularity = granularity;
    config.max_threads = 128;
    CommunicationAnalyzer analyzer(config);
    std::vector<uint64_t> data(kThreads * kWords + 8);
    const uintptr_t base = (reinterpret_cast<uintptr_t>(data.data()) + 63) & ~uintptr_t{63};
    std::barrier sync(kThreads);
    std::vector<std::thread> team;
    for (unsigned i = 0; i < kThreads; ++i) {
      team.emplace_back([&, i] {
        auto* t = analyzer.attach(i);
        for (unsigned w = 0; w < kWords; ++w)
          analyzer.write(*t, 0x100, base + (i * kWords + w) * 8, 8);
        sync.arrive_and_wait();
        const unsigned right = (i + 1) % kThreads;
        for (int pass = 0; pass < 2; ++pass)
          for (unsigned w = 0; w < kWords; ++w)
            analyzer.read(*t, 0x200, base + (right * kWords + w) * 8, 8);
      });
    }
    for (auto& th : team) th.join();
    std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> matrix;
    analyzer.settle_all();
    analyzer.for_each_count([&](const PcCommunication& c) {
      auto& m = matrix[{c.peer, c.thread}];
      m.first += c.raw;
      m.second += c.rar;
    });
    const uint64_t granules = kWords * 8 / granularity;
    ASSERT_EQ(matrix.size(), kThreads);
    for (unsigned reader = 0; reader < kThreads; ++reader) {
      const unsigned writer = (reader + 1) % kThreads;
      EXPECT_EQ((matrix[{writer, reader}].first), granules) << granularity;
      EXPECT_EQ((matrix[{writer, reader}].second), 2 * kWords - granules) << granularity;
    }
  }
}

// Many concurrent readers of one writer's data: every reader is counted once
// as communication per granule, whatever the interleaving.
TEST(CommunicationAnalyzer, ConcurrentReadersOfOneWriter) {
  constexpr unsigned kThreads = 96;
  CommunicationConfig config;
  config.granularity = 64;
  config.max_threads = 128;
  CommunicationAnalyzer analyzer(config);
  alignas(64) static uint64_t shared[64];
  auto* main_state = analyzer.attach(0);
  analyzer.write(*main_state, 0x1, reinterpret_cast<uintptr_t>(shared), sizeof shared);
  std::vector<std::thread> team;
  std::barrier sync(kThreads);
  for (unsigned i = 1; i <= kThreads; ++i) {
    team.emplace_back([&, i] {
      auto* t = analyzer.attach(i);
      sync.arrive_and_wait();
      for (int pass = 0; pass < 3; ++pass)
        for (unsigned w = 0; w < 64; ++w)
          analyzer.read(*t, 0x2, reinterpret_cast<uintptr_t>(&shared[w]), 8);
    });
  }
  for (auto& th : team) th.join();
  std::vector<std::pair<uint64_t, uint64_t>> per_reader(kThreads + 1);
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) {
    ASSERT_EQ(c.peer, 0u);
    per_reader[c.thread].first += c.raw;
    per_reader[c.thread].second += c.rar;
  });
  for (unsigned i = 1; i <= kThreads; ++i) {
    EXPECT_EQ(per_reader[i].first, 8u) << i;            // 512 bytes = 8 lines
    EXPECT_EQ(per_reader[i].second, 3 * 64 - 8u) << i;  // every other read reuses
  }
  // The next write by thread 0 invalidates all 96 readers on each of the 8 lines.
  analyzer.write(*main_state, 0x3, reinterpret_cast<uintptr_t>(shared), sizeof shared);
  uint64_t inval = 0;
  analyzer.settle_all();
  analyzer.for_each_count([&](const PcCommunication& c) { inval += c.inval; });
  EXPECT_EQ(inval, 8u * kThreads);
}

// A writer (thread 0) and a reader (thread 1) at line granularity, with
// the CRD connected and its instances sampled 1 in `segment_sampling`
// (stretches of `stretch_events` reads; 0: instances whole).
struct SampledCrdPair {
  static CommunicationConfig communication_config() {
    CommunicationConfig config;
    config.granularity = 64;
    config.max_threads = 4;
    return config;
  }
  static CrdConfig crd_config(uint32_t segment_sampling, uint64_t stretch_events) {
    CrdConfig config;
    config.max_threads = communication_config().max_threads;
    config.max_granules_per_pair = 0;
    config.segment_sampling = segment_sampling;
    config.stretch_events = stretch_events;
    return config;
  }
  SampledCrdPair(uint32_t segment_sampling, uint64_t stretch_events)
      : analyzer(communication_config()), crd(crd_config(segment_sampling, stretch_events)) {
    analyzer.connect(&crd, nullptr);
    writer = analyzer.attach(0);
    reader = analyzer.attach(1);
  }
  // The CRD's line distances (its word trace's left out).
  Distances line_distances() const {
    Distances out;
    crd.for_each_distance([&](const CommunicationReuseDistance::Record& d) {
      if (!(d.distance & kWordDistance)) out[{d.pc, d.reader, d.writer, d.distance}] += d.count;
    });
    return out;
  }
  CommunicationAnalyzer analyzer;
  CommunicationReuseDistance crd;
  CommunicationAnalyzer::ThreadState* writer = nullptr;
  CommunicationAnalyzer::ThreadState* reader = nullptr;
};

// Stretches of long instances (docs/metrics.md): a reader re-reads the 32
// granules its writer wrote, 1192 times over, in one instance. Each re-read
// is at distance 31. With stretches of 512 reads, the first 32768 are
// analyzed whole; then every cycle of 512 skips, warms up on 64 and counts
// 64 reads as 8 each, the counted ones in the middle eighth of each 512
// after the whole part. The instance ends half-way into its eleventh
// cycle, in the middle of its counted stretch: the counts come out exact,
// as without stretches. Every reuse takes the slow path here (every
// granule is in the long-reuse sample), so the clock is exact.
TEST(CommunicationAnalyzer, StretchesOfALongInstanceCountEachReuseAsOftenAsItHappened) {
  alignas(64) static uint64_t data[32 * 8];
  const auto at = [](const uint64_t* p) { return reinterpret_cast<uintptr_t>(p); };
  constexpr uint64_t kPc = 0x200;
  // The whole part (kCrdWholeStretchCycles cycles of 512) and 10.5 cycles.
  constexpr uint64_t kReads = kCrdWholeStretchCycles * 512 + 21 * 256;
  struct Result {
    Distances distances;
    uint64_t skipped = 0;
  };
  const auto run = [&](uint64_t stretch_events) {
    SampledCrdPair pair(8, stretch_events);
    CommunicationAnalyzer& analyzer = pair.analyzer;
    for (int g = 0; g < 32; ++g) analyzer.write(*pair.writer, 0x100, at(&data[g * 8]), 8);
    analyzer.sample_crd_segment(*pair.reader, true, 1, 1, 1);
    for (uint64_t i = 0; i < kReads; ++i)
      analyzer.read(*pair.reader, kPc, at(&data[i % 32 * 8]), 8);
    analyzer.close_section(*pair.reader, 0x9000);
    EXPECT_EQ(analyzer.dropped(), 0u);
    return Result{pair.line_distances(), pair.crd.skipped_stretches()};
  };
  const Distances expected = {{{kPc, 1, 0, 31}, kReads - 32}};
  const Result whole = run(0);
  EXPECT_EQ(whole.distances, expected);
  EXPECT_EQ(whole.skipped, 0u);
  const Result stretched = run(512);
  EXPECT_EQ(stretched.distances, expected);
  // The first skipped stretch, and one after each of the 10 whole cycles.
  EXPECT_EQ(stretched.skipped, 11u);
}

// A line read word by word in instances the CRD skips, where the long
// sample traces every line: only the read that records something new in
// it (the line's first word, which leaves the line in the memo) goes to
// the slow path, the other 7 words are the memo's (a repeat of the long
// sample's latest granule changes no distance: none came between; every
// word went to the slow path before). 24 instances read the writer's 32 lines, 8 words each,
// sampled 1 in 4 past the first 8 (warm-up at k % 4 == 2, counted 4 times at 3). The distances are
// --exact's: 7 of each line's reads at 0 (the word before), its first at 31 in every instance after
// the first; the first instance's first reads of the lines are true communication.
TEST(CommunicationAnalyzer, ALineReadWordByWordInASkippedInstanceTakesOneSlowRead) {
  alignas(64) static uint64_t data[32 * 8];
  const auto at = [](const uint64_t* p) { return reinterpret_cast<uintptr_t>(p); };
  constexpr uint64_t kPc = 0x300;
  constexpr uint32_t kInstances = 24;
  SampledCrdPair pair(4, 0);
  CommunicationAnalyzer& analyzer = pair.analyzer;
  CommunicationAnalyzer::ThreadState* reader = pair.reader;
  for (int w = 0; w < 32 * 8; ++w) analyzer.write(*pair.writer, 0x100, at(&data[w]), 8);
  uint64_t slow_in_skipped = 0, skipped = 0;
  for (uint32_t k = 0; k < kInstances; ++k) {
    const bool sampled = k >= 8;
    const bool analyzed = !sampled || k % 4 >= 2;
    const uint64_t weight = !sampled ? 1 : k % 4 == 3 ? 4 : 0;
    analyzer.sample_crd_segment(*reader, analyzed, weight, k, k == 0 ? 0 : k - 1);
    skipped += !analyzed;
    for (int w = 0; w < 32 * 8; ++w) {
      if (CommunicationAnalyzer::read_fast(*reader, kPc, at(&data[w]), 8)) continue;
      slow_in_skipped += !analyzed;
      analyzer.read(*reader, kPc, at(&data[w]), 8);
    }
    analyzer.close_section(*reader, 0x9000);
  }
  analyzer.settle_all();
  EXPECT_EQ(analyzer.dropped(), 0u);
  EXPECT_EQ(pair.line_distances(), (Distances{{{kPc, 1, 0, 0}, kInstances * 32 * 7},
                                              {{kPc, 1, 0, 31}, (kInstances - 1) * 32}}));
  uint64_t raw = 0, rar = 0;
  analyzer.for_each_count([&](const PcCommunication& c) {
    raw += c.raw;
    rar += c.rar;
  });
  EXPECT_EQ(raw, 32u);
  EXPECT_EQ(rar, kInstances * 32 * 8 - 32);
  EXPECT_EQ(skipped, 8u);
  EXPECT_EQ(slow_in_skipped, skipped * 32);  // one per line (every word, 8 per line, before)
}

// The schedule itself: where each stretch begins and ends on the reader's
// clock, its serial (the instance's ordinal, 7, times 4096, plus the
// stretch), and what its events stand for in an instance counted 8 times.
TEST(CommunicationReuseDistance, StretchesFollowTheirCycleGrid) {
  CrdConfig config;
  config.max_threads = 2;
  config.segment_sampling = 8;
  config.stretch_events = 64;
  CommunicationReuseDistance crd(config);
  CommunicationReuseDistance::ReaderState* reader = crd.attach(0);
  ASSERT_NE(reader, nullptr);
  // The whole part: kCrdWholeStretchCycles cycles of 64 reads.
  const uint64_t kWhole = kCrdWholeStretchCycles * 64;
  EXPECT_EQ(crd.sample_segment(*reader, true, 8, 7, 5), kWhole);
  EXPECT_EQ(reader->instance_weight, 8u);
  EXPECT_EQ(reader->window_from, 5u << 12);
  bool analyzed = true;
  struct Step {
    uint64_t clock;  // where the previous stretch ended
    bool analyzed;
    uint64_t weight;
    uint64_t ends;
  };
  // Cycle grid: the whole part + 20 + 64k. A skipped stretch that ran past
  // its end (86 against 84) shortens the next cycle, not the stretches after.
  const Step steps[] = {
      {0, false, 0, 20},    {20, true, 0, 28},   {28, true, 64, 36},
      {36, false, 0, 84},   {86, true, 0, 94},   {94, true, 64, 102},
      {102, false, 0, 148}, {148, true, 0, 156}, {156, true, 64, 164},
  };
  uint32_t stretch = 0;
  for (const Step& s : steps) {
    EXPECT_EQ(crd.next_stretch(*reader, kWhole + s.clock, analyzed), kWhole + s.ends) << s.clock;
    EXPECT_EQ(analyzed, s.analyzed) << s.clock;
    EXPECT_EQ(reader->instance_weight, s.weight) << s.clock;
    EXPECT_EQ(reader->segment, (uint64_t{7} << 12) + ++stretch) << s.clock;
  }
  EXPECT_EQ(crd.skipped_stretches(), 3u);
  // A skipped stretch makes the next warm-up's serial the traced run's start.
  EXPECT_EQ(reader->traced_from, (uint64_t{7} << 12) + 8);
  // An instance without stretches (not analyzed) has none.
  EXPECT_EQ(crd.sample_segment(*reader, false, 0, 8, 7), CommunicationReuseDistance::kNoStretch);
}

}  // namespace
}  // namespace weft
