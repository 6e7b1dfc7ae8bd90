// The cache the CRD cutoffs are measured against, from what the user gave
// or the profile recorded; never from the machine running weft, so that a
// profile reads the same everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "profile/profile.h"

namespace weft {

enum class CacheSource {
  None,       // no cache resolved (a profile without CRD needs none)
  CacheSize,  // --cache-size BYTES
  Topology,   // --topology XML: its last-level cache
  Profile,    // meta llc_bytes: the recording machine's last-level cache
};
// "none", "cache-size", "topology", "profile"
const char* cache_source_name(CacheSource source);

struct CacheOptions {
  std::optional<uint64_t> cache_size = std::nullopt;   // --cache-size, in bytes
  std::optional<std::string> topology = std::nullopt;  // path of an hwloc XML file
};

struct CacheModel {
  uint64_t bytes = 0;
  CacheSource source = CacheSource::None;
  // Where the size came from, for the reports: "--cache-size", "--topology
  // FILE, hwloc", "recorded, from sysfs" or "recorded, weft's default: the
  // machine's L3 is implausible (hwloc says 508 MiB for 1 core, ...)".
  std::string origin = {};
};

// --cache-size if given, else --topology's credible last-level cache
// (choose_caches: an implausible one is replaced by weft's default), else
// the profile's meta llc_bytes, as `weft record` chose it. Throws
// FindingError (one line) for a bad --cache-size, an unreadable topology, or
// a cache of zero / unknown size.
CacheModel resolve_cache(const Profile& profile, const CacheOptions& options);

}  // namespace weft
