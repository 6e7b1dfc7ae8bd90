// Reuse patterns, their size fits, thread grouping, the geometric pattern
// functions, and coverage and accuracy, on hand-built histograms
// (docs/prediction.md).
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <utility>

#include "findings/reuse_patterns.h"
#include "findings/reuse_prediction.h"
#include "prediction/reuse_fixtures.h"

namespace weft {
namespace {

ReusePattern range(double min, double max) {
  ReusePattern p;
  p.min = min;
  p.max = max;
  p.mean = (min + max) / 2;
  p.frequency = 1;
  return p;
}

TEST(ReusePatterns, SplitAtADeepValley) {
  const ReusePatterns p =
      reuse_patterns(histogram({{0, 10}, {1, 50}, {2, 10}, {3, 2}, {4, 40}, {5, 60}, {6, 5}}));
  ASSERT_EQ(p.patterns.size(), 2u);
  EXPECT_EQ(p.patterns[0].min, 0);
  EXPECT_EQ(p.patterns[0].max, 3);  // the valley ends the pattern on its left
  EXPECT_EQ(p.patterns[0].count, 72);
  EXPECT_DOUBLE_EQ(p.patterns[0].mean, (50.0 + 20 + 6) / 72);
  EXPECT_EQ(p.patterns[1].min, 4);
  EXPECT_EQ(p.patterns[1].max, 6);
  EXPECT_DOUBLE_EQ(p.patterns[0].frequency + p.patterns[1].frequency, 1.0);
  EXPECT_DOUBLE_EQ(p.patterns[1].frequency, 105.0 / 177);
}

TEST(ReusePatterns, AShallowDipStaysInOnePattern) {
  const ReusePatterns p = reuse_patterns(histogram({{0, 10}, {1, 50}, {2, 40}, {3, 45}, {4, 5}}));
  ASSERT_EQ(p.patterns.size(), 1u);
  EXPECT_EQ(p.patterns[0].min, 0);
  EXPECT_EQ(p.patterns[0].max, 4);
}

TEST(ReusePatterns, EmptyBinsSplitAndColdAccessesFormNoPattern) {
  const ReusePatterns p = reuse_patterns(histogram({{1, 5}, {3, 5}}, 10));
  ASSERT_EQ(p.patterns.size(), 2u);
  EXPECT_DOUBLE_EQ(p.patterns[0].frequency, 0.25);
  EXPECT_DOUBLE_EQ(p.patterns[1].frequency, 0.25);
  EXPECT_DOUBLE_EQ(p.cold_share, 0.5);
  EXPECT_DOUBLE_EQ(p.accesses, 20);
  // A wide bin's pattern spans the bin's distances.
  const ReusePatterns wide = reuse_patterns(histogram({{1000, 3}}));
  ASSERT_EQ(wide.patterns.size(), 1u);
  EXPECT_EQ(wide.patterns[0].min, static_cast<double>(reuse_bin_low(reuse_bin(1000))));
  EXPECT_EQ(wide.patterns[0].max, static_cast<double>(reuse_bin_high(reuse_bin(1000))));
  EXPECT_DOUBLE_EQ(wide.patterns[0].mean, 1000);
}

TEST(ReusePatterns, PredictedHistogramsKeepSmallCountsAndMissRatiosAreExact) {
  // One access spread over the 8 bins of [256, 511] and 2 cold ones: the
  // histogram keeps the access (largest remainder), the miss ratio does not
  // depend on rounding.
  ReusePattern p = range(256, 511);
  p.count = 1;
  const ReuseDistanceHistogram h = histogram_of_patterns({p}, 2);
  EXPECT_EQ(h.reuses(), 1u);
  EXPECT_EQ(h.cold, 2u);
  EXPECT_NEAR(patterns_miss_ratio({p}, 2, 512), 2.0 / 3, 1e-12);
  EXPECT_NEAR(patterns_miss_ratio({p}, 2, 384), (2 + 0.5) / 3, 1e-12);
  EXPECT_NEAR(patterns_miss_ratio({p}, 2, 100), 1, 1e-12);
}

TEST(ReusePatterns, OverlapOfDistanceRanges) {
  // [0,9] and [5,14] cover [0,10) and [5,15): 5 in common out of 10.
  EXPECT_DOUBLE_EQ(pattern_overlap(range(0, 9), range(5, 14)), 0.5);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(5, 14), range(0, 9)), 0.5);  // symmetric
  EXPECT_DOUBLE_EQ(pattern_overlap(range(10, 19), range(0, 39)), 0.25);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(0, 9), range(20, 29)), 0);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(0, 9), range(10, 19)), 0);  // adjacent
  EXPECT_DOUBLE_EQ(pattern_overlap(range(100, 199), range(100, 199)), 1);
  // One distance each: the same one overlaps fully, another not at all.
  EXPECT_DOUBLE_EQ(pattern_overlap(range(3, 3), range(3, 3)), 1);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(3, 3), range(4, 4)), 0);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(3, 3), range(0, 9)), 0.1);
  EXPECT_DOUBLE_EQ(pattern_overlap(range(9, 8), range(9, 9)), 1);  // max < min: one distance
  // Matching by 95%: overlap, or means within 5% across a bin boundary.
  ReusePattern low = range(64, 71), high = range(72, 79);
  low.mean = 71;
  high.mean = 72;
  EXPECT_TRUE(patterns_match(low, high, 0.95));
  high.mean = 76;
  EXPECT_FALSE(patterns_match(low, high, 0.95));
  high.mean = 72;
  high.frequency = 0.9;
  EXPECT_FALSE(patterns_match(low, high, 0.95));
  // 90%: [0,99] against [10,109] is 90 of 100.
  EXPECT_TRUE(prediction_correct({range(0, 99)}, {range(10, 109)}));
  EXPECT_FALSE(prediction_correct({range(0, 99)}, {range(11, 110)}));
  EXPECT_FALSE(prediction_correct({range(0, 99)}, {range(0, 99), range(200, 299)}));
}

TEST(ReusePrediction, SizeFitsPickTheGrowthOfBothPoints) {
  const SizeFit root = fit_size(1000, 100, 4000, 200);
  EXPECT_EQ(root.model, SizeModel::SquareRoot);
  EXPECT_NEAR(root.at(16000), 400, 1e-9);
  const SizeFit linear = fit_size(1, 10, 2, 20);
  EXPECT_EQ(linear.model, SizeModel::Linear);
  EXPECT_NEAR(linear.at(4), 40, 1e-9);
  const SizeFit cube = fit_size(1000, 10, 8000, 20);
  EXPECT_EQ(cube.model, SizeModel::CubeRoot);
  EXPECT_NEAR(cube.at(64000), 40, 1e-9);
  const SizeFit constant = fit_size(1, 5, 4, 5.1);
  EXPECT_EQ(constant.model, SizeModel::Constant);
  EXPECT_NEAR(constant.at(100), 5.05, 1e-9);
  // An offset: a + b*sqrt(s) through both points, not b*sqrt(s).
  const SizeFit offset = fit_size(100, 71, 400, 143);
  EXPECT_EQ(offset.model, SizeModel::SquareRoot);
  EXPECT_NEAR(offset.at(1600), 287, 1e-9);
  EXPECT_EQ(fit_size(1, 0, 4, 3).model, SizeModel::Linear);  // from 0: linear
  // Sizes that are the per-thread order N of 2-D and 3-D data.
  const SizeFit square = fit_size(8, 64, 16, 256);
  EXPECT_EQ(square.model, SizeModel::Square);
  EXPECT_NEAR(square.at(32), 1024, 1e-9);
  const SizeFit cube3 = fit_size(4, 64, 8, 512);
  EXPECT_EQ(cube3.model, SizeModel::Cube);
  EXPECT_NEAR(cube3.at(16), 4096, 1e-9);
  // Shrinking values: the exponent of the ratio, b < 0 (the prediction
  // clamps what falls below 0).
  const SizeFit shrinking = fit_size(1, 40, 4, 20);
  EXPECT_EQ(shrinking.model, SizeModel::SquareRoot);
  EXPECT_NEAR(shrinking.at(16), -20, 1e-9);
}

TEST(ReusePrediction, ProblemSizeScalingPredictsASqrtPatternExactly) {
  PredictionOptions options;
  options.pattern_sub_bins = kHistogramSubBins;  // the histogram's own bins
  options.reference_size = 16000;
  options.reference_threads = 1;
  options.cache_bytes = {16 * 1024, 17 * 1024, 32 * 1024};
  const ReusePrediction p = predict_reuse(sqrt_run(1000, 1), sqrt_run(4000, 2), options);
  EXPECT_EQ(p.pattern_function, PatternFunction::Identity);
  ASSERT_EQ(p.instructions.size(), 1u);
  ASSERT_EQ(p.instructions[0].threads.size(), 1u);
  const ThreadPrediction& t = p.instructions[0].threads[0];
  EXPECT_TRUE(t.predictable) << t.reason;
  ASSERT_EQ(t.patterns.size(), 2u);
  EXPECT_NEAR(t.patterns[0].min, 2, 1e-9);
  EXPECT_NEAR(t.patterns[0].max, 2, 1e-9);
  EXPECT_NEAR(t.patterns[1].min, 256, 1e-9);
  EXPECT_NEAR(t.patterns[1].max, 287, 1e-9);
  EXPECT_EQ(t.fits[1].model, SizeModel::SquareRoot);
  EXPECT_EQ(t.fits[1].lower, SizeModel::Constant);
  EXPECT_NEAR(t.patterns[1].frequency, 800.0 / 1200, 1e-9);
  // 256 granules of 64 B: every far reuse misses; 272: half; 512: none.
  ASSERT_EQ(t.miss_ratios.size(), 3u);
  EXPECT_NEAR(t.miss_ratios[0], 800.0 / 1200, 1e-3);
  EXPECT_NEAR(t.miss_ratios[1], 400.0 / 1200, 1e-3);
  EXPECT_NEAR(t.miss_ratios[2], 0, 1e-3);

  const ReuseEvaluation e =
      evaluate_reuse_prediction(sqrt_run(1000, 1), sqrt_run(4000, 2), sqrt_run(16000, 4), options);
  EXPECT_DOUBLE_EQ(e.overall.coverage(), 1);
  EXPECT_DOUBLE_EQ(e.overall.accuracy(), 1);
  EXPECT_DOUBLE_EQ(e.overall.operations, 1200);
}

TEST(ReusePrediction, RangesArePlacedOnTheBinsOfThePredictedMean) {
  // Distance 10 N at N = 8, 12, 20: bins [80,87], [120,127], [192,207].
  // Extrapolating the bins' bounds would give [200,207], half of the
  // observed bin; the mean (exact) predicts 200, whose bin is the observed.
  auto run = [](double n) {
    ReuseRun r;
    r.threads = 1;
    r.size = n;
    r.histograms.push_back(row(0x10, 0, histogram({{static_cast<uint64_t>(10 * n), 100}})));
    return r;
  };
  PredictionOptions options;
  options.pattern_sub_bins = kHistogramSubBins;
  const ReuseEvaluation e = evaluate_reuse_prediction(run(8), run(12), run(20), options);
  ASSERT_EQ(e.prediction.instructions.size(), 1u);
  const ThreadPrediction& t = e.prediction.instructions[0].threads[0];
  ASSERT_EQ(t.patterns.size(), 1u);
  EXPECT_NEAR(t.patterns[0].mean, 200, 1e-9);
  EXPECT_EQ(t.patterns[0].min, 192);
  EXPECT_EQ(t.patterns[0].max, 207);
  EXPECT_DOUBLE_EQ(e.overall.accuracy(), 1);
  // A pattern over several bins keeps its width in bins around the mean.
  ReuseRun wide = run(8);
  wide.histograms[0].histogram = histogram({{64, 10}, {72, 30}, {80, 10}});  // bins of 64..87
  ReuseRun wider = run(16);
  wider.histograms[0].histogram = histogram({{128, 10}, {144, 30}, {160, 10}});  // 128..175
  options.reference_size = 32;
  options.reference_threads = 1;
  const ReusePrediction p = predict_reuse(wide, wider, options);
  const ThreadPrediction& w = p.instructions[0].threads[0];
  ASSERT_EQ(w.patterns.size(), 1u);
  EXPECT_EQ(w.patterns[0].min, 256);
  EXPECT_EQ(w.patterns[0].max, 351);
}

TEST(ReusePatterns, PatternGrids) {
  // One bin per power of two: {0}, {1}, [2,3], [4,7], [8,15], ...
  EXPECT_EQ(pattern_bin(0, 1), 0u);
  EXPECT_EQ(pattern_bin(1, 1), 1u);
  EXPECT_EQ(pattern_bin(3, 1), 2u);
  EXPECT_EQ(pattern_bin(4, 1), 3u);
  EXPECT_EQ(pattern_bin(7, 1), 3u);
  EXPECT_EQ(pattern_bin(256, 1), 9u);
  EXPECT_EQ(pattern_bin(511, 1), 9u);
  EXPECT_EQ(pattern_bin_low(9, 1), 256u);
  EXPECT_EQ(pattern_bin_high(9, 1), 511u);
  // Two per power of two: [8,11], [12,15], ...
  EXPECT_EQ(pattern_bin_low(pattern_bin(13, 2), 2), 12u);
  EXPECT_EQ(pattern_bin_high(pattern_bin(13, 2), 2), 15u);
  // Eight: the histogram's own bins.
  for (uint64_t d : {0, 1, 7, 8, 15, 16, 17, 100, 1000, 4095, 4096, 123456789}) {
    EXPECT_EQ(pattern_bin(d, 8), reuse_bin(d)) << d;
    EXPECT_EQ(pattern_bin_low(pattern_bin(d, 8), 8), reuse_bin_low(reuse_bin(d))) << d;
    EXPECT_EQ(pattern_bin_high(pattern_bin(d, 8), 8), reuse_bin_high(reuse_bin(d))) << d;
  }
  // Patterns on the grid of one bin per power of two.
  const ReusePatterns p = reuse_patterns(histogram({{300, 5}, {400, 5}, {2000, 5}}), 1);
  ASSERT_EQ(p.patterns.size(), 2u);
  EXPECT_EQ(p.patterns[0].min, 256);
  EXPECT_EQ(p.patterns[0].max, 511);
  EXPECT_DOUBLE_EQ(p.patterns[0].mean, 350);
  EXPECT_EQ(p.patterns[1].min, 1024);
  EXPECT_EQ(p.patterns[1].max, 2047);
}

TEST(ReusePrediction, AHaloDistanceGrowingAsASumOfPowersIsPredictedFarOut) {
  // A halo's reuse in examples/stencil2d_halo_pthreads.c (north row, thread
  // 5 of 16): distances 183, 319, 487, 919, 1479 at N = 16, 24, 32, 48, 64,
  // about 0.23 N^2 + 7.7 N. From N = 16 and 24 the growth exponent is 1.38:
  // a + b N alone predicts 999 at N = 64, a power of two below 1479 (the
  // default grid's bin is [1024, 2047]); the sum a N + b N^2 through both
  // points predicts 1444.
  auto run = [](double n, uint64_t distance) {
    ReuseRun r;
    r.threads = 1;
    r.size = n;
    r.histograms.push_back(row(0x10, 0, histogram({{1, 100}, {distance, 10}})));
    return r;
  };
  const SizeFit fit = fit_size(16, 183, 24, 319);
  EXPECT_EQ(fit.lower, SizeModel::Linear);
  EXPECT_EQ(fit.model, SizeModel::Square);
  EXPECT_EQ(size_fit_name(fit), "linear+square");
  EXPECT_NEAR(fit.at(64), 1444, 1e-6);
  PredictionOptions options;
  EXPECT_EQ(options.pattern_sub_bins, 1u);
  for (const auto& [n, distance] :
       {std::pair{32.0, 487}, std::pair{48.0, 919}, std::pair{64.0, 1479}}) {
    const ReuseEvaluation coarse =
        evaluate_reuse_prediction(run(16, 183), run(24, 319), run(n, distance), options);
    EXPECT_DOUBLE_EQ(coarse.overall.accuracy(), 1) << n;
  }
  // On the histogram's own bins (1/8 of a power of two) too: 484.7 and 487
  // share [480, 511], 1444 and 1479 share [1408, 1535].
  options.pattern_sub_bins = kHistogramSubBins;
  for (const auto& [n, distance] : {std::pair{32.0, 487}, std::pair{64.0, 1479}}) {
    const ReuseEvaluation fine =
        evaluate_reuse_prediction(run(16, 183), run(24, 319), run(n, distance), options);
    EXPECT_DOUBLE_EQ(fine.overall.coverage(), 1) << n;
    EXPECT_DOUBLE_EQ(fine.overall.accuracy(), 1) << n;
  }
}

TEST(ReusePrediction, WrongGrowthIsInaccurateAndDecreasingDistancesAreNotCovered) {
  PredictionOptions options;
  // The reference grows linearly (distances x16) where the training said sqrt.
  const ReuseEvaluation wrong =
      evaluate_reuse_prediction(sqrt_run(1000, 1), sqrt_run(4000, 2), sqrt_run(16000, 16), options);
  EXPECT_DOUBLE_EQ(wrong.overall.coverage(), 1);
  EXPECT_DOUBLE_EQ(wrong.overall.accuracy(), 0);
  // Training distances that shrink as the size grows: irregular.
  const ReuseEvaluation shrinking =
      evaluate_reuse_prediction(sqrt_run(1000, 2), sqrt_run(4000, 1), sqrt_run(16000, 1), options);
  EXPECT_DOUBLE_EQ(shrinking.overall.coverage(), 0);
}

TEST(ReusePrediction, CoverageDropsWhenAnInstructionIsMissingFromOneTrainingRun) {
  auto run = [](double size, uint64_t scale, bool second) {
    ReuseRun r = sqrt_run(size, scale);  // 1200 accesses at 0x10
    ReuseDistanceHistogram h = histogram({{5, 3600}});
    if (second) r.histograms.push_back(row(0x20, 0, h));
    return r;
  };
  PredictionOptions options;
  const ReuseEvaluation both = evaluate_reuse_prediction(run(1000, 1, true), run(4000, 2, true),
                                                         run(16000, 4, true), options);
  EXPECT_DOUBLE_EQ(both.overall.coverage(), 1);
  const ReuseEvaluation e = evaluate_reuse_prediction(run(1000, 1, true), run(4000, 2, false),
                                                      run(16000, 4, true), options);
  EXPECT_DOUBLE_EQ(e.overall.operations, 4800);
  EXPECT_DOUBLE_EQ(e.overall.coverage(), 0.25);
  EXPECT_DOUBLE_EQ(e.overall.accuracy(), 1);
  ASSERT_EQ(e.instructions.size(), 2u);
  EXPECT_DOUBLE_EQ(e.instructions[0].score.coverage(), 1);
  EXPECT_DOUBLE_EQ(e.instructions[1].score.coverage(), 0);
  ASSERT_EQ(e.threads.size(), 1u);
  EXPECT_DOUBLE_EQ(e.threads[0].score.coverage(), 0.25);
}

TEST(PatternFunctions, TwoDimensionalRegions) {
  // 6 x 6, row-major.
  const std::pair<uint32_t, int> expected[] = {{0, 0},  {5, 1},  {30, 2}, {35, 3}, {2, 4},  {32, 5},
                                               {12, 6}, {17, 7}, {14, 8}, {9, 9},  {19, 10}};
  for (const auto& [thread, region] : expected)
    EXPECT_EQ(pattern_region(PatternFunction::Grid2D, 36, thread), region) << thread;
  EXPECT_EQ(pattern_region(PatternFunction::Grid2D, 12, 1), -1);   // not a square
  EXPECT_EQ(pattern_region(PatternFunction::Cube3D, 27, 13), 13);  // the centre: interior
  EXPECT_EQ(pattern_region_name(PatternFunction::Cube3D, 13), "interior xmid ymid zmid");
  EXPECT_EQ(pattern_region(PatternFunction::Cube3D, 27, 26), 26);
  EXPECT_EQ(pattern_region(PatternFunction::Cube3D, 16, 1), -1);
  EXPECT_EQ(pattern_region(PatternFunction::Hypercube, 8, 7), 1);
  EXPECT_EQ(pattern_region(PatternFunction::Hypercube, 8, 1), 2);
  EXPECT_EQ(pattern_region(PatternFunction::Hypercube, 8, 3), 3);
  EXPECT_EQ(pattern_region(PatternFunction::Hypercube, 12, 3), -1);
}

TEST(ThreadGrouping, CornersEdgesAndInteriorOfSixteenThreads) {
  const ReuseRun run = grid_run(16, 100, 1);
  std::vector<ThreadPatterns> threads(16);
  for (const InstructionReuse& r : run.histograms)
    threads[r.thread] = reuse_patterns(r.histogram).patterns;
  const std::vector<int> groups = group_threads(threads, kGroupMatchShare);
  EXPECT_EQ(groups[0], -1);
  EXPECT_EQ(groups[3], groups[12]);
  EXPECT_EQ(groups[3], groups[15]);
  EXPECT_EQ(groups[1], groups[2]);
  EXPECT_EQ(groups[1], groups[4]);
  EXPECT_EQ(groups[1], groups[14]);
  EXPECT_EQ(groups[5], groups[6]);
  EXPECT_EQ(groups[5], groups[10]);
  EXPECT_NE(groups[1], groups[3]);
  EXPECT_NE(groups[1], groups[5]);
  EXPECT_NE(groups[3], groups[5]);
  EXPECT_FALSE(function_explains(PatternFunction::Uniform, groups));
  EXPECT_FALSE(function_explains(PatternFunction::Line, groups));
  EXPECT_TRUE(function_explains(PatternFunction::Grid2D, groups));
  EXPECT_FALSE(function_explains(PatternFunction::Hypercube, groups));
}

TEST(ThreadScaling, TwoDimensionalGridMapsRegionsToA36ThreadReference) {
  PredictionOptions options;
  options.pattern_sub_bins = kHistogramSubBins;  // the histogram's own bins
  options.reference_size = 1600;
  options.reference_threads = 36;
  const ReuseRun test = grid_run(9, 100, 1), train = grid_run(16, 400, 2);
  const ReusePrediction p = predict_reuse(test, train, options);
  EXPECT_EQ(p.pattern_function, PatternFunction::Grid2D);
  ASSERT_EQ(p.instructions.size(), 1u);
  const std::vector<ThreadPrediction>& threads = p.instructions[0].threads;
  ASSERT_EQ(threads.size(), 36u);
  // reference thread -> (region, thread of the 9-thread run, of the 16-thread run)
  struct Expected {
    uint32_t thread;
    int region;
    uint32_t test, train;
  };
  const Expected expected[] = {
      {0, -1, 0, 0},   // thread 0 -> thread 0
      {5, 1, 2, 3},    // top-right corner -> top-right corners
      {35, 3, 8, 15},  // bottom-right corner
      {2, 4, 1, 1},    // top edge -> first top-edge thread
      {17, 7, 5, 7},   // right edge
      {14, 8, 4, 5},   // diagonal
      {9, 9, 4, 6},    // above the diagonal: absent from 3x3, its group's diagonal there
      {19, 10, 4, 9},  // below the diagonal
  };
  for (const Expected& e : expected) {
    const ThreadPrediction& t = threads[e.thread];
    EXPECT_EQ(t.region, e.region) << e.thread;
    EXPECT_EQ(t.test_thread, e.test) << e.thread;
    EXPECT_EQ(t.train_thread, e.train) << e.thread;
    EXPECT_TRUE(t.predictable) << e.thread << ": " << t.reason;
  }
  ASSERT_EQ(threads[14].patterns.size(), 3u);
  EXPECT_NEAR(threads[14].patterns[2].min, 1024, 1e-9);
  EXPECT_NEAR(threads[14].patterns[2].max, 1151, 1e-9);

  const ReuseEvaluation e = evaluate_reuse_prediction(test, train, grid_run(36, 1600, 4), options);
  EXPECT_EQ(e.prediction.pattern_function, PatternFunction::Grid2D);
  EXPECT_DOUBLE_EQ(e.overall.coverage(), 1);
  EXPECT_DOUBLE_EQ(e.overall.accuracy(), 1);
  ASSERT_EQ(e.threads.size(), 36u);
  EXPECT_EQ(e.threads[9].region, 9);

  // Without grouping, thread i is predicted from threads i mod 9 and
  // i mod 16: thread 20 (interior) from a corner (2) and an edge (4).
  options.grouping = false;
  const ReuseEvaluation modulo =
      evaluate_reuse_prediction(test, train, grid_run(36, 1600, 4), options);
  EXPECT_EQ(modulo.prediction.pattern_function, PatternFunction::Modulo);
  EXPECT_LT(modulo.overall.coverage(), 0.9);
  EXPECT_DOUBLE_EQ(modulo.threads[0].score.coverage(), 1);
  EXPECT_DOUBLE_EQ(modulo.threads[20].score.coverage(), 0);
}

TEST(ThreadScaling, NoFunctionExplainsAnArbitraryGroupingAndThreadZeroStaysCovered) {
  // 16 and 36 threads where only threads 5 and 7 (16) behave differently:
  // no region function separates them.
  auto run = [](uint32_t threads, uint32_t odd) {
    ReuseRun r;
    r.threads = threads;
    r.size = 100;
    for (uint32_t t = 0; t < threads; ++t)
      r.histograms.push_back(
          row(0x40, t, t == odd || t == 7 ? histogram({{100, 10}}) : histogram({{4, 10}})));
    return r;
  };
  PredictionOptions options;
  const ReuseEvaluation e = evaluate_reuse_prediction(run(16, 5), run(9, 3), run(36, 5), options);
  ASSERT_EQ(e.instructions.size(), 1u);
  EXPECT_EQ(e.instructions[0].pattern_function, PatternFunction::None);
  EXPECT_DOUBLE_EQ(e.overall.coverage(), 1.0 / 36);  // thread 0 only
}

}  // namespace
}  // namespace weft
