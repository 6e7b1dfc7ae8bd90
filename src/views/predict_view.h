// `weft predict`: renders a predicted run's reuse patterns, histograms and
// miss ratios (findings/reuse_prediction.h), or their coverage and accuracy
// against a reference run, as a table or JSON (docs/prediction.md).
#pragma once

#include <string>

#include "findings/reuse_prediction.h"
#include "views/view_format.h"

namespace weft {

// `weft predict TEST TRAIN --size N ...`
std::string render_prediction(const ReusePrediction& prediction, OutputFormat format);
// `weft predict TEST TRAIN --against REF ...`
std::string render_evaluation(const ReuseEvaluation& evaluation, OutputFormat format);

}  // namespace weft
