// The cache lines that threads shared falsely (each thread used its own
// bytes of the line, at least one of them wrote), ranked by false-sharing
// events, with what the line belongs to (a global variable, or a heap block
// by the line of code that allocated it), the bytes each thread used, the
// thread pairs, the instructions and source lines involved, and a
// suggested fix. docs/metrics.md defines the events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

struct FalseSharingSite {
  uint32_t thread = 0;
  uint64_t pc = 0;
  SourcePosition position;
  std::string code;     // the source line's text, when readable
  uint64_t events = 0;  // false-sharing events at this instruction in this thread
};

struct FalseSharingPair {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t events = 0;
};

// The bytes of the line one thread used while sharing it falsely, as
// inclusive [first, last] offset ranges.
struct ThreadOffsets {
  uint32_t thread = 0;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};

struct FalseSharingLine {
  uint64_t line_address = 0;
  uint64_t events = 0;
  DataObject object;                           // kind "unknown" when nothing is known
  std::optional<SourcePosition> allocated_at;  // heap blocks
  std::vector<ThreadOffsets> threads;          // by thread id
  std::vector<FalseSharingPair> pairs;         // by events, descending
  std::vector<FalseSharingSite> sites;         // by events, descending
  std::string fix;
};

// Lines by events, descending (then by address). Throws FindingError when
// the profile was recorded without the false-sharing analysis.
std::vector<FalseSharingLine> analyze_false_sharing(const Profile& profile);

// What `weft falseshare` shows: every falsely shared line, with the run
// facts its rendering mentions.
struct FalseSharingFindings {
  ProfileFacts profile;
  std::string untracked_accesses;  // meta untracked_accesses ("" or "0": none)
  std::vector<FalseSharingLine> lines;
};

FalseSharingFindings find_false_sharing(const Profile& profile);

// "counters (global, 0x601040+32)" / "heap block of 256 bytes allocated at
// kernel.c:40 main" / "unknown data at 0x7f…".
std::string data_object_description(const FalseSharingLine& line);

// "0-7", "8-15,24-31".
std::string format_offsets(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

}  // namespace weft
