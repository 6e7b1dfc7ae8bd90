// The imbalance analyzer's parts: exact LRU behaviour of the simulated
// caches, and the per-segment edge and miss counts of ImbalanceCounts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "analyzers/imbalance/cache_simulator.h"
#include "analyzers/imbalance/imbalance_counts.h"

namespace weft {
namespace {

// One set of two ways: the textbook LRU sequence.
template <class Cache>
std::vector<bool> hits_of(Cache& cache, const std::vector<uint64_t>& lines) {
  std::vector<bool> hits;
  for (uint64_t line : lines) hits.push_back(cache.access(line));
  return hits;
}

const std::vector<uint64_t> kLruSequence = {1, 2, 1, 3, 2, 1, 3, 3};
// 1 miss, 2 miss, 1 hit (1 most recent), 3 miss evicts 2, 2 miss evicts 1,
// 1 miss evicts 3, 3 miss evicts 2, 3 hit.
const std::vector<bool> kLruHits = {false, false, true, false, false, false, false, true};

TEST(PrivateCache, TwoWayLruEvictsTheLeastRecentlyUsed) {
  PrivateCache cache;
  ASSERT_TRUE(cache.configure({128, 2}, 64));
  EXPECT_EQ(hits_of(cache, kLruSequence), kLruHits);
}

TEST(SharedCache, TwoWayLruEvictsTheLeastRecentlyUsed) {
  SharedCache cache;
  ASSERT_TRUE(cache.configure({128, 2}, 64));
  EXPECT_EQ(hits_of(cache, kLruSequence), kLruHits);
}

TEST(PrivateCache, LinesMapToSetsModuloASetCountThatIsNotAPowerOfTwo) {
  // 3 sets of 1 way: lines 0 and 3 share set 0, line 1 does not.
  PrivateCache cache;
  ASSERT_TRUE(cache.configure({3 * 64, 1}, 64));
  EXPECT_EQ(hits_of(cache, {0, 1, 0, 3, 1, 0}),
            (std::vector<bool>{false, false, true, false, true, false}));
}

TEST(PrivateCache, AbsentLevelMissesEverything) {
  PrivateCache cache;
  EXPECT_FALSE(cache.configure({0, 0}, 64));
  EXPECT_EQ(hits_of(cache, {5, 5}), (std::vector<bool>{false, false}));
}

ImbalanceConfig small_config() {
  ImbalanceConfig config;
  config.max_threads = 4;
  config.cache.line_bytes = 64;
  config.cache.levels[0] = {2 * 64, 2};    // L1: 2 lines
  config.cache.levels[1] = {8 * 64, 8};    // L2: 8 lines
  config.cache.levels[2] = {64 * 64, 16};  // LLC: 64 lines
  return config;
}

TEST(ImbalanceCounts, EdgesPerSegmentStartFromTheEntry) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(2);
  ASSERT_NE(t, nullptr);
  for (uint64_t pc : {0x10, 0x20, 0x10, 0x20, 0x30}) counts.block(*t, pc, 0);
  counts.close_segment(*t);
  counts.block(*t, 0x20, 5);
  counts.close_segment(*t);

  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>> edges;
  counts.for_each_edge([&](const SegmentEdge& e) {
    EXPECT_EQ(e.thread, 2u);
    edges[{e.segment, e.from, e.to}] = {e.count, e.to_instructions};
  });
  const decltype(edges) expected = {{{0, 0x00, 0x10}, {1, 0}},
                                    {{0, 0x10, 0x20}, {2, 0}},
                                    {{0, 0x20, 0x10}, {1, 0}},
                                    {{0, 0x20, 0x30}, {1, 0}},
                                    {{1, 0x00, 0x20}, {1, 5}}};
  EXPECT_EQ(edges, expected);
}

TEST(ImbalanceCounts, MissesPerLevelAreCountedPerLineTouched) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(0);
  ASSERT_NE(t, nullptr);
  // pc 1: an 8-byte access straddling lines 0 and 1 (2 cold misses at every
  // level), then lines 0 and 1 again (L1 hits).
  counts.access(*t, 1, 60, 8);
  counts.access(*t, 1, 0, 8);
  counts.access(*t, 1, 64, 8);
  // pc 2: lines 2, 3, 4 evict 0 and 1 from the 2-line L1, not from L2.
  for (uint64_t line : {2, 3, 4}) counts.access(*t, 2, line * 64, 8);
  counts.access(*t, 1, 0, 8);  // L1 miss, L2 hit
  counts.close_segment(*t);

  std::map<uint64_t, SegmentInstruction> by_pc;
  counts.for_each_instruction([&](const SegmentInstruction& r) { by_pc[r.pc] = r; });
  ASSERT_EQ(by_pc.size(), 2u);
  EXPECT_EQ(by_pc[1].executions, 4u);
  EXPECT_EQ(by_pc[1].l1_misses, 3u);
  EXPECT_EQ(by_pc[1].l2_misses, 2u);
  EXPECT_EQ(by_pc[1].llc_misses, 2u);
  EXPECT_EQ(by_pc[2].executions, 3u);
  EXPECT_EQ(by_pc[2].l1_misses, 3u);
  EXPECT_EQ(by_pc[2].l2_misses, 3u);
  EXPECT_EQ(by_pc[2].llc_misses, 3u);
}

// Set-associative LRU, the textbook way (a recency list per set).
class ReferenceLru {
 public:
  ReferenceLru(uint64_t size_bytes, uint32_t ways) : sets_(size_bytes / 64 / ways), ways_(ways) {}
  bool access(uint64_t line) {
    std::vector<uint64_t>& set = lines_[line % sets_];
    auto it = std::find(set.begin(), set.end(), line);
    const bool hit = it != set.end();
    if (hit) set.erase(it);
    set.insert(set.begin(), line);
    if (set.size() > ways_) set.pop_back();
    return hit;
  }

 private:
  uint64_t sets_;
  uint32_t ways_;
  std::map<uint64_t, std::vector<uint64_t>> lines_;
};

// Streams that touch lines several times in a row (the L1 shortcut for the
// thread's latest line) mixed with random jumps and line-straddling accesses:
// per-instruction misses equal the reference model's at every level.
TEST(ImbalanceCounts, MissesMatchAReferenceLruOnRandomStreams) {
  ImbalanceConfig config = small_config();
  config.cache.levels[0] = {4 * 64, 2};
  config.cache.levels[1] = {16 * 64, 4};
  ImbalanceCounts counts(config);
  ImbalanceCounts::ThreadState* t = counts.attach(0);
  ASSERT_NE(t, nullptr);
  ReferenceLru l1(4 * 64, 2), l2(16 * 64, 4), llc(64 * 64, 16);
  std::map<uint64_t, std::array<uint64_t, 4>> expected;  // pc -> executions, misses
  std::mt19937_64 rng(11);
  uint64_t address = 0;
  for (int i = 0; i < 50000; ++i) {
    const uint64_t pc = 1 + rng() % 3;
    if (rng() % 8 == 0) address = (rng() % 200) * 16;
    const uint64_t size = rng() % 10 == 0 ? 16 : 8;
    counts.access(*t, pc, address, size);
    auto& e = expected[pc];
    ++e[0];
    for (uint64_t line = address / 64; line <= (address + size - 1) / 64; ++line) {
      if (l1.access(line)) continue;
      ++e[1];
      if (l2.access(line)) continue;
      ++e[2];
      if (!llc.access(line)) ++e[3];
    }
    address += 8;
  }
  counts.close_segment(*t);
  std::map<uint64_t, std::array<uint64_t, 4>> got;
  counts.for_each_instruction([&](const SegmentInstruction& r) {
    got[r.pc] = {r.executions, r.l1_misses, r.l2_misses, r.llc_misses};
  });
  EXPECT_EQ(got, expected);
}

TEST(ImbalanceCounts, TheLastLevelIsSharedAndPrivateLevelsAreNot) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* a = counts.attach(0);
  ImbalanceCounts::ThreadState* b = counts.attach(1);
  counts.access(*a, 1, 0, 8);  // cold everywhere
  counts.access(*b, 2, 0, 8);  // misses b's L1 and L2, hits the shared LLC
  counts.close_segment(*a);
  counts.close_segment(*b);
  std::map<uint64_t, SegmentInstruction> by_pc;
  counts.for_each_instruction([&](const SegmentInstruction& r) { by_pc[r.pc] = r; });
  EXPECT_EQ(by_pc[1].llc_misses, 1u);
  EXPECT_EQ(by_pc[2].l1_misses, 1u);
  EXPECT_EQ(by_pc[2].l2_misses, 1u);
  EXPECT_EQ(by_pc[2].llc_misses, 0u);
}

TEST(ImbalanceCounts, ThreadsBeyondTheLimitGetNoState) {
  ImbalanceCounts counts(small_config());
  EXPECT_EQ(counts.attach(4), nullptr);
  EXPECT_EQ(counts.attach(3), counts.attach(3));
}

}  // namespace
}  // namespace weft
