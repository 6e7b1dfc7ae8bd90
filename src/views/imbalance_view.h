// `weft imbalance`: renders the per-section load imbalance and its ranked
// causes (findings/imbalance_findings.h) as a terminal listing or JSON.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "findings/imbalance_findings.h"
#include "views/view_format.h"

namespace weft {

struct ImbalanceRenderOptions {
  OutputFormat format = OutputFormat::Table;  // table or json
  size_t top = 10;                            // causes listed per section
};

// Why section `s` has no ranked cause, as far as its figures tell (one
// line, starting with `indent`): too few threads per instance for the
// diagnosis, idle time too small to matter, or no cause at a source line.
std::string imbalance_no_cause_note(const SectionImbalance& s, std::string_view indent);

// Throws ViewError for --format csv.
std::string render_imbalance(const ImbalanceFindings& findings,
                             const ImbalanceRenderOptions& options);

}  // namespace weft
