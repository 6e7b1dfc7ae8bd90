// What the crd analysis hands from the capture to the profile builder: the
// communication reuse distances per reading instruction and thread pair, the
// sharing footprint per first-touching instruction, and the sets of
// instructions and sections that read each communication epoch.
#pragma once

#include <cstdint>

#include "common/run_capture.h"

namespace weft {

// `count` communication events of pair (writer, reader), read at `pc`, had
// communication reuse distance `distance` (kUnmeasuredDistance: the pair had
// reached its --crd-max-granules cap).
struct PcDistanceCount {
  uint64_t pc = 0;
  uint32_t reader = 0;
  uint32_t writer = 0;
  uint64_t distance = 0;
  uint64_t count = 0;
};
inline constexpr uint64_t kUnmeasuredDistance = ~uint64_t{0} - 1;
// Set in `distance` when it is a distance of the sampled word trace (docs/metrics.md,
// "Median CRD of the line visits"), in sampled words; clear for the line trace's, in granules.
inline constexpr uint64_t kWordDistance = uint64_t{1} << 61;
// The word of the word trace: 8 bytes.
inline constexpr unsigned kWordBytesLog2 = 3;
inline constexpr uint64_t kWordBytes = uint64_t{1} << kWordBytesLog2;

// Sharing footprint: granules first touched at `pc` by `thread`, split into
// those no other thread touched (private) and the others (shared).
struct PcFootprint {
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t reserved = 0;
  uint64_t private_granules = 0;
  uint64_t shared_granules = 0;
};

// One set of a reader's communication epochs (docs/metrics.md, "CRR"): the
// tags that read one epoch of `writer`'s data, as a node of the reader's
// tree of sets, per kind: the set is this node's tag with its parent's set;
// a root (parent 0) holds the tag of the epochs' true communication.
// `count` epochs ended with exactly this set (0 for a node only on the way
// to others).
struct ReuseSetNode {
  uint32_t reader = 0;
  uint32_t writer = 0;
  uint32_t id = 0;      // from 1, per reader and kind
  uint32_t parent = 0;  // 0: a root
  uint64_t tag = 0;     // a reading instruction (code) or a section's closing site (section)
  uint64_t count = 0;
  uint32_t kind = 0;  // kReuseSetCode or kReuseSetSection
  uint32_t reserved = 0;
};
inline constexpr uint32_t kReuseSetCode = 0;
inline constexpr uint32_t kReuseSetSection = 1;

inline constexpr RecordSection<PcDistanceCount> kCrdDistances{
    analysis_section_tag(AnalysisId::Crd, 1)};
inline constexpr RecordSection<PcFootprint> kCrdFootprints{
    analysis_section_tag(AnalysisId::Crd, 2)};
inline constexpr RecordSection<ReuseSetNode> kCrdReuseSets{
    analysis_section_tag(AnalysisId::Crd, 3)};

}  // namespace weft
