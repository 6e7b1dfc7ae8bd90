// `weft loops`: each source loop of a binary with its compiled versions, and
// for each version its mix, vectorization ratios, cycles per iteration (L1),
// bounds, port pressure, bottleneck, hints and fully vectorized projection;
// as a table or JSON (field names in docs/loops.md).
#pragma once

#include <string>

#include "findings/loop_findings.h"
#include "views/view_format.h"

namespace weft {

// Throws ViewError for CSV (a loop is no row).
std::string render_loops(const LoopFindings& findings, OutputFormat format);

}  // namespace weft
