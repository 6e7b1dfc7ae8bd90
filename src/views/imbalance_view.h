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

// Why the text views rank none of section `s`'s causes
// (!SectionImbalance::ranks_causes; one line, starting with `indent`):
// balanced, too few threads per instance for the diagnosis, or no cause at
// a source line.
std::string imbalance_unranked_note(const SectionImbalance& s, std::string_view indent);

// Throws ViewError for --format csv.
std::string render_imbalance(const ImbalanceFindings& findings,
                             const ImbalanceRenderOptions& options);

}  // namespace weft
