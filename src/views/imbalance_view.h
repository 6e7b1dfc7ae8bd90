// `weft imbalance`: renders the per-section load imbalance and its ranked
// causes (findings/imbalance_findings.h) as a terminal listing or JSON.
#pragma once

#include <cstddef>
#include <string>

#include "findings/imbalance_findings.h"
#include "views/view_format.h"

namespace weft {

struct ImbalanceRenderOptions {
  OutputFormat format = OutputFormat::Table;  // table or json
  size_t top = 10;                            // causes listed per section
};

// Throws ViewError for --format csv.
std::string render_imbalance(const ImbalanceFindings& findings,
                             const ImbalanceRenderOptions& options);

}  // namespace weft
