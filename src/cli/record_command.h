// `weft record`: runs a program under an event source and writes its profile.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace weft {

struct RecordOptions {
  std::string output = "weft.db";
  std::string backend = "compile";
  unsigned granularity = 64;
  unsigned max_threads = 1024;
  std::vector<std::string> analyses;  // empty: every analysis
  // The analyses' settings given on the command line, by meta key
  // (common/analyses.h); sizes already in bytes. Absent: the default.
  std::map<std::string, std::string> settings;
  std::vector<std::string> command;  // program and its arguments
};

// Returns the process exit code for weft: 0 when the program ran to its end
// with status 0 and the profile is complete; the program's own status (or
// 128 + signal) otherwise. Throws std::runtime_error on bad input.
int run_record(const RecordOptions& options);

}  // namespace weft
