#include "findings/cache_model.h"

#include <fmt/format.h>

#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "topology/machine_caches.h"
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
    return {*options.cache_size, CacheSource::CacheSize, "--cache-size"};
  }
  if (options.topology) {
    // An explicit file the user named, not the machine running weft; judged
    // by the same plausibility rule as the recording machine's.
    std::vector<CacheDescription> described;
    unsigned cores = 1;
    try {
      const Topology topology = Topology::from_xml(*options.topology);
      described = caches_from_topology(topology);
      cores = std::max(1u, topology.cores());
    } catch (const std::exception& error) {
      throw FindingError(fmt::format("--topology {}: {}", *options.topology, error.what()));
    }
    if (described.empty())
      throw FindingError(fmt::format("--topology {} describes no cache; pass --cache-size BYTES",
                                     *options.topology));
    const MachineCaches caches = choose_caches({}, described, {}, cores);
    std::string origin = fmt::format("--topology {}, {}", *options.topology,
                                     caches.last_level.source == CacheInfoSource::Default
                                         ? "weft's default"
                                         : cache_info_source_name(caches.last_level.source));
    if (!caches.last_level.note.empty()) origin += ": " + caches.last_level.note;
    return {caches.last_level.cache.size_bytes, CacheSource::Topology, origin};
  }
  if (std::optional<uint64_t> bytes = profile.meta_unsigned("llc_bytes"); bytes && *bytes > 0) {
    std::string origin = "recorded";
    if (const std::string source = profile.meta_value("llc_source"); !source.empty())
      origin += source == "default" ? ", weft's default" : ", from " + source;
    if (const std::string note = profile.meta_value("llc_note"); !note.empty())
      origin += ": " + note;
    return {*bytes, CacheSource::Profile, origin};
  }
  throw FindingError(
      "the cache size is unknown (the profile has no llc_bytes); pass --cache-size BYTES or "
      "--topology XML");
}

}  // namespace weft
