// The crd analysis' tables (docs/profile-format.md): CRD histograms per
// region and thread pair, the events of capped pairs, the sharing footprint
// per region and the communication epochs regions re-read without their
// true communication; and their readers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzers/crd/crd_records.h"
#include "profile/profile.h"

namespace weft {

// crd_distances rows pooled over a selection: `count` events of pair
// (writer, reader) had communication reuse distance `distance`.
struct DistanceCount {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t distance = 0;
  uint64_t count = 0;
};

struct PairCount {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t count = 0;
};

// Granules first touched in a selection: by one thread only, or by several.
struct Footprint {
  uint64_t private_granules = 0;
  uint64_t shared_granules = 0;
};

// CRD distance counts pooled over `region_ids` (empty = whole program),
// ordered by writer, reader, distance.
std::vector<DistanceCount> crd_distances(const Profile& profile,
                                         const std::vector<int64_t>& region_ids);
// The sampled word trace's distances (docs/metrics.md, "Median CRD of the line visits")
// pooled over `region_ids`, scaled back to words and events: distance and
// count times granularity / 8 (the profile holds the sampled values).
std::vector<DistanceCount> crd_word_distances(const Profile& profile,
                                              const std::vector<int64_t>& region_ids,
                                              uint64_t granularity);
// Events of pairs that had reached the --crd-max-granules cap, per pair.
std::vector<PairCount> crd_unmeasured(const Profile& profile,
                                      const std::vector<int64_t>& region_ids);
// Granules first touched by the regions' instructions.
Footprint footprint(const Profile& profile, const std::vector<int64_t>& region_ids);

// The communication epochs a selection re-read whose true communication was
// read outside it (docs/metrics.md, "CRR"), per pair [writer][reader]: the
// selection's CRR divides its rar by raw + these. All 0 for the whole
// program (empty `region_ids`); nullopt when the profile cannot tell:
// recorded without crd, or by a weft before crr_epochs.
std::optional<CommunicationMatrix> crr_borrowed(const Profile& profile,
                                                const std::vector<int64_t>& region_ids);

}  // namespace weft
