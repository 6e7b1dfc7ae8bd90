// The reuse-distance analysis' table (docs/profile-format.md,
// `reuse_histograms`) and its reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/reuse_histogram.h"
#include "profile/profile.h"

namespace weft {

// One (instruction, thread, locality)'s histogram, with what names the
// instruction. `module` and `module_offset` identify the instruction across
// runs of one binary (its run-time pc moves with address-space layout
// randomisation; the offset does not); `pc` is the run-time address the
// profile's other tables use.
struct InstructionReuse {
  uint64_t pc = 0;
  std::string module;
  uint64_t module_offset = 0;
  std::string function;
  std::string file;
  uint32_t line = 0;
  uint32_t thread = 0;
  ReuseLocality locality = ReuseLocality::Local;
  ReuseDistanceHistogram histogram;
};

// Every histogram of the profile, by (pc, thread, locality); none when the
// analysis did not run.
std::vector<InstructionReuse> reuse_histograms(const Profile& profile);

}  // namespace weft
