// `weft report`: renders the summary of a profile
// (findings/report_findings.h: run facts, the regions and thread pairs that
// communicate most, a heatmap of the whole-program RaW matrix, locality,
// suggestions, imbalance and memory findings) for the terminal or as JSON.
#pragma once

#include <string>

#include "findings/report_findings.h"
#include "views/view_format.h"

namespace weft {

// Throws ViewError for --format csv.
std::string render_report(const ReportFindings& findings, OutputFormat format);

}  // namespace weft
