// The imbalance analyzer's parts: exact LRU behaviour of the simulated
// caches, and the per-segment edge and miss counts of ImbalanceCounts.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <utility>
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

// A spin wait: the thread spins in blocks 0x40 (reads the flag), 0x50; the
// events after each read of the flag are held back and discarded at the
// next read; after the last one the wait closes the segment, and what was
// held (the return from the barrier function, the next work) opens the
// next segment from the entry, as the releaser's does.
TEST(ImbalanceCounts, HeldEventsGoToTheSegmentTheWaitDecides) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(1);
  ASSERT_NE(t, nullptr);
  counts.block(*t, 0x10, 0);  // the section's work
  counts.access(*t, 0x11, 0x1000, 8);
  ImbalanceCounts::enter_function(*t);  // calls the barrier
  counts.block(*t, 0x40, 0);
  for (int spin = 0; spin < 3; ++spin) {
    ImbalanceCounts::hold(*t);  // a read of the flag
    counts.block(*t, 0x50, 0);
    counts.access(*t, 0x51, 0x2000, 8);
    counts.block(*t, 0x40, 0);
  }
  ImbalanceCounts::hold(*t);  // the read that saw the release
  counts.block(*t, 0x60, 0);  // the barrier returns
  ImbalanceCounts::exit_function(*t);
  counts.block(*t, 0x20, 0);  // the next work
  counts.access(*t, 0x21, 0x3000, 8);
  counts.close_segment(*t);  // the wait's part
  counts.release_held(*t);
  counts.block(*t, 0x10, 0);
  counts.close_segment(*t);

  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint64_t> edges;
  counts.for_each_edge([&](const SegmentEdge& e) { edges[{e.segment, e.from, e.to}] = e.count; });
  const decltype(edges) expected = {{{0, 0x00, 0x10}, 1},
                                    {{0, 0x10, 0x40}, 1},
                                    {{1, 0x00, 0x60}, 1},
                                    {{1, 0x00, 0x20}, 1},  // the return resumes at the entry
                                    {{1, 0x20, 0x10}, 1}};
  EXPECT_EQ(edges, expected);
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> executions;
  counts.for_each_instruction([&](const SegmentInstruction& i) {
    executions[{i.segment, i.pc}] = i.executions;
  });
  const decltype(executions) expected_executions = {{{0, 0x11}, 1}, {{1, 0x21}, 1}};
  EXPECT_EQ(executions, expected_executions);
}

// No wait after all (the watch ended on something else): the held events
// stay in the open segment.
TEST(ImbalanceCounts, HeldEventsReleasedWithoutAWaitStayInTheSegment) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(1);
  ASSERT_NE(t, nullptr);
  counts.block(*t, 0x10, 0);
  ImbalanceCounts::hold(*t);
  counts.block(*t, 0x20, 0);
  counts.block(*t, 0x30, 0);
  counts.release_held(*t);
  counts.block(*t, 0x10, 0);
  counts.close_segment(*t);
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint64_t> edges;
  counts.for_each_edge([&](const SegmentEdge& e) { edges[{e.segment, e.from, e.to}] = e.count; });
  const decltype(edges) expected = {
      {{0, 0x00, 0x10}, 1}, {{0, 0x00, 0x20}, 1}, {{0, 0x20, 0x30}, 1}, {{0, 0x30, 0x10}, 1}};
  EXPECT_EQ(edges, expected);
}

// The logged instruction records by pc (the last one of each pc).
std::map<uint64_t, SegmentInstruction> instructions_by_pc(const ImbalanceCounts& counts) {
  std::map<uint64_t, SegmentInstruction> by_pc;
  counts.for_each_instruction([&](const SegmentInstruction& r) { by_pc[r.pc] = r; });
  return by_pc;
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

  std::map<uint64_t, SegmentInstruction> by_pc = instructions_by_pc(counts);
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

// Set sampling (ImbalanceConfig::cache_sampling): on the default geometry
// (64, 512 and 8192 sets: 64 line classes), 1 in 8 classes simulated with
// each miss counted 8 times gives every instruction's misses at every level
// within 5% of the exact model's (or within 64 of a small count), on a mix
// of streams and random accesses: a stream over 4 MiB twice (L2 and L1
// misses on every line, LLC hits the second time), a stride-64 sweep of
// 96 KiB (L1 misses, L2 hits), random reads of a 2 MiB table and a 16 KiB
// array re-read (L1 hits). Executions stay exact.
TEST(ImbalanceCounts, SampledSetsGiveScaledMissesCloseToTheExactModel) {
  auto run = [](uint32_t sampling) {
    ImbalanceConfig config;
    config.max_threads = 4;
    config.cache_sampling = sampling;
    ImbalanceCounts counts(config);
    ImbalanceCounts::ThreadState* t = counts.attach(0);
    EXPECT_NE(t, nullptr);
    std::mt19937_64 rng(5);
    for (int pass = 0; pass < 2; ++pass)
      for (uint64_t a = 0; a < (4u << 20); a += 8) {
        counts.access(*t, 1, (1u << 30) + a, 8);
        if (a % 4096 == 0)
          for (uint64_t b = 0; b < 96 * 1024; b += 64) counts.access(*t, 2, (2u << 30) + b, 8);
        if (a % 64 == 0) counts.access(*t, 3, (3u << 30) + (rng() % (2u << 20)) / 8 * 8, 8);
        if (a % 128 == 0) counts.access(*t, 4, (4u << 30) + (a / 128 % 2048) * 8, 8);
      }
    counts.close_segment(*t);
    return std::make_pair(counts.cache_sampling(), instructions_by_pc(counts));
  };
  const auto [exact_rate, exact] = run(1);
  const auto [sampled_rate, sampled] = run(8);
  EXPECT_EQ(exact_rate, 1u);
  EXPECT_EQ(sampled_rate, 8u);
  ASSERT_EQ(exact.size(), 4u);
  ASSERT_EQ(sampled.size(), 4u);
  auto close = [](uint64_t got, uint64_t want) {
    const double error = std::abs(static_cast<double>(got) - static_cast<double>(want));
    return error <= 64 || error <= 0.05 * static_cast<double>(want);
  };
  for (const auto& [pc, e] : exact) {
    const SegmentInstruction& s = sampled.at(pc);
    EXPECT_EQ(s.executions, e.executions) << pc;
    EXPECT_TRUE(close(s.l1_misses, e.l1_misses))
        << pc << ": " << s.l1_misses << " vs " << e.l1_misses;
    EXPECT_TRUE(close(s.l2_misses, e.l2_misses))
        << pc << ": " << s.l2_misses << " vs " << e.l2_misses;
    EXPECT_TRUE(close(s.llc_misses, e.llc_misses))
        << pc << ": " << s.llc_misses << " vs " << e.llc_misses;
  }
  // The patterns are not trivial: each misses somewhere.
  EXPECT_GT(exact.at(1).llc_misses, 60000u);
  EXPECT_GT(exact.at(2).l1_misses, 1000u);
  EXPECT_GT(exact.at(3).l2_misses, 10000u);
}

// A geometry whose L1 has 2 sets has 2 line classes: a rate of 8 cannot be
// had, 2 is used (and reported); rate 1 is exact.
TEST(ImbalanceCounts, SamplingRateIsBoundedByTheLineClasses) {
  ImbalanceConfig config;
  config.max_threads = 1;
  config.cache.levels[0] = {2 * 64 * 2, 2};
  config.cache_sampling = 8;
  EXPECT_EQ(ImbalanceCounts(config).cache_sampling(), 2u);
  config.cache_sampling = 1;
  EXPECT_EQ(ImbalanceCounts(config).cache_sampling(), 1u);
}

// An exited thread keeps its logs only: finish_thread frees its caches and
// tables, what it logged is still read, and an event after it (a key
// destructor's access) still counts, in a table that grows again.
TEST(ImbalanceCounts, AFinishedThreadKeepsItsLogs) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(0);
  ASSERT_NE(t, nullptr);
  counts.block(*t, 0x10, 3);
  counts.access(*t, 1, 0, 8);
  counts.close_segment(*t);
  ImbalanceCounts::finish_thread(*t);
  EXPECT_FALSE(t->l1.present());
  EXPECT_EQ(t->instructions.memory_bytes(), 0u);
  EXPECT_EQ(t->edges.memory_bytes(), 0u);
  counts.access(*t, 2, 64, 8);
  counts.close_segment(*t);
  std::map<uint64_t, SegmentInstruction> by_pc = instructions_by_pc(counts);
  ASSERT_EQ(by_pc.size(), 2u);
  EXPECT_EQ(by_pc[1].executions, 1u);
  EXPECT_EQ(by_pc[1].l1_misses, 1u);
  EXPECT_EQ(by_pc[2].segment, 1u);
  EXPECT_EQ(by_pc[2].executions, 1u);
  EXPECT_EQ(by_pc[2].l1_misses, 1u);  // no L1 any more: a miss
  size_t edges = 0;
  counts.for_each_edge([&](const SegmentEdge&) { ++edges; });
  EXPECT_EQ(edges, 1u);
}

TEST(ImbalanceCounts, TheLastLevelIsSharedAndPrivateLevelsAreNot) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* a = counts.attach(0);
  ImbalanceCounts::ThreadState* b = counts.attach(1);
  counts.access(*a, 1, 0, 8);  // cold everywhere
  counts.access(*b, 2, 0, 8);  // misses b's L1 and L2, hits the shared LLC
  counts.close_segment(*a);
  counts.close_segment(*b);
  std::map<uint64_t, SegmentInstruction> by_pc = instructions_by_pc(counts);
  EXPECT_EQ(by_pc[1].llc_misses, 1u);
  EXPECT_EQ(by_pc[2].l1_misses, 1u);
  EXPECT_EQ(by_pc[2].l2_misses, 1u);
  EXPECT_EQ(by_pc[2].llc_misses, 0u);
}

// Per segment: (from, to) -> (count, to_instructions), and pc ->
// (executions, L1, L2, LLC misses).
struct SegmentCounts {
  std::map<std::pair<uint64_t, uint64_t>, std::pair<uint64_t, uint64_t>> edges;
  std::map<uint64_t, std::array<uint64_t, 4>> instructions;
  bool operator==(const SegmentCounts&) const = default;
};

// Each segment's counts as the logs give them, a repeat taking those of the
// segment it repeats (what the profile builder does).
std::map<uint32_t, SegmentCounts> expand_logs(const ImbalanceCounts& counts) {
  std::map<uint32_t, SegmentCounts> full;
  counts.for_each_edge([&](const SegmentEdge& e) {
    full[e.segment].edges[{e.from, e.to}] = {e.count, e.to_instructions};
  });
  counts.for_each_instruction([&](const SegmentInstruction& r) {
    full[r.segment].instructions[r.pc] = {r.executions, r.l1_misses, r.l2_misses, r.llc_misses};
  });
  std::map<uint32_t, SegmentCounts> out = full;
  counts.for_each_repeat([&](const SegmentRepeat& r) {
    EXPECT_LT(r.same_as, r.segment);
    EXPECT_FALSE(full.contains(r.segment)) << "segment " << r.segment << " logged twice";
    EXPECT_TRUE(full.contains(r.same_as)) << "segment " << r.same_as << " repeated, not logged";
    out[r.segment] = full[r.same_as];
  });
  return out;
}

// A loop of k iterations of blocks 0x10 -> 0x20 (block 0x20 of `size`
// instructions), loading line 0 once at pc 7.
void run_loop(ImbalanceCounts& counts, ImbalanceCounts::ThreadState& t, int k, uint64_t size = 4) {
  for (int i = 0; i < k; ++i) {
    counts.block(t, 0x10, 3);
    counts.block(t, 0x20, size);
  }
  counts.access(t, 7, 0, 8);
}

SegmentCounts loop_counts(int k, bool cold, uint64_t size = 4) {
  SegmentCounts c;
  c.edges[{0, 0x10}] = {1, 3};
  c.edges[{0x10, 0x20}] = {static_cast<uint64_t>(k), size};
  if (k > 1) c.edges[{0x20, 0x10}] = {static_cast<uint64_t>(k - 1), 3};
  c.instructions[7] = {1, cold ? 1u : 0u, cold ? 1u : 0u, cold ? 1u : 0u};
  return c;
}

// Segments with exactly the counts of an earlier one of the thread are
// logged as repeats of it (the first with those counts), whatever came in
// between; any difference, a miss or a block size alone, logs them in full.
// Expanded, every segment has its own counts.
TEST(ImbalanceCounts, SegmentsWithTheCountsOfAnEarlierOneAreRepeats) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(1);
  ASSERT_NE(t, nullptr);
  std::map<uint32_t, SegmentCounts> expected;
  auto segment = [&](int k, bool cold, uint64_t size = 4) {
    run_loop(counts, *t, k, size);
    expected[t->segment] = loop_counts(k, cold, size);
    counts.close_segment(*t);
  };
  segment(2, true);          // 0: the load misses everywhere
  segment(2, false);         // 1: only the misses differ from 0
  segment(2, false);         // 2: repeats 1
  segment(3, false);         // 3
  segment(2, false);         // 4: repeats 1
  segment(3, false);         // 5: repeats 3
  counts.close_segment(*t);  // 6: empty, logs nothing
  segment(3, false, 5);      // 7: block 0x20's size differs from 3's
  segment(2, false);         // 8: repeats 1
  segment(3, false, 5);      // 9: repeats 7

  std::vector<std::pair<uint32_t, uint32_t>> repeats;
  counts.for_each_repeat([&](const SegmentRepeat& r) {
    EXPECT_EQ(r.thread, 1u);
    repeats.emplace_back(r.segment, r.same_as);
  });
  EXPECT_EQ(repeats,
            (std::vector<std::pair<uint32_t, uint32_t>>{{2, 1}, {4, 1}, {5, 3}, {8, 1}, {9, 7}}));
  EXPECT_EQ(counts.repeated_segments(), 5u);
  EXPECT_EQ(counts.dropped(), 0u);
  EXPECT_EQ(expand_logs(counts), expected);
}

// Sampled section instances (ImbalanceConfig::segment_sampling): a segment
// of weight 0 counts its edges exactly and no access at all; a segment of
// weight other than 1 logs a SegmentMemoryWeight. The weight given for the
// next segment takes effect where that segment begins (at the close, or at
// the resume after a wait), not in the segment still open.
TEST(ImbalanceCounts, WeightedSegmentsLogTheirWeightAndUnmeasuredOnesNoAccess) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* t = counts.attach(3);
  ASSERT_NE(t, nullptr);
  auto work = [&](uint64_t line) {
    counts.block(*t, 0x10, 2);
    counts.access(*t, 0x11, line * 64, 8);
    EXPECT_TRUE(counts.access_fast(*t, 0x11, line * 64, 8));  // the same line again
    counts.block(*t, 0x20, 3);
  };
  work(100);                                   // segment 0: measured
  ImbalanceCounts::weigh_next_segment(*t, 0);  // decided for segment 1
  work(101);                                   // still segment 0
  counts.close_segment(*t);                    // segment 1 begins unmeasured
  EXPECT_EQ(t->memory_weight, 0u);
  work(102);
  ImbalanceCounts::weigh_next_segment(*t, 8);
  counts.close_segment(*t);  // segment 2 begins measured, standing for 8
  work(103);
  ImbalanceCounts::weigh_next_segment(*t, 0);
  counts.close_segment(*t);  // a close the thread waits at: segment 3 ...
  ImbalanceCounts::weigh_next_segment(*t, 1);
  ImbalanceCounts::resume_segment(*t);               // ... begins measured at the resume
  for (uint64_t line : {104, 105, 106}) work(line);  // (not a repeat of an earlier segment)
  counts.close_segment(*t);

  std::map<uint32_t, uint64_t> executions;  // by segment
  std::map<uint32_t, uint64_t> misses;
  counts.for_each_instruction([&](const SegmentInstruction& r) {
    executions[r.segment] += r.executions;
    misses[r.segment] += r.l1_misses;
  });
  // Each work() runs the instruction twice on one new line: one cold miss,
  // then a hit the fast path counts. Segment 0 ran it twice, segment 1 is
  // not counted, segment 2 once, segment 3 three times.
  EXPECT_EQ(executions, (std::map<uint32_t, uint64_t>{{0, 4}, {2, 2}, {3, 6}}));
  EXPECT_EQ(misses, (std::map<uint32_t, uint64_t>{{0, 2}, {2, 1}, {3, 3}}));
  std::map<uint32_t, uint64_t> edges;
  counts.for_each_edge([&](const SegmentEdge& e) { edges[e.segment] += e.count; });
  EXPECT_EQ(edges, (std::map<uint32_t, uint64_t>{{0, 4}, {1, 2}, {2, 2}, {3, 6}}));
  std::vector<std::pair<uint32_t, uint32_t>> weights;  // (segment, weight)
  counts.for_each_memory_weight([&](const SegmentMemoryWeight& w) {
    EXPECT_EQ(w.thread, 3u);
    weights.emplace_back(w.segment, w.weight);
  });
  EXPECT_EQ(weights, (std::vector<std::pair<uint32_t, uint32_t>>{{1, 0}, {2, 8}}));
  EXPECT_EQ(counts.unmeasured_segments(), 1u);
  EXPECT_EQ(counts.dropped(), 0u);
}

// A segment whose memory is not counted still moves its lines through the
// caches: a loop's data (X, 40 lines, in a 64-line LLC) is evicted by what
// an unmeasured segment between two of its executions reads (three rows of
// a stencil, 96 lines, each element of the rows in turn), so its next
// measured execution misses in every level, as in a recording that counts
// every segment. (Unwarmed, X stayed in the LLC: no LLC miss at all.) The
// rows' alternation is what the warm lines shortcut (an L1 of 4 ways); the
// counts after it are those of the exact lookups.
TEST(ImbalanceCounts, UnmeasuredSegmentsLeaveTheCachesAsTheProgramDoes) {
  ImbalanceConfig config = small_config();
  config.cache.levels[0] = {8 * 64, 4};                   // 2 sets of 4 ways
  config.cache.levels[1] = {32 * 64, 8};                  // 4 sets of 8
  std::map<uint64_t, std::array<uint64_t, 3>> misses[2];  // by counting, then segment
  size_t rows_records[2] = {0, 0};
  for (uint32_t between : {0u, 1u}) {
    ImbalanceCounts counts(config);
    ImbalanceCounts::ThreadState* t = counts.attach(0);
    ASSERT_NE(t, nullptr);
    // Two instructions, so that the second segment is no repeat of the first.
    auto read_x = [&](uint64_t pc) {
      for (uint64_t line = 0; line < 40; ++line)
        for (uint64_t word = 0; word < 8; ++word)
          if (!counts.access_fast(*t, pc, line * 64 + word * 8, 8))
            counts.access(*t, pc, line * 64 + word * 8, 8);
    };
    read_x(0x10);
    ImbalanceCounts::weigh_next_segment(*t, between);
    counts.close_segment(*t);
    for (uint64_t element = 0; element < 32 * 8; ++element)
      for (uint64_t row : {1000, 1100, 1200}) {
        const uint64_t addr = (row + element / 8) * 64 + element % 8 * 8;
        if (!counts.access_fast(*t, 0x20, addr, 8)) counts.access(*t, 0x20, addr, 8);
      }
    ImbalanceCounts::weigh_next_segment(*t, 1);
    counts.close_segment(*t);
    read_x(0x11);
    counts.close_segment(*t);
    counts.for_each_instruction([&](const SegmentInstruction& r) {
      if (r.pc != 0x20) misses[between][r.segment] = {r.l1_misses, r.l2_misses, r.llc_misses};
      if (r.pc == 0x20) ++rows_records[between];
    });
  }
  const std::array<uint64_t, 3> cold = {40, 40, 40};
  EXPECT_EQ(misses[1][0], cold);
  EXPECT_EQ(misses[1][2], cold);  // the rows evicted X from every level
  EXPECT_EQ(misses[0][2], misses[1][2]);
  EXPECT_EQ(rows_records[0], 0u);  // the unmeasured segment counted nothing
  EXPECT_EQ(rows_records[1], 1u);
}

// Stretches of a long segment (ImbalanceConfig::stretch_blocks): with
// instances sampled, a segment's memory is counted whole for its first
// kWholeCycles cycles of blocks, then one eighth of each cycle counts 8
// times, a hashed eighth that is not always the same one. Each iteration
// below is one block and one read of a new line (a cold miss in every
// level), by an instruction named after the iteration's eighth of its
// cycle, so the counts say which eighths were counted. 4,095 iterations
// are whole (the 4,096th block begins the first eighth), then 10 cycles of
// 64: executions and misses add up to the iterations exactly, every eighth
// counted is one of 1..7 (the one before it warms the caches), in whole
// multiples of 64 (all 8 of its iterations, times 8): the hash picks
// eighths 1, 2 (three times), 4, 6 and 7 (twice each) in the 10 cycles.
// The edges stay exact. Without instance sampling the segment is whole:
// each eighth's instruction 80 times.
TEST(ImbalanceCounts, ALongSegmentsMemoryIsCountedInHashedStretches) {
  constexpr uint64_t kCycle = 64, kWhole = ImbalanceCounts::kWholeCycles * kCycle - 1;
  constexpr uint64_t kIterations = kWhole + 10 * kCycle;
  for (uint32_t sampling : {8u, 1u}) {
    ImbalanceConfig config = small_config();
    config.segment_sampling = sampling;
    config.stretch_blocks = kCycle;
    ImbalanceCounts counts(config);
    ImbalanceCounts::ThreadState* t = counts.attach(0);
    ASSERT_NE(t, nullptr);
    for (uint64_t i = 0; i < kIterations; ++i) {
      if (!ImbalanceCounts::block_fast(*t, 0x10)) counts.block(*t, 0x10, 1);
      const uint64_t pc = i < kWhole ? 0x100 : 0x200 + (i - kWhole) % kCycle / 8;
      if (!counts.access_fast(*t, pc, (1000 + i) * 64, 8))
        counts.access(*t, pc, (1000 + i) * 64, 8);
    }
    counts.close_segment(*t);
    std::map<uint64_t, uint64_t> executions;  // by pc
    uint64_t total = 0, llc_misses = 0;
    counts.for_each_instruction([&](const SegmentInstruction& r) {
      executions[r.pc] += r.executions;
      total += r.executions;
      llc_misses += r.llc_misses;
    });
    uint64_t edges = 0;
    counts.for_each_edge([&](const SegmentEdge& e) { edges += e.count; });
    EXPECT_EQ(edges, kIterations);
    EXPECT_EQ(total, kIterations);
    EXPECT_EQ(llc_misses, kIterations);
    if (sampling == 1) {
      std::map<uint64_t, uint64_t> whole = {{0x100, kWhole}};
      for (uint64_t eighth = 0; eighth < 8; ++eighth) whole[0x200 + eighth] = 80;
      EXPECT_EQ(executions, whole);
    } else {
      EXPECT_EQ(executions, (std::map<uint64_t, uint64_t>{{0x100, kWhole},
                                                          {0x201, 64},
                                                          {0x202, 192},
                                                          {0x204, 128},
                                                          {0x206, 128},
                                                          {0x207, 128}}));
    }
  }
}

// Each thread repeats only its own segments.
TEST(ImbalanceCounts, RepeatsAreWithinAThread) {
  ImbalanceCounts counts(small_config());
  ImbalanceCounts::ThreadState* a = counts.attach(0);
  ImbalanceCounts::ThreadState* b = counts.attach(1);
  for (ImbalanceCounts::ThreadState* t : {a, b}) {
    counts.block(*t, 0x10, 1);
    counts.close_segment(*t);
  }
  EXPECT_EQ(counts.repeated_segments(), 0u);
  counts.block(*b, 0x10, 1);
  counts.close_segment(*b);
  std::vector<SegmentRepeat> repeats;
  counts.for_each_repeat([&](const SegmentRepeat& r) { repeats.push_back(r); });
  ASSERT_EQ(repeats.size(), 1u);
  EXPECT_EQ(repeats[0].thread, 1u);
  EXPECT_EQ(repeats[0].segment, 1u);
  EXPECT_EQ(repeats[0].same_as, 0u);
}

// Many segments, a few distinct ones among them, with as many records as
// span several log chunks: the expansion gives every segment's counts.
TEST(ImbalanceCounts, RepeatsOfLargeSegmentsSpanningChunks) {
  ImbalanceConfig config = small_config();
  ImbalanceCounts counts(config);
  ImbalanceCounts::ThreadState* t = counts.attach(0);
  ASSERT_NE(t, nullptr);
  // Segment kind v: a chain of 30,000 distinct blocks, then block v.
  constexpr uint64_t kBlocks = 30000;
  std::map<uint32_t, SegmentCounts> expected;
  for (int n = 0; n < 12; ++n) {
    const uint64_t v = 0x100000 + static_cast<uint64_t>(n % 3);
    SegmentCounts c;
    uint64_t previous = 0;
    for (uint64_t b = 1; b <= kBlocks; ++b) {
      counts.block(*t, b * 16, 2);
      c.edges[{previous, b * 16}] = {1, 2};
      previous = b * 16;
    }
    counts.block(*t, v, 2);
    c.edges[{previous, v}] = {1, 2};
    expected[t->segment] = c;
    counts.close_segment(*t);
  }
  EXPECT_EQ(counts.repeated_segments(), 9u);
  EXPECT_EQ(counts.dropped(), 0u);
  EXPECT_EQ(expand_logs(counts), expected);
}

// With no room to log a segment whole, no segment can be repeated: each is
// dropped, and counted so.
TEST(ImbalanceCounts, DroppedSegmentsAreNeverRepeated) {
  ImbalanceConfig config = small_config();
  config.max_log_chunks = 0;
  ImbalanceCounts counts(config);
  ImbalanceCounts::ThreadState* t = counts.attach(0);
  ASSERT_NE(t, nullptr);
  for (int n = 0; n < 3; ++n) {
    run_loop(counts, *t, 2);
    counts.close_segment(*t);
  }
  EXPECT_EQ(counts.repeated_segments(), 0u);
  EXPECT_EQ(counts.dropped(), 3u * 4u);  // 3 edges and 1 instruction each
}

TEST(ImbalanceCounts, ThreadsBeyondTheLimitGetNoState) {
  ImbalanceCounts counts(small_config());
  EXPECT_EQ(counts.attach(4), nullptr);
  EXPECT_EQ(counts.attach(3), counts.attach(3));
}

}  // namespace
}  // namespace weft
