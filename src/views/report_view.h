// `weft report`: the terminal summary of a profile (run facts, the regions
// and thread pairs that communicate most, a heatmap of the whole-program RaW
// matrix), or the same pieces as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "findings/locality.h"
#include "findings/suggestions.h"
#include "profile/profile.h"
#include "views/view_format.h"

namespace weft {

struct ReportOptions {
  OutputFormat format = OutputFormat::Table;  // table or json
  size_t top = 10;                            // regions, thread pairs and suggestions' regions
  CacheOptions cache = {};                    // the cache of the CRD cutoffs
};

// Throws ViewError for --format csv or a bad cache option (asked for only
// when the profile has CRD), ProfileError for an unreadable profile.
std::string render_report(const Profile& profile, const ReportOptions& options);

// A matrix shrunk to at most max_columns x max_columns cells by summing
// square blocks of `bucket` threads, drawn one character per cell.
struct Heatmap {
  size_t bucket = 1;              // threads per cell along each axis
  uint64_t max = 0;               // largest cell
  CommunicationMatrix cells;      // [writer bucket][reader bucket]
  std::vector<std::string> rows;  // one string per writer bucket
};

// The ramp, from zero to the largest cell; any non-zero cell is at least '.'.
inline constexpr const char* kHeatmapRamp = " .:-=+*#%@";

Heatmap make_heatmap(const CommunicationMatrix& matrix, size_t max_columns = 64);

}  // namespace weft
