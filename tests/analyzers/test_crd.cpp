// Communication reuse distance and sharing footprint: exact values on traces
// counted by hand, a differential test against the definition (distinct
// granules between two events, computed with a std::set) across many
// renumberings, the per-pair cap, the wiring from the communication
// analyzer, and the sets of instructions and sections of each communication
// epoch (the CRR's denominators).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/crd/reuse_sets.h"
#include "analyzers/footprint/sharing_footprint.h"
#include "support/communication_with_crd.h"

namespace weft {
namespace {

constexpr uint64_t kFirst = PairReuseTrace::kFirstEvent;
constexpr uint64_t kUnmeasured = PairReuseTrace::kUnmeasured;

// The definition: distinct granules strictly between the previous event on
// the same granule and this one.
std::vector<uint64_t> oracle_distances(const std::vector<uint64_t>& trace) {
  std::vector<uint64_t> out;
  std::map<uint64_t, size_t> last;
  for (size_t i = 0; i < trace.size(); ++i) {
    auto it = last.find(trace[i]);
    if (it == last.end()) {
      out.push_back(kFirst);
    } else {
      std::set<uint64_t> between(trace.begin() + static_cast<long>(it->second) + 1,
                                 trace.begin() + static_cast<long>(i));
      out.push_back(between.size());
    }
    last[trace[i]] = i;
  }
  return out;
}

TEST(PairReuseTrace, WriterFillsReaderReadsTwice) {
  // N crosses several renumberings (the first room is 256 times).
  for (uint64_t n : {1u, 2u, 7u, 300u, 1000u}) {
    PairReuseTrace trace(0);
    for (uint64_t g = 0; g < n; ++g) EXPECT_EQ(trace.record(100 + g), kFirst);
    for (uint64_t g = 0; g < n; ++g) EXPECT_EQ(trace.record(100 + g), n - 1) << "n=" << n;
    EXPECT_EQ(trace.distinct_granules(), n);
  }
}

TEST(PairReuseTrace, HandCountedTrace) {
  // a b a c b b a  ->  -, -, 1, -, 2, 0, 2
  PairReuseTrace trace(0);
  const std::vector<uint64_t> got = {trace.record(1), trace.record(2), trace.record(1),
                                     trace.record(3), trace.record(2), trace.record(2),
                                     trace.record(1)};
  EXPECT_EQ(got, (std::vector<uint64_t>{kFirst, kFirst, 1, kFirst, 2, 0, 2}));
}

TEST(PairReuseTrace, MatchesDefinitionOnRandomTraces) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    const uint64_t granules = 1 + rng() % (round < 10 ? 16 : 600);
    std::vector<uint64_t> trace(3000);
    for (uint64_t& g : trace) g = (rng() % granules) * 64;  // sparse granule numbers
    const std::vector<uint64_t> expected = oracle_distances(trace);
    PairReuseTrace pair(0);
    for (size_t i = 0; i < trace.size(); ++i)
      ASSERT_EQ(pair.record(trace[i]), expected[i]) << "round " << round << " event " << i;
  }
}

TEST(PairReuseTrace, CapStopsThePairAndCountsTheRest) {
  PairReuseTrace trace(3);
  EXPECT_EQ(trace.record(1), kFirst);
  EXPECT_EQ(trace.record(2), kFirst);
  EXPECT_EQ(trace.record(3), kFirst);
  EXPECT_EQ(trace.record(1), 2u);  // exact up to the cap
  EXPECT_EQ(trace.record(4), kUnmeasured);
  EXPECT_TRUE(trace.capped());
  EXPECT_EQ(trace.record(1), kUnmeasured);  // no longer exact: not measured
  EXPECT_EQ(trace.memory_bytes(), 0u);
}

TEST(PairReuseTrace, MemoryFollowsDistinctGranulesNotRunLength) {
  PairReuseTrace trace(0);
  for (int repeat = 0; repeat < 2000; ++repeat)
    for (uint64_t g = 0; g < 100; ++g) trace.record(g);
  EXPECT_EQ(trace.distinct_granules(), 100u);
  EXPECT_LE(trace.memory_bytes(), 100 * PairReuseTrace::kBytesPerGranuleBound + 64 * 1024);
}

using DistanceKey = std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>;  // pc, reader, writer, d

std::map<DistanceKey, uint64_t> collect(const CommunicationReuseDistance& crd) {
  std::map<DistanceKey, uint64_t> out;
  crd.for_each_distance([&](const CommunicationReuseDistance::Record& r) {
    out[{r.pc, r.reader, r.writer, r.distance}] += r.count;
  });
  return out;
}

TEST(CommunicationReuseDistance, FedByTheCommunicationAnalyzer) {
  // Thread 0 writes N granules; thread 1 reads them twice; thread 2 reads
  // them once. Pair (0,1): N first events then N distances of N-1. Pair
  // (0,2): N first events, nothing else.
  constexpr uint64_t kN = 40;
  CommunicationConfig config;
  config.granularity = 64;
  config.max_threads = 4;
  CommunicationAnalyzer comm(config);
  CommunicationReuseDistance crd({4, 0});
  SharingFootprint footprint(6);
  comm.connect(&crd, &footprint);
  auto* t0 = comm.attach(0);
  auto* t1 = comm.attach(1);
  auto* t2 = comm.attach(2);
  alignas(64) static char data[kN * 64];
  const auto base = reinterpret_cast<uintptr_t>(data);
  for (uint64_t g = 0; g < kN; ++g) comm.write(*t0, 0x1000, base + g * 64, 8);
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t g = 0; g < kN; ++g) comm.read(*t1, 0x2000, base + g * 64 + 8, 4);
  for (uint64_t g = 0; g < kN; ++g) comm.read(*t2, 0x3000, base + g * 64, 8);

  // The word trace: the granules whose sampled word is word 1 (where thread 1
  // reads); each is read again after the other such granules.
  const SampledWord sampled(6);
  uint64_t words = 0;
  for (uint64_t g = 0; g < kN; ++g) words += sampled.sampled(base + g * 64 + 8, (base >> 6) + g);
  ASSERT_GT(words, 1u);  // 40 granules, one in 8 expected
  const std::map<DistanceKey, uint64_t> expected = {
      {{0x2000, 1, 0, kN - 1}, kN}, {{0x2000, 1, 0, kWordDistance | (words - 1)}, words}};
  comm.settle_all();
  EXPECT_EQ(collect(crd), expected);

  // Every granule is shared; its first toucher is the writer's instruction.
  uint64_t shared = 0, privately = 0;
  footprint.for_each_first_touch([&](const SharingFootprint::Record& r) {
    EXPECT_EQ(r.pc, 0x1000u);
    EXPECT_EQ(r.thread, 0u);
    shared += r.shared_granules;
    privately += r.private_granules;
  });
  EXPECT_EQ(shared, kN);
  EXPECT_EQ(privately, 0u);
}

TEST(CommunicationReuseDistance, CappedPairReportsUnmeasuredEvents) {
  weft_test::CommunicationWithCrd<2> setup(2);
  auto& [comm, crd, threads] = setup;
  auto *t0 = setup.thread[0], *t1 = setup.thread[1];
  alignas(64) static char data[4 * 64];
  const auto base = reinterpret_cast<uintptr_t>(data);
  for (int g = 0; g < 4; ++g) comm.write(*t0, 0x10, base + g * 64, 1);
  // Reader: g0 g1 g0 (distance 1) g2 (cap: unmeasured) g3 g0 (unmeasured),
  // each on a word the word trace does not sample (which one it samples
  // depends on the address).
  const SampledWord sampled(6);
  auto unsampled = [&](int g) {
    const uint64_t granule = (base >> 6) + static_cast<uint64_t>(g);
    return base + static_cast<uint64_t>(g) * 64 + ((sampled.offset(granule) + 1) % 8) * 8;
  };
  for (int g : {0, 1, 0, 2, 3, 0}) comm.read(*t1, 0x20, unsampled(g), 1);
  const std::map<DistanceKey, uint64_t> expected = {{{0x20, 1, 0, 1}, 1},
                                                    {{0x20, 1, 0, kUnmeasured}, 3}};
  comm.settle_all();
  EXPECT_EQ(collect(crd), expected);
  EXPECT_EQ(crd.capped_pairs(), 1u);
}

TEST(ReuseSets, InternsSetsAndAddsEachTagOnce) {
  ReuseSets sets;
  const uint32_t a = sets.root(0, 0xa);
  EXPECT_EQ(sets.root(0, 0xa), a);
  EXPECT_NE(sets.root(1, 0xa), a);  // another writer's data: another set
  const uint32_t ab = sets.add(a, 0xb);
  EXPECT_NE(ab, a);
  EXPECT_EQ(sets.add(a, 0xb), ab);
  EXPECT_EQ(sets.add(ab, 0xb), ab);
  EXPECT_EQ(sets.add(ab, 0xa), ab);  // the root's tag: already held
  const uint32_t abc = sets.add(ab, 0xc);
  EXPECT_EQ(sets.add(abc, 0xa), abc);
  EXPECT_EQ(sets.node(abc).parent, ab);
  EXPECT_EQ(sets.node(ab).parent, a);
  EXPECT_EQ(sets.node(a).parent, ReuseSets::kNone);
  EXPECT_EQ(sets.node(abc).writer, 0u);
  EXPECT_EQ(sets.extend(0, ReuseSets::kNone, 0xa), a);
  EXPECT_EQ(sets.size(), 4u);
  EXPECT_EQ(sets.lost(), 0u);
}

// The sets of a reader's epochs as (kind, writer, tags from the root) ->
// epochs, from for_each_reuse_set's nodes; sets no epoch ended with left out.
using SetKey = std::tuple<uint32_t, uint32_t, std::vector<uint64_t>>;
std::map<SetKey, uint64_t> epoch_sets(CommunicationReuseDistance& crd, uint32_t reader) {
  std::map<std::pair<uint32_t, uint32_t>, ReuseSetNode> nodes;  // (kind, id)
  crd.for_each_reuse_set([&](const ReuseSetNode& n) {
    if (n.reader == reader) nodes[{n.kind, n.id}] = n;
  });
  std::map<SetKey, uint64_t> out;
  for (const auto& [key, n] : nodes) {
    if (n.count == 0) continue;
    std::vector<uint64_t> tags;
    for (const ReuseSetNode* at = &n;; at = &nodes.at({key.first, at->parent})) {
      tags.insert(tags.begin(), at->tag);
      if (at->parent == 0) break;
    }
    out[{n.kind, n.writer, tags}] += n.count;
  }
  return out;
}

TEST(CommunicationReuseDistance, EpochSetsOfInstructionsAndSections) {
  // Thread 0 writes granules g0..g3; thread 1 reads g0..g2 at kA (a
  // first-touch loop), and the section closes at kInit; then two steps each
  // read g0..g3 at kB (g3's true communication is in step 1) and close at
  // kStep, step 1 also reads g3 again at kB (a repeat the fast path counts)
  // and at kB2 (a repeat from another instruction). Thread 0 writes g1 again;
  // thread 1 reads it at kB (a new epoch) and closes at kStep.
  constexpr uint64_t kA = 0xa0, kB = 0xb0, kB2 = 0xb8, kInit = 0x5100, kStep = 0x5200;
  weft_test::CommunicationWithCrd<2> setup(0);
  auto& [comm, crd, threads] = setup;
  auto *t0 = setup.thread[0], *t1 = setup.thread[1];
  alignas(64) static char data[4 * 64];
  const auto base = reinterpret_cast<uintptr_t>(data);
  for (int g = 0; g < 4; ++g) comm.write(*t0, 0x10, base + g * 64, 8);
  for (int g = 0; g < 3; ++g) comm.read(*t1, kA, base + g * 64, 8);
  comm.close_section(*t1, kInit);
  for (int step = 0; step < 2; ++step) {
    for (int g = 0; g < 4; ++g) comm.read(*t1, kB, base + g * 64, 8);
    if (step == 0) {
      comm.read(*t1, kB, base + 3 * 64 + 8, 8);
      comm.read(*t1, kB2, base + 3 * 64 + 16, 8);
    }
    comm.close_section(*t1, kStep);
  }
  comm.write(*t0, 0x10, base + 64, 8);
  comm.read(*t1, kB, base + 64, 8);
  comm.close_section(*t1, kStep);

  // Epochs: g0, g2 and g1's first {kA, kB}, g3 {kB, kB2}, g1's second {kB};
  // by sections: {kInit, kStep} three times, {kStep} twice (g3's, read in
  // both steps, and g1's second).
  const std::map<SetKey, uint64_t> expected = {
      {{kReuseSetCode, 0, {kA, kB}}, 3},   {{kReuseSetCode, 0, {kB, kB2}}, 1},
      {{kReuseSetCode, 0, {kB}}, 1},       {{kReuseSetSection, 0, {kInit, kStep}}, 3},
      {{kReuseSetSection, 0, {kStep}}, 2},
  };
  EXPECT_EQ(epoch_sets(crd, 1), expected);
  EXPECT_EQ(epoch_sets(crd, 1), expected);  // visiting adds no counts
  EXPECT_EQ(crd.dropped(), 0u);
}

TEST(CommunicationReuseDistance, CappedPairEndsItsEpochs) {
  // Cap 2: g0, g1 read at kA (true communications), section kInit; g0 at kB,
  // then g2 caps the pair: g1's epoch ends in kInit, g0's in the open section,
  // which kStep closes. g2 has no epoch.
  constexpr uint64_t kA = 0xa0, kB = 0xb0, kInit = 0x5100, kStep = 0x5200;
  weft_test::CommunicationWithCrd<2> setup(2);
  auto& [comm, crd, threads] = setup;
  auto *t0 = setup.thread[0], *t1 = setup.thread[1];
  alignas(64) static char data[3 * 64];
  const auto base = reinterpret_cast<uintptr_t>(data);
  for (int g = 0; g < 3; ++g) comm.write(*t0, 0x10, base + g * 64, 1);
  comm.read(*t1, kA, base, 1);
  comm.read(*t1, kA, base + 64, 1);
  comm.close_section(*t1, kInit);
  comm.read(*t1, kB, base, 1);
  comm.read(*t1, kB, base + 128, 1);
  comm.read(*t1, kB, base, 1);  // after the cap: not in any epoch
  comm.close_section(*t1, kStep);
  EXPECT_EQ(crd.capped_pairs(), 1u);
  const std::map<SetKey, uint64_t> expected = {
      {{kReuseSetCode, 0, {kA, kB}}, 1},
      {{kReuseSetCode, 0, {kA}}, 1},
      {{kReuseSetSection, 0, {kInit, kStep}}, 1},
      {{kReuseSetSection, 0, {kInit}}, 1},
  };
  EXPECT_EQ(epoch_sets(crd, 1), expected);
}

TEST(SharingFootprint, PrivateAndSharedGranulesByFirstToucher) {
  SharingFootprint footprint(6);
  alignas(64) static char data[3 * 64];
  const auto a = reinterpret_cast<uintptr_t>(data);
  const uint64_t tag0 = SharingFootprint::owner_tag(0), tag1 = SharingFootprint::owner_tag(1);
  footprint.touch(tag0, 0x100, a);            // A: thread 0 only
  footprint.touch(tag0, 0x100, a + 64);       // B: thread 0 first ...
  footprint.touch(tag1, 0x200, a + 64 + 8);   // ... then thread 1: shared
  footprint.touch(tag1, 0x200, a + 128);      // C: thread 1 only
  footprint.touch(tag1, 0x300, a + 128 + 1);  // again by its owner: still private
  std::map<std::pair<uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> got;
  footprint.for_each_first_touch([&](const SharingFootprint::Record& r) {
    got[{r.pc, r.thread}] = {r.private_granules, r.shared_granules};
  });
  const decltype(got) expected = {{{0x100, 0}, {1, 1}}, {{0x200, 1}, {1, 0}}};
  EXPECT_EQ(got, expected);
}

// Freed memory: a released granule touched again by its one owner stays
// that owner's (counted once); touched by another thread, or released while
// shared, it starts a new life, and the ended life still counts.
TEST(SharingFootprint, ReleasedGranulesStartANewLifeForAnotherThread) {
  SharingFootprint footprint(6);
  alignas(64) static char data[5 * 64];
  const auto a = reinterpret_cast<uintptr_t>(data);
  const uint64_t tag0 = SharingFootprint::owner_tag(0), tag1 = SharingFootprint::owner_tag(1);
  for (int g = 0; g < 4; ++g) footprint.touch(tag0, 0x100, a + g * 64);  // A B C D: thread 0's
  footprint.touch(tag1, 0x200, a + 2 * 64 + 8);                          // C shared
  footprint.release(a, a + 3 * 64 + 63);     // A B C released; D only in part
  footprint.touch(tag0, 0x300, a);           // A: its owner again, the same life
  footprint.touch(tag1, 0x400, a + 64);      // B: another thread, a new life
  footprint.touch(tag0, 0x500, a + 2 * 64);  // C: released while shared, a new life
  footprint.touch(tag1, 0x600, a + 3 * 64);  // D: not released, now shared
  footprint.touch(tag1, 0x700, a + 4 * 64);  // E: thread 1 only
  std::map<std::pair<uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> got;
  footprint.for_each_first_touch([&](const SharingFootprint::Record& r) {
    got[{r.pc, r.thread}] = {r.private_granules, r.shared_granules};
  });
  // 0x100: A and B's first life private, C's first life and D shared.
  const decltype(got) expected = {
      {{0x100, 0}, {2, 2}}, {{0x400, 1}, {1, 0}}, {{0x500, 0}, {1, 0}}, {{0x700, 1}, {1, 0}}};
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace weft
