// `weft trace`: the compressed memory traces of a profile — per thread and
// memory instruction, the addresses it accessed as nested loops (MAQAO's
// representation: "for i0 = 0 to 1023 / val 0x… + 8*i0"), with how many
// accesses they stand for and whether any were lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "profile/profile.h"

namespace weft {

struct TraceOptions {
  std::optional<uint32_t> thread;
  std::optional<uint64_t> pc;
  std::optional<std::string> line;  // FILE:LINE: every instruction of that source line
  bool json = false;                // text or json
  size_t max_lines = 40;            // per stream, in the text form
};

// Throws ViewError when the profile has no traces, for a malformed --line,
// for both --pc and --line, or when nothing matches the selection.
std::string render_traces(const Profile& profile, const TraceOptions& options);

}  // namespace weft
