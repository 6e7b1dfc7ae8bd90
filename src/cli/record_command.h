// `weft record`: runs a program under an event source and writes its profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

struct RecordOptions {
  std::string output = "weft.db";
  std::string backend = "compile";
  unsigned granularity = 64;
  unsigned max_threads = 1024;
  std::vector<std::string> analyses;  // empty: every analysis of the backend
  // Distinct granules a thread pair's CRD state may hold (0: no cap).
  uint64_t crd_max_granules = uint64_t{1} << 20;
  // Simulated caches of the imbalance analysis: "L1SIZE:WAYS,L2SIZE:WAYS,LLCSIZE:WAYS"
  // (sizes with K, M or G); empty: this machine's, from hwloc.
  std::string cache;
  // Cycles per L1, L2 and LLC miss in the modeled busy time: "P1,P2,P3".
  std::string miss_penalties = "12,40,200";
  // The false-sharing analysis' line, in bytes.
  unsigned line_size = 64;
  // Memory per thread for the traces analysis (parse_byte_size form).
  std::string trace_budget = "64M";
  std::vector<std::string> command;  // program and its arguments
};

// Returns the process exit code for weft: 0 when the program ran to its end
// with status 0 and the profile is complete; the program's own status (or
// 128 + signal) otherwise. Throws std::runtime_error on bad input.
int run_record(const RecordOptions& options);

}  // namespace weft
