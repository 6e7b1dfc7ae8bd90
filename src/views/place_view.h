// `weft place --print`: the mappings of a profile's threads and their
// modeled cost, and the chosen one as taskset lists, OMP_PLACES and
// GOMP_CPU_AFFINITY strings (table), a thread,cpu CSV, or JSON.
#pragma once

#include <string>

#include "findings/placement_findings.h"
#include "views/view_format.h"

namespace weft {

std::string render_placement(const PlacementFindings& findings, OutputFormat format);

// The chosen mapping's OS PU indices, thread by thread (what the launcher
// pins: `WEFT_PLACE_CPUS`, entries separated by ';').
std::string placement_cpu_list(const PlacementFindings& findings);

}  // namespace weft
