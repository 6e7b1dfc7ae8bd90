// `weft calibrate`: the machine's bandwidths and latencies per memory level,
// where they are stored and whether they were measured now; as a table or
// JSON (the file's fields plus "path", "reused", "reason"; docs/commands.md).
#pragma once

#include <string>

#include "calibration/machine_calibration.h"
#include "views/view_format.h"

namespace weft {

// Throws ViewError for CSV.
std::string render_calibration(const CalibrationResult& result, OutputFormat format);

}  // namespace weft
