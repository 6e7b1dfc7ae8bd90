// The prediction's inputs read from profiles (the reuse analysis' reader,
// the runs' sizes and thread counts); the prediction itself is
// reuse_prediction.cpp.
#include <fmt/format.h>

#include "findings/finding_error.h"
#include "findings/reuse_prediction.h"

namespace weft {
namespace {

PredictionOptions options_of(const PredictQuery& query, const Profile& train) {
  PredictionOptions options;
  options.grouping = query.grouping;
  options.locality = query.locality;
  options.cache_bytes = query.cache_bytes;
  options.pattern_sub_bins = query.pattern_sub_bins;
  if (const auto granule = train.meta_unsigned("reuse_granule"); granule && *granule > 0)
    options.granule_bytes = *granule;
  return options;
}

}  // namespace

ReuseRun reuse_run(const Profile& profile, std::optional<double> size,
                   const std::string& size_option) {
  ReuseRun run;
  run.name = profile.path();
  run.threads = profile.thread_count();
  if (size) {
    run.size = *size;
  } else if (const auto recorded = profile.meta_unsigned("problem_size")) {
    run.size = static_cast<double>(*recorded);
  } else {
    throw FindingError(fmt::format(
        "{} has no problem size: record it with `weft record --problem-size N`, or give {} N",
        profile.path(), size_option));
  }
  if (run.size <= 0)
    throw FindingError(
        fmt::format("{}'s problem size is 0; sizes must be positive", profile.path()));
  if (!profile.has_analysis(AnalysisId::Reuse))
    throw FindingError(fmt::format(
        "{} was recorded without the reuse analysis: record it with `weft record --analyses reuse`",
        profile.path()));
  run.histograms = reuse_histograms(profile);
  return run;
}

ReusePrediction find_reuse_prediction(const Profile& test, const Profile& train,
                                      const PredictQuery& query) {
  if (!query.reference_size)
    throw FindingError("the reference's problem size is missing: give --size N");
  const ReuseRun a = reuse_run(test, query.test_size, "--test-size");
  const ReuseRun b = reuse_run(train, query.train_size, "--train-size");
  PredictionOptions options = options_of(query, train);
  options.reference_size = *query.reference_size;
  options.reference_threads = query.reference_threads.value_or(b.threads);
  return predict_reuse(a, b, options);
}

ReuseEvaluation find_reuse_evaluation(const Profile& test, const Profile& train,
                                      const Profile& reference, const PredictQuery& query) {
  const ReuseRun a = reuse_run(test, query.test_size, "--test-size");
  const ReuseRun b = reuse_run(train, query.train_size, "--train-size");
  const ReuseRun r = reuse_run(reference, query.reference_size, "--size");
  return evaluate_reuse_prediction(a, b, r, options_of(query, train));
}

}  // namespace weft
