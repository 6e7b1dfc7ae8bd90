// `weft predict`'s renderings: the JSON fields the bench reads
// (docs/prediction.md) and the table's headline, on hand-built runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "prediction/reuse_fixtures.h"
#include "views/predict_view.h"

namespace weft {
namespace {

TEST(PredictView, EvaluationJsonHasTheContractFields) {
  PredictionOptions options;
  const ReuseEvaluation e = evaluate_reuse_prediction(grid_run(9, 100, 1), grid_run(16, 400, 2),
                                                      grid_run(36, 1600, 4), options);
  const nlohmann::json j = nlohmann::json::parse(render_evaluation(e, OutputFormat::Json));
  EXPECT_EQ(j["pattern_function"], "2-D");
  EXPECT_DOUBLE_EQ(j["overall"]["coverage"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(j["overall"]["accuracy"].get<double>(), 1);
  // Thread 0's 50, 3 corners' 640, 16 edges' 1280, 16 interiors' 1920.
  EXPECT_DOUBLE_EQ(j["overall"]["operations"].get<double>(), 50 + 3 * 640 + 16 * 1280 + 16 * 1920);
  ASSERT_EQ(j["instructions"].size(), 1u);
  const nlohmann::json& i = j["instructions"][0];
  EXPECT_EQ(i["module"], "kernel");
  EXPECT_EQ(i["offset"], 0x30);
  EXPECT_EQ(i["file"], "kernel.c");
  EXPECT_EQ(i["line"], 0x30);
  EXPECT_DOUBLE_EQ(i["coverage"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(i["accuracy"].get<double>(), 1);
  ASSERT_EQ(j["threads"].size(), 36u);
  EXPECT_EQ(j["threads"][9]["thread"], 9);
  EXPECT_EQ(j["threads"][9]["group"], 9);
  EXPECT_TRUE(j["threads"][0]["group"].is_null());
  EXPECT_DOUBLE_EQ(j["threads"][9]["coverage"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(j["threads"][9]["accuracy"].get<double>(), 1);
  EXPECT_EQ(j["reference"]["threads"], 36);

  const std::string table = render_evaluation(e, OutputFormat::Table);
  EXPECT_NE(table.find("overall: coverage 100.0%, accuracy 100.0%"), std::string::npos) << table;
}

TEST(PredictView, PredictionJsonCarriesHistogramsAndMissRatios) {
  PredictionOptions options;
  options.reference_size = 16000;
  options.reference_threads = 1;
  options.cache_bytes = {16 * 1024, 32 * 1024};
  options.pattern_sub_bins = kHistogramSubBins;
  const ReusePrediction p = predict_reuse(sqrt_run(1000, 1), sqrt_run(4000, 2), options);
  const nlohmann::json j = nlohmann::json::parse(render_prediction(p, OutputFormat::Json));
  EXPECT_EQ(j["pattern_function"], "identity");
  EXPECT_EQ(j["caches"], nlohmann::json::array({16 * 1024, 32 * 1024}));
  ASSERT_EQ(j["miss_ratios"].size(), 2u);
  const nlohmann::json& t = j["instructions"][0]["threads"][0];
  EXPECT_TRUE(t["predictable"].get<bool>());
  ASSERT_EQ(t["patterns"].size(), 2u);
  EXPECT_DOUBLE_EQ(t["patterns"][1]["min"].get<double>(), 256);
  EXPECT_EQ(t["patterns"][1]["model"], "sqrt");
  // The far pattern's 800 accesses in the bin [256, 287].
  const nlohmann::json& bins = t["histogram"]["bins"];
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[1]["low"], 256);
  EXPECT_EQ(bins[1]["high"], 287);
  EXPECT_EQ(bins[1]["count"], 800);

  const std::string table = render_prediction(p, OutputFormat::Table);
  EXPECT_NE(table.find("[256-287 mean"), std::string::npos) << table;
  EXPECT_THROW(render_prediction(p, OutputFormat::Csv), ViewError);
}

}  // namespace
}  // namespace weft
