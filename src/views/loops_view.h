// `weft loops`: each source loop of a binary with its compiled versions, and
// for each version its mix, vectorization ratios, cycles per iteration (L1),
// bounds, port pressure, bottleneck, hints and fully vectorized projection;
// as a table or JSON (field names in docs/loops.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "findings/loop_findings.h"
#include "views/view_format.h"

namespace weft {

// Throws ViewError for CSV (a loop is no row).
std::string render_loops(const LoopFindings& findings, OutputFormat format);

// One binary loop's analysis as `weft loops --format json` gives a version
// (the report's hot loops use it too).
nlohmann::json loop_version_json(const LoopPerformance& loop);

// One line: cycles per iteration in L1, the bottleneck, how packed its FP
// work is ("L1 4.00 cycles/iteration; dependence chain: ...; FP add/sub
// scalar, load scalar"), for the report's hot loops.
std::string loop_summary_line(const LoopPerformance& loop);

}  // namespace weft
