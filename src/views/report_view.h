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

// A hot loop's CRD ("crd median 12 (3.0% beyond min, 0.0% above max)",
// "crd -" without events; empty without the crd analysis) and where its
// L2/RAM estimates' strides came from ("from the run", "from the
// addressing", or both, counted): the text and HTML reports' words.
std::string hot_loop_crd_text(const HotLoop& loop);
std::string hot_loop_strides_text(const HotLoop& loop);

}  // namespace weft
