// `weft comm`: renders one communication matrix (findings/comm_findings.h)
// as an aligned table, CSV or JSON.
#pragma once

#include <string>

#include "findings/comm_findings.h"
#include "views/view_format.h"

namespace weft {

std::string render_comm(const CommFindings& findings, OutputFormat format);

}  // namespace weft
