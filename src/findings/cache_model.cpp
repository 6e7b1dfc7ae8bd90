#include "findings/cache_model.h"

#include <fmt/format.h>

#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "topology/topology.h"

namespace weft {
const char* cache_source_name(CacheSource source) {
  switch (source) {
    case CacheSource::None:
      return "none";
    case CacheSource::CacheSize:
      return "cache-size";
    case CacheSource::Topology:
      return "topology";
    case CacheSource::Profile:
      return "profile";
  }
  return "none";
}

CacheModel resolve_cache(const Profile& profile, const CacheOptions& options) {
  if (options.cache_size) {
    if (*options.cache_size == 0)
      throw FindingError("bad --cache-size 0: expected a positive number of bytes");
    return {*options.cache_size, CacheSource::CacheSize};
  }
  if (options.topology) {
    // An explicit file the user named, not the machine running weft.
    uint64_t bytes = 0;
    try {
      bytes = Topology::from_xml(*options.topology).last_level_cache().size_bytes;
    } catch (const std::exception& error) {
      throw FindingError(fmt::format("--topology {}: {}", *options.topology, error.what()));
    }
    if (bytes == 0) {
      throw FindingError(fmt::format("--topology {} describes no cache; pass --cache-size BYTES",
                                     *options.topology));
    }
    return {bytes, CacheSource::Topology};
  }
  if (std::optional<uint64_t> bytes = profile.meta_unsigned("llc_bytes"); bytes && *bytes > 0) {
    return {*bytes, CacheSource::Profile};
  }
  throw FindingError(
      "the cache size is unknown (the profile has no llc_bytes); pass --cache-size BYTES or "
      "--topology XML");
}

}  // namespace weft
