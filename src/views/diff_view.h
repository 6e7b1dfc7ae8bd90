// `weft diff A B`: renders how the communication locality of each region
// changes between two profiles (findings/diff_findings.h), as a table or
// JSON.
#pragma once

#include <string>

#include "findings/diff_findings.h"
#include "views/view_format.h"

namespace weft {

// Throws ViewError for --format csv.
std::string render_diff(const DiffFindings& findings, OutputFormat format);

}  // namespace weft
