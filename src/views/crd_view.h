// `weft crd`: communication reuse distance histograms per region, with the
// cache cutoffs, the fractions of probable and certain capacity misses, and
// the CRR homogeneity and balance (all from views/locality_metrics.h).
#pragma once

#include <optional>
#include <string>

#include "findings/locality.h"
#include "findings/suggestions.h"
#include "profile/profile.h"
#include "views/view_format.h"

namespace weft {

struct CrdOptions {
  // None: one entry per region with CRD events, by events descending. Given:
  // first the selection pooled (named exactly this), then each selected
  // region with CRD events on its own.
  std::optional<std::string> region = std::nullopt;
  OutputFormat format = OutputFormat::Table;
  CacheOptions cache = {};
};

// Throws ViewError for a profile recorded without CRD or a bad cache option,
// ProfileError for an unknown region or an unreadable profile.
std::string render_crd(const Profile& profile, const CrdOptions& options);

}  // namespace weft
