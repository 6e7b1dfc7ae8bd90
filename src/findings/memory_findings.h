// The findings weft derives from the compressed memory traces and the
// false-sharing analysis (after MAQAO's memory hints), for `weft report`: false
// sharing, non-unit and large strides, column-wise traversal of row-major
// data, 4K aliasing between a store and a nearby load, the reuse degree of
// loads, and the OpenMP schedule each loop actually executed (from the
// runtime's chunks, else recovered from the traces), with a warning when a
// dynamic schedule's chunks make threads write the same lines. The analyses
// themselves are diagnosis/trace_hints.h and diagnosis/schedule_recovery.h;
// this file feeds them the profile. docs/metrics.md defines each finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "diagnosis/schedule_recovery.h"
#include "profile/profile.h"

namespace weft {

struct LoopSchedule {
  uint64_t pc = 0;  // the runtime call that handed out the loop's first chunk, or the
                    // representative instruction
  SourcePosition position;
  RecoveredSchedule schedule;
  std::string name;     // schedule_name(): "static", "static,4", "dynamic,16", "guided,1"
  std::string source;   // "runtime" (chunks the OpenMP runtime handed out) or "traces"
  std::string warning;  // empty, or why the chunks make threads write the same lines
};

struct MemoryHint {
  // "race", "false-sharing", "non-unit-stride", "large-stride", "column-wise",
  // "4k-aliasing", "reuse"
  std::string kind;
  uint64_t pc = 0;
  SourcePosition position;
  std::string code;     // the source line's text, when readable
  uint64_t weight = 0;  // events or accesses behind the finding (its rank)
  std::string evidence;
  std::string suggestion;
};

struct MemoryHints {
  bool traces = false;                  // the profile holds traces
  bool false_sharing = false;           // ... and false-sharing data
  std::vector<LoopSchedule> schedules;  // by source position
  std::vector<MemoryHint> hints;        // by weight, descending, at most `top`
};

MemoryHints analyze_memory_hints(const Profile& profile, size_t top = 10);

}  // namespace weft
