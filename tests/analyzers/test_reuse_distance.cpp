// The reuse-distance analyzer: exact LRU stack distances on hand-built
// sequences, attributed to the reusing instruction; the local/remote split
// by first touch and by a declared distribution; the sampled engine against
// the exact one on a sweep larger than its budget.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "analyzers/reuse/reuse_distance.h"

namespace weft {
namespace {

constexpr uint64_t kBase = 0x7f0000200000;  // granule-aligned

// (pc, thread, locality, bin) -> (count, distance sum)
using Counts = std::map<std::tuple<uint64_t, uint32_t, int, int>, std::pair<uint64_t, double>>;

Counts counts(const ReuseDistanceAnalyzer& reuse) {
  Counts out;
  reuse.for_each_count([&](const ReuseBinRecord& r) {
    auto& c = out[{r.pc, r.thread, r.locality, r.bin}];
    c.first += r.count;
    c.second += r.distance_sum;
  });
  return out;
}

uint64_t granule(uint64_t i) { return kBase + i * 64; }

TEST(ReuseDistance, ExactStackDistancesOnAHandBuiltSequence) {
  ReuseDistanceAnalyzer reuse(ReuseConfig{4, 6, 0});
  ReuseDistanceAnalyzer::ThreadState* t = reuse.attach(0);
  ASSERT_NE(t, nullptr);
  // a b c a b c d a, then a again at another byte of its granule.
  const uint64_t sequence[] = {0, 1, 2, 0, 1, 2, 3, 0};
  for (uint64_t g : sequence) reuse.access(*t, 0x401000, granule(g));
  reuse.access(*t, 0x401100, granule(0) + 40);
  const Counts c = counts(reuse);
  const int cold = kReuseColdBin;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c.at({0x401000, 0, 0, cold}).first, 4u);                       // a b c d
  EXPECT_EQ(c.at({0x401000, 0, 0, 2}), std::make_pair(uint64_t{3}, 6.0));  // a b c at 2
  EXPECT_EQ(c.at({0x401000, 0, 0, 3}), std::make_pair(uint64_t{1}, 3.0));  // a after b c d
  EXPECT_EQ(c.at({0x401100, 0, 0, 0}), std::make_pair(uint64_t{1}, 0.0));  // the same granule
  EXPECT_EQ(reuse.dropped(), 0u);
}

TEST(ReuseDistance, LongDistancesLandInTheirSubBin) {
  ReuseDistanceAnalyzer reuse(ReuseConfig{4, 6, 0});
  ReuseDistanceAnalyzer::ThreadState* t = reuse.attach(1);
  // Two sweeps over 1000 granules: the second sweep's 1000 reuses are at 999.
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t g = 0; g < 1000; ++g) reuse.access(*t, 0x402000, granule(g));
  const Counts c = counts(reuse);
  ASSERT_EQ(c.size(), 2u);
  const int bin = static_cast<int>(reuse_bin(999));
  EXPECT_EQ(reuse_bin_low(static_cast<uint32_t>(bin)), 960u);
  EXPECT_EQ(reuse_bin_high(static_cast<uint32_t>(bin)), 1023u);
  EXPECT_EQ(c.at({0x402000, 1, 0, bin}), std::make_pair(uint64_t{1000}, 999000.0));
}

TEST(ReuseDistance, TheFirstToucherOwnsAGranule) {
  ReuseDistanceAnalyzer reuse(ReuseConfig{4, 6, 0});
  ReuseDistanceAnalyzer::ThreadState* one = reuse.attach(1);
  ReuseDistanceAnalyzer::ThreadState* two = reuse.attach(2);
  reuse.access(*one, 0x403000, granule(0));  // thread 1's granule
  reuse.access(*two, 0x403010, granule(0));  // remote to thread 2
  reuse.access(*two, 0x403020, granule(1));  // thread 2's
  reuse.access(*one, 0x403030, granule(0));  // local again, after 0 others
  reuse.access(*one, 0x403040, granule(1));  // remote to thread 1
  const Counts c = counts(reuse);
  const int cold = kReuseColdBin;
  EXPECT_EQ(c.at({0x403000, 1, 0, cold}).first, 1u);
  EXPECT_EQ(c.at({0x403010, 2, 1, cold}).first, 1u);
  EXPECT_EQ(c.at({0x403020, 2, 0, cold}).first, 1u);
  EXPECT_EQ(c.at({0x403030, 1, 0, 0}).first, 1u);
  EXPECT_EQ(c.at({0x403040, 1, 1, cold}).first, 1u);
}

TEST(ReuseDistance, ADeclaredDistributionOverridesTheFirstTouch) {
  ReuseDistanceAnalyzer reuse(ReuseConfig{4, 6, 0});
  ReuseDistanceAnalyzer::ThreadState* main_thread = reuse.attach(0);
  ReuseDistanceAnalyzer::ThreadState* two = reuse.attach(2);
  // The main thread initialises 32 doubles (4 granules), then declares them
  // block-cyclic in blocks of 8 doubles (one granule) over 4 threads.
  for (uint64_t g = 0; g < 4; ++g) reuse.access(*main_thread, 0x404000, granule(g));
  DistributionDeclaration d;
  d.base = kBase;
  d.element_size = 8;
  d.count = 32;
  d.block = 8;
  d.kind = DistributionDeclaration::BlockCyclic;
  d.threads = 4;
  reuse.declare(d);
  for (uint64_t g = 0; g < 4; ++g) reuse.access(*two, 0x404100 + g, granule(g));
  const Counts c = counts(reuse);
  const int cold = kReuseColdBin;
  EXPECT_EQ(c.at({0x404100, 2, 1, cold}).first, 1u);  // thread 0's block
  EXPECT_EQ(c.at({0x404101, 2, 1, cold}).first, 1u);  // thread 1's
  EXPECT_EQ(c.at({0x404102, 2, 0, cold}).first, 1u);  // its own
  EXPECT_EQ(c.at({0x404103, 2, 1, cold}).first, 1u);  // thread 3's
  EXPECT_EQ(d.owner(31), 3u);
  d.kind = DistributionDeclaration::Block;
  EXPECT_EQ(d.owner(7), 0u);
  EXPECT_EQ(d.owner(8), 1u);
  d.kind = DistributionDeclaration::Cyclic;
  EXPECT_EQ(d.owner(6), 2u);
}

// The sampled engine's totals and mean distance against the exact ones, on
// three sweeps over 100,000 granules with a budget of 4,096.
TEST(ReuseDistance, SampledSweepMatchesExactWithinFivePercent) {
  constexpr uint64_t kGranules = 100000;
  auto run = [&](uint64_t budget) {
    ReuseDistanceAnalyzer reuse(ReuseConfig{2, 6, budget});
    ReuseDistanceAnalyzer::ThreadState* t = reuse.attach(0);
    for (int pass = 0; pass < 3; ++pass)
      for (uint64_t g = 0; g < kGranules; ++g) reuse.access(*t, 0x405000, granule(g));
    uint64_t cold = 0, reuses = 0;
    double sum = 0;
    reuse.for_each_count([&](const ReuseBinRecord& r) {
      if (r.bin == kReuseColdBin) {
        cold += r.count;
      } else {
        reuses += r.count;
        sum += r.distance_sum;
      }
    });
    return std::make_tuple(cold, reuses, sum / static_cast<double>(reuses),
                           reuse.max_sample_shift());
  };
  const auto [exact_cold, exact_reuses, exact_mean, exact_shift] = run(0);
  EXPECT_EQ(exact_cold, kGranules);
  EXPECT_EQ(exact_reuses, 2 * kGranules);
  EXPECT_DOUBLE_EQ(exact_mean, kGranules - 1.0);
  EXPECT_EQ(exact_shift, 0u);
  const auto [cold, reuses, mean, shift] = run(4096);
  EXPECT_GE(shift, 4u);
  EXPECT_NEAR(static_cast<double>(cold), static_cast<double>(exact_cold), 0.05 * exact_cold);
  EXPECT_NEAR(static_cast<double>(reuses), static_cast<double>(exact_reuses), 0.05 * exact_reuses);
  EXPECT_NEAR(mean, exact_mean, 0.05 * exact_mean);
}

TEST(ReuseDistance, ShortDistancesStayExactWhenSampled) {
  ReuseDistanceAnalyzer reuse(ReuseConfig{2, 6, 256});
  ReuseDistanceAnalyzer::ThreadState* t = reuse.attach(0);
  // A large first sweep lowers the rate; then a loop over 10 granules.
  for (uint64_t g = 0; g < 10000; ++g) reuse.access(*t, 0x406000, granule(g));
  ASSERT_GT(reuse.max_sample_shift(), 0u);
  for (int pass = 0; pass < 5; ++pass)
    for (uint64_t g = 0; g < 10; ++g) reuse.access(*t, 0x406100, granule(20000 + g));
  const Counts c = counts(reuse);
  // 40 reuses at distance 9, each counted once.
  EXPECT_EQ(c.at({0x406100, 0, 0, 9}), std::make_pair(uint64_t{40}, 360.0));
}

TEST(ReuseHistogram, MissRatioOfAnLruCache) {
  ReuseDistanceHistogram h;
  h.counts.assign(reuse_bin(1000) + 1, 0);
  h.distance_sums.assign(h.counts.size(), 0);
  h.counts[3] = 50;                // distance 3: hits in 4 granules and more
  h.counts[reuse_bin(1000)] = 30;  // [960, 1023]
  h.cold = 20;
  EXPECT_DOUBLE_EQ(h.miss_ratio(4), 0.5);
  EXPECT_DOUBLE_EQ(h.miss_ratio(3), 1.0);
  EXPECT_DOUBLE_EQ(h.miss_ratio(2048), 0.2);
  EXPECT_DOUBLE_EQ(h.miss_ratio(992), (20 + 30 * 32.0 / 64) / 100);
}

}  // namespace
}  // namespace weft
