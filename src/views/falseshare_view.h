// `weft falseshare`: renders the unsynchronised and falsely shared data
// (findings/false_sharing_findings.h) as a terminal listing or JSON.
#pragma once

#include <cstddef>
#include <string>

#include "findings/false_sharing_findings.h"
#include "views/view_format.h"

namespace weft {

struct FalseShareRenderOptions {
  OutputFormat format = OutputFormat::Table;  // table or json
  size_t top = 20;                            // items shown
};

// Throws ViewError for --format csv.
std::string render_false_sharing(const FalseSharingFindings& findings,
                                 const FalseShareRenderOptions& options);

}  // namespace weft
