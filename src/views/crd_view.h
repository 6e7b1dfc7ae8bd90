// `weft crd`: renders the communication reuse distance histograms per
// region (findings/crd_findings.h), with the cache cutoffs, the fractions of
// probable and certain capacity misses, and the CRR homogeneity and
// balance, as a table, CSV or JSON.
#pragma once

#include <string>

#include "findings/crd_findings.h"
#include "views/view_format.h"

namespace weft {

std::string render_crd(const CrdFindings& findings, OutputFormat format);

}  // namespace weft
