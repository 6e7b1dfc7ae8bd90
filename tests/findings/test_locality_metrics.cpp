// The pure locality metrics (CRR, homogeneity, balance, CRD histogram,
// cutoffs), the suggestions they lead to, and the byte sizes of
// --cache-size.
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/crd/crd_tables.h"
#include "findings/locality.h"
#include "findings/suggestions.h"

namespace weft {
namespace {

TEST(Locality, CrrHomogeneityBalanceOnThreeThreads) {
  const CommunicationMatrix raw = {{0, 1, 2}, {4, 0, 4}, {0, 0, 0}};
  const CommunicationMatrix rar = {{0, 2, 8}, {4, 0, 0}, {5, 0, 0}};
  const CrrMatrix crr = crr_matrix(raw, rar);
  // rar[2][0] = 5 but raw[2][0] = 0: the ratio is 0.
  EXPECT_EQ(crr, (CrrMatrix{{0, 2, 4}, {1, 0, 0}, {0, 0, 0}}));
  // Row variances (population, 3 entries): row 0 mean 2 -> (4 + 0 + 4) / 3 = 8/3;
  // row 1 mean 1/3 -> (4/9 + 1/9 + 1/9) / 3 = 2/9; row 2: 0. Mean: 26/27.
  EXPECT_DOUBLE_EQ(homogeneity(crr), 26.0 / 27.0);
  // Row sums 6, 1, 0: mean 7/3, max / mean = 18/7.
  EXPECT_DOUBLE_EQ(balance(crr), (18.0 / 7.0 - 1.0) * 100.0);

  EXPECT_DOUBLE_EQ(homogeneity({}), 0.0);
  EXPECT_DOUBLE_EQ(balance({{0, 0}, {0, 0}}), 0.0);
  EXPECT_DOUBLE_EQ(balance({{0, 1}, {1, 0}}), 0.0);
  EXPECT_DOUBLE_EQ(homogeneity({{0, 1}, {1, 0}}), 0.25);
  EXPECT_DOUBLE_EQ(crr_ratio(3, 0), 0.0);
  EXPECT_DOUBLE_EQ(crr_ratio(3, 4), 0.75);
}

TEST(Locality, PowerOfTwoBins) {
  EXPECT_EQ(crd_bin(0), 0u);
  EXPECT_EQ(crd_bin(1), 1u);
  EXPECT_EQ(crd_bin(2), 2u);
  EXPECT_EQ(crd_bin(3), 2u);
  EXPECT_EQ(crd_bin(4), 3u);
  EXPECT_EQ(crd_bin(7), 3u);
  EXPECT_EQ(crd_bin(8), 4u);
  EXPECT_EQ(crd_bin(1023), 10u);
  EXPECT_EQ(crd_bin(1024), 11u);
  EXPECT_EQ(crd_bin(std::numeric_limits<uint64_t>::max()), 64u);
  EXPECT_EQ(crd_bin_lo(0), 0u);
  EXPECT_EQ(crd_bin_hi(0), 0u);
  EXPECT_EQ(crd_bin_lo(1), 1u);
  EXPECT_EQ(crd_bin_hi(1), 1u);
  EXPECT_EQ(crd_bin_lo(3), 4u);
  EXPECT_EQ(crd_bin_hi(3), 7u);
  EXPECT_EQ(crd_bin_hi(64), std::numeric_limits<uint64_t>::max());
}

TEST(Locality, LowerMedian) {
  EXPECT_EQ(lower_median({}), std::nullopt);
  EXPECT_EQ(lower_median({{5, 1}}), 5u);
  EXPECT_EQ(lower_median({{1, 1}, {2, 1}, {3, 1}, {4, 1}}), 2u);  // even: the lower one
  EXPECT_EQ(lower_median({{1, 1}, {2, 1}, {3, 1}}), 2u);
  EXPECT_EQ(lower_median({{0, 1}, {9, 1}}), 0u);
  EXPECT_EQ(lower_median({{7, 3}, {8, 1}}), 7u);
  EXPECT_EQ(lower_median({{1, 1}, {100, 2}}), 100u);
  EXPECT_EQ(lower_median({{2, 0}, {3, 1}}), 3u);  // empty counts do not count
}

TEST(Locality, CutoffsAndFractions) {
  // 8 KiB cache of 8-byte granules: 1024 granules. The min cutoff is the
  // cache minus the private granules, but never below half the cache.
  EXPECT_EQ(crd_cutoffs(8192, 8, 8000).max, 1024u);
  EXPECT_EQ(crd_cutoffs(8192, 8, 2400).min, 724u);
  EXPECT_EQ(crd_cutoffs(8192, 8, 4096).min, 512u);
  EXPECT_EQ(crd_cutoffs(8192, 8, 8000).min, 512u);   // private data near the cache's size
  EXPECT_EQ(crd_cutoffs(8192, 8, 40000).min, 512u);  // and beyond it
  EXPECT_EQ(crd_cutoffs(100, 64, 0).max, 1u);
  EXPECT_EQ(crd_cutoffs(100, 64, 0).min, 1u);

  // Pair 0->1: 0 x1, 1 x2, 3 x1, 24 x1, 100 x3, 1024 x1, 2000 x2 (11 events); pair 2->1: 5 x3.
  const std::vector<DistanceCount> distances = {
      {0, 1, 0, 1},   {0, 1, 1, 2},    {0, 1, 3, 1},    {0, 1, 24, 1},
      {0, 1, 100, 3}, {0, 1, 1024, 1}, {0, 1, 2000, 2}, {2, 1, 5, 3},
  };
  CrdSummary crd = summarize_crd(distances, {24, 1024});
  EXPECT_EQ(crd.events, 14u);
  // Sorted: 0, 1, 1, 3, 5, 5, 5, 24, 100, ...: 7 of 14 are <= 5.
  EXPECT_EQ(crd.median, 5u);
  ASSERT_EQ(crd.histogram.size(), 7u);
  const std::vector<std::array<uint64_t, 3>> expected = {
      {0, 0, 1}, {1, 1, 2}, {2, 3, 1}, {4, 7, 3}, {16, 31, 1}, {64, 127, 3}, {1024, 2047, 3}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(crd.histogram[i].lo, expected[i][0]) << i;
    EXPECT_EQ(crd.histogram[i].hi, expected[i][1]) << i;
    EXPECT_EQ(crd.histogram[i].count, expected[i][2]) << i;
  }
  // d < 24: 0, 1, 1, 3, 5, 5, 5 (7); 24 <= d <= 1024: 24, 100 x3, 1024 (5); above: 2000 x2.
  EXPECT_DOUBLE_EQ(crd.fraction_below_min, 7.0 / 14.0);
  EXPECT_DOUBLE_EQ(crd.fraction_between, 5.0 / 14.0);
  EXPECT_DOUBLE_EQ(crd.fraction_above_max, 2.0 / 14.0);
  EXPECT_DOUBLE_EQ(crd.fraction_beyond_min(), 7.0 / 14.0);
  // Bins 0,1,1,2,3,3,3,5,7,7,7,11,11,11: sum 72.
  EXPECT_DOUBLE_EQ(crd.mean_log2_bin, 72.0 / 14.0);
  ASSERT_EQ(crd.pairs.size(), 2u);
  EXPECT_EQ(crd.pairs[0].writer, 0u);
  EXPECT_EQ(crd.pairs[0].events, 11u);
  EXPECT_EQ(crd.pairs[0].median, 100u);  // 0 1 1 3 24 [100] 100 100 1024 2000 2000
  EXPECT_EQ(crd.pairs[1].writer, 2u);
  EXPECT_EQ(crd.pairs[1].median, 5u);

  CrdSummary none = summarize_crd({}, {24, 1024});
  EXPECT_EQ(none.events, 0u);
  EXPECT_FALSE(none.median);
  EXPECT_DOUBLE_EQ(none.fraction_below_min, 0.0);
  EXPECT_DOUBLE_EQ(none.fraction_between, 0.0);
  EXPECT_DOUBLE_EQ(none.fraction_above_max, 0.0);
}

RegionInfo region_named(int64_t id, const std::string& kind, std::optional<int64_t> parent) {
  RegionInfo region;
  region.id = id;
  region.kind = kind;
  region.name = "r" + std::to_string(id);
  region.file = "/src/app.c";
  region.first_line = 10;
  region.last_line = 20;
  region.parent_id = parent;
  return region;
}

// The median weft reports is of the line visits: the events that do not
// re-read the granule just read. The word trace is summarised beside it.
TEST(Locality, MedianOfTheLineVisits) {
  LocalityInputs inputs;
  inputs.granularity = 64;
  inputs.crd_recorded = true;
  inputs.raw = {{0, 1}, {0, 0}};
  inputs.rar = {{0, 9}, {0, 0}};
  // 7 of 10 events re-read the granule just read; the visits: 3, 40, 40.
  inputs.distances = {{0, 1, 0, 7}, {0, 1, 3, 1}, {0, 1, 40, 2}};
  // Words (scaled): 8 events at 24 words, 8 at 2000.
  inputs.word_distances = {{0, 1, 24, 8}, {0, 1, 2000, 8}};
  inputs.footprint.private_granules = 4;  // 256 bytes: 32 words
  const CacheModel cache{8192, CacheSource::CacheSize};
  const LocalityMetrics m = compute_locality(inputs, cache);
  EXPECT_EQ(m.crd.median, 0u);
  EXPECT_EQ(m.crd.events, 10u);
  EXPECT_EQ(m.granule_repeats(), 7u);
  EXPECT_EQ(m.visits.events, 3u);
  EXPECT_EQ(m.median(), 40u);
  EXPECT_EQ(m.cutoffs.max, 128u);  // 8 KiB / 64
  EXPECT_EQ(m.cutoffs.min, 124u);
  EXPECT_TRUE(m.has_words());
  EXPECT_EQ(m.words.median, 24u);
  EXPECT_EQ(m.word_cutoffs.max, 1024u);  // 8 KiB / 8
  EXPECT_EQ(m.word_cutoffs.min, 992u);   // 1024 - 32
  // The visits' median is below the min cutoff and no event is beyond it.
  EXPECT_TRUE(suggest(RegionInfo{}, m, {}).empty());
}

TEST(Locality, SuggestionsFollowThresholds) {
  LocalityInputs inputs;
  inputs.granularity = 8;  // word granules: the summary is of granules
  inputs.crd_recorded = true;
  inputs.raw = {{0, 2, 0}, {0, 0, 1}, {1, 0, 0}};
  inputs.rar = {{0, 2, 0}, {0, 0, 1}, {1, 0, 0}};      // CRR 1 everywhere it is defined
  inputs.distances = {{0, 1, 10, 9}, {0, 1, 200, 1}};  // 10% beyond a min cutoff of 100
  inputs.footprint.private_granules = 28;
  const CacheModel cache{128 * 8, CacheSource::CacheSize};  // 128 granules, min cutoff 100
  LocalityMetrics metrics = compute_locality(inputs, cache);
  EXPECT_EQ(metrics.cutoffs.min, 100u);
  EXPECT_EQ(metrics.communicating_pairs, 3u);
  EXPECT_DOUBLE_EQ(metrics.balance, 0.0);

  const RegionInfo loop = region_named(2, "loop", 1);
  std::vector<RegionInfo> regions = {region_named(1, "function", std::nullopt), loop};
  std::vector<Suggestion> suggestions = suggest(loop, metrics, regions);
  ASSERT_EQ(suggestions.size(), 1u);  // balanced, homogeneous CRR: no thread affinity
  EXPECT_EQ(suggestions[0].kind, SuggestionKind::DataAffinity);
  EXPECT_EQ(suggestions[0].location, "app.c:10-20");
  EXPECT_NE(suggestions[0].evidence.find(
                "10.0% of the CRD events are beyond the min cutoff of 100 granules"),
            std::string::npos)
      << suggestions[0].evidence;
  std::string text = format_suggestion(suggestions[0]);
  EXPECT_NE(text.find("array blocking"), std::string::npos) << text;
  EXPECT_EQ(text.find("schedule"), std::string::npos) << text;  // not OpenMP

  // The same loop inside an OpenMP parallel region: the schedule is suggested too.
  regions[0].kind = "omp_parallel";
  EXPECT_TRUE(inside_omp_parallel(loop, regions));
  text = format_suggestion(suggest(loop, metrics, regions).at(0));
  EXPECT_NE(text.find("schedule(static, CHUNK)"), std::string::npos) << text;

  // A section (no parent) is OpenMP when it starts inside an omp_parallel region's lines.
  RegionInfo section = region_named(3, "section", std::nullopt);
  section.first_line = section.last_line = 15;
  EXPECT_TRUE(inside_omp_parallel(section, regions));
  section.first_line = section.last_line = 25;
  EXPECT_FALSE(inside_omp_parallel(section, regions));
  section.first_line = 15;
  section.file = "/src/other.c";
  EXPECT_FALSE(inside_omp_parallel(section, regions));

  // Below 10% beyond the min cutoff, with the median below it: nothing.
  inputs.distances = {{0, 1, 10, 10}, {0, 1, 200, 1}};
  EXPECT_TRUE(suggest(loop, compute_locality(inputs, cache), regions).empty());

  // Unbalanced CRR: thread 1 reuses 10x, thread 0 once; two communicating pairs.
  inputs.distances.clear();
  inputs.raw = {{0, 4, 0}, {0, 0, 2}, {0, 0, 0}};
  inputs.rar = {{0, 4, 0}, {0, 0, 20}, {0, 0, 0}};
  metrics = compute_locality(inputs, cache);
  EXPECT_DOUBLE_EQ(metrics.balance, (10.0 / (11.0 / 3.0) - 1.0) * 100.0);
  suggestions = suggest(loop, metrics, regions);
  ASSERT_EQ(suggestions.size(), 1u);
  EXPECT_EQ(suggestions[0].kind, SuggestionKind::ThreadAffinity);
  ASSERT_EQ(suggestions[0].pairs.size(), 2u);
  EXPECT_EQ(suggestions[0].pairs[0].first, 1u);  // 1 <-> 2: 22 events
  EXPECT_EQ(suggestions[0].pairs[0].second, 2u);
  EXPECT_EQ(suggestions[0].pairs[0].events, 22u);
  // Threads 1 and 2 on one cache, 0 on the other: 8 events cross instead of
  // an even spread's 30 x 2 x 2 x 1 / (3 x 2) = 20.
  ASSERT_EQ(suggestions[0].groups.size(), 2u);
  EXPECT_EQ(suggestions[0].groups[0], std::vector<uint32_t>({0}));
  EXPECT_EQ(suggestions[0].groups[1], std::vector<uint32_t>({1, 2}));
  const std::string advice = format_suggestion(suggestions[0]);
  EXPECT_NE(advice.find("leaves 8 events between the caches, 60% fewer than an even spread (20)"),
            std::string::npos)
      << advice;
  EXPECT_NE(advice.find("place threads {0} on cores that share a cache and threads {1, 2} on "
                        "cores that share another (the heaviest pairs: 1 and 2 (22 events)"),
            std::string::npos)
      << advice;

  // A star: thread 0 wrote what 1, 2 and 3 read (data it initialised). No
  // split helps (each leaves two readers away from 0, as an even spread
  // does): a broadcast, never thread affinity.
  inputs.raw = {{0, 400, 400, 400}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  inputs.rar = {{0, 9600, 9600, 9600}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  metrics = compute_locality(inputs, cache);
  EXPECT_DOUBLE_EQ(metrics.balance, 300.0);  // the CRR rule alone would have advised placement
  const ThreadGrouping star = best_thread_grouping(metrics.raw, metrics.rar);
  EXPECT_DOUBLE_EQ(star.cross, 20000.0);              // 0 with one reader
  EXPECT_DOUBLE_EQ(star.even_spread_cross, 20000.0);  // 30000 x 2 x 2 x 2 / (4 x 3)
  suggestions = suggest(loop, metrics, regions);
  ASSERT_EQ(suggestions.size(), 1u);
  EXPECT_EQ(suggestions[0].kind, SuggestionKind::Broadcast);
  EXPECT_NE(suggestions[0].evidence.find("thread 0 wrote 100.0% of the data communicated here "
                                         "(30000 of 30000 events), read by 3 threads"),
            std::string::npos)
      << suggestions[0].evidence;
  // Who reads which part the counts cannot tell: one action for each case,
  // neither calling first touch (a data placement) useless.
  EXPECT_EQ(suggestions[0].actions,
            std::vector<std::string>(
                {"code: if each reader reads a part of its own, let each thread write "
                 "(initialise) that part itself: the data is then in its cache, and on a NUMA "
                 "machine in its node, by first touch",
                 "code: if every reader reads most of it (a table, a search over all of it), its "
                 "transfers are each reader's first reads, which no placement avoids: make the "
                 "data smaller (float for double, only the fields read), or let each thread "
                 "compute what it reads when that costs less than the transfer"}));
  EXPECT_EQ(suggestions[0].evidence.find("not a placement problem"), std::string::npos);
  // The same star over 1023 granules (a flag, a small table, read again and
  // again from every reader's cache): nothing to act on, nothing said.
  inputs.raw = {{0, 341, 341, 341}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  EXPECT_TRUE(suggest(loop, compute_locality(inputs, cache), regions).empty());

  // A gather: main (0) sums what the workers wrote, three quarters of it last
  // written by thread 1 (a CI run of examples/tally_race_omp.c's sum loop).
  // {0, 1} {2} would cross 62% less than an even spread, but who wrote
  // last is chance: no thread affinity.
  inputs.raw = {{0, 0, 0}, {1536, 0, 0}, {512, 0, 0}};
  inputs.rar = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  const ThreadGrouping gather = best_thread_grouping(inputs.raw, inputs.rar);
  EXPECT_DOUBLE_EQ(gather.cross, 512.0);
  EXPECT_TRUE(suggest(loop, compute_locality(inputs, cache), regions).empty());
  // The same reader taking a sixth of the communication from its partner
  // while 1 and 2 exchange the rest: not a gather, thread affinity stays.
  inputs.raw = {{0, 0, 0}, {100, 0, 250}, {20, 250, 0}};
  suggestions = suggest(loop, compute_locality(inputs, cache), regions);
  ASSERT_EQ(suggestions.size(), 1u);
  EXPECT_EQ(suggestions[0].kind, SuggestionKind::ThreadAffinity);
  EXPECT_EQ(suggestions[0].groups[1], std::vector<uint32_t>({1, 2}));

  // Neighbour exchange in a chain 0-1-2-3: {0, 1} and {2, 3} leave one edge
  // between the caches, half of an even spread's: thread affinity.
  inputs.raw = {{0, 10, 0, 0}, {10, 0, 10, 0}, {0, 10, 0, 10}, {0, 0, 10, 0}};
  inputs.rar = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
  const ThreadGrouping chain = best_thread_grouping(inputs.raw, inputs.rar);
  EXPECT_DOUBLE_EQ(chain.cross, 20.0);              // the 1-2 edge, both directions
  EXPECT_DOUBLE_EQ(chain.even_spread_cross, 40.0);  // 60 x 2 x 2 x 2 / (4 x 3)
  EXPECT_EQ(chain.groups[0], std::vector<uint32_t>({0, 1}));
  EXPECT_EQ(chain.groups[1], std::vector<uint32_t>({2, 3}));
  suggestions = suggest(loop, compute_locality(inputs, cache), regions);
  ASSERT_EQ(suggestions.size(), 1u);
  EXPECT_EQ(suggestions[0].kind, SuggestionKind::ThreadAffinity);
  // A ring 0-1-2-3-0: any split cuts two edges, an even spread 2.67: 25%
  // fewer is no clear gain, no advice.
  inputs.raw[0][3] = inputs.raw[3][0] = 10;
  EXPECT_TRUE(suggest(loop, compute_locality(inputs, cache), regions).empty());

  // One communicating pair only: balance is high by construction, no suggestion.
  inputs.raw = {{0, 4, 0}, {0, 0, 0}, {0, 0, 0}};
  inputs.rar = {{0, 4, 0}, {0, 0, 0}, {0, 0, 0}};
  EXPECT_TRUE(suggest(loop, compute_locality(inputs, cache), regions).empty());
}

}  // namespace
}  // namespace weft
