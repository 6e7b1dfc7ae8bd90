// What the imbalance analysis hands from the capture to the profile builder:
// per thread and segment, the control-flow edges and the memory
// instructions' executions and simulated misses, or that they repeat an
// earlier segment's, or what its memory counts stand for in a sampled run.
#pragma once

#include <cstdint>

#include "common/run_capture.h"

namespace weft {

// Load-imbalance counts of one thread's segment: segment k of a thread is
// its execution up to its k-th section-closing synchronization record (in
// that thread's order in `sync`). From 0 = the segment's entry.
struct SegmentEdge {
  uint32_t thread = 0;
  uint32_t segment = 0;
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t count = 0;
  uint64_t to_instructions = 0;  // static instructions of block `to`; 0 = not known to the source
};

// Executions of one memory instruction in a segment and its misses in the
// simulated caches (private L1, private L2, shared last level).
struct SegmentInstruction {
  uint32_t thread = 0;
  uint32_t segment = 0;
  uint64_t pc = 0;
  uint64_t executions = 0;
  uint64_t l1_misses = 0;
  uint64_t l2_misses = 0;
  uint64_t llc_misses = 0;
};

// A segment whose counts, every edge and memory instruction with all their
// fields, are those of an earlier segment of the same thread: its records
// are that segment's (logged in full, never itself a repeat).
struct SegmentRepeat {
  uint32_t thread = 0;
  uint32_t segment = 0;
  uint32_t same_as = 0;  // < segment
};

// A segment of a sampled run (sampled section instances, ImbalanceConfig::
// segment_sampling) whose memory counts do not stand for itself alone:
// weight 0, its memory instructions' executions and misses were not counted
// (its edges are exact); weight N > 1, a segment the sample selected, which
// stands for N. A segment without one stands for itself (weight 1).
struct SegmentMemoryWeight {
  uint32_t thread = 0;
  uint32_t segment = 0;
  uint32_t weight = 0;
};

inline constexpr RecordSection<SegmentEdge> kSegmentEdges{
    analysis_section_tag(AnalysisId::Imbalance, 1)};
inline constexpr RecordSection<SegmentInstruction> kSegmentInstructions{
    analysis_section_tag(AnalysisId::Imbalance, 2)};
inline constexpr RecordSection<SegmentRepeat> kSegmentRepeats{
    analysis_section_tag(AnalysisId::Imbalance, 3)};
inline constexpr RecordSection<SegmentMemoryWeight> kSegmentMemoryWeights{
    analysis_section_tag(AnalysisId::Imbalance, 4)};

}  // namespace weft
