// `weft trace`: renders decoded memory traces (findings/trace_findings.h)
// as text (each trace in loop form) or JSON (the loop tree).
#pragma once

#include <cstddef>
#include <string>

#include "findings/trace_findings.h"

namespace weft {

struct TraceRenderOptions {
  bool json = false;      // text or json
  size_t max_lines = 40;  // per stream, in the text form
};

std::string render_traces(const TraceFindings& findings, const TraceRenderOptions& options);

}  // namespace weft
