// `weft diff A B`: how the communication locality of each region changes
// between two profiles of the same program (another input size or thread
// count). Regions are matched by name; only scalars are compared, since the
// thread counts, and so the matrices, may differ.
#pragma once

#include <string>

#include "findings/locality.h"
#include "findings/suggestions.h"
#include "profile/profile.h"
#include "views/view_format.h"

namespace weft {

// A region "scales badly" when its median CRD grows (B > A) and
// (median_B + 1) / (median_A + 1) > kScalingSlack x events_B / events_A, or
// when its median crosses the min cutoff (A below, B at or above it).
inline constexpr double kScalingSlack = 1.10;

struct DiffOptions {
  OutputFormat format = OutputFormat::Table;  // table or json
  CacheOptions cache = {};                    // applied to both profiles
};

// Throws ViewError for --format csv, a profile without CRD or a bad cache
// option.
std::string render_diff(const Profile& a, const Profile& b, const DiffOptions& options);

}  // namespace weft
