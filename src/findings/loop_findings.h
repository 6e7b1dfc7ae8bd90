// `weft loops`: the static performance of a binary's innermost loops
// (static/loop_performance.h), grouped by the source loop they come from:
// the versions and copies a compiler makes of one loop (vectorized body,
// scalar epilogue, alias-checked fallback, peeled iterations) are shown
// together, as MAQAO does. docs/loops.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "static/loop_performance.h"

namespace weft {

struct LoopQuery {
  std::string binary;     // an executable or a shared library, unmodified
  std::string function;   // empty: every function
  std::string line_file;  // with `line`: only the source loops that span FILE:LINE
  uint32_t line = 0;
  std::string cpu;  // empty: the host's
};

// The binary loops of one source loop: same function, same file, line
// ranges that overlap.
struct SourceLoop {
  std::string function;
  std::string file;  // empty without debug info (then one binary loop per source loop)
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::vector<LoopPerformance> versions;  // in address order
};

struct LoopFindings {
  std::string binary;
  CpuModel cpu;
  uint32_t functions_analyzed = 0;
  std::vector<SourceLoop> source_loops;  // by function address, then first line
};

// Throws FindingError (one line) when the file is missing or is no x86-64
// ELF file, has no function symbols, has no function named `function`, or
// the CPU is unknown.
LoopFindings find_loops(const LoopQuery& query);

// Groups binary loops into source loops (exposed for tests).
std::vector<SourceLoop> group_by_source_loop(std::vector<LoopPerformance> loops);

}  // namespace weft
