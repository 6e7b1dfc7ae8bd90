// Communication reuse distance per region: for every region with CRD
// events (or a --region selection pooled, then each selected region), its
// locality metrics (findings/locality.h) against one cache.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "findings/cache_model.h"
#include "findings/locality.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

struct CrdOptions {
  // None: the whole program (kind kProgramRegionKind, pooled), then one entry
  // per region with CRD events, by events descending. Given:
  // first the selection pooled (named exactly this), then each selected
  // region with CRD events on its own.
  std::optional<std::string> region = std::nullopt;
  CacheOptions cache = {};
};

// The kind of the entry that stands for the whole program.
inline constexpr const char* kProgramRegionKind = "program";

struct CrdEntry {
  RegionInfo region;
  bool pooled = false;
  LocalityMetrics metrics;
};

struct CrdFindings {
  ProfileFacts profile;
  std::optional<std::string> region;  // the --region string
  CacheModel cache;
  std::vector<CrdEntry> entries;
};

// Throws FindingError for a profile recorded without CRD or a bad cache
// option, ProfileError for an unknown region or an unreadable profile.
CrdFindings find_crd(const Profile& profile, const CrdOptions& options);

}  // namespace weft
